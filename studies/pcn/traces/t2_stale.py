"""Over-termination of T2 points acting on stale reports or ignoring them, over seeds.

Usage (from the repository root)::

    python studies/pcn/traces/t2_stale.py --profile full --seeds 1-8 VBR:70 SVD:70 CBR:70

For every point and seed it runs the T2 scenario twice (acting on every SAR report, the
study's default, and ignoring stale ones) and prints the over-termination in points of the
load at failure counted up to 0.30 s after the failure (the first decision of every
aggregate, before any stale report is acted on) and at the end of the run, as mean and
95% Student-t half-width over the seeds.
"""

from __future__ import annotations

import argparse
import os
import sys

import qossim
from qossim import _toml
from qossim.stats import mean_ci

sys.path.insert(0, os.path.dirname(__file__))
from t2_rounds import scenario  # noqa: E402


def over(kind: str, n: int, seed: int, profile: str, ignore: bool, cutoff: float) -> tuple:
    """(over-termination counted up to t_fail + cutoff, at the end, rounds), points."""
    sc, t_fail = scenario(kind, n, profile, ignore)
    r = qossim.run_text(_toml.dumps(sc), seed=seed)
    s = r.summary
    load, optimal = s["pcn.bottleneck.D-F.load_flows"], s["pcn.bottleneck.D-F.optimal"]
    early = 0.0
    for name in r.series_names:
        if name.endswith(".terminated"):
            df = r.timeseries(name)
            early += float(df["value"][df["t"] <= t_fail + cutoff].sum())
    return (early / load - optimal) * 100, s["pcn.bottleneck.D-F.a_minus_o_pts"]


def main() -> None:
    """Print the table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("points", nargs="+")
    ap.add_argument("--profile", default="full")
    ap.add_argument("--seeds", default="1-8")
    ap.add_argument("--cutoff", type=float, default=0.30)
    a = ap.parse_args()
    lo, hi = (int(x) for x in a.seeds.split("-"))
    seeds = range(lo, hi + 1)
    print(f"profile {a.profile}, seeds {lo}-{hi}, points of the load at failure")
    print("point       act ≤cutoff       act end     ignore ≤cutoff    ignore end")
    for p in a.points:
        kind, n = p.split(":")
        cells = []
        for ignore in (False, True):
            vals = [over(kind, int(n), s, a.profile, ignore, a.cutoff) for s in seeds]
            for k in range(2):
                c = mean_ci([v[k] for v in vals])
                cells.append(f"{c.mean:+6.2f} ± {c.half_width:4.2f}")
        print(f"{p:9s}  " + "  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
