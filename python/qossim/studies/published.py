"""Published results beside reproduced ones: declarations, verdicts and the fidelity table.

Each study that reproduces published tables keeps them as data in its folder,
``studies/<study>/published/`` (the same files ship inside the package, under
``qossim/studies/published/<study>/``):

* one CSV file per published table, one row per published row, in the published
  table's own layout (its row names and its columns);
* ``tables.toml``, which declares for each published table its number and caption, the
  reproduced table it maps to, how a published row names a reproduced row, how each
  published column maps to a reproduced column with the tolerance of a ``close`` verdict
  and its justification, and which differences are explained where.

:func:`compare` is called by :func:`qossim.studies.reproduce` on every study's output: it
gives every record ``published`` (the published number, or null), ``verdict`` (``within
CI``, ``close``, ``differs`` or null), ``explanation`` (for a difference, the README
section that traces its cause, or null) and ``against`` (the published table's number,
or the name of a reference such as queueing theory, or null), and adds a ``fidelity``
table that counts the verdicts per published table. Nothing is judged by hand: a
verdict follows from the declared rule alone.

The rule, for one cell with published value *p* and reproduced mean *m*:

``within CI``
    the reproduced cell has a 95 % interval (more than one run) and *p* lies in it;
``close``
    otherwise, *m* lies within the column's declared tolerance of *p*: ``absolute`` (|m -
    p| ≤ a), ``relative`` (|m - p| ≤ r·|p|) or ``factor`` (p/f ≤ m ≤ p·f, both
    positive);
``differs``
    otherwise; the declaration names the README section that traces the cause, or the
    difference is reported as unexplained.
"""

from __future__ import annotations

import csv
import io
import math
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qossim.errors import StudyError

if TYPE_CHECKING:
    from qossim.studies import StudyOutput, Table

__all__ = [
    "DATA_DIR",
    "FIDELITY_COLUMNS",
    "REFERENCE_PREFIX",
    "VERDICTS",
    "ColumnMap",
    "Difference",
    "Explanation",
    "PublishedCell",
    "PublishedDataError",
    "PublishedTable",
    "Reference",
    "Tolerance",
    "compare",
    "load",
    "load_references",
    "parse_number",
    "verdict",
]

#: Where the published data of every study ships (one folder per study name).
DATA_DIR = Path(__file__).resolve().parent / "published"

#: How ``against`` names a reference of the same table (``reference: queueing theory``).
REFERENCE_PREFIX = "reference: "

#: The verdicts, best first.
VERDICTS = ("within CI", "close", "differs")

#: Columns of the ``fidelity`` table.
FIDELITY_COLUMNS = (
    "published cells",
    "compared",
    "within CI",
    "close",
    "differs",
    "differs, explained",
)

_TOLERANCE_KINDS = ("absolute", "relative", "factor")
_REDUCERS = ("value", "first", "min", "max", "mean", "sum")


class PublishedDataError(StudyError):
    """A study's published data or its declaration is malformed (``FILE:LINE: reason``)."""


@dataclass(frozen=True)
class Tolerance:
    """How far a reproduced mean may lie from the published value and still be ``close``."""

    kind: str
    amount: float
    why: str
    floor: float = 0.0

    def holds(self, published: float, reproduced: float) -> bool:
        """Tell whether ``reproduced`` is within this tolerance of ``published``.

        ``floor`` is an absolute difference that is always close (for values near
        zero, where a relative or factor rule means nothing).
        """
        if abs(reproduced - published) <= self.floor:
            return True
        if self.kind == "absolute":
            return abs(reproduced - published) <= self.amount
        if self.kind == "relative":
            return abs(reproduced - published) <= self.amount * abs(published)
        if published <= 0 or reproduced <= 0:
            return published == reproduced
        return published / self.amount <= reproduced <= published * self.amount

    def describe(self) -> str:
        """Return the tolerance as text (``±1``, ``±10 %``, ``×/÷ 2``)."""
        floor = f" (or ±{self.floor:g})" if self.floor else ""
        if self.kind == "absolute":
            return f"±{self.amount:g}"
        if self.kind == "relative":
            return f"±{100 * self.amount:g} %{floor}"
        return f"×/÷ {self.amount:g}{floor}"


