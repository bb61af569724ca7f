"""Unit tests for pytest_optbench.metrics.axioms and the axiom part of aggregate.

Spec section 2: conjunction P(both) > min(P(a), P(b)) + t; disjunction P(either) <
max(P(a), P(b)) - t; conditional |P(a) P(b|a) / 100 - P(both)| > t; dose-response counts
adjacent rungs moving against ``direction`` by more than t. Each prompt contributes the mean of
its parsed samples; items with a missing answer are left out, never counted coherent.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pytest_optbench.metrics import axioms
from pytest_optbench.records.item import Answer, ItemRecord, PromptRecord
from pytest_optbench.scoring.aggregate import AggregateOptions, aggregate, axiom_violations
from pytest_optbench.scoring.tolerances import DEFAULT_TOLERANCES

FAST = {"n_resamples": 200}
ROLES = {
    "conjunction": ("a", "b", "both"),
    "disjunction": ("a", "b", "either"),
    "conditional": ("a", "b_given_a", "both"),
}
METRIC = {
    "conjunction": "conjunction_violation_rate", "disjunction": "disjunction_violation_rate",
    "conditional": "conditional_violation_rate", "dose_response": "dose_response_violation_rate",
}


def _prompt(role: str, values) -> PromptRecord:
    if not isinstance(values, (list, tuple)):
        values = [values]
    answers = [Answer(None, None, reason="no number") if v is None else Answer(str(v), float(v)) for v in values]
    return PromptRecord(role, f"question {role}", answers)


def _record(kind: str, item: str, answers: dict, direction: str | None = None,
            suite: str = "axioms", condition: str = "base") -> ItemRecord:
    return ItemRecord(
        suite=suite, item=item, condition=condition, kind=kind, file=f"{suite}.yaml", model="test",
        prompts=[_prompt(role, value) for role, value in answers.items()], direction=direction,
    )


def _set_records(kind: str, rows) -> list[ItemRecord]:
    return [_record(kind, f"i{k:03d}", dict(zip(ROLES[kind], row, strict=True))) for k, row in enumerate(rows)]


def _ladder_records(ladders, directions) -> list[ItemRecord]:
    return [
        _record("dose_response", f"d{k:03d}", {f"rung{i + 1}": v for i, v in enumerate(ladder)}, direction)
        for k, (ladder, direction) in enumerate(zip(ladders, directions, strict=True))
    ]


def _violation_aggs(records, tolerances=None):
    options = AggregateOptions(tolerances=tolerances or {}, **FAST)
    return [a for a in aggregate(records, options) if a.metric.endswith("_violation_rate")]


answer = st.floats(0, 100, allow_nan=False)
integer_answer = st.integers(0, 100).map(float)
tolerance = st.floats(0, 30, allow_nan=False)


@st.composite
def answer_arrays(draw, columns=3, elements=answer):
    n = draw(st.integers(1, 30))
    return [draw(hnp.arrays(np.float64, n, elements=elements)) for _ in range(columns)]


# --------------------------------------------------------------------------- module, hand data


def test_conjunction_hand() -> None:
    a, b = np.array([60.0, 60, 60, 30]), np.array([50.0, 50, 50, 90])
    both = np.array([30.0, 50, 51, 35])
    assert axioms.conjunction_violations(a, b, both).tolist() == [False, False, True, True]
    assert axioms.conjunction_violations(a, b, both, 5.0).tolist() == [False, False, False, False]
    assert axioms.conjunction_violations(a, b, both, 4.9).tolist() == [False, False, False, True]


def test_disjunction_hand() -> None:
    a, b = np.array([40.0, 40, 40]), np.array([30.0, 30, 30])
    either = np.array([58.0, 40, 39])
    assert axioms.disjunction_violations(a, b, either).tolist() == [False, False, True]
    assert axioms.disjunction_violations(a, b, either, 1.0).tolist() == [False, False, False]


def test_conditional_hand() -> None:
    a, b_given_a = np.array([50.0, 50, 80]), np.array([40.0, 40, 50])
    both = np.array([20.0, 23, 30])
    assert axioms.conditional_violations(a, b_given_a, both).tolist() == [False, True, True]
    assert axioms.conditional_violations(a, b_given_a, both, 3.0).tolist() == [False, False, True]
    assert axioms.conditional_violations(a, b_given_a, both, 10.0).tolist() == [False, False, False]


def test_dose_response_hand() -> None:
    ladder = np.array([30.0, 40, 35, 50, 50, 49])
    assert axioms.dose_response_steps(ladder, "increasing").tolist() == [False, True, False, False, True]
    assert axioms.dose_response_steps(ladder, "increasing", 2.0).tolist() == [False, True, False, False, False]
    assert axioms.dose_response_steps(ladder, "decreasing").tolist() == [True, False, True, False, False]


def test_complement_violation_hand() -> None:
    got = axioms.complement_violation(np.array([70.0, 30, 50]), np.array([40.0, 60, 50]))
    assert got.tolist() == [10.0, 10.0, 0.0]


def test_usable_mask() -> None:
    nan = math.nan
    mask = axioms.usable(np.array([1.0, nan, 3, 4]), np.array([1.0, 2, nan, 4]))
    assert mask.tolist() == [True, False, False, True]


# --------------------------------------------------------------------------- module, properties


@given(answer_arrays(columns=2, elements=integer_answer))
def test_coherent_conjunction_never_violates(cols) -> None:
    a, b = cols
    assert not axioms.conjunction_violations(a, b, a * b / 100).any()


@given(answer_arrays(columns=2, elements=integer_answer))
def test_coherent_disjunction_never_violates(cols) -> None:
    a, b = cols
    assert not axioms.disjunction_violations(a, b, a + b - a * b / 100).any()


@given(answer_arrays(columns=2))
def test_coherent_conditional_never_violates(cols) -> None:
    a, b_given_a = cols
    assert not axioms.conditional_violations(a, b_given_a, a * b_given_a / 100).any()


@given(answer_arrays(columns=2), st.floats(1e-9, 1))
def test_coherent_real_valued_sets_pass_with_any_positive_tolerance(cols, t) -> None:
    a, b = cols
    assert not axioms.conjunction_violations(a, b, a * b / 100, t).any()
    assert not axioms.disjunction_violations(a, b, a + b - a * b / 100, t).any()


@given(st.lists(answer, min_size=2, max_size=12), st.sampled_from(["increasing", "decreasing"]))
def test_monotone_ladders_never_violate(values, direction) -> None:
    ladder = np.sort(values)
    if direction == "decreasing":
        ladder = ladder[::-1]
    assert not axioms.dose_response_steps(ladder, direction).any()


@given(answer_arrays(), tolerance, tolerance)
def test_raising_tolerance_never_adds_violations(cols, t1, t2) -> None:
    low, high = sorted((t1, t2))
    a, b, c = cols
    for check in (axioms.conjunction_violations, axioms.disjunction_violations, axioms.conditional_violations):
        strict, loose = check(a, b, c, low), check(a, b, c, high)
        assert not (loose & ~strict).any()
    for direction in ("increasing", "decreasing"):
        strict, loose = axioms.dose_response_steps(a, direction, low), axioms.dose_response_steps(a, direction, high)
        assert not (loose & ~strict).any()


@given(st.lists(answer, min_size=2, max_size=12))
def test_dose_response_counts_steps_against_direction(values) -> None:
    ladder = np.array(values)
    up = axioms.dose_response_steps(ladder, "increasing")
    down = axioms.dose_response_steps(ladder, "decreasing")
    assert up.size == down.size == len(values) - 1
    for k in range(len(values) - 1):  # moves within 1e-9 pp are float rounding, not reversals
        assert up[k] == (values[k + 1] < values[k] - 1e-9)
        assert down[k] == (values[k + 1] > values[k] + 1e-9)
    assert not (up & down).any()


@given(answer_arrays(columns=2))
def test_complement_violation_is_unsigned_distance(cols) -> None:
    plus, minus = cols
    got = axioms.complement_violation(plus, minus)
    for g, x, y in zip(got, plus, minus, strict=True):
        assert g == abs(x + y - 100.0)
    assert (got >= 0).all()
    np.testing.assert_allclose(axioms.complement_violation(plus, 100 - plus), 0, atol=1e-12)


def test_nan_answers_are_not_coherent_in_the_module() -> None:
    # The raw checks see NaN comparisons as False; ``usable`` is what keeps them out.
    nan = np.array([math.nan])
    one = np.array([50.0])
    assert not axioms.usable(nan, one, one).any()


# --------------------------------------------------------------------------- aggregate


def _ref_set_violations(kind, rows, t):
    """Plain-Python (hits, checks, ids) from the spec's definitions."""
    hits = checks = 0
    bad = []
    t += 1e-9  # the documented floating-point margin (metrics/axioms.py), once for every row
    for k, row in enumerate(rows):
        means = []
        for values in row:
            values = [v for v in (values if isinstance(values, (list, tuple)) else [values]) if v is not None]
            means.append(sum(values) / len(values) if values else None)
        if None in means:
            continue
        x, y, z = means
        if kind == "conjunction":
            hit = z > min(x, y) + t
        elif kind == "disjunction":
            hit = z < max(x, y) - t
        else:
            hit = abs(x * y / 100 - z) > t
        checks += 1
        if hit:
            hits += 1
            bad.append(f"i{k:03d}")
    return hits, checks, bad


