"""Confidence intervals across independent runs (Student t).

Intervals within one run (batch means of a series) are computed by the engine and
reported in the run's summary (``series.NAME.ci_half_width``).

The Student-t quantile comes from :mod:`scipy` when it is installed; without
it a built-in implementation is used (a Cornish–Fisher start refined by
Newton steps on the exact t distribution function), with a relative error
below 1e-9.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "CI",
    "mean_ci",
    "normal_quantile",
    "t_cdf",
    "t_quantile",
    "t_quantile_builtin",
]


@dataclass(frozen=True)
class CI:
    """A mean with its confidence interval.

    ``n`` is the number of independent observations behind it (e.g. seeds).
    With ``n < 2`` the interval is undefined and ``low``, ``high`` and
    ``half_width`` are NaN.
    """

    mean: float
    low: float
    high: float
    half_width: float
    n: int
    confidence: float = 0.95
    std: float = math.nan

    def as_tuple(self) -> tuple[float, float, float]:
        """Return ``(mean, low, high)``."""
        return (self.mean, self.low, self.high)


# ----------------------------------------------------------------------------
# distributions
# ----------------------------------------------------------------------------

# Coefficients of P. J. Acklam's rational approximation of the normal quantile.
_A = (
    -3.969683028665376e01,
    2.209460984245205e02,
    -2.759285104469687e02,
    1.383577518672690e02,
    -3.066479806614716e01,
    2.506628277459239e00,
)
_B = (
    -5.447609879822406e01,
    1.615858368580409e02,
    -1.556989798598866e02,
    6.680131188771972e01,
    -1.328068155288572e01,
)
_C = (
    -7.784894002430293e-03,
    -3.223964580411365e-01,
    -2.400758277161838e00,
    -2.549732539343734e00,
    4.374664141464968e00,
    2.938163982698783e00,
)
_D = (
    7.784695709041462e-03,
    3.224671290700398e-01,
    2.445134137142996e00,
    3.754408661907416e00,
)


def normal_quantile(p: float) -> float:
    """Return the standard normal quantile (inverse CDF) at probability ``p``."""
    if not 0.0 < p < 1.0:
        if p == 0.0:
            return -math.inf
        if p == 1.0:
            return math.inf
        raise ValueError(f"probability must be in [0, 1], got {p}")
    low = 0.02425
    if p < low:
        q = math.sqrt(-2.0 * math.log(p))
        x = (((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5]) / (
            (((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1.0
        )
    elif p <= 1.0 - low:
        q = p - 0.5
        r = q * q
        x = (
            (((((_A[0] * r + _A[1]) * r + _A[2]) * r + _A[3]) * r + _A[4]) * r + _A[5])
            * q
            / (((((_B[0] * r + _B[1]) * r + _B[2]) * r + _B[3]) * r + _B[4]) * r + 1.0)
        )
    else:
        q = math.sqrt(-2.0 * math.log(1.0 - p))
        x = -(((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5]) / (
            (((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1.0
        )
    # One Halley step on the exact CDF brings the error to machine precision.
    err = 0.5 * math.erfc(-x / math.sqrt(2.0)) - p
    u = err * math.sqrt(2.0 * math.pi) * math.exp(x * x / 2.0)
    return x - u / (1.0 + x * u / 2.0)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """Return the Student-t distribution function with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def _t_pdf(t: float, df: float) -> float:
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_c - (df + 1) / 2 * math.log1p(t * t / df))


def _cornish_fisher(p: float, df: float) -> float:
    """Cornish–Fisher expansion of the t quantile (Abramowitz & Stegun 26.7.5)."""
    z = normal_quantile(p)
    z2 = z * z
    g1 = z * (z2 + 1) / 4
    g2 = z * ((5 * z2 + 16) * z2 + 3) / 96
    g3 = z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / 384
    g4 = z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


