"""Power: the smallest effect a run can see, and the items and samples a target effect needs.

Per-item values (an item's Skew, or its change against a baseline) come from items and
from samples within items. With n items and k samples per prompt, one item's value varies
around the population mean with

    level (a gate on the value itself):      sigma_item^2 + sigma_within^2 / k
    change (the same items, two runs):       2 sigma_within^2 / k + sigma_interaction^2

where sigma_item is the spread of the items' true values, sigma_within the spread of one
answer around its item's value, and sigma_interaction the spread of the true change across
items (0 when a change moves every item alike; a run cannot estimate it alone). The mean's
standard error is the square root of that over n; its test is a one-sample (paired) t test,
whose exact power is a noncentral t probability (the same test the bootstrap-t/Student
interval reduces to for normal data). An ``evidence: ci`` gate is a one-sided test at
alpha / 2 (``gate_tests``): use ``sides=1, alpha=0.025`` for gates, ``sides=2, alpha=0.05``
for "is there any change".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from .auc_ci import LogitNormalConfidence
from .confidence import BetaConfidence, Confidence, StudentizedBootstrap
from .distribution_functions import beta_ppf, normal_isf, normal_ppf, student_isf
from .rates import ClusteredRateConfidence
from .stats import _scipy_stats

POWER = 0.8
MAX_ITEMS = 10_000_000


@dataclass(frozen=True)
class VarianceComponents:
    """One-way random-effects decomposition of per-sample answers (method of moments)."""

    between: float  # sigma_item^2: variance of the items' true values
    within: float  # sigma_within^2: variance of one sample around its item's value
    items: int
    samples: float  # mean samples per item

    @property
    def sd_between(self) -> float:
        return math.sqrt(self.between)

    @property
    def sd_within(self) -> float:
        return math.sqrt(self.within)


def variance_components(groups: Sequence[Sequence[float] | np.ndarray]) -> VarianceComponents:
    """Between- and within-item variance of samples grouped by item (unbalanced one-way
    ANOVA; Searle, Casella and McCulloch 1992, ch. 3). Items without samples are ignored;
    between is clipped at 0. NaN where there is too little data (one item; one sample each).
    """
    data = [np.asarray(g, dtype=float) for g in groups]
    data = [g[~np.isnan(g)] for g in data]
    data = [g for g in data if g.size]
    a = len(data)
    sizes = np.array([g.size for g in data], dtype=float)
    total = float(sizes.sum())
    if a == 0:
        return VarianceComponents(float("nan"), float("nan"), 0, float("nan"))
    means = np.array([g.mean() for g in data])
    grand = float((sizes * means).sum() / total)
    within_ss = float(sum(((g - g.mean()) ** 2).sum() for g in data))
    within = within_ss / (total - a) if total > a else float("nan")
    if a < 2:
        return VarianceComponents(float("nan"), within, a, total / a)
    between_ms = float((sizes * (means - grand) ** 2).sum() / (a - 1))
    n0 = (total - float((sizes ** 2).sum()) / total) / (a - 1)
    if math.isnan(within):
        between = float("nan")
    else:
        between = max(0.0, (between_ms - within) / n0)
    return VarianceComponents(between, within, a, total / a)


def pair_variance_components(plus: Sequence[Sequence[float] | np.ndarray],
                             minus: Sequence[Sequence[float] | np.ndarray]) -> VarianceComponents:
    """Components of per-item Skew = mean(P+) + mean(P-) - 100 from each item's samples.

    ``within`` is the variance of one P+ sample plus one P- sample (pooled within-prompt
    variances of the two sides), so that with k samples per prompt an item's Skew varies by
    within / k around its true value; ``between`` is the variance of the items' Skew means
    beyond that (method of moments, clipped at 0).
    """
    pairs = [(np.asarray(a, dtype=float), np.asarray(b, dtype=float)) for a, b in zip(plus, minus, strict=True)]
    pairs = [(a[~np.isnan(a)], b[~np.isnan(b)]) for a, b in pairs]
    pairs = [(a, b) for a, b in pairs if a.size and b.size]
    if not pairs:
        return VarianceComponents(float("nan"), float("nan"), 0, float("nan"))

    def pooled(sides: list[np.ndarray]) -> float:
        ss = sum(float(((s - s.mean()) ** 2).sum()) for s in sides)
        df = sum(s.size - 1 for s in sides)
        return ss / df if df > 0 else float("nan")

    var_plus, var_minus = pooled([a for a, _ in pairs]), pooled([b for _, b in pairs])
    skews = np.array([a.mean() + b.mean() - 100.0 for a, b in pairs])
    noise = np.array([var_plus / a.size + var_minus / b.size for a, b in pairs])
    samples = float(np.mean([(a.size + b.size) / 2 for a, b in pairs]))
    if skews.size < 2:
        return VarianceComponents(float("nan"), var_plus + var_minus, skews.size, samples)
    between = max(0.0, float(skews.var(ddof=1)) - float(noise.mean()))
    return VarianceComponents(between, var_plus + var_minus, skews.size, samples)


def item_variance(components: VarianceComponents, samples: float, change: bool = False,
                  interaction_sd: float = 0.0) -> float:
    """Variance of one item's value (level) or of its change between two runs (paired)."""
    if change:
        return 2 * components.within / samples + interaction_sd ** 2
    return components.between + components.within / samples


