"""Round-by-round account of the fairness machine: one row per aging interval.

Runs the study's scenario (aggressive mode, dual queue unless told otherwise) with
the stations' per-aging-interval trace switched on for a window, and prints, for the
chosen stations, every interval's STQ depth, congestion state, lpAddRate, the
advertised, received and allowed rates and the bytes added and forwarded.

    python studies/rpr-fairness/trace_aging.py --rate 1 --start 1.0 --ms 40
"""

from __future__ import annotations

import argparse

import qossim
from qossim.studies import rpr_fairness as rpr

FIELDS = (
    "stq_bytes",
    "congested",
    "lp_add_bps",
    "lp_fw_bps",
    "advertised_bps",
    "received_bps",
    "allowed_bps",
    "limit_head",
    "add_bytes",
    "transit_bytes",
)


def mb(v: float) -> str:
    """Return a rate in Mb/s, ``full`` at line rate."""
    return "full" if v >= rpr.LINE_BPS * (1 - 1e-9) else f"{v / 1e6:.1f}"


def main() -> None:
    """Run and print the trace."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", type=float, default=1.0, help="UDP rate R, Mb/s")
    ap.add_argument("--start", type=float, default=1.0, help="trace start, s")
    ap.add_argument("--ms", type=float, default=40.0, help="trace length, ms")
    ap.add_argument("--stations", default="0,3,4", help="stations to print")
    ap.add_argument("--mode", default="aggressive")
    ap.add_argument("--design", default="dual")
    ap.add_argument("--head-tcp", action="store_true", help="S4 has ten TCPs too")
    ap.add_argument("--set", action="append", default=[], help="scenario override k=v")
    args = ap.parse_args()
    end = args.start + args.ms / 1e3
    plan = rpr.Plan(
        seeds=(1,), udp_rates_mbps=(), duration_s=end + 0.001, warmup_s=0.0, series_rate_mbps=0
    )
    sc = rpr.scenario(args.mode, args.design, args.rate, plan, head_tcp=args.head_tcp)
    sc["rpr"]["trace_from"] = f"{args.start:g}s"
    sc["rpr"]["trace_until"] = f"{end:.6f}s"
    res = qossim.run(sc, seed=1, set=args.set or None)
    stations = [int(s) for s in args.stations.split(",")]
    cols = {
        (i, f): res.timeseries(f"rpr.S{i}.iv.{f}")["value"].to_numpy()
        for i in stations
        for f in FIELDS
    }
    times = res.timeseries(f"rpr.S{stations[0]}.iv.stq_bytes")["t"].to_numpy()
    head = "t(ms)  " + " | ".join(
        f"S{i}: stq(KB) C lpAdd adv recv allow hd add(B) fw(B)" for i in stations
    )
    print(head)
    for k, t in enumerate(times):
        parts = []
        for i in stations:
            c = {f: cols[(i, f)][k] for f in FIELDS}
            parts.append(
                f"S{i}: {c['stq_bytes'] / 1e3:6.1f} {int(c['congested'])} "
                f"{c['lp_add_bps'] / 1e6:6.1f} {mb(c['advertised_bps']):>5} "
                f"{mb(c['received_bps']):>5} {mb(c['allowed_bps']):>5} "
                f"{int(c['limit_head']):2d} {int(c['add_bytes']):5d} {int(c['transit_bytes']):5d}"
            )
        print(f"{1e3 * t:8.1f} " + " | ".join(parts))


if __name__ == "__main__":
    main()
