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

#: The comment lines that enclose the generated tables in ``docs/scenarios.md``.
BEGIN_MARK = "<!-- BEGIN GENERATED: qossim describe --markdown; edit the declarations, not this -->"
END_MARK = "<!-- END GENERATED -->"


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
    lines = [f"{k['kind']}{aliases}: {k['title']}", f"  {k['doc']}", ""]
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
        f'#### `kind = "{k["name"]}"`{aliases} — {k["title"]}',
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


def markdown() -> str:
    """Return every kind's section, enclosed in the generated-block markers."""
    body = "\n\n".join(kind_markdown(k) for k in kinds())
    return f"{BEGIN_MARK}\n\n{body}\n\n{END_MARK}"


def splice(document: str, block: str) -> str:
    """Return ``document`` with the text between the markers replaced by ``block``."""
    start = document.find(BEGIN_MARK)
    end = document.find(END_MARK)
    if start < 0 or end < start:
        raise QossimError("the document has no generated block (its marker comments)")
    return document[:start] + block + document[end + len(END_MARK) :]
