"""Intervals for rates: independent checks, clustered checks, functions of a base rate, changes.

* Independent checks (one per item: conjunction, disjunction and conditional sets):
  Clopper-Pearson, exact.
* Clustered checks (the steps of one dose-response ladder share rungs; the samples of one
  prompt, and the prompts of one item, share the item): the ratio estimator sum(hits) /
  sum(checks) over items, with the Clopper-Pearson interval on an *effective* number of
  checks (Korn and Graubard 1998): n_eff = n / deff, deff = the cluster-robust
  (linearisation) variance over the binomial variance, never below 1, and n_eff shrunk
  further by (t_{n-1} / t_{clusters-1})^2 for the few clusters the variance rests on. With
  one check per cluster deff = 1 and the factor is 1: exactly Clopper-Pearson.
* Quantities fixed by a base rate (climatology Brier = uncertainty = r (1 - r)): the image of
  the Wilson score interval of r, so a balanced set gives [0.246, 0.25] at 240 items, not a
  point.
* The change of a clustered rate between two runs over the same items: MOVER (Zou and Donner
  2008), combining the two intervals with the correlation of the runs' item-level residuals;
  two runs that agree item for item (0 events in both among them) get the exact bound on the
  share of items that could differ (``NoSpreadConfidence``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property

import numpy as np

from .confidence import BetaConfidence, Confidence, IntervalFamily, NoConfidence, NoSpreadConfidence, _tail
from .distribution_functions import normal_isf, student_isf
from .stats import CONFIDENCE, Interval

CLOPPER_PEARSON = "clopper-pearson"
CLUSTERED = "clopper-pearson, korn-graubard effective n (clustered by item)"


@dataclass(frozen=True)
class ClusteredRate:
    """The ratio estimate and its design effect, from per-cluster hits and checks."""

    hits: float
    checks: float
    clusters: int  # clusters with at least one check
    deff: float  # >= 1

    @property
    def estimate(self) -> float:
        return self.hits / self.checks if self.checks else float("nan")

    @property
    def independent(self) -> bool:
        return self.clusters == self.checks

    def effective_trials(self, confidence: float) -> float:
        if not self.independent and min(self.hits, self.checks - self.hits) <= 1.0:
            # No event (or no non-event) at all, or a single one: the clustering cannot show
            # (one event has no partner to share its item with, and the design effect
            # estimate is then 1 by construction, as at 0 events), so the design effect is
            # taken at its largest, every item one check (issue 27: at 0 events of 10 checks
            # on each of 30 items, Clopper-Pearson on 300 checks covered a clustered 2% rate
            # 0.83 of the time; with the single-event case still on 300 checks, 0.90).
            return float(self.clusters)
        n = self.checks / self.deff
        if not self.independent and self.clusters >= 2 and self.checks >= 2:
            a = min(_tail(confidence), 0.49)  # both quantiles tend to 0 at a = 0.5
            n *= (student_isf(a, self.checks - 1) / student_isf(a, self.clusters - 1)) ** 2
        return n


def cluster_rate(hits: Sequence[float] | np.ndarray, checks: Sequence[float] | np.ndarray) -> ClusteredRate:
    """Pool per-cluster (hits, checks); clusters without checks are ignored."""
    h, m = np.asarray(hits, dtype=float), np.asarray(checks, dtype=float)
    keep = m > 0
    h, m = h[keep], m[keep]
    total_h, total_m, c = float(h.sum()), float(m.sum()), int(keep.sum())
    if c == 0:
        return ClusteredRate(0.0, 0.0, 0, 1.0)
    rate = total_h / total_m
    deff = 1.0
    if c >= 2 and c < total_m and 0 < rate < 1:
        residual = h - rate * m
        v_cluster = c / (c - 1) * float(residual @ residual) / total_m ** 2
        v_binomial = rate * (1 - rate) / (total_m - 1)
        deff = max(1.0, v_cluster / v_binomial)
    return ClusteredRate(total_h, total_m, c, deff)


def _beta_interval(successes: float, trials: float, confidence: float) -> Interval:
    return BetaConfidence(successes / trials, successes, trials).interval(confidence)


def rate_confidence(hits: Sequence[float] | np.ndarray, checks: Sequence[float] | np.ndarray) -> Confidence:
    """Clopper-Pearson for independent checks, Korn-Graubard when checks cluster.

    ``hits`` and ``checks`` are per cluster (item); one check per cluster is the independent
    case. A single cluster with several checks cannot show its clustering: plain
    Clopper-Pearson, and the method says so.
    """
    rate = cluster_rate(hits, checks)
    if rate.checks <= 0:
        return NoConfidence()
    if rate.independent:
        return BetaConfidence(rate.estimate, rate.hits, rate.checks, CLOPPER_PEARSON)
    if rate.clusters < 2:
        return BetaConfidence(rate.estimate, rate.hits, rate.checks, CLOPPER_PEARSON + " (one item: clustering not estimable)")

    return ClusteredRateConfidence(rate.estimate, _KornGraubard(rate), CLUSTERED, rate)


# The interval families are callables of the module, not closures: confidences travel to
# another process by pickle (session/spare.py).
@dataclass(frozen=True)
class _KornGraubard:
    """Korn-Graubard's interval of a clustered rate at any confidence."""

    rate: ClusteredRate

    def __call__(self, confidence: float) -> Interval:
        n = self.rate.effective_trials(confidence)
        beta = _beta_interval(self.rate.estimate * n, n, confidence)
        return Interval(beta.low, beta.high, CLUSTERED)


