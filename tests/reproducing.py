"""Runs `qossim reproduce STUDY` in a subprocess on the real engine, for the studies' tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def reproduce(
    tmp_path: Path, study: str, profile_var: str, *args: str, timeout: int = 300
) -> subprocess.CompletedProcess[str]:
    """`qossim reproduce STUDY --quiet ARGS` in `tmp_path`, with the study's tiny profile
    (`profile_var=tiny`) and never the fake engine."""
    env = dict(os.environ)
    env.pop("QOSSIM_FAKE_ENGINE", None)
    env[profile_var] = "tiny"
    return subprocess.run(
        [sys.executable, "-m", "qossim", "reproduce", study, "--quiet", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def json_records(proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    """The JSON records a successful `reproduce --format json` printed."""
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def assert_files_current(expected: dict[str, str], study_dir: Path, regenerate: str) -> None:
    """The `.toml` files under `study_dir` are exactly `expected` (relative path -> text);
    `regenerate` names the function that writes them."""
    on_disk = {
        p.relative_to(study_dir).as_posix(): p.read_text(encoding="utf-8")
        for p in study_dir.rglob("*.toml")
    }
    assert sorted(on_disk) == sorted(expected)
    for name, text in expected.items():
        assert on_disk[name] == text, f"{name} is stale: regenerate with {regenerate}"
