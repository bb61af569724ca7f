"""The normal, Student t, chi-square and beta distribution functions the metrics use, from scipy.special.

Each returns, bit for bit, what the matching scipy.stats method returns for a standard
distribution (scipy.stats' norm, t and beta call these same special functions; see
tests/unit/test_distribution_functions.py). Why not scipy.stats itself: importing it costs about a
second, most of what scoring a session of binary questions took, and these need only
scipy.special, which loads in a third of the time.
"""

from __future__ import annotations

import math
from typing import Any


def _special() -> Any:
    """scipy.special, imported on first use: most pytest runs never score anything."""
    import scipy.special  # imported on first use

    return scipy.special


def normal_cdf(x: float) -> float:
    """P(Z <= x) for a standard normal Z (``scipy.stats.norm.cdf``)."""
    return float(_special().ndtr(x))


def normal_sf(x: float) -> float:
    """P(Z > x) (``scipy.stats.norm.sf``)."""
    return float(_special().ndtr(-x))


def normal_ppf(q: float) -> float:
    """The q-quantile of the standard normal (``scipy.stats.norm.ppf``)."""
    return float(_special().ndtri(q))


def normal_isf(q: float) -> float:
    """The value exceeded with probability q (``scipy.stats.norm.isf``)."""
    return float(-_special().ndtri(q))


def _valid_df(df: float) -> bool:
    return df > 0  # NaN fails too, as in scipy.stats' argument check


def student_cdf(x: float, df: float) -> float:
    """P(T <= x) for Student's t with ``df`` degrees of freedom (``scipy.stats.t.cdf``)."""
    return float(_special().stdtr(df, x)) if _valid_df(df) else math.nan


def student_sf(x: float, df: float) -> float:
    """P(T > x) (``scipy.stats.t.sf``)."""
    return float(_special().stdtr(df, -x)) if _valid_df(df) else math.nan


def student_isf(q: float, df: float) -> float:
    """The value Student's t exceeds with probability q (``scipy.stats.t.isf``)."""
    if not _valid_df(df) or not 0 <= q <= 1:
        return math.nan
    if q == 0 or q == 1:  # the edges of the support, as scipy.stats returns them
        return math.inf if q == 0 else -math.inf
    return float(-_special().stdtrit(df, q))


def chi2_ppf(q: float, df: float) -> float:
    """The q-quantile of chi-square with ``df`` degrees of freedom (``scipy.stats.chi2.ppf``)."""
    if not _valid_df(df) or not 0 <= q <= 1:
        return math.nan
    if q == 1:
        return math.inf
    return float(2.0 * _special().gammaincinv(df / 2.0, q))


def _valid_beta(a: float, b: float) -> bool:
    return a > 0 and b > 0


def beta_cdf(x: float, a: float, b: float) -> float:
    """P(X <= x) for X ~ Beta(a, b) (``scipy.stats.beta.cdf``)."""
    return _beta_tail(x, a, b, "betainc", outside=(0.0, 1.0))


def beta_sf(x: float, a: float, b: float) -> float:
    """P(X > x) for X ~ Beta(a, b) (``scipy.stats.beta.sf``)."""
    return _beta_tail(x, a, b, "betaincc", outside=(1.0, 0.0))


def _beta_tail(x: float, a: float, b: float, function: str, outside: tuple[float, float]) -> float:
    """One tail of Beta(a, b) at x: scipy.special's ``function`` inside the support, and
    ``outside`` = (its value at x <= 0, at x >= 1) beyond it; NaN for invalid shapes or x."""
    if not _valid_beta(a, b) or math.isnan(x):
        return math.nan
    if x <= 0 or x >= 1:
        return outside[0] if x <= 0 else outside[1]
    return float(getattr(_special(), function)(a, b, x))


TINY_Q = 1e-300  # below: subnormal territory, where the root finders give up


def beta_ppf(q: float, a: float, b: float) -> float:
    """The q-quantile of Beta(a, b) (``scipy.stats.beta.ppf``)."""
    if not _valid_beta(a, b) or not 0 <= q <= 1:
        return math.nan
    if q == 0 or q == 1:
        return float(q)
    special = _special()
    quantile = float(special.betaincinv(a, b, q))
    if math.isnan(quantile) and q < TINY_Q and math.isfinite(a) and math.isfinite(b):
        # betaincinv gives up on subnormal q (so does scipy.stats, with a wrong value). There
        # the lower tail is its leading term, I_x(a, b) ~ x^a / (a B(a, b)): solve it for x.
        return math.exp((math.log(q) + math.log(a) + float(special.betaln(a, b))) / a)
    return quantile
