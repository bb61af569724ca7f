"""Unit tests for pytest_optbench.metrics.skew, metrics.stats and the Skew part of aggregate."""

from __future__ import annotations

import itertools
import json
import math
import random
import statistics

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats as sps

from pytest_optbench.metrics import skew
from pytest_optbench.metrics.stats import NO_INTERVAL, proportion_ci, wilcoxon_p
from pytest_optbench.records.item import Answer, ItemRecord, PromptRecord
from pytest_optbench.scoring.aggregate import Aggregate, AggregateOptions, aggregate

# --------------------------------------------------------------------------- strategies

answers_0_100 = st.floats(0, 100, allow_nan=False, allow_infinity=False)


@st.composite
def pair_arrays(draw: st.DrawFn, min_size: int = 1, max_size: int = 30) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(min_size, max_size))
    plus = draw(hnp.arrays(np.float64, n, elements=answers_0_100))
    minus = draw(hnp.arrays(np.float64, n, elements=answers_0_100))
    return plus, minus


# --------------------------------------------------------------------------- skew module


@given(hnp.arrays(np.float64, st.integers(1, 30), elements=answers_0_100))
def test_complementary_answers_have_zero_skew(plus: np.ndarray) -> None:
    skews = skew.pair_skews(plus, 100.0 - plus)
    # 100 - (100 - x) is x only up to rounding, so zero up to float precision.
    np.testing.assert_allclose(skews, 0.0, atol=1e-12)


@given(st.lists(st.integers(0, 100), min_size=1, max_size=30))
def test_complementary_integer_answers_have_exactly_zero_skew(plus: list[int]) -> None:
    p = np.array(plus, dtype=float)
    assert np.all(skew.pair_skews(p, 100 - p) == 0.0)


@given(pair_arrays())
def test_mean_skew_is_the_sum_of_the_valence_parts(pair: tuple[np.ndarray, np.ndarray]) -> None:
    plus, minus = pair
    delta_plus, delta_minus = skew.valence_parts(plus, minus)
    assert float(np.mean(skew.pair_skews(plus, minus))) == pytest.approx(delta_plus + delta_minus, abs=1e-9)
    assert delta_plus == pytest.approx(float(np.mean(plus)) - 50, abs=1e-9)
    assert delta_minus == pytest.approx(float(np.mean(minus)) - 50, abs=1e-9)


@given(pair_arrays())
def test_swapping_sides_keeps_skew_and_swaps_parts(pair: tuple[np.ndarray, np.ndarray]) -> None:
    plus, minus = pair
    np.testing.assert_allclose(skew.pair_skews(minus, plus), skew.pair_skews(plus, minus), atol=1e-9)
    dp, dm = skew.valence_parts(plus, minus)
    swapped = skew.valence_parts(minus, plus)
    assert swapped == pytest.approx((dm, dp), abs=1e-9)


@given(pair_arrays())
def test_mirroring_answers_negates_skew_and_parts(pair: tuple[np.ndarray, np.ndarray]) -> None:
    plus, minus = pair
    np.testing.assert_allclose(
        skew.pair_skews(100 - plus, 100 - minus), -skew.pair_skews(plus, minus), atol=1e-9
    )
    dp, dm = skew.valence_parts(plus, minus)
    assert skew.valence_parts(100 - plus, 100 - minus) == pytest.approx((-dp, -dm), abs=1e-9)


def test_pair_skew_formula_on_a_known_pair() -> None:
    # P+ = 70, P- = 40: the pair claims 110% total, Skew = 70 - (100 - 40) = 10.
    assert skew.pair_skews(np.array([70.0]), np.array([40.0])).tolist() == [10.0]


def test_complement_pairs_drops_items_with_a_missing_side_and_stays_aligned() -> None:
    plus = np.array([60.0, np.nan, 70.0, 80.0])
    minus = np.array([30.0, 20.0, np.nan, 10.0])
    kept_plus, kept_minus = skew.complement_pairs(plus, minus)
    assert kept_plus.tolist() == [60.0, 80.0]
    assert kept_minus.tolist() == [30.0, 10.0]


