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
    normal_sf,
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
    """What every confidence distribution offers. Subclasses set ``estimate`` and ``method``.

    ``reason`` is None when the distribution gives an honest interval, else one sentence
    saying why there is none (no spread, perfect separation, too few items, a bias
    correction beyond the bootstrap's draws): gates on such an estimate are not evaluated.
    """

    estimate: float
    method: str

    @property
    def reason(self) -> str | None:
        return None

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
    """No honest interval: NaN everywhere, and ``why`` says why (empty: too little data)."""

    estimate: float = float("nan")
    method: str = "none"
    why: str = ""

    @property
    def reason(self) -> str | None:
        return self.why or None  # no reason given: too little data (the interval is NaN)

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

    ``t_draws`` are sorted studentized resample means (mean* - mean) / se*, finite only;
    ``se_ratios`` the same resamples' se* / se, in the same order (empty when not kept): the
    joint draws ``power.detectable_crossing`` simulates a gate's power from (float32: a
    power's quantile needs no more, and a session holds one per mean aggregate, 1,456 in the
    full bank's).

    Beyond every draw the bootstrap has nothing to say (its Monte Carlo p would be stuck at
    1 / (B + 1)); there Student's tail alone decides, so a far crossing keeps a p small
    enough for Holm over many gates whatever B is. The interval uses the same rule (at least
    the most extreme draw), so p and interval still agree at every level.

    ``high_sd`` / ``low_sd``: floors under the upper / lower end, estimate +- z sd with normal
    quantiles (the binary scores' spread from their outcomes, ``calibration.null_sd_floor``;
    0: none). Each one's p value joins its side's as a third part, so the two still agree.
    """

    estimate: float
    se: float
    df: int
    t_draws: np.ndarray = field(repr=False)
    method: str = "bootstrap-t/Student"
    bounds: tuple[float, float] = (-math.inf, math.inf)  # the range the quantity can take
    se_ratios: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)
    high_sd: float = 0.0
    low_sd: float = 0.0

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
        p_floor = normal_sf((self.estimate - value) / self.low_sd) if self.low_sd > 0 else 0.0
        return max(p_boot, student_sf(t, self.df), p_floor)

    def p_less(self, value: float) -> float:
        if value > self.bounds[1]:
            return 0.0
        if value <= self.bounds[0]:
            return 1.0
        t = self._t(value)
        b = self.t_draws.size
        count = int(np.searchsorted(self.t_draws, t, side="right"))
        p_boot = (count + 1) / (b + 1) if count else 0.0
        p_floor = normal_cdf((self.estimate - value) / self.high_sd) if self.high_sd > 0 else 0.0
        return max(p_boot, student_cdf(t, self.df), p_floor)

    def interval(self, confidence: float = CONFIDENCE) -> Interval:
        a = _tail(confidence)
        b = self.t_draws.size
        k = max(1, min_count(a, b))  # no draw beyond t counts as p_boot = 0 (see the class)
        student = student_isf(a, self.df)
        # p_greater(v) >= a when either part is: at least k draws >= t, or Student's sf >= a.
        upper_t = max(self.t_draws[b - k] if 0 < k <= b else (math.inf if k == 0 else -math.inf), student)
        lower_t = min(self.t_draws[k - 1] if 0 < k <= b else (-math.inf if k == 0 else math.inf), -student)
        low, high = float(self.estimate - upper_t * self.se), float(self.estimate - lower_t * self.se)
        if self.low_sd > 0:
            low = min(low, self.estimate - normal_isf(a) * self.low_sd)
        if self.high_sd > 0:
            high = max(high, self.estimate + normal_isf(a) * self.high_sd)
        return Interval(max(low, self.bounds[0]), min(high, self.bounds[1]), self.method)


NO_SPREAD = "every value equal: no spread to estimate an interval from"
# A resample's sum of squares at or below this share of the sample's is float rounding of
# values that are equal (relative differences ~1e-15 give shares ~1e-30), not spread.
ROUNDING = 1e-24
FLOORED = "Student, SD floored at the answers' resolution"


def studentized_bootstrap(values: np.ndarray, rng: np.random.Generator, n_resamples: int,
                          bounds: tuple[float, float] | None = None, batch_cells: int = 1 << 18,
                          sd_floor: float = 0.0) -> Confidence:
    """Bootstrap-t/Student confidence for the mean of ``values`` (NaN dropped).

    ``bounds``: the range the mean can take (intervals are clipped to it, p values agree).
    Fewer than two values: no interval.

    ``sd_floor``: the smallest per-item SD the measurement can resolve (values built from
    answers rounded to whole percentage points cannot show a spread below the rounding's,
    ``resolution_sd``). A sample whose SD lies below it (no spread at all, or less than the
    rounding hides) gets Student's interval with the SD at the floor: its own spread, and
    any bootstrap of it, says nothing. Without a floor, a sample with no spread gets the
    exact bound of ``NoSpreadConfidence`` when the quantity has a finite range, else no
    interval (``NoConfidence`` with the reason). Resamples whose SD lies below the floor are
    left out, as resamples of one value are.

    Resamples are drawn in batches of about ``batch_cells`` values into one reused buffer,
    small enough to stay in cache while it is summed (batches of 4 million values went to
    memory and back on every pass). The batch size changes neither the draws (one stream,
    consumed in order) nor any resample's sums (each row is summed on its own). A resample
    that repeats a single value has no spread: it is found exactly (its largest and smallest
    value are equal) and left out, whatever the one-pass variance rounds to.
    """
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    n = x.size
    if n < 2:
        return NoConfidence(float(x.mean()) if n else float("nan"))
    mean = float(x.mean())
    centred = x - mean
    sd = float(np.sqrt(centred @ centred / (n - 1)))
    no_spread = bool(x.max() == x.min()) or sd <= 1e-12 * max(1.0, abs(mean))
    if sd_floor > 0 and (no_spread or sd < sd_floor):
        return StudentizedBootstrap(mean, sd_floor / math.sqrt(n), n - 1, np.empty(0), FLOORED,
                                    bounds=bounds or (-math.inf, math.inf))
    if no_spread:
        return no_spread_confidence(mean, n, bounds)
    means, ses = np.empty(n_resamples), np.empty(n_resamples)
    per_batch = max(1, min(n_resamples, batch_cells // n))
    buffer = np.empty(per_batch * n)
    done = 0
    tiny = 1e-9 * float(centred @ centred)  # rows whose one-pass sum of squares may be rounding
    while done < n_resamples:
        b = min(per_batch, n_resamples - done)
        drawn = buffer[: b * n].reshape(b, n)
        # Indices are in range by construction; "clip" spares take() the copy "raise" makes.
        np.take(centred, rng.integers(0, n, size=(b, n)), out=drawn, mode="clip")
        s1 = drawn.sum(axis=1)
        s2 = np.einsum("ij,ij->i", drawn, drawn)
        ss = np.maximum(s2 - s1 * s1 / n, 0.0)
        suspect = np.flatnonzero(ss <= tiny)
        if suspect.size:  # no spread when max == min; else a two-pass sum of squares
            rows = drawn[suspect]
            exact = ((rows - rows.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
            # Values that differ only by float rounding (7.2 and 7.200000000000001, two
            # means of the same answers summed in another order) are one value too.
            flat = (rows.max(axis=1) == rows.min(axis=1)) | (exact <= ROUNDING * float(centred @ centred))
            ss[suspect] = np.where(flat, 0.0, exact)
        means[done:done + b] = s1 / n
        ses[done:done + b] = np.sqrt(ss / (n - 1) / n)
        done += b
    if sd_floor > 0:
        # A resample whose spread lies below the answers' resolution has none that the
        # measurement can show (two items at Skew 11.2 and 11.15 of three): left out like a
        # resample of one value, not kept with t* ~ 100.
        ses[ses < sd_floor / math.sqrt(n)] = 0.0
    return studentized_from_draws(mean, sd / math.sqrt(n), n, means + mean, ses, bounds)


def no_spread_confidence(value: float, n: int, bounds: tuple[float, float] | None) -> Confidence:
    """n values all equal to ``value``: the exact bound when the range is finite, else none."""
    if bounds is not None and all(math.isfinite(b) for b in bounds) and bounds[0] <= value <= bounds[1]:
        return NoSpreadConfidence(value, n, bounds)
    return NoConfidence(value, why=NO_SPREAD)


@dataclass(frozen=True)
class NoSpreadConfidence(Confidence):
    """The mean of a quantity with a finite range when all n sampled items gave one value v.

    Only the share f of items in the population that differ from v is unknown, and n items
    without one such item bound it exactly: f <= 1 - a^(1/n) at one-sided level a (the
    Clopper-Pearson bound for 0 of n, whose 1 - a = 95% form is the "rule of three",
    Hanley and Lippman-Hand 1983). The mean then lies within v - f (v - low) and
    v + f (high - v), whatever the other items' values: conservative, never a point.
    p_greater(x) = (1 - (v - x) / (v - low))^n, and likewise above, agree with it.
    """

    estimate: float
    items: int
    bounds: tuple[float, float]
    method: str = "exact bound: no spread in the sample (0 of n items differ)"

    def _p(self, distance: float, room: float) -> float:
        if distance <= 0:
            return 1.0
        if distance > room:
            return 0.0
        return float((1.0 - distance / room) ** self.items)

    def p_greater(self, value: float) -> float:
        return self._p(self.estimate - value, self.estimate - self.bounds[0])

    def p_less(self, value: float) -> float:
        return self._p(value - self.estimate, self.bounds[1] - self.estimate)

    def interval(self, confidence: float = CONFIDENCE) -> Interval:
        a = _tail(confidence)
        share = 1.0 - a ** (1.0 / self.items)
        v, (low, high) = self.estimate, self.bounds
        return Interval(v - share * (v - low), v + share * (high - v), self.method)


def studentized_from_draws(estimate: float, se: float, n: int, mean_draws: np.ndarray,
                           se_draws: np.ndarray, bounds: tuple[float, float] | None = None) -> Confidence:
    """Bootstrap-t/Student from resample means and standard errors (e.g. weighted resamples).

    Resamples without spread (se* = 0) give no studentized value and are left out. A sample
    without spread (se = 0) has no interval of this kind: see ``no_spread_confidence``.
    """
    if not (np.isfinite(estimate) and np.isfinite(se)) or n < 2:
        return NoConfidence(estimate)
    if se <= 0:
        return no_spread_confidence(float(estimate), n, bounds)
    ses = np.asarray(se_draws, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (np.asarray(mean_draws, dtype=float) - estimate) / ses
    kept = np.isfinite(t)
    order = np.argsort(t[kept], kind="stable")
    return StudentizedBootstrap(float(estimate), float(se), n - 1, t[kept][order], bounds=bounds or (-math.inf, math.inf),
                                se_ratios=(ses[kept][order] / se).astype(np.float32))


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
    if d[0] == d[-1]:
        return NoConfidence(float(estimate), why=f"every bootstrap draw is {d[0]:.4g}: no spread to estimate an "
                                                 "interval from (e.g. perfectly separated or identical items)")
    z0 = 0.0
    if bias_correct:
        share = float(np.count_nonzero(d < estimate) + 0.5 * np.count_nonzero(d == estimate)) / d.size
        share = min(max(share, 1 / (d.size + 1)), d.size / (d.size + 1))
        z0 = normal_ppf(share)
    keep = (float(estimate),) if contains is None else tuple(float(c) for c in contains)
    cd = BootstrapPercentile(float(estimate), d, z0, keep, "BC" if bias_correct else "percentile")
    if bias_correct:
        # BC's corrected percentiles Phi(2 z0 -+ z) leave the draws when |z0| is large (a
        # statistic biased far beyond its bootstrap spread): the interval would have an
        # infinite end. That is no interval, and says so.
        iv = cd.interval()
        if not (math.isfinite(iv.low) and math.isfinite(iv.high)):
            return NoConfidence(float(estimate), why=(
                f"the bias correction (z0 = {z0:+.2f}) puts the 95% interval beyond all {d.size} bootstrap "
                "draws: the estimate is biased far beyond its bootstrap spread"))
    return cd


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
    """A calibration gap (population ECE, reliability): an interval that holds for calibrated
    models and for models far from calibration.

    lower(c) = max(0, min(plug-in - q_null(1 - a), cross - z_a cross_se))
    upper(c) = max(corrected + z_a sd, the estimates)

    with a = (1 - c) / 2 and z_a the normal quantile at 1 - a.

    * ``null_draws``: the plug-in of the same forecasts when outcomes are drawn from them
      (consistency resampling, Broecker and Smith 2007: the statistic's distribution for a
      calibrated forecaster); its 1 - a quantile makes the first term a one-sided test of
      calibration at level a, the level of an ``evidence: ci`` gate (2.5%).
    * ``cross`` and ``cross_se``: a cross-fitted estimate and its standard error. The plug-in
      is biased upward because each bin's |gap| (or gap^2) is judged on the same items that
      make it; the cross-fitted version takes each item's sign (or partner) from the other
      items only (of its bin, leave one out, or of the nearest bins for an item alone in
      its bin; sample splitting in the sense of Chernozhukov et al. 2018), which removes
      that selection bias, and is a mean of per-item terms, so its
      standard error is the usual one. Away from calibration it gives the lower end.
    * ``corrected``: the bootstrap bias-corrected plug-in 2 plug-in - mean(plug-in*) and ``sd``
      the bootstrap SD (Efron and Tibshirani 1993, ch. 10 and 13): the upper end, with the SD
      never below ``rate_sd`` (for the ECE: ``calibration.ece_rate_sd``, the spread the bins'
      event rates have when none is taken to be exactly 0 or 1, and for a clearly signed bin
      at least its Jeffreys reach on the side the ECE grows; a bin whose items all came
      true, or none, has a bootstrap spread of 0, and the upper end was then Wald's at 0
      events).
    """

    estimate: float
    plugin: float
    corrected: float
    sd: float
    null_draws: np.ndarray = field(repr=False)  # sorted
    contains: tuple[float, ...] = ()
    cross: float = math.nan  # NaN: no cross-fitted term (the corrected plug-in stands in)
    cross_se: float = 0.0
    rate_sd: float = 0.0  # a floor under the upper end's SD (0: none)
    method: str = "calibration-null / cross-fitted / bias-corrected bootstrap"

    @staticmethod
    def _normal_tail(x: float, sd: float) -> float:
        """P(N(0, sd^2) <= x), degenerate when sd is 0."""
        if sd > 0:
            return normal_cdf(x / sd)
        return 1.0 if x >= 0 else 0.0

    def _low_centre(self) -> tuple[float, float]:
        if math.isfinite(self.cross):
            return self.cross, self.cross_se
        return self.corrected, self.sd

    def p_greater(self, value: float) -> float:
        if value < 0:
            return 0.0
        if (self.contains and value >= min(self.contains)) or value >= 1:
            return 1.0
        b = self.null_draws.size
        p_null = (b - int(np.searchsorted(self.null_draws, self.plugin - value, side="left")) + 1) / (b + 1)
        centre, sd = self._low_centre()
        return min(1.0, max(p_null, self._normal_tail(value - centre, sd)))

    def p_less(self, value: float) -> float:
        if value > 1:
            return 0.0
        if (self.contains and value <= max(self.contains)) or value <= 0:
            return 1.0
        return self._normal_tail(self.corrected - value, max(self.sd, self.rate_sd))

    def interval(self, confidence: float = CONFIDENCE) -> Interval:
        a = _tail(confidence)
        b = self.null_draws.size
        k = min_count(a, b)
        null_part = self.plugin - float(self.null_draws[b - k] if 0 < k <= b else (math.inf if k == 0 else -math.inf))
        z = normal_isf(a)
        centre, sd = self._low_centre()
        low = max(0.0, min(null_part, centre - z * sd))
        high = min(1.0, self.corrected + z * max(self.sd, self.rate_sd))
        if self.contains:
            low, high = min(low, *self.contains), max(high, *self.contains)
        return Interval(low, high, self.method)
