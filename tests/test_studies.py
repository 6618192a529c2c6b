"""The reproduce frame, its output formats and the validation study's plumbing."""

from __future__ import annotations

import json
import types

import pytest

from conftest import SCENARIO
from qossim import _toml, studies
from qossim.cli import main
from qossim.stats import mean_ci
from qossim.studies import StudyOutput, Table, format_json, format_text, validation
from qossim.studies.frame import apply_overrides

pytestmark = pytest.mark.usefixtures("fake_engine")


def _toy_study():
    """A study that runs the stand-in scenario at two loads (5 and 9 flows)."""
    module = types.ModuleType("toy_study")
    module.EXPERIMENTS = ["load", "extra"]
    module.TITLE = "Toy study"
    calls = []

    def reproduce(quick, only, out_dir, progress):
        calls.append((quick, only, out_dir, progress))
        seeds = [1, 2] if quick else [1, 2, 3]
        points = []
        for load in (0.5, 0.9):
            scenario = _toml.loads(SCENARIO)
            apply_overrides(scenario, [("run.duration", "1s"), ("traffic.0.flows", int(10 * load))])
            points.append(({"load": load}, scenario))
        df = studies.run_points(points, seeds, out_dir, progress=progress, name="toy")
        table = Table("throughput", "Throughput (Mbit/s)", row_label="load")
        for load in (0.5, 0.9):
            values = df[df["load"] == load]["group.voice.throughput_bps"] / 1e6
            table.add_ci(f"{load:.1f}", "measured", mean_ci(values))
            # 100 packets/s of 200 B per flow.
            table.add(f"{load:.1f}", "nominal", int(10 * load) * 0.16, runs=0)
        output = StudyOutput(tables=[table], notes=["toy note"])
        if quick:
            output.notes.append("--quick: 2 seeds instead of 3")
        return output

    module.reproduce = reproduce
    return module, calls


@pytest.fixture
def toy(monkeypatch):
    """Register the toy study for one test."""
    module, calls = _toy_study()
    monkeypatch.setitem(studies._REGISTRY, "toy", module)
    return calls


def test_registry():
    """validation is registered by default and has experiments."""
    assert "validation" in studies.study_names()
    module = studies.get_study("validation")
    assert module.EXPERIMENTS == ["mm1", "md1", "erlang_b"]
    with pytest.raises(studies.StudyError, match="unknown study"):
        studies.get_study("nope")


def test_register_study_by_name(monkeypatch):
    """A study can be registered by dotted module name and is imported lazily."""
    monkeypatch.setattr(studies, "_REGISTRY", dict(studies._REGISTRY))
    studies.register_study("again", "qossim.studies.validation")
    assert studies.get_study("again") is validation


def test_text_format():
    """Aligned table, ± half-width when runs > 1, runs column, notes."""
    table = Table("t", "Title", row_label="load")
    table.add("0.5", "theory", 2.0, runs=0)
    table.add_ci("0.5", "measured", mean_ci([1.9, 2.0, 2.1]))
    table.add("0.9", "theory", 10.0, runs=0)
    table.add("0.9", "measured", 9.5, runs=1)
    text = format_text(StudyOutput(tables=[table], notes=["a note"]), "s")
    lines = text.splitlines()
    assert lines[0] == "s: Title"
    assert lines[2].split() == ["load", "theory", "measured", "runs"]
    assert lines[3].split() == ["0.5", "2", "2", "±", "0.25", "3"]
    assert lines[4].split() == ["0.9", "10", "9.5", "1"]
    assert len({len(line) for line in lines[2:5]}) <= 2  # aligned columns
    assert "  - a note" in text


def test_json_format_is_json_lines():
    """One JSON object per line; NaN becomes null."""
    table = Table("t", "Title")
    table.add_ci("r", "c", mean_ci([1.0]))
    table.add("r", "d", 3, 2.5, 3.5, 4)
    lines = format_json(StudyOutput(tables=[table])).splitlines()
    records = [json.loads(line) for line in lines]
    assert records[0] == {
        "table": "t",
        "row": "r",
        "column": "c",
        "value": 1.0,
        "ci_low": None,
        "ci_high": None,
        "runs": 1,
    }
    assert records[1]["ci_low"] == 2.5 and records[1]["runs"] == 4


def test_reproduce_text(toy, tmp_path, monkeypatch, capsys):
    """reproduce STUDY prints tables, writes the report and says where it is."""
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "toy", "--quick", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "toy: Throughput (Mbit/s)" in out
    assert "±" in out
    assert "--quick: 2 seeds instead of 3" in out
    assert out.rstrip().endswith("report: reports/toy/index.html")
    report = (tmp_path / "reports" / "toy" / "index.html").read_text()
    assert "Toy study" in report and "https://" not in report and "http://" not in report
    assert toy[0][0] is True and toy[0][1] is None


