"""The reproduce frame: registered studies turned into tables, figures and a report.

A study is a module with

* ``EXPERIMENTS``: the ids of its experiments (``--only`` picks among them);
* ``TITLE`` (optional): a human title for its report;
* ``reproduce(quick, only, out_dir, progress) -> StudyOutput``: runs what it
  needs (through :func:`run_points`, which caches runs under
  ``out_dir/runs/``) and returns its tables, figures and notes.

The studies shipped with qossim are declared over the shared frame of
:mod:`qossim.studies.frame` (profiles, overrides, cached runs, intervals,
figures), whose :class:`~qossim.studies.frame.Study` provides the last two.

Register a study with :func:`register_study`. ``qossim reproduce`` prints each
table (``--format text``: aligned columns, ``value ± half-width`` when a cell
has more than one run, and a ``runs`` column; ``--format json``: JSON Lines,
one record object per line) and writes ``out_dir/index.html``.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from qossim import _toml, plots
from qossim.campaign import (
    Job,
    Record,
    gather_job_records,
    gather_jobs,
    make_job,
    reuse_workers,
    run_jobs,
    submit_to_kept_pool,
)
from qossim.errors import StudyError
from qossim.report import VERDICT_CLASSES, Styled, write_report
from qossim.results import atomic_write_text
from qossim.stats import CI
from qossim.studies import published

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Execution",
    "StudyOutput",
    "Table",
    "check_only",
    "execution",
    "format_cell",
    "format_json",
    "format_text",
    "get_study",
    "register_study",
    "reproduce",
    "run_point_records",
    "run_points",
    "study_names",
    "table_grid",
    "use_execution",
    "write_study_report",
]

_REGISTRY: dict[str, ModuleType | str] = {}


# ----------------------------------------------------------------------------
# registry
# ----------------------------------------------------------------------------


def register_study(name: str, module: ModuleType | str) -> None:
    """Register a study under ``name``: a module, or its dotted name (imported lazily)."""
    if not name or any(ch.isspace() for ch in name):
        raise ValueError(f"study name must be a non-empty word, got {name!r}")
    _REGISTRY[name] = module


def study_names() -> list[str]:
    """Return the names of registered studies, in registration order."""
    return list(_REGISTRY)


def get_study(name: str) -> ModuleType:
    """Return a registered study module; raise StudyError for an unknown name."""
    if name not in _REGISTRY:
        import difflib

        known = ", ".join(_REGISTRY) or "none"
        close = difflib.get_close_matches(name, list(_REGISTRY), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise StudyError(f"{name}: unknown study{hint} (registered: {known})")
    module = _REGISTRY[name]
    if isinstance(module, str):
        module = importlib.import_module(module)
        _REGISTRY[name] = module
    for attribute in ("EXPERIMENTS", "reproduce"):
        if not hasattr(module, attribute):
            raise StudyError(f"{name}: study module {module.__name__} has no {attribute}")
    return module


# ----------------------------------------------------------------------------
# output
# ----------------------------------------------------------------------------


@dataclass
class Table:
    """One study table: records plus its layout (row order, column order, title).

    Each record is ``{table, row, column, value, ci_low, ci_high, runs}``.
    """

    id: str
    title: str
    rows: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    row_label: str = ""

    def add(
        self,
        row: str,
        column: str,
        value: Any,
        ci_low: float | None = None,
        ci_high: float | None = None,
        runs: int = 1,
    ) -> None:
        """Add one cell; new rows and columns are appended to the layout."""
        if row not in self.rows:
            self.rows.append(row)
        if column not in self.columns:
            self.columns.append(column)
        self.records.append(
            {
                "table": self.id,
                "row": row,
                "column": column,
                "value": _clean(value),
                "ci_low": _clean(ci_low),
                "ci_high": _clean(ci_high),
                "runs": int(runs),
            }
        )

    def add_ci(self, row: str, column: str, ci: CI) -> None:
        """Add a cell holding a mean and its confidence interval."""
        self.add(row, column, ci.mean, ci.low, ci.high, ci.n)

    def cell(self, row: str, column: str) -> dict[str, Any] | None:
        """Return the record of one cell, or None."""
        for record in self.records:
            if record["row"] == row and record["column"] == column:
                return record
        return None


@dataclass
class StudyOutput:
    """What a study returns: tables, figures ``(title, png path)`` and notes.

    ``differences`` is filled by :func:`reproduce` when it compares the tables with the
    study's published ones (:mod:`qossim.studies.published`): the cells whose verdict is
    ``differs``. ``profile`` names the profile the runs were made in (``full``,
    ``quick`` or a test profile): a difference may be explained for one profile only.
    """

    tables: list[Table] = field(default_factory=list)
    figures: list[tuple[str, Path]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    differences: list[Any] = field(default_factory=list)
    profile: str = "full"


def _clean(value: Any) -> Any:
    if value is None:
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def format_cell(record: Mapping[str, Any] | None) -> str:
    """Format a cell: ``value``, or ``value ± half-width`` when runs > 1."""
    if record is None:
        return ""
    value = record.get("value")
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    text = f"{value:.4g}"
    low, high = record.get("ci_low"), record.get("ci_high")
    if record.get("runs", 1) > 1 and low is not None and high is not None:
        half = (high - low) / 2
        text += f" ± {half:.2g}"
    return text


def _runs_label(table: Table, row: str) -> str:
    # Cells with runs = 0 hold values that are not measured (e.g. theory).
    counts = sorted({int(r["runs"]) for r in table.records if r["row"] == row and r["runs"] > 0})
    if not counts:
        return ""
    return str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"


#: The mark of each verdict beside a published value (text and HTML).
VERDICT_MARKS = {"within CI": "✓", "close": "≈", "differs": "✗"}

#: The line that explains the marks, printed under a compared table.
VERDICT_LEGEND = (
    "✓ the published (or theoretical) value lies inside the reproduced 95 % interval, "
    "≈ within the declared tolerance, ✗ differs (the study README traces why)"
)


def format_published(record: Mapping[str, Any] | None) -> str:
    """Format a record's published value with its verdict mark (blank when not compared)."""
    if record is None or record.get("published") is None:
        return ""
    mark = VERDICT_MARKS.get(str(record.get("verdict")), "")
    text = f"{record['published']:.6g}"
    return f"{text} {mark}" if mark else text


