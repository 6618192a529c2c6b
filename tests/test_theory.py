"""Queueing theory formulas against textbook values."""

from __future__ import annotations

import math

import pytest

from qossim import theory


def test_erlang_b_textbook_values():
    """Erlang-B table values."""
    assert theory.erlang_b(10, 10) == pytest.approx(0.2146, abs=5e-5)
    assert theory.erlang_b(2, 5) == pytest.approx(0.0367, abs=5e-5)
    assert theory.erlang_b(1, 1) == pytest.approx(0.5)
    assert theory.erlang_b(5, 0) == 1.0
    assert theory.erlang_b(0, 3) == 0.0


def test_erlang_b_matches_direct_formula():
    """The recursion equals (E^c/c!) / sum_k E^k/k! where the sum is computable."""
    for offered in (0.5, 3.0, 10.0, 25.0):
        for servers in (1, 5, 20, 40):
            terms = [offered**k / math.factorial(k) for k in range(servers + 1)]
            assert theory.erlang_b(offered, servers) == pytest.approx(terms[-1] / sum(terms))


def test_erlang_b_is_stable_for_large_systems():
    """The recursion stays finite where factorials would overflow."""
    value = theory.erlang_b(1000.0, 1000)
    assert 0.0 < value < 0.03


def test_erlang_c():
    """Erlang C from Erlang B; M/M/1 case is rho."""
    assert theory.erlang_c(0.5, 1) == pytest.approx(0.5)
    assert theory.erlang_c(10, 11) == pytest.approx(0.6821, abs=5e-5)


def test_mm1():
    """M/M/1 means for lam = 0.5, mu = 1."""
    assert theory.mm1_sojourn(0.5, 1.0) == pytest.approx(2.0)
    assert theory.mm1_number(0.5, 1.0) == pytest.approx(1.0)
    assert theory.mm1_wait(0.5, 1.0) == pytest.approx(1.0)
    assert theory.mm1_queue_number(0.5, 1.0) == pytest.approx(0.5)
    assert theory.mm1_sojourn(800, 1000) == pytest.approx(0.005)
    assert theory.mm1_number(800, 1000) == pytest.approx(4.0)


def test_md1_pollaczek_khinchine():
    """M/D/1 waits half as long as M/M/1 at the same load."""
    assert theory.md1_wait(800, 1000) == pytest.approx(0.8 / (2 * 1000 * 0.2))
    assert theory.md1_wait(800, 1000) == pytest.approx(theory.mm1_wait(800, 1000) / 2)
    assert theory.md1_sojourn(0.5, 1.0) == pytest.approx(1.5)
    assert theory.md1_number(0.5, 1.0) == pytest.approx(0.75)


@pytest.mark.parametrize(
    "call",
    [
        lambda: theory.mm1_sojourn(1.0, 1.0),
        lambda: theory.md1_wait(2.0, 1.0),
        lambda: theory.mm1_number(-1.0, 1.0),
        lambda: theory.mm1_wait(0.5, 0.0),
        lambda: theory.erlang_b(-1.0, 3),
        lambda: theory.erlang_b(1.0, 2.5),
        lambda: theory.erlang_c(5.0, 5),
    ],
)
def test_invalid_inputs_raise(call):
    """Unstable or meaningless inputs raise ValueError."""
    with pytest.raises(ValueError):
        call()