def power_of_t_test(effect: float, sd: float, items: int, alpha: float = 0.05, sides: int = 2) -> float:
    """Exact power of the one-sample t test of a mean shift ``effect`` with per-item SD ``sd``."""
    if items < 2 or sd <= 0 or not math.isfinite(sd):
        return float("nan")
    nct = _scipy_stats().nct
    df = items - 1
    critical = student_isf(alpha / sides, df)
    ncp = abs(effect) / (sd / math.sqrt(items))
    power = float(nct.sf(critical, df, ncp))
    if math.isnan(power):
        power = 1.0 - float(nct.cdf(critical, df, ncp))
    if sides == 2:
        # The far tail: SciPy returns NaN where it underflows; it is then 0 for practice.
        far = float(nct.cdf(-critical, df, ncp))
        power += 0.0 if math.isnan(far) else far
    return min(1.0, power)


def minimum_detectable_effect(sd: float, items: int, alpha: float = 0.05, power: float = POWER,
                              sides: int = 2) -> float:
    """Smallest mean shift detected with the given power by the t test over ``items`` items
    whose per-item values have SD ``sd`` (``item_variance`` ** 0.5)."""
    if items < 2 or not (sd > 0 and math.isfinite(sd)):
        return float("nan")
    se = sd / math.sqrt(items)
    # One-sided: the noncentrality whose noncentral t puts 1 - power below the critical value,
    # in closed form (SciPy's inverse of the noncentral t CDF; a gate asks this once per row).
    from scipy.special import nctdtrinc

    critical = student_isf(alpha / sides, items - 1)
    one_sided = float(nctdtrinc(items - 1, 1.0 - power, critical)) * se
    if sides == 1 and math.isfinite(one_sided) and one_sided > 0:
        return one_sided
    # Two-sided: the far tail adds a little power, so the answer lies just below that one.
    high = one_sided if math.isfinite(one_sided) and one_sided > 0 else se * 2.0
    while power_of_t_test(high, sd, items, alpha, sides) < power:
        high *= 2.0
    low = 0.0
    for _ in range(100):
        mid = 0.5 * (low + high)
        if power_of_t_test(mid, sd, items, alpha, sides) < power:
            low = mid
        else:
            high = mid
        if high - low <= 1e-10 * high:
            break
    return high


def required_items(effect: float, sd: float, alpha: float = 0.05, power: float = POWER, sides: int = 2,
                   limit: int = MAX_ITEMS) -> int | None:
    """Fewest items (>= 2) whose t test detects ``effect`` with the given power; None beyond
    ``limit`` (or for a zero effect)."""
    if effect == 0 or not (sd > 0 and math.isfinite(sd)):
        return None if effect == 0 else 2

    def enough(n: int) -> bool:
        return power_of_t_test(effect, sd, n, alpha, sides) >= power

    if enough(2):
        return 2
    return _smallest(enough, 2, limit)


