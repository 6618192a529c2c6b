"""Fingerprints of every shipped scenario and campaign point, and the update workflow."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from qossim import fingerprint

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("QOSSIM_FAKE_ENGINE")), reason="needs the real engine"
)


def test_every_shipped_scenario_behaves_as_recorded():
    """A model change that alters any shipped scenario's first events fails here."""
    stored = fingerprint.load(fingerprint.default_store(ROOT))
    fresh = fingerprint.compute([ROOT / "scenarios", ROOT / "studies"], root=ROOT)
    assert len(fresh) >= 690
    changes = fingerprint.compare(stored, fresh)
    assert not changes, (
        "fingerprints changed; if intended, run `qossim fingerprint --update` and commit:\n"
        + "\n".join(changes[:40])
    )


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("QOSSIM_FAKE_ENGINE", None)
    return subprocess.run(
        [sys.executable, "-m", "qossim", "fingerprint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
    )


def test_a_one_line_change_gives_a_readable_diff_until_recorded(tmp_path):
    """Check, change one value, see the difference named, record it, check again."""
    text = (ROOT / "scenarios" / "reference.toml").read_text()
    (tmp_path / "scenarios").mkdir()
    path = tmp_path / "scenarios" / "ref.toml"
    path.write_text(text)
    first = _cli("--update", "scenarios", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "1 fingerprints recorded" in first.stdout
    same = _cli("scenarios", cwd=tmp_path)
    assert same.returncode == 0 and "1 fingerprints match" in same.stdout
    path.write_text(text.replace('rate = "OC3"', 'rate = "150Mbps"'))
    changed = _cli("scenarios", cwd=tmp_path)
    assert changed.returncode == 1
    line = changed.stdout.splitlines()[0]
    assert line.startswith("scenarios/ref.toml: ")
    assert "trace_hash " in line and " -> " in line
    assert "1 of 1 fingerprints differ" in changed.stdout
    assert _cli("--update", "scenarios", cwd=tmp_path).returncode == 0
    assert _cli("scenarios", cwd=tmp_path).returncode == 0
    # A deleted scenario is named until its fingerprint is dropped by an update.
    (tmp_path / "scenarios" / "ref2.toml").write_text(text)
    assert _cli("--update", "scenarios", cwd=tmp_path).returncode == 0
    (tmp_path / "scenarios" / "ref2.toml").unlink()
    gone = _cli("scenarios", cwd=tmp_path)
    assert gone.returncode == 1
    assert "scenarios/ref2.toml: stored, but the file or point is gone" in gone.stdout
    dropped = _cli("--update", "scenarios", cwd=tmp_path)
    assert "1 fingerprints recorded, 1 changed" in dropped.stdout
    store = (tmp_path / "tests" / "data" / "fingerprints.jsonl").read_text()
    assert "ref2.toml" not in store and "ref.toml" in store
    assert _cli("scenarios", cwd=tmp_path).returncode == 0
    missing = _cli("nowhere", cwd=tmp_path)
    assert (
        missing.returncode == 2 and missing.stderr.strip() == "nowhere: no such file or directory"
    )


def test_fingerprints_are_deterministic_and_capped():
    """Two computations agree; no run goes past the event cap."""
    paths = [ROOT / "scenarios"]
    a = fingerprint.compute(paths, root=ROOT)
    b = fingerprint.compute(paths, root=ROOT)
    assert a == b
    assert all(f.events <= fingerprint.EVENTS for f in a)


def test_the_store_is_found_from_any_working_directory(tmp_path):
    """Outside the checkout the command still checks against the checkout's store."""
    example = ROOT / "studies" / "examples" / "flows.toml"
    done = _cli(str(example), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 fingerprints match" in done.stdout
    inside = _cli(os.path.relpath(example, ROOT / "docs"), cwd=ROOT / "docs")
    assert inside.returncode == 0 and "2 fingerprints match" in inside.stdout


def test_a_missing_store_is_named(tmp_path):
    done = _cli("--store", str(tmp_path / "none.jsonl"), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith(f"{tmp_path / 'none.jsonl'}: no fingerprint store")
