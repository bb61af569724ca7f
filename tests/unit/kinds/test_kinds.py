"""Unit tests for pytest_optbench.kinds: the item-kind registry and each kind's knowledge.

The registry must hold exactly the kinds of the public suite format (docs/suite-format.md),
with the fields of its table; each kind's roles, violation rule and explanation are checked
against hand-computed cases; and a kind defined here, in the test, flows through validation,
prompts, the simulated model, aggregation, gates, the HTML explanation and the linter without
any other module knowing its name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_optbench import kinds
from pytest_optbench.kinds.base import (
    DATA,
    ERROR,
    PROBABILITY_PROMPT,
    TEXT,
    VIOLATION,
    WARNING,
    WORD,
    FieldError,
    FieldSpec,
    KindBase,
    Lint,
    Question,
    Simulator,
    Violation,
    Violations,
)
from pytest_optbench.kinds.binary import SYSTEM_PROMPT as BINARY_PROMPT
from pytest_optbench.kinds.inverted_pair import RECOMMENDATION_PROMPT, SALIENCE_PROMPT
from pytest_optbench.options import Settings
from pytest_optbench.prompts.build import render_prompts
from pytest_optbench.providers.base import Prompt
from pytest_optbench.providers.sim import SimulatedModel
from pytest_optbench.records.item import Answer, ItemRecord, PromptRecord
from pytest_optbench.report.model.items import violation_size
from pytest_optbench.report.model.tables import KEY_ORDER
from pytest_optbench.scoring.aggregate import (
    METRIC_KINDS,
    VIOLATION_METRICS,
    AggregateOptions,
    aggregate,
    axiom_violations,
    primary_answer,
)
from pytest_optbench.scoring.baseline import compare
from pytest_optbench.scoring.gates.evaluate import evaluate
from pytest_optbench.scoring.gates.spec import FAIL, NOT_EVALUATED, parse_thresholds
from pytest_optbench.scoring.minimum_data import possible_n
from pytest_optbench.scoring.tolerances import DEFAULT_TOLERANCES
from pytest_optbench.suite.lint import lint_suites
from pytest_optbench.suite.load import KIND_FIELDS, SuiteError, parse_suite

SPEC = Path(__file__).resolve().parents[3] / "docs" / "suite-format.md"
FAST = AggregateOptions(n_resamples=100)


def _spec_rows(heading: str) -> list[list[str]]:
    """The rows of the first table under ``heading`` in the suite-format document."""
    text = SPEC.read_text(encoding="utf-8")
    section = text[text.index(heading):]
    rows = []
    for line in section.splitlines()[1:]:
        if line.startswith("#"):
            break
        if line.startswith("| `"):
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def _names(cell: str) -> list[str]:
    return re.findall(r"`([a-z_]+)`", cell)


def _prompt(role: str, *values: float | None) -> PromptRecord:
    answers = [Answer(None, None, reason="no number") if v is None else Answer(str(v), float(v)) for v in values]
    return PromptRecord(role, f"question {role}", answers)


def _record(kind: str, item: str, answers: Mapping[str, Any], condition: str = "base",
            direction: str | None = None, suite: str = "s") -> ItemRecord:
    prompts = [_prompt(role, *(v if isinstance(v, tuple) else (v,))) for role, v in answers.items()]
    return ItemRecord(suite, item, condition, kind, f"{suite}.yaml", "hand", prompts, direction=direction)


# --------------------------------------------------------------------------- the registry


def test_the_registry_holds_exactly_the_kinds_of_the_spec_with_their_fields() -> None:
    rows = _spec_rows("### Item kinds and the fields each requires")
    assert [_names(row[0])[0] for row in rows] == list(kinds.KINDS)
    for row in rows:
        kind = kinds.kind_of(_names(row[0])[0])
        assert kinds.required_fields(kind) == tuple(_names(row[1])), kind.name
        assert kinds.optional_fields(kind) == tuple(_names(row[2])), kind.name
    assert dict(KIND_FIELDS) == {
        name: (kinds.required_fields(k), kinds.optional_fields(k)) for name, k in kinds.KINDS.items()
    }


def test_the_metric_table_is_derived_from_the_kinds_as_the_spec_says() -> None:
    for row in _spec_rows("## 2. Metric names"):
        applies = row[1]
        for metric in _names(row[0]):
            if applies in kinds.KINDS:
                assert METRIC_KINDS[metric] == (applies,), metric
            elif applies == "all":
                assert METRIC_KINDS[metric] is None, metric
    assert dict(VIOLATION_METRICS) == {
        "conjunction_violation_rate": "conjunction", "disjunction_violation_rate": "disjunction",
        "conditional_violation_rate": "conditional", "dose_response_violation_rate": "dose_response",
    }


def test_kind_of_names_the_known_kinds_for_an_unknown_one() -> None:
    with pytest.raises(KeyError, match="unknown item kind 'pairs' \\(one of: inverted_pair, binary"):
        kinds.kind_of("pairs")
    assert not kinds.uses("pairs", VIOLATION)


def test_a_kind_is_registered_once() -> None:
    class Impostor(KindBase):
        name = "binary"

    with pytest.raises(ValueError, match="already registered"):
        kinds.register(Impostor())
    assert type(kinds.kind_of("binary")).__name__ == "Binary"


def test_the_same_kind_registered_again_replaces_itself() -> None:
    # Its module imported again (pytester runs in one process, importlib.reload): same class.
    binary = kinds.kind_of("binary")
    again = type(binary)()
    try:
        assert kinds.register(again) is again and kinds.kind_of("binary") is again
    finally:
        kinds.register(binary)  # back in place, in the registry's order
    assert list(kinds.KINDS)[:2] == ["inverted_pair", "binary"]


def test_typed_text_and_label_fields_come_from_the_field_types() -> None:
    assert set(kinds.typed_fields()) == {"expected", "outcome", "direction", "ladder"}
    assert kinds.text_fields() == (
        "scenario", "positive", "negative", "question", "context", "a", "b", "both", "either", "b_given_a")
    assert kinds.label_fields() == ("expected", "outcome", "direction")
    assert kinds.reserving_kind("expected") == "inverted_pair" and kinds.reserving_kind("outcome") is None
    assert kinds.tracked_kinds() == ("inverted_pair",)


# --------------------------------------------------------------------------- fields


@pytest.mark.parametrize(("kind", "field", "type_"), [
    ("inverted_pair", "expected", DATA), ("binary", "outcome", DATA), ("binary", "context", TEXT),
    ("dose_response", "direction", WORD), ("dose_response", "ladder", DATA), ("conditional", "b_given_a", TEXT),
])
def test_field_types(kind: str, field: str, type_: str) -> None:
    (spec,) = [f for f in kinds.kind_of(kind).fields if f.name == field]
    assert spec.type == type_


@pytest.mark.parametrize(("kind", "fields", "track", "key", "fragment"), [
    ("inverted_pair", {"expected": 120}, "A", "expected", "from 0 to 100, got 120"),
    ("inverted_pair", {"expected": True}, "A", "expected", "got True"),
    ("inverted_pair", {}, "A", "expected", "required for Track A"),
    ("binary", {"outcome": "yes"}, None, "outcome", "true or false, got 'yes'"),
    ("dose_response", {"direction": "up", "ladder": ["a", "b", "c"]}, None, "direction", "got 'up'"),
    ("dose_response", {"direction": "increasing", "ladder": ["a", "b"]}, None, "ladder", "at least 3"),
    ("dose_response", {"direction": "increasing", "ladder": ["a", " ", "c"]}, None, "ladder", "rung 2"),
])
def test_check_fields_rejects_with_the_key(kind: str, fields: dict[str, Any], track: str | None,
                                           key: str, fragment: str) -> None:
    with pytest.raises(FieldError) as info:
        kinds.kind_of(kind).check_fields(fields, track)
    assert info.value.key == key and fragment in info.value.message


def test_check_fields_accepts_and_normalises() -> None:
    pair = kinds.kind_of("inverted_pair")
    assert pair.check_fields({"expected": 0}, "A") == {"expected": 0}
    assert pair.check_fields({}, "B") == {}
    dose = kinds.kind_of("dose_response").check_fields({"direction": "decreasing", "ladder": ["a", "b", "c"]}, None)
    assert dose["ladder"] == ("a", "b", "c")  # immutable, like the rest of an Item


def test_a_suite_error_names_file_item_line_and_key() -> None:
    data = {"optbench": 1, "kind": "dose_response",
            "items": [{"id": "d1", "scenario": "S", "question": "Q?", "direction": "sideways", "ladder": ["a", "b", "c"]}]}
    with pytest.raises(SuiteError) as info:
        parse_suite(data, "dose.yaml", "dose")
    assert str(info.value) == (
        "dose.yaml, item 'd1', key 'direction': must be 'increasing' or 'decreasing', got 'sideways'.")


# --------------------------------------------------------------------------- roles and prompts


@pytest.mark.parametrize(("kind", "fields", "expected"), [
    ("inverted_pair", {"scenario": "S.", "positive": "P?", "negative": "N?"},
     [Question("positive", "S.", "P?"), Question("negative", "S.", "N?")]),
    ("binary", {"question": "Q?", "outcome": True}, [Question("yes", "", "Q?")]),
    ("binary", {"question": "Q?", "outcome": True, "context": "C."}, [Question("yes", "C.", "Q?")]),
    ("conjunction", {"scenario": "S.", "a": "A?", "b": "B?", "both": "AB?"},
     [Question("a", "S.", "A?"), Question("b", "S.", "B?"), Question("both", "S.", "AB?")]),
    ("disjunction", {"scenario": "S.", "a": "A?", "b": "B?", "either": "E?"},
     [Question("a", "S.", "A?"), Question("b", "S.", "B?"), Question("either", "S.", "E?")]),
    ("conditional", {"scenario": "S.", "a": "A?", "b_given_a": "B|A?", "both": "AB?"},
     [Question("a", "S.", "A?"), Question("b_given_a", "S.", "B|A?"), Question("both", "S.", "AB?")]),
    ("dose_response", {"scenario": "S.", "question": "Q?", "direction": "increasing", "ladder": ("w", "m", "s")},
     [Question("rung1", "S. w", "Q?"), Question("rung2", "S. m", "Q?"), Question("rung3", "S. s", "Q?")]),
])
def test_questions_of_each_kind(kind: str, fields: dict[str, Any], expected: list[Question]) -> None:
    assert kinds.kind_of(kind).questions(fields) == expected


@pytest.mark.parametrize(("kind", "track", "prompt"), [
    ("inverted_pair", "A", PROBABILITY_PROMPT), ("inverted_pair", "B", PROBABILITY_PROMPT),
    ("inverted_pair", "C", RECOMMENDATION_PROMPT), ("inverted_pair", "D", SALIENCE_PROMPT),
    ("binary", None, BINARY_PROMPT), ("conjunction", None, PROBABILITY_PROMPT),
    ("dose_response", None, PROBABILITY_PROMPT),
])
def test_system_prompt_of_each_kind(kind: str, track: str | None, prompt: str) -> None:
    assert kinds.kind_of(kind).system_prompt(track) == prompt


# --------------------------------------------------------------------------- answers and violations


def test_primary_answer_is_p_plus_for_pairs_and_the_mean_elsewhere() -> None:
    pair = _record("inverted_pair", "p", {"positive": (50, 70), "negative": 20})
    assert primary_answer(pair, keep_fifty=False) == 70  # the 50 is a refusal
    assert primary_answer(pair, keep_fifty=True) == 60
    conj = _record("conjunction", "c", {"a": (50, 70), "b": 40, "both": 30})
    assert primary_answer(conj, keep_fifty=False) == pytest.approx((60 + 40 + 30) / 3)  # a 50 counts here
    assert math.isnan(primary_answer(_record("conjunction", "c", {"a": None, "b": 40, "both": 30}), False))


# (answers by role, tolerance, violated?, size, explanation); sizes worked by hand
SET_CASES = [
    ("conjunction", {"a": 60, "b": 50, "both": 55}, 0.0, True, 5.0, "P(a and b) 55.0 > min(P(a), P(b)) 50.0"),
    ("conjunction", {"a": 60, "b": 50, "both": 55}, 5.0, False, 5.0, "P(a and b) 55.0 > min(P(a), P(b)) 50.0"),
    ("conjunction", {"a": 60, "b": 50, "both": 30}, 0.0, False, -20.0, "P(a and b) 30.0 > min(P(a), P(b)) 50.0"),
    ("disjunction", {"a": 40, "b": 30, "either": 35}, 0.0, True, 5.0, "P(a or b) 35.0 < max(P(a), P(b)) 40.0"),
    ("disjunction", {"a": 40, "b": 30, "either": 35}, 4.9, True, 5.0, "P(a or b) 35.0 < max(P(a), P(b)) 40.0"),
    ("disjunction", {"a": 40, "b": 30, "either": 58}, 0.0, False, -18.0, "P(a or b) 58.0 < max(P(a), P(b)) 40.0"),
    ("conditional", {"a": 50, "b_given_a": 40, "both": 26}, 0.0, True, 6.0,
     "P(a) x P(b|a) = 20.0, but P(a and b) = 26.0"),
    ("conditional", {"a": 50, "b_given_a": 40, "both": 26}, 6.0, False, 6.0,
     "P(a) x P(b|a) = 20.0, but P(a and b) = 26.0"),
    ("conditional", {"a": (80, 60), "b_given_a": 50, "both": 35}, 0.0, False, 0.0,
     "P(a) x P(b|a) = 35.0, but P(a and b) = 35.0"),
]


@pytest.mark.parametrize(("kind", "answers", "tolerance", "violated", "size", "text"), SET_CASES)
def test_set_kinds_check_and_explain(kind: str, answers: dict[str, Any], tolerance: float, violated: bool,
                                     size: float, text: str) -> None:
    record = _record(kind, "i1", answers)
    found = kinds.kind_of(kind).violations([record], tolerance)
    assert found == Violations(int(violated), 1, ["i1"] if violated else [])
    assert axiom_violations([record], kind, tolerance) == found  # the old entry point agrees
    assert kinds.kind_of(kind).explain(record) == Violation(pytest.approx(size), text)
    assert violation_size(record) == (pytest.approx(size), text)


def test_set_kinds_leave_out_sets_with_a_missing_answer() -> None:
    records = [_record("conjunction", "gap", {"a": None, "b": 50, "both": 90}),
               _record("conjunction", "bad", {"a": 60, "b": 50, "both": 90})]
    assert kinds.kind_of("conjunction").violations(records, 0.0) == Violations(1, 1, ["bad"])


def test_dose_response_checks_steps_and_explains_reversals() -> None:
    dose = kinds.kind_of("dose_response")
    up = _record("dose_response", "up", {"rung1": 30, "rung2": 40, "rung3": 35, "rung4": 50}, direction="increasing")
    down = _record("dose_response", "down", {"rung1": 70, "rung2": 60, "rung3": 65, "rung4": 62},
                   direction="decreasing")
    fine = _record("dose_response", "fine", {"rung1": 70, "rung2": 60, "rung3": 50}, direction="decreasing")
    gap = _record("dose_response", "gap", {"rung1": 30, "rung2": None, "rung3": 20}, direction="increasing")
    records = [up, down, fine, gap]
    # 40 -> 35 (5 against), 60 -> 65 (5 against); "gap" is left out; 3 + 3 + 2 steps checked
    assert dose.violations(records, 0.0) == Violations(2, 8, ["up", "down"])
    assert dose.violations(records, 5.0) == Violations(0, 8, [])
    assert dose.explain(up) == Violation(5.0, "rungs 30, 40, 35, 50 (should be increasing): 1 reversal(s)")
    assert dose.explain(fine) == Violation(0.0, "rungs 70, 60, 50 (should be decreasing): 0 reversal(s)")


def test_kinds_without_a_rule_explain_nothing() -> None:
    pair = _record("inverted_pair", "p", {"positive": 70, "negative": 40})
    assert kinds.kind_of("inverted_pair").explain(pair) is None
    assert VIOLATION not in kinds.kind_of("binary").families


# --------------------------------------------------------------------------- simulated answers


class StubRng:
    """Draws chosen by hand: uniforms at their midpoint, normals at 0, ``random()`` fixed."""

    def __init__(self, random: float) -> None:
        self._random = random

    def uniform(self, low: float, high: float, size: int | None = None) -> Any:
        mid = (low + high) / 2
        return mid if size is None else [mid] * size

    def standard_normal(self) -> float:
        return 0.0

    def random(self) -> float:
        return self._random


@dataclass
class StubSim:
    parameters: Mapping[str, float]
    draw: float = 0.5

    def parameter(self, name: str, default: float = 0.0) -> float:
        return float(self.parameters.get(name, default))

    def rng(self, *parts: object) -> Any:
        return StubRng(self.draw)

    def item_tilt(self, meta: Mapping[str, Any]) -> float:
        return float(self.parameters.get("item_tilt", 0.0))


def _answer(kind: str, role: str, sim: Simulator, **meta: Any) -> float:
    return kinds.kind_of(kind).simulated_answer({"suite": "s", "item": "i", "condition": "base", "kind": kind,
                                                 "role": role, **meta}, sim)


def test_simulated_pairs_carry_the_planted_deltas_except_on_stated_rates() -> None:
    sim = StubSim({"delta_plus": 10, "delta_minus": -2, "narrative_shift": 10})
    # q = 50 + uniform(-20, 20) = 50 at the stub's midpoint
    assert _answer("inverted_pair", "positive", sim) == 60
    assert _answer("inverted_pair", "negative", sim) == 48  # Skew = 60 - (100 - 48) = 8
    assert _answer("inverted_pair", "positive", sim, condition="narrative_up") == 70
    assert _answer("inverted_pair", "negative", sim, condition="narrative_up") == 38
    assert _answer("inverted_pair", "positive", sim, expected=30) == 30  # Track A: no bias
    assert _answer("inverted_pair", "negative", sim, expected=30) == 70


def test_simulated_binary_answer_is_the_sharpened_posterior() -> None:
    # z = +d + 0; p = 100 / (1 + exp(-k * 2 * d * z)) = 100 / (1 + exp(-0.72)) at d = 0.6, k = 1
    sim = StubSim({"binary_separation": 0.6, "binary_sharpness": 1.0})
    assert _answer("binary", "yes", sim, outcome=True) == pytest.approx(67.2607, abs=1e-4)
    assert _answer("binary", "yes", sim, outcome=False) == pytest.approx(100 - 67.2607, abs=1e-4)
    sharp = StubSim({"binary_separation": 0.6, "binary_sharpness": 5.0})
    assert _answer("binary", "yes", sharp, outcome=True) == pytest.approx(100 / (1 + math.exp(-3.6)))


@pytest.mark.parametrize(("kind", "rate", "answers", "joint", "beyond"), [
    # uniforms at their midpoint: a = b = 55 (30-80) or 40 (20-60); the planted joint lands
    # 10 pp (8-12) beyond the bound, 15 pp (12-18) off the product for conditional
    ("conjunction", "conjunction_violation_rate", {"a": 55, "b": 55, "both": 30.25}, "both", 65.0),
    ("disjunction", "disjunction_violation_rate", {"a": 40, "b": 40, "either": 64}, "either", 30.0),
    ("conditional", "conditional_violation_rate", {"a": 55, "b_given_a": 55, "both": 30.25}, "both", 45.25),
])
def test_simulated_sets_are_coherent_unless_the_planted_draw_hits(kind: str, rate: str, answers: dict[str, float],
                                                                  joint: str, beyond: float) -> None:
    coherent = StubSim({rate: 0.05}, draw=0.5)
    for role, value in answers.items():
        assert _answer(kind, role, coherent) == pytest.approx(value)
    assert _answer(kind, joint, StubSim({rate: 0.05}, draw=0.01)) == pytest.approx(beyond)


def test_simulated_ladders_step_ten_points_and_reverse_at_the_planted_rate() -> None:
    steady = StubSim({"dose_response_violation_rate": 0.3}, draw=0.5)
    assert [_answer("dose_response", f"rung{i}", steady, direction="increasing") for i in (1, 2, 3)] == [30, 40, 50]
    assert [_answer("dose_response", f"rung{i}", steady, direction="decreasing") for i in (1, 2, 3)] == [70, 60, 50]
    reversing = StubSim({"dose_response_violation_rate": 0.3}, draw=0.1)
    assert [_answer("dose_response", f"rung{i}", reversing, direction="increasing") for i in (1, 2, 3)] == [30, 20, 10]


def test_only_pairs_read_fifty_as_a_refusal_and_use_the_pair_noise() -> None:
    assert [k.name for k in kinds.KINDS.values() if k.fifty_is_refusal] == ["inverted_pair"]
    assert {k.name: k.sim_noise for k in kinds.KINDS.values()}["inverted_pair"] == "noise_sd"
    assert {k.sim_noise for k in kinds.KINDS.values() if k.name != "inverted_pair"} == {"axiom_noise_sd"}


# --------------------------------------------------------------------------- lint rules


@dataclass(frozen=True)
class LintItem:
    id: str
    fields: Mapping[str, Any]


def test_lint_rules_of_each_kind() -> None:
    pair = kinds.kind_of("inverted_pair")
    found = pair.lint([
        LintItem("same", {"scenario": "S.", "positive": "Will it rain?", "negative": "Will it rain?"}),
        LintItem("wordy", {"scenario": "S.", "positive": "Will it rain?",
                           "negative": "How likely is it that the sky stays dry all day?"}),
        LintItem("ok", {"scenario": "S.", "positive": "Will it rain?", "negative": "Will it not rain?"}),
        LintItem("rate", {"scenario": "It rains on 30% of days.", "positive": "Rain?", "negative": "No rain?"}),
        LintItem("control", {"scenario": "It rains on 40% of days.", "positive": "Rain?", "negative": "No rain?",
                             "expected": 30}),
    ], "B")
    assert {(f.item, f.severity) for f in found} == {
        ("same", ERROR), ("wordy", ERROR), ("rate", WARNING), ("control", ERROR)}
    binary = kinds.kind_of("binary")
    skewed = [LintItem(f"b{i}", {"question": "Q?", "outcome": i < 8}) for i in range(10)]  # 8 yes, 2 no
    assert binary.lint(skewed, None) == [
        Lint(None, ERROR, "known-answer set is unbalanced: 8 yes, 2 no (minority share 20%; keep it near 50%)")]
    leaning = [LintItem(f"b{i}", {"question": "Q?", "outcome": i < 6}) for i in range(10)]  # 6 yes, 4 no
    assert binary.lint(leaning, None) == [
        Lint(None, WARNING, "known-answer set is unbalanced: 6 yes, 4 no (minority share 40%; keep it near 50%)")]
    assert binary.lint([LintItem(f"b{i}", {"question": "Q?", "outcome": i % 2 == 0}) for i in range(10)], None) == []
    dose = kinds.kind_of("dose_response")
    assert dose.lint([LintItem("d", {"ladder": ("a", "b", "a")})], None) == [Lint("d", ERROR, "the ladder repeats a rung")]


# --------------------------------------------------------------------------- a new kind, defined here


class ComplementPair(KindBase):
    """A toy kind: P(event) and P(not event) must add up to 100."""

    name = "complement_pair"
    fields = (FieldSpec("scenario"), FieldSpec("event"), FieldSpec("opposite"))
    families = (VIOLATION,)
    distinct = ("event",)
    default_tolerance = 5.0

    def questions(self, fields: Mapping[str, Any]) -> list[Question]:
        scenario = str(fields.get("scenario", ""))
        return [Question("event", scenario, fields["event"]), Question("opposite", scenario, fields["opposite"])]

    def _gap(self, record: ItemRecord) -> float:
        return record.prompt("event").mean() + record.prompt("opposite").mean() - 100

    def violations(self, records: Sequence[ItemRecord], tolerance: float) -> Violations:
        gaps = [(r.item, self._gap(r)) for r in records]
        usable = [(item, gap) for item, gap in gaps if not math.isnan(gap)]
        bad = [item for item, gap in usable if abs(gap) > tolerance]
        return Violations(len(bad), len(usable), bad)

    def explain(self, record: ItemRecord) -> Violation:
        gap = self._gap(record)
        return Violation(abs(gap), f"P(event) + P(opposite) = {gap + 100:.1f}, not 100")

    def simulated_answer(self, meta: Mapping[str, Any], sim: Simulator) -> float:
        return 70.0 if meta["role"] == "event" else 40.0  # always 10 pp incoherent

    def lint(self, items: Sequence[Any], track: str | None) -> list[Lint]:
        return [Lint(item.id, WARNING, "event and opposite are the same question")
                for item in items if item.fields["event"] == item.fields["opposite"]]


@pytest.fixture
def toy() -> Iterator[ComplementPair]:
    kind = ComplementPair()
    kinds.register(kind)
    yield kind
    kinds.unregister(kind.name)


TOY_SUITE = {
    "optbench": 1, "suite": "toy", "kind": "complement_pair",
    "items": [
        {"id": "t1", "scenario": "A coin is tossed.", "event": "Heads?", "opposite": "Tails?"},
        {"id": "t2", "scenario": "A die is rolled.", "event": "A six?", "opposite": "A six?"},
    ],
}


def test_a_new_kind_flows_through_every_module_by_the_registry_alone(toy: ComplementPair) -> None:
    # validation: the kind's required fields, in the usual one-sentence error
    suite = parse_suite(TOY_SUITE, "toy.yaml", "toy")
    assert [i.kind for i in suite.items] == ["complement_pair", "complement_pair"]
    broken = {**TOY_SUITE, "items": [{"id": "t9", "scenario": "S.", "event": "E?"}]}
    with pytest.raises(SuiteError, match="toy.yaml, item 't9', key 'opposite': is required for items of kind "
                                         "complement_pair"):
        parse_suite(broken, "toy.yaml", "toy")

    # prompts: the kind's roles and questions, the default system prompt
    specs = render_prompts(suite, suite.items[0], suite.conditions[0], Settings(samples=2))
    assert [(s.role, s.user) for s in specs] == [("event", "A coin is tossed.\n\nHeads?"),
                                                  ("opposite", "A coin is tossed.\n\nTails?")]
    assert specs[0].system == PROBABILITY_PROMPT and specs[0].meta["kind"] == "complement_pair"

    # the simulated model answers through the kind's hook (noise sd 0 to keep it exact)
    model = SimulatedModel("calibrated?axiom_noise_sd=0&prose_refusal_rate=0")
    records = []
    for item in suite.items:
        prompts = []
        for spec in render_prompts(suite, item, suite.conditions[0], Settings(samples=2)):
            texts = [model.complete(Prompt(spec.system, spec.user, spec.temperature, n, spec.meta)) for n in (0, 1)]
            prompts.append(PromptRecord(spec.role, spec.user, [Answer(t, float(re.findall(r"\d+", t)[0]))
                                                               for t in texts]))
        records.append(ItemRecord("toy", item.id, "base", item.kind, "toy.yaml", model.name, prompts))
    assert [p.mean() for p in records[0].prompts] == [70.0, 40.0]

    # aggregation and gates: the VIOLATION family reports <kind>_violation_rate at the kind's
    # default tolerance and at each one a gate names
    metric = "complement_pair_violation_rate"
    aggregates = aggregate(records, AggregateOptions(n_resamples=100, tolerances={metric: (15.0,)}))
    rates = {a.tolerance: a for a in aggregates if a.metric == metric}
    assert sorted(rates) == [5.0, 15.0] and DEFAULT_TOLERANCES[metric] == 5.0
    assert (rates[5.0].value, rates[5.0].n, rates[5.0].detail["violating_items"]) == (1.0, 2, ["t1", "t2"])
    assert (rates[15.0].value, rates[15.0].detail["violating_items"]) == (0.0, [])
    assert METRIC_KINDS[metric] == ("complement_pair",)
    assert possible_n(records)[("toy", "base", metric)] == 2  # one check per item (KindBase.checks)
    assert metric in KEY_ORDER  # key-metric lists of every report
    # a rate's default min_n, from its exact CI: max 0.25 needs 3 checks (a mean would need 6)
    gates = parse_thresholds({"optbench": 1, "gates": [{"metric": metric, "max": 0.25}]}, "thresholds.yaml")
    (verdict,) = evaluate(gates, aggregates, {"toy": ["complement_pair"]})
    assert (verdict.verdict, verdict.reason) == (NOT_EVALUATED, "2 checks usable, fewer than min_n 3")
    gates = parse_thresholds({"optbench": 1, "gates": [{"metric": metric, "max": 0.5, "min_n": 1}]},
                             "thresholds.yaml")
    (verdict,) = evaluate(gates, aggregates, {"toy": ["complement_pair"]})
    assert (verdict.verdict, verdict.value) == (FAIL, 1.0)  # the rate at 5 pp (at 15 pp it is 0)

    # a baseline comparison covers the new rate too, at the same tolerances
    comparison = compare(records, records, AggregateOptions(n_resamples=100), {"model": "a"}, {"model": "b"})
    assert [(c.metric, c.tolerance) for c in comparison.changes if c.metric == metric] == [(metric, 5.0)]

    # reports explain a violation through the kind; the linter runs the kind's rules
    assert violation_size(records[0]) == (10.0, "P(event) + P(opposite) = 110.0, not 100")
    findings = [(f.item, f.severity) for f in lint_suites([suite])]
    assert ("t2", WARNING) in findings


def test_a_removed_kind_is_unknown_again(toy: ComplementPair) -> None:
    kinds.unregister(toy.name)
    try:
        with pytest.raises(SuiteError, match="unknown kind 'complement_pair'"):
            parse_suite(TOY_SUITE, "toy.yaml", "toy")
        assert "complement_pair_violation_rate" not in METRIC_KINDS
    finally:
        kinds.register(toy)  # the fixture removes it


# --------------------------------------------------------------------------- kinds of installed packages


def _install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, entry: str) -> None:
    """A package as pip would leave it: its module and a dist-info with the entry point (a
    module name of its own per test: an imported module is not read again)."""
    name = entry.partition("= ")[2].partition(":")[0]
    (tmp_path / f"{name}.py").write_text(module, encoding="utf-8")
    info = tmp_path / "acme_toy-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-toy\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[pytest_optbench.kinds]\n{entry}\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))


def test_an_installed_kind_is_registered_from_its_entry_point(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _install(tmp_path, monkeypatch, "from pytest_optbench.api import KindBase\n\n"
             "class Toy(KindBase):\n    name = 'acme_toy'\n", "acme_toy = acme_toy:Toy")
    try:
        assert kinds.load_entry_points() == ["acme_toy"]
        assert kinds.kind_of("acme_toy").name == "acme_toy"
        assert kinds.load_entry_points() == []  # once
    finally:
        kinds.unregister("acme_toy")


def test_a_broken_kind_entry_point_is_one_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _install(tmp_path, monkeypatch, "raise RuntimeError('no licence file')\n", "acme_toy = acme_broken:Toy")
    with pytest.raises(ValueError, match=r"^the item kind 'acme_toy' of entry point 'acme_broken:Toy' cannot be "
                                         r"loaded \(RuntimeError: no licence file\)$"):
        kinds.load_entry_points()


def test_an_entry_point_that_is_no_kind_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _install(tmp_path, monkeypatch, "Toy = 42\n", "acme_toy = acme_number:Toy")
    with pytest.raises(ValueError, match="'acme_number:Toy' .group pytest_optbench.kinds. is not an item kind"):
        kinds.load_entry_points()
