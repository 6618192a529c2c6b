"""T4 VBR against the published parking-lot table: did the study's VBR sources over-send.

Usage (from the repository root)::

    python studies/pcn/traces/t4_vbr_rate.py fit PUBLISHED.csv
    python studies/pcn/traces/t4_vbr_rate.py run PUBLISHED.csv --seeds 1-3 [--factor 1.0294]

``fit`` reads the published Table 4.8 (columns topology, row, <TYPE>_AO, <TYPE>_AE) and,
per topology and traffic type, finds the load at failure (as a multiple x of Rt, equal on
every bottleneck, long:short 2:1) whose beat-down expectation minus optimum, E − O =
(A−O) − (A−E), fits the printed rows best (least squares over x in steps of 0.0005).
The loads the study's own E and O were computed from then show whether its VBR carried
more than the other types.

``run`` runs the full-profile T4 VBR 2:1 points (PLT-2, -3, -5) twice per seed: with the
VBR model, and with an on–off source of the same on/off periods whose packet clock is
``factor`` times faster and whose call rate is ``factor`` times higher in offered bits,
so that the same flows are active at failure but each sends ``factor`` times the nominal
21.76 kb/s, as the study's on–off sources would have if each on period began with a
packet. For the second it prints A−O and A−E both with O and E from the rates actually
sent and from the nominal rate (flow counts x 21.76 kb/s), against the published column.
"""

from __future__ import annotations

import argparse
import csv
import math

#: Nominal VBR: 160-B packets every 20 ms, on 34% of the time.
VBR_BPS = 160 * 8 / 0.020 * 0.34


def beatdown(loads: list[float], rt: float, paths: list[list[int]]) -> tuple[list, list]:
    """Return the fractions terminated under uniform marking, per aggregate and bottleneck.

    ``loads[i]`` is aggregate i's load, ``paths[i]`` the bottlenecks it crosses in order.
    """
    nb = 1 + max(b for p in paths for b in p)
    unmarked = list(loads)
    for b in range(nb):
        through = [i for i, p in enumerate(paths) if b in p]
        lb = sum(unmarked[i] for i in through)
        frac = max(0.0, 1 - rt / lb) if lb > 0 else 0.0
        for i in through:
            unmarked[i] *= 1 - frac
    e = [1 - unmarked[i] / loads[i] for i in range(len(loads))]
    per_b = []
    for b in range(nb):
        through = [i for i, p in enumerate(paths) if b in p]
        per_b.append(sum(loads[i] * e[i] for i in through) / sum(loads[i] for i in through))
    return e, per_b


def plt(n: int, x: float) -> dict[str, tuple[float, float]]:
    """(optimal, expected) per row of PLT-n with every bottleneck at x Rt, 2:1 (Rt = 1)."""
    loads = [2 * x / 3] + [x / 3] * n
    paths = [list(range(n))] + [[b] for b in range(n)]
    e_iea, e_b = beatdown(loads, 1.0, paths)
    o = 1 - 1 / x
    rows = {f"IEA1({n}H)": (o, e_iea[0])}
    rows.update({f"IEA{b + 2}(1H)": (o, e_iea[b + 1]) for b in range(n)})
    rows.update({f"BN{b + 1}": (o, e_b[b]) for b in range(n)})
    return rows


