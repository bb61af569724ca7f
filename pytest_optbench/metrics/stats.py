"""Statistics helpers shared by every metric: CIs and tests with explicit seeded generators."""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .distribution_functions import normal_sf


def _scipy_stats() -> Any:
    """SciPy's stats, imported on first use: pytest loads this plugin in every run, and most
    runs never score anything."""
    from scipy import stats  # imported on first use

    return stats


CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 10_000
BATCH_CELLS = 4_000_000  # resample matrices are built in batches of about this many cells


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    method: str  # "BCa", "percentile", "clopper-pearson" or "none"


NO_INTERVAL = Interval(float("nan"), float("nan"), "none")


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
    # What scipy.stats.wilcoxon computes for these two methods, in its order of operations,
    # without its per-call machinery (most of the Skew family's scoring time). The ranks are
    # halves and their sums below 2**53: exact in any order.
    _, rank_of, ties = np.unique(np.abs(values), return_inverse=True, return_counts=True)
    r_plus = float(_average_ranks(ties)[rank_of][values > 0].sum())
    if values.size <= 50 and ties.size == values.size:
        return _wilcoxon_exact_p(values.size, int(r_plus))
    return _wilcoxon_normal_p(values.size, r_plus, ties)


def _average_ranks(counts: np.ndarray) -> np.ndarray:
    """The average rank of each distinct value, given how many times each occurs (in sorted
    order): the ranks before it plus the middle of its run."""
    ranks: np.ndarray = (np.cumsum(counts) - counts) + (counts + 1) / 2
    return ranks