def compared_columns(table: Table) -> set[str]:
    """Return the columns of ``table`` compared with a published table in some row.

    Columns compared with a reference of the same table (queueing theory) are not among
    them: their cells carry the verdict mark, the reference is already a column.
    """
    return {
        r["column"]
        for r in table.records
        if r.get("published") is not None
        and not str(r.get("against")).startswith(published.REFERENCE_PREFIX)
    }


def table_layout(table: Table) -> tuple[list[str], list[list[tuple[str, str | None]]]]:
    """Return a table's header and its cells as ``(text, verdict or None)``.

    A column compared with a published table is followed by a ``published`` column that
    holds the published value and its verdict mark.
    """
    compared = compared_columns(table)
    header = [table.row_label or ""]
    for c in table.columns:
        header.append(c)
        if c in compared:
            header.append(f"{c} · published")
    header.append("runs")
    rows = []
    for row in table.rows:
        line: list[tuple[str, str | None]] = [(row, None)]
        for c in table.columns:
            record = table.cell(row, c)
            v = record.get("verdict") if record else None
            text = format_cell(record)
            if v and c not in compared:
                text = f"{text} {VERDICT_MARKS[v]}"
            line.append((text, v))
            if c in compared:
                line.append((format_published(record), v))
        line.append((_runs_label(table, row), None))
        rows.append(line)
    if rows and not any(line[-1][0] for line in rows):
        header.pop()
        rows = [line[:-1] for line in rows]
    return header, rows


def table_grid(table: Table) -> tuple[list[str], list[list[str]]]:
    """Return the header and rows of a table as formatted strings."""
    header, rows = table_layout(table)
    return header, [[text for text, _ in line] for line in rows]


