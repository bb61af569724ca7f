"""Unit tests for pytest_optbench.gates (thresholds.yaml, spec section 3)."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import pytest

from pytest_optbench.scoring.aggregate import Aggregate
from pytest_optbench.scoring.gates.evaluate import evaluate
from pytest_optbench.scoring.gates.spec import (
    FAIL,
    INCONCLUSIVE,
    PASS,
    Gate,
    ThresholdsError,
    load_thresholds,
    parse_thresholds,
)

DISPLAY = "config/thresholds.yaml"
NAN = float("nan")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "thresholds.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(ThresholdsError) as info:
        load_thresholds(_write(tmp_path, text), display=DISPLAY)
    message = str(info.value)
    assert message.startswith(DISPLAY)
    assert "\n" not in message and message.endswith(".")
    assert info.value.__cause__ is None
    return message


# --------------------------------------------------------------------------- loading

SPEC_EXAMPLE = """
optbench: 1
gates:
  - metric: skew
    max_abs: 5            # one of: max, min, max_abs
    suites: ["track-b-*"] # glob over suite ids; default = every suite the metric applies to
    evidence: point
  - metric: overconfidence
    max: 0.05
  - metric: conjunction_violation_rate
    max: 0.10
    tolerance: 2          # percentage points, for violation-rate metrics
  - metric: parse_rate
    min: 0.95
