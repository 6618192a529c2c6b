"""One connection's congestion window in qossim and in ns-3, overlaid.

Runs the TCP benchmark of both simulators (``bench/qossim-bench/src/tcp.rs`` and
``bench/ns3/tcp.cc``, the settings ``bench/compare.sh`` uses: 50 connections, 100 s,
no timestamps, a 1000-segment receive window) once per variant and connection, each
recording that connection's window at every change, and draws ``cwnd_overlay.png``
beside this file: one panel per variant (NewReno, CUBIC and DCTCP, each with SACK; CUBIC
and DCTCP against ns-3's own class and against ns-3 with their standards' window rules)
and connection (the shortest round trip, 50 ms, and the longest, 150 ms). It also prints, per panel,
the time-weighted mean window of each side over the run after the first 5 s and the
share of that time it spends below 2 segments.

    python bench/cwnd_overlay.py [--seed S]

Needs the ns-3 program (``bash bench/ns3/build.sh``); builds the qossim one.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
QOSSIM = ROOT / "target" / "release" / "tcp"
NS3 = ROOT / "bench" / "ns3" / "build" / "tcp"
COMMON = ["--flows", "50", "--sim", "100", "--rwnd", "1000"]
# (label, qossim variant, ns-3 variant)
VARIANTS = [
    ("NewReno + SACK", "newreno-sack", "newreno"),
    ("CUBIC, ns-3's TcpCubic", "cubic-sack", "cubic"),
    ("CUBIC, ns-3 with RFC 9438's rules", "cubic-sack", "cubic-standard"),
    ("DCTCP, ns-3's TcpDctcp", "dctcp-sack", "dctcp"),
    ("DCTCP, ns-3 with a 2-segment floor", "dctcp-sack", "dctcp-floor"),
]
# (connection, its round-trip propagation time)
CONNECTIONS = [(0, "50 ms"), (49, "150 ms")]


def read_trace(path: Path) -> tuple[list[float], list[float]]:
    """The (time, window) pairs of a trace file."""
    t, w = [], []
    for line in path.read_text().splitlines():
        a, b = line.split()
        t.append(float(a))
        w.append(float(b))
    return t, w


def mean_window(t: list[float], w: list[float], start: float, end: float) -> float:
    """The time-weighted mean of a step function (value w[i] from t[i]) over [start, end]."""
    total = 0.0
    for i, (ti, wi) in enumerate(zip(t, w, strict=True)):
        t_next = t[i + 1] if i + 1 < len(t) else end
        lo, hi = max(ti, start), min(t_next, end)
        if hi > lo:
            total += wi * (hi - lo)
    return total / (end - start)


def share_below(t: list[float], w: list[float], level: float, start: float, end: float) -> float:
    """The share of [start, end] the step function (value w[i] from t[i]) spends below level."""
    below = [1.0 if x < level else 0.0 for x in w]
    return mean_window(t, below, start, end)


def main() -> None:
    """Runs both programs per panel and draws the figure."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", default="1")
    a = ap.parse_args()
    if not NS3.exists():
        raise SystemExit("cwnd_overlay.py: build the ns-3 program first: bash bench/ns3/build.sh")
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "qossim-bench", "--bin", "tcp"],
        cwd=ROOT,
        check=True,
    )
    fig, axes = plt.subplots(len(VARIANTS), len(CONNECTIONS), figsize=(11, 15), sharex=True)
    with tempfile.TemporaryDirectory() as tmp:
        for r, (label, qv, nv) in enumerate(VARIANTS):
            for c, (conn, rtt) in enumerate(CONNECTIONS):
                traces = {}
                for side, prog, extra in (
                    ("qossim", QOSSIM, ["--variant", qv]),
                    ("ns-3", NS3, ["--variant", nv, "--timestamps", "0"]),
                ):
                    out = Path(tmp) / f"{side}-{qv}-{nv}-{conn}.txt"
                    subprocess.run(
                        [str(prog), *COMMON, "--seed", a.seed, *extra]
                        + ["--cwnd-trace", str(out), "--cwnd-conn", str(conn)],
                        check=True,
                        stdout=subprocess.DEVNULL,
                    )
                    traces[side] = read_trace(out)
                ax = axes[r][c]
                for side, style in (("ns-3", "tab:orange"), ("qossim", "tab:blue")):
                    t, w = traces[side]
                    ax.step(t, w, where="post", color=style, lw=0.8, label=side)
                means = {s: mean_window(*traces[s], 5.0, 100.0) for s in traces}
                low = {s: 100 * share_below(*traces[s], 2.0, 5.0, 100.0) for s in traces}
                print(
                    f"{label}, connection {conn} (RTT {rtt}), after 5 s: mean window "
                    f"qossim {means['qossim']:.2f}, ns-3 {means['ns-3']:.2f} segments; "
                    f"below 2 segments qossim {low['qossim']:.1f} %, ns-3 {low['ns-3']:.1f} %"
                )
                ax.set_title(f"{label}, connection {conn} ({rtt})", fontsize=10)
                ax.set_ylabel("cwnd (segments)")
                ax.grid(alpha=0.3)
                if r == len(VARIANTS) - 1:
                    ax.set_xlabel("time (s)")
                if r == 0 and c == 0:
                    ax.legend(loc="upper right")
    fig.tight_layout()
    out = Path(__file__).resolve().parent / "cwnd_overlay.png"
    fig.savefig(out, dpi=110)
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