def test_reproduce_json_and_only(toy, tmp_path, capsys):
    """--format json prints only records on stdout; the report path goes to stderr."""
    out_dir = tmp_path / "custom"
    assert (
        main(
            [
                "reproduce",
                "toy",
                "--only",
                "load",
                "--format",
                "json",
                "--out",
                str(out_dir),
                "--quiet",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    records = [json.loads(line) for line in captured.out.splitlines()]
    assert {r["column"] for r in records} == {"measured", "nominal"}
    assert {r["row"] for r in records} == {"0.5", "0.9"}
    assert captured.err.strip() == f"report: {out_dir / 'index.html'}"
    assert toy[0][1] == ["load"]


def test_reproduce_reuses_cached_runs(toy, tmp_path, fake_engine):
    """A second reproduce runs nothing new."""
    assert (
        main(["reproduce", "toy", "--quick", "--quiet", "--jobs", "1", "--out", str(tmp_path)]) == 0
    )
    count = len(fake_engine.runs)
    assert count == 4
    assert (
        main(["reproduce", "toy", "--quick", "--quiet", "--jobs", "1", "--out", str(tmp_path)]) == 0
    )
    assert len(fake_engine.runs) == count


def test_only_never_replaces_a_fuller_report(toy, tmp_path, monkeypatch, capsys, fake_engine):
    """--only writes its own report beside the full one and reuses the full one's runs."""
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "toy", "--quick", "--quiet", "--jobs", "1"]) == 0
    full = tmp_path / "reports" / "toy" / "index.html"
    before = full.read_bytes()
    runs = len(fake_engine.runs)
    capsys.readouterr()
    assert main(["reproduce", "toy", "--only", "load", "--quick", "--quiet", "--jobs", "1"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("report: reports/toy/only-load/index.html")
    assert full.read_bytes() == before
    assert (tmp_path / "reports" / "toy" / "only-load" / "index.html").is_file()
    assert len(fake_engine.runs) == runs, "the partial reproduction ran stored runs again"
    record = json.loads((tmp_path / "reports" / "toy" / "report.json").read_text())
    assert record == {"study": "toy", "experiments": ["load", "extra"], "quick": True}
    # An explicit --out holding a fuller report is not replaced either ...
    custom = tmp_path / "custom"
    assert main(["reproduce", "toy", "--quick", "--quiet", "--out", str(custom)]) == 0
    assert (
        main(["reproduce", "toy", "--only", "load", "--quick", "--quiet", "--out", str(custom)])
        == 0
    )
    assert (custom / "only-load" / "index.html").is_file()
    assert json.loads((custom / "report.json").read_text())["experiments"] == ["load", "extra"]
    # ... while one holding the same experiments (or nothing) is written in place.
    assert (
        main(
            ["reproduce", "toy", "--only", "load", "--quick", "--quiet", "--out", str(custom / "p")]
        )
        == 0
    )
    assert (
        main(
            ["reproduce", "toy", "--only", "load", "--quick", "--quiet", "--out", str(custom / "p")]
        )
        == 0
    )
    assert (custom / "p" / "index.html").is_file() and not (custom / "p" / "only-load").exists()


def test_unknown_experiment(toy, capsys):
    """--only with an id the study does not have exits 2 naming it."""
    assert main(["reproduce", "toy", "--only", "nope"]) == 2
    assert capsys.readouterr().err == "toy: unknown experiment 'nope' (known: load, extra)\n"


def test_only_across_all_studies(toy, monkeypatch, tmp_path, capsys):
    """Without STUDY, --only picks the studies that have the ids."""
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", "--only", "nowhere"]) == 2
    assert "no registered study has experiment 'nowhere'" in capsys.readouterr().err
    assert main(["reproduce", "--only", "load", "--quick", "--quiet"]) == 0
    assert (tmp_path / "reports" / "toy" / "only-load" / "index.html").is_file()
    assert not (tmp_path / "reports" / "validation").exists()


def test_validation_study_plumbing(monkeypatch, tmp_path):
    """The validation study's pipeline, with stand-in scenarios and metric readers.

    This checks tables, layout and figures only; the numbers are the stand-in
    engine's and say nothing about queueing theory.
    """

    def body(*args):
        scenario = _toml.loads(SCENARIO)
        scenario["fake"] = {"a": args}
        return scenario

    monkeypatch.setattr(validation, "mm1_body", body)
    monkeypatch.setattr(validation, "md1_body", body)
    monkeypatch.setattr(validation, "erlang_loss_body", body)
    monkeypatch.setattr(
        validation,
        "measured_queue",
        lambda row: {
            "sojourn_s": row["group.voice.delay_mean_s"],
            "wait_s": row["group.voice.delay_mean_s"],
            "number": row["link.a-b.queue_mean_pkts"],
        },
    )
    monkeypatch.setattr(validation, "measured_blocking", lambda row: row["link.a-b.utilization"])
    output = validation.reproduce(quick=True, only=None, out_dir=tmp_path, progress=False)
    ids = [t.id for t in output.tables]
    assert ids == ["mm1_sojourn", "mm1_number", "md1_wait", "erlang_b_blocking"]
    sojourn = output.tables[0]
    assert sojourn.rows == ["0.50", "0.80"]
    assert sojourn.columns == ["theory", "measured", "rel. error", "theory in CI"]
    # The exact M/G/1 value for geometric sizes: 1/(mu - lam) less rho / 2000.
    assert sojourn.cell("0.50", "theory")["value"] == pytest.approx(1 / 500 * (1 - 0.5 / 2000))
    assert sojourn.cell("0.50", "measured")["runs"] == 3
    assert len(output.figures) == 4 and all(p.is_file() for _, p in output.figures)
    assert any(note.startswith("--quick:") for note in output.notes)