@pytest.mark.parametrize(
    ("delta_plus", "delta_minus", "name"),
    [
        (5.0, -3.0, "optimism"),
        (-5.0, 3.0, "pessimism"),
        (5.0, 3.0, "compound overclaim"),
        (-5.0, -3.0, "compound underclaim"),
        (0.0, 3.0, "none"),
        (5.0, 0.0, "none"),
        (0.0, 0.0, "none"),
        (-0.0, 2.0, "none"),
        (math.nan, 3.0, "none"),
        (5.0, math.nan, "none"),
        (math.inf, -3.0, "none"),
    ],
)
def test_quadrant_names(delta_plus: float, delta_minus: float, name: str) -> None:
    assert skew.quadrant(delta_plus, delta_minus) == name


@given(st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: x != 0),
       st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: x != 0))
def test_quadrant_is_decided_by_signs_only(dp: float, dm: float) -> None:
    assert skew.quadrant(dp, dm) == skew.QUADRANTS[(dp > 0, dm > 0)]
    assert skew.quadrant(dp, dm) == skew.quadrant(math.copysign(1, dp), math.copysign(1, dm))


# --------------------------------------------------------------------------- hand data

ERR = object()  # a failed call
PROSE = "I can't give a reliable probability."  # an unparsed answer


def _answer(x: object) -> Answer:
    if x is ERR:
        return Answer(raw=None, error="TimeoutError: model did not answer")
    if isinstance(x, str):
        return Answer(raw=x, value=None, reason="no number in the answer (a refusal or prose)")
    return Answer(raw=f"{x:g}", value=float(x))  # type: ignore[str-format]


def _record(item: str, spec: dict, suite: str = "s", condition: str = "base") -> ItemRecord:
    kind = spec.get("kind", "inverted_pair")
    roles = ("positive", "negative") if kind == "inverted_pair" else ("yes",)
    prompts = [PromptRecord(role, f"{item} {role}?", [_answer(x) for x in spec[role]]) for role in roles]
    return ItemRecord(
        suite=suite, item=item, condition=condition, kind=kind, file=f"{suite}.yaml",
        model="hand", prompts=prompts, track="A" if kind == "inverted_pair" else None,
        domain=spec.get("domain"), expected=spec.get("expected"), outcome=spec.get("outcome"),
    )


# Every feature the brief names: a 50 (refusal), an item whose positive side has only
# 50s / unparsed answers, failed calls, domains, expected values, a non-pair item.
HAND = {
    "a": {"domain": "health", "positive": [70, 80, 50], "negative": [40, 30, 35]},
    "b": {"domain": "health", "positive": [55, 65], "negative": [50, 45]},
    "c": {"domain": "work", "positive": [PROSE, 50], "negative": [20, 30]},
    "d": {"domain": "work", "positive": [90, ERR], "negative": [10, 20, 15], "expected": 85},
    "e": {"positive": [30, 40], "negative": [80, 60, PROSE], "expected": 40},
    "f": {"domain": "health", "positive": [62.5, 71.5, 66], "negative": [41, 39], "expected": 60},
    "z": {"kind": "binary", "outcome": True, "yes": [80, 75, ERR, PROSE, 50]},
}


def _records(data: dict = HAND, **kw: str) -> list[ItemRecord]:
    return [_record(item, spec, **kw) for item, spec in data.items()]


def _plain_mean(xs: list[float]) -> float:
    total = 0.0
    for x in xs:
        total += x
    return total / len(xs)


