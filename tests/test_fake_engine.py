"""The stand-in engine of the tests keeps the compiled engine's contract.

The front-end tests (command line, campaigns, backends) run on ``tests/fake_engine.py``;
they check the real contract only as long as the stand-in accepts the same scenarios,
reports mistakes in the same words and returns results of the same shape. These tests
run the same scenarios through both and compare everything but the numbers.
"""

from __future__ import annotations

import pytest

from conftest import FAKE_ENGINE_FILE, SCENARIO, _fake_engine
from qossim import _engine
from qossim.errors import EngineUnavailableError

#: The conftest scenario plus a per-traffic series.
WITH_GROUP_SERIES = (
    SCENARIO + '\n[[metric]]\nkind = "group_throughput"\ntraffic = "voice"\ninterval = "1s"\n'
)


def _real():
    # The compiled engine, whatever the test hook says.
    from qossim import _core  # type: ignore[attr-defined]

    return _core


@pytest.mark.parametrize("overrides", [[], [("traffic.0.flows", "2"), ("run.warmup", "0s")]])
def test_same_keys_series_and_units(overrides):
    """Summary keys, series names, their columns and units, and the result's fields agree."""
    fake = _fake_engine.run(WITH_GROUP_SERIES, "s.toml", 3, overrides, None)
    real = _real().run(WITH_GROUP_SERIES, "s.toml", 3, overrides, None)
    assert set(fake) == set(real)
    assert set(fake["summary"]) == set(real["summary"])
    assert list(fake["series"]) == list(real["series"])
    for name, columns in real["series"].items():
        assert set(fake["series"][name]) == set(columns), name
        if not name.endswith(".delay_cdf"):  # a distribution's points depend on its data
            assert len(fake["series"][name]["t"]) == len(columns["t"]), name
    assert fake["units"] == real["units"]
    assert fake["seed"] == real["seed"] == 3
    assert fake["sim_time_s"] == real["sim_time_s"]


@pytest.mark.parametrize(
    ("text", "overrides"),
    [
        (SCENARIO, [("traffic.0.flows", "-1"), ("run.duration", "soon")]),
        (SCENARIO, [("run.duration", "10")]),
        (SCENARIO, [("traffic.0.flows", "1.5")]),
        (SCENARIO.replace("flows = 5", "flows = -5"), []),
        (SCENARIO.replace('link = "a-b"', 'link = "a-c"', 1), []),
        (SCENARIO.replace("[topology]", "[topologie]\n[topology]"), []),
        (SCENARIO.replace('duration = "10s"\n', ""), []),
    ],
    ids=["overrides", "unquoted", "float", "in-file", "link", "section", "no-duration"],
)
def test_same_diagnostics(text, overrides):
    """Mistakes the stand-in checks are reported exactly as the engine reports them."""
    assert _fake_engine.validate(text, "s.toml", overrides) == _real().validate(
        text, "s.toml", overrides
    )


def test_hook_loads_the_stand_in(monkeypatch):
    """QOSSIM_FAKE_ENGINE names the stand-in's file; a wrong name is a clear error."""
    monkeypatch.setenv(_engine.FAKE_ENGINE_ENV, str(FAKE_ENGINE_FILE))
    assert _engine.core_version() == _fake_engine.VERSION
    monkeypatch.setenv(_engine.FAKE_ENGINE_ENV, "no/such/file.py")
    with pytest.raises(EngineUnavailableError, match="does not name a Python file"):
        _engine.core_version()