@dataclass(frozen=True)
class ClusteredRateConfidence(IntervalFamily):
    """Korn-Graubard's family for a clustered rate, with the pooled counts it rests on."""

    rate: ClusteredRate = field(default_factory=lambda: ClusteredRate(0.0, 0.0, 0, 1.0), repr=False)


# --------------------------------------------------------------------------- functions of a base rate


def wilson_interval(successes: float, trials: float, confidence: float = CONFIDENCE) -> Interval:
    """Wilson score interval of a proportion (Wilson 1927)."""
    if trials <= 0:
        return Interval(float("nan"), float("nan"), "none")
    z = normal_isf(_tail(confidence))
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z / (1 + z * z / trials) * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    return Interval(max(0.0, centre - half), min(1.0, centre + half), "wilson")


def base_rate_confidence(successes: float, trials: float, g: Callable[[float], float],
                         critical: Sequence[float] = (), method: str = "wilson image") -> Confidence:
    """Confidence for g(r), r the base rate: the image under g of r's Wilson interval.

    g must be continuous with its extremes on [low, high] at the ends or at ``critical``
    points (0.5 for r (1 - r)). Coverage is at least the Wilson interval's.
    """
    if trials <= 0:
        return NoConfidence()

    return IntervalFamily(g(successes / trials), _WilsonImage(successes, trials, g, tuple(critical), method), method)


@dataclass(frozen=True)
class _WilsonImage:
    """The image under g of the base rate's Wilson interval, at any confidence."""

    successes: float
    trials: float
    g: Callable[[float], float]
    critical: tuple[float, ...]
    method: str

    def __call__(self, confidence: float) -> Interval:
        wilson = wilson_interval(self.successes, self.trials, confidence)
        points = [wilson.low, wilson.high, *(c for c in self.critical if wilson.low <= c <= wilson.high)]
        values = [self.g(x) for x in points]
        return Interval(min(values), max(values), self.method)


# --------------------------------------------------------------------------- changes


@cache
def _hull_nodes() -> tuple[np.ndarray, np.ndarray]:
    """Tails of the rate-change hull's nodes, narrowest interval first, and their normal
    quantiles: log-spaced over the range the p value bisection searches, plus the tails that
    gates, reports and power read, so those are nodes. (A function: SciPy loads on first use.)"""
    tails = np.unique(np.concatenate([np.geomspace(1e-12, 0.5 - 1e-9, 61),
                                      [0.25, 0.2, 0.1, 0.05, 0.025, 0.01, 0.005, 0.0025, 0.0005]]))[::-1]
    return tails, np.array([normal_isf(float(a)) for a in tails])


