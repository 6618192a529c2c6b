"""Scenario overrides: ``--set key.path=value`` pairs and run keys.

An override is a pair of strings ``(key.path, value)``; the engine reads the
value as a TOML literal when it is one (``0.8``, ``true``, ``[1, 2]``) and as
a plain string otherwise (``155.52Mbps``, ``20ms``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from qossim import _toml
from qossim.errors import QossimError

OverridesLike = Mapping[str, Any] | Iterable[str] | Iterable[tuple[str, Any]] | None


def format_value(value: Any) -> str:
    """Render a Python value as the string form of an override value."""
    return _toml.literal(value)


def parse_set(items: Iterable[str]) -> list[tuple[str, str]]:
    """Parse ``key.path=value`` strings (as given to ``--set``) into pairs.

    Raises :class:`qossim.errors.QossimError` listing every malformed item.
    """
    pairs: list[tuple[str, str]] = []
    problems: list[str] = []
    for item in items:
        key, sep, value = str(item).partition("=")
        key = key.strip()
        if not sep or not _valid_key(key):
            problems.append(f"--set {item}: expected KEY.PATH=VALUE")
            continue
        pairs.append((key, value.strip()))
    if problems:
        raise QossimError(problems)
    return pairs


def normalize_overrides(overrides: OverridesLike) -> list[tuple[str, str]]:
    """Turn any accepted override form into a list of ``(key, value)`` strings.

    Accepted: ``None``; a mapping ``{"a.b": 3}``; strings ``"a.b=3"``; pairs
    ``("a.b", 3)``. Values that are not strings become TOML literals.
    """
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        items: Iterable[Any] = overrides.items()
    elif isinstance(overrides, str):
        items = [overrides]
    else:
        items = overrides
    pairs: list[tuple[str, str]] = []
    for item in items:
        if isinstance(item, str):
            pairs.extend(parse_set([item]))
            continue
        key, value = item
        key = str(key).strip()
        if not _valid_key(key):
            raise QossimError(f"override {key!r}: not a valid key path")
        pairs.append((key, format_value(value)))
    return pairs


def canonical_overrides(overrides: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Return overrides with later settings of a key winning, sorted by key."""
    merged: dict[str, str] = {}
    for key, value in overrides:
        merged[str(key)] = str(value)
    return sorted(merged.items())


def run_key(
    scenario_text: str,
    overrides: Iterable[tuple[str, str]],
    seed: int | None,
    version: str,
) -> str:
    """Return the cache key of a run: sha256 of scenario, overrides, seed, version.

    The overrides enter in canonical (sorted, last-wins) form, so their order
    does not change the key.
    """
    payload = json.dumps(
        {
            "scenario": scenario_text,
            "overrides": [list(pair) for pair in canonical_overrides(overrides)],
            "seed": seed,
            "version": version,
        },
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _valid_key(key: str) -> bool:
    if not key or any(ch.isspace() for ch in key):
        return False
    return all(part for part in key.split("."))
