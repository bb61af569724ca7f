"""Unit tests for the interval methods of issue 14: pytest_optbench.metrics.confidence, rates,
calibration_ci (ECE) and gate_tests. Each method is checked against an independent
computation (SciPy or a direct formula) and its invariants are property-tested: the p values
and intervals agree, intervals are ordered, contain their estimate, stay within bounds."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
from _multiple_testing import reference_bh, reference_holm
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats as sps

from pytest_optbench.metrics import calibration as cal
from pytest_optbench.metrics import gate_tests
from pytest_optbench.metrics.calibration_ci import binary_confidences
from pytest_optbench.metrics.confidence import (
    BetaConfidence,
    BootstrapPercentile,
    Confidence,
    EceConfidence,
    NoConfidence,
    StudentizedBootstrap,
    bootstrap_confidence,
    min_count,
    studentized_bootstrap,
    studentized_from_draws,
)
from pytest_optbench.metrics.rates import (
    CLUSTERED,
    RateChange,
    base_rate_confidence,
    cluster_rate,
    rate_change_confidence,
    rate_confidence,
    wilson_interval,
)

LEVELS = st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99])
FINITE = st.floats(-50, 50, allow_nan=False, allow_infinity=False)
SAMPLES = hnp.arrays(np.float64, st.integers(2, 40), elements=st.floats(-30, 30, allow_nan=False).map(round))


def assert_contract(cd: Confidence, value: float, confidence: float) -> None:
    """interval(c).low > v exactly when p_greater(v) < (1 - c) / 2 (and likewise above),
    unless v sits on an end (where rounding may decide either way)."""
    interval = cd.interval(confidence)
    tail = (1 - confidence) / 2
    scale = 1e-9 * max(1.0, abs(value), abs(interval.low) if math.isfinite(interval.low) else 1.0,
                       abs(interval.high) if math.isfinite(interval.high) else 1.0)
    if not (math.isfinite(interval.low) and abs(value - interval.low) <= scale):
        assert (interval.low > value) == (cd.p_greater(value) < tail), (interval, value, cd.p_greater(value))
    if not (math.isfinite(interval.high) and abs(value - interval.high) <= scale):
        assert (interval.high < value) == (cd.p_less(value) < tail), (interval, value, cd.p_less(value))
    # Two-sided p below 1 - c exactly when v is outside.
    if not any(math.isfinite(e) and abs(value - e) <= scale for e in (interval.low, interval.high)):
        outside = not (interval.low <= value <= interval.high)
        assert outside == (cd.p_value(value) < 1 - confidence)


# --------------------------------------------------------------------------- Monte Carlo counts


@given(st.floats(1e-4, 0.5), st.integers(1, 20_000))
def test_min_count_is_the_smallest_count_reaching_the_level(a: float, draws: int) -> None:
    c = min_count(a, draws)
    assert (c + 1) / (draws + 1) >= a
    assert c == 0 or c / (draws + 1) < a


# --------------------------------------------------------------------------- bootstrap-t/Student


def test_student_floor_is_the_t_interval_when_the_bootstrap_is_narrower() -> None:
    x = np.array([1.0, 2.0, 4.0, 3.0, 5.0, 2.5, 3.5, 4.5])
    m, se = x.mean(), x.std(ddof=1) / math.sqrt(x.size)
    # Hand-made draws, all tiny: the bootstrap part is narrower on both sides.
    cd = studentized_from_draws(m, se, x.size, np.full(999, m) + np.linspace(-1e-3, 1e-3, 999) * se,
                                np.full(999, se))
    interval = cd.interval(0.95)
    t = sps.t.ppf(0.975, x.size - 1)
    assert (interval.low, interval.high) == pytest.approx((m - t * se, m + t * se), rel=1e-12)
    assert cd.p_value(m - t * se) == pytest.approx(0.05, rel=1e-6)  # Student's p
    assert cd.p_greater(3.0) == pytest.approx(sps.t.sf((m - 3.0) / se, x.size - 1), rel=1e-9)


def test_bootstrap_t_part_uses_the_order_statistics_of_the_draws() -> None:
    # Draws whose studentized values are wide: the bootstrap sets both ends.
    m, se, n = 10.0, 1.0, 50
    t_values = np.linspace(-6.0, 8.0, 9999)  # B = 9999: (k + 1) / 10000 >= 0.025 at k = 249
    cd = studentized_from_draws(m, se, n, m + t_values * se, np.full(t_values.size, se))
    interval = cd.interval(0.95)
    ordered = np.sort(t_values)
    assert interval.low == pytest.approx(m - ordered[-250] * se)
    assert interval.high == pytest.approx(m - ordered[249] * se)
    # Just below the lower end the p value drops below 0.025: (249 + 1) / 10000 is the last
    # count that reaches it.
    tail = (1 - 0.95) / 2  # the level's tail, as the interval computes it
    assert cd.p_greater(interval.low - 1e-6) < tail <= cd.p_greater(interval.low + 1e-6)
    assert cd.p_greater(interval.low + 1e-6) == pytest.approx(0.025, abs=2e-4)


def test_studentized_bootstrap_hand_cases() -> None:
    rng = np.random.default_rng(0)
    assert isinstance(studentized_bootstrap(np.array([]), rng, 100), NoConfidence)
    one = studentized_bootstrap(np.array([3.0]), rng, 100)
    assert isinstance(one, NoConfidence) and one.estimate == 3.0 and math.isnan(one.interval().low)
    # No spread and no range: no honest interval, and the reason says so (issue 27, D5).
    flat = studentized_bootstrap(np.full(6, 2.5), rng, 100)
    assert isinstance(flat, NoConfidence) and flat.estimate == 2.5 and "no spread" in (flat.reason or "")
    assert math.isnan(flat.interval().low) and math.isnan(flat.p_value(3.0))
    with_nan = studentized_bootstrap(np.array([1.0, np.nan, 2.0, 4.0]), np.random.default_rng(1), 200)
    same = studentized_bootstrap(np.array([1.0, 2.0, 4.0]), np.random.default_rng(1), 200)
    assert with_nan.interval() == same.interval()


@pytest.mark.parametrize("n", [2, 7, 333])
@pytest.mark.parametrize("batch_cells", [1, 1000, 10**9])
def test_studentized_bootstrap_draws_are_the_resamples_one_at_a_time(n: int, batch_cells: int) -> None:
    # However the resamples are batched, each is the next n draws of the generator, summed on
    # its own: the same t values, to the last bit, as drawing and summing one resample at a time.
    x = np.random.default_rng(n).normal(10.0, 3.0, n) * np.random.default_rng(1).choice([1.0, 1e-3, 1e4], n)
    cd = studentized_bootstrap(x, np.random.default_rng(9), 257, batch_cells=batch_cells)
    assert isinstance(cd, StudentizedBootstrap)
    rng = np.random.default_rng(9)
    centred = x - float(x.mean())
    t = []
    for _ in range(257):
        d = centred[rng.integers(0, n, size=n)]
        s1, s2 = d.sum(), np.einsum("i,i->", d, d)
        se = math.sqrt(max(s2 - s1 * s1 / n, 0.0) / (n - 1) / n)
        if se > 0:
            t.append((s1 / n + float(x.mean()) - float(x.mean())) / se)
    assert np.array_equal(cd.t_draws, np.sort(np.array(t)))


@settings(max_examples=60, deadline=None)
@given(SAMPLES, st.integers(0, 2**16), LEVELS, FINITE)
def test_studentized_bootstrap_contract(x: np.ndarray, seed: int, level: float, value: float) -> None:
    cd = studentized_bootstrap(x, np.random.default_rng(seed), 300)
    assume(isinstance(cd, StudentizedBootstrap))
    interval = cd.interval(level)
    assert interval.low <= x.mean() <= interval.high
    assert_contract(cd, value, level)
    # Never narrower than Student's t on either side.
    t = sps.t.ppf(1 - (1 - level) / 2, x.size - 1) * cd.se
    assert interval.low <= x.mean() - t * (1 - 1e-12) + 1e-9 and interval.high >= x.mean() + t * (1 - 1e-12) - 1e-9
    # Nested: a higher level gives a wider interval.
    wider = cd.interval(0.999)
    assert wider.low <= interval.low and wider.high >= interval.high


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float64, st.integers(2, 30), elements=st.floats(0, 1)), st.integers(0, 999), LEVELS)
def test_bounded_means_stay_within_their_bounds(x: np.ndarray, seed: int, level: float) -> None:
    cd = studentized_bootstrap(x, np.random.default_rng(seed), 200, bounds=(0.0, 1.0))
    interval = cd.interval(level)
    if isinstance(cd, StudentizedBootstrap):
        assert 0.0 <= interval.low <= interval.high <= 1.0
        assert cd.p_greater(-0.1) == 0.0 and cd.p_greater(1.0) == 1.0
        assert cd.p_less(1.1) == 0.0 and cd.p_less(0.0) == 1.0
        assert_contract(cd, 0.5, level)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, st.integers(2, 30), elements=st.floats(0, 1)), st.integers(0, 999), LEVELS,
       st.floats(0, 0.5), st.floats(-0.2, 1.2))
def test_a_floor_under_an_end_only_widens_it_and_keeps_p_and_interval_agreeing(
        x: np.ndarray, seed: int, level: float, sd: float, value: float) -> None:
    """``high_sd`` / ``low_sd`` (the binary scores' calibration-null SD): that end reaches at
    least estimate +- z sd within the bounds; the other end and its p stay as they were."""
    cd = studentized_bootstrap(x, np.random.default_rng(seed), 200, bounds=(0.0, 1.0))
    assume(isinstance(cd, StudentizedBootstrap))
    z = sps.norm.isf((1 - level) / 2)
    before = cd.interval(level)
    high = replace(cd, high_sd=sd)
    assert high.interval(level).low == before.low and high.p_greater(value) == cd.p_greater(value)
    assert high.interval(level).high == pytest.approx(min(1.0, max(before.high, cd.estimate + z * sd)),
                                                      rel=1e-12, abs=1e-15)
    assert high.p_less(value) >= cd.p_less(value)
    low = replace(cd, low_sd=sd)
    assert low.interval(level).high == before.high and low.p_less(value) == cd.p_less(value)
    assert low.interval(level).low == pytest.approx(max(0.0, min(before.low, cd.estimate - z * sd)),
                                                    rel=1e-12, abs=1e-15)
    assert low.p_greater(value) >= cd.p_greater(value)
    for floored in (high, low, replace(cd, low_sd=sd, high_sd=sd)):
        assert_contract(floored, value, level)


def test_bootstrap_t_covers_skewed_data_better_than_percentile() -> None:
    """Coverage itself is the benchmark's job (bench/bench_coverage.py); here one seeded
    check that the method is the one it claims: on exponential samples of 20 the
    bootstrap-t/Student interval reaches further up than the percentile interval."""
    rng = np.random.default_rng(5)
    x = rng.exponential(size=20)
    cd = studentized_bootstrap(x, rng, 4000)
    drawn = x[rng.integers(0, 20, (4000, 20))].mean(axis=1)
    assert cd.interval().high > np.quantile(drawn, 0.975)


# --------------------------------------------------------------------------- percentile / BC


def test_percentile_interval_is_the_order_statistics_of_the_draws() -> None:
    draws = np.arange(1, 10000, dtype=float)  # 9999 draws
    cd = bootstrap_confidence(draws, 5000.0, bias_correct=False)
    interval = cd.interval(0.95)
    assert (interval.low, interval.high) == (draws[249], draws[-250])
    tail = (1 - 0.95) / 2
    assert cd.p_greater(draws[249]) >= tail > cd.p_greater(draws[248])


def test_bc_interval_matches_efron_formula() -> None:
    rng = np.random.default_rng(3)
    draws = rng.gamma(2.0, 1.0, 20_000)
    estimate = 1.7  # below the draws' median: z0 < 0
    cd = bootstrap_confidence(draws, estimate)
    assert isinstance(cd, BootstrapPercentile)
    z0 = sps.norm.ppf(np.mean(draws < estimate))
    levels = sps.norm.cdf(2 * z0 + sps.norm.ppf([0.025, 0.975]))
    interval = cd.interval()
    # The ends are the draws at those levels (to a draw or two: order-statistic conventions).
    assert np.mean(draws < interval.low) == pytest.approx(levels[0], abs=3 / draws.size)
    assert np.mean(draws <= interval.high) == pytest.approx(levels[1], abs=3 / draws.size)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, st.integers(2, 200), elements=st.floats(-10, 10)), FINITE.map(lambda v: v / 5),
       st.booleans(), LEVELS, FINITE.map(lambda v: v / 5))
def test_bootstrap_confidence_contract(draws: np.ndarray, estimate: float, bc: bool, level: float, value: float) -> None:
    cd = bootstrap_confidence(draws, estimate, bias_correct=bc)
    if cd.reason is not None:  # every draw equal, or BC's percentiles beyond the draws: no interval
        assert isinstance(cd, NoConfidence) and math.isnan(cd.interval(level).low)
        return
    interval = cd.interval(level)
    assert interval.low <= estimate <= interval.high  # extended to the estimate where needed
    assert_contract(cd, value, level)


# --------------------------------------------------------------------------- rates


@given(st.integers(0, 60), st.integers(1, 60), LEVELS)
def test_independent_checks_get_exact_clopper_pearson(successes: int, trials: int, level: float) -> None:
    successes = min(successes, trials)
    cd = rate_confidence([1] * successes + [0] * (trials - successes), [1] * trials)
    want = sps.binomtest(successes, trials).proportion_ci(confidence_level=level, method="exact")
    interval = cd.interval(level)
    assert (interval.low, interval.high) == pytest.approx((want.low, want.high), abs=1e-12)
    assert interval.method == "clopper-pearson"
    # The one-sided p is the exact binomial tail.
    if 0 < successes:
        assert cd.p_greater(0.3) == pytest.approx(sps.binom.sf(successes - 1, trials, 0.3), rel=1e-9)


def test_clustered_rate_design_effect_hand() -> None:
    # Two clusters all violating, two never: maximal clustering.
    rate = cluster_rate([4, 4, 0, 0], [4, 4, 4, 4])
    assert rate.estimate == 0.5 and rate.clusters == 4 and not rate.independent
    v_cluster = 4 / 3 * (4 * 2 ** 2) / 16 ** 2
    assert rate.deff == pytest.approx(v_cluster / (0.25 / 15))
    # No clustering at all (identical clusters): deff floors at 1.
    assert cluster_rate([1, 1, 1, 1], [4, 4, 4, 4]).deff == 1.0
    # Clusters without checks are ignored.
    assert cluster_rate([0, 1], [0, 1]).clusters == 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(1, 6)), min_size=2, max_size=25), LEVELS,
       st.floats(0, 1))
def test_clustered_rate_contract_and_bounds(cells: list[tuple[int, int]], level: float, value: float) -> None:
    hits = [min(h, m) for h, m in cells]
    checks = [m for _, m in cells]
    cd = rate_confidence(hits, checks)
    interval = cd.interval(level)
    assert 0.0 <= interval.low <= sum(hits) / sum(checks) <= interval.high <= 1.0
    assert_contract(cd, value, level)
    # Order of the items does not matter.
    reversed_interval = rate_confidence(hits[::-1], checks[::-1]).interval(level)
    assert (reversed_interval.low, reversed_interval.high) == pytest.approx((interval.low, interval.high), abs=1e-12)
    # Never narrower than Clopper-Pearson on the pooled answers when checks cluster.
    if interval.method == CLUSTERED:
        exact = sps.binomtest(sum(hits), sum(checks)).proportion_ci(confidence_level=level, method="exact")
        assert interval.low <= exact.low + 1e-9 and interval.high >= exact.high - 1e-9


def test_zero_events_still_give_an_interval() -> None:
    """0 events among clustered checks cannot show their clustering: every item counts as
    one check (issue 27: Clopper-Pearson on all 300 checks, upper end 0.012, covered a
    clustered 2% rate 0.83 of the time at 30 items)."""
    interval = rate_confidence([0] * 30, [10] * 30).interval()
    assert interval.low == 0.0 and interval.high == pytest.approx(1 - 0.025 ** (1 / 30))
    assert rate_confidence([5] * 30, [5] * 30).interval().low == pytest.approx(0.025 ** (1 / 30))
    # One check per item: plain Clopper-Pearson, as before.
    assert rate_confidence([0] * 300, [1] * 300).interval().high == pytest.approx(1 - 0.025 ** (1 / 300))


def test_a_single_event_among_clustered_checks_counts_every_item_as_one_check() -> None:
    """One event has no partner in its item, so its clustering cannot show either (the design
    effect estimate is 1 by construction). Before: Clopper-Pearson on all 300 checks, upper
    end 0.019, and a clustered 2% rate (10 checks per item, ICC 0.3) covered 0.90 at 30 items,
    the upper end too low 9% of the time (the samples with a single event)."""
    hits = [1] + [0] * 29
    assert cluster_rate(hits, [10] * 30).deff == pytest.approx(1.0)
    interval = rate_confidence(hits, [10] * 30).interval()
    assert interval.high == pytest.approx(float(sps.beta.ppf(0.975, 0.1 + 1, 30 - 0.1)), rel=1e-9)
    assert interval.high > 0.1
    # Two events in one item show their clustering: the design effect is estimated.
    assert rate_confidence([2] + [0] * 29, [10] * 30).interval().high < 0.1
    rng = np.random.default_rng(4)
    reps, above = 1500, 0
    for _ in range(reps):
        rates = rng.beta(0.02 * (0.7 / 0.3), 0.98 * (0.7 / 0.3), 30)
        above += rate_confidence(rng.binomial(10, rates), [10] * 30).interval().high < 0.02
    assert above / reps <= 0.03


@given(st.integers(0, 300), st.integers(1, 300), LEVELS)
def test_wilson_matches_scipy(successes: int, trials: int, level: float) -> None:
    successes = min(successes, trials)
    want = sps.binomtest(successes, trials).proportion_ci(confidence_level=level, method="wilson")
    got = wilson_interval(successes, trials, level)
    assert (got.low, got.high) == pytest.approx((want.low, want.high), abs=1e-12)


def test_climatology_interval_on_a_balanced_set_is_not_a_point() -> None:
    cd = base_rate_confidence(120, 240, lambda r: r * (1 - r), (0.5,))
    interval = cd.interval()
    wilson = wilson_interval(120, 240)
    assert interval.high == 0.25 and interval.low == pytest.approx(wilson.low * (1 - wilson.low))
    assert 0.24 < interval.low < 0.25
    # All outcomes alike: the spread is 0, its interval still has width.
    assert base_rate_confidence(0, 40, lambda r: r * (1 - r), (0.5,)).interval().high > 0


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 50), st.integers(1, 50), LEVELS, st.floats(0, 0.25))
def test_base_rate_confidence_contract(successes: int, trials: int, level: float, value: float) -> None:
    cd = base_rate_confidence(min(successes, trials), trials, lambda r: r * (1 - r), (0.5,))
    assert_contract(cd, value, level)


def test_rate_change_mover_hand() -> None:
    now = rate_confidence([1, 0, 0, 0, 1, 0], [1] * 6)
    before = rate_confidence([0, 0, 1, 0, 0, 0], [1] * 6)
    cd = rate_change_confidence(np.array([1, 0, 0, 0, 1, 0]), np.ones(6), np.array([0, 0, 1, 0, 0, 0]), np.ones(6))
    n, b = now.interval(), before.interval()
    d = 2 / 6 - 1 / 6
    r1 = np.array([1, 0, 0, 0, 1, 0]) - 2 / 6
    r0 = np.array([0, 0, 1, 0, 0, 0]) - 1 / 6
    corr = float(r1 @ r0 / math.sqrt((r1 @ r1) * (r0 @ r0)))
    assert corr < 0  # no cap applies to a negative correlation
    low = d - math.sqrt((2 / 6 - n.low) ** 2 + (b.high - 1 / 6) ** 2 - 2 * corr * (2 / 6 - n.low) * (b.high - 1 / 6))
    high = d + math.sqrt((n.high - 2 / 6) ** 2 + (1 / 6 - b.low) ** 2 - 2 * corr * (n.high - 2 / 6) * (1 / 6 - b.low))
    got = cd.interval()
    assert (got.low, got.high) == pytest.approx((low, high))
    assert got.low < 0 < got.high and cd.p_value(0.0) > 0.05


def test_rate_change_with_no_events_in_either_run_is_not_a_point() -> None:
    zeros = np.zeros(40)
    cd = rate_change_confidence(zeros, np.full(40, 5.0), zeros, np.full(40, 5.0))
    interval = cd.interval()
    assert interval.low < 0 < interval.high
    assert cd.p_value(0.0) == 1.0


def test_rate_change_family_is_nested_where_the_mover_formula_is_not() -> None:
    # Three items of 5 checks: 1, 1, 0 hits now, 5, 5, 3 before (correlation 1). The MOVER
    # formula's ends move inwards as the level rises (its 0.999 interval is the point
    # -0.733: both distances near their range, combined at r = 1); the hull stays nested.
    checks = np.full(3, 5.0)
    cd = rate_change_confidence(np.array([1.0, 1.0, 0.0]), checks, np.array([5.0, 5.0, 3.0]), checks)
    assert isinstance(cd, RateChange)
    raw = [cd._mover(level) for level in (0.5, 0.95, 0.999)]
    assert raw[2][1] - raw[2][0] < 1e-6 < raw[0][1] - raw[0][0]  # the formula alone collapses
    intervals = [cd.interval(level) for level in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999)]
    for narrow, wide in itertools.pairwise(intervals):
        assert wide.low <= narrow.low and wide.high >= narrow.high
    assert intervals[3].low < cd.estimate < intervals[3].high
    assert intervals[3].low <= raw[0][0]  # the 0.95 interval reaches as far as the 0.5 one did
    for value in (-0.9, -0.8, -0.5, -0.2, 0.0):
        assert_contract(cd, value, 0.95)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=2, max_size=20), LEVELS,
       st.floats(-0.5, 0.5))
def test_rate_change_contract(cells: list[tuple[int, int]], level: float, value: float) -> None:
    a, b = np.array([x for x, _ in cells], float), np.array([y for _, y in cells], float)
    cd = rate_change_confidence(a, np.full(a.size, 5.0), b, np.full(b.size, 5.0))
    interval = cd.interval(level)
    assert -1 <= interval.low <= cd.estimate <= interval.high <= 1
    assert cd.interval(0.999).low <= interval.low + 1e-12 and cd.interval(0.999).high >= interval.high - 1e-12
    assert_contract(cd, value, level)


# --------------------------------------------------------------------------- ECE


def kumar_reference(p: np.ndarray, y: np.ndarray, draws: int, rng: np.random.Generator) -> float:
    """Kumar et al.'s normal_debiased_ce, their way: resample each bin's event rate from a
    normal and average the plug-in ECE (bins of one item use p (1 - p), as ours do)."""
    bins = cal.bin_index(p)
    gaps, sds, weights = [], [], []
    for k in np.unique(bins):
        in_bin = bins == k
        mean_p, rate, count = p[in_bin].mean(), y[in_bin].mean(), in_bin.sum()
        variance = rate * (1 - rate) / count if count >= 2 else mean_p * (1 - mean_p) / count
        gaps.append(mean_p - rate)
        sds.append(math.sqrt(variance))
        weights.append(count / p.size)
    gaps_a, sds_a, weights_a = np.array(gaps), np.array(sds), np.array(weights)
    plugin = float(weights_a @ np.abs(gaps_a))
    resampled = np.abs(gaps_a + rng.standard_normal((draws, gaps_a.size)) * sds_a) @ weights_a
    return max(0.0, 2 * plugin - float(resampled.mean()))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_debiased_ece_matches_kumar_resampling(seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = np.clip(rng.beta(2, 2, 300), 0.01, 0.99)
    y = (rng.random(300) < np.clip(p + 0.1 * (p - 0.5), 0, 1)).astype(float)
    got = cal.ece_debiased(p, y)
    want = kumar_reference(p, y, 400_000, np.random.default_rng(seed + 100))
    assert got == pytest.approx(want, abs=2e-4)
    assert 0 <= got <= cal.ece(p, y)


def test_ece_null_draws_are_the_calibrated_models_ece() -> None:
    rng = np.random.default_rng(4)
    p = rng.uniform(0.05, 0.95, 80)
    draws = cal.ece_null_draws(p, 4000, np.random.default_rng(5), batch_cells=8000)  # several batches
    assert draws.size == 4000
    # Independent: a loop over the same model.
    direct = np.array([cal.ece(p, (rng.random(80) < p).astype(float)) for _ in range(4000)])
    assert draws.mean() == pytest.approx(direct.mean(), abs=0.004)
    assert np.quantile(draws, 0.95) == pytest.approx(np.quantile(direct, 0.95), abs=0.01)


def test_ece_interval_reaches_zero_for_a_calibrated_model_and_holds_both_estimates() -> None:
    rng = np.random.default_rng(8)
    p = rng.uniform(0.02, 0.98, 240)
    y = (rng.random(240) < p).astype(float)

    def statistics(w: np.ndarray | None) -> dict[str, object]:
        return {"ece": cal.ece(p, y, w)}

    point, cds = binary_confidences(statistics, {}, p, y, np.random.default_rng(9), 2000)
    plugin, debiased = cds["ece"], cds["ece_debiased"]
    assert isinstance(plugin, EceConfidence)
    interval = plugin.interval()
    assert point["ece"] > 0.03  # the plug-in is biased up ...
    assert interval.low == 0.0  # ... but the interval reaches the calibrated value
    assert interval.low <= point["ece_debiased"] <= point["ece"] <= interval.high <= 1.0
    assert debiased.interval() == interval and debiased.estimate == point["ece_debiased"]


@settings(max_examples=40, deadline=None)
@given(st.floats(0, 0.5), st.floats(-0.1, 0.5), st.floats(0, 0.2),
       hnp.arrays(np.float64, st.integers(2, 300), elements=st.floats(0, 0.6)), LEVELS, st.floats(-0.1, 1.1))
def test_ece_confidence_contract(plugin: float, corrected: float, sd: float, null: np.ndarray, level: float,
                                 value: float) -> None:
    cd = EceConfidence(plugin, plugin, corrected, sd, np.sort(null), (plugin,))
    interval = cd.interval(level)
    assert 0.0 <= interval.low <= plugin <= interval.high <= 1.0
    assert_contract(cd, value, level)


# --------------------------------------------------------------------------- gates


@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_adjustments_match_references(p: list[float]) -> None:
    assert gate_tests.adjust(p, "holm").tolist() == pytest.approx(reference_holm(p))
    assert gate_tests.adjust(p, "bh").tolist() == pytest.approx(reference_bh(p))
    assert gate_tests.adjust(p, "none").tolist() == p


def test_adjust_skips_gates_without_a_p_and_rejects_unknown_methods() -> None:
    got = gate_tests.adjust([0.01, math.nan, 0.02], "holm")
    assert got[0] == pytest.approx(0.02) and math.isnan(got[1]) and got[2] == pytest.approx(0.02)
    assert gate_tests.failures([0.01, math.nan], "none") == [True, False]
    with pytest.raises(ValueError):
        gate_tests.adjust([0.1], "bonferroni")


@settings(max_examples=60, deadline=None)
@given(SAMPLES, st.integers(0, 999), st.sampled_from(["max", "min", "max_abs", "max_increase", "max_decrease",
                                                       "max_change"]), FINITE, LEVELS)
def test_crossing_p_agrees_with_the_ci_rule(x: np.ndarray, seed: int, kind: str, bound: float, level: float) -> None:
    cd = studentized_bootstrap(x, np.random.default_rng(seed), 200)
    assume(isinstance(cd, StudentizedBootstrap))
    interval = cd.interval(level)
    _plain, b = gate_tests.plain_bound(kind, bound)
    ends = [interval.low, interval.high]
    assume(all(abs(abs(b) - abs(e)) > 1e-6 for e in ends))
    crossed = gate_tests.ci_crosses(interval.low, interval.high, kind, bound)
    assert crossed == (gate_tests.p_crossing(cd, kind, bound) < (1 - level) / 2)
    # With no adjustment the verdict is the CI rule itself.
    assert gate_tests.failures([gate_tests.p_crossing(cd, kind, bound)], "none", level) == [crossed]


def test_plain_bounds() -> None:
    assert gate_tests.plain_bound("max_decrease", 2.0) == ("min", -2.0)
    assert gate_tests.plain_bound("max_increase", 2.0) == ("max", 2.0)
    assert gate_tests.plain_bound("max_change", 2.0) == ("max_abs", 2.0)
    with pytest.raises(ValueError):
        gate_tests.plain_bound("below", 1.0)


def test_holm_turns_a_lucky_failure_among_many_gates_into_a_pass() -> None:
    # One gate just beyond its bound at p = 0.01 among 20: the CI rule fails it, Holm does not.
    ps = [0.01] + [0.6] * 19
    assert gate_tests.failures(ps, "none") == [True] + [False] * 19
    assert gate_tests.failures(ps, "holm") == [False] * 20
    # A gate far beyond its bound still fails.
    assert gate_tests.failures([1e-6] + [0.6] * 19, "holm")[0]


def test_beta_confidence_ends() -> None:
    cd = BetaConfidence(0.0, 0.0, 20.0)
    assert cd.interval().low == 0.0 and cd.p_greater(0.0) == 1.0
    full = BetaConfidence(1.0, 20.0, 20.0)
    assert full.interval().high == 1.0 and full.p_less(1.0) == 1.0
    with pytest.raises(ValueError):
        cd.interval(1.0)
