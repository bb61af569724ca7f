"""Issue 27: where a method cannot give an honest interval the aggregate says why, and CI gates
on it are not evaluated (never certain); D2 and D5 through aggregate()."""

from __future__ import annotations

import math

import numpy as np

from pytest_optbench.metrics.confidence import NoConfidence
from pytest_optbench.records.item import Answer, ItemRecord, PromptRecord
from pytest_optbench.scoring.aggregate import Aggregate, AggregateOptions, aggregate
from pytest_optbench.scoring.baseline import Change, Comparison
from pytest_optbench.scoring.gates.evaluate import evaluate
from pytest_optbench.scoring.gates.reasons import NO_HONEST_INTERVAL
from pytest_optbench.scoring.gates.spec import FAIL, NOT_EVALUATED, PASS, Gate

OPTIONS = AggregateOptions(n_resamples=2000)


def _prompt(role: str, values: list[float]) -> PromptRecord:
    return PromptRecord(role, f"{role}?", [Answer(str(v), float(v)) for v in values])


def _pairs(skews: list[tuple[float, float]]) -> list[ItemRecord]:
    return [ItemRecord("pairs", f"p{i}", "base", "inverted_pair", "pairs.yaml", "m",
                       [_prompt("positive", [plus] * 3), _prompt("negative", [minus] * 3)], track="B")
            for i, (plus, minus) in enumerate(skews)]


def _by_metric(records: list[ItemRecord]) -> dict[str, Aggregate]:
    return {a.metric: a for a in aggregate(records, OPTIONS) if a.domain is None and a.condition == "base"}


def test_d5_six_items_all_at_skew_20_are_not_certain() -> None:
    """Before: CI [20, 20] and p = 0 for any bound beyond; the gate max_abs 19.9 failed."""
    skew = _by_metric(_pairs([(60.0, 60.0)] * 6))["skew"]
    assert skew.value == 20.0 and skew.ci_low < 19.9 and skew.ci_high > 20.1
    assert skew.ci_method.startswith("Student, SD floored")
    (verdict,) = evaluate([Gate("skew", "max_abs", 19.9, evidence="ci", min_n=1)], [skew], {"pairs": ["inverted_pair"]})
    assert verdict.verdict == PASS and verdict.p_crossing is not None and verdict.p_crossing > 0.025
    # One pair at 20.5 (answers 60 and 60.5): not whole numbers, so no floor; still an interval.
    nudged = _by_metric(_pairs([(60.0, 60.0)] * 5 + [(60.5, 60.0)]))["skew"]
    assert nudged.ci_low < nudged.value < nudged.ci_high


def test_d2_a_separated_known_answer_set_gets_a_real_auc_interval() -> None:
    """Before: 16 perfectly separated items gave AUC 1 with CI [1, 1]."""
    records = [ItemRecord("known", f"b{i}", "base", "binary", "known.yaml", "m",
                          [_prompt("yes", [90 - i if i < 8 else 40 - i])], outcome=i < 8) for i in range(16)]
    auc = _by_metric(records)["auc"]
    assert auc.value == 1.0 and auc.ci_high == 1.0 and 0.7 < auc.ci_low < 0.85
    assert auc.ci_method.startswith("Newcombe") and auc.p_value is not None
    assert auc.p_value < 0.05 and auc.detail["p_mann_whitney"] is not None  # both agree here


def _reasoned(metric: str = "skew") -> Aggregate:
    cd = NoConfidence(3.0, why="every value equal: no spread to estimate an interval from")
    return Aggregate("pairs", "base", metric, 3.0, math.nan, math.nan, 8, confidence=cd)


def test_a_ci_gate_on_an_estimate_without_an_honest_interval_is_not_evaluated() -> None:
    agg = _reasoned()
    assert agg.interval_reason is not None and agg.to_dict()["no_interval_reason"] == agg.interval_reason
    kinds = {"pairs": ["inverted_pair"]}
    ci, point = evaluate([Gate("skew", "max", 1.0, evidence="ci", min_n=1), Gate("skew", "max", 1.0, min_n=1)],
                         [agg], kinds)
    assert ci.verdict == NOT_EVALUATED and ci.reason == NO_HONEST_INTERVAL + agg.interval_reason
    assert ci.p_crossing is None and ci.family_size == 0  # outside Holm's family
    assert point.verdict == FAIL  # a point gate decides on the estimate, which is known


def test_a_change_gate_without_an_honest_interval_is_not_evaluated() -> None:
    cd = NoConfidence(0.0, why="every bootstrap draw is 0: no spread to estimate an interval from")
    change = Change("known", "base", "auc", 1.0, 1.0, math.nan, math.nan, 20, None, "paired bootstrap", cd)
    assert change.to_dict()["no_interval_reason"].startswith("every bootstrap draw")
    (v,) = evaluate([Gate("auc", "max_change", 0.01, evidence="ci")], [], {"known": ["binary"]},
                    Comparison([change]))
    assert v.verdict == NOT_EVALUATED and v.reason.startswith(NO_HONEST_INTERVAL)


def test_exact_bounds_are_honest_intervals_and_gates_use_them() -> None:
    """No spread but a finite range (here an accuracy change with every item the same): the
    exact bound is an honest interval, so the gate is evaluated on it."""
    from pytest_optbench.metrics.confidence import studentized_bootstrap

    cd = studentized_bootstrap(np.zeros(40), np.random.default_rng(0), 500, (-1.0, 1.0))
    assert cd.reason is None
    iv = cd.interval()
    change = Change("known", "base", "accuracy", 0.8, 0.8, iv.low, iv.high, 40, 1.0, "paired", cd)
    (v,) = evaluate([Gate("accuracy", "max_change", 0.2, evidence="ci")], [], {"known": ["binary"]},
                    Comparison([change]))
    assert v.verdict == PASS and v.p_crossing is not None and v.p_crossing > 0.025
