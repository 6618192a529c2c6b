"""Campaigns: a scenario × a parameter grid × seeds, cached and resumable.

A campaign file is TOML::

    [campaign]
    name = "example"
    scenario = "../../scenarios/reference.toml"   # relative to this file
    seeds = [1, 2, 3]                             # or seeds = 5 for 1..5

    [grid]                                        # full cartesian product
    "traffic.flows.count" = [100, 200]

    [set]                                         # optional, same for every run
    "simulation.duration" = "10s"

Every run is identified by the sha256 of (scenario text, sorted overrides,
seed, qossim version) and stored in ``OUT/runs/<key>/`` by the worker that
ran it, atomically. Running a campaign executes only the runs whose directory
is missing, so a killed campaign resumes where it stopped.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import secrets
import shutil
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from qossim import _engine, _toml
from qossim.errors import (
    BackendUnavailableError,
    CampaignError,
    CampaignInterrupted,
    CampaignRunError,
    QossimError,
    ResultError,
    shown,
)
from qossim.params import canonical_overrides, format_value, run_key
from qossim.progress import CampaignBar
from qossim.results import (
    atomic_write_text,
    build_manifest,
    clean_stale_temps,
    is_result_dir,
    read_manifest,
    read_summary,
    verify_run_dir,
    write_run_dir,
)
from qossim.stats import mean_ci

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BACKENDS",
    "Campaign",
    "Job",
    "Record",
    "execute_job",
    "gather",
    "gather_job_records",
    "records",
    "reuse_workers",
    "run_campaign",
    "run_jobs",
    "summarize",
]

BACKENDS = ("local", "dask", "ray")
RUNS_DIR = "runs"
INDEX_FILE = "campaign.json"
LOCK_FILE = ".lock"

_CAMPAIGN_KEYS = {"name", "scenario", "seeds", "metrics"}
_TOP_KEYS = {"campaign", "grid", "set"}
_ID_COLUMNS = ("seed", "run_key")


# ----------------------------------------------------------------------------
# jobs
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """One run of a campaign: scenario text, overrides and seed, and where it goes."""

    key: str
    scenario_text: str
    scenario_file: str
    overrides: tuple[tuple[str, str], ...]
    seed: int
    params: Mapping[str, Any]
    run_dir: str
    version: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Return a plain, picklable dictionary for worker processes."""
        return {
            "key": self.key,
            "scenario_text": self.scenario_text,
            "scenario_file": self.scenario_file,
            "overrides": [list(pair) for pair in self.overrides],
            "seed": self.seed,
            "params": dict(self.params),
            "run_dir": self.run_dir,
            "version": self.version,
        }


def make_job(
    scenario_text: str,
    scenario_file: str,
    overrides: Iterable[tuple[str, str]],
    seed: int,
    params: Mapping[str, Any],
    out_dir: str | os.PathLike[str],
    version: str | None = None,
) -> Job:
    """Build a :class:`Job` whose run directory is ``OUT/runs/<key>``."""
    version = _engine.core_version() if version is None else version
    pairs = tuple((str(k), str(v)) for k, v in overrides)
    key = run_key(scenario_text, pairs, seed, version)
    run_dir = Path(out_dir).resolve() / RUNS_DIR / key
    return Job(
        key, scenario_text, scenario_file, pairs, int(seed), dict(params), str(run_dir), version
    )


def execute_job(job: Mapping[str, Any]) -> dict[str, Any]:
    """Run one job and write its run directory; the function every backend calls.

    Returns ``{"key", "status", "error"}`` with status ``"done"``,
    ``"cached"`` (already on disk) or ``"failed"``. It never raises for a
    failed run, so one bad run cannot stop the others.
    """
    key = str(job["key"])
    run_dir = Path(job["run_dir"])
    if is_result_dir(run_dir):
        return {"key": key, "status": "cached", "error": None}
    overrides = [(str(k), str(v)) for k, v in job["overrides"]]
    # Raw packet traces go beside the run directory (same file system), never inside it.
    # (Named as a temporary directory, so that a killed worker's is cleaned up.)
    trace_dir = run_dir.parent / f".{key}.traces-{secrets.token_hex(4)}.tmp-"
    try:
        version = _engine.core_version()
        expected = job.get("version") or version
        if version != expected:
            raise QossimError(
                f"this worker runs qossim engine {version}, the campaign was keyed for {expected}"
            )
        raw = _engine.run_raw(
            job["scenario_text"],
            job["scenario_file"],
            int(job["seed"]),
            overrides,
            None,
            trace_dir=trace_dir,
        )
        traces: dict[str, Path] = {}
        if raw.get("traces"):
            from qossim.traces import finish_traces  # numpy and pyarrow: only for traces

            traces = finish_traces(raw, trace_dir)
        manifest = build_manifest(
            raw,
            scenario_file=job["scenario_file"],
            overrides=overrides,
            params=job["params"],
            version=version,
            run_key=key,
        )
        try:
            write_run_dir(
                run_dir,
                manifest=manifest,
                summary=raw.get("summary", {}),
                series=raw.get("series", {}),
                scenario_text=job["scenario_text"],
                traces=traces,
                # Verified by its checksums before any use (run_jobs, gather).
                durable=False,
            )
        except FileExistsError:  # another worker stored the same run first
            if is_result_dir(run_dir):
                return {"key": key, "status": "cached", "error": None}
            raise
    except Exception as exc:  # noqa: BLE001 - reported per run
        message = "; ".join(exc.lines) if isinstance(exc, QossimError) else str(exc)
        return {
            "key": key,
            "status": "failed",
            "error": f"{type(exc).__name__}: {message}",
        }
    finally:
        shutil.rmtree(trace_dir, ignore_errors=True)
    return {"key": key, "status": "done", "error": None}


# ----------------------------------------------------------------------------
# campaign definition
# ----------------------------------------------------------------------------


