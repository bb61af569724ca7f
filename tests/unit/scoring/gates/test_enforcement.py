"""Pure pieces of "a gate that cannot pass by accident": did-you-mean, near-miss markers,
unused fields, true not-evaluated reasons, tolerances, quadrant labels and run warnings."""

from __future__ import annotations

import textwrap

import pytest

from pytest_optbench.records.facts import RunFacts
from pytest_optbench.records.item import Answer, ItemRecord, PromptRecord
from pytest_optbench.scoring.aggregate import Aggregate
from pytest_optbench.scoring.baseline import Change, Comparison, changed_suites
from pytest_optbench.scoring.gates.enforcement import parse_rate_warnings, run_warnings
from pytest_optbench.scoring.gates.evaluate import evaluate
from pytest_optbench.scoring.gates.spec import NOT_EVALUATED, Gate, ThresholdsError, parse_thresholds
from pytest_optbench.scoring.labels import quadrant_label
from pytest_optbench.scoring.tolerances import DEFAULT_TOLERANCES, effective_tolerance, is_default_tolerance
from pytest_optbench.suite.checks import marker_near_miss, top_level_keys, unused_fields
from pytest_optbench.suite.load import SuiteError, parse_suite
from pytest_optbench.text.didyoumean import edit_distance, hint, is_near_miss, suggest, suggest_glob

# --------------------------------------------------------------------------- did you mean


@pytest.mark.parametrize(("a", "b", "d"), [("", "", 0), ("abc", "abc", 0), ("domian", "domain", 1),
                                           ("postive", "positive", 1), ("optbnch", "optbench", 1), ("ab", "", 2)])
def test_edit_distance(a: str, b: str, d: int) -> None:
    assert edit_distance(a, b) == d == edit_distance(b, a)


def test_near_misses() -> None:
    assert is_near_miss("optbnch", "optbench") and is_near_miss("Optbench", "optbench")
    assert is_near_miss("opt_bench", "optbench") and is_near_miss("optbench_", "optbench")
    assert not is_near_miss("optbench", "optbench")  # the word itself is no typo
    assert not is_near_miss("options", "optbench") and not is_near_miss("c", "a")
    assert not is_near_miss("optbench_version", "optbench")  # prefixes count only where asked
    assert suggest("skewness", ["skew", "brier"]) == "skew"
    assert suggest("tolerence", ["tolerance", "evidence"]) == "tolerance"
    assert hint("itmes", ["items", "suite"]) == ", did you mean 'items'?"
    assert hint("zzz", ["items"]) == ""


@pytest.mark.parametrize(("glob", "fix"), [("gardn-*", "garden-*"), ("track-c-*", None), ("gardn", "garden"),
                                           ("*", None), ("track-z-*", None)])
def test_suggest_glob(glob: str, fix: str | None) -> None:
    assert suggest_glob(glob, ["garden", "garden-tips", "track-b"]) == fix


# --------------------------------------------------------------------------- markers and fields


def test_marker_near_miss_reads_top_level_keys_only() -> None:
    assert top_level_keys('optbnch: 1\n"items":\n  - id: a\n# c: 1\n') == ["optbnch", "items"]
    assert marker_near_miss("optbnch: 1\nitems: []\n") == "optbnch"
    assert marker_near_miss("optbench: 1\noptbnch: 2\n") is None  # a suite with an odd key, not a near miss
    assert marker_near_miss("name: ci\n  optbnch: 1\n") is None  # nested, not the marker
    assert marker_near_miss("options: 1\nbench: 2\n") is None
    assert marker_near_miss("optbench_version: 1\n") == "optbench_version"


def _suite(text: str) -> object:
    import yaml

    return parse_suite(yaml.safe_load(textwrap.dedent(text)), "s.yaml", "s")


PAIR = """
    optbench: 1
    {head}
    items:
      - id: a
        domian: garden
        scenario: A plan.
        positive: Will it work?
        negative: Will it not work?
        narrative_up: Good news.
        note: kept
"""


def test_unused_fields_know_templates_conditions_and_kinds() -> None:
    found = unused_fields(_suite(PAIR.format(head="")))  # type: ignore[arg-type]
    assert [(u.key, u.suggestion) for u in found] == [("domian", "domain"), ("narrative_up", None), ("note", None)]
    used = _suite(PAIR.format(head='conditions: {base: {}, up: {scenario: "{scenario} {narrative_up}"}}\n    '
                                   'prompt: {template: "{scenario} {note} {question}"}'))
    assert [u.key for u in unused_fields(used)] == ["domian"]  # type: ignore[arg-type]
    assert "key 'domian': no template, condition or item kind uses this field (a misspelt 'domain'?)" in \
        unused_fields(used)[0].sentence()  # type: ignore[arg-type]


