"""Confidence intervals and the Student-t quantile."""

from __future__ import annotations

import math

import pytest

from qossim import stats
from qossim.stats import mean_ci, normal_quantile, t_quantile, t_quantile_builtin

# Two-sided 95 % critical values from printed t tables.
TABLE_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 9: 2.262, 10: 2.228, 30: 2.042}


@pytest.mark.parametrize("quantile", [t_quantile, t_quantile_builtin])
@pytest.mark.parametrize(("df", "value"), sorted(TABLE_975.items()))
def test_t_quantile_matches_tables(quantile, df, value):
    """Both implementations give the tabulated 97.5 % quantiles."""
    assert quantile(0.975, df) == pytest.approx(value, abs=5e-4)


def test_t_quantile_df9_is_2_262():
    """The classic value: t(0.975, 9) = 2.262."""
    assert round(t_quantile_builtin(0.975, 9), 3) == 2.262
    assert round(t_quantile(0.975, 9), 3) == 2.262


def test_builtin_matches_scipy_closely():
    """The built-in quantile agrees with scipy to 1e-9 relative."""
    scipy_t = pytest.importorskip("scipy.stats").t
    for df in (1, 2, 3, 4, 5, 7, 9, 15, 29, 100, 1000, 2.5):
        for p in (1e-6, 0.01, 0.05, 0.3, 0.6, 0.9, 0.95, 0.975, 0.995, 0.9999):
            expected = float(scipy_t.ppf(p, df))
            assert t_quantile_builtin(p, df) == pytest.approx(expected, rel=1e-9)


def test_builtin_is_used_without_scipy(monkeypatch):
    """Without scipy, t_quantile falls back to the built-in implementation."""
    import builtins

    real_import = builtins.__import__

    def no_scipy(name, *args, **kwargs):
        if name.startswith("scipy"):
            raise ImportError("no scipy here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_scipy)
    assert stats.t_quantile(0.975, 9) == t_quantile_builtin(0.975, 9)


def test_normal_quantile():
    """Standard normal quantiles."""
    assert normal_quantile(0.975) == pytest.approx(1.959963984540054, rel=1e-12)
    assert normal_quantile(0.5) == pytest.approx(0.0, abs=1e-15)
    assert normal_quantile(1e-10) == pytest.approx(-6.361340902404056, rel=1e-9)


def test_mean_ci_known_values():
    """Mean of 1..10 is 5.5, sd 3.0277, half-width 2.262 * sd / sqrt(10)."""
    ci = mean_ci(range(1, 11))
    sd = math.sqrt(sum((x - 5.5) ** 2 for x in range(1, 11)) / 9)
    assert ci.mean == 5.5
    assert ci.n == 10
    assert ci.std == pytest.approx(sd)
    assert ci.half_width == pytest.approx(t_quantile(0.975, 9) * sd / math.sqrt(10))
    assert ci.half_width == pytest.approx(2.1659, abs=1e-4)
    assert (ci.low, ci.high) == pytest.approx((5.5 - ci.half_width, 5.5 + ci.half_width))


def test_mean_ci_edge_cases():
    """One value has no interval; NaN and None are ignored."""
    one = mean_ci([3.0])
    assert one.mean == 3.0 and one.n == 1 and math.isnan(one.low) and math.isnan(one.high)
    assert mean_ci([1.0, float("nan"), None, 3.0]).n == 2
    assert math.isnan(mean_ci([]).mean)
    ci90 = mean_ci([1, 2, 3], confidence=0.90)
    assert ci90.half_width == pytest.approx(t_quantile(0.95, 2) * 1.0 / math.sqrt(3))


def test_equal_values_have_their_value_as_mean_and_no_spread():
    """Rounding must not invent an interval (it printed '0.2058 ± 8.3e-17')."""
    from qossim.stats import mean_ci

    for value in (0.2058, 0.1, 1e-300, 123456.789):
        ci = mean_ci([value] * 3)
        assert ci.mean == value and ci.low == value and ci.high == value
        assert ci.half_width == 0.0
    ci = mean_ci([0.1, 0.2, 0.3])
    assert 0.1 <= ci.mean <= 0.3 and ci.half_width > 0
