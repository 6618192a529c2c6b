"""``qossim describe``: the registered components and their declared parameters.

The engine declares each component's parameters once, next to its model (key, type,
unit, default, bounds or allowed values, one line of description); this module only
formats that declaration, as text for the terminal and as the Markdown reference
tables of ``docs/scenarios.md`` (kept current by ``scripts/gen_docs.py``).
"""

from __future__ import annotations

from typing import Any

from qossim import _engine
from qossim.errors import QossimError

#: The groups of kinds, in the order the documentation gives them (``topology``: the
#: core topology kinds, ``kind = "dumbbell"`` in ``[topology]``).
GROUPS = ("topology", "queue", "meter", "traffic", "family")

#: The group of the scenario language's own sections (``[run]``, ``[[traffic]]``, ...):
#: each has a generated block of its own (``core.run``), beside the section's prose.
CORE = "core"


def begin_mark(group: str) -> str:
    """Return the comment line that opens a group's generated tables."""
    return (
        f"<!-- BEGIN GENERATED {group}: qossim describe --markdown; "
        "edit the declarations, not this -->"
    )


def end_mark(group: str) -> str:
    """Return the comment line that closes a group's generated tables."""
    return f"<!-- END GENERATED {group} -->"


def kinds() -> list[dict[str, Any]]:
    """Return every registered kind with its parameters (see ``_engine.describe``)."""
    return _engine.describe()


def find(name: str) -> dict[str, Any]:
    """Return the kind called ``name`` (``queue.pie``, or ``pie`` alone)."""
    every = kinds()
    for k in every:
        if name in (k["kind"], k["name"]) or name in k["aliases"]:
            return k
    names = ", ".join(k["kind"] for k in every)
    raise QossimError(f"qossim describe: unknown kind {name!r}; known kinds are: {names}")


def _default(p: dict[str, Any]) -> str:
    return str(p["default"])


def _bounds(p: dict[str, Any]) -> str:
    return str(p["bounds"]) or "any"


def list_text() -> str:
    """Return one line per kind: its qualified name and what it does."""
    every = kinds()
    width = max(len(k["kind"]) for k in every)
    return "\n".join(f"{k['kind']:<{width}}  {k['doc']}" for k in every)


def kind_text(k: dict[str, Any]) -> str:
    """Return a kind's parameters as a plain-text table."""
    aliases = f" (also {', '.join(k['aliases'])})" if k["aliases"] else ""
    lines = [
        f"{k['kind']}{aliases}: {k['title']}",
        f"  {k['doc']}",
        f"  written: {k['written']}",
        "",
    ]
    if not k["params"]:
        lines.append("  no parameters")
        return "\n".join(lines)
    rows = [("key", "type", "unit", "default", "bounds", "meaning")]
    for p in k["params"]:
        rows.append((p["key"], p["type"], p["unit"] or "-", _default(p), _bounds(p), p["doc"]))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for r in rows:
        lines.append(
            "  " + "  ".join(f"{c:<{w}}" for c, w in zip(r[:5], widths, strict=True)) + "  " + r[5]
        )
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def kind_markdown(k: dict[str, Any]) -> str:
    """Return a kind's parameters as a Markdown section with one table."""
    aliases = f" (also `{'`, `'.join(k['aliases'])}`)" if k["aliases"] else ""
    lines = [
        f"#### `{k['written']}`{aliases} — {k['title']}",
        "",
        k["doc"],
        "",
        "| key | type | unit | default | bounds | meaning |",
        "|---|---|---|---|---|---|",
    ]
    for p in k["params"]:
        lines.append(
            "| "
            + " | ".join(
                _cell(c)
                for c in (
                    f"`{p['key']}`",
                    p["type"],
                    p["unit"] or "–",
                    _default(p),
                    _bounds(p),
                    p["doc"],
                )
            )
            + " |"
        )
    return "\n".join(lines)


def _named_markdown(named: list[dict[str, Any]]) -> str:
    """Return the kinds without parameters (named models) as one table."""
    lines = ["#### Named models (no parameters)", "", "| written | meaning |", "|---|---|"]
    for k in named:
        lines.append(f"| `{_cell(k['written'])}` | {_cell(k['doc'])} |")
    return "\n".join(lines)


def markdown(group: str) -> str:
    """Return every section of ``group``, enclosed in the group's markers.

    ``group`` is a group (``queue``) or one kind (``core.run``). Kinds with parameters get
    a section each, in registry order; those without (the named traffic models) share one
    table after them.
    """
    of_group = [k for k in kinds() if group in (k["group"], k["kind"])]
    sections = [kind_markdown(k) for k in of_group if k["params"]]
    named = [k for k in of_group if not k["params"]]
    if named:
        sections.append(_named_markdown(named))
    body = "\n\n".join(sections)
    return f"{begin_mark(group)}\n\n{body}\n\n{end_mark(group)}"


def splice(document: str, group: str) -> str:
    """Return ``document`` with ``group``'s generated block rewritten."""
    begin, end = begin_mark(group), end_mark(group)
    start = document.find(begin)
    stop = document.find(end)
    if start < 0 or stop < start:
        raise QossimError(f"the document has no generated block for {group!r}")
    return document[:start] + markdown(group) + document[stop + len(end) :]


def blocks() -> list[str]:
    """Return the name of every generated block: the groups, then each core section."""
    return [*GROUPS, *(k["kind"] for k in kinds() if k["group"] == CORE)]


def splice_all(document: str) -> str:
    """Return ``document`` with every generated block rewritten."""
    for block in blocks():
        document = splice(document, block)
    return document