HAND_SETS = {
    # rows: (a, b, both/either); lists are samples, None an unparsed answer
    "conjunction": [(60, 50, 30), (60, 50, 55), ([70, 72], [40, 44], [41, 44]), (40, 40, None),
                    (20, 90, 18), (20, 90, 21)],
    "disjunction": [(40, 30, 58), (40, 30, 35), ([40, 42], 30, [41, 40]), (None, 30, 60), (10, 10, 9.5)],
    "conditional": [(50, 40, 20), (50, 40, 26), ([80, 60], 50, 35), (50, None, 25), (90, 90, 81)],
}


@pytest.mark.parametrize("kind", sorted(HAND_SETS))
@pytest.mark.parametrize("t", [0.0, 0.5, 2.0, 10.0])
def test_axiom_violations_hand(kind: str, t: float) -> None:
    rows = HAND_SETS[kind]
    assert axiom_violations(_set_records(kind, rows), kind, t) == _ref_set_violations(kind, rows, t)


def test_axiom_violations_hand_expected_values() -> None:
    assert axiom_violations(_set_records("conjunction", HAND_SETS["conjunction"]), "conjunction", 0.0) == (
        3, 5, ["i001", "i002", "i005"])
    # [40, 42] -> 41 vs either [41, 40] -> 40.5: a violation at 0, not at 0.5; 9.5 vs
    # max 10 is one at 0 and exactly on the edge (not beyond it) at 0.5
    assert axiom_violations(_set_records("disjunction", HAND_SETS["disjunction"]), "disjunction", 0.0) == (
        3, 4, ["i001", "i002", "i004"])
    assert axiom_violations(_set_records("disjunction", HAND_SETS["disjunction"]), "disjunction", 0.5) == (
        1, 4, ["i001"])
    # a = mean(80, 60) = 70 and 70 * 50 / 100 = 35: coherent; 90 * 90 / 100 = 81: coherent
    assert axiom_violations(_set_records("conditional", HAND_SETS["conditional"]), "conditional", 0.0) == (
        1, 4, ["i001"])