# The metrics of HAND, worked out by hand (pp; (value, n)). Per item, P+ and P- are the means
# of the parsed answers of each side, without the 50s unless keep_fifty:
#
#   item  P+ (no 50s)  P- (no 50s)  Skew    P+ (with 50s)  P- (with 50s)  Skew
#   a     75           35           +10     200/3          35             +5/3
#   b     60           45           +5      60             47.5           +7.5
#   c     (none)       25           -       50             25             -25
#   d     90           15           +5      90             15             +5
#   e     35           70           +5      35             70             +5
#   f     200/3        40           +20/3   200/3          40             +20/3
#
# Skew = P+ - (100 - P-); delta_plus = mean(P+) - 50, delta_minus = mean(P-) - 50.
# Domains: health = a, b, f; work = c, d (c only with the 50s); e has none.
# 34 answers: 2 failed calls (d, z), 3 prose (c, e, z), so 29 parsed, 4 of them 50 (a, b, c, z).
# item_sd: sample SD (n - 1) of the parsed answers (50s included) of each prompt with two or
# more: a+ 700/3, a- 25, b+ 50, b- 12.5, c- 50, d- 25, e+ 50, e- 200, f+ 247/12, f- 2, z 775/3
# (variances; c+ and d+ have one answer each).
# calibration_error: |P+ - expected| with the 50s: d |90 - 85|, e |35 - 40|, f |200/3 - 60|.
ITEM_VARIANCES = (700 / 3, 25, 50, 12.5, 50, 25, 50, 200, 247 / 12, 2, 775 / 3)
SHARED = {
    "error_rate": (2 / 34, 34),
    "parse_rate": (29 / 32, 32),
    "refusal_rate": (4 / 29, 29),
    "item_sd": (sum(math.sqrt(v) for v in ITEM_VARIANCES) / 11, 11),
    "calibration_error": ((5 + 5 + 20 / 3) / 3, 3),
}
EXPECTED = {
    False: {
        "skew": ((10 + 5 + 5 + 5 + 20 / 3) / 5, 5),  # 19/3
        "delta_plus": ((75 + 60 + 90 + 35 + 200 / 3) / 5 - 50, 5),  # 46/3
        "delta_minus": ((35 + 45 + 15 + 70 + 40) / 5 - 50, 5),  # -9
        "domains": {"health": ((10 + 5 + 20 / 3) / 3, 3), "work": (5.0, 1)},
        **SHARED,
    },
    True: {
        "skew": ((5 / 3 + 7.5 - 25 + 5 + 5 + 20 / 3) / 6, 6),  # 5/36
        "delta_plus": ((200 / 3 + 60 + 50 + 90 + 35 + 200 / 3) / 6 - 50, 6),  # 205/18
        "delta_minus": ((35 + 47.5 + 25 + 15 + 70 + 40) / 6 - 50, 6),  # -11.25
        "domains": {"health": ((5 / 3 + 7.5 + 20 / 3) / 3, 3), "work": ((-25 + 5) / 2, 2)},
        **SHARED,
    },
}


def _by_metric(aggs: list[Aggregate]) -> dict[str, Aggregate]:
    return {a.metric: a for a in aggs if a.domain is None}


FAST = {"n_resamples": 200}


@pytest.mark.parametrize("keep_fifty", [False, True])
def test_aggregate_matches_the_hand_computed_table(keep_fifty: bool) -> None:
    aggs = aggregate(_records(), AggregateOptions(keep_fifty=keep_fifty, **FAST))
    got = _by_metric(aggs)
    want = EXPECTED[keep_fifty]
    for metric in ("skew", "delta_plus", "delta_minus", "error_rate", "parse_rate",
                   "refusal_rate", "item_sd", "calibration_error"):
        value, n = want[metric]
        assert got[metric].value == pytest.approx(value, abs=1e-9), metric
        assert got[metric].n == n, metric
        assert got[metric].suite == "s" and got[metric].condition == "base"
    domains = {a.domain: a for a in aggs if a.domain is not None}
    assert set(domains) == set(want["domains"])
    for domain, (value, n) in want["domains"].items():
        assert domains[domain].metric == "skew"
        assert domains[domain].value == pytest.approx(value, abs=1e-9)
        assert domains[domain].n == n


def test_item_sd_agrees_with_the_statistics_module() -> None:
    """The table's variances, checked against ``statistics.variance`` on the raw answers."""
    parsed = [[x for x in answers if x is not ERR and not isinstance(x, str)]
              for spec in HAND.values() for role, answers in spec.items() if role in ("positive", "negative", "yes")]
    variances = [statistics.variance(values) for values in parsed if len(values) >= 2]
    assert variances == pytest.approx(list(ITEM_VARIANCES))


