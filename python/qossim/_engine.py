"""The only module that talks to the compiled engine ``qossim._core``.

Everything else in the package goes through :func:`validate`, :func:`run_raw`
and :func:`core_version`, which keeps the engine replaceable in tests.

Test hook: when the environment variable ``QOSSIM_FAKE_ENGINE`` is set to a
non-empty value other than ``0``, these functions use the deterministic
stand-in engine of :mod:`qossim._fake_engine` instead of ``qossim._core``.
The variable is read at every call, so it also reaches worker processes
(local process pools, Dask and Ray workers) that inherit the environment.
It exists for testing the Python front end without the compiled core and
must never be set for real studies.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from qossim.errors import EngineUnavailableError, ScenarioError

FAKE_ENGINE_ENV = "QOSSIM_FAKE_ENGINE"

Overrides = Sequence[tuple[str, str]]
ProgressCallback = Callable[[float], None]


def fake_engine_enabled() -> bool:
    """Tell whether the ``QOSSIM_FAKE_ENGINE`` test hook is switched on."""
    return os.environ.get(FAKE_ENGINE_ENV, "").strip() not in ("", "0")


def _backend() -> ModuleType:
    if fake_engine_enabled():
        from qossim import _fake_engine

        return _fake_engine
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
) -> dict[str, Any]:
    """Run one scenario in the engine and return its raw result dictionary.

    Raises :class:`qossim.errors.ScenarioError` when the scenario is invalid.
    """
    backend = _backend()
    try:
        return backend.run(text, filename, seed, _pairs(overrides), progress)
    except ScenarioError:
        raise
    except ValueError as exc:
        core_error = getattr(backend, "ScenarioError", None)
        if isinstance(core_error, type) and isinstance(exc, core_error):
            raise ScenarioError(str(exc)) from None
        raise


def _pairs(overrides: Overrides) -> list[tuple[str, str]]:
    return [(str(key), str(value)) for key, value in overrides]