def t_quantile_builtin(p: float, df: float) -> float:
    """Student-t quantile without scipy: exact for df 1 and 2, else refined expansion."""
    if not 0.0 < p < 1.0:
        if p in (0.0, 1.0):
            return math.copysign(math.inf, p - 0.5)
        raise ValueError(f"probability must be in [0, 1], got {p}")
    if df <= 0:
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    if df == 1:  # Cauchy; the cotangent form keeps precision in the tails
        if abs(p - 0.5) < 0.25:
            return math.tan(math.pi * (p - 0.5))
        return math.copysign(1.0 / math.tan(math.pi * min(p, 1.0 - p)), p - 0.5)
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    if math.isinf(df):
        return normal_quantile(p)
    if df > 1e5:  # the expansion's error is far below double precision here
        return _cornish_fisher(p, df)
    if p == 0.5:
        return 0.0
    sign = 1.0 if p > 0.5 else -1.0
    # Solve for |t| on the more accurate of two forms: P(0 < T < |t|) near the
    # centre, the tail probability P(T > |t|) far from it.
    central = abs(p - 0.5) < 0.25
    target = abs(p - 0.5) if central else min(p, 1.0 - p)

    def err_of(t: float) -> float:
        if central:
            return 0.5 * _betainc(0.5, df / 2.0, t * t / (df + t * t)) - target
        return target - 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))

    guess = abs(_cornish_fisher(p, df))
    lo, hi = 0.0, max(2.0 * guess, 1.0)
    while err_of(hi) < 0:
        lo, hi = hi, hi * 2.0
    t = min(max(guess, lo), hi)
    for _ in range(200):
        err = err_of(t)
        if err > 0:
            hi = t
        else:
            lo = t
        candidate = t - err / _t_pdf(t, df)
        if not lo < candidate < hi:  # Newton left the bracket: bisect
            candidate = 0.5 * (lo + hi)
        if abs(candidate - t) <= 1e-15 * max(1.0, abs(t)):
            return sign * candidate
        t = candidate
    return sign * t


def t_quantile(p: float, df: float) -> float:
    """Return the Student-t quantile at probability ``p`` with ``df`` degrees of freedom.

    Uses scipy's ``special.stdtrit`` when scipy is installed (the function behind
    ``scipy.stats.t.ppf``, with its edge cases: NaN outside ``0 <= p <= 1`` or for
    ``df <= 0``, infinite at ``p`` = 0 and 1; importing ``scipy.stats`` costs three
    times as long), else :func:`t_quantile_builtin`.
    """
    try:
        from scipy.special import stdtrit
    except ImportError:
        return t_quantile_builtin(p, df)
    if not (df > 0 and 0.0 <= p <= 1.0):
        return math.nan
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    return float(stdtrit(df, p))


# ----------------------------------------------------------------------------
# confidence intervals
# ----------------------------------------------------------------------------


def _finite(values: Iterable[float]) -> list[float]:
    out = []
    for value in values:
        if value is None:
            continue
        number = float(value)
        if not math.isnan(number):
            out.append(number)
    return out


def _ci_of(values: Sequence[float], confidence: float) -> CI:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    n = len(values)
    if n == 0:
        return CI(math.nan, math.nan, math.nan, math.nan, 0, confidence)
    low, high = min(values), max(values)
    # The rounded quotient can fall outside [low, high] by an ulp; equal values have
    # their value as mean and no spread (not a half-width of 1e-17 from rounding).
    mean = min(max(math.fsum(values) / n, low), high)
    if n < 2:
        return CI(mean, math.nan, math.nan, math.nan, n, confidence)
    if low == high:
        return CI(low, low, low, 0.0, n, confidence, 0.0)
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    std = math.sqrt(var)
    half = t_quantile(0.5 + confidence / 2.0, n - 1) * std / math.sqrt(n)
    return CI(mean, mean - half, mean + half, half, n, confidence, std)


def mean_ci(values: Iterable[float], confidence: float = 0.95) -> CI:
    """Mean of independent observations (e.g. one per seed) with a Student-t CI.

    NaN and ``None`` values are ignored; ``n`` counts the values used.
    """
    return _ci_of(_finite(values), confidence)
