"""Measured costs of study reproductions, for the estimate `qossim reproduce` prints first.

After a reproduction, :func:`record` sums the engine wall time of every run stored under
its output folder (each run's manifest holds ``wall_s``) and writes ``cost.json`` there:
the profile, the number of runs and their engine seconds. Before the next reproduction
of that study and profile, :func:`estimate` reads the cost measured last (in the output
folder, else the table shipped in ``qossim/studies/costs.json``) and states what the
whole study took then: engine seconds, runs and the seconds per run, and the wall time
on the jobs at hand. Runs already stored are reused, so a repeated reproduction is
faster than its estimate.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from qossim.results import atomic_write_text

__all__ = ["COST_FILE", "estimate", "estimate_all", "measure", "record", "shipped"]

#: The file a reproduction's measured cost is written to, in its output folder.
COST_FILE = "cost.json"


def measure(folder: str | os.PathLike[str]) -> dict[str, Any]:
    """Return the runs stored under ``folder`` and their engine seconds (``wall_s``)."""
    runs = 0
    seconds = 0.0
    for manifest in Path(folder).rglob("manifest.json"):
        try:
            wall = json.loads(manifest.read_text(encoding="utf-8")).get("wall_s")
        except (OSError, ValueError):
            continue
        if isinstance(wall, (int, float)):
            runs += 1
            seconds += float(wall)
    return {"runs": runs, "engine_s": round(seconds, 3)}


def record(
    folder: str | os.PathLike[str],
    study: str,
    quick: bool,
    elapsed_s: float | None = None,
    jobs: int | None = None,
) -> dict[str, Any]:
    """Measure a finished reproduction's folder and write its ``cost.json``.

    ``elapsed_s`` is the reproduction's own wall time and ``jobs`` the runs it ran at
    once: what is not engine time (tables, figures, start-up) is added to estimates.
    """
    cost = {"study": study, "profile": "quick" if quick else "full", **measure(folder)}
    if elapsed_s is not None:
        workers = max(1, jobs or os.cpu_count() or 1)
        cost["other_s"] = round(max(0.0, elapsed_s - cost["engine_s"] / workers), 3)
    atomic_write_text(Path(folder) / COST_FILE, json.dumps(cost, indent=1) + "\n")
    return cost


def shipped() -> dict[str, dict[str, dict[str, Any]]]:
    """Return the costs measured when the studies were last reproduced for the release."""
    try:
        text = resources.files("qossim.studies").joinpath("costs.json").read_text("utf-8")
    except (OSError, ModuleNotFoundError):
        return {}
    data = json.loads(text)
    return {k: v for k, v in data.items() if isinstance(v, dict)}


def _known(study: str, quick: bool, folder: Path | None) -> tuple[Mapping[str, Any], str] | None:
    profile = "quick" if quick else "full"
    if folder is not None:
        try:
            cost = json.loads((folder / COST_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            cost = None
        if isinstance(cost, dict) and cost.get("profile") == profile and cost.get("runs"):
            return cost, f"measured in {folder}"
    cost = shipped().get(study, {}).get(profile)
    if cost and cost.get("runs"):
        return cost, "measured for the release"
    return None


def estimate(
    study: str, quick: bool, folder: str | os.PathLike[str] | None, jobs: int | None
) -> str:
    """Return the line printed before a reproduction: its estimated wall time."""
    profile = "quick" if quick else "full"
    found = _known(study, quick, Path(folder) if folder is not None else None)
    if found is None:
        return f"{study} ({profile} profile): no measured cost yet (it is recorded after this run)"
    cost, where = found
    runs, engine = int(cost["runs"]), float(cost["engine_s"])
    workers = _workers(jobs)
    total = _wall(cost, workers)
    return (
        f"{study} ({profile} profile): about {_duration(total)} on {workers} "
        f"job{'s' if workers > 1 else ''} ({runs} runs, {_duration(engine)} of engine time, "
        f"{engine / runs:.3g} s per run; {where}; stored runs are reused)"
    )


def estimate_all(
    studies: Mapping[str, str | os.PathLike[str] | None], quick: bool, jobs: int | None
) -> str:
    """Return the line printed before reproducing several studies: their estimated total.

    ``studies`` maps each study to its output folder. Studies with no measured cost are
    named, and the total is then a lower bound.
    """
    profile = "quick" if quick else "full"
    workers = _workers(jobs)
    total, unknown = 0.0, []
    for study, folder in studies.items():
        found = _known(study, quick, Path(folder) if folder is not None else None)
        if found is None:
            unknown.append(study)
        else:
            total += _wall(found[0], workers)
    line = (
        f"{len(studies)} studies ({profile} profiles): about {_duration(total)} on {workers} "
        f"job{'s' if workers > 1 else ''}"
    )
    if unknown:
        line += f", plus {', '.join(unknown)} (no measured cost yet)"
    return line


def _workers(jobs: int | None) -> int:
    return max(1, jobs or os.cpu_count() or 1)


def _wall(cost: Mapping[str, Any], workers: int) -> float:
    return float(cost["engine_s"]) / workers + float(cost.get("other_s", 0.0))


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
