"""Shared fixtures: the stand-in engine, scenario and campaign files, CLI runners.

Tests of the pure-Python front end never need the compiled core: the
``fake_engine`` fixture monkeypatches :mod:`qossim._engine` with the
deterministic stand-in of :mod:`qossim._fake_engine` for this process, and
sets ``QOSSIM_FAKE_ENGINE=1`` so that subprocesses and worker processes
(process pools, Dask, Ray) use it too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYTHON_DIR = ROOT / "python"

try:
    import qossim  # noqa: F401
except ImportError:  # running without PYTHONPATH=python
    sys.path.insert(0, str(PYTHON_DIR))

from qossim import _engine, _fake_engine  # noqa: E402

SCENARIO = textwrap.dedent(
    """\
    [simulation]
    duration = "10s"

    [traffic]
    load = 0.5
    """
)


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers of the backend tests."""
    config.addinivalue_line("markers", "dask: runs a campaign on a local Dask cluster")
    config.addinivalue_line("markers", "ray: runs a campaign on a local Ray instance")
    config.addinivalue_line("markers", "subprocess: runs the qossim command in a child process")


class FakeEngine:
    """Records the calls made to the stand-in engine in this process."""

    def __init__(self) -> None:
        self.runs: list[tuple[int | None, list[tuple[str, str]]]] = []
        self.validations = 0

    def validate(self, text, filename, overrides):
        """Validate with the stand-in's rules."""
        self.validations += 1
        return _fake_engine.validate(text, filename, list(overrides))

    def run_raw(self, text, filename, seed, overrides, progress):
        """Run with the stand-in and record the seed and overrides."""
        raw = _fake_engine.run(text, filename, seed, list(overrides), progress)
        self.runs.append((seed, [tuple(o) for o in overrides]))
        return raw

    @staticmethod
    def core_version():
        """Return the stand-in's version."""
        return _fake_engine.VERSION


@pytest.fixture
def fake_engine(monkeypatch: pytest.MonkeyPatch) -> FakeEngine:
    """Replace the compiled engine by the deterministic stand-in."""
    fake = FakeEngine()
    monkeypatch.setenv(_engine.FAKE_ENGINE_ENV, "1")
    monkeypatch.delenv(_fake_engine.SLEEP_ENV, raising=False)
    monkeypatch.delenv(_fake_engine.LOG_ENV, raising=False)
    monkeypatch.setattr(_engine, "validate", fake.validate)
    monkeypatch.setattr(_engine, "run_raw", fake.run_raw)
    monkeypatch.setattr(_engine, "core_version", fake.core_version)
    return fake


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    """A valid scenario file for the stand-in engine."""
    path = tmp_path / "scenario.toml"
    path.write_text(SCENARIO)
    return path


def write_campaign(
    directory: Path,
    *,
    seeds: str = "[1, 2, 3]",
    grid: str = '"traffic.load" = [0.5, 0.9]',
    extra: str = "",
    name: str = "demo",
) -> Path:
    """Write a scenario and a campaign file into ``directory``; return the campaign."""
    (directory / "scenario.toml").write_text(SCENARIO)
    path = directory / "campaign.toml"
    path.write_text(
        f'[campaign]\nname = "{name}"\nscenario = "scenario.toml"\nseeds = {seeds}\n\n'
        f"[grid]\n{grid}\n{extra}"
    )
    return path


@pytest.fixture
def campaign_file(tmp_path: Path) -> Path:
    """A campaign of 2 loads x 3 seeds over the stand-in scenario."""
    return write_campaign(tmp_path)


def cli_env(**extra: str) -> dict[str, str]:
    """Environment for a ``qossim`` child process using the stand-in engine."""
    env = dict(os.environ)
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = os.pathsep.join([str(PYTHON_DIR), *([path] if path else [])])
    env[_engine.FAKE_ENGINE_ENV] = "1"
    env.update(extra)
    return env


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120):
    """Run ``python -m qossim ARGS`` in a child process and return the completed process."""
    return subprocess.run(
        [sys.executable, "-m", "qossim", *args],
        cwd=cwd,
        env=env or cli_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def make_campaign():
    """The :func:`write_campaign` helper."""
    return write_campaign


@pytest.fixture
def cli():
    """The :func:`run_cli` helper (a ``qossim`` child process)."""
    return run_cli


@pytest.fixture
def child_env():
    """The :func:`cli_env` helper (environment of a child process)."""
    return cli_env
