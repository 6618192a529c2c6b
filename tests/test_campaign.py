"""Campaigns: parsing, expansion, caching, resuming, gathering, summarising."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from qossim.campaign import Campaign, gather, run_campaign, summarize
from qossim.errors import CampaignError, CampaignRunError, QossimError
from qossim.results import is_result_dir, verify_run_dir
from qossim.stats import mean_ci

pytestmark = pytest.mark.usefixtures("fake_engine")


def test_load_campaign(campaign_file):
    """The campaign file gives name, scenario text, seeds and grid."""
    spec = Campaign.load(campaign_file)
    assert spec.name == "demo"
    assert spec.seeds == [1, 2, 3]
    assert spec.grid == {"traffic.0.flows": [5, 9]}
    assert spec.scenario_text == (campaign_file.parent / "scenario.toml").read_text()
    assert spec.points() == [{"traffic.0.flows": 5}, {"traffic.0.flows": 9}]


def test_seed_count_and_nested_grid(tmp_path, make_campaign):
    """seeds = N means 1..N; unquoted dotted keys are flattened."""
    path = make_campaign(
        tmp_path,
        seeds="4",
        grid="traffic.0.flows = [1, 2]\nfake.tag = ['a', 'b', 'c']",
        extra='\n[set]\n"run.duration" = "5s"\n',
    )
    spec = Campaign.load(path)
    assert spec.seeds == [1, 2, 3, 4]
    assert spec.grid == {"traffic.0.flows": [1, 2], "fake.tag": ["a", "b", "c"]}
    assert spec.fixed == {"run.duration": "5s"}
    jobs = spec.jobs(tmp_path / "out")
    assert len(jobs) == 2 * 3 * 4
    assert len({j.key for j in jobs}) == len(jobs)
    assert jobs[0].overrides == (
        ("run.duration", "5s"),
        ("traffic.0.flows", "1"),
        ("fake.tag", "a"),
    )
    assert [j.key for j in jobs] == [j.key for j in spec.jobs(tmp_path / "elsewhere")]


def test_campaign_file_errors_are_all_listed(tmp_path):
    """Every problem of a campaign file is reported, naming the file."""
    path = tmp_path / "bad.toml"
    path.write_text(
        '[campaign]\nscenario = "missing.toml"\nseeds = 0\ncolour = "red"\n'
        '[grid]\n"a.b" = []\n[set]\n"a.b" = 1\n[extra]\n'
    )
    with pytest.raises(CampaignError) as info:
        Campaign.load(path)
    text = "\n".join(info.value.lines)
    assert all(line.startswith(str(path)) for line in info.value.lines)
    for fragment in (
        "extra: unknown table",
        "campaign.colour: unknown key",
        "campaign.scenario: cannot read",
        "campaign.seeds",
        "grid.a.b: must be a non-empty list",
        "a.b: set in both [grid] and [set]",
    ):
        assert fragment in text


def test_campaign_toml_syntax_error(tmp_path):
    """A TOML syntax error names the file and line."""
    path = tmp_path / "broken.toml"
    path.write_text('[campaign]\nname = "x"\nseeds = [1,\n')
    with pytest.raises(CampaignError, match=r"broken.toml:\d+:"):
        Campaign.load(path)


def test_run_campaign_table(campaign_file, tmp_path):
    """One row per run: parameters, seed, scalar metrics, run key."""
    table = run_campaign(campaign_file, jobs=1, progress=False, out=tmp_path / "out")
    assert len(table) == 6
    assert list(table.columns[:2]) == ["traffic.0.flows", "seed"]
    assert table.columns[-1] == "run_key"
    assert {
        "link.a-b.throughput_bps",
        "group.voice.delay_mean_s",
        "series.a-b.queue.mean",
        "events",
    } <= set(table.columns)
    assert table["seed"].tolist() == [1, 2, 3, 1, 2, 3]
    assert table["traffic.0.flows"].tolist() == [5, 5, 5, 9, 9, 9]
    assert table.attrs["counts"] == {"total": 6, "cached": 0, "done": 6}
    assert (tmp_path / "out" / "runs.csv").is_file()
    assert (tmp_path / "out" / "summary.csv").is_file()
    pd.testing.assert_frame_equal(gather(tmp_path / "out"), table, check_like=False)


def test_rerun_executes_nothing(campaign_file, tmp_path, fake_engine):
    """A finished campaign run again is served from the cache."""
    out = tmp_path / "out"
    first = run_campaign(campaign_file, jobs=1, progress=False, out=out)
    assert len(fake_engine.runs) == 6
    second = run_campaign(campaign_file, jobs=1, progress=False, out=out)
    assert len(fake_engine.runs) == 6
    assert second.attrs["counts"] == {"total": 6, "cached": 6, "done": 0}
    pd.testing.assert_frame_equal(first, second)


def test_only_missing_runs_execute(campaign_file, tmp_path, fake_engine):
    """Removed runs and stale temporary directories: only the missing run executes."""
    out = tmp_path / "out"
    table = run_campaign(campaign_file, jobs=1, progress=False, out=out)
    victim = out / "runs" / table["run_key"][4]
    shutil.copytree(victim, victim.with_name(victim.name + ".tmp-deadbeef"))
    shutil.rmtree(victim)
    fake_engine.runs.clear()
    again = run_campaign(campaign_file, jobs=1, progress=False, out=out)
    assert fake_engine.runs == [(2, [("traffic.0.flows", "9")])]
    assert again.attrs["counts"]["done"] == 1
    assert sorted(p.name for p in (out / "runs").iterdir()) == sorted(table["run_key"])
    pd.testing.assert_frame_equal(table, again)


def test_growing_the_grid_reuses_runs(tmp_path, make_campaign, fake_engine):
    """Adding a grid value or a seed runs only the new combinations."""
    out = tmp_path / "out"
    run_campaign(make_campaign(tmp_path, seeds="2"), jobs=1, progress=False, out=out)
    assert len(fake_engine.runs) == 4
    path = make_campaign(tmp_path, seeds="3", grid='"traffic.0.flows" = [5, 9, 7]')
    table = run_campaign(path, jobs=1, progress=False, out=out)
    assert len(fake_engine.runs) == 4 + 5
    assert len(table) == 9
    assert len(gather(out)) == 9


def test_invalid_grid_point_stops_before_running(tmp_path, make_campaign, fake_engine):
    """A grid value the scenario rejects fails validation; nothing runs."""
    path = make_campaign(tmp_path, grid='"traffic.0.flows" = [5, -1]')
    out = tmp_path / "out"
    with pytest.raises(CampaignError) as info:
        run_campaign(path, jobs=1, progress=False, out=out)
    # A value that came from the grid is blamed on the campaign file's line giving it.
    lines = Path(path).read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if text.startswith('"traffic.0.flows"'))
    assert info.value.lines == [f"{path}:{line}: traffic.0.flows: must not be negative, got -1"]
    assert fake_engine.runs == []
    assert not (out / "runs").exists() or not any((out / "runs").iterdir())


def test_failed_runs_are_reported_and_others_kept(tmp_path, make_campaign):
    """Runs that fail are listed; the successful ones are stored."""
    path = make_campaign(tmp_path, grid='"fake.fail" = ["", "engine exploded"]\n')
    out = tmp_path / "out"
    with pytest.raises(CampaignRunError) as info:
        run_campaign(path, jobs=1, progress=False, out=out)
    assert info.value.lines[0] == "3 of 6 runs failed (finished runs are kept):"
    assert all("engine exploded" in line for line in info.value.lines[1:])
    assert sum(is_result_dir(p) for p in (out / "runs").iterdir()) == 3


def test_lock_prevents_two_campaigns_in_one_directory(campaign_file, tmp_path):
    """A second campaign in a directory in use is refused."""
    import fcntl

    out = tmp_path / "out"
    out.mkdir()
    with open(out / ".lock", "a+") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        with pytest.raises(CampaignError, match="another campaign is running"):
            run_campaign(campaign_file, jobs=1, progress=False, out=out)


def test_gather_ignores_incomplete_directories(campaign_file, tmp_path):
    """Temporary and manifest-less directories are never read as runs."""
    out = tmp_path / "out"
    table = run_campaign(campaign_file, jobs=1, progress=False, out=out)
    (out / "runs" / "abc.tmp-123").mkdir()
    (out / "runs" / "no-manifest").mkdir()
    assert len(gather(out, all_runs=True)) == len(table)
    assert len(gather(out)) == len(table)


def test_summarize_values(campaign_file, tmp_path):
    """Per grid point: mean, Student-t CI and run count of every numeric metric."""
    table = run_campaign(campaign_file, jobs=1, progress=False, out=tmp_path / "out")
    summary = summarize(table)
    assert list(summary.columns) == [
        "traffic.0.flows",
        "metric",
        "mean",
        "ci_low",
        "ci_high",
        "runs",
    ]
    metric = "group.voice.delay_mean_s"
    row = summary[(summary["traffic.0.flows"] == 9) & (summary["metric"] == metric)]
    expected = mean_ci(table[table["traffic.0.flows"] == 9][metric])
    assert row["mean"].item() == pytest.approx(expected.mean)
    assert row["ci_low"].item() == pytest.approx(expected.low)
    assert row["ci_high"].item() == pytest.approx(expected.high)
    assert row["runs"].item() == 3


def test_summarize_without_grid_and_single_run():
    """No parameters: one group; one run: NaN interval."""
    frame = pd.DataFrame({"seed": [1], "x": [2.0], "run_key": ["k"]})
    summary = summarize(frame)
    assert summary["mean"].tolist() == [2.0]
    assert math.isnan(summary["ci_low"].item())
    assert summary["runs"].tolist() == [1]


def test_local_process_pool(campaign_file, tmp_path, fake_engine):
    """jobs=2 runs in worker processes (the stand-in reaches them by environment)."""
    table = run_campaign(campaign_file, jobs=2, progress=False, out=tmp_path / "pool")
    serial = run_campaign(campaign_file, jobs=1, progress=False, out=tmp_path / "serial")
    assert fake_engine.runs and len(fake_engine.runs) == 6  # only the serial ones here
    pd.testing.assert_frame_equal(table, serial)


def test_worker_with_other_version_refuses(campaign_file, tmp_path):
    """A job keyed for another engine version fails instead of storing a wrong result."""
    from qossim.campaign import execute_job

    job = Campaign.load(campaign_file).jobs(tmp_path / "out", version="9.9.9")[0].to_dict()
    outcome = execute_job(job)
    assert outcome["status"] == "failed"
    assert "keyed for 9.9.9" in outcome["error"]
    assert not (tmp_path / "out" / "runs").exists()


def test_damaged_runs_are_set_aside_and_run_again(campaign_file, tmp_path, fake_engine, capsys):
    """A corrupt summary, a changed series file and a run without manifest: all three are
    moved to OUT/damaged/ with a warning and run again; the table is as before."""
    out = tmp_path / "out"
    table = run_campaign(campaign_file, jobs=1, progress=False, out=out)
    runs = out / "runs"
    keys = list(table["run_key"])
    (runs / keys[0] / "summary.json").write_text('{"events": 1')  # cut short
    series = next((runs / keys[1] / "series").glob("*.parquet"))
    data = bytearray(series.read_bytes())
    data[len(data) // 2] ^= 0xFF
    series.write_bytes(bytes(data))
    (runs / keys[2] / "manifest.json").unlink()
    manifest = json.loads((runs / keys[3] / "manifest.json").read_text())
    assert set(manifest["files"]) >= {"summary.json", "scenario.toml"}
    capsys.readouterr()
    fake_engine.runs.clear()
    again = run_campaign(campaign_file, jobs=1, progress=False, out=out)
    assert len(fake_engine.runs) == 3
    assert again.attrs["counts"] == {"total": 6, "cached": 3, "done": 3}
    pd.testing.assert_frame_equal(table, again)
    warnings = [line for line in capsys.readouterr().err.splitlines() if "damaged" in line]
    assert len(warnings) == 3
    assert any("summary.json" in w and "unreadable" in w for w in warnings)
    assert any("does not match its checksum" in w for w in warnings)
    assert any("incomplete (no manifest)" in w for w in warnings)
    aside = sorted(p.name for p in (out / "damaged").iterdir())
    assert [name[:64] for name in aside] == sorted(keys[:3])
    assert verify_run_dir(runs / keys[0]) is None


def test_a_grid_over_tables_and_arrays_gathers_summarizes_and_reports(tmp_path, make_campaign):
    """Grid values that are tables or arrays become readable, hashable labels."""
    from qossim.report import campaign_report

    path = make_campaign(
        tmp_path,
        seeds="2",
        grid="fake.queue = [{kind = 'red', min_th = 5}, {kind = 'codel'}]\n"
        "fake.delays = [['2ms', '20ms'], ['40ms']]",
    )
    out = tmp_path / "out"
    table = run_campaign(path, jobs=1, progress=False, out=out)
    assert len(table) == 8
    assert set(table["fake.queue"]) == {"{kind = red, min_th = 5}", "{kind = codel}"}
    assert set(table["fake.delays"]) == {"[2ms, 20ms]", "[40ms]"}
    summary = summarize(gather(out))
    assert len(summary.drop_duplicates(["fake.queue", "fake.delays"])) == 4
    page = campaign_report(out, out / "report").read_text()
    assert "{kind = red, min_th = 5}" in page


def test_an_edited_or_foreign_run_is_never_served(campaign_file, tmp_path, fake_engine, capsys):
    """A manifest edited by hand or a run copied into another's slot: show, gather and
    report refuse it; the next sweep sets it aside and runs the slot again."""
    from qossim.cli import main

    out = tmp_path / "out"
    table = run_campaign(campaign_file, jobs=1, progress=False, out=out)
    runs = out / "runs"
    keys = list(table["run_key"])
    manifest_path = runs / keys[0] / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["seed"] = 99
    manifest_path.write_text(json.dumps(manifest, indent=2))
    shutil.rmtree(runs / keys[1])
    shutil.copytree(runs / keys[2], runs / keys[1])
    with pytest.raises(QossimError, match=r"stored run is damaged: manifest.json was changed"):
        gather(out)
    capsys.readouterr()
    assert main(["show", str(out)]) == 2
    assert "damaged" in capsys.readouterr().err
    assert main(["show", str(runs / keys[0])]) == 2
    assert main(["report", str(out)]) == 2
    fake_engine.runs.clear()
    again = run_campaign(campaign_file, jobs=1, progress=False, out=out)
    assert len(fake_engine.runs) == 2
    pd.testing.assert_frame_equal(table, again)
    warnings = [line for line in capsys.readouterr().err.splitlines() if "damaged" in line]
    assert any("changed after it was written" in w for w in warnings)
    assert any(f"holds run {keys[2][:12]}, not {keys[1][:12]}" in w for w in warnings)
    pd.testing.assert_frame_equal(gather(out), table)


def test_run_and_sweep_refuse_each_others_directories(campaign_file, scenario_file, tmp_path):
    from qossim.cli import main

    run_dir = tmp_path / "r"
    assert main(["run", str(scenario_file), "--out", str(run_dir), "--quiet"]) == 0
    assert main(["run", str(scenario_file), "--out", str(run_dir), "--quiet"]) == 2
    assert main(["run", str(scenario_file), "--out", str(run_dir), "--quiet", "--force"]) == 0
    assert main(["sweep", str(campaign_file), "--out", str(run_dir), "--quiet"]) == 2
    camp = tmp_path / "c"
    assert main(["sweep", str(campaign_file), "--out", str(camp), "--quiet"]) == 0
    key = json.loads((camp / "campaign.json").read_text())["runs"][0]["key"]
    slot = camp / "runs" / key
    assert main(["run", str(scenario_file), "--out", str(slot), "--quiet"]) == 2
