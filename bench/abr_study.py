"""Time the whole ABR point-to-multipoint study from scratch and count its cells.

Runs ``qossim reproduce abr-multipoint`` (full profile, every experiment) into a fresh
directory, then reads every stored run: cells sent by the sources, cell transmissions
on all links (one per cell and hop), events and the engine's own wall time. Prints one
line per figure; the figures of record are in ``studies/abr-multipoint/README.md``.

    python bench/abr_study.py [--jobs N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jobs", type=int, default=2, help="parallel runs (default 2)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "abr"
        t0 = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "qossim",
                "reproduce",
                "abr-multipoint",
                "--quiet",
                "--jobs",
                str(args.jobs),
                "--out",
                str(out),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        wall = time.perf_counter() - t0
        runs = sent = hops = events = 0
        engine = 0.0
        for run in sorted((out / "runs").iterdir()):
            summary = json.loads((run / "summary.json").read_text())
            manifest = json.loads((run / "manifest.json").read_text())
            runs += 1
            events += int(manifest["events"])
            engine += float(manifest["wall_s"])
            for key, value in summary.items():
                if key.startswith("abr.vc.") and key.endswith(".cells_sent"):
                    sent += int(value)
                elif key.startswith("link.") and key.endswith(".tx_pkts"):
                    hops += int(value)
    print(f"runs={runs} wall={wall:.1f}s (study, {args.jobs} jobs, figures and report included)")
    print(f"engine_wall={engine:.2f}s (sum over runs) events={events}")
    print(f"cells_sent={sent} cell_hops={hops}")
    print(f"cell_hops_per_engine_s={hops / engine:.3g} cell_hops_per_study_s={hops / wall:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