@functools.lru_cache(maxsize=64)
def _wilcoxon_null(n: int) -> np.ndarray:
    """P(r_plus = k) for k = 0 .. n(n+1)/2 under the null, built as SciPy builds it
    (``scipy.stats._hypotests._get_wilcoxon_distr``): halving and shifting, n times."""
    pmf = np.ones(1, dtype=np.float64)
    for k in range(1, n + 1):
        previous = pmf
        pmf = np.zeros(k * (k + 1) // 2 + 1, dtype=np.float64)
        m = len(previous)
        pmf[:m] = previous * 0.5
        pmf[-m:] += previous * 0.5
    pmf.setflags(write=False)
    return pmf


def _wilcoxon_exact_p(n: int, r_plus: int) -> float:
    """SciPy's exact two-sided p (``WilcoxonDistribution``): twice the smaller tail, each
    tail summed from its own end up to the mean."""
    pmf, mean = _wilcoxon_null(n), n * (n + 1) / 4
    sf = float(pmf[r_plus:].sum()) if r_plus <= mean else 1 - float(pmf[:r_plus].sum())
    cdf = float(pmf[:r_plus + 1].sum()) if r_plus <= mean else 1 - float(pmf[r_plus + 1:].sum())
    return min(max(2 * min(sf, cdf), 0.0), 1.0)


def _wilcoxon_normal_p(n: int, r_plus: float, ties: np.ndarray) -> float:
    """SciPy's asymptotic p: the positive values' rank sum against its tie-corrected normal
    null, no continuity correction."""
    count = float(n)
    mean = count * (count + 1.0) * 0.25
    spread = count * (count + 1.0) * (2.0 * count + 1.0)
    tie_correction = float(np.sum(ties.astype(float) ** 3 - ties))
    z = (r_plus - mean) / math.sqrt((spread - tie_correction / 2) / 24)
    return 2 * normal_sf(abs(z))


def mann_whitney_p(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided Mann-Whitney U p that x and y come from one distribution: what
    ``scipy.stats.mannwhitneyu(x, y)`` returns with its defaults.

    SciPy's "auto" rule takes the normal approximation (tie-corrected, with continuity
    correction) when both samples exceed 8 or any value ties, and the exact null otherwise.
    The approximation is computed here, in SciPy's own order of operations, so that scoring
    binary questions need not import scipy.stats (about a second); the exact case, small
    samples only, asks SciPy. NaN when a sample is empty or holds NaN.
    """
    x, y = np.asarray(x, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
    n1, n2 = x.size, y.size
    if n1 == 0 or n2 == 0 or np.isnan(x).any() or np.isnan(y).any():
        return float("nan")
    _, group, ties = np.unique(np.concatenate([x, y]), return_inverse=True, return_counts=True)
    if (n1 <= 8 or n2 <= 8) and not (ties > 1).any():
        return float(_scipy_stats().mannwhitneyu(x, y).pvalue)
    u1 = float(_average_ranks(ties)[group[:n1]].sum()) - n1 * (n1 + 1) / 2
    u = max(u1, n1 * n2 - u1)
    n = n1 + n2
    tie_term = float(np.sum(ties.astype(float) ** 3 - ties))
    s = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
    z = (u - n1 * n2 / 2 - 0.5) / s if s > 0 else math.copysign(math.inf, u - n1 * n2 / 2 - 0.5)
    return min(max(2 * normal_sf(z), 0.0), 1.0)


def proportion_ci(successes: int, trials: int, confidence: float = CONFIDENCE) -> Interval:
    """Exact (Clopper-Pearson) interval for a rate."""
    if trials <= 0:
        return NO_INTERVAL
    ci = _scipy_stats().binomtest(successes, trials).proportion_ci(confidence_level=confidence, method="exact")
    return Interval(float(ci.low), float(ci.high), "clopper-pearson")


def paired_permutation_p(differences: np.ndarray, rng: np.random.Generator, n_resamples: int = DEFAULT_RESAMPLES) -> float:
    """Two-sided sign-flip permutation test that paired differences are centred on 0.

    Exchanging the two conditions within an item flips the sign of its difference. All 2^n
    flips are enumerated when that is no more than ``n_resamples`` (exact p); otherwise
    random flips give the Monte Carlo p = (1 + #{|null| >= |observed|}) / (1 + resamples),
    which is never 0. Vectorised as one matrix product per batch.
    """
    d = np.asarray(differences, dtype=float)
    d = d[~np.isnan(d)]
    if d.size == 0:
        return float("nan")
    if np.all(d == 0) or d.size == 1:
        return 1.0  # one item: both sign flips give the same |mean|
    observed = abs(d.sum())
    tolerance = 1e-9 * max(1.0, float(np.abs(d).sum()))  # ties in floating point count as extreme
    if 2 ** d.size <= n_resamples:
        codes = np.arange(2 ** d.size)[:, None] >> np.arange(d.size) & 1
        null = np.abs((1 - 2 * codes) @ d)
        return float(np.mean(null >= observed - tolerance))
    extreme, done = 0, 0
    batch = max(1, min(n_resamples, BATCH_CELLS // d.size))
    while done < n_resamples:
        b = min(batch, n_resamples - done)
        signs = rng.integers(0, 2, size=(b, d.size), dtype=np.int8) * 2 - 1
        extreme += int(np.count_nonzero(np.abs(signs @ d) >= observed - tolerance))
        done += b
    return (1 + extreme) / (1 + n_resamples)


def sign_test_p(differences: np.ndarray) -> float:
    """Two-sided exact sign test; zero differences are dropped."""
    d = np.asarray(differences, dtype=float)
    d = d[~np.isnan(d) & (d != 0)]
    if d.size == 0:
        return 1.0
    return float(_scipy_stats().binomtest(int((d > 0).sum()), int(d.size), 0.5).pvalue)


def tost_p(differences: np.ndarray, margin: float) -> float:
    """Equivalence (TOST): p that the mean paired difference lies within (-margin, +margin).

    The larger of the two one-sided t-test p values; small p supports equivalence.
    """
    d = np.asarray(differences, dtype=float)
    d = d[~np.isnan(d)]
    if d.size < 2 or margin <= 0:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lower = _scipy_stats().ttest_1samp(d, -margin, alternative="greater").pvalue
        upper = _scipy_stats().ttest_1samp(d, margin, alternative="less").pvalue
    if not (np.isfinite(lower) and np.isfinite(upper)):  # zero variance
        return 0.0 if abs(float(d.mean())) < margin else 1.0
    return float(max(lower, upper))


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm step-down adjusted p values (family-wise error); NaN entries stay NaN."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    finite = np.flatnonzero(np.isfinite(p))
    if finite.size == 0:
        return out
    order = finite[np.argsort(p[finite], kind="stable")]
    m = order.size
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(adjusted, 1.0)
    return out


def benjamini_hochberg(p_values: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p values (false discovery rate); NaN entries stay NaN.

    What ``scipy.stats.false_discovery_control(p, method="bh")`` returns, bit for bit, in its
    order of operations: the gates are adjusted after the items, where importing scipy.stats
    for this alone would cost about a second.
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    finite = np.flatnonzero(np.isfinite(p))
    if finite.size:
        order = finite[np.argsort(p[finite])]
        m = order.size
        adjusted = p[order] * (m / np.arange(1, m + 1, dtype=float))
        out[order] = np.clip(np.minimum.accumulate(adjusted[::-1])[::-1], 0.0, 1.0)
    return out
