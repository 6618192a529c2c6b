"""Run directories: atomic writes, crash safety, Result round trips."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

import qossim
from qossim import results
from qossim.errors import ResultError
from qossim.results import (
    Result,
    atomic_dir,
    clean_stale_temps,
    is_result_dir,
    write_run_dir,
)

pytestmark = pytest.mark.usefixtures("fake_engine")


def _write(target: Path, **kwargs) -> Path:
    return write_run_dir(
        target,
        manifest={"seed": 1, "params": {}},
        summary={"x": 1.0},
        series={"q": {"t_s": [0.0, 1.0], "v": [2.0, 3.0]}},
        scenario_text="[simulation]\n",
        **kwargs,
    )


def test_atomic_dir_appears_complete(tmp_path):
    """A finished block renames the temporary directory to the target."""
    target = tmp_path / "out"
    with atomic_dir(target) as tmp:
        assert tmp.parent == tmp_path
        assert ".tmp-" in tmp.name
        (tmp / "a.txt").write_text("hello")
        assert not target.exists()
    assert (target / "a.txt").read_text() == "hello"
    assert list(tmp_path.iterdir()) == [target]


def test_error_inside_block_leaves_nothing(tmp_path):
    """An exception while writing removes the temporary directory."""
    target = tmp_path / "out"
    with pytest.raises(RuntimeError), atomic_dir(target) as tmp:
        (tmp / "a.txt").write_text("half")
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_crash_before_rename_shows_no_result(tmp_path, monkeypatch):
    """If the rename never happens, no result is visible at the target."""

    def failing_rename(src, dst):
        raise OSError("simulated crash between temp write and rename")

    monkeypatch.setattr(results.os, "rename", failing_rename)
    target = tmp_path / "run"
    with pytest.raises(OSError, match="simulated crash"):
        _write(target)
    assert not target.exists()
    assert not is_result_dir(target)
    assert list(tmp_path.iterdir()) == []


def test_killed_writer_leaves_only_an_ignored_temp_dir(tmp_path):
    """A process SIGKILLed between writing and renaming leaves no result."""
    target = tmp_path / "run"
    code = textwrap.dedent(
        f"""
        import os, signal
        from qossim import results
        results.os.rename = lambda src, dst: os.kill(os.getpid(), signal.SIGKILL)
        results.write_run_dir(
            {str(target)!r},
            manifest={{"seed": 1}},
            summary={{"x": 1.0}},
            series={{"q": {{"t_s": [0.0], "v": [1.0]}}}},
        )
        """
    )
    env = dict(os.environ, PYTHONPATH=str(Path(qossim.__file__).parent.parent))
    done = subprocess.run([sys.executable, "-c", code], env=env, check=False, timeout=60)
    assert done.returncode == -signal.SIGKILL
    assert not target.exists()
    leftovers = list(tmp_path.iterdir())
    assert len(leftovers) == 1 and ".tmp-" in leftovers[0].name
    # The leftover holds a manifest, yet it is never taken for a result.
    assert (leftovers[0] / "manifest.json").is_file()
    assert not is_result_dir(leftovers[0])
    with pytest.raises(ResultError):
        Result.load(leftovers[0])
    assert clean_stale_temps(tmp_path) == leftovers
    assert list(tmp_path.iterdir()) == []


def test_directory_without_manifest_is_not_a_result(tmp_path):
    """Only a directory with manifest.json counts as a result."""
    target = _write(tmp_path / "run")
    assert is_result_dir(target)
    (target / "manifest.json").unlink()
    assert not is_result_dir(target)
    with pytest.raises(ResultError, match="not a qossim run directory"):
        Result.load(target)


def test_existing_target_is_not_replaced_unless_asked(tmp_path):
    """Writing over a result needs replace=True; the old one stays otherwise."""
    target = _write(tmp_path / "run")
    with pytest.raises(FileExistsError):
        write_run_dir(target, manifest={"seed": 2}, summary={}, series={})
    assert json.loads((target / "manifest.json").read_text())["seed"] == 1
    write_run_dir(target, manifest={"seed": 2}, summary={}, series={}, replace=True)
    assert json.loads((target / "manifest.json").read_text())["seed"] == 2
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


def test_result_round_trip(tmp_path, scenario_file):
    """run -> save -> load keeps summary, manifest and time series."""
    result = qossim.run(scenario_file, seed=7, set={"traffic.0.flows": 8})
    saved = result.save(tmp_path / "r")
    loaded = Result.load(saved)
    assert loaded.summary == json.loads(json.dumps(result.summary))
    assert sorted(loaded.series_names) == sorted(result.series_names)
    assert sorted(result.series_names) == ["a-b.queue", "a-b.throughput", "group.voice.delay_cdf"]
    for name in result.series_names:
        pd.testing.assert_frame_equal(loaded.timeseries(name), result.timeseries(name))
    assert list(loaded.timeseries("a-b.queue").columns) == ["t", "value"]
    assert loaded.scenario_text == scenario_file.read_text()
    assert (saved / "series" / "a-b.queue.parquet").is_file()
    assert loaded.seed == 7


def test_manifest_fields(tmp_path, scenario_file):
    """The manifest records provenance, seed, overrides and run measures."""
    manifest = qossim.run(scenario_file, seed=3, set=["traffic.0.flows=7"]).manifest
    for key in (
        "qossim_version",
        "git_commit",
        "scenario_hash",
        "seed",
        "wall_s",
        "events",
        "sim_time_s",
        "overrides",
        "params",
        "run_key",
    ):
        assert key in manifest
    assert manifest["qossim_version"] == "0.0.0+fake"
    assert manifest["seed"] == 3
    assert manifest["overrides"] == [["traffic.0.flows", "7"]]
    assert manifest["sim_time_s"] == 10.0
    commit = manifest["git_commit"]
    assert commit is None or (len(commit) == 40 and int(commit, 16) >= 0)


def test_series_names_with_special_characters(tmp_path):
    """Series names that are not file names are stored and read back intact."""
    name = "link a->b/queue:ef"
    target = write_run_dir(
        tmp_path / "run",
        manifest={"seed": 1},
        summary={},
        series={name: {"t_s": [0.0, 1.0], "backlog_pkts": [1, 2]}},
    )
    loaded = Result.load(target)
    assert loaded.series_names == [name]
    assert loaded.timeseries(name)["backlog_pkts"].tolist() == [1, 2]
    with pytest.raises(KeyError, match="recorded"):
        loaded.timeseries("missing")


def test_save_without_overwrite_refuses_existing(tmp_path, scenario_file):
    """Result.save keeps an existing directory unless overwrite=True."""
    result = qossim.run(scenario_file, seed=1)
    result.save(tmp_path / "r")
    with pytest.raises(FileExistsError):
        result.save(tmp_path / "r")
    result.save(tmp_path / "r", overwrite=True)
    assert is_result_dir(tmp_path / "r")


def test_replace_never_deletes_other_data(tmp_path):
    """replace=True replaces a run directory or an empty one, never other data."""
    other = tmp_path / "mine"
    other.mkdir()
    (other / "precious.txt").write_text("keep")
    with pytest.raises(FileExistsError, match="not a run directory"):
        _write(other, replace=True)
    assert (other / "precious.txt").read_text() == "keep"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert is_result_dir(_write(empty, replace=True))