@dataclass(frozen=True)
class ColumnMap:
    """One published column and the reproduced column it is compared with.

    ``scale`` multiplies the published value into the reproduced column's unit;
    ``reduce`` says how a reproduced cell that lists several numbers (``"5095 / 5094"``)
    becomes one: its ``first``, ``min``, ``max``, ``mean`` or ``sum`` (``value``: the
    cell is one number). ``by_row`` names another reproduced column for some published
    rows (e.g. the steady-state maximum where the study printed that one).
    """

    published: str
    reproduced: str
    tolerance: Tolerance | None = None
    scale: float = 1.0
    reduce: str = "value"
    by_row: Mapping[str, str] = field(default_factory=dict)

    def reproduced_for(self, row: str) -> str:
        """Return the reproduced column compared with this column's cell in ``row``."""
        return self.by_row.get(row, self.reproduced)


@dataclass(frozen=True)
class Explanation:
    """Where the cause of a difference is traced: a README section and a one-line cause.

    ``rows`` and ``columns`` (published names) select the cells it explains; empty means
    every row or column of the table. ``profiles`` (``full``, ``quick``) limits it to the
    runs of those profiles, for a difference that a profile's own departure from the
    study's setup makes (the quick profile's shorter runs or single seed); empty means
    every profile.
    """

    link: str
    cause: str
    rows: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    profiles: tuple[str, ...] = ()

    def covers(self, row: str, column: str, profile: str = "full") -> bool:
        """Tell whether this explanation covers a published cell in a profile's runs."""
        return (
            (not self.rows or row in self.rows)
            and (not self.columns or column in self.columns)
            and (not self.profiles or profile in self.profiles)
        )


@dataclass(frozen=True)
class PublishedCell:
    """One published cell: where it was printed and where it is compared."""

    row: str
    column: str
    text: str
    value: float | None
    remark: str
    reproduced_row: str
    line: int
    reproduced_table: str | None = None
    select: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class PublishedTable:
    """A published table, its cells and how they map onto a reproduced table."""

    study: str
    number: str
    caption: str
    file: str
    reproduced: str
    columns: tuple[ColumnMap, ...]
    cells: tuple[PublishedCell, ...]
    explanations: tuple[Explanation, ...] = ()
    note: str = ""
    select: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        """The row label of this table in the fidelity table."""
        return f"{self.number} ({self.reproduced})"

    def column(self, published: str) -> ColumnMap:
        """Return the mapping of a published column."""
        for c in self.columns:
            if c.published == published:
                return c
        raise KeyError(published)

    def explain(self, row: str, column: str, profile: str = "full") -> Explanation | None:
        """Return the first explanation covering a cell in a profile's runs, or None."""
        for e in self.explanations:
            if e.covers(row, column, profile):
                return e
        return None


@dataclass(frozen=True)
class Difference:
    """A compared cell whose verdict is ``differs``."""

    table: PublishedTable
    cell: PublishedCell
    reproduced: float
    explanation: Explanation | None


_NUMBER = re.compile(r"^\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*)$")


def parse_number(text: str) -> tuple[float | None, str]:
    """Split a published cell into its number and the remark after it.

    ``"9000 plus other traffic"`` gives ``(9000.0, "plus other traffic")``; a cell without
    a leading number gives ``(None, text)``.
    """
    match = _NUMBER.match(text)
    if not match:
        return None, text.strip()
    return float(match.group(1)), match.group(2).strip()


