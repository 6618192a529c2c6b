"""A campaign killed with SIGKILL resumes with nothing lost and nothing duplicated."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from qossim.results import is_result_dir

pytestmark = [pytest.mark.subprocess, pytest.mark.usefixtures("fake_engine")]

SEEDS = 6
LOADS = (0.5, 0.9)
TOTAL = SEEDS * len(LOADS)


def _complete(runs_dir):
    if not runs_dir.is_dir():
        return []
    return sorted(p for p in runs_dir.iterdir() if is_result_dir(p))


def _logged(path):
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _identity(manifest_or_log):
    overrides = [tuple(o) for o in manifest_or_log["overrides"]]
    return (manifest_or_log["seed"], tuple(sorted(overrides)))


def test_sigkill_then_resume(tmp_path, make_campaign, child_env):
    """SIGKILL the whole sweep mid-way, run it again, and check every run once."""
    campaign = make_campaign(tmp_path, seeds=str(SEEDS))
    out = tmp_path / "out"
    runs = out / "runs"
    first_log, second_log = tmp_path / "first.log", tmp_path / "second.log"
    command = [sys.executable, "-m", "qossim", "sweep", str(campaign), "--out", str(out)]
    command += ["--jobs", "2", "--quiet"]

    env = child_env(QOSSIM_FAKE_SLEEP="0.5", QOSSIM_FAKE_LOG=str(first_log))
    sweep = subprocess.Popen(
        command,
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while len(_complete(runs)) < 3:
            assert sweep.poll() is None, sweep.stderr.read().decode()
            assert time.monotonic() < deadline, "the sweep made no progress"
            time.sleep(0.02)
    finally:
        os.killpg(sweep.pid, signal.SIGKILL)  # the command and its workers
        sweep.wait(timeout=30)
        sweep.stderr.close()
    assert sweep.returncode == -signal.SIGKILL

    survivors = _complete(runs)
    assert 3 <= len(survivors) < TOTAL, "kill came too late to test resuming"
    before = {p.name: (p / "manifest.json").read_bytes() for p in survivors}
    finished_before = {_identity(json.loads(m)) for m in before.values()}

    env = child_env(QOSSIM_FAKE_SLEEP="0.05", QOSSIM_FAKE_LOG=str(second_log))
    again = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert again.returncode == 0, again.stderr
    assert f"{TOTAL} runs: {TOTAL - len(survivors)} executed" in again.stdout

    # Nothing lost: every run is stored; no temporary directory is left.
    entries = sorted(p.name for p in runs.iterdir())
    assert len(entries) == TOTAL
    assert all(is_result_dir(runs / name) for name in entries)
    # Nothing duplicated: runs stored before the kill were neither re-run nor rewritten.
    for name, manifest in before.items():
        assert (runs / name / "manifest.json").read_bytes() == manifest
    rerun = [_identity(entry) for entry in _logged(second_log)]
    assert len(rerun) == len(set(rerun)) == TOTAL - len(survivors)
    assert not set(rerun) & finished_before
    every = {_identity(json.loads((runs / n / "manifest.json").read_text())) for n in entries}
    assert every == finished_before | set(rerun)
    assert len(every) == TOTAL
    # The table lists each run exactly once.
    table = (out / "runs.csv").read_text().splitlines()
    assert len(table) == 1 + TOTAL