@dataclass
class Campaign:
    """A scenario, a grid of overrides, fixed overrides and seeds."""

    name: str
    scenario_text: str
    scenario_file: str
    seeds: list[int]
    grid: dict[str, list[Any]] = field(default_factory=dict)
    fixed: dict[str, Any] = field(default_factory=dict)
    source: Path | None = None
    metrics: list[str] = field(default_factory=list)
    #: Where each grid and set key is written (``"c.toml:8"``), to blame its mistakes on.
    key_lines: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Campaign:
        """Read and check a campaign file; raise CampaignError listing every problem."""
        label = os.fspath(path)
        from qossim.api import read_scenario_file

        try:
            text = read_scenario_file(Path(path))
        except QossimError as exc:
            raise CampaignError(exc.lines[0]) from None
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise CampaignError(f"{label}: cannot read: {reason}") from None
        try:
            data = _toml.loads(text)
        except _toml.TOMLDecodeError as exc:
            line = _toml.error_line(exc, text)
            raise CampaignError(f"{label}:{line}: {_toml.error_reason(exc)}") from None
        spec = cls.from_dict(data, base_dir=Path(path).parent, label=label, source=Path(path))
        spec.key_lines = _key_lines(text, [*spec.grid, *spec.fixed], label)
        return spec

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        base_dir: str | os.PathLike[str] = ".",
        *,
        label: str = "<campaign>",
        source: Path | None = None,
    ) -> Campaign:
        """Build a campaign from the parsed TOML structure.

        ``campaign.scenario`` may be a path (relative to ``base_dir``) or a
        scenario dictionary.
        """
        problems: list[str] = []
        if "campaign" not in data and ({"run", "topology", "traffic"} & set(data)):
            raise CampaignError(
                f"{label}: this is a scenario file, not a campaign (a campaign has a "
                f"[campaign] table); run it with `qossim run {label}`"
            )
        for key in data:
            if key not in _TOP_KEYS:
                problems.append(
                    f"{label}: {shown(key)}: unknown table (expected campaign, grid, set)"
                )
        head = data.get("campaign")
        if not isinstance(head, Mapping):
            raise CampaignError(problems + [f"{label}: campaign: missing [campaign] table"])
        for key in head:
            if key not in _CAMPAIGN_KEYS:
                problems.append(f"{label}: campaign.{shown(key)}: unknown key")

        name = head.get("name", Path(label).stem if source else "campaign")
        if not isinstance(name, str) or not name.strip():
            problems.append(f"{label}: campaign.name: must be a non-empty string")
            name = "campaign"

        scenario_text, scenario_file = "", ""
        scenario = head.get("scenario")
        if isinstance(scenario, Mapping):
            scenario_text, scenario_file = _toml.dumps(scenario), "<dict>"
        elif isinstance(scenario, str) and scenario:
            scenario_path = Path(base_dir) / scenario
            scenario_file = os.fspath(scenario_path)
            try:
                from qossim.api import read_scenario_file

                scenario_text = read_scenario_file(scenario_path)
            except QossimError as exc:
                problems.append(f"{label}: campaign.scenario: {exc.lines[0]}")
            except (OSError, UnicodeDecodeError) as exc:
                reason = getattr(exc, "strerror", None) or str(exc)
                problems.append(
                    f"{label}: campaign.scenario: cannot read {scenario_file}: {reason}"
                )
        else:
            problems.append(f"{label}: campaign.scenario: must be a path to a scenario file")

        seeds = _parse_seeds(head.get("seeds"), label, problems)
        metrics = _parse_metrics(head.get("metrics", []), label, problems)
        grid = _flatten(data.get("grid", {}), label, "grid", problems)
        fixed = _flatten(data.get("set", {}), label, "set", problems)
        for key, values in grid.items():
            if not isinstance(values, list) or not values:
                problems.append(f"{label}: grid.{shown(key)}: must be a non-empty list of values")
        for key in sorted(set(grid) & set(fixed)):
            problems.append(f"{label}: {shown(key)}: set in both [grid] and [set]")
        size = max(1, len(seeds))
        for values in grid.values():
            size *= max(1, len(values)) if isinstance(values, list) else 1
        if size > MAX_RUNS:
            problems.append(
                f"{label}: grid: {size} runs (grid points x seeds) is more than the "
                f"{MAX_RUNS} a campaign may hold"
            )
        for table, entries in (("grid", grid), ("set", fixed)):
            for key, value in entries.items():
                values = value if table == "grid" and isinstance(value, list) else [value]
                for item in values:
                    try:
                        format_value(item)
                    except TypeError as exc:
                        problems.append(f"{label}: {table}.{shown(key)}: {shown(exc, 400)}")
        if problems:
            raise CampaignError(problems)
        return cls(
            name=name.strip(),
            scenario_text=scenario_text,
            scenario_file=scenario_file,
            seeds=seeds,
            grid={k: list(v) for k, v in grid.items()},
            fixed=dict(fixed),
            source=source,
            metrics=metrics,
        )

    def points(self) -> list[dict[str, Any]]:
        """Return the grid points (dicts of parameter values) in a fixed order."""
        keys = list(self.grid)
        return [
            dict(zip(keys, values, strict=True))
            for values in itertools.product(*self.grid.values())
        ]

    def overrides_for(self, point: Mapping[str, Any]) -> list[tuple[str, str]]:
        """Return the overrides of one grid point (fixed ones first)."""
        pairs = [(k, format_value(v)) for k, v in self.fixed.items()]
        pairs += [(k, format_value(v)) for k, v in point.items()]
        return pairs

    def jobs(self, out_dir: str | os.PathLike[str], version: str | None = None) -> list[Job]:
        """Expand the campaign into jobs, grid-point major, then seed."""
        version = _engine.core_version() if version is None else version
        return [
            make_job(
                self.scenario_text,
                self.scenario_file,
                self.overrides_for(point),
                seed,
                point,
                out_dir,
                version,
            )
            for point in self.points()
            for seed in self.seeds
        ]

    def default_out_dir(self) -> Path:
        """Return ``runs/<name>`` (relative to the working directory)."""
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in self.name)
        return Path("runs") / (safe.strip(".") or "campaign")


def _key_lines(text: str, keys: Sequence[str], label: str) -> dict[str, str]:
    """Return where each dotted key is written in a campaign file (``LABEL:LINE``).

    That is the line that assigns it (quoted or bare); keys not found are left out.
    """
    import re

    lines = text.splitlines()
    found: dict[str, str] = {}
    for key in keys:
        spellings = [f'"{key}"', f"'{key}'", key]
        for number, line in enumerate(lines, start=1):
            stripped = line.strip()
            if any(re.match(re.escape(sp) + r"\s*=", stripped) for sp in spellings):
                found[key] = f"{label}:{number}"
                break
    return found