def test_missing_required_field_names_its_typo() -> None:
    with pytest.raises(SuiteError, match=r"key 'positive': is required for items of kind inverted_pair "
                                         r"\(the item has 'postive': a misspelling\?\)"):
        _suite(PAIR.format(head="").replace("positive:", "postive:"))
    with pytest.raises(SuiteError, match="unknown top-level key, did you mean 'items'"):
        _suite("optbench: 1\nitmes: []\n")


def test_thresholds_keys_and_metrics_get_a_did_you_mean() -> None:
    with pytest.raises(ThresholdsError, match="unknown gate key, did you mean 'tolerance'"):
        parse_thresholds({"optbench": 1, "gates": [{"metric": "skew", "max": 1, "tolerence": 2}]}, "t.yaml")
    with pytest.raises(ThresholdsError, match="unknown metric 'conditonal_violation_rate', did you mean "
                                              "'conditional_violation_rate'"):
        parse_thresholds({"optbench": 1, "gates": [{"metric": "conditonal_violation_rate", "max": 1}]}, "t.yaml")
    with pytest.raises(ThresholdsError, match="key 'min_n': must be a whole number of at least 1, got 0"):
        parse_thresholds({"optbench": 1, "gates": [{"metric": "skew", "max": 1, "min_n": 0}]}, "t.yaml")
    (gate,) = parse_thresholds({"optbench": 1, "gates": [{"metric": "skew", "max": 1, "min_n": 12}]}, "t.yaml")
    assert gate.min_n == 12


# --------------------------------------------------------------------------- true reasons


PAIRS = {"garden-tips": ["inverted_pair"]}
ARM = [Aggregate("garden-tips", "base", "parse_rate", 1.0, 1.0, 1.0, 10)]


@pytest.mark.parametrize(("gate", "reason"), [
    (Gate("skew", "max_abs", 5, suites=("gardn-*",)),
     ("its suites ['gardn-*'] match none of the suites that ran (garden-tips); a near glob that matches: "
     "'garden-*' (for 'gardn-*'); fix the glob in the thresholds file or run those suites")),
    (Gate("brier", "max", 0.2),
     ("brier is computed from binary items, and no suite that ran has them (garden-tips); run such a suite or "
     "name the gate's suites")),
    (Gate("skew", "max_abs", 5, conditions=("bsae",)),
     ("its conditions ['bsae'] match no condition of the suites it covers (base); a near glob that matches: "
     "'base' (for 'bsae'); fix the glob in the thresholds file")),
    (Gate("skew", "max_increase", 2),
     ("no baseline run was given: pass --optbench-baseline REPORT.json (the JSON report of a run on the main "
     "branch), or drop the change gate from this run's thresholds")),
])
def test_each_not_evaluated_gets_its_true_reason(gate: Gate, reason: str) -> None:
    (v,) = evaluate([gate], ARM, PAIRS)
    assert v.verdict == NOT_EVALUATED and v.reason == reason


def test_change_gates_are_judged_at_their_tolerance() -> None:
    changes = [Change("c", "base", "conditional_violation_rate", 1.0, 1.0, 0.0, 0.0, 12, tolerance=0.0),
               Change("c", "base", "conditional_violation_rate", 0.0, 0.5, 0.3, 0.7, 12, tolerance=5.0),
               Change("c", "base", "conditional_violation_rate", 0.0, 0.0, 0.0, 0.0, 12, tolerance=10.0)]
    comparison = Comparison(changes)
    at_five, at_default = (evaluate([Gate("conditional_violation_rate", "max_increase", 0.1, tolerance=t)], [],
                                    {"c": ["conditional"]}, comparison)[0] for t in (5.0, None))
    assert (at_five.verdict, at_five.value) == ("fail", 0.5)
    assert (at_default.verdict, at_default.value) == ("pass", 0.0)
    assert comparison.find("c", "base", "conditional_violation_rate") is changes[2]
    assert comparison.find("c", "base", "conditional_violation_rate", 5.0) is changes[1]
    few = Comparison([Change("s", "base", "skew", 0.0, 4.0, 1.0, 7.0, 3)])
    (v,) = evaluate([Gate("skew", "max_increase", 2)], [], PAIRS, few)
    assert v.verdict == NOT_EVALUATED and v.reason == "3 items shared with the baseline usable, fewer than min_n 6"


def test_prompt_changes_are_compared_per_shared_suite() -> None:
    assert changed_suites({"suite_prompt_hashes": {"a": "1", "b": "2", "c": "3"}},
                          {"suite_prompt_hashes": {"a": "1", "b": "9"}}) == ["b"]
    assert changed_suites({"suite_prompt_hashes": {"a": "1"}}, {"prompt_hash": "x"}) == []  # an older report


