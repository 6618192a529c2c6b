"""Where the time of the Python path goes: one run, and `qossim reproduce --quick`.

Two parts, each printed as a Markdown table:

* `--phases SCENARIO` (default `scenarios/reference.toml`): the CPU seconds of each
  phase of one run through the Python API, in a fresh process: importing qossim,
  reading the file, parsing and validating it in the engine, the engine's `run` (its
  own `wall_s` covers building, running and the summary; the rest is parsing again and
  converting the results to Python objects), the manifest, and saving the run
  directory the first time (Parquet: pyarrow's import) and a second time.
* `--studies [NAME ...]`: `qossim reproduce NAME --quick` of each study into a fresh
  folder, in a child process: its wall time and CPU seconds (its own and its workers',
  which are less sensitive to the machine's load than the wall time), the runs it made
  and their engine seconds (the sum of the runs' `wall_s`, from `cost.json`); then the
  same reproduction again over the stored runs, which measures what is not simulation
  (reading the runs, tables, figures, the report). Before and after the studies it
  prints the reference scenario's engine time, best of three, as a measure of the
  host's speed at that hour.

Usage: python bench/quick_profile.py [--phases [SCENARIO]] [--studies [NAME ...]]
       [--jobs N] [--out DIR]
Without options both parts run, for every registered study (the whole quick
reproduction: about 10 minutes of CPU).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PHASES = r"""
import shutil, sys, tempfile, time
T = time.process_time
c = T()
import qossim
from qossim import _core, _engine, api
out = {"import qossim": T() - c}
path = sys.argv[1]
c = T(); text, filename = api.scenario_source(path); out["read the file"] = T() - c
c = T(); _engine.validate(text, filename, []); out["parse and validate"] = T() - c
c = T(); raw = _core.run(text, filename, 1, [], None); out["engine run"] = T() - c
out["(its own wall_s, wall seconds: building, running, summary)"] = raw["wall_s"]
c = T(); r = api.result_from_raw(raw, text, filename, [], None); out["manifest"] = T() - c
folder = tempfile.mkdtemp()
c = T(); r.save(folder + "/a"); out["save, first"] = T() - c
c = T(); r.save(folder + "/b"); out["save, again"] = T() - c
shutil.rmtree(folder)
out["events"] = raw["events"]
print(repr(out))
"""


#: The engine seconds of the reference scenario, best of three runs in a fresh process:
#: printed before and after the studies, so that figures from different hours of a
#: shared host can be compared (its speed has been seen to change by half within an hour).
SPEED = r"""
import sys
from qossim import _core, api
text, filename = api.scenario_source(sys.argv[1])
print(min(_core.run(text, filename, 1, [], None)["wall_s"] for _ in range(3)))
"""


def _script(script: str, arg: str) -> str:
    """Run ``script`` with ``arg`` in a fresh Python process; return its last line."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    done = subprocess.run(
        [sys.executable, "-c", script, arg],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def host_speed() -> float:
    """Return the reference scenario's engine seconds, best of three (see ``SPEED``)."""
    return float(_script(SPEED, "scenarios/reference.toml"))


def phases(scenario: str) -> None:
    """Print the CPU seconds of each phase of one run of ``scenario``."""
    out = ast.literal_eval(_script(PHASES, scenario))  # the dict PHASES printed
    events = out.pop("events")
    print(f"\n{scenario}: {events:,} events\n")
    print("| phase | CPU s |")
    print("|---|---:|")
    for name, seconds in out.items():
        print(f"| {name} | {seconds:.4f} |")


def _child(args: list[str]) -> tuple[float, float]:
    """Run ``args`` as a child; return its wall time and CPU seconds (with its workers)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    subprocess.run(args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def studies(names: list[str], jobs: int | None, out: Path) -> None:
    """Print wall, CPU and engine seconds of each study's quick reproduction."""
    sys.path.insert(0, str(ROOT / "python"))
    from qossim import studies as registry

    names = names or registry.study_names()
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"\nload average at the start: {load}")
    print(f"the reference scenario's engine time (host speed) at the start: {host_speed():.3f} s\n")
    print(
        "| study | runs | wall | CPU s | engine s (sum of runs) "
        "| again over the stored runs: wall | CPU s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in names:
        folder = out / name
        shutil.rmtree(folder, ignore_errors=True)
        command = [sys.executable, "-m", "qossim", "reproduce", name, "--quick", "--quiet"]
        command += ["--out", str(folder)] + (["--jobs", str(jobs)] if jobs else [])
        wall, cpu = _child(command)
        cost = json.loads((folder / "cost.json").read_text())
        again_wall, again_cpu = _child(command)
        print(
            f"| {name} | {cost['runs']} | {wall:.1f} s | {cpu:.1f} | {cost['engine_s']:.1f} "
            f"| {again_wall:.1f} s | {again_cpu:.1f} |",
            flush=True,
        )
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"\nload average at the end: {load}")
    print(f"the reference scenario's engine time (host speed) at the end: {host_speed():.3f} s")


def main() -> int:
    """Run the parts asked for."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--phases", nargs="?", const="scenarios/reference.toml", default=None)
    ap.add_argument("--studies", nargs="*", default=None)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    both = args.phases is None and args.studies is None
    if args.phases is not None or both:
        phases(args.phases or "scenarios/reference.toml")
    if args.studies is not None or both:
        out = args.out or Path(tempfile.mkdtemp(prefix="qossim-quick-"))
        studies(args.studies or [], args.jobs, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