@dataclass(frozen=True)
class RateChange(Confidence):
    """current - baseline of a clustered rate, MOVER interval (Zou and Donner 2008).

    L = d - sqrt(a1^2 + b0^2 - 2 r a1 b0), U = d + sqrt(b1^2 + a0^2 - 2 r b1 a0), with a, b the
    distances from each run's estimate to its own lower and upper limit and r the
    correlation of the two runs' item-level residuals, capped at the ratio of the two
    distances (so an end never passes the wider run's estimate-side distance minus the
    other's, as MOVER at r = 1 would).

    That formula is not nested across levels by itself: where the two runs' distances grow
    at different rates (their design effects differ) an end can move *inwards* as the level
    rises (Hypothesis found 0.999 narrower than 0.8). p values invert the family, so it must
    be nested for a gate's p and its printed interval to agree. The family is therefore the
    formula's monotone hull on a fixed grid of levels (every end the outermost reached at
    that level or below; standard levels are nodes), linear in the normal quantile between
    nodes. Where the formula is already nested (almost always) the nodes equal it.
    """

    estimate: float
    current: Confidence = field(repr=False)
    baseline: Confidence = field(repr=False)
    correlation: float = 0.0
    method: str = "MOVER (clustered Clopper-Pearson)"

    def _combine(self, near: float, far: float) -> float:
        big, small = max(near, far), min(near, far)
        r = min(self.correlation, small / big) if big > 0 else 0.0
        return math.sqrt(max(near * near + far * far - 2 * r * near * far, 0.0))

    def _mover(self, confidence: float) -> tuple[float, float]:
        now, before = self.current.interval(confidence), self.baseline.interval(confidence)
        p1, p0 = self.current.estimate, self.baseline.estimate
        low = self.estimate - self._combine(p1 - now.low, before.high - p0)
        high = self.estimate + self._combine(now.high - p1, p0 - before.low)
        return max(-1.0, low), min(1.0, high)

    @cached_property
    def _hull(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Normal quantiles of the node tails (rising) and the hull's ends there."""
        tails, z = _hull_nodes()
        ends = np.array([self._mover(1.0 - 2.0 * float(a)) for a in tails])
        return z, np.minimum.accumulate(ends[:, 0]), np.maximum.accumulate(ends[:, 1])

    def interval(self, confidence: float = CONFIDENCE) -> Interval:
        z_nodes, lows, highs = self._hull
        z = min(max(normal_isf(_tail(confidence)), float(z_nodes[0])), float(z_nodes[-1]))
        return Interval(float(np.interp(z, z_nodes, lows)), float(np.interp(z, z_nodes, highs)), self.method)

    def _family(self) -> IntervalFamily:
        return IntervalFamily(self.estimate, self.interval, self.method)

    def p_greater(self, value: float) -> float:
        return self._family().p_greater(value)

    def p_less(self, value: float) -> float:
        return self._family().p_less(value)


def rate_change_confidence(hits_now: np.ndarray, checks_now: np.ndarray, hits_before: np.ndarray,
                           checks_before: np.ndarray) -> Confidence:
    """Change of a rate between two runs, per-item counts aligned by item (paired)."""
    hits_now, checks_now = np.asarray(hits_now, dtype=float), np.asarray(checks_now, dtype=float)
    hits_before, checks_before = np.asarray(hits_before, dtype=float), np.asarray(checks_before, dtype=float)
    now, before = rate_confidence(hits_now, checks_now), rate_confidence(hits_before, checks_before)
    if isinstance(now, NoConfidence) or isinstance(before, NoConfidence):
        return NoConfidence()
    shared = (checks_now > 0) & (checks_before > 0)
    if shared.all() and np.array_equal(hits_now, hits_before) and np.array_equal(checks_now, checks_before):
        return _identical_runs(checks_now)
    r1 = hits_now - now.estimate * checks_now
    r0 = hits_before - before.estimate * checks_before
    r1, r0 = r1[shared], r0[shared]
    denominator = math.sqrt(float(r1 @ r1) * float(r0 @ r0))
    correlation = float(r1 @ r0) / denominator if denominator > 0 else 0.0
    return RateChange(now.estimate - before.estimate, now, before, max(-1.0, min(1.0, correlation)))


def _identical_runs(checks: np.ndarray) -> Confidence:
    """Two runs that agree item for item (the same hits of the same checks; 0 events in both
    is one case): the change is exactly 0 on these items, and only the share of items in the
    population whose hits would differ is unknown. n items without one bound it exactly
    (``NoSpreadConfidence``: at most 1 - 0.025^(1/n), 0.116 at 30 items); an item can move
    the pooled rate by at most its share of the checks, n m_i / sum(m) per unit share."""
    n = int(checks.size)
    reach = min(1.0, n * float(checks.max()) / float(checks.sum())) if n else 1.0
    return NoSpreadConfidence(0.0, n, (-reach, reach), "exact bound: the runs agree item for item")
