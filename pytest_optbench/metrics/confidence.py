"""Confidence distributions: one object per estimate answers every interval and test question.

A ``Confidence`` knows, for any value v, the one-sided p values of "the true value is above v"
(``p_greater``) and "below v" (``p_less``), and the interval at any confidence level; the two
always agree, by construction:

    interval(c).low  > v   exactly when   p_greater(v) < (1 - c) / 2
    interval(c).high < v   exactly when   p_less(v)    < (1 - c) / 2

so a two-sided p (``p_value``) is below 1 - c exactly when v lies outside the level-c interval.
That is what lets a gate quote the p value of "the bound is crossed" that matches the CI it
shows, and lets Holm or Benjamini-Hochberg act on gates (see ``gate_tests``).

Methods (docs/statistics.md says why each):

* ``StudentizedBootstrap``: means of per-item values. Each tail is the wider of the
  studentized bootstrap (bootstrap-t, Efron and Tibshirani 1993, ch. 12; second-order
  accurate under skewness, Hall 1988) and Student's t (exact for normal data, conservative
  for symmetric heavy-tailed data, Efron 1969); its p value is the larger of the two.
* ``BootstrapPercentile``: whole-sample statistics (AUC, shrinkage, ...): percentile or
  bias-corrected (BC) percentile interval of bootstrap draws (Efron 1982).
* ``BetaConfidence``: rates; Clopper-Pearson, or with an effective number of checks when
  checks are clustered (Korn and Graubard 1998).
* ``EceConfidence``: expected calibration error (see ``calibration.ece_confidence``).
* ``IntervalFamily``: any nested family of intervals (p found by bisection on the level).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .distribution_functions import (
    beta_cdf,
    beta_ppf,
    beta_sf,
    normal_cdf,
    normal_isf,
    normal_ppf,
    student_cdf,
    student_isf,
    student_sf,
)
from .stats import CONFIDENCE, Interval

# The range each mean-type metric can take (answers 0-100, probabilities 0-1): its
# intervals never leave it.
NATURAL_BOUNDS: dict[str, tuple[float, float]] = {
    "skew": (-100.0, 100.0), "delta_plus": (-50.0, 50.0), "delta_minus": (-50.0, 50.0),
    "complement_violation": (0.0, 100.0), "calibration_error": (0.0, 100.0), "item_sd": (0.0, math.inf),
    "condition_effect": (-100.0, 100.0), "skew_effect": (-200.0, 200.0), "narrative_susceptibility": (-100.0, 100.0),
    "brier": (0.0, 1.0), "brier_recalibrated": (0.0, 1.0), "log_loss": (0.0, -math.log(0.001)),
    "overconfidence": (-0.5, 1.0), "accuracy": (0.0, 1.0),
}


def change_bounds(metric: str) -> tuple[float, float] | None:
    """The range of a change (current - baseline) of a metric with natural bounds."""
    if metric not in NATURAL_BOUNDS:
        return None
    low, high = NATURAL_BOUNDS[metric]
    return low - high, high - low


def _tail(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    return (1.0 - confidence) / 2.0


def min_count(a: float, draws: int) -> int:
    """Smallest count c with (c + 1) / (draws + 1) >= a, in the float arithmetic the p values use.

    A Monte Carlo p value (count + 1) / (draws + 1) is at least ``a`` exactly when the count is
    at least this; intervals use the same order statistic, so they agree with the p values.
    """
    c = max(0, math.ceil(a * (draws + 1)) - 1)
    while c > 0 and (c - 1 + 1) / (draws + 1) >= a:
        c -= 1
    while (c + 1) / (draws + 1) < a:
        c += 1
    return c


class Confidence:
    """What every confidence distribution offers. Subclasses set ``estimate`` and ``method``."""

    estimate: float
    method: str

    def p_greater(self, value: float) -> float:
        """One-sided p of H0: true value <= ``value`` (small: evidence it lies above)."""
        raise NotImplementedError

    def p_less(self, value: float) -> float:
        """One-sided p of H0: true value >= ``value`` (small: evidence it lies below)."""
        raise NotImplementedError

    def interval(self, confidence: float = CONFIDENCE) -> Interval:
        raise NotImplementedError

    def p_value(self, value: float = 0.0) -> float:
        """Two-sided p of H0: true value == ``value``; < 1 - c exactly when outside interval(c)."""
        low, high = self.p_greater(value), self.p_less(value)
        if math.isnan(low) or math.isnan(high):
            return float("nan")
        return min(1.0, 2.0 * min(low, high))


@dataclass(frozen=True)
class NoConfidence(Confidence):
    """Too little data for any interval: NaN everywhere."""

    estimate: float = float("nan")
    method: str = "none"

    def p_greater(self, value: float) -> float:
        return float("nan")

    def p_less(self, value: float) -> float:
        return float("nan")

    def interval(self, confidence: float = CONFIDENCE) -> Interval:
        _tail(confidence)
        return Interval(float("nan"), float("nan"), self.method)


@dataclass(frozen=True)
class PointConfidence(Confidence):
    """A value known exactly (fixed by design, or a sample with no spread at all)."""

    estimate: float
    method: str = "fixed"

    def p_greater(self, value: float) -> float:
        return 1.0 if value >= self.estimate else 0.0

    def p_less(self, value: float) -> float:
        return 1.0 if value <= self.estimate else 0.0

    def interval(self, confidence: float = CONFIDENCE) -> Interval:
        _tail(confidence)
        return Interval(self.estimate, self.estimate, self.method)


# --------------------------------------------------------------------------- means


@dataclass(frozen=True)
class StudentizedBootstrap(Confidence):
    """Mean of per-item values: bootstrap-t floored, tail by tail, at Student's t.

    ``t_draws`` are sorted studentized resample means (mean* - mean) / se*, finite only.

    Beyond every draw the bootstrap has nothing to say (its Monte Carlo p would be stuck at
    1 / (B + 1)); there Student's tail alone decides, so a far crossing keeps a p small
    enough for Holm over many gates whatever B is. The interval uses the same rule (at least
    the most extreme draw), so p and interval still agree at every level.
    """

    estimate: float
    se: float
    df: int
    t_draws: np.ndarray = field(repr=False)
    method: str = "bootstrap-t/Student"
    bounds: tuple[float, float] = (-math.inf, math.inf)  # the range the quantity can take

    def _t(self, value: float) -> float:
        return (self.estimate - value) / self.se

    def p_greater(self, value: float) -> float:
        if value < self.bounds[0]:
            return 0.0
        if value >= self.bounds[1]:
            return 1.0
        t = self._t(value)
        b = self.t_draws.size
        count = b - int(np.searchsorted(self.t_draws, t, side="left"))
        p_boot = (count + 1) / (b + 1) if count else 0.0
        return max(p_boot, student_sf(t, self.df))

    def p_less(self, value: float) -> float:
        if value > self.bounds[1]:
            return 0.0
        if value <= self.bounds[0]:
            return 1.0
        t = self._t(value)
        b = self.t_draws.size
        count = int(np.searchsorted(self.t_draws, t, side="right"))
        p_boot = (count + 1) / (b + 1) if count else 0.0
        return max(p_boot, student_cdf(t, self.df))

    def interval(self, confidence: float = CONFIDENCE) -> Interval:
        a = _tail(confidence)
        b = self.t_draws.size
        k = max(1, min_count(a, b))  # no draw beyond t counts as p_boot = 0 (see the class)
        student = student_isf(a, self.df)
        # p_greater(v) >= a when either part is: at least k draws >= t, or Student's sf >= a.
        upper_t = max(self.t_draws[b - k] if 0 < k <= b else (math.inf if k == 0 else -math.inf), student)
        lower_t = min(self.t_draws[k - 1] if 0 < k <= b else (-math.inf if k == 0 else math.inf), -student)
        low = max(float(self.estimate - upper_t * self.se), self.bounds[0])
        high = min(float(self.estimate - lower_t * self.se), self.bounds[1])
        return Interval(low, high, self.method)


def studentized_bootstrap(values: np.ndarray, rng: np.random.Generator, n_resamples: int,
                          bounds: tuple[float, float] | None = None, batch_cells: int = 1 << 18) -> Confidence:
    """Bootstrap-t/Student confidence for the mean of ``values`` (NaN dropped).

    ``bounds``: the range the mean can take (intervals are clipped to it, p values agree).
    Fewer than two values: no interval. No spread at all: a point (no interval can be
    estimated from the sample; the method says so).

    Resamples are drawn in batches of about ``batch_cells`` values into one reused buffer,
    small enough to stay in cache while it is summed (batches of 4 million values went to
    memory and back on every pass). The batch size changes neither the draws (one stream,
    consumed in order) nor any resample's sums (each row is summed on its own).
    """
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    n = x.size
    if n < 2:
        return NoConfidence(float(x.mean()) if n else float("nan"))
    mean = float(x.mean())
    centred = x - mean
    sd = float(np.sqrt(centred @ centred / (n - 1)))
    if sd == 0.0 or sd <= 1e-12 * max(1.0, abs(mean)):
        return PointConfidence(mean, "none: every value equal")
    means, ses = np.empty(n_resamples), np.empty(n_resamples)
    per_batch = max(1, min(n_resamples, batch_cells // n))
    buffer = np.empty(per_batch * n)
    done = 0
    while done < n_resamples:
        b = min(per_batch, n_resamples - done)
        drawn = buffer[: b * n].reshape(b, n)
        # Indices are in range by construction; "clip" spares take() the copy "raise" makes.
        np.take(centred, rng.integers(0, n, size=(b, n)), out=drawn, mode="clip")
        s1 = drawn.sum(axis=1)
        s2 = np.einsum("ij,ij->i", drawn, drawn)
        means[done:done + b] = s1 / n
        ses[done:done + b] = np.sqrt(np.maximum(s2 - s1 * s1 / n, 0.0) / (n - 1) / n)
        done += b
    return studentized_from_draws(mean, sd / math.sqrt(n), n, means + mean, ses, bounds)


def studentized_from_draws(estimate: float, se: float, n: int, mean_draws: np.ndarray,
                           se_draws: np.ndarray, bounds: tuple[float, float] | None = None) -> Confidence:
    """Bootstrap-t/Student from resample means and standard errors (e.g. weighted resamples).

    Resamples without spread (se* = 0) give no studentized value and are left out.
    """
    if not (np.isfinite(estimate) and np.isfinite(se)) or n < 2:
        return NoConfidence(estimate)
    if se <= 0:
        return PointConfidence(estimate, "none: every value equal")
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (np.asarray(mean_draws, dtype=float) - estimate) / np.asarray(se_draws, dtype=float)
    t = np.sort(t[np.isfinite(t)])
    return StudentizedBootstrap(float(estimate), float(se), n - 1, t, bounds=bounds or (-math.inf, math.inf))


# --------------------------------------------------------------------------- bootstrap draws


@dataclass(frozen=True)
class BootstrapPercentile(Confidence):
    """Percentile (``z0`` = 0) or bias-corrected percentile interval of sorted bootstrap draws.

    BC moves the percentiles by z0 = Phi^-1(share of draws below the estimate). The interval
    is widened, where needed, to contain the values in ``contains`` (by default the estimate),
    so a CI never excludes the number it is reported with.
    """

    estimate: float
    draws: np.ndarray = field(repr=False)  # sorted, finite
    z0: float = 0.0
    contains: tuple[float, ...] = ()
    method: str = "percentile"

    def _shift(self, share: float, sign: float) -> float:
        if self.z0 == 0.0:
            return share
        return normal_cdf(normal_ppf(share) + sign * 2.0 * self.z0)

    def p_greater(self, value: float) -> float:
        if self.contains and value >= min(self.contains):
            return 1.0
        b = self.draws.size
        share = (int(np.searchsorted(self.draws, value, side="right")) + 1) / (b + 1)
        return self._shift(share, -1.0)

    def p_less(self, value: float) -> float:
        if self.contains and value <= max(self.contains):
            return 1.0
        b = self.draws.size
        share = (b - int(np.searchsorted(self.draws, value, side="left")) + 1) / (b + 1)
        return self._shift(share, 1.0)

    def _level(self, a: float, sign: float) -> float:
        """The share s at which _shift(s, sign) == a."""
        if self.z0 == 0.0:
            return a
        return normal_cdf(normal_ppf(a) - sign * 2.0 * self.z0)

    def interval(self, confidence: float = CONFIDENCE) -> Interval:
        a = _tail(confidence)
        b = self.draws.size
        k_low = min_count(self._level(a, -1.0), b)
        k_high = min_count(self._level(a, 1.0), b)
        low = -math.inf if k_low == 0 else (self.draws[k_low - 1] if k_low <= b else math.inf)
        high = math.inf if k_high == 0 else (self.draws[b - k_high] if k_high <= b else -math.inf)
        # Float rounding in _shift must not break the p-value contract: nudge to the draw
        # whose p value reaches a.
        low, high = float(low), float(high)
        method = self.method
        if self.contains:
            if low > min(self.contains) or high < max(self.contains):
                method += ", extended to the estimate"
            low, high = min(low, *self.contains), max(high, *self.contains)
        return Interval(low, high, method)


def bootstrap_confidence(draws: np.ndarray, estimate: float, bias_correct: bool = True,
                         contains: tuple[float, ...] | None = None) -> Confidence:
    """Percentile (``bias_correct=False``) or BC confidence from bootstrap draws of a statistic."""
    d = np.asarray(draws, dtype=float)
    d = np.sort(d[np.isfinite(d)])
    if d.size < 2 or not np.isfinite(estimate):
        return NoConfidence(estimate)
    z0 = 0.0
    if bias_correct:
        share = float(np.count_nonzero(d < estimate) + 0.5 * np.count_nonzero(d == estimate)) / d.size
        share = min(max(share, 1 / (d.size + 1)), d.size / (d.size + 1))
        z0 = normal_ppf(share)
    keep = (float(estimate),) if contains is None else tuple(float(c) for c in contains)
    return BootstrapPercentile(float(estimate), d, z0, keep, "BC" if bias_correct else "percentile")


# --------------------------------------------------------------------------- rates


@dataclass(frozen=True)
class BetaConfidence(Confidence):
    """Clopper-Pearson on (possibly effective, non-integer) counts x of n.

    p_greater(v) = P(Beta(x, n - x + 1) <= v), the exact binomial tail for integer counts.
    """

    estimate: float
    successes: float
    trials: float
    method: str = "clopper-pearson"

    def p_greater(self, value: float) -> float:
        if value < 0:
            return 0.0
        if self.successes <= 0 or value >= 1:
            return 1.0
        return beta_cdf(value, self.successes, self.trials - self.successes + 1)

    def p_less(self, value: float) -> float:
        if value > 1:
            return 0.0
        if self.successes >= self.trials or value <= 0:
            return 1.0
        return beta_sf(value, self.successes + 1, self.trials - self.successes)

    def interval(self, confidence: float = CONFIDENCE) -> Interval:
        a = _tail(confidence)
        x, n = self.successes, self.trials
        low = 0.0 if x <= 0 else beta_ppf(a, x, n - x + 1)
        high = 1.0 if x >= n else beta_ppf(1 - a, x + 1, n - x)
        return Interval(low, high, self.method)


# --------------------------------------------------------------------------- generic families


@dataclass(frozen=True)
class IntervalFamily(Confidence):
    """Any nested family of intervals; p values by bisection on the level (to 1e-10).

    ``family(confidence)`` must widen as the confidence grows.
    """

    estimate: float
    family: Callable[[float], Interval] = field(repr=False)
    method: str = "interval family"

    def _p(self, inside: Callable[[Interval], bool]) -> float:
        # The largest tail a in (0, 0.5) whose interval still keeps the value inside.
        lo, hi = 1e-12, 0.5 - 1e-12
        if not inside(self.family(1 - 2 * lo)):
            return 0.0
        if inside(self.family(1 - 2 * hi)):
            return 1.0
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if inside(self.family(1 - 2 * mid)):
                lo = mid
            else:
                hi = mid
            if hi - lo < 1e-10:
                break
        return lo

    def p_greater(self, value: float) -> float:
        return self._p(lambda iv: iv.low <= value)

    def p_less(self, value: float) -> float:
        return self._p(lambda iv: iv.high >= value)

    def interval(self, confidence: float = CONFIDENCE) -> Interval:
        _tail(confidence)
        return self.family(confidence)


# --------------------------------------------------------------------------- calibration error


@dataclass(frozen=True)
class EceConfidence(Confidence):
    """Population ECE (l1, binned): an interval that holds both for calibrated models and not.

    lower(c) = max(0, min(plug-in - q_null, corrected - z sd))
    upper(c) = max(corrected + z sd, the estimates)

    with ``null_draws`` the plug-in ECE of the same forecasts when outcomes are drawn from
    them (consistency resampling, Broecker and Smith 2007: the ECE's distribution for a
    calibrated forecaster) and q_null their quantile at 1 - alpha (a one-sided test of
    calibration at the full alpha: at the boundary only the lower end can miss);
    ``corrected`` the bootstrap bias-corrected plug-in 2 ECE - mean(ECE*) and ``sd`` the
    bootstrap SD (a normal interval, Efron and Tibshirani 1993, ch. 10 and 13); z the normal
    quantile at 1 - alpha / 2. Near calibration the first lower term rules, away from it the
    second: the smaller of the two keeps the lower end honest in both regimes.
    """

    estimate: float
    plugin: float
    corrected: float
    sd: float
    null_draws: np.ndarray = field(repr=False)  # sorted
    contains: tuple[float, ...] = ()
    method: str = "calibration-null / bias-corrected bootstrap"

    def _normal_tail(self, x: float) -> float:
        """P(N(0,1) <= x / sd), degenerate when sd is 0."""
        if self.sd > 0:
            return normal_cdf(x / self.sd)
        return 1.0 if x >= 0 else 0.0

    def p_greater(self, value: float) -> float:
        if value < 0:
            return 0.0
        if (self.contains and value >= min(self.contains)) or value >= 1:
            return 1.0
        b = self.null_draws.size
        p_null = (b - int(np.searchsorted(self.null_draws, self.plugin - value, side="left")) + 1) / (b + 1)
        return max(p_null / 2.0, self._normal_tail(value - self.corrected))

    def p_less(self, value: float) -> float:
        if value > 1:
            return 0.0
        if (self.contains and value <= max(self.contains)) or value <= 0:
            return 1.0
        return self._normal_tail(self.corrected - value)

    def interval(self, confidence: float = CONFIDENCE) -> Interval:
        a = _tail(confidence)
        b = self.null_draws.size
        k = min_count(2 * a, b)
        null_part = self.plugin - float(self.null_draws[b - k] if 0 < k <= b else (math.inf if k == 0 else -math.inf))
        z = normal_isf(a)
        low = max(0.0, min(null_part, self.corrected - z * self.sd))
        high = min(1.0, self.corrected + z * self.sd)
        if self.contains:
            low, high = min(low, *self.contains), max(high, *self.contains)
        return Interval(low, high, self.method)