def verdict(
    published: float,
    mean: float | None,
    ci: tuple[float | None, float | None] | None,
    runs: int,
    tolerance: Tolerance | None,
) -> str | None:
    """Return the verdict of one cell (None when nothing was reproduced)."""
    if mean is None or not math.isfinite(mean):
        return None
    if runs > 1 and ci is not None and ci[0] is not None and ci[1] is not None:
        if ci[0] <= published <= ci[1]:
            return "within CI"
    if tolerance is not None and tolerance.holds(published, mean):
        return "close"
    return "differs"


# ----------------------------------------------------------------------------
# loading
# ----------------------------------------------------------------------------


def _where(path: Path, line: int | None = None) -> str:
    name = f"{path.parent.name}/{path.name}"
    return f"{name}:{line}" if line else name


def _line_of(text: str, needle: str) -> int:
    for i, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return i
    return 1


def _tolerance(raw: Any, where: str) -> Tolerance | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise PublishedDataError(f"{where}: tolerance: must be a table {{kind, amount, why}}")
    kind = raw.get("kind")
    if kind not in _TOLERANCE_KINDS:
        raise PublishedDataError(
            f"{where}: tolerance.kind: must be one of {', '.join(_TOLERANCE_KINDS)}, got {kind!r}"
        )
    amount = raw.get("amount")
    if isinstance(amount, bool) or not isinstance(amount, (int, float)) or amount <= 0:
        raise PublishedDataError(f"{where}: tolerance.amount: must be a positive number")
    if kind == "factor" and amount < 1:
        raise PublishedDataError(f"{where}: tolerance.amount: a factor must be at least 1")
    why = raw.get("why")
    if not isinstance(why, str) or not why.strip():
        raise PublishedDataError(f"{where}: tolerance.why: every tolerance states its reason")
    floor = raw.get("floor", 0.0)
    if isinstance(floor, bool) or not isinstance(floor, (int, float)) or floor < 0:
        raise PublishedDataError(f"{where}: tolerance.floor: a non-negative number")
    return Tolerance(str(kind), float(amount), why.strip(), float(floor))