#: The most runs one campaign may hold (grid points times seeds); more is refused before
#: anything is expanded or run.
MAX_RUNS = 1_000_000


def _parse_seeds(value: Any, label: str, problems: list[str]) -> list[int]:
    if isinstance(value, bool):
        value = None
    if isinstance(value, int):
        if value < 1:
            problems.append(f"{label}: campaign.seeds: a count of seeds must be >= 1")
            return []
        if value > MAX_RUNS:
            problems.append(
                f"{label}: campaign.seeds: {value} seeds is more than the {MAX_RUNS} runs a "
                "campaign may hold"
            )
            return []
        return list(range(1, value + 1))
    if (
        isinstance(value, list)
        and value
        and all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**64 for s in value)
    ):
        if len(set(value)) != len(value):
            problems.append(f"{label}: campaign.seeds: seeds must not repeat")
        return list(value)
    problems.append(
        f"{label}: campaign.seeds: must be a count (seeds = 5) or a non-empty list of "
        "integers from 0 to 2^64 - 1"
    )
    return []


def _parse_metrics(value: Any, label: str, problems: list[str]) -> list[str]:
    """``campaign.metrics``: the metric names (or shell-style patterns) a sweep prints."""
    if not isinstance(value, list) or not all(isinstance(m, str) and m.strip() for m in value):
        problems.append(
            f"{label}: campaign.metrics: must be a list of metric names, "
            'e.g. ["link.n1-n2.utilization", "flows.*.loss"]'
        )
        return []
    return [m.strip() for m in value]


def select_metrics(names: Iterable[str], patterns: Sequence[str]) -> tuple[list[str], list[str]]:
    """Return the metric names matching ``patterns`` (shell-style), pattern by pattern.

    Returns ``(selected, unmatched)``: ``unmatched`` holds the patterns that match
    no name, so a misspelt metric can be reported instead of silently printing less.
    """
    import fnmatch

    names = list(names)
    selected = list(dict.fromkeys(n for p in patterns for n in names if fnmatch.fnmatchcase(n, p)))
    unmatched = [p for p in patterns if not any(fnmatch.fnmatchcase(n, p) for n in names)]
    return selected, unmatched


def _flatten(table: Any, label: str, name: str, problems: list[str]) -> dict[str, Any]:
    if not isinstance(table, Mapping):
        problems.append(f"{label}: {name}: must be a table")
        return {}
    out: dict[str, Any] = {}

    def walk(node: Mapping[str, Any], prefix: str) -> None:
        for key, value in node.items():
            path = f"{prefix}{key}"
            if isinstance(value, Mapping):
                walk(value, path + ".")
            else:
                out[path] = value

    walk(table, "")
    return out


CampaignLike = Union[Campaign, str, "os.PathLike[str]", Mapping[str, Any]]


def as_campaign(campaign: CampaignLike) -> Campaign:
    """Accept a :class:`Campaign`, a campaign file path or a parsed campaign dict."""
    if isinstance(campaign, Campaign):
        return campaign
    if isinstance(campaign, Mapping):
        return Campaign.from_dict(campaign)
    return Campaign.load(campaign)


# ----------------------------------------------------------------------------
# running
# ----------------------------------------------------------------------------