def fit(path: str) -> None:
    """Print the fitted load factor per topology and traffic type."""
    with open(path, newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    print("load at failure fitted to the published E−O (x = load / Rt; 1.4464 nominal)")
    print("topology  " + "  ".join(f"{t:>14s}" for t in ("CBR", "VBR", "VTR", "SVD")))
    for topo in ("PLT2", "PLT3", "PLT5"):
        n = int(topo[3:])
        rows = [r for r in table if r["topology"] == topo]
        cells = []
        for t in ("CBR", "VBR", "VTR", "SVD"):
            eo = {r["row"]: float(r[f"{t}_AO"]) - float(r[f"{t}_AE"]) for r in rows}
            best = None
            for k in range(2000):
                x = 1.2 + k * 0.0005
                model = plt(n, x)
                err = sum(((e - o) * 100 - eo[name]) ** 2 for name, (o, e) in model.items())
                if best is None or err < best[0]:
                    best = (err, x)
            rms = math.sqrt(best[0] / len(rows))
            cells.append(f"{best[1]:.4f} ({rms:.2f})")
        print(f"{topo:8s}  " + "  ".join(f"{c:>14s}" for c in cells))
    print("(in brackets: rms residual of the fit, points)")


def run(path: str, seeds: range, factor: float) -> None:
    """Run the T4 VBR points with nominal and over-sending sources."""
    import qossim
    from qossim import _toml
    from qossim.stats import mean_ci
    from qossim.studies import pcn

    group = next(g for g in pcn.groups("T4", pcn.FULL) if g.name == "t4-vbr-2to1")
    out: dict[tuple, list[float]] = {}
    for _params, sc in group.points():
        n = sc["topology"]["bottlenecks"]
        for variant in ("nominal", "over-sending"):
            s2 = _toml.loads(_toml.dumps(sc))
            if variant == "over-sending":
                tr = s2["pcn"]["traffic"]
                tr.update(
                    model="onoff",
                    size="160B",
                    interval=f"{20.0 / factor:.6f}ms",
                    on="exp:0.34s",
                    off="exp:0.66s",
                )
                tr["offered"] = round(tr["offered"] * factor, 6)
            for seed in seeds:
                s = qossim.run_text(_toml.dumps(s2), seed=seed).summary
                names = ["IL-EL"] + [f"I{b}-E{b}" for b in range(1, n + 1)]
                links = pcn.plt_links(n)
                rt = s[f"pcn.bottleneck.{links[0]}.rt_bps"]
                # Nominal loads from the flow counts.
                flows = [s[f"pcn.iea.{a}.load_flows"] for a in names]
                loads = [f * VBR_BPS for f in flows]
                paths = [list(range(n))] + [[b] for b in range(n)]
                e_iea, e_b = beatdown(loads, rt, paths)
                lb = [sum(loads[i] for i, p in enumerate(paths) if b in p) for b in range(n)]
                o_b = [max(0.0, 1 - rt / x) for x in lb]
                rows = [(f"IEA1({n}H)", names[0], max(o_b), e_iea[0], "iea")]
                rows += [
                    (f"IEA{b + 2}(1H)", names[b + 1], o_b[b], e_iea[b + 1], "iea") for b in range(n)
                ]
                rows += [(f"BN{b + 1}", links[b], o_b[b], e_b[b], "bn") for b in range(n)]
                for label, key, o_nom, e_nom, kind in rows:
                    p = f"pcn.iea.{key}." if kind == "iea" else f"pcn.bottleneck.{key}."
                    a = s[p + "actual_flows"]
                    vals = {
                        "AO": s[p + "a_minus_o_pts"],
                        "AE": s[p + "a_minus_e_pts"],
                        "AO_nom": (a - o_nom) * 100,
                        "AE_nom": (a - e_nom) * 100,
                    }
                    for k, v in vals.items():
                        out.setdefault((n, label, variant, k), []).append(v)
    with open(path, newline="", encoding="utf-8") as f:
        pub = {(r["topology"], r["row"]): r for r in csv.DictReader(f)}
    print(f"seeds {seeds.start}-{seeds.stop - 1}, factor {factor}; points (mean ± 95% half-width)")
    header = "row            published A−O/A−E"
    for v in ("nominal", "over-sending"):
        header += f" | {v}: A−O, A−E (rates sent) | A−O, A−E (nominal rate)"
    print(header)
    sums: dict[str, list[float]] = {}
    for n in (2, 3, 5):
        labels = [k[1] for k in out if k[0] == n and k[2] == "nominal" and k[3] == "AO"]
        for label in labels:
            r = pub[(f"PLT{n}", label)]
            line = f"PLT{n} {label:9s} {float(r['VBR_AO']):+6.2f} {float(r['VBR_AE']):+6.2f}"
            for v in ("nominal", "over-sending"):
                for k in ("AO", "AE", "AO_nom", "AE_nom"):
                    c = mean_ci(out[(n, label, v, k)])
                    line += f" {c.mean:+6.2f}±{c.half_width:4.2f}"
                    pk = "VBR_AO" if k.startswith("AO") else "VBR_AE"
                    sums.setdefault(f"{v} {k}", []).append(c.mean - float(r[pk]))
            print(line)
    print("mean difference from the published column over all rows (points):")
    for k, v in sums.items():
        print(f"  {k:22s} {sum(v) / len(v):+.2f}")


def main() -> None:
    """Command line."""
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fit")
    f.add_argument("csv")
    r = sub.add_parser("run")
    r.add_argument("csv")
    r.add_argument("--seeds", default="1-3")
    r.add_argument("--factor", type=float, default=1 + 0.5 / 17)
    a = ap.parse_args()
    if a.cmd == "fit":
        fit(a.csv)
    else:
        lo, hi = (int(x) for x in a.seeds.split("-"))
        run(a.csv, range(lo, hi + 1), a.factor)


if __name__ == "__main__":
    main()