def test_fifty_is_excluded_by_default_and_kept_with_keep_fifty() -> None:
    only_a = {"a": HAND["a"]}
    default = _by_metric(aggregate(_records(only_a), AggregateOptions(**FAST)))
    kept = _by_metric(aggregate(_records(only_a), AggregateOptions(keep_fifty=True, **FAST)))
    assert default["skew"].value == pytest.approx(75 - 65)
    assert kept["skew"].value == pytest.approx(200 / 3 - 65)
    # The refusal itself is still counted either way.
    assert default["refusal_rate"].value == kept["refusal_rate"].value == pytest.approx(1 / 6)


def test_item_with_only_fifties_and_prose_on_one_side_is_dropped_from_skew() -> None:
    data = {"c": HAND["c"], "b": HAND["b"]}
    got = _by_metric(aggregate(_records(data), AggregateOptions(**FAST)))
    assert got["skew"].n == 1
    assert got["skew"].value == pytest.approx(5.0)
    assert got["delta_plus"].n == got["delta_minus"].n == 1


def test_no_usable_pair_gives_nan_skew_with_no_interval() -> None:
    data = {"c": HAND["c"]}
    got = _by_metric(aggregate(_records(data), AggregateOptions(**FAST)))
    assert got["skew"].n == 0 and math.isnan(got["skew"].value)
    assert math.isnan(got["skew"].ci_low) and math.isnan(got["skew"].ci_high)
    assert got["skew"].detail["quadrant"] == "none"
    assert got["skew"].to_dict()["value"] is None


def test_calibration_uses_every_parsed_answer_including_fifty() -> None:
    # Only Skew excludes 50s (spec section 2); a Track A item stating 50% must be able to
    # score perfectly by answering 50.
    data = {"t": {"positive": [50, 50], "negative": [50, 50], "expected": 50}}
    got = _by_metric(aggregate(_records(data), AggregateOptions(**FAST)))
    assert got["calibration_error"].value == 0.0
    assert "skew" in got and got["skew"].n == 0


def test_suite_without_pairs_has_no_skew_family() -> None:
    data = {"z": HAND["z"]}
    metrics = {a.metric for a in aggregate(_records(data), AggregateOptions(**FAST))}
    assert not metrics & {"skew", "delta_plus", "delta_minus", "complement_violation", "calibration_error"}
    assert {"error_rate", "parse_rate", "refusal_rate", "item_sd", "brier", "auc"} <= metrics


def test_groups_are_per_suite_and_condition() -> None:
    records = _records(suite="s1") + _records(suite="s2", condition="narrative_up") + _records(suite="s2")
    aggs = aggregate(records, AggregateOptions(**FAST))
    groups = sorted({(a.suite, a.condition) for a in aggs})
    assert groups == [("s1", "base"), ("s2", "base"), ("s2", "narrative_up")]
    want = EXPECTED[False]["skew"][0]
    for group in groups:
        skews = [a for a in aggs if (a.suite, a.condition) == group and a.metric == "skew" and a.domain is None]
        assert len(skews) == 1 and skews[0].value == pytest.approx(want)


def test_skew_p_value_is_the_cis_and_quadrant_named_when_significant() -> None:
    rng = np.random.default_rng(7)
    data = {
        f"i{k:02d}": {"positive": [float(x) for x in rng.normal(70, 3, 3).round()],
                      "negative": [float(x) for x in rng.normal(40, 3, 3).round()]}
        for k in range(20)
    }
    for spec in data.values():  # keep the test about Skew, not about refusals
        spec["positive"] = [x if x != 50 else 51.0 for x in spec["positive"]]
        spec["negative"] = [x if x != 50 else 49.0 for x in spec["negative"]]
    got = _by_metric(aggregate(_records(data), AggregateOptions(**FAST)))
    skews = [
        _plain_mean(s["positive"]) - (100 - _plain_mean(s["negative"]))
        for _, s in sorted(data.items())
    ]
    # The p of the CI's own distribution (agrees with it); the paper's Wilcoxon p in the detail.
    assert got["skew"].p_value == pytest.approx(got["skew"].confidence.p_value(0.0))
    assert got["skew"].detail["p_wilcoxon"] == pytest.approx(wilcoxon_p(np.array(skews)))
    assert got["skew"].p_value < 0.01
    assert got["skew"].detail["quadrant"] == "optimism"  # P+ up, P- down
    assert got["delta_plus"].ci_low > 0 and got["delta_minus"].ci_high < 0