@contextlib.contextmanager
def _locked(out_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on a campaign directory (released even on SIGKILL)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX
        yield
        return
    handle = open(out_dir / LOCK_FILE, "a+")  # noqa: SIM115 - held for the block
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise CampaignError(
                f"{out_dir}: another campaign is running in this directory"
            ) from None
        yield
    finally:
        handle.close()


def _write_index(out_dir: Path, name: str, jobs: Sequence[Job], params: Sequence[str]) -> None:
    index = {
        "name": name,
        "params": list(params),
        "runs": [{"key": j.key, "seed": j.seed, "params": dict(j.params)} for j in jobs],
    }
    atomic_write_text(out_dir / INDEX_FILE, json.dumps(index, indent=1) + "\n")


def _validate_jobs(jobs: Sequence[Job], blame: Mapping[str, str] | None = None) -> None:
    """Validate every distinct scenario and overrides.

    A diagnostic about an override (``--set:N``) is blamed on the line of the campaign
    file that gave it (``blame``).
    """
    import re

    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    lines: list[str] = []
    for job in jobs:
        signature = (job.scenario_text, tuple(canonical_overrides(job.overrides)))
        if signature in seen:
            continue
        seen.add(signature)
        for line in _engine.validate(job.scenario_text, job.scenario_file, list(job.overrides)):
            match = re.match(r"--set:(\d+): (.*)$", line)
            if match and blame:
                index = int(match.group(1)) - 1
                if 0 <= index < len(job.overrides) and job.overrides[index][0] in blame:
                    line = f"{blame[job.overrides[index][0]]}: {match.group(2)}"
            if line not in lines:
                lines.append(line)
    if lines:
        raise CampaignError(lines)


def run_jobs(
    jobs: Sequence[Job],
    out_dir: str | os.PathLike[str],
    *,
    backend: str = "local",
    address: str | None = None,
    jobs_n: int | None = None,
    progress: bool = True,
    name: str = "campaign",
    params: Sequence[str] | None = None,
    blame: Mapping[str, str] | None = None,
) -> dict[str, int]:
    """Execute the jobs whose run directory is missing, on the chosen backend.

    Validates every distinct scenario/override combination first (nothing
    runs if one is invalid), holds a lock on ``out_dir``, removes temporary
    directories left by killed runs, and raises
    :class:`qossim.errors.CampaignRunError` after all runs ended if some
    failed (the successful ones are kept). Returns counts of ``total``,
    ``cached``, ``done`` runs.
    """
    if backend not in BACKENDS:
        raise QossimError(f"unknown backend {backend!r} (choose from {', '.join(BACKENDS)})")
    if jobs_n is not None and jobs_n < 1:
        raise QossimError(f"--jobs must be >= 1, got {jobs_n}")
    out = Path(out_dir)
    unique: dict[str, Job] = {}
    for job in jobs:
        unique.setdefault(job.key, job)
    _validate_jobs(list(unique.values()), blame)
    with _locked(out):
        clean_stale_temps(out / RUNS_DIR)
        _write_index(out, name, jobs, params if params is not None else _param_names(jobs))
        for job in unique.values():
            _set_aside_if_damaged(out, job)
        pending = [j for j in unique.values() if not is_result_dir(j.run_dir)]
        counts = {"total": len(unique), "cached": len(unique) - len(pending), "done": 0}
        if not pending:
            return counts
        failures: list[str] = []
        runner = {"local": _run_local, "dask": _run_dask, "ray": _run_ray}[backend]
        by_key = {j.key: j for j in pending}
        outcomes = runner([j.to_dict() for j in pending], address, jobs_n)
        try:
            with (
                _sigterm_interrupts(),
                CampaignBar(len(unique), counts["cached"], name, progress) as bar,
            ):
                for outcome in outcomes:
                    failed = outcome["status"] == "failed"
                    if failed:
                        job = by_key[outcome["key"]]
                        failures.append(
                            f"run {job.key[:12]} ({_describe(job)}): {outcome['error']}"
                        )
                    else:
                        counts["done"] += 1
                    bar.advance(failed)
        except KeyboardInterrupt as exc:
            import signal

            outcomes.close()  # ends the workers
            clean_stale_temps(out / RUNS_DIR)
            # A backend may turn the interrupt into a plain KeyboardInterrupt (Ray does):
            # SIGTERM is then known from its handler's record.
            signum = getattr(exc, "signum", None) or (_TERMINATED or [signal.SIGINT])[-1]
            # Counted on disk once the workers are ended: a run may have been stored
            # after the last outcome was read.
            stored = sum(1 for j in unique.values() if is_result_dir(j.run_dir))
            raise CampaignInterrupted(
                f"{out}: interrupted by {signal.Signals(signum).name}: {stored} of "
                f"{len(unique)} runs are stored and kept; run the sweep again to finish it",
                signum=signum,
            ) from None
        finally:
            outcomes.close()
            # A worker ended mid-write (a crashed pool's others) leaves a temporary
            # directory; its run was done again or is reported.
            clean_stale_temps(out / RUNS_DIR)
    if failures:
        raise CampaignRunError(
            [f"{len(failures)} of {len(pending)} runs failed (finished runs are kept):"] + failures
        )
    return counts


#: SIGTERMs received by the sweep in progress (see :func:`_sigterm_interrupts`).
_TERMINATED: list[int] = []


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that a sweep stops the same way."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """While a sweep runs, SIGTERM interrupts it as Ctrl-C does (main thread only)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        _TERMINATED.append(signum)
        raise _Terminated(signum)

    _TERMINATED.clear()
    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


DAMAGED_DIR = "damaged"


def _set_aside_if_damaged(out: Path, job: Job) -> None:
    """Move a damaged or partial stored run to ``OUT/damaged/`` (so it runs again)."""
    run_dir = Path(job.run_dir)
    if not os.path.lexists(run_dir):
        return
    problem = (
        verify_run_dir(run_dir, job.key) if is_result_dir(run_dir) else "incomplete (no manifest)"
    )
    if problem is None:
        return
    import datetime as dt

    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = out / DAMAGED_DIR / f"{job.key}-{stamp}"
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(run_dir, target)
    print(
        f"warning: stored run {job.key[:12]} ({_describe(job)}) is damaged: {problem}; "
        f"moved to {target} and run again",
        file=sys.stderr,
    )


def _describe(job: Job) -> str:
    parts = [f"{k}={v}" for k, v in job.params.items()]
    return ", ".join(parts + [f"seed={job.seed}"])


def _param_names(jobs: Iterable[Job]) -> list[str]:
    names: list[str] = []
    for job in jobs:
        for key in job.params:
            if key not in names:
                names.append(key)
    return names


def _default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def _pool_context() -> Any:
    """Multiprocessing context of the local pool.

    Workers are spawned (fresh interpreters, safe whatever threads the caller
    runs); when the main program is not a file a spawned worker could import
    (code piped to ``python -``), fork is used instead where it exists.
    """
    import multiprocessing

    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    if main_file is not None and not os.path.isfile(main_file):
        if "fork" in multiprocessing.get_all_start_methods():
            return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


_BROKEN_POOL_HINT = (
    "a worker process died; if this runs from a Python script, guard the script's "
    'entry point with `if __name__ == "__main__":`'
)


class _KeptPools:
    """The local pool kept for reuse inside :func:`reuse_workers` (at most one)."""

    def __init__(self) -> None:
        self.pool: Any = None
        self.signature: tuple[Any, ...] | None = None

    def take(self, signature: tuple[Any, ...]) -> Any:
        """Return the kept pool if it was started with ``signature``, else None."""
        if self.pool is not None and self.signature != signature:
            self.drop()
        return self.pool

    def keep(self, pool: Any, signature: tuple[Any, ...]) -> None:
        """Keep ``pool`` (started with ``signature``) for the next run of jobs."""
        self.pool, self.signature = pool, signature

    def drop(self) -> None:
        """Shut the kept pool down (its workers end once idle)."""
        pool, self.pool, self.signature = self.pool, None, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


_KEPT: list[_KeptPools] = []


@contextlib.contextmanager
def reuse_workers() -> Iterator[None]:
    """Keep the local backend's worker processes from one run of jobs to the next.

    Without it every :func:`run_jobs` on the local backend starts a pool of fresh
    interpreters (each imports qossim and pyarrow before its first run) and ends it
    when its jobs are done; a study reproduction runs jobs once per table or curve, so
    it paid that start-up dozens of times. Inside the block one pool is kept and
    reused while the workers it would start are the same: as many, with the same
    environment, working directory and module search path (workers read the
    environment, e.g. the test engine's hook, when they start); otherwise it is
    replaced. A broken or interrupted pool is never kept. The pool ends with the block;
    a block inside another one uses the outer block's pool.
    """
    if _KEPT:
        yield
        return
    kept = _KeptPools()
    _KEPT.append(kept)
    try:
        yield
    finally:
        _KEPT.remove(kept)
        kept.drop()


def submit_to_kept_pool(fn: Any, *args: Any) -> Any:
    """Submit ``fn(*args)`` to the pool of local workers kept by :func:`reuse_workers`.

    Returns the future, or None when no pool is kept (outside the block, or before its
    first run of jobs started one), so that the caller does the work itself.
    """
    kept = _KEPT[-1] if _KEPT else None
    if kept is None or kept.pool is None:
        return None
    try:
        return kept.pool.submit(fn, *args)
    except RuntimeError:  # shut down or broken
        return None


def _pool_signature(workers: int, context: Any) -> tuple[Any, ...]:
    """Return what a local worker takes from the main process when it starts."""
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    return (
        workers,
        context.get_start_method(),
        tuple(sorted(os.environ.items())),
        os.getcwd(),
        tuple(sys.path),
        main_file,
    )


def _run_local(jobs: list[dict[str, Any]], address: str | None, n: int | None) -> Iterator[dict]:
    if address:
        raise QossimError("the local backend takes no --address")
    kept = _KEPT[-1] if _KEPT else None
    size = n or _default_workers()
    workers = min(size, len(jobs))
    if workers <= 1:
        for job in jobs:
            yield execute_job(job)
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    unfinished: list[dict[str, Any]] = []
    context = _pool_context()
    # A kept pool has the full number of workers, so that it serves every later run.
    signature = _pool_signature(size if kept is not None else workers, context)
    pool = kept.take(signature) if kept is not None else None
    finished = False
    with _sigint_ignored_by_children():
        if pool is None:
            pool = ProcessPoolExecutor(
                max_workers=signature[0], mp_context=context, initializer=_worker_init
            )
            if kept is not None:
                kept.keep(pool, signature)
        # (Workers are started here, as jobs are submitted: with SIGINT ignored.)
        futures = {pool.submit(execute_job, job): job for job in jobs}
    try:
        yielded: set[Any] = set()
        broken = False
        for future in as_completed(futures):
            try:
                outcome = future.result()
            except BrokenProcessPool:
                broken = True
                break
            yielded.add(future)
            yield outcome
        if broken:
            # A worker died (a crash, the memory killer): the runs that finished are
            # reported, every other one is run again, each in a process of its own, so
            # that only the run that kills its own process fails.
            wait_all = [f for f in futures if f not in yielded]
            for f in wait_all:
                with contextlib.suppress(Exception):
                    f.exception()  # the pool settles every future once broken
            for f in wait_all:
                if not f.cancelled() and f.exception() is None:
                    yield f.result()
                else:
                    unfinished.append(futures[f])
        else:
            finished = True
    finally:
        if kept is None or not finished:
            if kept is not None and kept.pool is pool:
                kept.pool, kept.signature = None, None
            _stop_pool(pool)
    if unfinished:
        seen: set[str] = set()
        unique = [j for j in unfinished if not (j["key"] in seen or seen.add(j["key"]))]
        yield from _run_isolated(unique, workers)


@contextlib.contextmanager
def _sigint_ignored_by_children() -> Iterator[None]:
    """Ignore SIGINT while worker processes start, so that they start ignoring it.

    An ignored signal stays ignored in a new program: a Ctrl-C to the process group then
    reaches the main process only, which ends the workers itself, and never a worker
    half-way through starting.
    """
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def _stop_pool(pool: Any) -> None:
    """Shut a process pool down; on an interrupt, end its workers at once."""
    import sys as _sys

    interrupted = isinstance(_sys.exc_info()[1], (KeyboardInterrupt, SystemExit, GeneratorExit))
    if interrupted:
        for proc in list(getattr(pool, "_processes", {}).values()):
            with contextlib.suppress(Exception):
                proc.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


def _worker_init() -> None:
    """Set a local worker up.

    Ctrl-C is the main process's to handle (it ends the workers), and the worker dies
    with the main process (``PR_SET_PDEATHSIG``), so a killed sweep leaves no worker
    behind.
    """
    import multiprocessing
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    if parent is not None and os.getppid() != parent.pid:
        os._exit(1)  # the parent died before the request took hold


def _isolated_child(job: dict[str, Any], conn: Any) -> None:
    _worker_init()
    try:
        conn.send(execute_job(job))
    finally:
        conn.close()


def _run_isolated(jobs: list[dict[str, Any]], workers: int) -> Iterator[dict]:
    """Run each job in a process of its own, ``workers`` at a time.

    A job whose process dies fails alone, with how it died.
    """
    import signal
    from multiprocessing.connection import wait

    ctx = _pool_context()
    queue = list(jobs)
    running: dict[Any, tuple[Any, dict[str, Any]]] = {}
    try:
        while queue or running:
            while queue and len(running) < workers:
                job = queue.pop(0)
                parent_end, child_end = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_isolated_child, args=(job, child_end), daemon=True)
                with _sigint_ignored_by_children():
                    proc.start()
                child_end.close()
                running[parent_end] = (proc, job)
            for conn in wait(list(running)):
                proc, job = running.pop(conn)
                try:
                    outcome = conn.recv()
                except (EOFError, OSError):
                    outcome = None
                conn.close()
                proc.join()
                if outcome is None:
                    code = proc.exitcode
                    if code is not None and code < 0:
                        try:
                            how = f"killed by {signal.Signals(-code).name}; out of memory?"
                        except ValueError:
                            how = f"killed by signal {-code}"
                        error = f"the process running it died ({how})"
                    else:
                        error = f"{_BROKEN_POOL_HINT} (exit status {code})"
                    outcome = {"key": job["key"], "status": "failed", "error": error}
                yield outcome
    finally:
        for proc, _ in running.values():
            with contextlib.suppress(Exception):
                proc.terminate()
                proc.join()


