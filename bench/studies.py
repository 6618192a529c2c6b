"""Profile one typical run of each study and of the reference scenario.

For each, one scenario at its study's quick-profile length (or as shipped where the
study runs its configurations at their own length), seed 1, run once through the
Python API; prints a Markdown table with the simulated time, the events processed,
events per simulated second, events per wall second, the wall time of the run (building
included) and the events per packet sent (all packets of all groups; the engine counts
events in total, not by kind).

A study's point is given by its campaign file: its scenario, its `[set]` values and the
first value of each `[grid]` key, then the quick profile's length on top.

Usage: python bench/studies.py [--only NAME ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: (name, scenario, overrides): one representative point per study, at the length its
#: quick profile runs.
POINTS: list[tuple[str, str, dict[str, str]]] = [
    ("reference", "scenarios/reference.toml", {}),
    (
        "endpoint-admission (E1, in-band dropping, quick: 2 500 s)",
        "studies/endpoint-admission/e1-inbanddropping-slowstart-5s.toml",
        {"run.duration": "2500s", "run.warmup": "1000s"},
    ),
    (
        "pcn (A1 voice, quick admission run: 60 s)",
        "studies/pcn/a1-voice.toml",
        {"run.duration": "60s", "run.warmup": "40s"},
    ),
    (
        "rpr-fairness (default ring, quick: 2 s)",
        "studies/rpr-fairness/default.toml",
        {"run.duration": "2s", "run.warmup": "0.5s"},
    ),
    (
        "assured-service (S1, token bucket, 25 % AS, quick: 100 s)",
        "studies/assured-service/s1-tb-25as.toml",
        {"run.duration": "100s", "run.warmup": "20s"},
    ),
    (
        "abr-multipoint (configuration 1, as shipped: 30 ms)",
        "studies/abr-multipoint/configs/c1.toml",
        {},
    ),
]


def point(path: str, overrides: dict[str, str]) -> tuple[Path, dict[str, Any]]:
    """The scenario and overrides of `path`: a scenario, or a campaign's first point."""
    file = ROOT / path
    doc = tomllib.loads(file.read_text())
    if "campaign" not in doc:
        return file, dict(overrides)
    sets: dict[str, Any] = dict(doc.get("set", {}))
    for key, values in doc.get("grid", {}).items():
        sets[key] = values[0]
    sets.update(overrides)
    return file.parent / doc["campaign"]["scenario"], sets


def packets_sent(summary: dict) -> int:
    """Packets sent by all groups (the summary's `group.*.sent_pkts`)."""
    return int(
        sum(
            v
            for k, v in summary.items()
            if k.startswith("group.") and k.endswith(".sent_pkts") and isinstance(v, int | float)
        )
    )


def main() -> int:
    """Run the points and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="names (prefixes) of the points to run")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "python"))
    import qossim

    os.chdir(ROOT)
    print(
        "| run | simulated | events | events per simulated s | events per wall s "
        "| wall per run | events per packet sent |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, path, overrides in POINTS:
        if args.only and not any(name.startswith(o) for o in args.only):
            continue
        t0 = time.perf_counter()
        scenario, sets = point(path, overrides)
        r = qossim.run(str(scenario), seed=1, set=sets or None)
        wall = time.perf_counter() - t0
        m = r.manifest
        events, sim = int(m["events"]), float(m["sim_time_s"])
        engine_wall = float(m["wall_s"])
        sent = packets_sent(r.summary)
        per_pkt = f"{events / sent:.2f}" if sent else "n/a"
        print(
            f"| {name} | {sim:g} s | {events:,} | {events / sim:,.0f} | "
            f"{events / engine_wall:,.0f} | {engine_wall:.3f} s ({wall:.3f} s in all) "
            f"| {per_pkt} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