def test_quadrant_is_none_when_neither_part_is_significant() -> None:
    data = {
        "a": {"positive": [60], "negative": [45]},
        "b": {"positive": [40], "negative": [55]},
        "c": {"positive": [52], "negative": [47]},
    }
    got = _by_metric(aggregate(_records(data), AggregateOptions(**FAST)))
    assert got["skew"].detail["quadrant"] == "none (3 pairs)"  # too few pairs to name a quadrant


# --------------------------------------------------------------------------- determinism


def _as_comparable(aggs: list[Aggregate]) -> list[str]:
    return [json.dumps(a.to_dict(), sort_keys=True) for a in aggs]


def _many_records() -> list[ItemRecord]:
    records = []
    for suite in ("alpha", "beta"):
        for condition in ("base", "debiased"):
            records.extend(_records(suite=suite, condition=condition))
    return records


@settings(max_examples=10)  # each example runs two full aggregations
@given(st.permutations(_many_records()))
def test_aggregate_is_independent_of_record_order(shuffled: list[ItemRecord]) -> None:
    options = AggregateOptions(seed=3, n_resamples=200)
    assert _as_comparable(aggregate(shuffled, options)) == _as_comparable(aggregate(_many_records(), options))


def test_aggregate_order_independence_with_default_resamples() -> None:
    records = _many_records()
    shuffled = records[:]
    random.Random(1).shuffle(shuffled)
    first, second = aggregate(records), aggregate(shuffled)
    assert _as_comparable(first) == _as_comparable(second)
    assert [a.to_dict() for a in first] == [a.to_dict() for a in second]


def test_records_round_tripped_through_json_aggregate_identically() -> None:
    # This is the xdist path: workers send records as dicts to the controller.
    records = _many_records()
    revived = [ItemRecord.from_dict(json.loads(json.dumps(r.to_dict()))) for r in reversed(records)]
    options = AggregateOptions(n_resamples=200)
    assert _as_comparable(aggregate(revived, options)) == _as_comparable(aggregate(records, options))


def test_seed_changes_the_intervals_but_not_the_estimates() -> None:
    records = _records()
    a = _by_metric(aggregate(records, AggregateOptions(seed=1, n_resamples=200)))
    b = _by_metric(aggregate(records, AggregateOptions(seed=2, n_resamples=200)))
    assert a["skew"].value == b["skew"].value
    # The resamples differ (the interval may not: at small n Student's t can set both ends).
    assert not np.array_equal(a["skew"].confidence.t_draws, b["skew"].confidence.t_draws)


# --------------------------------------------------------------------------- intervals and tests


@pytest.mark.parametrize("n", [1, 2, 10])
def test_wilcoxon_of_all_zeros_is_one(n: int) -> None:
    assert wilcoxon_p(np.zeros(n)) == 1.0


def test_wilcoxon_of_nothing_is_nan() -> None:
    assert math.isnan(wilcoxon_p(np.array([])))
    assert math.isnan(wilcoxon_p(np.array([np.nan])))