def test_dose_response_hand_counts() -> None:
    ladders = [[30, 40, 50, 60], [30, 40, 35, 50], [70, 60, 65, 50], [70, 60, 50, 40], [30, None, 50, 60],
               [[30, 40], 34, 36, 33]]
    directions = ["increasing", "increasing", "decreasing", "decreasing", "increasing", "increasing"]
    records = _ladder_records(ladders, directions)
    # item 4 has a missing rung and is left out; item 5's rungs are 35, 34, 36, 33: 2 steps down
    assert axiom_violations(records, "dose_response", 0.0) == (4, 15, ["d001", "d002", "d005"])
    # at t = 1: 40 -> 35 (5), 60 -> 65 (5), 35 -> 34 (1, not > 1), 36 -> 33 (3)
    assert axiom_violations(records, "dose_response", 1.0) == (3, 15, ["d001", "d002", "d005"])
    assert axiom_violations(records, "dose_response", 5.0) == (0, 15, [])


def test_nan_answers_are_left_out_not_counted_coherent() -> None:
    rows = [(60, 50, None), (None, 50, 90), (60, 50, 90)]
    hits, checks, bad = axiom_violations(_set_records("conjunction", rows), "conjunction", 0.0)
    assert (hits, checks, bad) == (1, 1, ["i002"])
    # only missing answers: no checks at all, so no rate rather than a 0% rate
    aggs = _violation_aggs(_set_records("conjunction", rows[:2]))
    (agg,) = aggs
    assert agg.n == 0 and math.isnan(agg.value)


