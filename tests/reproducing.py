"""Runs `qossim reproduce STUDY` in a subprocess on the real engine, for the studies' tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


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
