"""TOML reading (standard library ``tomllib``) and writing (``tomli_w``)."""

from __future__ import annotations

import math
import re
import tomllib as _reader
from collections.abc import Mapping
from typing import Any

TOMLDecodeError = _reader.TOMLDecodeError

_LINE_RE = re.compile(r"\(at line (\d+), column \d+\)")
_POS_RE = re.compile(r"\s*\(at (?:line \d+, column \d+|end of document)\)")


def loads(text: str) -> dict[str, Any]:
    """Parse TOML text into a dictionary."""
    return _reader.loads(text)


def dumps(data: Mapping[str, Any]) -> str:
    """Serialise a mapping to TOML text (needs the ``tomli_w`` package)."""
    import tomli_w

    return tomli_w.dumps(data)


def error_line(exc: Exception, text: str = "") -> int:
    """Return the line number a TOML decoding error points at (1 if unknown)."""
    lineno = getattr(exc, "lineno", None)
    if isinstance(lineno, int):
        return lineno
    match = _LINE_RE.search(str(exc))
    if match:
        return int(match.group(1))
    if "end of document" in str(exc):
        return max(1, text.count("\n") + (0 if text.endswith("\n") else 1))
    return 1


def error_reason(exc: Exception) -> str:
    """Return a TOML decoding error's message without its position suffix."""
    msg = getattr(exc, "msg", None)
    if isinstance(msg, str) and msg:
        return msg
    return _POS_RE.sub("", str(exc)).strip()


def parse_value(text: str) -> Any:
    """Interpret an override value: a TOML literal when it is one, else a string."""
    try:
        return _reader.loads(f"v = {text}")["v"]
    except _reader.TOMLDecodeError:
        return text


def literal(value: Any) -> str:
    """Render a Python value as an override string.

    Strings pass through unchanged (``"155Mbps"`` stays ``155Mbps``); booleans,
    numbers, lists and tables become TOML literals.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return _inline(value)
    raise TypeError(f"cannot use a {type(value).__name__} as a scenario value")


def _inline(value: Any) -> str:
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, Mapping):
        items = ", ".join(f"{_quote(str(k))} = {_inline(v)}" for k, v in value.items())
        return "{" + items + "}"
    return literal(value)


def _quote(text: str) -> str:
    out = ['"']
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)
