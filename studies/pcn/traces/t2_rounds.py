"""Per-round account of a T2 termination run: every decision of every aggregate.

Usage (from the repository root, after building the engine)::

    python studies/pcn/traces/t2_rounds.py VBR 70 1 [--profile full|quick] [--ignore-stale]

Runs the T2 point (traffic, ingresses) of the profile for one seed with per-aggregate
series on, and prints one line per decision round (decisions within 5 ms of each other):
time after the failure, aggregates deciding, aggregates that terminate, flows terminated,
the summed SAR and sending rate of the deciding aggregates, and the cumulative
over-termination in points of the load at failure.
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import qossim
from qossim import _toml
from qossim.studies import pcn


def scenario(kind: str, n: int, profile: str, ignore_stale: bool) -> tuple[dict, float]:
    """Return the T2 point's scenario with per-aggregate series, and its failure instant."""
    plan = {"full": pcn.FULL, "quick": pcn.QUICK}[profile]
    group = next(g for g in pcn.groups("T2", plan) if g.name == f"t2-{kind.lower()}")
    sc = next(s for p, s in group.points() if p["ingresses"] == n)
    sc["pcn"]["per_iea"] = True
    sc["pcn"]["iea_series"] = True
    sc["pcn"]["termination"]["ignore_stale_reports"] = ignore_stale
    return sc, plan.t_fail_s


def main() -> None:
    """Run one point and print its rounds."""
    ap = argparse.ArgumentParser()
    ap.add_argument("kind")
    ap.add_argument("ingresses", type=int)
    ap.add_argument("seed", type=int)
    ap.add_argument("--profile", default="full")
    ap.add_argument("--ignore-stale", action="store_true")
    a = ap.parse_args()
    sc, t_fail = scenario(a.kind, a.ingresses, a.profile, a.ignore_stale)
    r = qossim.run_text(_toml.dumps(sc), seed=a.seed)
    s = r.summary
    load = s["pcn.bottleneck.D-F.load_flows"]
    optimal = s["pcn.bottleneck.D-F.optimal"]
    names = sorted({n.split(".")[1] for n in r.series_names if n.endswith(".round_sar")})
    decisions = []  # (t, aggregate, sar, sending, terminated)
    for name in names:
        sar = r.timeseries(f"pcn.{name}.round_sar")
        snd = r.timeseries(f"pcn.{name}.round_sending")
        term = r.timeseries(f"pcn.{name}.terminated")
        killed = defaultdict(float)
        for t, v in zip(term["t"], term["value"], strict=True):
            killed[round(float(t), 9)] += float(v)
        for t, x, y in zip(sar["t"], sar["value"], snd["value"], strict=True):
            decisions.append((float(t), name, float(x), float(y), killed[round(float(t), 9)]))
    decisions.sort()
    print(
        f"{a.kind}, {a.ingresses} ingresses, seed {a.seed}, profile {a.profile}, "
        f"{'ignoring' if a.ignore_stale else 'acting on'} stale reports: load {load} flows, "
        f"{len(names)} aggregates ({load / len(names):.2f} flows each), optimal {optimal:.4f}, "
        f"over-termination at the end {s['pcn.bottleneck.D-F.a_minus_o_pts']:+.2f} pts"
    )
    print("t-t_fail(s)  deciding  terminating  flows  SAR(Mb/s)  sending(Mb/s)  cum.over(pts)")
    done = 0.0
    rounds: list[list] = []
    for d in decisions:
        if rounds and d[0] - rounds[-1][-1][0] <= 0.005:
            rounds[-1].append(d)
        else:
            rounds.append([d])
    for rd in rounds:
        flows = sum(x[4] for x in rd)
        done += flows
        print(
            f"{rd[0][0] - t_fail:10.3f}  {len(rd):8d}  {sum(1 for x in rd if x[4] > 0):11d}"
            f"  {flows:5.0f}  {sum(x[2] for x in rd) / 1e6:9.2f}"
            f"  {sum(x[3] for x in rd) / 1e6:13.2f}"
            f"  {(done / load - optimal) * 100:+13.2f}"
        )


if __name__ == "__main__":
    main()