def _strings(raw: Any, where: str, key: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise PublishedDataError(f"{where}: {key}: must be a list of strings")
    return tuple(raw)


#: The profiles an explanation may be limited to (``profiles`` of ``[[table.explained]]``).
PROFILES = ("full", "quick")


def _profiles(raw: Any, where: str, key: str) -> tuple[str, ...]:
    names = _strings(raw, where, key)
    for n in names:
        if n not in PROFILES:
            raise PublishedDataError(
                f"{where}: {key}: unknown profile {n!r}; expected one of {', '.join(PROFILES)}"
            )
    return names


def _table(study: str, folder: Path, raw: Mapping[str, Any], text: str) -> PublishedTable:
    decl = folder / "tables.toml"
    file = raw.get("file")
    where = _where(decl, _line_of(text, f'"{file}"') if isinstance(file, str) else None)
    for key in ("file", "number", "caption", "reproduced", "row"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise PublishedDataError(f"{where}: {key}: missing (a non-empty string)")
    key_columns = _strings(raw.get("key"), where, "key")
    if not key_columns:
        raise PublishedDataError(f"{where}: key: names the published column(s) that name a row")
    select = raw.get("select", {})
    if not isinstance(select, Mapping) or not all(isinstance(v, str) for v in select.values()):
        raise PublishedDataError(
            f"{where}: select: a table of reproduced column -> template of the CSV's columns"
        )
    rows_map = raw.get("rows", {})
    if not isinstance(rows_map, Mapping):
        raise PublishedDataError(f"{where}: rows: must be a table of published -> reproduced")
    columns = []
    for c in raw.get("columns", []):
        if not isinstance(c, Mapping) or not isinstance(c.get("published"), str):
            raise PublishedDataError(f"{where}: columns: each names its published column")
        if not isinstance(c.get("reproduced"), str):
            raise PublishedDataError(f"{where}: columns: {c['published']}: reproduced missing")
        reduce = c.get("reduce", "value")
        if reduce not in _REDUCERS:
            raise PublishedDataError(
                f"{where}: columns: {c['published']}: reduce: one of {', '.join(_REDUCERS)}"
            )
        by_row = c.get("by_row", {})
        if not isinstance(by_row, Mapping) or not all(isinstance(v, str) for v in by_row.values()):
            raise PublishedDataError(
                f"{where}: columns: {c['published']}: by_row: a table of row -> column"
            )
        scale = c.get("scale", 1.0)
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or scale == 0:
            raise PublishedDataError(f"{where}: columns: {c['published']}: scale: a number ≠ 0")
        columns.append(
            ColumnMap(
                c["published"],
                c["reproduced"],
                _tolerance(c.get("tolerance"), f"{where}: columns: {c['published']}"),
                float(scale),
                str(reduce),
                dict(by_row),
            )
        )
    if not columns:
        raise PublishedDataError(f"{where}: columns: at least one column is compared")
    explanations = []
    for e in raw.get("explained", []):
        if not isinstance(e, Mapping) or not isinstance(e.get("link"), str):
            raise PublishedDataError(f"{where}: explained: each names its README link")
        if not isinstance(e.get("cause"), str) or not e["cause"].strip():
            raise PublishedDataError(f"{where}: explained: {e['link']}: cause missing")
        explanations.append(
            Explanation(
                e["link"],
                e["cause"].strip(),
                _strings(e.get("rows"), where, "explained.rows"),
                _strings(e.get("columns"), where, "explained.columns"),
                _profiles(e.get("profiles"), where, "explained.profiles"),
            )
        )
    table = PublishedTable(
        study=study,
        number=raw["number"],
        caption=raw["caption"],
        file=raw["file"],
        reproduced=raw["reproduced"],
        columns=tuple(columns),
        cells=(),
        explanations=tuple(explanations),
        note=str(raw.get("note", "")),
        select=tuple((str(k), str(v)) for k, v in select.items()),
    )
    cells = _cells(folder / raw["file"], table, key_columns, raw["row"], rows_map)
    known_rows = {c.row for c in cells}
    for c in columns:
        for r in c.by_row:
            if r not in known_rows:
                raise PublishedDataError(
                    f"{where}: columns: {c.published}: by_row: row {r!r} is not a row of "
                    f"{raw['file']}"
                )
    for e in explanations:
        for r in e.rows:
            if r not in known_rows:
                raise PublishedDataError(
                    f"{where}: explained: {e.link}: row {r!r} is not a row of {raw['file']}"
                )
        for col in e.columns:
            if col not in {c.published for c in columns}:
                raise PublishedDataError(
                    f"{where}: explained: {e.link}: column {col!r} is not a compared column"
                )
    return PublishedTable(**{**table.__dict__, "cells": tuple(cells)})


def _cells(
    path: Path,
    table: PublishedTable,
    key_columns: Sequence[str],
    template: str,
    rows_map: Mapping[str, Any],
) -> list[PublishedCell]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PublishedDataError(f"{_where(path)}: cannot read: {exc.strerror}") from None
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if not header:
        raise PublishedDataError(f"{_where(path, 1)}: empty file (a header row is needed)")
    header = [h.strip() for h in header]
    for name in [*key_columns, *(c.published for c in table.columns)]:
        if name not in header:
            raise PublishedDataError(f"{_where(path, 1)}: {name}: no such column in the header")
    cells: list[PublishedCell] = []
    seen: dict[str, int] = {}
    for line, values in enumerate(reader, start=2):
        if not values or all(not v.strip() for v in values):
            continue
        if len(values) != len(header):
            raise PublishedDataError(
                f"{_where(path, line)}: {len(values)} fields where the header has {len(header)}"
            )
        record = dict(zip(header, (v.strip() for v in values), strict=True))
        row = " / ".join(record[k] for k in key_columns)
        if row in seen:
            raise PublishedDataError(
                f"{_where(path, line)}: row {row!r}: printed twice (first on line {seen[row]})"
            )
        seen[row] = line
        other_table = None
        if row in rows_map:
            target = rows_map[row]
            if isinstance(target, Mapping):
                other_table, target = target.get("table"), target.get("row")
            if not isinstance(target, str) or not isinstance(other_table, (str, type(None))):
                raise PublishedDataError(
                    f"{_where(path, line)}: row {row!r}: tables.toml maps it to neither a row "
                    "name nor a table {table, row}"
                )
        else:
            try:
                target = template.format(**record)
            except (KeyError, IndexError, ValueError) as exc:
                raise PublishedDataError(
                    f"{_where(path, line)}: row {row!r}: the row template {template!r} "
                    f"cannot be filled ({exc})"
                ) from None
        chosen: tuple[tuple[str, str], ...] = ()
        if table.select:
            try:
                chosen = tuple((k, v.format(**record)) for k, v in table.select)
            except (KeyError, IndexError, ValueError) as exc:
                raise PublishedDataError(
                    f"{_where(path, line)}: row {row!r}: a select template cannot be filled ({exc})"
                ) from None
        for c in table.columns:
            value, remark = parse_number(record[c.published])
            cells.append(
                PublishedCell(
                    row,
                    c.published,
                    record[c.published],
                    value,
                    remark,
                    target,
                    line,
                    other_table,
                    chosen,
                )
            )
    unused = [r for r in rows_map if r not in seen]
    if unused:
        raise PublishedDataError(
            f"{_where(path)}: rows {', '.join(map(repr, unused))} are declared in tables.toml "
            "but not printed in the file"
        )
    return cells


@dataclass(frozen=True)
class Reference:
    """A comparison against a reference column of the same table (e.g. queueing theory).

    In each of ``tables`` (reproduced table ids), the cell of ``measured`` in every row is
    compared with the cell of ``expected`` in the same row, under the same rules as a
    published value (``tolerance`` None: only ``within CI`` or ``differs``).
    """

    name: str
    tables: tuple[str, ...]
    expected: str
    measured: str
    tolerance: Tolerance | None = None
    explanations: tuple[Explanation, ...] = ()


def not_included(study: str, folder: Path | None = None) -> list[tuple[str, str]]:
    """Return the published tables a study reproduces but whose cells are not included.

    Declared as ``[[not_included]]`` with ``number`` and ``reproduced`` (the table id);
    the fidelity table lists each as "not included".
    """
    folder = folder if folder is not None else DATA_DIR / study
    decl = folder / "tables.toml"
    if not decl.is_file():
        return []
    out = []
    for entry in _read_toml(decl).get("not_included", []):
        if not isinstance(entry, Mapping) or not all(
            isinstance(entry.get(k), str) and entry[k] for k in ("number", "reproduced")
        ):
            raise PublishedDataError(f"{_where(decl)}: not_included: each names number, reproduced")
        out.append((entry["number"], entry["reproduced"]))
    return out


def load_references(study: str, folder: Path | None = None) -> list[Reference]:
    """Return the reference comparisons a study declares (``[[reference]]``)."""
    folder = folder if folder is not None else DATA_DIR / study
    decl = folder / "tables.toml"
    if not decl.is_file():
        return []
    raw = _read_toml(decl)
    out = []
    for r in raw.get("reference", []):
        where = _where(decl)
        if not isinstance(r, Mapping):
            raise PublishedDataError(f"{where}: reference: must be an array of tables")
        for key in ("name", "expected", "measured"):
            if not isinstance(r.get(key), str) or not r[key]:
                raise PublishedDataError(f"{where}: reference: {key}: missing")
        explanations = tuple(
            Explanation(
                str(e.get("link", "")),
                str(e.get("cause", "")),
                _strings(e.get("rows"), where, "explained.rows"),
                _strings(e.get("tables"), where, "explained.tables"),
                _profiles(e.get("profiles"), where, "explained.profiles"),
            )
            for e in r.get("explained", [])
        )
        out.append(
            Reference(
                r["name"],
                _strings(r.get("tables"), where, "reference.tables"),
                r["expected"],
                r["measured"],
                _tolerance(r.get("tolerance"), f"{where}: reference: {r['name']}"),
                explanations,
            )
        )
    return out


def _read_toml(decl: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(decl.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise PublishedDataError(f"{_where(decl)}: {exc}") from None
    except OSError as exc:
        raise PublishedDataError(f"{_where(decl)}: cannot read: {exc.strerror}") from None


def load(study: str, folder: Path | None = None) -> list[PublishedTable]:
    """Return the published tables of ``study`` (none when it has no published data).

    Raises :class:`PublishedDataError` naming the file, line and row of any mistake.
    """
    folder = folder if folder is not None else DATA_DIR / study
    decl = folder / "tables.toml"
    if not decl.is_file():
        return []
    text = decl.read_text(encoding="utf-8")
    raw = _read_toml(decl)
    tables = raw.get("table", [])
    if not isinstance(tables, list):
        raise PublishedDataError(f"{_where(decl)}: table: must be an array of tables")
    return [_table(study, folder, t, text) for t in tables]


# ----------------------------------------------------------------------------
# comparing
# ----------------------------------------------------------------------------


def _reduce(value: Any, how: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(float(value)) else None
    numbers = [parse_number(part)[0] for part in str(value).split("/")]
    got = [x for x in numbers if x is not None]
    if not got:
        return None
    if how == "value":
        return got[0] if len(got) == 1 else None
    if how == "first":
        return got[0]
    if how == "min":
        return min(got)
    if how == "max":
        return max(got)
    if how == "sum":
        return sum(got)
    return sum(got) / len(got)


class _Cells:
    """The records of a reproduced table by (row, column), and rows found by their cells."""

    def __init__(self, table: Table) -> None:
        self.rows = list(table.rows)
        self.by_key = {(r["row"], r["column"]): r for r in table.records}
        self._index: dict[tuple[str, ...], dict[tuple[str, ...], str]] = {}

    def cell(self, row: str, column: str) -> dict[str, Any] | None:
        return self.by_key.get((row, column))

    def select(self, select: Sequence[tuple[str, str]]) -> str | None:
        """Return the first row whose cells read as ``select`` ((column, text) pairs)."""
        columns = tuple(c for c, _ in select)
        if columns not in self._index:
            index: dict[tuple[str, ...], str] = {}
            for row in self.rows:
                values = tuple(str((self.cell(row, c) or {}).get("value")) for c in columns)
                index.setdefault(values, row)
            self._index[columns] = index
        return self._index[columns].get(tuple(t for _, t in select))


@dataclass
class _Tally:
    published: int = 0
    compared: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(VERDICTS, 0))
    explained: int = 0

    def count(self, v: str | None, explained: bool) -> None:
        """Count one compared cell's verdict (nothing when nothing was reproduced)."""
        if v is not None:
            self.compared += 1
            self.counts[v] += 1
        if v == "differs" and explained:
            self.explained += 1

    def add(self, other: _Tally) -> None:
        self.published += other.published
        self.compared += other.compared
        self.explained += other.explained
        for k in VERDICTS:
            self.counts[k] += other.counts[k]


def _annotate(
    record: dict[str, Any], published: Any, v: Any, explanation: Any, against: Any = None
) -> None:
    record["published"] = published
    record["verdict"] = v
    record["explanation"] = explanation
    record["against"] = against


def compare(
    study: str, output: StudyOutput, tables: Iterable[PublishedTable] | None = None
) -> list[Difference]:
    """Compare ``output`` with the study's published tables; return the differences.

    Every record of every table gains ``published``, ``verdict``, ``explanation`` and
    ``against`` (null where no published cell maps to it), and a ``fidelity`` table is appended when
    the study has published tables. Records already compared are compared again. A
    difference is explained by the first declaration that covers its cell in the output's
    profile (``output.profile``).
    """
    from qossim.studies import Table

    published = list(load(study) if tables is None else tables)
    references = load_references(study) if tables is None else []
    profile = output.profile
    output.tables = [t for t in output.tables if t.id != "fidelity"]
    for t in output.tables:
        for record in t.records:
            _annotate(record, None, None, None)
    if not published and not references:
        return []
    by_id = {t.id: _Cells(t) for t in output.tables}
    found: list[Difference] = []
    tallies: list[tuple[str, _Tally]] = []
    for pt in published:
        tally = _Tally()
        target = by_id.get(pt.reproduced)
        others = {c.reproduced_table for c in pt.cells if c.reproduced_table}
        if target is None and not others & set(by_id):
            continue  # not reproduced in this call (--only)
        for cell in pt.cells:
            tally.published += 1
            if cell.value is None:
                continue
            col = pt.column(cell.column)
            where = by_id.get(cell.reproduced_table) if cell.reproduced_table else target
            column = col.reproduced_for(cell.row)
            row_label = where.select(cell.select) if where and cell.select else cell.reproduced_row
            record = where.cell(row_label, column) if where and row_label else None
            if record is None:
                continue
            value = cell.value * col.scale
            mean = _reduce(record.get("value"), col.reduce)
            ci = (record.get("ci_low"), record.get("ci_high")) if col.reduce == "value" else None
            v = verdict(value, mean, ci, int(record.get("runs") or 0), col.tolerance)
            e = pt.explain(cell.row, cell.column, profile) if v == "differs" else None
            tally.count(v, e is not None)
            explanation = e.link if e else None
            if v == "differs" and mean is not None:
                found.append(Difference(pt, cell, mean, e))
            _annotate(record, value, v, explanation, pt.number)
        tallies.append((pt.label, tally))
    for ref in references:
        for tid in ref.tables:
            target = by_id.get(tid)
            if target is None:
                continue
            tally = _Tally()
            for row in target.rows:
                expected = target.cell(row, ref.expected)
                record = target.cell(row, ref.measured)
                value = _reduce(expected.get("value"), "value") if expected else None
                if record is None or value is None:
                    continue
                tally.published += 1
                mean = _reduce(record.get("value"), "value")
                ci = (record.get("ci_low"), record.get("ci_high"))
                v = verdict(value, mean, ci, int(record.get("runs") or 0), ref.tolerance)
                e = None
                if v == "differs":
                    e = next((x for x in ref.explanations if x.covers(row, tid, profile)), None)
                tally.count(v, e is not None)
                link = e.link if e else None
                if v == "differs" and mean is not None:
                    pt = PublishedTable(study, ref.name, "", "", tid, (), ())
                    cell = PublishedCell(row, ref.measured, f"{value:.6g}", value, "", row, 0)
                    found.append(Difference(pt, cell, mean, e))
                _annotate(record, value, v, link, f"{REFERENCE_PREFIX}{ref.name}")
            tallies.append((f"{ref.name} ({tid})", tally))
    fidelity = Table(
        "fidelity",
        "fidelity: reproduced cells against the published tables (verdicts)",
        row_label="published table",
    )
    total = _Tally()
    for label, tally in tallies:
        total.add(tally)
        _tally_row(fidelity, label, tally)
    if len(tallies) > 1:
        _tally_row(fidelity, "all", total)
    for number, reproduced in not_included(study) if tables is None else []:
        if reproduced in by_id:
            fidelity.add(f"{number} ({reproduced})", "published cells", "not included", runs=0)
    for record in fidelity.records:
        _annotate(record, None, None, None)
    output.tables.insert(0, fidelity)
    return found


def _tally_row(t: Table, label: str, tally: _Tally) -> None:
    t.add(label, "published cells", tally.published, runs=0)
    t.add(label, "compared", tally.compared, runs=0)
    for k in VERDICTS:
        t.add(label, k, tally.counts[k], runs=0)
    t.add(label, "differs, explained", tally.explained, runs=0)
