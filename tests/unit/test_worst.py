"""report/worst.py: which items the reports name as the worst, in which order, with which text.

Small hand-made records; every expected order and number is worked out in the comments.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from pytest_optbench.records import Answer, ItemRecord, PromptRecord
from pytest_optbench.report.worst import WorstItem, violating_items, worst_items


def _answers(values: list[float | None]) -> list[Answer]:
    return [Answer(raw=None, error="boom") if v is None else Answer(raw=f"{v:g}", value=float(v)) for v in values]


def pair(item: str, plus: list[float | None], minus: list[float | None], condition: str = "base") -> ItemRecord:
    prompts = [PromptRecord("positive", f"Scenario {item}.\n\nWill {item} succeed?", _answers(plus)),
               PromptRecord("negative", f"Scenario {item}.\n\nWill {item} fail?", _answers(minus))]
    return ItemRecord("s", item, condition, "inverted_pair", "s.yaml", "m", prompts, track="B")


def known(item: str, outcome: bool, yes: list[float | None]) -> ItemRecord:
    prompts = [PromptRecord("yes", f"Is {item} true?", _answers(yes))]
    return ItemRecord("k", item, "base", "binary", "k.yaml", "m", prompts, outcome=outcome)


def conjunction(item: str, a: float, b: float, both: float) -> ItemRecord:
    prompts = [PromptRecord(role, f"P({role})?", _answers([value])) for role, value in
               (("a", a), ("b", b), ("both", both))]
    return ItemRecord("c", item, "base", "conjunction", "c.yaml", "m", prompts)


# Skew = P+ - (100 - P-): p1 +10, p2 -30, p3 0, p4 only 50s (no Skew unless keep_fifty: then 0),
# p5 +25 (mean of 85 and 95 is 90; 35), p6 a failed positive side (no Skew).
PAIRS = [
    pair("p1", [70], [40]),
    pair("p2", [40], [30]),
    pair("p3", [60], [40]),
    pair("p4", [50], [50]),
    pair("p5", [85, 95], [35]),
    pair("p6", [None], [20]),
]


def test_pairs_are_ordered_by_absolute_skew_and_unusable_ones_left_out() -> None:
    worst = worst_items(PAIRS)
    assert [(w.kind, w.label, w.value) for w in worst] == [
        ("skew", "s::p2", -30.0), ("skew", "s::p5", 25.0), ("skew", "s::p1", 10.0), ("skew", "s::p3", 0.0)]


def test_the_text_shows_the_positive_question_and_the_negative_one() -> None:
    [first] = worst_items(PAIRS, limit=1)
    assert first == WorstItem("skew", "s::p2", -30.0, "Scenario p2.\n\nWill p2 succeed? / Will p2 fail?")


def test_keep_fifty_brings_an_all_fifty_pair_back() -> None:
    labels = [w.label for w in worst_items(PAIRS, keep_fifty=True)]
    assert labels[:3] == ["s::p2", "s::p5", "s::p1"] and sorted(labels[3:]) == ["s::p3", "s::p4"]


def test_limit_applies_per_kind_and_conditions_show_in_the_label() -> None:
    records = [pair("p1", [95], [40], condition="narrative_up")] + PAIRS
    worst = worst_items(records, limit=2)
    assert [w.label for w in worst] == ["s::p1[narrative_up]", "s::p2"]  # +35, then -30


def test_wrong_known_answers_ordered_by_confidence() -> None:
    records = [
        known("k1", True, [20]),  # says no (0.2), truth yes: wrong with confidence 0.8
        known("k2", False, [90, 100]),  # 0.95 yes, truth no: wrong, 0.95
        known("k3", True, [90]),  # right
        known("k4", False, [50]),  # 0.5 counts as yes: wrong, confidence 0.5
        known("k5", False, [None]),  # no answer: left out
        known("k6", False, [10]),  # right
    ]
    worst = [w for w in worst_items(records) if w.kind == "wrong"]
    assert [(w.label, w.value) for w in worst] == [("k::k2", pytest.approx(0.95)), ("k::k1", pytest.approx(0.8)),
                                                   ("k::k4", pytest.approx(0.5))]
    assert worst[0].text == "Is k2 true? (answer: no)" and worst[1].text == "Is k1 true? (answer: yes)"


def test_violations_come_from_the_given_list_with_the_mean_answers() -> None:
    records = [conjunction("c1", 40, 30, 50), conjunction("c2", 60, 70, 20)]
    worst = worst_items(records, violating=[("c", "base", "c1"), ("c", "base", "not-in-the-records")])
    assert len(worst) == 1
    [item] = worst
    assert (item.kind, item.label, item.text) == ("violation", "c::c1", "conjunction: a 40, b 30, both 50")
    assert math.isnan(item.value)


def test_violating_items_reads_only_tolerance_zero_batteries() -> None:
    aggregates = [
        SimpleNamespace(suite="c", condition="base", tolerance=None, detail={"violating_items": ["c1", "c3"]}),
        SimpleNamespace(suite="c", condition="base", tolerance=0.0, detail={"violating_items": ["c4"]}),
        SimpleNamespace(suite="c", condition="base", tolerance=2.0, detail={"violating_items": ["c1"]}),
        SimpleNamespace(suite="d", condition="up", tolerance=None, detail={}),
        SimpleNamespace(suite="e", condition="base", tolerance=None, detail=None),
    ]
    assert violating_items(aggregates) == [("c", "base", "c1"), ("c", "base", "c3"), ("c", "base", "c4")]


def test_nothing_to_show() -> None:
    assert worst_items([]) == []
    assert worst_items([pair("p6", [None], [20])]) == []
