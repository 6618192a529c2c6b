"""The Python API for single runs: :func:`run`, :func:`run_text`, :func:`validate`."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Union

from qossim import _engine, _toml
from qossim.errors import QossimError, ScenarioError
from qossim.params import OverridesLike, normalize_overrides, run_key
from qossim.progress import ProgressArg, build_progress, run_progress
from qossim.results import Result, build_manifest

ScenarioLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]

DICT_FILENAME = "<dict>"
TEXT_FILENAME = "<text>"


def scenario_source(scenario: ScenarioLike) -> tuple[str, str]:
    """Return ``(text, filename)`` for a scenario path or dictionary.

    A ``str`` or :class:`os.PathLike` is a path to a TOML file (read here; an
    unreadable file raises :class:`qossim.errors.QossimError` naming it); a
    mapping is serialised to TOML and named ``<dict>``.
    """
    if isinstance(scenario, Mapping):
        try:
            return _toml.dumps(scenario), DICT_FILENAME
        except RecursionError:
            raise ScenarioError(
                f"{DICT_FILENAME}:0: <dict>: cannot write as TOML: it contains itself"
            ) from None
        except (TypeError, ValueError) as exc:
            raise ScenarioError(f"{DICT_FILENAME}:0: <dict>: cannot write as TOML: {exc}") from None
    if isinstance(scenario, (str, os.PathLike)):
        path = Path(scenario)
        try:
            return read_scenario_file(path), os.fspath(scenario)
        except UnicodeDecodeError:
            raise QossimError(f"{os.fspath(scenario)}: cannot read: not UTF-8 text") from None
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise QossimError(f"{os.fspath(scenario)}: cannot read: {reason}") from None
    raise TypeError(
        "scenario must be a path to a TOML file or a dict; use qossim.run_text() for TOML text"
    )


def read_scenario_file(path: Path) -> str:
    """Read a scenario or campaign file: a regular file of at most 256 MiB of UTF-8.

    Raises :class:`QossimError` naming the file otherwise (a device such as
    ``/dev/zero`` would be read forever).
    """
    name = os.fspath(path)
    if path.exists() and not path.is_file():
        raise QossimError(f"{name}: cannot read: not a regular file")
    with path.open("rb") as f:
        data = f.read(MAX_SCENARIO_BYTES + 1)
    if len(data) > MAX_SCENARIO_BYTES:
        raise QossimError(f"{name}: cannot read: larger than {MAX_SCENARIO_BYTES} bytes")
    return data.decode("utf-8")


def run(
    scenario: ScenarioLike,
    seed: int | None = None,
    set: OverridesLike = None,
    progress: ProgressArg = None,
) -> Result:
    """Run one scenario and return its :class:`~qossim.results.Result`.

    Parameters
    ----------
    scenario:
        Path to a scenario TOML file, or a dict with the same structure.
    seed:
        Run seed; ``None`` lets the engine choose (the seed used is in the
        manifest).
    set:
        Overrides: ``{"key.path": value}``, ``["key.path=value", ...]`` or
        ``[("key.path", value), ...]``.
    progress:
        ``True`` for a progress bar on a terminal, a callable receiving the
        fraction of simulated time done, or ``None``.

    Raises :class:`qossim.errors.ScenarioError` (with one diagnostic per
    problem) when the scenario or the overrides are invalid.
    """
    text, filename = scenario_source(scenario)
    return run_text(text, seed=seed, set=set, progress=progress, filename=filename)


def run_text(
    text: str,
    seed: int | None = None,
    set: OverridesLike = None,
    progress: ProgressArg = None,
    *,
    filename: str = TEXT_FILENAME,
) -> Result:
    """Run a scenario given as TOML text; see :func:`run` for the parameters.

    ``filename`` is the name diagnostics use for the text.
    """
    overrides = normalize_overrides(set)
    check_seed(seed)
    wrong = campaign_not_scenario(text, filename)
    if wrong:
        raise ScenarioError(wrong)
    trace_dir = Path(tempfile.mkdtemp(prefix="qossim-trace-"))
    try:
        desc = Path(filename).stem or "run"
        with (
            build_progress(progress, desc) as on_build,
            run_progress(progress, desc) as callback,
        ):
            raw = _engine.run_raw(
                text,
                filename,
                seed,
                overrides,
                callback,
                trace_dir=trace_dir,
                build_progress=on_build,
            )
        result = result_from_raw(raw, text, filename, overrides, params=None)
        if raw.get("traces"):
            from qossim.traces import finish_traces  # numpy and pyarrow: only for traces

            result._trace_files = finish_traces(raw, trace_dir)
            # The files live as long as the result (Result.save copies them).
            weakref.finalize(result, shutil.rmtree, trace_dir, True)
            trace_dir = None
        return result
    finally:
        if trace_dir is not None:
            shutil.rmtree(trace_dir, ignore_errors=True)


def validate(scenario: ScenarioLike, set: OverridesLike = None) -> list[str]:
    """Validate a scenario path or dict with overrides; return its diagnostics.

    An empty list means the scenario is valid. Each diagnostic is formatted
    ``FILE:LINE: key.path: reason``.
    """
    text, filename = scenario_source(scenario)
    return validate_text(text, set=set, filename=filename)


def validate_text(
    text: str,
    set: OverridesLike = None,
    *,
    filename: str = TEXT_FILENAME,
) -> list[str]:
    """Validate a scenario given as TOML text; return its diagnostics."""
    overrides = normalize_overrides(set)
    wrong = campaign_not_scenario(text, filename)
    if wrong:
        return [wrong]
    return _engine.validate(text, filename, overrides)


def check_seed(seed: Any) -> None:
    """Raise :class:`QossimError` unless ``seed`` is None or an integer in [0, 2^64)."""
    if seed is None:
        return
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise QossimError(f"seed: must be an integer from 0 to 2^64 - 1, got {seed!r}")
    if not 0 <= seed < 2**64:
        raise QossimError(f"seed: must be from 0 to 2^64 - 1, got {seed}")


#: The largest scenario file read (a larger one is refused before reading it whole).
MAX_SCENARIO_BYTES = 256 * 1024 * 1024


_CAMPAIGN_TABLE = re.compile(r"^\s*\[\s*campaign\s*\]", re.MULTILINE)


def campaign_not_scenario(text: str, filename: str) -> str | None:
    """Return the one diagnostic for a campaign file given where a scenario belongs.

    A campaign file (one with a ``[campaign]`` table) would otherwise be reported as a
    scenario with every campaign table unknown and the scenario's tables missing.
    """
    match = _CAMPAIGN_TABLE.search(text)
    if match is None:
        return None
    line = text.count("\n", 0, match.start()) + 1
    return (
        f"{filename}:{line}: campaign: this is a campaign file, not a scenario; "
        f"run it with `qossim sweep {filename}`"
    )


def result_from_raw(
    raw: Mapping[str, Any],
    text: str,
    filename: str,
    overrides: list[tuple[str, str]],
    params: Mapping[str, Any] | None,
) -> Result:
    """Wrap the engine's raw result dictionary into a :class:`Result`."""
    version = _engine.core_version()
    seed = raw.get("seed")
    manifest = build_manifest(
        raw,
        scenario_file=filename,
        overrides=overrides,
        params=params if params is not None else dict(overrides),
        version=version,
        run_key=run_key(text, overrides, seed, version),
    )
    return Result(
        raw.get("summary", {}),
        manifest,
        raw.get("series", {}),
        scenario_text=text,
    )
