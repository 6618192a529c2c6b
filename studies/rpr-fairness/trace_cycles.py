"""Per-cycle account of the aggressive cycle: what each station adds, and when.

Runs the study's scenario (aggressive mode, dual queue) with the per-aging-interval trace
on, cuts it into cycles at the moments station 4 becomes congested, and classes every
aging interval of every TCP station by the last message it received: held by S4's rate,
"full rate" (ramping), or held by S3's rate (S3 heading a domain of its own). Prints, per
station and averaged over the cycles, the intervals in each phase, the bytes its allowed
rate allowed and the share of them it added.

    python studies/rpr-fairness/trace_cycles.py --rate 1 --start 1.0 --ms 1000
"""

from __future__ import annotations

import argparse

import numpy as np

import qossim
from qossim.studies import rpr_fairness as rpr

FIELDS = ("congested", "received_bps", "allowed_bps", "limit_head", "add_bytes")
PHASES = ("held by S4", "full rate", "held by S3")


def main() -> None:
    """Run and print the account."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", type=float, default=1.0, help="UDP rate R, Mb/s")
    ap.add_argument("--start", type=float, default=1.0, help="account start, s")
    ap.add_argument("--ms", type=float, default=1000.0, help="account length, ms")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--set", action="append", default=[], help="scenario override k=v")
    args = ap.parse_args()
    end = args.start + args.ms / 1e3
    plan = rpr.Plan(
        seeds=(1,), udp_rates_mbps=(), duration_s=end + 0.001, warmup_s=0.0, series_rate_mbps=0
    )
    sc = rpr.scenario("aggressive", "dual", args.rate, plan)
    sc["rpr"]["trace_from"] = f"{args.start:g}s"
    sc["rpr"]["trace_until"] = f"{end:.6f}s"
    res = qossim.run(sc, seed=args.seed, set=args.set or None)
    n_tcp = rpr.TCP_STATIONS
    head = n_tcp  # station 4, the UDP station
    d = {
        (i, f): res.timeseries(f"rpr.S{i}.iv.{f}")["value"].to_numpy()
        for i in range(n_tcp + 1)
        for f in FIELDS
    }
    t = res.timeseries(f"rpr.S{head}.iv.congested")["t"].to_numpy()
    c = d[(head, "congested")]
    onsets = [k for k in range(1, len(t)) if c[k] and not c[k - 1]]
    if len(onsets) < 2:
        print("fewer than two onsets of congestion at S4: no cycle")
        return
    cycles = len(onsets) - 1
    span = t[onsets[-1]] - t[onsets[0]]
    iv_s = float(np.median(np.diff(t)))
    print(f"{cycles} cycles, mean period {1e3 * span / cycles:.2f} ms")
    print(
        "station  Mb/s | intervals per cycle: "
        + " / ".join(PHASES)
        + " | allowed bytes per cycle | added / allowed per phase"
    )
    for i in range(n_tcp):
        lo, hi = onsets[0], onsets[-1]
        add = d[(i, "add_bytes")][lo:hi]
        rec = d[(i, "received_bps")][lo:hi]
        hd = d[(i, "limit_head")][lo:hi]
        allowed = d[(i, "allowed_bps")][lo:hi] * iv_s / 8
        held = rec < rpr.LINE_BPS * (1 - 1e-9)
        masks = (held & (hd == head), None, held & (hd == head - 1))
        masks = (masks[0], ~(masks[0] | masks[2]), masks[2])
        n_iv = [m.sum() / cycles for m in masks]
        ratio = [add[m].sum() / allowed[m].sum() if allowed[m].sum() > 0 else 0.0 for m in masks]
        print(
            f"S{i}  {add.sum() * 8 / span / 1e6:6.1f} | "
            + " / ".join(f"{v:5.1f}" for v in n_iv)
            + f" | {allowed[~masks[0]].sum() / cycles:8.0f} | "
            + " / ".join(f"{r:.3f}" for r in ratio)
        )


if __name__ == "__main__":
    main()