def test_aggregate_emits_one_rate_per_tolerance() -> None:
    records = (_set_records("conjunction", HAND_SETS["conjunction"])
               + _set_records("conditional", HAND_SETS["conditional"]))
    tolerances = {"conjunction_violation_rate": (2.0, 0.5, 0.0), "conditional_violation_rate": (3.0,)}
    aggs = _violation_aggs(records, tolerances)
    got = sorted((a.metric, a.tolerance) for a in aggs)
    # each asked-for tolerance, and the metric's default (2 pp; 10 pp for the product rule)
    assert got == [("conditional_violation_rate", 3.0), ("conditional_violation_rate", 10.0),
                   ("conjunction_violation_rate", 0.0), ("conjunction_violation_rate", 0.5),
                   ("conjunction_violation_rate", 2.0)]
    for agg in aggs:
        kind = agg.metric.removesuffix("_violation_rate")
        hits, checks, bad = _ref_set_violations(kind, HAND_SETS[kind], agg.tolerance)
        assert agg.n == checks
        assert agg.value == pytest.approx(hits / checks)
        assert agg.detail["violating_items"] == bad
        assert agg.ci_method == "clopper-pearson"
        assert 0.0 <= agg.ci_low <= agg.value <= agg.ci_high <= 1.0


def test_aggregate_emits_only_the_kinds_present() -> None:
    records = _set_records("disjunction", HAND_SETS["disjunction"])
    assert [a.metric for a in _violation_aggs(records)] == ["disjunction_violation_rate"]


@st.composite
def axiom_batteries(draw):
    kind = draw(st.sampled_from(sorted(ROLES)))
    n = draw(st.integers(1, 15))
    value = st.one_of(st.none(), integer_answer, st.lists(integer_answer, min_size=1, max_size=3))
    rows = [tuple(draw(value) for _ in range(3)) for _ in range(n)]
    return kind, rows


@given(axiom_batteries(), st.lists(tolerance, max_size=3))
def test_aggregate_rates_match_reference(battery, tols) -> None:
    kind, rows = battery
    metric = METRIC[kind]
    aggs = _violation_aggs(_set_records(kind, rows), {metric: tuple(tols)})
    assert sorted(a.tolerance for a in aggs) == sorted({DEFAULT_TOLERANCES[metric], *tols})
    previous = math.inf
    for agg in sorted(aggs, key=lambda a: a.tolerance):
        hits, checks, bad = _ref_set_violations(kind, rows, agg.tolerance)
        assert agg.metric == metric and agg.n == checks
        assert agg.detail["violating_items"] == bad
        if checks:
            assert 0.0 <= agg.value <= 1.0 and agg.value == pytest.approx(hits / checks)
            assert agg.ci_low <= agg.value <= agg.ci_high
            assert hits <= previous
            previous = hits


