"""The qossim command: outputs and exit codes."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from qossim.cli import main
from qossim.results import Result, is_result_dir

pytestmark = pytest.mark.usefixtures("fake_engine")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def test_validate_ok(scenario_file, capsys):
    """A valid scenario prints FILE: ok and exits 0."""
    assert main(["validate", str(scenario_file)]) == 0
    assert capsys.readouterr().out == f"{scenario_file}: ok\n"


def test_validate_reports_every_problem(scenario_file, capsys):
    """Every diagnostic goes to stderr, one per line, with exit status 2."""
    code = main(
        [
            "validate",
            str(scenario_file),
            "--set",
            "traffic.0.flows=-1",
            "--set",
            "run.duration=soon",
        ]
    )
    captured = capsys.readouterr()
    assert code == 2
    # The engine names an override by its place among the --set options.
    assert captured.err.splitlines() == [
        "--set:1: traffic.0.flows: must not be negative, got -1",
        '--set:2: run.duration: expected a time such as "20ms" or "1.5s", got "soon"',
    ]
    assert captured.out == ""


def test_unreadable_file(tmp_path, capsys):
    """A missing file is one line naming it, exit status 2."""
    for command in (["validate"], ["run"], ["sweep"], ["show"], ["report"]):
        code = main([*command, "missing.toml"])
        err = capsys.readouterr().err
        assert code == 2, command
        assert "missing.toml" in err and "Traceback" not in err
        assert len(err.splitlines()) == 1


def test_bad_set_syntax(scenario_file, capsys):
    """--set without '=' is a usage problem, exit 2."""
    assert main(["run", str(scenario_file), "--set", "traffic.0.flows"]) == 2
    assert capsys.readouterr().err == "--set traffic.0.flows: expected KEY.PATH=VALUE\n"


def test_run_writes_default_directory(scenario_file, tmp_path, capsys):
    """run stores runs/<stem>-<hash8>-s<seed> and prints summary and location."""
    assert main(["run", str(scenario_file), "--seed", "3", "--quiet"]) == 0
    out = capsys.readouterr().out
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert run_dir.name.startswith("scenario-") and run_dir.name.endswith("-s3")
    assert len(run_dir.name.split("-")[1]) == 8
    assert is_result_dir(run_dir)
    assert "link.a-b.throughput_bps" in out
    assert out.rstrip().endswith(f"run directory: runs/{run_dir.name}")
    assert Result.load(run_dir).manifest["run_key"].startswith(run_dir.name.split("-")[1])


def test_run_bad_scenario_writes_nothing(scenario_file, tmp_path, capsys):
    """An invalid scenario exits 2 and leaves no directory behind."""
    assert main(["run", str(scenario_file), "--set", "traffic.0.flows=-1", "--out", "x"]) == 2
    assert "traffic.0.flows" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    assert not (tmp_path / "runs").exists()


def test_run_refuses_to_overwrite_other_data(scenario_file, tmp_path, capsys):
    """--out pointing at a directory that is not a run is refused."""
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "precious.txt").write_text("keep")
    assert main(["run", str(scenario_file), "--out", "mine"]) == 2
    assert "not a run directory" in capsys.readouterr().err
    assert (tmp_path / "mine" / "precious.txt").read_text() == "keep"


def test_show(scenario_file, capsys):
    """show prints manifest, summary and series names."""
    main(["run", str(scenario_file), "--seed", "2", "--out", "r", "--quiet"])
    capsys.readouterr()
    assert main(["show", "r"]) == 0
    out = capsys.readouterr().out
    assert "manifest:" in out and "summary:" in out and "series:" in out
    assert "a-b.queue: 10 rows; columns: t, value" in out
    assert main(["show", "."]) == 2
    assert "not a qossim run directory" in capsys.readouterr().err


def test_sweep(campaign_file, tmp_path, capsys):
    """sweep prints a short account by default and the whole table with --full."""
    assert main(["sweep", str(campaign_file), "--jobs", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "campaign demo: 2 points x 3 seeds = 6 runs: 6 executed, 0 already stored" in out
    assert "ci_low" not in out and "metrics = [...]" in out
    assert "results: runs/demo" in out
    assert len(out.splitlines()) == 4
    assert (tmp_path / "runs" / "demo" / "summary.csv").is_file()
    assert main(["sweep", str(campaign_file), "--jobs", "1", "--quiet", "--full"]) == 0
    out = capsys.readouterr().out
    assert "6 runs: 0 executed, 6 already stored" in out
    assert "metric" in out and "ci_low" in out
    rows = pd.read_csv(tmp_path / "runs" / "demo" / "summary.csv")
    assert len(out.splitlines()) > len(rows)


def test_sweep_named_metrics(tmp_path, make_campaign, capsys):
    """metrics = [...] prints one row per point with mean ± half-width of each metric."""
    path = make_campaign(tmp_path)
    text = path.read_text().replace(
        "seeds =", 'metrics = ["link.*.utilization", "nosuch"]\nseeds ='
    )
    path.write_text(text)
    assert main(["sweep", str(path), "--jobs", "1", "--quiet"]) == 0
    captured = capsys.readouterr()
    rows = pd.read_csv(tmp_path / "runs" / "demo" / "summary.csv")
    metrics = dict.fromkeys(rows["metric"])
    chosen = [m for m in metrics if m.startswith("link.") and m.endswith(".utilization")]
    assert chosen, "the stand-in engine reports link utilizations"
    lines = captured.out.splitlines()
    header = next(line for line in lines if "traffic.0.flows" in line)
    assert header.split() == ["traffic.0.flows", *chosen]
    body = lines[lines.index(header) + 1 : lines.index(header) + 3]
    for flows, line in zip((5, 9), body, strict=True):
        cells = line.split()
        assert cells[0] == str(flows)
        mean = rows[(rows["traffic.0.flows"] == flows) & (rows["metric"] == chosen[0])]["mean"]
        assert float(cells[1]) == pytest.approx(float(mean.iloc[0]), rel=1e-3)
        assert cells[2] == "±"
    assert captured.err.splitlines() == [
        f"{path}: campaign.metrics: 'nosuch' matches no metric the runs report "
        "(qossim show RUN_DIR lists them)"
    ]
    bad = make_campaign(tmp_path, extra="")
    bad.write_text(bad.read_text().replace("seeds =", "metrics = 3\nseeds ="))
    assert main(["sweep", str(bad), "--quiet"]) == 2
    assert "campaign.metrics: must be a list of metric names" in capsys.readouterr().err


def test_sweep_errors(tmp_path, make_campaign, capsys):
    """A bad campaign or a bad grid value exits 2 with one line per problem."""
    bad = tmp_path / "bad.toml"
    bad.write_text("[campaign]\nseeds = -1\n")
    assert main(["sweep", str(bad)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 2 and all(
        line.startswith(str(bad)) for line in err.splitlines()
    )
    path = make_campaign(tmp_path, grid='"traffic.0.flows" = [-1, -2]')
    assert main(["sweep", str(path), "--out", "o", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 2 and "Traceback" not in err
    assert not any((tmp_path / "o" / "runs").glob("*")) if (tmp_path / "o").exists() else True


def test_report_needs_a_result(tmp_path, capsys):
    """report on an arbitrary directory is refused."""
    (tmp_path / "d").mkdir()
    assert main(["report", "d"]) == 2
    assert "neither a run directory" in capsys.readouterr().err


def test_unknown_study(capsys):
    """An unknown study exits 2 naming it."""
    assert main(["reproduce", "nosuchstudy"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("nosuchstudy: unknown study (registered: validation")


def test_version(capsys):
    """--version prints the package and engine versions."""
    assert main(["--version"]) == 0
    assert "engine 0.0.0+fake" in capsys.readouterr().out


def test_no_command_shows_help(capsys):
    """No sub-command prints usage and exits 2."""
    assert main([]) == 2
    assert "usage" in capsys.readouterr().err


@pytest.mark.subprocess
def test_real_process_exit_codes(scenario_file, tmp_path, cli):
    """The command run as a process: exit codes and no traceback."""
    ok = cli("validate", str(scenario_file), cwd=tmp_path)
    assert ok.returncode == 0 and ok.stdout == f"{scenario_file}: ok\n"
    bad = cli("validate", str(scenario_file), "--set", "traffic.0.flows=-1", cwd=tmp_path)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    missing = cli("run", "nope.toml", cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr == "nope.toml: cannot read: No such file or directory\n"
    run = cli("run", str(scenario_file), "--seed", "1", "--out", "r", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    shown = cli("show", "r", cwd=tmp_path)
    assert shown.returncode == 0 and "seed" in shown.stdout
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["seed"] == 1


def test_a_campaign_given_to_validate_or_run_is_named_as_one(campaign_file, capsys):
    """One line that says what the file is and which command takes it."""
    for command in ("validate", "run"):
        assert main([command, str(campaign_file)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [
            f"{campaign_file}:1: campaign: this is a campaign file, not a scenario; "
            f"run it with `qossim sweep {campaign_file}`"
        ]


def test_a_scenario_given_to_sweep_is_named_as_one(scenario_file, capsys):
    assert main(["sweep", str(scenario_file)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"{scenario_file}: this is a scenario file, not a campaign")
    assert f"`qossim run {scenario_file}`" in err[0]


def test_a_misspelt_study_name_gets_the_closest(capsys):
    assert main(["reproduce", "pnc"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pnc: unknown study (did you mean 'pcn'?)")


def test_reproduce_help_lists_every_study_and_its_experiments(capsys):
    from qossim import studies

    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    out = capsys.readouterr().out
    for name in studies.study_names():
        assert f"\n  {name}" in out
        ids = " ".join(str(e) for e in studies.get_study(name).EXPERIMENTS)
        assert ids in out


def test_sweep_dry_run_lists_points_and_runs_nothing(campaign_file, tmp_path, capsys, fake_engine):
    out = tmp_path / "dry"
    assert main(["sweep", str(campaign_file), "--dry-run", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "2 points x 3 seeds = 6 runs (0 already stored" in text
    assert "traffic.0.flows=5" in text and "traffic.0.flows=9" in text
    assert not fake_engine.runs
    assert not out.exists()


def test_show_a_campaign_directory_and_filter_its_metrics(campaign_file, tmp_path, capsys):
    out = tmp_path / "camp"
    assert main(["sweep", str(campaign_file), "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["show", str(out), "--metric", "link.a-b.*"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"campaign: {out} (6 runs; parameters: traffic.0.flows)")
    assert "point: traffic.0.flows=5" in text
    assert "link.a-b.throughput_bps" in text and "group." not in text
    assert main(["show", str(out), "--metric", "link.a-b.throughput_bps", "--format", "csv"]) == 0
    csv_lines = capsys.readouterr().out.splitlines()
    assert csv_lines[0] == "traffic.0.flows,metric,mean,ci_low,ci_high,runs"
    assert len(csv_lines) == 3


def test_show_a_run_as_json_with_a_filter(scenario_file, tmp_path, capsys):
    out = tmp_path / "r"
    assert main(["run", str(scenario_file), "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["show", str(out), "--metric", "link.a-b.*", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data and all(k.startswith("link.a-b.") for k in data)