def _run_dask(jobs: list[dict[str, Any]], address: str | None, n: int | None) -> Iterator[dict]:
    """Run the jobs on a Dask cluster (a local one unless ``address`` is given).

    A worker that dies takes every task it held with it (the scheduler counts each as a
    suspect; a local cluster gives up on a task at its first death). Every task given
    up that way is run again after the others, alone on the cluster, one at a time: a
    run that kills its worker fails alone, with how it failed; the others are stored.
    The local cluster's workers start with SIGINT ignored (a Ctrl-C to the process group
    is the main process's to handle: closing the client ends them).
    """
    try:
        import dask
        from distributed import Client, as_completed
        from distributed.scheduler import KilledWorker
    except ImportError:
        raise BackendUnavailableError(
            "the dask backend needs the 'distributed' package: pip install 'dask[distributed]'"
        ) from None
    stack = contextlib.ExitStack()
    if address:
        try:
            client = Client(address, timeout="30s")
        except (OSError, TimeoutError) as exc:
            raise BackendUnavailableError(
                f"cannot reach the Dask scheduler at {address}: {exc}"
            ) from None
    else:
        # The local cluster's scheduler and nannies run in this process, its workers in
        # processes of their own (told by the environment): their log of workers dying,
        # restarting or being stopped would bury the one line per failed run.
        stack.enter_context(_quiet_logger("distributed"))
        stack.enter_context(_environ("DASK_LOGGING__DISTRIBUTED", "critical"))
        with (
            _sigint_ignored_by_children(),
            dask.config.set({"distributed.scheduler.allowed-failures": 0}),
        ):
            client = Client(
                n_workers=min(n or _default_workers(), len(jobs)),
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
            )
    try:
        futures = client.map(execute_job, jobs, pure=False)
        by_future = {future.key: job for future, job in zip(futures, jobs, strict=True)}
        suspects: list[dict[str, Any]] = []
        for future in as_completed(futures):
            try:
                yield future.result()
            except KilledWorker:
                suspects.append(by_future[future.key])
            except Exception as exc:  # noqa: BLE001 - reported per run
                yield _lost(by_future[future.key], f"dask: {_first_line(exc)}")
        for job in suspects:
            (future,) = client.map(execute_job, [job], pure=False)
            try:
                yield future.result()
            except KilledWorker:
                yield _lost(job, _DIED + ", twice, the second time alone on the cluster")
            except Exception as exc:  # noqa: BLE001 - reported per run
                yield _lost(job, f"dask: {_first_line(exc)}")
    finally:
        client.close()
        stack.close()