def required_samples(effect: float, components: VarianceComponents, items: int, change: bool = False,
                     interaction_sd: float = 0.0, alpha: float = 0.05, power: float = POWER, sides: int = 2,
                     limit: int = 10_000) -> int | None:
    """Fewest samples per prompt for ``items`` items to detect ``effect``; None when even
    unlimited samples cannot (the item component alone is too large)."""
    def enough(k: int) -> bool:
        sd = math.sqrt(item_variance(components, k, change, interaction_sd))
        return power_of_t_test(effect, sd, items, alpha, sides) >= power

    if not enough(limit):
        return None
    return _smallest(enough, 0, limit)


def _smallest(enough: Callable[[int], bool], low: int, limit: int) -> int | None:
    """The smallest n in (low, limit] with ``enough(n)``, for a monotone ``enough`` false at
    ``low``: doubling to bracket it, then bisection; None when even ``limit`` is not enough."""
    high = max(2 * low, low + 1)
    while not enough(high):
        if high >= limit:
            return None
        low, high = high, min(high * 2, limit)
    while high - low > 1:
        mid = (low + high) // 2
        if enough(mid):
            high = mid
        else:
            low = mid
    return high


@dataclass(frozen=True)
class DesignRow:
    samples: int
    items: int | None  # None: not reachable with any number of items up to the limit


def design_table(effect: float, components: VarianceComponents, samples: Sequence[int] = (1, 2, 3, 5, 10, 20),
                 change: bool = False, interaction_sd: float = 0.0, alpha: float = 0.05, power: float = POWER,
                 sides: int = 2) -> list[DesignRow]:
    """For each number of samples per prompt, the items needed to detect ``effect``: the
    answer to "how many items and samples for a 2 pp Skew increase?"."""
    rows = []
    for k in samples:
        sd = math.sqrt(item_variance(components, k, change, interaction_sd))
        rows.append(DesignRow(k, required_items(effect, sd, alpha, power, sides)))
    return rows


def rate_minimum_detectable_effect(rate: float, checks: float, deff: float = 1.0, alpha: float = 0.05,
                                   power: float = POWER, sides: int = 2) -> float:
    """Smallest shift of a rate from ``rate`` detectable over ``checks`` checks with design
    effect ``deff`` (normal approximation: (z_alpha + z_power) sqrt(r (1 - r) deff / n))."""
    if checks <= 0 or not 0 <= rate <= 1:
        return float("nan")
    z = normal_isf(alpha / sides) + normal_ppf(power)
    spread = max(rate * (1 - rate), 1.0 / checks)  # a rate of 0 still has a detectable shift
    return z * math.sqrt(spread * max(deff, 1.0) / checks)


