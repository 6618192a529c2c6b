"""Declared statistics: the unit, window and meaning of every summary key and series.

The engine declares each statistic once, beside the component that records it, as a
name pattern (``link.{link}.drops``: a ``{placeholder}`` stands for a scenario's name,
``{a|b}`` for one of the listed words), a unit, a window (``run``, ``after warm-up`` or
``end of run``) and a one-line description. :func:`describe` finds the declaration of a
key; :func:`reference` writes the reference page ``docs/statistics.md``
(``python -m qossim.declared > docs/statistics.md``; a test keeps it current).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = ["Declaration", "declarations", "describe", "reference"]

#: Windows a statistic may cover.
WINDOWS = ("run", "after warm-up", "end of run")


@dataclass(frozen=True)
class Declaration:
    """One declared statistic (or family of keys sharing a pattern)."""

    component: str
    name: str
    unit: str
    window: str
    doc: str

    @functools.cached_property
    def _regex(self) -> re.Pattern[str]:
        parts = []
        for literal, inner in re.findall(r"([^{]*)(?:\{([^}]*)\})?", self.name):
            parts.append(re.escape(literal))
            if inner:
                words = inner.split("|")
                parts.append(
                    "(?:" + "|".join(map(re.escape, words)) + ")" if len(words) > 1 else ".+"
                )
        return re.compile("".join(parts))

    @property
    def specificity(self) -> int:
        """The number of literal characters of the pattern (more: more specific)."""
        return len(re.sub(r"\{[^}]*\}", "", self.name))

    def matches(self, key: str) -> bool:
        """Whether ``key`` is an instance of this declaration's pattern."""
        return self._regex.fullmatch(key) is not None


#: Declarations and lookups per engine (the compiled one, or a stand-in in tests).
_CACHE: dict[int, tuple[tuple[Declaration, ...], dict[str, Declaration | None]]] = {}


def _engine_cache() -> tuple[tuple[Declaration, ...], dict[str, Declaration | None]]:
    from qossim import _engine

    backend = id(_engine._backend())
    if backend not in _CACHE:
        rows = tuple(Declaration(**row) for row in _engine.statistics())
        _CACHE[backend] = (rows, {})
    return _CACHE[backend]


def declarations() -> tuple[Declaration, ...]:
    """Every statistic the engine declares, in reference order."""
    return _engine_cache()[0]


def describe(key: str) -> Declaration | None:
    """Return the declaration of a summary key or series name (the most specific match)."""
    rows, found = _engine_cache()
    if key not in found:
        matching = [d for d in rows if d.matches(key)]
        found[key] = max(matching, key=lambda d: d.specificity) if matching else None
    return found[key]


def reference() -> str:
    """Return the Markdown reference of every declared statistic (``docs/statistics.md``)."""
    lines = [
        "# Statistics",
        "",
        "<!-- Generated from the engine's declarations by "
        "`python -m qossim.declared > docs/statistics.md`; a test fails when it drifts. -->",
        "",
        "Every summary key and series a run writes is declared by the component that "
        "records it: a name pattern (`{link}`, `{traffic}`, ... stand for the scenario's "
        "names, `{a|b}` for one of the words listed), a unit, the window it covers and "
        "what it means. Windows: `run` counts the whole run, warm-up included; "
        "`after warm-up` starts at the end of `[run] warmup`; `end of run` is a state "
        "read at the end. `Result.summary` carries the unit and window of every key "
        "(`result.summary.frame`).",
        "",
    ]
    components: dict[str, list[Declaration]] = {}
    for d in declarations():
        components.setdefault(d.component, []).append(d)
    for component, rows in components.items():
        lines += [f"## {component}", "", "| name | unit | window | meaning |", "|---|---|---|---|"]
        for d in rows:
            name, doc = d.name.replace("|", "\\|"), d.doc.replace("|", "\\|")
            lines.append(f"| `{name}` | {d.unit} | {d.window} | {doc} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover - the generator of docs/statistics.md
    import sys

    sys.stdout.write(reference())
