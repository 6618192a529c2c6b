"""The validation study's theory values, its seeds per row, and its interval's coverage.

The coverage test runs the compiled engine; the others are pure arithmetic.
"""

from __future__ import annotations

import math
import os
import statistics

import pytest

import qossim
from qossim import stats, theory
from qossim.studies import validation
from qossim.studies.frame import CONFIDENCE, ci_of

needs_engine = pytest.mark.skipif(
    bool(os.environ.get("QOSSIM_FAKE_ENGINE")), reason="needs the real engine"
)


def test_geometric_second_moment_by_summation():
    """E[S^2] of the geometric sizes, summed term by term, is m (2m - 1) bytes^2.

    The sum runs over the probability mass function P(N = n) = p (1 - p)^(n - 1) that the
    engine draws from (p = 1/m), up to the n whose tail probability (1 - p)^n is below
    1e-20: the second moment left out is below 1e-10 of the total.
    """
    m = validation.PACKET_BYTES
    p = 1.0 / m
    last = math.ceil(math.log(1e-20) / math.log1p(-p))
    probs = [p * (1.0 - p) ** (n - 1) for n in range(1, last + 1)]
    assert math.fsum(probs) == pytest.approx(1.0, abs=1e-12)
    total = math.fsum(n * n * q for n, q in enumerate(probs, start=1))
    es, es2 = validation.service_moments_geometric(validation.MU)
    per_byte = 1.0 / (validation.MU * m)
    assert es == pytest.approx(1.0 / validation.MU, rel=1e-15)
    assert es2 == pytest.approx(total * per_byte * per_byte, rel=1e-9)
    assert es2 == pytest.approx((2.0 - 1.0 / m) * es * es, rel=1e-15)


@pytest.mark.parametrize("rho", [0.3, 0.5, 0.7, 0.8, 0.9])
def test_mm1_theory_is_pollaczek_khinchine_for_geometric_sizes(rho):
    """The M/M/1 rows compare with 1/(mu - lam) and rho/(1 - rho) less rho/(2 m).

    Worked by hand at rho = 0.8: Wq = 800 x 1.999e-6 / 0.4 = 3.998 ms, W = 4.998 ms.
    """
    mu = validation.MU
    lam = rho * mu
    shrink = 1.0 - rho / (2 * validation.PACKET_BYTES)
    sojourn = validation.geometric_mm1_sojourn(lam, mu)
    number = validation.geometric_mm1_number(lam, mu)
    assert sojourn == pytest.approx(theory.mm1_sojourn(lam, mu) * shrink, rel=1e-12)
    assert number == pytest.approx(theory.mm1_number(lam, mu) * shrink, rel=1e-12)
    assert number == pytest.approx(lam * sojourn, rel=1e-15)
    if rho == 0.8:
        assert sojourn == pytest.approx(4.998e-3, rel=1e-12)
        assert number == pytest.approx(3.9984, rel=1e-12)


def test_mg1_reduces_to_mm1_and_md1():
    """Pollaczek–Khinchine with exponential or constant service moments."""
    lam, mu = 700.0, 1000.0
    es = 1.0 / mu
    assert theory.mg1_wait(lam, es, 2 * es * es) == pytest.approx(theory.mm1_wait(lam, mu))
    assert theory.mg1_sojourn(lam, es, 2 * es * es) == pytest.approx(theory.mm1_sojourn(lam, mu))
    assert theory.mg1_number(lam, es, 2 * es * es) == pytest.approx(theory.mm1_number(lam, mu))
    assert theory.mg1_wait(lam, es, es * es) == pytest.approx(theory.md1_wait(lam, mu))
    for bad in [(1000.0, es, 2 * es * es), (lam, 0.0, 1.0), (lam, es, 0.5 * es * es)]:
        with pytest.raises(ValueError):
            theory.mg1_wait(*bad)


def test_every_row_runs_seeds_of_its_own():
    """Rows of the full and quick plans never share a seed; seeds off the grid are refused."""
    for plan in (validation.FULL, validation.QUICK):
        rows = max(len(plan.loads), len(plan.offered_erlang))
        sets = [set(validation.row_seeds(plan.seeds, r)) for r in range(rows)]
        assert all(len(s) == len(plan.seeds) for s in sets)
        assert len(set().union(*sets)) == rows * len(plan.seeds)
        assert validation.row_seeds(plan.seeds, 0) == plan.seeds
    with pytest.raises(ValueError):
        validation.row_seeds((0, 1), 1)
    with pytest.raises(ValueError):
        validation.row_seeds((validation.ROW_SEED_STRIDE,), 1)


def _binomial_upper(n: int, p: float, alpha: float) -> int:
    """Smallest k with P(X > k) <= alpha for X ~ Binomial(n, p)."""
    cdf = 0.0
    for k in range(n + 1):
        cdf += math.comb(n, k) * p**k * (1 - p) ** (n - k)
        if 1.0 - cdf <= alpha:
            return k
    return n


@needs_engine
def test_the_study_interval_covers_theory_as_often_as_it_claims():
    """The study's 95% interval over 10 seeds, built again and again from independent runs
    of a cheap M/M/1 case (rho = 0.5, 5 s measured after 1 s warm-up), misses the exact
    theory no more often than a correct engine would: the misses are Binomial(G, 0.05),
    and more than its 99.9% quantile fails. An interval too narrow for the runs (correlated
    replications, a biased mean) misses far more often. The pooled mean of all runs must
    also hold the theory in its 99.9% interval (half-width about 0.7%).
    """
    groups, per_group = 80, 10
    rho = 0.5
    lam, mu = rho * validation.MU, validation.MU
    scenario = validation.scenario_mm1(lam, mu, duration_s=6.0, warmup_s=1.0)
    exact = validation.geometric_mm1_sojourn(lam, mu)
    values = [
        validation.measured_queue(qossim.run(scenario, seed=seed).summary)["sojourn_s"]
        for seed in range(1, groups * per_group + 1)
    ]
    misses = 0
    for g in range(groups):
        ci = ci_of(values[g * per_group : (g + 1) * per_group], CONFIDENCE)
        misses += not ci.low <= exact <= ci.high
    limit = _binomial_upper(groups, 1.0 - CONFIDENCE, 0.001)
    pooled = stats.mean_ci(values, 0.999)
    print(
        f"misses {misses}/{groups} (expected {groups * (1 - CONFIDENCE):.0f}, limit {limit}); "
        f"pooled {(pooled.mean - exact) / exact:+.4%} ± {pooled.half_width / exact:.4%}, "
        f"sd per run {statistics.stdev(values) / exact:.2%}"
    )
    assert misses <= limit
    assert pooled.low <= exact <= pooled.high