"""


def test_the_spec_example_loads(tmp_path: Path) -> None:
    gates = load_thresholds(_write(tmp_path, SPEC_EXAMPLE), display=DISPLAY)
    assert gates == [
        Gate("skew", "max_abs", 5.0, "point", ("track-b-*",), (), None, line=3),
        Gate("overconfidence", "max", 0.05, line=7),
        Gate("conjunction_violation_rate", "max", 0.10, tolerance=2.0, line=9),
        Gate("parse_rate", "min", 0.95, line=12),
    ]


def test_defaults_and_single_glob_strings(tmp_path: Path) -> None:
    (gate,) = load_thresholds(_write(tmp_path, """
        optbench: 1
        gates:
          - metric: delta_plus
            max: 3
            suites: track-a
            conditions: "narrative_*"
            evidence: ci
    """))
    assert gate.evidence == "ci"
    assert gate.suites == ("track-a",) and gate.conditions == ("narrative_*",)
    assert gate.tolerance is None


@pytest.mark.parametrize("text", ["", "optbench: 1\n", "optbench: 1\ngates: []\n", "optbench: 1\ngates:\n"])
def test_empty_thresholds_have_no_gates(tmp_path: Path, text: str) -> None:
    assert load_thresholds(_write(tmp_path, text), display=DISPLAY) == []


@pytest.mark.parametrize(
    ("kind", "bound", "text"),
    [("max", 0.05, "<= 0.05"), ("min", 0.95, ">= 0.95"), ("max_abs", 5.0, "|x| <= 5")],
)
def test_bound_text(kind: str, bound: float, text: str) -> None:
    assert Gate("skew", kind, bound).bound_text == text


# (id, text, fragments). Every gate error names the file (checked by _error), the gate and the key.
GATE = "optbench: 1\ngates:\n  - metric: skew\n    max_abs: 5\n"
ERRORS = [
    ("unknown-metric", "optbench: 1\ngates:\n  - metric: skewness\n    max: 5\n",
     ["gate 1 (line 3)", "key 'metric'", "'skewness'"]),
    ("missing-metric", "optbench: 1\ngates:\n  - max: 5\n", ["gate 1 (line 3)", "key 'metric'", "required"]),
    ("no-bound", "optbench: 1\ngates:\n  - metric: skew\n", ["gate 1 (line 3)", "max, min, max_abs"]),
    ("two-bounds", "optbench: 1\ngates:\n  - metric: skew\n    max: 5\n    min: 1\n",
     ["gate 1 (line 3)", "key 'min'", "exactly one"]),
    ("three-bounds", "optbench: 1\ngates:\n  - metric: skew\n    max: 5\n    min: 1\n    max_abs: 3\n",
     ["gate 1 (line 3)", "key 'min'"]),
    ("bad-evidence", GATE + "    evidence: strong\n", ["gate 1 (line 3)", "key 'evidence'", "'strong'"]),
    ("tolerance-on-skew", GATE + "    tolerance: 2\n", ["gate 1 (line 3)", "key 'tolerance'", "skew"]),
    ("negative-tolerance", ("optbench: 1\ngates:\n  - metric: conjunction_violation_rate\n    max: 0.1\n"
     "    tolerance: -1\n"), ["gate 1 (line 3)", "key 'tolerance'", "negative"]),
    ("negative-max-abs", "optbench: 1\ngates:\n  - metric: skew\n    max_abs: -1\n",
     ["gate 1 (line 3)", "key 'max_abs'", "negative"]),
    ("bound-not-number", "optbench: 1\ngates:\n  - metric: skew\n    max: five\n",
     ["gate 1 (line 3)", "key 'max'", "'five'"]),
    ("bound-bool", "optbench: 1\ngates:\n  - metric: skew\n    min: true\n", ["gate 1 (line 3)", "key 'min'"]),
    ("bound-infinite", "optbench: 1\ngates:\n  - metric: skew\n    max: .inf\n", ["gate 1 (line 3)", "key 'max'"]),
    ("unknown-key", GATE + "    colour: red\n", ["gate 1 (line 3)", "key 'colour'", "unknown gate key"]),
    ("second-gate", GATE + "  - metric: parse_rate\n    minimum: 0.9\n", ["gate 2 (line 5)", "key 'minimum'"]),
    ("bad-suites", GATE + "    suites: [1]\n", ["gate 1 (line 3)", "key 'suites'"]),
    ("empty-suite-glob", GATE + "    suites: ['']\n", ["gate 1 (line 3)", "key 'suites'"]),
    ("bad-conditions", GATE + "    conditions: 3\n", ["gate 1 (line 3)", "key 'conditions'"]),
    ("gate-not-mapping", "optbench: 1\ngates:\n  - skew\n", ["gate 1", "mapping"]),
    ("gates-not-list", "optbench: 1\ngates:\n  metric: skew\n", ["key 'gates'", "list"]),
    ("wrong-version", "optbench: 2\ngates: []\n", ["key 'optbench'", "2"]),
    ("missing-version", "gates: []\n", ["key 'optbench'"]),
    ("unknown-top-level", "optbench: 1\ngates: []\nitems: []\n", ["key 'items'", "unknown top-level key"]),
    ("not-a-mapping", "- metric: skew\n", ["mapping"]),
    ("malformed-yaml", "optbench: 1\ngates:\n  - metric: [skew\n", ["line 4", "malformed YAML"]),
    ("duplicate-key", "optbench: 1\ngates:\n  - metric: skew\n    max: 5\n    max: 6\n",
     ["line 5", "duplicate key 'max'"]),
]


@pytest.mark.parametrize(("text", "fragments"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_threshold_errors_name_file_gate_and_key(tmp_path: Path, text: str, fragments: list[str]) -> None:
    message = _error(tmp_path, text)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


def test_parse_thresholds_on_data_without_lines() -> None:
    with pytest.raises(ThresholdsError, match=r"^t\.yaml, gate 2, key 'evidence': "):
        parse_thresholds(
            {"optbench": 1, "gates": [{"metric": "skew", "max": 1},
                                      {"metric": "skew", "max": 1, "evidence": "vibes"}]},
            "t.yaml",
        )
    assert parse_thresholds(None, "t.yaml") == []


def test_metric_that_is_a_list_is_a_thresholds_error(tmp_path: Path) -> None:
    message = _error(tmp_path, "optbench: 1\ngates:\n  - metric: [skew]\n    max: 5\n")
    assert "gate 1" in message and "key 'metric'" in message


def test_version_true_is_rejected(tmp_path: Path) -> None:
    message = _error(tmp_path, "optbench: true\ngates: []\n")
    assert "key 'optbench'" in message


# --------------------------------------------------------------------------- evaluate


def _agg(metric: str, value: float, low: float = NAN, high: float = NAN, suite: str = "track-b",
         condition: str = "base", n: int = 20, domain: str | None = None) -> Aggregate:
    return Aggregate(suite, condition, metric, value, low, high, n, domain=domain)


PAIRS = {"track-b": ["inverted_pair"]}


def _one(gate: Gate, aggs: list[Aggregate], kinds: dict = PAIRS):
    verdicts = evaluate([gate], aggs, kinds)
    assert len(verdicts) == 1
    return verdicts[0]


@pytest.mark.parametrize(
    ("kind", "bound", "value", "verdict"),
    [
        ("max", 5, 4.0, PASS),
        ("max", 5, 5.0, PASS),
        ("max", 5, 5.01, FAIL),
        ("max", 5, -100.0, PASS),
        ("min", 0.95, 0.96, PASS),
        ("min", 0.95, 0.95, PASS),
        ("min", 0.95, 0.90, FAIL),
        ("max_abs", 5, 4.9, PASS),
        ("max_abs", 5, -5.0, PASS),
        ("max_abs", 5, 5.0, PASS),
        ("max_abs", 5, 6.0, FAIL),
        ("max_abs", 5, -6.0, FAIL),
        ("max_abs", 0, 0.0, PASS),
    ],
)
def test_point_evidence(kind: str, bound: float, value: float, verdict: str) -> None:
    gate = Gate("skew", kind, bound)
    result = _one(gate, [_agg("skew", value, value - 10, value + 10)])
    assert result.verdict == verdict
    assert (result.suite, result.condition, result.value) == ("track-b", "base", value)
    assert (result.ci_low, result.ci_high) == (value - 10, value + 10)
    assert result.n == 20
    assert result.reason == ("the estimate holds the bound" if verdict == PASS else "the estimate is beyond the bound")


@pytest.mark.parametrize(
    ("kind", "bound", "value", "low", "high", "ci_verdict", "point_verdict"),
    [
        ("max_abs", 5, 6.0, 4.0, 8.0, INCONCLUSIVE, FAIL),  # the brief's example: the CI straddles the bound
        ("max_abs", 5, 6.5, 5.5, 8.0, FAIL, FAIL),
        ("max_abs", 5, -6.5, -8.0, -5.5, FAIL, FAIL),
        ("max_abs", 5, -6.0, -8.0, -4.0, INCONCLUSIVE, FAIL),
        ("max_abs", 5, 0.0, -8.0, 8.0, INCONCLUSIVE, PASS),  # straddles both bounds
        ("max_abs", 5, 0.0, -4.0, 4.5, PASS, PASS),  # shown to hold
        ("max_abs", 5, 6.0, 5.0, 7.0, INCONCLUSIVE, FAIL),  # touching the bound is not beyond it
        ("max", 5, 7.0, 4.0, 9.0, INCONCLUSIVE, FAIL),
        ("max", 5, 7.0, 5.5, 9.0, FAIL, FAIL),
        ("max", 5, 3.0, 1.0, 5.0, PASS, PASS),  # touching the bound from inside holds it
        ("min", 0.95, 0.93, 0.90, 0.96, INCONCLUSIVE, FAIL),
        ("min", 0.95, 0.92, 0.90, 0.94, FAIL, FAIL),
        ("min", 0.95, 0.97, 0.955, 0.99, PASS, PASS),
    ],
)
def test_ci_evidence_fails_only_when_the_whole_ci_is_beyond_the_bound(
    kind: str, bound: float, value: float, low: float, high: float, ci_verdict: str, point_verdict: str
) -> None:
    agg = _agg("skew", value, low, high)
    ci = _one(Gate("skew", kind, bound, evidence="ci"), [agg])
    point = _one(Gate("skew", kind, bound, evidence="point"), [agg])
    assert (ci.verdict, point.verdict) == (ci_verdict, point_verdict)
    # The interval beside a CI verdict is the one that decided it, at its level.
    assert (ci.interval_low, ci.interval_high, ci.level) == (low, high, 0.95)
    assert ci.reason.startswith({FAIL: "the whole 95% interval lies beyond", PASS: "the whole 95% interval lies within",
                                 INCONCLUSIVE: "the 95% interval straddles"}[ci.verdict])


def test_gate_matching_no_suite_is_one_not_evaluated_verdict() -> None:
    gate = Gate("skew", "max_abs", 5, suites=("track-z-*",))
    verdicts = evaluate([gate], [_agg("skew", 1.0)], PAIRS)
    assert len(verdicts) == 1
    (v,) = verdicts
    assert v.verdict == INCONCLUSIVE and v.verdict != PASS
    assert v.suite is None and v.condition is None and v.value is None
    assert "match none of the suites that ran (track-b)" in v.reason


def test_gate_with_no_suites_ran_at_all() -> None:
    (v,) = evaluate([Gate("parse_rate", "min", 0.9)], [], {})
    assert v.verdict == INCONCLUSIVE


def test_metric_that_does_not_apply_is_skipped_without_explicit_suites() -> None:
    kinds = {"pairs": ["inverted_pair"], "trivia": ["binary"]}
    aggs = [_agg("skew", 2.0, suite="pairs"), _agg("parse_rate", 1.0, suite="pairs"),
            _agg("parse_rate", 1.0, suite="trivia")]
    verdicts = evaluate([Gate("skew", "max_abs", 5)], aggs, kinds)
    assert [(v.suite, v.verdict) for v in verdicts] == [("pairs", PASS)]
    # Only a binary suite ran: the skew gate matches nothing.
    (v,) = evaluate([Gate("skew", "max_abs", 5)], aggs[2:], {"trivia": ["binary"]})
    assert v.verdict == INCONCLUSIVE and v.suite is None


def test_metric_that_does_not_apply_with_explicit_suites_is_not_evaluated_with_a_reason() -> None:
    kinds = {"trivia": ["binary"]}
    (v,) = evaluate([Gate("skew", "max_abs", 5, suites=("trivia",))], [_agg("parse_rate", 1.0, suite="trivia")], kinds)
    assert v.verdict == INCONCLUSIVE
    assert v.suite == "trivia" and v.condition == "base"
    assert "does not apply" in v.reason


def test_binary_metric_without_usable_answers_is_not_evaluated() -> None:
    kinds = {"trivia": ["binary"]}
    (v,) = evaluate([Gate("overconfidence", "max", 0.05)], [_agg("parse_rate", 1.0, suite="trivia")], kinds,
                    totals={("trivia", "base", "binary"): 40})
    assert v.verdict == INCONCLUSIVE and v.reason == "no usable answers: 0 of 40 items usable"


def test_a_metric_without_a_value_on_some_usable_items_says_so_without_contradiction() -> None:
    # One usable known-answer item: AUC has no value; "no usable answers: 1 of 49 items usable"
    # said two things at once (issue 26).
    kinds = {"trivia": ["binary"]}
    (v,) = evaluate([Gate("auc", "min", 0.6)], [_agg("auc", NAN, suite="trivia", n=1)], kinds,
                    totals={("trivia", "base", "binary"): 49})
    assert v.verdict == INCONCLUSIVE and v.reason == "1 of 49 items usable, too few for auc to have a value"


def test_answer_metrics_count_answers_not_usable_ones() -> None:
    from pytest_optbench.scoring.minimum_data import shortfall, usable_text
    assert usable_text(1, 1, "answers") == "1 of 1 answers"  # parse_rate counts unread answers too
    assert shortfall(1, 1, 10, "answers") == "1 of 1 answers, fewer than min_n 10"
    assert usable_text(2, 60, "pairs") == "2 of 60 pairs usable"


def test_applicable_metric_without_an_aggregate_is_not_evaluated() -> None:
    # e.g. calibration_error on a Track B suite (no item has `expected`): one row, with the reason
    (v,) = evaluate([Gate("calibration_error", "max", 5)], [_agg("skew", 1.0), _agg("parse_rate", 1.0)], PAIRS)
    assert v.verdict == INCONCLUSIVE and v.suite is None
    assert v.reason.startswith("calibration_error is computed only from items with a stated rate")


def test_nan_value_is_not_evaluated() -> None:
    for evidence in ("point", "ci"):
        (v,) = evaluate([Gate("skew", "max_abs", 5, evidence=evidence)], [_agg("skew", NAN, n=0)], PAIRS)
        assert v.verdict == INCONCLUSIVE and v.n == 0 and "no usable answers" in v.reason


def test_ci_evidence_without_an_interval_is_not_evaluated() -> None:
    (v,) = evaluate([Gate("skew", "max_abs", 5, evidence="ci", min_n=1)], [_agg("skew", 9.0, n=1)], PAIRS)
    assert v.verdict == INCONCLUSIVE and v.value == 9.0 and "confidence interval" in v.reason
    # ... while point evidence still judges the estimate, reporting no CI.
    (p,) = evaluate([Gate("skew", "max_abs", 5, min_n=1)], [_agg("skew", 9.0, n=1)], PAIRS)
    assert p.verdict == FAIL and p.ci_low is None and p.ci_high is None


def test_suite_and_condition_globs() -> None:
    kinds = {s: ["inverted_pair"] for s in ("track-a", "track-b-en", "track-b-pt")}
    aggs = [
        _agg("skew", value, suite=suite, condition=condition)
        for value, (suite, condition) in enumerate(
            [(s, c) for s in kinds for c in ("base", "narrative_up", "narrative_down", "debiased")]
        )
    ]
    gate = Gate("skew", "max_abs", 100, suites=("track-b-*",), conditions=("narrative_*", "base"))
    verdicts = evaluate([gate], aggs, kinds)
    assert [(v.suite, v.condition) for v in verdicts] == [
        ("track-b-en", "base"), ("track-b-en", "narrative_down"), ("track-b-en", "narrative_up"),
        ("track-b-pt", "base"), ("track-b-pt", "narrative_down"), ("track-b-pt", "narrative_up"),
    ]
    assert all(v.verdict == PASS for v in verdicts)
    # Globs are case-sensitive, like suite ids.
    (v,) = evaluate([Gate("skew", "max_abs", 5, suites=("TRACK-*",))], aggs, kinds)
    assert v.verdict == INCONCLUSIVE


def test_default_suites_cover_every_applicable_suite_and_condition() -> None:
    kinds = {"b1": ["inverted_pair"], "b2": ["inverted_pair", "binary"]}
    aggs = [_agg("skew", 1.0, suite="b1"), _agg("skew", 9.0, suite="b2"),
            _agg("skew", 2.0, suite="b2", condition="debiased")]
    verdicts = evaluate([Gate("skew", "max_abs", 5)], aggs, kinds)
    assert [(v.suite, v.condition, v.verdict) for v in verdicts] == [
        ("b1", "base", PASS), ("b2", "base", FAIL), ("b2", "debiased", PASS),
    ]


def test_domain_aggregates_are_not_gated() -> None:
    aggs = [_agg("skew", 1.0), _agg("skew", 50.0, domain="health")]
    (v,) = evaluate([Gate("skew", "max_abs", 5)], aggs, PAIRS)
    assert v.verdict == PASS and v.value == 1.0


def test_verdicts_follow_gate_order_and_serialise() -> None:
    gates = [Gate("parse_rate", "min", 0.95), Gate("skew", "max_abs", 5, evidence="ci")]
    aggs = [_agg("skew", 6.0, 5.5, 7.0), _agg("parse_rate", 0.97, 0.9, 1.0)]
    verdicts = evaluate(gates, aggs, PAIRS)
    assert [(v.gate.metric, v.verdict) for v in verdicts] == [("parse_rate", PASS), ("skew", FAIL)]
    d = verdicts[1].to_dict()
    stable = {
        "metric": "skew", "suite": "track-b", "condition": "base", "bound_kind": "max_abs",
        "evidence": "ci", "value": 6.0, "ci_low": 5.5, "ci_high": 7.0, "n": 20, "verdict": FAIL,
        "reason": "the whole 95% interval lies beyond the bound", "level": 0.95, "interval_low": 5.5,
        "interval_high": 7.0, "evaluated": True, "fails_session": True, "on_inconclusive": "pass",
    }
    assert {k: d[k] for k in stable} == stable
    # The bound travels both as a number and as readable text (key names are the report's).
    assert 5 in d.values() and "|x| <= 5" in d.values()
    assert not any(isinstance(x, float) and math.isnan(x) for x in verdicts[0].to_dict().values())


def test_gate_holds_and_beyond_directly() -> None:
    gate = Gate("skew", "max", 5)
    assert gate.holds(4, 5) and not gate.holds(4, 5.01)
    assert gate.beyond(5.01, 7) and not gate.beyond(5, 7)
    both = Gate("skew", "max_abs", 5)
    assert both.holds(-5, 5) and not both.holds(-5.1, 0) and both.beyond(-9, -5.1) and not both.beyond(-9, 9)
    low = Gate("auc", "min", 0.75)
    assert low.holds(0.75, 0.9) and low.beyond(0.5, 0.74) and not low.beyond(0.5, 0.75)


def test_effect_gates_cover_the_compared_arms_only() -> None:
    aggs = [_agg("parse_rate", 1.0), _agg("parse_rate", 1.0, condition="narrative_up"),
            _agg("condition_effect", 12.0, 10.0, 14.0, condition="narrative_up"),
            _agg("narrative_susceptibility", 20.0, 18.0, 22.0, condition="narrative_up-narrative_down")]
    effect = evaluate([Gate("condition_effect", "max_abs", 10)], aggs, PAIRS)
    assert [(v.condition, v.verdict) for v in effect] == [("narrative_up", FAIL)]
    narrative = evaluate([Gate("narrative_susceptibility", "max", 25)], aggs, PAIRS)
    assert [(v.condition, v.verdict) for v in narrative] == [("narrative_up-narrative_down", PASS)]
    without_arms = evaluate([Gate("condition_effect", "max_abs", 10)], [_agg("parse_rate", 1.0)], PAIRS)
    assert [(v.suite, v.verdict) for v in without_arms] == [(None, INCONCLUSIVE)]
