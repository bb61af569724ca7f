"""No verdict without data: the min_n defaults, their statistics, and gates below them."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_optbench.metrics.stats import proportion_ci
from pytest_optbench.records.item import Answer, ItemRecord, PromptRecord
from pytest_optbench.scoring.aggregate import Aggregate
from pytest_optbench.scoring.gates.evaluate import evaluate
from pytest_optbench.scoring.gates.spec import FAIL, NOT_EVALUATED, PASS, Gate
from pytest_optbench.scoring.minimum_data import MEAN_MIN_N, default_min_n, possible_n, rate_min_n, shortfall, unit

PAIRS = {"track-b": ["inverted_pair"]}


def _agg(metric: str, value: float, n: int, low: float | None = None, high: float | None = None,
         suite: str = "track-b") -> Aggregate:
    return Aggregate(suite, "base", metric, value, value if low is None else low, value if high is None else high, n)


@pytest.mark.parametrize(("kind", "bound", "expected"), [
    ("max", 0.10, 2), ("max", 0.25, 3), ("max", 0.50, 6), ("max", 0.02, 1),
    ("min", 0.95, 2), ("min", 0.50, 6), ("max", 0.0, 1), ("max", 1.0, 1), ("min", 0.0, 1),
])
def test_rate_defaults(kind: str, bound: float, expected: int) -> None:
    assert rate_min_n(kind, bound) == expected


@given(st.floats(0.01, 0.99))
def test_rate_default_is_the_first_n_whose_exact_ci_can_lie_beyond_the_bound(bound: float) -> None:
    n = rate_min_n("max", bound)
    # With every check a violation, the Clopper-Pearson CI excludes the bound at n, not at n - 1.
    assert proportion_ci(n, n).low > bound
    if n > 1:
        assert proportion_ci(n - 1, n - 1).low <= bound + 1e-12
    m = rate_min_n("min", bound)
    assert proportion_ci(0, m).high < bound
    if m > 1:
        assert proportion_ci(0, m - 1).high >= bound - 1e-12


def test_mean_default_is_the_smallest_n_a_two_sided_exact_test_can_reject_at() -> None:
    assert 2 / 2 ** MEAN_MIN_N < 0.05 <= 2 / 2 ** (MEAN_MIN_N - 1)
    assert default_min_n("skew", "max_abs", 5) == MEAN_MIN_N
    assert default_min_n("brier", "max", 0.2) == MEAN_MIN_N
    assert default_min_n("disjunction_violation_rate", "max", 0.1) == 2
    assert Gate("skew", "max_increase", 2).required_n == MEAN_MIN_N
    assert Gate("parse_rate", "max_decrease", 0.1).required_n == MEAN_MIN_N  # changes are paired means
    assert Gate("skew", "max_abs", 5, min_n=40).required_n == 40


def test_the_issues_three_gates_are_not_evaluated() -> None:
    """From the issue: a rate from one check, Track A Skew from 2 items, Track B from 2 of 60."""
    kinds = {"axiom-disjunction": ["disjunction"], "track-a": ["inverted_pair"], "track-b": ["inverted_pair"]}
    aggregates = [
        _agg("disjunction_violation_rate", 1.0, 1, 0.025, 1.0, suite="axiom-disjunction"),
        _agg("skew", -5.0, 2, -90, 80, suite="track-a"),
        _agg("skew", -49.6, 2, -60, -40, suite="track-b"),
    ]
    aggregates = [a if a.metric != "disjunction_violation_rate" else Aggregate(
        a.suite, a.condition, a.metric, a.value, a.ci_low, a.ci_high, a.n, tolerance=2.0) for a in aggregates]
    totals = {("axiom-disjunction", "base", "disjunction_violation_rate"): 20, ("track-a", "base", "skew"): 15,
              ("track-b", "base", "skew"): 60}
    verdicts = evaluate([Gate("disjunction_violation_rate", "max", 0.1, "ci"),
                         Gate("skew", "max_abs", 3, "ci", suites=("track-a",)),
                         Gate("skew", "max_abs", 5, suites=("track-b",))], aggregates, kinds, totals=totals)
    assert [v.verdict for v in verdicts] == [NOT_EVALUATED] * 3
    assert [v.reason for v in verdicts] == [
        "1 of 20 checks usable, fewer than min_n 2",
        "2 of 15 pairs usable, fewer than min_n 6",
        "2 of 60 pairs usable, fewer than min_n 6",
    ]
    assert [(v.n, v.n_total) for v in verdicts] == [(1, 20), (2, 15), (2, 60)]
    assert verdicts[2].to_dict()["min_n"] == 6 and verdicts[2].to_dict()["n_total"] == 60


def test_at_min_n_the_gate_is_judged() -> None:
    (v,) = evaluate([Gate("skew", "max_abs", 5)], [_agg("skew", 9.0, 6)], PAIRS)
    assert v.verdict == FAIL
    (v,) = evaluate([Gate("skew", "max_abs", 5, min_n=7)], [_agg("skew", 1.0, 6)], PAIRS)
    assert v.verdict == NOT_EVALUATED and v.reason == "6 pairs usable, fewer than min_n 7"
    (v,) = evaluate([Gate("skew", "max_abs", 5, min_n=1)], [_agg("skew", 1.0, 1)], PAIRS)
    assert v.verdict == PASS


def _record(kind: str, prompts: dict[str, list[str | None]], item: str = "i1", expected: float | None = None) -> ItemRecord:
    def answer(raw: str | None) -> Answer:
        if raw is None:
            return Answer(None, error="timeout")
        try:
            return Answer(raw, float(raw))
        except ValueError:
            return Answer(raw, reason="no number")
    return ItemRecord("s", item, "base", kind, "s.yaml", "m",
                      [PromptRecord(role, "q", [answer(r) for r in raws]) for role, raws in prompts.items()],
                      expected=expected)


def test_possible_n_counts_items_checks_and_answers() -> None:
    records = [
        _record("inverted_pair", {"positive": ["60", "x"], "negative": ["40", None]}, "p1", expected=60),
        _record("inverted_pair", {"positive": ["x"], "negative": ["50"]}, "p2"),
        _record("dose_response", {"rung1": ["10"], "rung2": ["20"], "rung3": ["30"], "rung4": ["x"]}, "d1"),
        _record("binary", {"yes": ["80"]}, "b1"),
    ]
    totals = possible_n(records)
    assert totals[("s", "base", "skew")] == 2
    assert totals[("s", "base", "calibration_error")] == 1
    assert totals[("s", "base", "dose_response_violation_rate")] == 3  # adjacent rungs
    assert totals[("s", "base", "binary")] == 1
    assert totals[("s", "base", "error_rate")] == 11
    assert totals[("s", "base", "parse_rate")] == 10  # received
    assert totals[("s", "base", "refusal_rate")] == 7  # parsed


def test_units_and_sentences() -> None:
    assert [unit(m) for m in ("skew", "brier", "conjunction_violation_rate", "parse_rate", "condition_effect")] == [
        "pairs", "items", "checks", "answers", "items"]
    assert unit("skew", change=True) == "items shared with the baseline"
    assert shortfall(6, 60, 6, "pairs") is None
    assert shortfall(0, None, 1, "items") == "0 items usable, fewer than min_n 1"
    assert not math.isnan(MEAN_MIN_N)
