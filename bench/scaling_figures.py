"""Scaling of the engine: wall time and peak memory against flows, hops and pending events.

Builds the bench programs, then runs

- ``reference --flows N --sim 0.1`` for N = 1 000 ... 1 000 000 (and ``--sim 0.001``,
  idle, for the memory per flow),
- ``reference --hops H`` for chains of H = 1, 2, 4, 8, 16 links (1 000 flows, 20 s;
  the best wall time of three runs),
- ``event_queues`` (the hold model at 1 000 ... 1 000 000 pending events),

measures each program's wall time and peak resident size (``/usr/bin/time``, from
Debian's package ``time``), prints three Markdown tables and writes three plots beside this
file: ``scaling_flows.png``, ``scaling_hops.png`` and ``scaling_pending.png``.

    python bench/scaling_figures.py [--flows-max N]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / "target" / "release"


def run(args: list[str]) -> tuple[str, float, int]:
    """Runs a program; returns its output, wall seconds and peak resident KiB (read by
    ``/usr/bin/time``: the resident count the kernel reports to a parent this large would
    include the parent's own pages copied at fork)."""
    with tempfile.NamedTemporaryFile("r") as rss:
        t0 = time.perf_counter()
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", rss.name, *args],
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(args)} failed: {proc.stderr.strip()}")
        return proc.stdout, wall, int(rss.read().split()[-1])


def field(line: str, key: str) -> float:
    m = re.search(rf"\b{key}=([0-9.]+)", line)
    if not m:
        raise SystemExit(f"no {key} in {line!r}")
    return float(m.group(1))


def plot(
    file: str,
    x: list[float],
    series: dict[str, list[float]],
    xlabel: str,
    ylabel: str,
    logx: bool,
    logy: bool,
) -> None:
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for label, ys in series.items():
        ax.plot(x, ys, marker="o", label=label)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    if len(series) > 1:
        ax.legend()
    fig.tight_layout()
    path = Path(__file__).with_name(file)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"\n{path.relative_to(ROOT)}\n")


def flows(flows_max: int) -> None:
    ref = str(BIN / "reference")
    counts = [n for n in (1_000, 10_000, 100_000, 1_000_000) if n <= flows_max]
    _, _, base = run([ref, "--flows", "1", "--sim", "0.001"])
    rows = []
    for n in counts:
        line, wall, rss = run([ref, "--flows", str(n), "--sim", "0.1"])
        _, _, idle = run([ref, "--flows", str(n), "--sim", "0.001"])
        rows.append((n, wall, rss, field(line, "delivered_pkts"), (idle - base) * 1024 / n))
    print("| flows | wall time, 0.1 s simulated | peak RSS | packets delivered | B per idle flow |")
    print("|---:|---:|---:|---:|---:|")
    for n, wall, rss, pkts, per in rows:
        print(f"| {n:,} | {wall:.3f} s | {rss / 1024:.1f} MiB | {pkts:,.0f} | {per:.0f} |")
    out = Path(__file__).with_name("scaling_flows.png")
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.6))
    x = [r[0] for r in rows]
    a.plot(x, [r[1] for r in rows], marker="o")
    a.set_xlabel("flows")
    a.set_ylabel("wall time for 0.1 s simulated (s)")
    b.plot(x, [r[2] / 1024 for r in rows], marker="o")
    b.set_xlabel("flows")
    b.set_ylabel("peak resident size (MiB)")
    for ax in (a, b):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(f"\n{out.relative_to(ROOT)}\n")


def hops() -> None:
    ref = str(BIN / "reference")
    rows = []
    for h in (1, 2, 4, 8, 16):
        # Best of three: a single run of a tenth of a second moves by tens of percent
        # when anything else wakes up on the machine.
        runs = [run([ref, "--hops", str(h)]) for _ in range(3)]
        line, _, _ = min(runs, key=lambda r: field(r[0], "wall"))
        rss = max(r[2] for r in runs)
        rows.append((h, field(line, "wall"), rss, field(line, "delivered_pkts")))
    print("| links on the path | wall time (1 000 flows, 20 s) | ns per pkt and hop | peak RSS |")
    print("|---:|---:|---:|---:|")
    for h, wall, rss, pkts in rows:
        print(f"| {h} | {wall:.3f} s | {wall * 1e9 / pkts / h:.0f} | {rss / 1024:.1f} MiB |")
    plot(
        "scaling_hops.png",
        [r[0] for r in rows],
        {"wall time": [r[1] for r in rows]},
        "links on the path",
        "engine wall time (s)",
        logx=False,
        logy=False,
    )


def pending() -> None:
    text, _, _ = run([str(BIN / "event_queues")])
    by_queue: dict[str, dict[int, float]] = {}
    for line in text.splitlines():
        q = re.search(r"queue=(\S+)", line)
        if q:
            by_queue.setdefault(q.group(1), {})[int(field(line, "pending"))] = field(
                line, "ns_per_hold"
            )
    counts = sorted(next(iter(by_queue.values())))
    names = list(by_queue)
    print("| pending events | " + " | ".join(f"{n} (ns per hold)" for n in names) + " |")
    print("|---:|" + "---:|" * len(names))
    for c in counts:
        print(f"| {c:,} | " + " | ".join(f"{by_queue[n][c]:.1f}" for n in names) + " |")
    plot(
        "scaling_pending.png",
        counts,
        {n: [by_queue[n][c] for c in counts] for n in names},
        "pending events",
        "ns per hold",
        logx=True,
        logy=True,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--flows-max", type=int, default=1_000_000, help="largest flow count")
    args = ap.parse_args()
    subprocess.run(
        [
            "cargo",
            "build",
            "--release",
            "--quiet",
            "-p",
            "qossim-bench",
            "--bin",
            "reference",
            "--bin",
            "event_queues",
        ],
        cwd=ROOT,
        check=True,
    )
    flows(args.flows_max)
    hops()
    pending()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