def format_text(output: StudyOutput, study: str = "") -> str:
    """Render every table as an aligned text table, then the notes."""
    blocks: list[str] = []
    for table in output.tables:
        header, rows = table_grid(table)
        widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]

        def line(cells: Sequence[str], widths: list[int] = widths) -> str:
            first = cells[0].ljust(widths[0])
            rest = [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
            return "  ".join([first, *rest]).rstrip()

        title = f"{study}: {table.title}" if study else table.title
        rule = "-" * max(len(title), sum(widths) + 2 * (len(widths) - 1))
        lines = [title, rule, line(header), *(line(r) for r in rows)]
        if any(r.get("verdict") for r in table.records):
            lines.append(f"({VERDICT_LEGEND})")
        blocks.append("\n".join(lines))
    if output.differences:
        blocks.append(
            "\n".join(
                [
                    "differences from the published results:",
                    *(f"  - {line}" for line in describe_differences(output.differences)),
                ]
            )
        )
    if output.notes:
        blocks.append("\n".join(["notes:", *(f"  - {n}" for n in output.notes)]))
    return "\n\n".join(blocks) + "\n"


def format_json(output: StudyOutput) -> str:
    """Render every record as JSON Lines: one JSON object per line, no array.

    Missing or non-finite numbers are ``null``.
    """
    lines = [
        json.dumps(record, ensure_ascii=False, allow_nan=False)
        for table in output.tables
        for record in table.records
    ]
    return "\n".join(lines) + ("\n" if lines else "")


def describe_difference(d: Any) -> str:
    """One line for a difference: where, published against reproduced, and its cause."""
    return describe_differences([d])[0]


def describe_differences(differences: Sequence[Any]) -> list[str]:
    """One line per published row and cause: its differing cells, then the cause.

    ``Table 1, 2b: maximum queue (cells) 1500 → 5001; cells received 60000 → 48395 —
    CAUSE (README: LINK)``; cells without a traced cause end "not explained yet".
    """
    groups: dict[tuple[str, str, Any], list[Any]] = {}
    for d in differences:
        groups.setdefault((d.table.number, d.cell.row, d.explanation), []).append(d)
    lines = []
    for (number, row, e), ds in groups.items():
        cells = "; ".join(f"{d.cell.column} {d.cell.text} → {d.reproduced:.4g}" for d in ds)
        cause = "not explained yet" if e is None else f"{e.cause} (README: {e.link})"
        lines.append(f"{number}, {row}: {cells} — {cause}")
    return lines


def write_study_report(name: str, module: ModuleType, output: StudyOutput, out_dir: Path) -> Path:
    """Write the study's HTML report into ``out_dir/index.html``.

    Compared cells are coloured by verdict; the page opens with the ``fidelity`` table
    and the list of differences with their causes.
    """
    tables = []
    lead_table = None
    for table in output.tables:
        header, rows = table_layout(table)
        header[0] = header[0] or " "
        styled = [
            {
                h: Styled(text, VERDICT_CLASSES.get(v or ""))
                for h, (text, v) in zip(header, line, strict=True)
            }
            for line in rows
        ]
        if table.id == "fidelity":
            lead_table = (table.title, styled)
        else:
            tables.append((table.title, styled))
    title = getattr(module, "TITLE", None) or f"qossim study: {name}"
    lead = describe_differences(output.differences)
    if any(r.get("verdict") for t in output.tables for r in t.records):
        lead.append(VERDICT_LEGEND)
    return write_report(
        out_dir, title, tables, output.figures, output.notes, lead=lead, lead_table=lead_table
    )


# ----------------------------------------------------------------------------
# running study points
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Execution:
    """Where study runs execute: backend, cluster address and parallel jobs."""

    backend: str = "local"
    address: str | None = None
    jobs: int | None = None


_EXECUTION = [Execution()]


def execution() -> Execution:
    """Return the execution settings in force for study runs."""
    return _EXECUTION[-1]


@contextlib.contextmanager
def use_execution(settings: Execution) -> Iterator[Execution]:
    """Run study points with ``settings`` inside the ``with`` block."""
    _EXECUTION.append(settings)
    try:
        yield settings
    finally:
        _EXECUTION.pop()


def run_points(
    points: Iterable[tuple[Mapping[str, Any], Mapping[str, Any] | str]],
    seeds: Sequence[int],
    out_dir: str | os.PathLike[str],
    *,
    progress: bool = True,
    name: str = "study",
    scenario_file: str = "<dict>",
) -> pd.DataFrame:
    """Run scenarios for every seed (cached under ``out_dir/runs``) and gather them.

    ``points`` yields ``(params, scenario)`` where ``params`` names the point
    (it becomes the table's parameter columns) and ``scenario`` is a
    scenario dict or TOML text. Runs already stored are not executed again.
    Returns the tidy table of :func:`qossim.gather`.
    """
    jobs, params = _run_point_jobs(
        points, seeds, out_dir, name=name, progress=progress, scenario_file=scenario_file
    )
    return gather_jobs(jobs, params)


def run_point_records(
    points: Iterable[tuple[Mapping[str, Any], Mapping[str, Any] | str]],
    seeds: Sequence[int],
    out_dir: str | os.PathLike[str],
    *,
    progress: bool = True,
    name: str = "study",
    scenario_file: str = "<dict>",
) -> list[Record]:
    """Run the points as :func:`run_points` does and return its table's rows as records.

    The records (:func:`qossim.campaign.gather_job_records`) hold each run's own values
    only: what a study reads when its runs differ in their metrics, whose table would
    be mostly missing cells.
    """
    jobs, params = _run_point_jobs(
        points, seeds, out_dir, name=name, progress=progress, scenario_file=scenario_file
    )
    return gather_job_records(jobs, params)


def _run_point_jobs(
    points: Iterable[tuple[Mapping[str, Any], Mapping[str, Any] | str]],
    seeds: Sequence[int],
    out_dir: str | os.PathLike[str],
    *,
    progress: bool,
    name: str,
    scenario_file: str,
) -> tuple[list[Job], list[str]]:
    jobs = []
    params: list[str] = []
    for point, scenario in points:
        text = scenario if isinstance(scenario, str) else _toml.dumps(scenario)
        for key in point:
            if key not in params:
                params.append(key)
        for seed in seeds:
            jobs.append(make_job(text, scenario_file, [], seed, dict(point), out_dir))
    settings = execution()
    run_jobs(
        jobs,
        out_dir,
        backend=settings.backend,
        address=settings.address,
        jobs_n=settings.jobs,
        progress=progress,
        name=name,
        params=params,
    )
    return jobs, params


# ----------------------------------------------------------------------------
# reproduce
# ----------------------------------------------------------------------------


def check_only(name: str, module: ModuleType, only: Sequence[str] | None) -> list[str] | None:
    """Validate ``--only`` ids against a study's EXPERIMENTS."""
    if not only:
        return None
    known = [str(e) for e in module.EXPERIMENTS]
    unknown = [o for o in only if o not in known]
    if unknown:
        raise StudyError(
            [f"{name}: unknown experiment {o!r} (known: {', '.join(known)})" for o in unknown]
        )
    return list(only)


REPORT_RECORD = "report.json"


def partial_dir(base: Path, ids: Sequence[str]) -> Path:
    """Return where a reproduction of only ``ids`` writes its report: ``base/only-<ids>``.

    The directory shares ``base/runs`` (runs are stored by content, so a partial and a
    full reproduction can use each other's runs) through a relative symbolic link.
    """
    label = "-".join(sorted(dict.fromkeys(ids)))
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in label)
    if len(safe) > 60:
        safe = safe[:40] + "-" + hashlib.sha256(label.encode()).hexdigest()[:12]
    target = base / f"only-{safe}"
    target.mkdir(parents=True, exist_ok=True)
    (base / "runs").mkdir(parents=True, exist_ok=True)
    link = target / "runs"
    if not link.exists() and not link.is_symlink():
        link.symlink_to(Path("..") / "runs", target_is_directory=True)
    return target


