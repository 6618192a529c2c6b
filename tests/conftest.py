"""Shared fixtures: the stand-in engine, scenario and campaign files, CLI runners.

Tests of the pure-Python front end never need the compiled core: the
``fake_engine`` fixture monkeypatches :mod:`qossim._engine` with the
deterministic stand-in of ``tests/fake_engine.py`` (which speaks the engine's
scenario format and result shape) for this process, and sets
``QOSSIM_FAKE_ENGINE`` to that file so that subprocesses and worker processes
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

from qossim import _engine  # noqa: E402

#: The stand-in engine's file (``QOSSIM_FAKE_ENGINE`` names it).
FAKE_ENGINE_FILE = Path(__file__).resolve().parent / "fake_engine.py"
_fake_engine = _engine._stand_in(str(FAKE_ENGINE_FILE))

#: A small scenario in the engine's language: one link, one traffic entry, two series.
SCENARIO = textwrap.dedent(
    """\
    [run]
    duration = "10s"
    warmup = "1s"

    [topology]
    kind = "single_link"
    rate = "10Mbps"

    [[traffic]]
    name = "voice"
    from = "a"
    to = "b"
    model = "poisson"
    rate = "100/s"
    size = "200B"
    flows = 5

    [[metric]]
    kind = "link_throughput"
    link = "a-b"
    interval = "1s"

    [[metric]]
    kind = "queue_length"
    link = "a-b"
    interval = "1s"
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

    def run_raw(
        self, text, filename, seed, overrides, progress, trace_dir=None, build_progress=None
    ):
        """Run with the stand-in and record the seed and overrides."""
        raw = _fake_engine.run(
            text, filename, seed, list(overrides), progress, trace_dir, build_progress
        )
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
    monkeypatch.setenv(_engine.FAKE_ENGINE_ENV, str(FAKE_ENGINE_FILE))
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
    grid: str = '"traffic.0.flows" = [5, 9]',
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
    """A campaign of 2 flow counts x 3 seeds over the stand-in scenario."""
    return write_campaign(tmp_path)


def cli_env(**extra: str) -> dict[str, str]:
    """Environment for a ``qossim`` child process using the stand-in engine."""
    env = dict(os.environ)
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = os.pathsep.join([str(PYTHON_DIR), *([path] if path else [])])
    env[_engine.FAKE_ENGINE_ENV] = str(FAKE_ENGINE_FILE)
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