@contextlib.contextmanager
def _environ(name: str, value: str) -> Iterator[None]:
    """Set the environment variable ``name`` to ``value`` meanwhile."""
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


@contextlib.contextmanager
def _quiet_logger(name: str) -> Iterator[None]:
    """Keep the logger ``name`` (and its children) to critical messages meanwhile."""
    import logging

    logger = logging.getLogger(name)
    old = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(old)


#: Why a run failed whose worker process died under it.
_DIED = "the worker process running it died (a crash or out of memory?)"


def _lost(job: Mapping[str, Any], why: str) -> dict[str, Any]:
    """Return the outcome of a job whose run was lost with its worker: failed, with why."""
    return {"key": job["key"], "status": "failed", "error": why}


def _first_line(exc: BaseException) -> str:
    """Return the first line of an exception's message (a remote traceback follows)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:480]


def _run_ray(jobs: list[dict[str, Any]], address: str | None, n: int | None) -> Iterator[dict]:
    import logging

    try:
        import ray
    except ImportError:
        raise BackendUnavailableError(
            "the ray backend needs the 'ray' package: pip install ray"
        ) from None
    started = False
    handlers = _signal_handlers()
    if not ray.is_initialized():
        if address:
            try:
                ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise BackendUnavailableError(
                    f"cannot connect to the Ray cluster at {address}: {exc}"
                ) from None
        else:
            with _package_on_pythonpath():
                ray.init(
                    num_cpus=n or _default_workers(),
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level=logging.WARNING,
                )
        started = True
    # Ray installs handlers of its own for SIGTERM (abort with a stack dump): the
    # sweep's own stop the workers and keep the stored runs.
    _restore_signal_handlers(handlers)
    try:
        # A task lost with its node (a system failure, not a failed run: execute_job never
        # raises for those) is retried on the nodes left. Each Ray worker process runs
        # one task at a time, so a run that kills its process fails alone.
        remote = ray.remote(num_cpus=1, max_retries=3)(execute_job)
        refs = {remote.remote(job): job for job in jobs}
        waiting = list(refs)
        while waiting:
            ready, waiting = ray.wait(waiting, num_returns=1)
            for ref in ready:
                try:
                    yield ray.get(ref)
                except (ray.exceptions.WorkerCrashedError, ray.exceptions.OutOfMemoryError):
                    yield _lost(refs[ref], _DIED + " at each of its 4 tries")
                except Exception as exc:  # noqa: BLE001 - reported per run
                    yield _lost(refs[ref], f"ray: {_first_line(exc)}")
    finally:
        if started:
            ray.shutdown()


def _signal_handlers() -> dict[int, Any]:
    """Return the Python handlers of SIGINT and SIGTERM (none off the main thread)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return {}
    return {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}


def _restore_signal_handlers(handlers: Mapping[int, Any]) -> None:
    """Put back handlers taken by :func:`_signal_handlers`."""
    import signal

    for signum, handler in handlers.items():
        if handler is not None:
            signal.signal(signum, handler)


@contextlib.contextmanager
def _package_on_pythonpath() -> Iterator[None]:
    """Make sure locally started Ray workers can import this qossim package."""
    root = str(Path(__file__).resolve().parent.parent)
    old = os.environ.get("PYTHONPATH")
    entries = old.split(os.pathsep) if old else []
    if root not in entries and root not in {str(Path(p).resolve()) for p in entries if p}:
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *entries])
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