def _report_experiments(directory: Path) -> list[str] | None:
    """Return the experiments of the report in ``directory``, or None when it holds none."""
    try:
        record = json.loads((directory / REPORT_RECORD).read_text(encoding="utf-8"))
        return [str(e) for e in record["experiments"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def reproduce(
    name: str,
    *,
    quick: bool = False,
    only: Sequence[str] | None = None,
    out_dir: str | os.PathLike[str] | None = None,
    progress: bool = True,
) -> tuple[StudyOutput, Path]:
    """Run one registered study and write its report; return (output, report path).

    ``out_dir`` defaults to ``reports/<name>``. A reproduction of only some
    experiments never replaces a fuller report: by default it writes to
    ``reports/<name>/only-<ids>/``, and with an ``out_dir`` that already holds a
    report of other experiments, to ``out_dir/only-<ids>/`` (see :func:`partial_dir`).
    """
    module = get_study(name)
    selected = check_only(name, module, only)
    base = Path(out_dir) if out_dir is not None else Path("reports") / name
    target = base
    every = [str(e) for e in module.EXPERIMENTS]
    if selected is not None and set(selected) != set(every):
        held = _report_experiments(base)
        if out_dir is None or (held is not None and not set(held) <= set(selected)):
            target = partial_dir(base, selected)
    target.mkdir(parents=True, exist_ok=True)
    # One pool of local workers for every table of the study (the command keeps one for
    # every study; library callers get one per study).
    # Figures are drawn by the pool's workers while the next runs go on (deferred_saves
    # waits for them before the block ends).
    with reuse_workers(), plots.deferred_saves(submit_to_kept_pool):
        output = module.reproduce(quick=quick, only=selected, out_dir=target, progress=progress)
    if not isinstance(output, StudyOutput):
        raise StudyError(f"{name}: reproduce() returned {type(output).__name__}, not StudyOutput")
    output.differences = published.compare(name, output)
    report = write_study_report(name, module, output, target)
    record = {"study": name, "experiments": selected or every, "quick": quick}
    atomic_write_text(target / REPORT_RECORD, json.dumps(record, indent=1) + "\n")
    return output, report


register_study("validation", "qossim.studies.validation")
register_study("pcn", "qossim.studies.pcn")
register_study("assured-service", "qossim.studies.assured_service")
register_study("rpr-fairness", "qossim.studies.rpr_fairness")
register_study("abr-multipoint", "qossim.studies.abr_multipoint")
register_study("endpoint-admission", "qossim.studies.endpoint_admission")
