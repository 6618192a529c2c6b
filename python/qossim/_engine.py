"""The only module that talks to the compiled engine ``qossim._core``.

Everything else in the package goes through :func:`validate`, :func:`run_raw`
and :func:`core_version`, which keeps the engine replaceable in tests.

Test hook: when the environment variable ``QOSSIM_FAKE_ENGINE`` names a Python
file, these functions use the module in that file instead of ``qossim._core``;
it must provide the engine's ``version``, ``validate`` and ``run``. The test
suite's stand-in engine (``tests/fake_engine.py``) is such a file. The variable
is read at every call, so it also reaches worker processes (local process
pools, Dask and Ray workers) that inherit the environment. It exists for
testing the Python front end without the compiled core and must never be set
for real studies.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from qossim.errors import EngineError, EngineUnavailableError, RunError, ScenarioError

FAKE_ENGINE_ENV = "QOSSIM_FAKE_ENGINE"

Overrides = Sequence[tuple[str, str]]
ProgressCallback = Callable[[float], None]
BuildProgressCallback = Callable[[int, int], None]


_STAND_INS: dict[str, ModuleType] = {}


def fake_engine_enabled() -> bool:
    """Tell whether the ``QOSSIM_FAKE_ENGINE`` test hook is switched on."""
    return bool(os.environ.get(FAKE_ENGINE_ENV, "").strip())


def _stand_in(path: str) -> ModuleType:
    """Load (once per process) the stand-in engine in the file ``path``."""
    if path not in _STAND_INS:
        spec = importlib.util.spec_from_file_location("qossim_stand_in_engine", path)
        if spec is None or spec.loader is None or not os.path.isfile(path):
            raise EngineUnavailableError(
                f"qossim: {FAKE_ENGINE_ENV}={path!r} does not name a Python file"
            )
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _STAND_INS[path] = module
    return _STAND_INS[path]


def _backend() -> ModuleType:
    if fake_engine_enabled():
        return _stand_in(os.environ[FAKE_ENGINE_ENV].strip())
    try:
        from qossim import _core  # type: ignore[attr-defined]
    except ImportError as exc:
        raise EngineUnavailableError(
            "qossim: the compiled engine qossim._core is not available "
            f"({exc}); build it with `maturin develop --release` or install a wheel"
        ) from None
    return _core


def core_version() -> str:
    """Return the version string of the engine that runs scenarios."""
    return str(_backend().version())


def describe() -> list[dict[str, Any]]:
    """Return the registered components and their declared parameters.

    One dict per kind: ``kind`` (``queue.NAME``), ``name``, ``aliases``, ``title``,
    ``doc`` and ``params``, a list of dicts with ``key``, ``type``, ``unit``,
    ``default``, ``required``, ``bounds``, ``allowed`` and ``doc``.
    """
    import json

    return list(json.loads(_backend().describe()))


def statistics() -> list[dict[str, str]]:
    """Return every statistic the engine declares (component, name, unit, window, doc).

    An engine without declarations (a stand-in) declares none.
    """
    backend = _backend()
    declared = getattr(backend, "statistics", None)
    return [dict(row) for row in declared()] if declared is not None else []


def validate(text: str, filename: str, overrides: Overrides) -> list[str]:
    """Validate a scenario; return its diagnostics (an empty list when valid).

    Each diagnostic is formatted ``FILE:LINE: key.path: reason``.
    """
    backend = _backend()
    return [str(line) for line in backend.validate(text, filename, _pairs(overrides))]


def run_raw(
    text: str,
    filename: str,
    seed: int | None,
    overrides: Overrides,
    progress: ProgressCallback | None,
    trace_dir: str | os.PathLike[str] | None = None,
    fingerprint_events: int | None = None,
    check_invariants: bool = False,
    build_progress: BuildProgressCallback | None = None,
) -> dict[str, Any]:
    """Run one scenario in the engine and return its raw result dictionary.

    ``trace_dir`` is where the engine writes raw packet-trace files (scenarios with
    ``[[trace]]`` entries; see :mod:`qossim.traces`). ``fingerprint_events`` runs at
    most that many events and returns their hash as ``trace_hash`` (see
    :mod:`qossim.fingerprint`); ``check_invariants`` makes the engine check its
    bookkeeping at the end (packet conservation per link, link rates, per-flow
    delivery) and fail the run on a violation; ``build_progress(done, total)`` hears how
    building a scenario of many flows advances. Raises
    :class:`qossim.errors.ScenarioError` when the scenario is invalid.
    """
    backend = _backend()
    extra: dict[str, Any] = {} if trace_dir is None else {"trace_dir": os.fspath(trace_dir)}
    if fingerprint_events is not None:
        extra["fingerprint_events"] = int(fingerprint_events)
    if check_invariants:
        extra["check_invariants"] = True
    if build_progress is not None:
        extra["build_progress"] = build_progress
    try:
        return backend.run(text, filename, seed, _pairs(overrides), progress, **extra)
    except ScenarioError:
        raise
    except RuntimeError as exc:
        engine_error = getattr(backend, "EngineError", None)
        if isinstance(engine_error, type) and isinstance(exc, engine_error):
            raise EngineError(str(exc)) from None
        raise
    except ValueError as exc:
        core_error = getattr(backend, "ScenarioError", None)
        if isinstance(core_error, type) and isinstance(exc, core_error):
            raise ScenarioError(str(exc)) from None
        if not fake_engine_enabled():
            raise RunError(str(exc)) from None
        raise


def _pairs(overrides: Overrides) -> list[tuple[str, str]]:
    return [(str(key), str(value)) for key, value in overrides]