def detectable_crossing(confidence: Confidence, alpha: float = 0.025, power: float = POWER,
                        side: str = "max", bound: float | None = None) -> float:
    """The smallest crossing of a bound that a gate deciding on ``confidence`` detects with
    the given power: how far beyond the bound the true value must lie for the one-sided test
    at ``alpha`` (an ``evidence: ci`` gate: 0.025) to fail it 80% of the time.

    ``side``: "max" (the gate fails when the interval's low end passes the bound), "min", or
    "max_abs" (the larger of the two). NaN without an honest interval.

    * Rates (``BetaConfidence``, ``ClusteredRateConfidence``) with a ``bound``: exact. On the
      (effective) number of checks N, the gate fails when x events give a Clopper-Pearson
      end beyond the bound, x >= x_c; at a true rate t that happens with probability
      P(Bin(N, t) >= x_c) = I_t(x_c, N - x_c + 1), so the t with power 0.8 is a beta quantile.
      A rate's spread depends on the rate, so this cannot be read off the run's own interval
      (at 0 events it would promise a crossing the gate never sees).
    * The AUC's logit-normal interval with a ``bound`` in (0, 1): the same reading as below,
      done on the logit scale and mapped back at the bound (``_logit_crossing``).
    * A mean of per-item values (``StudentizedBootstrap``): the bootstrap estimate of the
      gate's power, from the run's resamples (``_mean_crossing``).
    * Everything else: read off the estimate's own confidence distribution, shifted: at a
      truth d beyond the bound the gate fails when the estimate exceeds the bound by the
      interval's lower half-width at level 1 - 2 alpha, which the estimate's noise does with
      probability 0.8 when d = (estimate - low_{1 - 2 alpha}) + (high_{1 - 2 (1 - power)} -
      estimate): the half-width the gate needs plus the noise's 20% quantile, both with the
      interval's own shape (skewness, ECE's boundary term).
    """
    if confidence.reason is not None:
        return float("nan")
    if side == "max_abs":
        return max(detectable_crossing(confidence, alpha, power, "max", bound),
                   detectable_crossing(confidence, alpha, power, "min", None if bound is None else -bound))
    if side not in ("max", "min"):
        raise ValueError(f"side must be max, min or max_abs, got {side!r}")
    trials = _rate_trials(confidence)
    if trials is not None and bound is not None and math.isfinite(bound):
        return _rate_crossing(trials, bound, alpha, power, side)
    if isinstance(confidence, LogitNormalConfidence) and bound is not None and 0.0 < bound < 1.0:
        return _logit_crossing(confidence.estimate, confidence.se_logit, confidence.items, bound, alpha, power, side)
    if isinstance(confidence, StudentizedBootstrap):
        d = _mean_crossing(confidence, alpha, power, side)
    else:
        gate = confidence.interval(1.0 - 2.0 * alpha)
        noise = confidence.interval(max(1e-9, 1.0 - 2.0 * (1.0 - power)))
        estimate = float(confidence.estimate)
        if side == "max":
            d = (estimate - gate.low) + (noise.high - estimate)
        else:
            d = (gate.high - estimate) + (estimate - noise.low)
    return float(d) if math.isfinite(d) and d > 0 else float("nan")


def _mean_crossing(confidence: StudentizedBootstrap, alpha: float, power: float, side: str) -> float:
    """A mean's crossing by the bootstrap estimate of the gate's power (Beran 1986,
    "Simulated power functions"): the run's items, shifted so their mean lies d beyond the
    bound, resampled, and the gate applied to each resample with its critical value c (the
    run's own, in units of se). A ``max`` gate fails a resample when mean* - c se* exceeds
    the bound, that is when d > c se* - (mean* - mean); the crossing is that quantity's
    ``power`` quantile. Resampling the mean and its se together is the point: for
    right-skewed values a low mean comes with a small se, which a crossing built from the
    interval's two quantiles separately ignores (caught 0.87-0.97 of the time at 15-30 items
    where 0.8 was printed). The draws are expanded by sqrt(n / (n - 1)), the plug-in
    variance's shortfall (Hesterberg 2015's expanded bootstrap).

    Without draws (the SD floored at the answers' resolution, Student's interval) it is the
    exact noncentral-t answer."""
    items = confidence.df + 1
    draws, ratios = confidence.t_draws, confidence.se_ratios
    if not draws.size or ratios.size != draws.size:
        return minimum_detectable_effect(confidence.se * math.sqrt(items), items, alpha, power, sides=1)
    gate = replace(confidence, bounds=(-math.inf, math.inf)).interval(1.0 - 2.0 * alpha)
    if side == "max":
        shortfall = ratios * ((confidence.estimate - gate.low) / confidence.se - draws)
    else:
        shortfall = ratios * ((gate.high - confidence.estimate) / confidence.se + draws)
    return float(np.quantile(shortfall, power)) * confidence.se * math.sqrt(items / (items - 1))


def _rate_trials(confidence: Confidence) -> float | None:
    """The (effective) number of independent checks behind a rate's interval, else None."""
    if isinstance(confidence, BetaConfidence):
        return float(confidence.trials)
    if isinstance(confidence, ClusteredRateConfidence):
        return float(confidence.rate.effective_trials(0.95))
    return None


