"""Run keys (cache keys) and override handling."""

from __future__ import annotations

import hashlib

import pytest

from qossim.errors import QossimError
from qossim.params import format_value, normalize_overrides, parse_set, run_key

TEXT = '[simulation]\nduration = "10s"\n'
KEY = "c1bfd38ea7b8b4634d8f212f682bf6561ec4e4868ba54093e9a4870de421b6bc"


def test_key_is_stable_across_versions_of_this_code():
    """The key of a fixed input never changes (cached results stay valid)."""
    key = run_key(TEXT, [("traffic.load", "0.5"), ("a.b", "x")], 1, "0.1.0")
    assert key == KEY


def test_key_is_sha256_of_the_documented_payload():
    """The key is sha256 of canonical JSON of scenario, sorted overrides, seed, version."""
    payload = (
        '{"overrides":[["a.b","x"],["traffic.load","0.5"]],'
        '"scenario":"[simulation]\\nduration = \\"10s\\"\\n","seed":1,"version":"0.1.0"}'
    )
    assert hashlib.sha256(payload.encode()).hexdigest() == KEY


def test_override_order_does_not_matter():
    """Sorted overrides: the same set in another order gives the same key."""
    a = run_key(TEXT, [("a.b", "x"), ("traffic.load", "0.5")], 1, "0.1.0")
    b = run_key(TEXT, [("traffic.load", "0.5"), ("a.b", "x")], 1, "0.1.0")
    assert a == b == KEY


def test_last_setting_of_a_key_wins():
    """A key set twice counts with its last value only."""
    twice = run_key(TEXT, [("a.b", "y"), ("traffic.load", "0.5"), ("a.b", "x")], 1, "0.1.0")
    assert twice == KEY


@pytest.mark.parametrize(
    ("text", "overrides", "seed", "version"),
    [
        (TEXT + "\n", [("traffic.load", "0.5"), ("a.b", "x")], 1, "0.1.0"),
        (TEXT, [("traffic.load", "0.6"), ("a.b", "x")], 1, "0.1.0"),
        (TEXT, [("traffic.load", "0.5")], 1, "0.1.0"),
        (TEXT, [("traffic.load", "0.5"), ("a.b", "x")], 2, "0.1.0"),
        (TEXT, [("traffic.load", "0.5"), ("a.b", "x")], 1, "0.1.1"),
    ],
)
def test_every_input_changes_the_key(text, overrides, seed, version):
    """Scenario text, overrides, seed and version all enter the key."""
    assert run_key(text, overrides, seed, version) != KEY


def test_parse_set():
    """--set items split at the first '='; values keep their text."""
    assert parse_set(["a.b=1", "c = x=y", "d.e="]) == [("a.b", "1"), ("c", "x=y"), ("d.e", "")]


def test_parse_set_reports_every_bad_item():
    """Malformed items are all reported, one line each."""
    with pytest.raises(QossimError) as info:
        parse_set(["novalue", "=3", "a..b=1", "ok=1"])
    assert info.value.lines == [
        "--set novalue: expected KEY.PATH=VALUE",
        "--set =3: expected KEY.PATH=VALUE",
        "--set a..b=1: expected KEY.PATH=VALUE",
    ]


def test_format_value():
    """Python values become override strings (TOML literals, strings as is)."""
    assert format_value(True) == "true"
    assert format_value(3) == "3"
    assert format_value(0.1) == "0.1"
    assert format_value("155.52Mbps") == "155.52Mbps"
    assert format_value([1, "a"]) == '[1, "a"]'
    assert format_value({"x": 1}) == '{"x" = 1}'
    with pytest.raises(TypeError):
        format_value(object())


def test_normalize_overrides_forms():
    """Dicts, key=value strings and pairs all give the same overrides."""
    expected = [("a.b", "1"), ("c", "true")]
    assert normalize_overrides({"a.b": 1, "c": True}) == expected
    assert normalize_overrides(["a.b=1", "c=true"]) == expected
    assert normalize_overrides([("a.b", 1), ("c", True)]) == expected
    assert normalize_overrides(None) == []
