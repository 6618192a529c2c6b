"""Published results beside reproduced ones: declarations, verdicts, records and report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qossim.studies import (
    StudyOutput,
    Table,
    format_json,
    format_text,
    study_names,
    write_study_report,
)
from qossim.studies import published as pub

REPO = Path(__file__).resolve().parents[1]

DECLARATION = """
[[table]]
file = "t.csv"
number = "Table 9"
caption = "a synthetic table"
reproduced = "syn"
key = ["name"]
row = "row {name}"

[table.rows]
"b" = "row b (renamed)"

[[table.columns]]
published = "rate"
reproduced = "rate (Mb/s)"
tolerance = { kind = "relative", amount = 0.10, why = "a synthetic reason" }

[[table.explained]]
link = "README.md#why-c-differs"
cause = "c differs for a traced reason"
rows = ["c"]
"""

CSV = "name,rate\na,10\nb,20\nc,30\nd,40 plus a remark\n"


def _folder(tmp_path: Path, declaration: str = DECLARATION, csv: str = CSV) -> Path:
    folder = tmp_path / "syn"
    folder.mkdir(exist_ok=True)
    (folder / "tables.toml").write_text(declaration, encoding="utf-8")
    (folder / "t.csv").write_text(csv, encoding="utf-8")
    return folder


def _output() -> StudyOutput:
    t = Table("syn", "synthetic", row_label="name")
    # a: published 10 inside [9, 11]; b: 20 outside [21, 22] but within 10 %;
    # c: 30 far outside [40, 41]; d: 40 outside [50, 52], unexplained.
    t.add("row a", "rate (Mb/s)", 10.5, 9.0, 11.0, 5)
    t.add("row b (renamed)", "rate (Mb/s)", 21.5, 21.0, 22.0, 5)
    t.add("row c", "rate (Mb/s)", 40.5, 40.0, 41.0, 5)
    t.add("row d", "rate (Mb/s)", 51.0, 50.0, 52.0, 5)
    t.add("row a", "other", 1.0)
    return StudyOutput(tables=[t])


def test_verdicts_follow_the_rule(tmp_path):
    tables = pub.load("syn", _folder(tmp_path))
    out = _output()
    diffs = pub.compare("syn", out, tables)
    syn = next(t for t in out.tables if t.id == "syn")
    verdicts = {r["row"]: r["verdict"] for r in syn.records if r["column"] == "rate (Mb/s)"}
    assert verdicts == {
        "row a": "within CI",
        "row b (renamed)": "close",
        "row c": "differs",
        "row d": "differs",
    }
    assert syn.cell("row a", "other")["verdict"] is None
    assert syn.cell("row a", "other")["published"] is None
    assert syn.cell("row d", "rate (Mb/s)")["published"] == 40.0
    assert [d.cell.row for d in diffs] == ["c", "d"]
    assert diffs[0].explanation.link == "README.md#why-c-differs"
    assert diffs[1].explanation is None
    fidelity = out.tables[0]
    assert fidelity.id == "fidelity"
    row = fidelity.rows[0]
    counts = {c: fidelity.cell(row, c)["value"] for c in fidelity.columns}
    assert counts == {
        "published cells": 4,
        "compared": 4,
        "within CI": 1,
        "close": 1,
        "differs": 2,
        "differs, explained": 1,
    }


def test_published_outside_its_interval_differs_without_tolerance():
    assert pub.verdict(1.0, 1.2, (1.1, 1.3), 3, None) == "differs"
    assert pub.verdict(1.0, 1.2, (0.9, 1.3), 3, None) == "within CI"
    # one run has no interval: the published value is never "within CI"
    assert pub.verdict(1.0, 1.0, (1.0, 1.0), 1, None) == "differs"
    assert pub.verdict(1.0, None, None, 3, None) is None


@pytest.mark.parametrize(
    ("kind", "amount", "value", "expected"),
    [
        ("absolute", 1.0, 11.0, True),
        ("absolute", 1.0, 11.01, False),
        ("relative", 0.1, 9.0, True),
        ("relative", 0.1, 8.99, False),
        ("factor", 2.0, 5.0, True),
        ("factor", 2.0, 20.0, True),
        ("factor", 2.0, 4.99, False),
        ("factor", 2.0, 0.0, False),
    ],
)
def test_tolerances(kind, amount, value, expected):
    assert pub.Tolerance(kind, amount, "why").holds(10.0, value) is expected


def test_a_row_that_the_csv_does_not_print_is_an_error_naming_it(tmp_path):
    folder = _folder(tmp_path, DECLARATION.replace('"b" = ', '"zz" = '))
    with pytest.raises(pub.PublishedDataError, match=r"rows 'zz' are declared .* not printed"):
        pub.load("syn", folder)


def test_a_row_printed_twice_is_an_error_on_its_line(tmp_path):
    folder = _folder(tmp_path, csv=CSV + "a,11\n")
    with pytest.raises(pub.PublishedDataError, match=r"syn/t\.csv:6: row 'a': printed twice"):
        pub.load("syn", folder)


def test_a_short_row_and_an_unknown_column_are_errors(tmp_path):
    with pytest.raises(pub.PublishedDataError, match=r"t\.csv:3: 1 fields where the header"):
        pub.load("syn", _folder(tmp_path, csv="name,rate\na,10\nb\n"))
    with pytest.raises(pub.PublishedDataError, match=r"t\.csv:1: rate: no such column"):
        pub.load("syn", _folder(tmp_path, csv="name,speed\na,10\n"))


def test_an_explanation_of_a_row_not_printed_is_an_error(tmp_path):
    folder = _folder(tmp_path, DECLARATION.replace('rows = ["c"]', 'rows = ["q"]'))
    with pytest.raises(pub.PublishedDataError, match=r"row 'q' is not a row of t\.csv"):
        pub.load("syn", folder)


QUICK_ONLY = """
[[table.explained]]
link = "README.md#the-quick-profile"
cause = "d differs only in the quick profile's shorter runs"
profiles = ["quick"]
rows = ["d"]
"""


@pytest.mark.parametrize(
    ("profile", "explained"),
    [("full", None), ("quick", "README.md#the-quick-profile"), ("tiny", None)],
)
def test_an_explanation_limited_to_a_profile_explains_only_its_runs(tmp_path, profile, explained):
    tables = pub.load("syn", _folder(tmp_path, DECLARATION + QUICK_ONLY))
    out = _output()
    out.profile = profile
    diffs = {d.cell.row: d for d in pub.compare("syn", out, tables)}
    assert diffs["d"].explanation is not None if explained else diffs["d"].explanation is None
    if explained:
        assert diffs["d"].explanation.link == explained
    # The explanation without profiles covers c in every profile.
    assert diffs["c"].explanation.link == "README.md#why-c-differs"
    syn = next(t for t in out.tables if t.id == "syn")
    assert syn.cell("row d", "rate (Mb/s)")["explanation"] == explained


def test_an_explanation_names_known_profiles(tmp_path):
    folder = _folder(tmp_path, DECLARATION + QUICK_ONLY.replace('["quick"]', '["fast"]'))
    with pytest.raises(
        pub.PublishedDataError,
        match=r"tables\.toml(:\d+)?: explained\.profiles: unknown profile 'fast'; "
        r"expected one of full, quick",
    ):
        pub.load("syn", folder)


def _slug(heading: str) -> str:
    """The anchor a Markdown heading gets: lower case, punctuation dropped, spaces to '-'."""
    kept = "".join(ch for ch in heading.strip().lower() if ch.isalnum() or ch in " -_")
    return kept.replace(" ", "-")


def test_every_shipped_explanation_links_to_a_heading_of_its_readme():
    for folder in sorted(p for p in pub.DATA_DIR.iterdir() if p.is_dir()):
        readme = REPO / "studies" / folder.name / "README.md"
        anchors = {
            _slug(line.lstrip("#"))
            for line in readme.read_text(encoding="utf-8").splitlines()
            if line.startswith("#")
        }
        links = [e.link for t in pub.load(folder.name) for e in t.explanations]
        links += [e.link for r in pub.load_references(folder.name) for e in r.explanations]
        for link in links:
            page, _, anchor = link.partition("#")
            assert page == "README.md", f"{folder.name}: {link}: not the study's README"
            assert anchor in anchors, f"{folder.name}: {link}: no such heading in {readme.name}"


def test_a_tolerance_states_its_reason(tmp_path):
    folder = _folder(tmp_path, DECLARATION.replace(', why = "a synthetic reason"', ""))
    with pytest.raises(pub.PublishedDataError, match=r"tolerance\.why"):
        pub.load("syn", folder)


def test_parse_number_keeps_the_remark():
    assert pub.parse_number("9000 plus other traffic") == (9000.0, "plus other traffic")
    assert pub.parse_number(".238") == (0.238, "")
    assert pub.parse_number("-14.4") == (-14.4, "")
    assert pub.parse_number("n/a") == (None, "n/a")


def test_records_text_and_report_carry_the_comparison(tmp_path):
    tables = pub.load("syn", _folder(tmp_path))
    out = _output()
    out.differences = pub.compare("syn", out, tables)
    records = [json.loads(line) for line in format_json(out).splitlines()]
    assert all({"published", "verdict", "explanation", "against"} <= set(r) for r in records)
    assert {r["table"] for r in records} == {"fidelity", "syn"}
    text = format_text(out)
    assert "rate (Mb/s) · published" in text
    assert "Table 9, d: rate 40 plus a remark → 51 — not explained yet" in text

    class Module:
        TITLE = "synthetic"

    page = write_study_report("syn", Module, out, tmp_path / "report").read_text()  # type: ignore[arg-type]
    opening = page.index("Against the published results")
    assert opening < page.index('<h2 id="t-0">')
    assert 'class="num within"' not in page  # cells are text, coloured by class
    assert 'class="within"' in page and 'class="close"' in page and 'class="differs"' in page
    assert "c differs for a traced reason" in page


def test_every_shipped_declaration_loads_and_names_a_study():
    names = set(study_names())
    folders = sorted(p for p in pub.DATA_DIR.iterdir() if p.is_dir())
    assert folders, "no published data shipped"
    for folder in folders:
        assert folder.name in names, f"{folder.name}: published data of no registered study"
        assert pub.load(folder.name) or pub.load_references(folder.name)
        link = REPO / "studies" / folder.name / "published"
        assert link.resolve() == folder.resolve(), f"{link} does not show {folder}"


def test_rows_found_by_their_cells_and_columns_chosen_by_row(tmp_path):
    """`select` finds a numbered reproduced row by its cells; `by_row` picks its column."""
    folder = tmp_path / "sel"
    folder.mkdir()
    (folder / "t.csv").write_text("where,what,x\nA,up,1\nB,down,2\n", encoding="utf-8")
    (folder / "tables.toml").write_text(
        """