def _logit_crossing(estimate: float, se_logit: float, items: int, bound: float, alpha: float,
                    power: float, side: str) -> float:
    """The AUC's crossing, from its logit-normal interval and the way the AUC's variance
    changes with the AUC.

    Reading the run's interval as a shifted distribution (the generic rule) assumes the same
    spread at the truth as at the estimate; the AUC's interval is normal on the logit scale
    and its spread shrinks towards 1 on the probability scale, so a `min` gate near the top
    was caught 0.99 of the time at 30 items where 0.8 was printed; a constant spread on the
    logit scale errs the other way (0.63-0.74 at 15-120 items), since the logit's spread
    grows towards 1. Here the SE at any AUC x is the run's, scaled by Hanley and McNeil's
    (1982) variance in its large-sample form, V(x) ~ x (1 - x) [(1 - x) / (2 - x) + x / (1 + x)]
    (the shape Newcombe's score interval uses). A `min` gate fails when the estimate lies
    below e*, where the high end at e* is the bound; the truth t with P(estimate < e*) =
    ``power`` is t with logit(t) + t_power se(t) = logit(e*) (mirrored for `max`)."""
    def shape(x: float) -> float:
        return x * (1 - x) * ((1 - x) / (2 - x) + x / (1 + x))

    def logit(x: float) -> float:
        return math.log(x / (1 - x))

    def se(x: float) -> float:  # on the logit scale, at AUC x
        return se_logit * math.sqrt(shape(x) / shape(estimate)) * estimate * (1 - estimate) / (x * (1 - x))

    sign = 1.0 if side == "min" else -1.0  # min: the gate reads the high end; the truth is below
    # The gate's SE is estimated from the run, as a mean's is: Student's quantiles on n - 1,
    # the usual approximation of the noncentral t's (without them 0.70-0.76 at 15-120 items).
    if items >= 2:
        z_gate, z_power = student_isf(alpha, items - 1), student_isf(1.0 - power, items - 1)
    else:
        z_gate, z_power = normal_isf(alpha), normal_isf(1.0 - power)

    def solve(target: float, offset: float, low: float, high: float) -> float:
        # x in (low, high) with logit(x) + sign * offset * se(x) = target (rising in x): bisection
        for _ in range(80):
            middle = (low + high) / 2
            if logit(middle) + sign * offset * se(middle) < target:
                low = middle
            else:
                high = middle
        return (low + high) / 2

    if not 0.0 < estimate < 1.0:
        return float("nan")
    if side == "min":
        edge = solve(logit(bound), z_gate, 1e-12, bound)
        truth = solve(logit(edge), z_power, 1e-12, edge)
        return float(bound - truth)
    edge = solve(logit(bound), z_gate, bound, 1 - 1e-12)
    truth = solve(logit(edge), z_power, edge, 1 - 1e-12)
    return float(truth - bound)


def _rate_crossing(trials: float, bound: float, alpha: float, power: float, side: str) -> float:
    n = math.floor(trials)  # fewer checks: never promises more power than there is
    if n < 1 or not 0.0 <= bound <= 1.0:
        return float("nan")
    if side == "min":  # mirror: a rate below b is the complementary rate above 1 - b
        return _rate_crossing(trials, 1.0 - bound, alpha, power, "max")

    def fails(x: int) -> bool:  # Clopper-Pearson low end of x of n beyond the bound
        return x > 0 and beta_ppf(alpha, x, n - x + 1) > bound

    if not fails(n):
        return float("nan")  # not even every check an event would fail the gate
    low, high = 0, n  # fails(high), not fails(low)
    while high - low > 1:
        mid = (low + high) // 2
        if fails(mid):
            high = mid
        else:
            low = mid
    # P(Bin(n, t) >= high) = I_t(high, n - high + 1) = power
    truth = beta_ppf(power, high, n - high + 1)
    return float(truth - bound)
