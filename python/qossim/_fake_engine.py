"""A deterministic stand-in for ``qossim._core``, used only by tests.

It is selected by the ``QOSSIM_FAKE_ENGINE=1`` test hook (see
:mod:`qossim._engine`) and implements the same three functions as the
compiled core (``version``, ``validate`` and ``run``), with results that
depend only on the scenario text, the overrides and the seed. It simulates
nothing: its numbers are arbitrary functions of its inputs, made only to
exercise caching, storage, statistics, campaigns and the command line.

Scenario rules of the stand-in:

* the text must be valid TOML and ``simulation.duration`` must be a duration
  such as ``"10s"`` or ``"20ms"``;
* ``traffic.load``, when present, must be a number in ``[0, 10)``;
* ``fake.sleep_s`` makes a run take that many wall-clock seconds
  (the environment variable ``QOSSIM_FAKE_SLEEP`` overrides it);
* ``fake.fail = "reason"`` (non-empty) makes a run fail with ``RuntimeError(reason)``.

When ``QOSSIM_FAKE_LOG`` names a file, every finished run appends one JSON
line ``{"seed": ..., "overrides": [...], "scenario_hash": ...}`` to it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from qossim import _toml
from qossim.errors import ScenarioError

VERSION = "0.0.0+fake"
SLEEP_ENV = "QOSSIM_FAKE_SLEEP"
LOG_ENV = "QOSSIM_FAKE_LOG"

_DURATION_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(ps|ns|us|ms|s)\s*$")
_UNIT_S = {"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}

__all__ = ["ScenarioError", "run", "validate", "version"]


def version() -> str:
    """Return the stand-in engine's version."""
    return VERSION


def validate(text: str, filename: str, overrides: Sequence[tuple[str, str]]) -> list[str]:
    """Return the diagnostics of a scenario under the stand-in's rules."""
    return _resolve(text, filename, overrides)[1]


def run(
    text: str,
    filename: str,
    seed: int | None,
    overrides: Sequence[tuple[str, str]],
    progress: Callable[[float], None] | None,
) -> dict[str, Any]:
    """Produce a deterministic result dictionary shaped like the core's."""
    started = time.perf_counter()
    scenario, diagnostics = _resolve(text, filename, overrides)
    if diagnostics:
        raise ScenarioError(diagnostics)
    seed = 1 if seed is None else int(seed)
    canonical = json.dumps(scenario, sort_keys=True, default=str)
    scenario_hash = hashlib.sha256(canonical.encode()).hexdigest()
    digest = hashlib.sha256(f"{scenario_hash}:{seed}".encode()).hexdigest()
    rng = random.Random(int(digest[:16], 16))

    fake = scenario.get("fake", {})
    sleep_s = float(os.environ.get(SLEEP_ENV) or fake.get("sleep_s", 0.0))
    steps = 10
    for step in range(steps):
        if sleep_s > 0:
            time.sleep(sleep_s / steps)
        if progress is not None:
            progress((step + 1) / steps)
    if fake.get("fail"):
        raise RuntimeError(str(fake["fail"]))

    duration_s = _duration_s(scenario["simulation"]["duration"])
    load = float(scenario.get("traffic", {}).get("load", 0.5))
    loss = max(0.0, load - 0.8) * 0.5 + rng.random() * 1e-3
    delay_s = 1e-3 / max(1e-3, 1.0 - min(load, 0.99)) * (1.0 + 0.1 * rng.random())
    packets = int(1000 * load * duration_s) + rng.randrange(100)
    points = 20
    t_s = [duration_s * (i + 1) / points for i in range(points)]
    backlog = [round(load * 10 * (1 + math.sin(i + rng.random())), 6) for i in range(points)]
    rate = [round(100.0 * load * (1 - loss) * (0.9 + 0.2 * rng.random()), 6) for _ in t_s]
    summary: dict[str, Any] = {
        "throughput_mbps": 100.0 * load * (1.0 - loss),
        "loss_ratio": loss,
        "mean_delay_s": delay_s,
        "packets_delivered": packets,
        "model": "fake",
        "per_class": {"ef": {"loss_ratio": loss / 2}},
    }
    if LOG_ENV in os.environ:
        line = json.dumps(
            {
                "seed": seed,
                "overrides": [list(o) for o in overrides],
                "scenario_hash": scenario_hash,
            }
        )
        fd = os.open(os.environ[LOG_ENV], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)
    return {
        "summary": summary,
        "series": {
            "queue": {"t_s": t_s, "backlog_pkts": backlog},
            "throughput": {"t_s": t_s, "rate_mbps": rate},
        },
        "events": packets * 3,
        "sim_time_s": duration_s,
        "wall_s": time.perf_counter() - started,
        "seed": seed,
        "scenario_hash": scenario_hash,
    }


def _resolve(
    text: str, filename: str, overrides: Sequence[tuple[str, str]]
) -> tuple[dict[str, Any], list[str]]:
    try:
        scenario = _toml.loads(text)
    except _toml.TOMLDecodeError as exc:
        line = _toml.error_line(exc, text)
        return {}, [f"{filename}:{line}: <toml>: {_toml.error_reason(exc)}"]
    problems: list[str] = []
    for key, value in overrides:
        parts = key.split(".")
        node = scenario
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                problems.append(f"{filename}:0: {key}: {part} is not a table")
                break
            node = child
        else:
            node[parts[-1]] = _toml.parse_value(value)
    duration = (
        scenario.get("simulation", {}).get("duration")
        if isinstance(scenario.get("simulation"), dict)
        else None
    )
    if duration is None:
        problems.append(f"{filename}:1: simulation.duration: missing required key")
    elif _duration_s(duration) is None:
        problems.append(
            f"{filename}:{_line_of(text, 'duration')}: simulation.duration: "
            f'invalid duration {duration!r} (expected e.g. "10s" or "20ms")'
        )
    load = (
        scenario.get("traffic", {}).get("load")
        if isinstance(scenario.get("traffic"), dict)
        else None
    )
    if load is not None and (
        isinstance(load, bool) or not isinstance(load, (int, float)) or not 0 <= load < 10
    ):
        problems.append(
            f"{filename}:{_line_of(text, 'load')}: traffic.load: "
            f"must be a number in [0, 10), got {load!r}"
        )
    return scenario, problems


def _duration_s(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if value > 0 else None
    if isinstance(value, str):
        match = _DURATION_RE.match(value)
        if match:
            return float(match.group(1)) * _UNIT_S[match.group(2)]
    return None


def _line_of(text: str, key: str) -> int:
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*=")
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.match(line):
            return number
    return 1