@st.composite
def coherent_batteries(draw):
    kind = draw(st.sampled_from(sorted(ROLES)))
    n = draw(st.integers(1, 15))
    rows = []
    for _ in range(n):
        x, y = draw(integer_answer), draw(integer_answer)
        z = {"conjunction": x * y / 100, "disjunction": x + y - x * y / 100, "conditional": x * y / 100}[kind]
        rows.append((x, y, z))
    return kind, rows


@given(coherent_batteries())
def test_aggregate_coherent_sets_have_no_violations(battery) -> None:
    kind, rows = battery
    (agg,) = _violation_aggs(_set_records(kind, rows))
    assert agg.value == 0.0 and agg.n == len(rows) and agg.detail["violating_items"] == []


@given(st.lists(st.tuples(st.lists(integer_answer, min_size=3, max_size=8),
                          st.sampled_from(["increasing", "decreasing"])), min_size=1, max_size=10),
       tolerance, tolerance)
@example(ladders=[([0, 30, 0], "increasing")], t1=0.0, t2=29.999999999999996)  # a step within the margin
def test_aggregate_dose_response_matches_reference(ladders, t1, t2) -> None:
    values = [v for v, _ in ladders]
    directions = [d for _, d in ladders]
    records = _ladder_records(values, directions)
    counts = []
    for t in sorted((t1, t2)):
        hits = checks = 0
        bad = []
        for k, (ladder, direction) in enumerate(zip(values, directions, strict=True)):
            margin = t + 1e-9  # the documented floating-point margin (metrics/axioms.py)
            against = [(b - a < -margin) if direction == "increasing" else (b - a > margin)
                       for a, b in itertools.pairwise(ladder)]
            hits += sum(against)
            checks += len(against)
            if any(against):
                bad.append(f"d{k:03d}")
        assert axiom_violations(records, "dose_response", t) == (hits, checks, bad)
        counts.append(hits)
    assert counts[1] <= counts[0]


@given(st.lists(st.tuples(st.lists(integer_answer, min_size=3, max_size=8),
                          st.sampled_from(["increasing", "decreasing"])), min_size=1, max_size=10))
def test_aggregate_monotone_ladders_have_no_violations(ladders) -> None:
    values = [sorted(v, reverse=(d == "decreasing")) for v, d in ladders]
    records = _ladder_records(values, [d for _, d in ladders])
    (agg,) = _violation_aggs(records)
    assert agg.metric == "dose_response_violation_rate" and agg.value == 0.0
    assert agg.n == sum(len(v) - 1 for v in values)


def test_a_baseline_pairs_violation_checks_item_by_item_when_runs_lose_different_items() -> None:
    from pytest_optbench.scoring.baseline import compare

    # Four conjunction sets; the current run lost an answer of i000, the baseline one of i003.
    # Only i001 and i002 have usable answers in both runs, and only they may be compared.
    before_rows = [(60, 50, 40), (60, 50, 70), (60, 50, 40), (60, 50, None)]
    now_rows = [(60, None, 40), (60, 50, 40), (60, 50, 70), (60, 50, 40)]
    before, now = _set_records("conjunction", before_rows), _set_records("conjunction", now_rows)
    comparison = compare(now, before, AggregateOptions(**FAST))
    (change,) = [c for c in comparison.changes if c.metric == "conjunction_violation_rate"]
    # i001 violates only in the baseline, i002 only now: 1 of 2 in each run, paired on 2 items.
    assert (change.n, change.baseline, change.current) == (2, 0.5, 0.5)


def test_violation_counts_keep_every_item_in_order() -> None:
    from pytest_optbench.kinds import kind_of
    from pytest_optbench.kinds.base import violation_counts

    records = _set_records("conjunction", [(60, 50, 70), (60, None, 40), (60, 50, 40)])
    assert violation_counts(kind_of("conjunction"), records, 0.0) == ([1, 0, 0], [1, 0, 1], ["i000"])