[[table]]
file = "t.csv"
number = "Table 2"
caption = "c"
reproduced = "num"
key = ["where", "what"]
row = "{where}"
[table.select]
"place" = "{where}"
"direction" = "{what}"
[[table.columns]]
published = "x"
reproduced = "x"
[table.columns.by_row]
"B / down" = "x steady"
""",
        encoding="utf-8",
    )
    t = Table("num", "numbered rows", row_label="#")
    for n, (place, direction, x, steady) in enumerate(
        [("B", "down", 9.0, 2.0), ("A", "up", 1.0, 7.0)], start=1
    ):
        t.add(str(n), "place", place, runs=0)
        t.add(str(n), "direction", direction, runs=0)
        t.add(str(n), "x", x, x - 0.5, x + 0.5, 3)
        t.add(str(n), "x steady", steady, steady - 0.5, steady + 0.5, 3)
    out = StudyOutput(tables=[t])
    assert pub.compare("sel", out, pub.load("sel", folder)) == []
    assert t.cell("2", "x")["verdict"] == "within CI"
    assert t.cell("1", "x steady")["verdict"] == "within CI"
    assert t.cell("1", "x")["verdict"] is None
    bad = (folder / "tables.toml").read_text().replace('"B / down" =', '"C / side" =')
    (folder / "tables.toml").write_text(bad, encoding="utf-8")
    with pytest.raises(pub.PublishedDataError, match="by_row: row 'C / side' is not a row"):
        pub.load("sel", folder)


def test_published_points_are_marked_on_a_figure():
    from qossim.studies.frame import mark_published, new_figure, published_cells

    cells = published_cells("assured-service", "Table 1", "measured rate (Mb/s)")
    assert len(cells) == 22 and cells[0].value == 1.32
    assert published_cells("assured-service", "Table 99") == []
    fig, (ax,) = new_figure()
    mark_published(ax, [2.0, 1.0], [c.value for c in cells[:2]])
    handles, labels = ax.get_legend_handles_labels()
    assert labels == ["published"]
    assert list(handles[0].get_offsets()[:, 1]) == [1.32, 1.27]


def test_a_floor_makes_values_near_zero_close():
    t = pub.Tolerance("factor", 2.0, "why", floor=20.0)
    assert t.holds(2.0, 0.0) and t.holds(15.0, 0.0) and t.holds(50.0, 30.0)
    assert not t.holds(50.0, 1247.0) and not t.holds(2.0, 23.0)
    assert t.describe() == "×/÷ 2 (or ±20)"
