"""Statistics helpers shared by every metric: CIs and tests with explicit seeded generators."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 10_000


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    method: str  # "BCa", "percentile", "clopper-pearson" or "none"


NO_INTERVAL = Interval(float("nan"), float("nan"), "none")


def bootstrap_ci(
    data: np.ndarray,
    rng: np.random.Generator,
    statistic: Callable[..., np.ndarray] = np.mean,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> Interval:
    """Bootstrap CI over items: BCa, falling back to percentile where BCa is undefined.

    BCa is NaN on degenerate data (all values equal, or too few distinct ones); the
    percentile interval is then reported, and a constant sample gets the point interval.
    With fewer than two values there is no interval.
    """
    data = np.asarray(data, dtype=float)
    data = data[~np.isnan(data)]
    if data.size < 2:
        return NO_INTERVAL
    if np.all(data == data[0]):
        value = float(statistic(data))
        return Interval(value, value, "percentile")
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # DegenerateDataWarning: handled by the fallback
            result = stats.bootstrap(
                (data,), statistic, n_resamples=n_resamples, confidence_level=confidence,
                method=method, rng=rng, vectorized=True, axis=-1,
            )
        low, high = result.confidence_interval
        if np.isfinite(low) and np.isfinite(high):
            return Interval(float(low), float(high), method)
    return NO_INTERVAL


def wilcoxon_p(values: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p that the values are centred on 0.

    Zero differences are dropped (``zero_method="wilcox"``, the classic rule); when every
    value is zero there is no evidence of a shift and p = 1. NaN with no values. The exact
    null distribution is used for up to 50 values without ties; otherwise the normal
    approximation with tie correction (SciPy's "auto" would run a slow permutation test
    for small samples with ties, which integer answers nearly always have).
    """
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return float("nan")
    values = values[values != 0]
    if values.size == 0:
        return 1.0
    ties = np.unique(np.abs(values)).size < values.size
    method = "exact" if values.size <= 50 and not ties else "asymptotic"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.wilcoxon(values, zero_method="wilcox", alternative="two-sided", method=method).pvalue)


def proportion_ci(successes: int, trials: int, confidence: float = CONFIDENCE) -> Interval:
    """Exact (Clopper-Pearson) interval for a rate."""
    if trials <= 0:
        return NO_INTERVAL
    ci = stats.binomtest(successes, trials).proportion_ci(confidence_level=confidence, method="exact")
    return Interval(float(ci.low), float(ci.high), "clopper-pearson")