def run_campaign(
    campaign: CampaignLike,
    backend: str = "local",
    address: str | None = None,
    jobs: int | None = None,
    progress: bool = True,
    *,
    out: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """Run a campaign's missing runs and return the tidy table of all its runs.

    Parameters
    ----------
    campaign:
        A :class:`Campaign`, a campaign file path, or a parsed campaign dict.
    backend:
        ``"local"`` (process pool), ``"dask"`` or ``"ray"``.
    address:
        Dask scheduler (``tcp://host:8786``) or Ray cluster (``ray://host:10001``
        or ``auto``); ``None`` starts a local cluster.
    jobs:
        Number of parallel workers for local pools and clusters (default: all
        cores).
    progress:
        Show a progress bar with ETA on a terminal.
    out:
        Campaign directory (default ``runs/<campaign name>``).

    The table has one row per run: grid parameter columns, ``seed``, every
    scalar summary metric and ``run_key``; it is the same on every backend.
    It is also written to ``OUT/runs.csv``, and :func:`summarize` of it to
    ``OUT/summary.csv``. ``table.attrs["counts"]`` tells how many runs were
    executed and how many were already stored.
    """
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise CampaignError(f"jobs: must be a whole number >= 1 or None, got {jobs!r}")
    if backend not in BACKENDS:
        raise CampaignError(f"backend: unknown backend {backend!r} (use {', '.join(BACKENDS)})")
    spec = as_campaign(campaign)
    out_dir = Path(out) if out is not None else spec.default_out_dir()
    job_list = spec.jobs(out_dir)
    counts = run_jobs(
        job_list,
        out_dir,
        backend=backend,
        address=address,
        jobs_n=jobs,
        progress=progress,
        name=spec.name,
        params=list(spec.grid),
        blame=spec.key_lines,
    )
    if spec.source is not None:
        with contextlib.suppress(OSError):
            atomic_write_text(out_dir / "campaign.toml", spec.source.read_text(encoding="utf-8"))
    table = gather_jobs(job_list, params=list(spec.grid))
    atomic_write_text(out_dir / "runs.csv", table.to_csv(index=False))
    atomic_write_text(out_dir / "summary.csv", summarize(table).to_csv(index=False))
    table.attrs["out_dir"] = str(out_dir)
    table.attrs["counts"] = counts
    return table


# ----------------------------------------------------------------------------
# gathering
# ----------------------------------------------------------------------------


def _scalars(summary: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in summary.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_scalars(value, name + "."))
        elif value is None or isinstance(value, (bool, int, float, str)):
            out[name] = value
    return out


def _rows_to_frame(rows: list[dict[str, Any]], params: Sequence[str]) -> pd.DataFrame:
    import pandas as pd

    # Metric names in first-seen order; a dict keeps this linear in the number of keys.
    skip = set(params) | set(_ID_COLUMNS)
    metrics: dict[str, None] = {}
    for row in rows:
        for key in row:
            if key not in skip:
                metrics.setdefault(key, None)
    columns = [*params, "seed", *metrics, "run_key"]
    frame = pd.DataFrame(rows, columns=columns)
    # Only the (short) list of grid parameters goes into attrs: pandas copies attrs into
    # every derived frame and row view, so a list of thousands of metric names there
    # made row access slow.
    frame.attrs["params"] = list(params)
    return frame


def param_label(value: Any) -> Any:
    """Return a grid parameter's value as a table cell (hashable and printable).

    Scalars stay as they are; tables and arrays become a one-line label in TOML's inline
    shape, strings unquoted (``{kind = red, min_th = 5}``, ``[2ms, 20ms]``), whatever
    the type of the value a grid varied (a queue discipline, a list of access delays).
    """
    if isinstance(value, Mapping):
        items = (f"{_bare_key(k)} = {param_label_text(v)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(param_label_text(v) for v in value) + "]"
    return value


def param_label_text(value: Any) -> str:
    """Return :func:`param_label` of ``value`` as text."""
    label = param_label(value)
    return label if isinstance(value, (Mapping, list, tuple)) else format_value(value)


def _bare_key(key: Any) -> str:
    text = str(key)
    return text if text and all(c.isalnum() or c in "_-" for c in text) else format_value(text)


def _row(run_dir: Path, params: Sequence[str] | None = None) -> dict[str, Any]:
    manifest = read_manifest(run_dir)
    summary = read_summary(run_dir)
    row: dict[str, Any] = {}
    run_params = manifest.get("params", {}) or {}
    for key in params if params is not None else run_params:
        row[key] = param_label(run_params.get(key))
    row["seed"] = manifest.get("seed")
    for key, value in _scalars(summary).items():
        if key in row:
            key = f"summary.{key}"
        row[key] = value
    row["run_key"] = manifest.get("run_key", run_dir.name)
    return row


def records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Return the rows of a table as dicts, as ``df.to_dict("records")`` does, faster.

    The same keys and the same Python values (numpy numbers made ``int``, ``float``,
    ``bool``; a missing number stays NaN). pandas reads a table of more than 254
    columns, such as a gathered campaign with per-flow metrics, one column and row at
    a time for ``to_dict``: 1.7 s for 78 runs of 6 000 metrics, against a few
    hundredths of a second here.
    """
    import numpy as np

    columns = list(df.columns)
    rows = df.astype(object).to_numpy().tolist()
    boxed = [i for i, dtype in enumerate(df.dtypes) if dtype.kind == "O"]
    if boxed:
        for row in rows:
            for i in boxed:
                value = row[i]
                if isinstance(value, np.generic):
                    row[i] = value.item()
    return [dict(zip(columns, row, strict=True)) for row in rows]


def _job_rows(
    jobs: Sequence[Job], params: Sequence[str] | None
) -> tuple[list[dict[str, Any]], list[str]]:
    """Return the stored runs of ``jobs`` (each once, in job order) as rows, and the params."""
    names = list(params) if params is not None else _param_names(jobs)
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for job in jobs:
        if job.key in seen or not is_result_dir(job.run_dir):
            continue
        seen.add(job.key)
        rows.append(_row(Path(job.run_dir), names))
    return rows, names


def gather_jobs(jobs: Sequence[Job], params: Sequence[str] | None = None) -> pd.DataFrame:
    """Read the stored results of ``jobs`` (in job order) into one table."""
    rows, names = _job_rows(jobs, params)
    return _rows_to_frame(rows, names)


class Record(dict):  # type: ignore[type-arg]
    """One run's row of a gathered table, holding only the columns it has a value in.

    Reading a column the run has no value in gives ``None``, as the table's missing
    cell does (``record["x"]`` as well as ``record.get("x")``).
    """

    def __missing__(self, key: Any) -> None:
        return None


def gather_job_records(jobs: Sequence[Job], params: Sequence[str] | None = None) -> list[Record]:
    """Read the stored results of ``jobs`` as :func:`gather_jobs` would, row by row.

    Each record holds the values the table's row would hold, in the table's column
    order, with the table's types (an integer metric that some run lacks is a float,
    as in its float column), and leaves out the cells that would be missing. A
    campaign whose runs differ in their metrics (the PCN study's full profile: 1 662
    runs with 2 400 metrics each, 153 000 in all) costs its values, not runs x
    metrics: the table of that campaign needs 18 GB of memory to build.
    """
    rows, names = _job_rows(jobs, params)
    return sparse_records(rows, names)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def sparse_records(rows: Sequence[Mapping[str, Any]], params: Sequence[str]) -> list[Record]:
    """Return ``rows`` as :func:`gather_job_records` does (see there)."""
    skip = set(params) | set(_ID_COLUMNS)
    order: dict[str, int] = {}
    for key in (*params, "seed"):
        order.setdefault(key, len(order))
    for row in rows:
        for key in row:
            if key not in skip and key not in order:
                order[key] = len(order)
    order.setdefault("run_key", len(order))
    # A column's type as the table infers it: integers become floats in a column that
    # has a float or a missing cell, unless the column also holds booleans or text
    # (then it keeps every value as it is).
    ints: set[str] = set()
    floats: set[str] = set()
    other: set[str] = set()
    present: dict[str, int] = {}
    for row in rows:
        for key, value in row.items():
            if _missing(value):
                continue
            present[key] = present.get(key, 0) + 1
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                other.add(key)
            elif isinstance(value, int):
                ints.add(key)
            else:
                floats.add(key)
    to_float = {k for k in ints if k not in other and (k in floats or present[k] < len(rows))}
    out: list[Record] = []
    for row in rows:
        keys = sorted((k for k, v in row.items() if not _missing(v)), key=order.__getitem__)
        out.append(Record((k, float(row[k]) if k in to_float else row[k]) for k in keys))
    return out


def gather(out_dir: str | os.PathLike[str], *, all_runs: bool = False) -> pd.DataFrame:
    """Read a campaign directory into one tidy table, one row per run.

    Columns: grid parameters, ``seed``, every scalar summary metric (nested
    summary tables flattened to dotted names), ``run_key``. By default only
    the runs of the campaign last run in ``out_dir`` are included, in its
    order; ``all_runs=True`` reads every complete run directory instead.
    Incomplete (temporary) directories are never read.
    """
    out = Path(out_dir)
    runs = out / RUNS_DIR
    if not runs.is_dir():
        raise ResultError(f"{out}: not a campaign directory (no {RUNS_DIR}/)")
    index_path = out / INDEX_FILE
    if not all_runs and index_path.is_file():
        try:
            index = json.loads(index_path.read_text(encoding="utf-8"))
            params = [str(p) for p in index.get("params", [])]
            keys = [str(r["key"]) for r in index.get("runs", [])]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ResultError(f"{index_path}: unreadable: {exc}") from None
        rows = []
        seen: set[str] = set()
        for key in keys:
            if key not in seen and is_result_dir(runs / key):
                seen.add(key)
                _verified(runs / key, out)
                rows.append(_row(runs / key, params))
        return _rows_to_frame(rows, params)
    dirs = sorted(p for p in runs.iterdir() if is_result_dir(p))
    for d in dirs:
        _verified(d, out)
    manifests = [read_manifest(d) for d in dirs]
    params: list[str] = []
    for manifest in manifests:
        for key in manifest.get("params", {}) or {}:
            if key not in params:
                params.append(key)
    rows = [_row(d, params) for d in dirs]
    rows.sort(key=lambda r: ([_sort_key(r.get(p)) for p in params], _sort_key(r.get("seed"))))
    return _rows_to_frame(rows, params)


def _verified(run_dir: Path, out: Path) -> None:
    """Raise :class:`ResultError` unless the stored run is whole and in its own slot."""
    problem = verify_run_dir(run_dir, run_dir.name)
    if problem is not None:
        raise ResultError(
            f"{run_dir}: stored run is damaged: {problem}; run the campaign again "
            f"(qossim sweep ... --out {out}) to set it aside and repair it"
        )


def _sort_key(value: Any) -> tuple[int, Any]:
    if value is None:
        return (2, "")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, value)
    return (1, str(value))


# ----------------------------------------------------------------------------
# summarising
# ----------------------------------------------------------------------------


def summarize(
    df: pd.DataFrame,
    by: Sequence[str] | None = None,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Mean and Student-t confidence interval across seeds, per grid point.

    Returns a long table with columns ``*by, metric, mean, ci_low, ci_high,
    runs`` holding one row per grid point and numeric metric, in the order
    grid points first appear. ``by`` defaults to the grid parameters recorded
    by :func:`gather` (or the columns before ``seed``). ``runs`` counts the
    non-missing values; with one run the interval is NaN.
    """
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise CampaignError(
            f"summarize: expects the table of gather() or run_campaign(), got {type(df).__name__}"
        )
    if by is None:
        by = df.attrs.get("params")
        if by is None:
            columns = list(df.columns)
            by = columns[: columns.index("seed")] if "seed" in columns else []
    by = list(by)
    metrics = [
        c
        for c in df.columns
        if c not in by
        and c not in _ID_COLUMNS
        and (pd.api.types.is_numeric_dtype(df[c]) or pd.api.types.is_bool_dtype(df[c]))
    ]
    records: list[dict[str, Any]] = []
    if by:
        groups = df.groupby(by, sort=False, dropna=False)
    else:
        groups = [((), df)]
    for point, group in groups:
        if not isinstance(point, tuple):
            point = (point,)
        for metric in metrics:
            values = [float(v) for v in group[metric].tolist() if v is not None]
            ci = mean_ci(values, confidence)
            record = dict(zip(by, point, strict=True))
            record.update(metric=metric, mean=ci.mean, ci_low=ci.low, ci_high=ci.high, runs=ci.n)
            records.append(record)
    out = pd.DataFrame(records, columns=[*by, "metric", "mean", "ci_low", "ci_high", "runs"])
    out.attrs["params"] = by
    return out