# --------------------------------------------------------------------------- tolerances and labels


def test_default_tolerances() -> None:
    assert DEFAULT_TOLERANCES["conditional_violation_rate"] > DEFAULT_TOLERANCES["conjunction_violation_rate"] > 0
    assert effective_tolerance("conditional_violation_rate", None) == 10.0
    assert effective_tolerance("conditional_violation_rate", 0) == 0.0
    assert effective_tolerance("skew", None) is None
    assert Gate("conjunction_violation_rate", "max", 0.1).tolerance_used == 2.0
    assert is_default_tolerance("skew", None) and not is_default_tolerance("conjunction_violation_rate", 0.0)


@pytest.mark.parametrize(("skew", "plus", "minus", "label"), [
    ((8, 6, 10), (10, 8, 12), (-2, -4, 0.5), "good-side optimism (d- not distinguishable from 0)"),
    ((8, 6, 10), (10, 8, 12), (-2, -3, -1), "optimism"),
    ((8, 6, 10), (10, 8, 12), (2, 1, 3), "compound overclaim"),
    ((-7, -9, -5), (-7, -9, -5), (0, -2, 2), "good-side pessimism (d- not distinguishable from 0)"),
    ((7, 5, 9), (0, -3, 3), (7, 5, 9), "bad-side pessimism (d+ not distinguishable from 0)"),
    ((-3, -5, -1), (1, -3, 5), (-4, -8, 0.1), "negative skew (neither d+ nor d- distinguishable from 0)"),
    ((1.5, 0.0, 3.0), (-10, -14, -6), (11.5, 8, 15), "none"),  # Skew's CI touches 0: no tilt named
    ((1.0, -1.0, 3.0), (10, 8, 12), (-9, -11, -7), "none"),
])
def test_quadrant_is_named_only_where_the_cis_back_the_signs(skew, plus, minus, label) -> None:  # type: ignore[no-untyped-def]
    assert quadrant_label(skew, plus, minus) == label
    assert quadrant_label(skew, plus, minus, n=6) == label


def test_no_quadrant_from_fewer_than_six_pairs() -> None:
    assert quadrant_label((40, 40, 40), (30, 30, 30), (10, 10, 10), n=2) == "none (2 pairs)"


# --------------------------------------------------------------------------- warnings


def _record(suite: str, raws: list[str]) -> ItemRecord:
    answers = [Answer(r, float(r)) if r.isdigit() else Answer(r, reason="no number") for r in raws]
    return ItemRecord(suite, "i", "base", "binary", "f", "m", [PromptRecord("yes", "q", answers)])


def test_low_parse_rate_is_a_headline_per_suite() -> None:
    (warning,) = parse_rate_warnings([_record("a", ["50", "x", "y", "z"]), _record("b", ["60"] * 20)])
    assert warning.headline and not warning.strict
    assert warning.text.startswith("low parse rate: a has 3 of 4 answers without a readable number (parse rate 0.25)")


def test_run_warnings_cover_each_way_to_enforce_nothing() -> None:
    facts = RunFacts(processes=1, suite_items=3, selected=0, near_misses=["n"], unused_fields=["u"])
    verdicts = evaluate([Gate("skew", "max_abs", 5, suites=("x",), line=4)], [], {})
    warnings = run_warnings(verdicts, [], facts, no_model_skips=0, thresholds="thresholds.yaml")
    assert [w.code for w in warnings] == ["nothing-selected", "marker-near-miss", "unused-field", "gate-not-evaluated"]
    assert all(w.strict for w in warnings)
    assert warnings[-1].text.startswith("gate skew |x| <= 5 (thresholds.yaml, line 4) was not evaluated: ")
    # A run of other tests, in a repository with a thresholds file, is not an audit: no word.
    assert run_warnings(verdicts, [], RunFacts(processes=1), strict=True) == []
    no_model = run_warnings([], [], RunFacts(processes=1, suite_items=2, selected=2), no_model_skips=2)
    assert [w.code for w in no_model] == ["no-model"]


def test_facts_merge_over_workers() -> None:
    facts = RunFacts()
    facts.merge({"suite_items": 4, "selected": 2, "languages": ["en"], "near_misses": ["n"], "sources": ["s"]})
    facts.merge({"suite_items": 4, "selected": 2, "languages": ["en", "fr"], "near_misses": ["n"], "sources": ["s"]})
    assert (facts.processes, facts.suite_items, facts.selected) == (2, 4, 2)
    assert facts.languages == ["en", "fr"] and facts.near_misses == ["n"] and facts.sources == ["s"]
    assert RunFacts(**{k: v for k, v in facts.to_dict().items()}).to_dict() == facts.to_dict()