# scipy runs an exact permutation test (2**n sign flips) when there are ties or zeros and
# n <= 13, which costs up to a second per call; keep those samples small.
@given(st.one_of(
    hnp.arrays(np.float64, st.integers(1, 8),
               elements=st.one_of(st.just(0.0), st.sampled_from([1.0, -1.0, 2.5]),
                                  st.floats(-50, 50, allow_nan=False))),
    hnp.arrays(np.float64, st.integers(1, 50), elements=st.floats(-50, 50, allow_nan=False).filter(bool),
               unique=True),
    hnp.arrays(np.float64, st.integers(51, 80), elements=st.integers(-5, 5).map(float)),
    hnp.arrays(np.float64, st.integers(14, 400), elements=st.integers(-100, 100).map(lambda v: v / 2)),
    hnp.arrays(np.float64, st.integers(51, 300), elements=st.floats(-1e6, 1e6, allow_nan=False).filter(bool),
               unique=True),
))
def test_wilcoxon_matches_scipy(values: np.ndarray) -> None:
    assume(np.any(values != 0))
    nonzero = values[values != 0]
    # Exact null distribution without ties (n <= 50), else the tie-corrected normal one.
    exact = nonzero.size <= 50 and len(set(np.abs(nonzero).tolist())) == nonzero.size
    want = sps.wilcoxon(values, zero_method="wilcox", alternative="two-sided",
                        method="exact" if exact else "asymptotic").pvalue
    got = wilcoxon_p(values)
    assert 0.0 <= got <= 1.0
    assert got == float(want)  # bit for bit: both cases are computed here, in SciPy's order
    with_nan = np.concatenate([values, [np.nan]])
    assert wilcoxon_p(with_nan) == pytest.approx(got, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 8])
def test_wilcoxon_exact_matches_scipy_at_every_rank_sum(n: int) -> None:
    """Every sign pattern of 1..n: every rank sum, the mean (where the two tails meet) too."""
    for signs in itertools.product((1.0, -1.0), repeat=n):
        values = np.array(signs) * np.arange(1, n + 1)
        want = sps.wilcoxon(values, zero_method="wilcox", alternative="two-sided", method="exact").pvalue
        assert wilcoxon_p(values) == float(want), values


@given(st.integers(1, 300).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_proportion_ci_is_the_exact_binomial_interval(counts: tuple[int, int]) -> None:
    successes, trials = counts
    interval = proportion_ci(successes, trials)
    want = sps.binomtest(successes, trials).proportion_ci(confidence_level=0.95, method="exact")
    assert (interval.low, interval.high) == (pytest.approx(want.low), pytest.approx(want.high))
    assert interval.method == "clopper-pearson"
    assert interval.low <= successes / trials <= interval.high


def test_proportion_ci_without_trials_is_no_interval() -> None:
    assert proportion_ci(0, 0) == NO_INTERVAL


def test_rate_aggregates_carry_the_clustered_interval() -> None:
    # 29 of 32 answers parsed, in items of several answers each: the answers of an item are
    # clustered, so the interval is Clopper-Pearson on Korn-Graubard's effective n.
    records = _records()
    got = _by_metric(aggregate(records, AggregateOptions(**FAST)))
    hits = np.array([sum(a.value is not None for a in r.answers() if a.error is None) for r in records], float)
    checks = np.array([sum(a.error is None for a in r.answers()) for r in records], float)
    assert (hits.sum(), checks.sum()) == (29, 32)
    keep = checks > 0
    hits, checks = hits[keep], checks[keep]
    c, m, rate = hits.size, checks.sum(), hits.sum() / checks.sum()
    v_cluster = c / (c - 1) * ((hits - rate * checks) ** 2).sum() / m ** 2
    deff = max(1.0, v_cluster / (rate * (1 - rate) / (m - 1)))
    n_eff = m / deff * (sps.t.isf(0.025, m - 1) / sps.t.isf(0.025, c - 1)) ** 2
    x = rate * n_eff
    want = (sps.beta.ppf(0.025, x, n_eff - x + 1), sps.beta.ppf(0.975, x + 1, n_eff - x))
    assert (got["parse_rate"].ci_low, got["parse_rate"].ci_high) == pytest.approx(want, abs=1e-12)
    assert got["parse_rate"].ci_method.startswith("clopper-pearson, korn-graubard")
    # Wider than the exact interval that treats the 32 answers as independent.
    exact = proportion_ci(29, 32)
    assert got["parse_rate"].ci_low <= exact.low and got["parse_rate"].ci_high >= exact.high
