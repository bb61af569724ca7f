"""Three verdicts, the interval that decided each, the families and the exit policy (issue 24, items 2-3)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_optbench.metrics.confidence import BetaConfidence, PointConfidence, studentized_bootstrap
from pytest_optbench.metrics.gate_tests import adjust
from pytest_optbench.scoring.aggregate import Aggregate
from pytest_optbench.scoring.gates.enforcement import Policy, apply_policy, run_warnings
from pytest_optbench.scoring.gates.evaluate import evaluate
from pytest_optbench.scoring.gates.levels import decision_tails, level_text
from pytest_optbench.scoring.gates.selection import selection_suites, unmatchable_warnings
from pytest_optbench.scoring.gates.spec import (
    FAIL,
    INCONCLUSIVE,
    PASS,
    Gate,
    ThresholdsError,
    parse_thresholds,
    read_thresholds,
)

ALPHA = 0.025
PAIRS = {"track-b": ["inverted_pair"], "known": ["binary"]}


def mean_agg(metric: str, values: list[float] | np.ndarray, suite: str = "track-b", seed: int = 0,
             resamples: int = 2000) -> Aggregate:
    x = np.asarray(values, dtype=float)
    cd = studentized_bootstrap(x, np.random.default_rng(seed), resamples)
    interval = cd.interval()
    return Aggregate(suite, "base", metric, float(x.mean()), interval.low, interval.high, int(x.size),
                     ci_method=interval.method, confidence=cd)


def rate_agg(metric: str, hits: int, n: int, suite: str = "track-b") -> Aggregate:
    cd = BetaConfidence(hits / n, hits, n)
    interval = cd.interval()
    return Aggregate(suite, "base", metric, hits / n, interval.low, interval.high, n, ci_method=interval.method,
                     confidence=cd)


# --------------------------------------------------------------------------- levels


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(1e-9, 1.0), min_size=1, max_size=30), st.sampled_from(["holm", "bh", "none"]))
def test_the_decision_tail_agrees_with_the_adjusted_p(p: list[float], method: str) -> None:
    """p < tail exactly when the corrected p is below alpha, so the interval at the tail's level
    lies beyond the bound exactly when the correction says the bound is crossed."""
    tails = decision_tails(p, method, ALPHA)
    q = adjust(np.array(p), method)
    for pi, ti, qi in zip(p, tails, q, strict=True):
        edge = min(abs(pi - ti), abs(qi - ALPHA)) < 1e-12  # float rounding at the very edge
        assert edge or ((pi < ti) == (qi < ALPHA)), (p, method)
        assert 0 < ti <= ALPHA


def test_holm_tails_step_down_and_stop() -> None:
    # 0.001 < 0.025/3, 0.01 < 0.025/2, 0.2 not below 0.025: the last is tested where it stopped.
    assert decision_tails([0.2, 0.001, 0.01], "holm", ALPHA) == pytest.approx([0.025, 0.025 / 3, 0.025 / 2])
    # Nothing rejected: Bonferroni for every gate.
    assert decision_tails([0.5, 0.3], "holm", ALPHA) == pytest.approx([0.0125, 0.0125])
    assert decision_tails([0.001, 0.3], "bh", ALPHA) == pytest.approx([0.0125, 0.0125])
    assert decision_tails([], "holm", ALPHA) == []
    assert level_text(0.95) == "95%" and level_text(1 - 2 * 0.025 / 7) == "99.29%"


# --------------------------------------------------------------------------- the interval beside a verdict


def test_the_issues_real_model_case_is_never_pass() -> None:
    """Skew far beyond |x| <= 5, overconfidence beyond 0.10 and AUC below 0.75 on few items, with
    four plumbing gates beside them: under Holm no row reads PASS, each row shows the interval
    that decided it, and the plumbing gates are corrected among themselves."""
    rng = np.random.default_rng(3)
    skew = mean_agg("skew", rng.normal(-69.5, 45.0, 12))
    over = mean_agg("overconfidence", rng.normal(0.29, 0.25, 12), suite="known", seed=1)
    auc = mean_agg("auc", rng.normal(0.558, 0.3, 12), suite="known", seed=2)
    plumbing = [rate_agg("parse_rate", 11, 12), rate_agg("parse_rate", 12, 12, "known"),
                rate_agg("error_rate", 0, 12), rate_agg("error_rate", 0, 12, "known")]
    gates = [Gate("skew", "max_abs", 5, "ci", ("track-b",)), Gate("overconfidence", "max", 0.10, "ci"),
             Gate("auc", "min", 0.75, "ci"), Gate("parse_rate", "min", 0.95, "ci", min_n=1),
             Gate("error_rate", "max", 0.02, "ci", min_n=1)]
    verdicts = evaluate(gates, [skew, over, auc, *plumbing], PAIRS)
    metric = [v for v in verdicts if v.family == "metrics"]
    assert [v.gate.metric for v in metric] == ["skew", "overconfidence", "auc"]
    assert all(v.family_size == 3 for v in metric)
    assert {v.family_size for v in verdicts if v.family == "plumbing"} == {4}
    for v in verdicts:
        assert v.verdict in (PASS, FAIL, INCONCLUSIVE)
        low, high = v.interval_low, v.interval_high
        if v.verdict == PASS:
            assert low is not None and high is not None and v.gate.holds(low, high)
        if v.verdict == FAIL:
            assert low is not None and high is not None and v.gate.beyond(low, high)
        if low is not None and high is not None and v.gate.beyond(low, high):
            assert v.verdict == FAIL
    assert skew.ci_high < -5  # the 95% CI lies beyond the bound...
    (s,) = [v for v in verdicts if v.gate.metric == "skew"]
    assert s.verdict in (FAIL, INCONCLUSIVE) and s.level is not None and s.level > 0.95  # ...the row shows the corrected one


def test_ten_pairs_straddling_the_bound_are_inconclusive_not_pass() -> None:
    noise = np.random.default_rng(7).normal(0.0, 60.0, 10)
    skew = mean_agg("skew", noise - noise.mean() - 28.5)  # Skew -28.5 on 10 pairs, as in the issue
    (v,) = evaluate([Gate("skew", "max_abs", 30, "ci")], [skew], PAIRS)
    assert v.verdict == INCONCLUSIVE and v.interval_low < -30 < v.interval_high
    assert "straddles the bound" in v.reason and "cannot tell" in v.reason
    (p,) = evaluate([Gate("skew", "max_abs", 30)], [skew], PAIRS)  # point: the estimate holds, the data are thin
    assert p.verdict == INCONCLUSIVE and "too few items for this bound" in p.reason


def test_values_without_spread_are_judged_by_the_sign_test() -> None:
    """Every value equal: no interval of a mean, but 0.5^n bounds the chance that all n lie on
    one side by luck, so [e, e] decides from n = 6 on at 95% (and INCONCLUSIVE below)."""
    def agg(n: int, value: float = 0.0) -> Aggregate:
        return Aggregate("track-b", "base", "skew", value, value, value, n,
                         confidence=PointConfidence(value, "none: every value equal"))

    gate = Gate("skew", "max_abs", 5, "ci", min_n=1)
    (few,) = evaluate([gate], [agg(5)], PAIRS)
    assert few.verdict == INCONCLUSIVE and few.reason.startswith("no honest 95% interval")
    (enough,) = evaluate([gate], [agg(6)], PAIRS)
    assert enough.verdict == PASS and (enough.interval_low, enough.interval_high) == (0.0, 0.0)
    (shifted,) = evaluate([Gate("skew", "max_increase", 2, "ci")], [], PAIRS, comparison=None)
    assert shifted.verdict == INCONCLUSIVE and not shifted.evaluated  # no baseline: nothing to judge
    (beyond,) = evaluate([gate], [agg(20, 15.0)], PAIRS)
    assert beyond.verdict == FAIL


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(-60, 60), st.floats(0.5, 40), st.integers(6, 40)), min_size=1, max_size=8),
       st.floats(0.5, 30), st.sampled_from(["holm", "bh", "none"]))
def test_no_pass_beside_an_interval_beyond_its_bound(specs: list[tuple[float, float, int]], bound: float,
                                                      method: str) -> None:
    """Whatever the data and the correction, PASS stands beside an interval within its bound,
    FAIL beside one beyond it, and the 95% CI of a PASS is never wholly beyond."""
    aggs, kinds, gates = [], {}, []
    for i, (mean, sd, n) in enumerate(specs):
        values = np.random.default_rng(i).normal(mean, sd, n)
        aggs.append(mean_agg("skew", values, suite=f"s{i}", seed=i, resamples=300))
        kinds[f"s{i}"] = ["inverted_pair"]
    gates = [Gate("skew", "max_abs", bound, "ci"), Gate("skew", "max", bound), Gate("skew", "min", -bound, "ci")]
    for v in evaluate(gates, aggs, kinds, multiplicity=method):
        if v.verdict == PASS:
            assert not (v.ci_low is not None and v.gate.beyond(v.ci_low, v.ci_high))
            assert v.interval_low is not None and not v.gate.beyond(v.interval_low, v.interval_high)
            if v.gate.evidence == "ci":
                assert v.gate.holds(v.interval_low, v.interval_high)
        if v.verdict == FAIL and v.gate.evidence == "ci":
            assert v.gate.beyond(v.interval_low, v.interval_high)


def test_a_gates_family_key_forms_its_own_family(tmp_path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("optbench: 1\non_inconclusive: fail\ngates:\n"
                    "  - {metric: skew, max_abs: 5, evidence: ci, family: release, on_inconclusive: pass}\n"
                    "  - {metric: parse_rate, min: 0.5, evidence: ci}\n")
    read = read_thresholds(path)
    assert read.on_inconclusive == "fail"
    assert [(g.family_name, g.on_inconclusive) for g in read.gates] == [("release", "pass"), ("plumbing", None)]


@pytest.mark.parametrize(("text", "key"), [
    ("optbench: 1\non_inconclusive: maybe\ngates: []\n", "on_inconclusive"),
    ("optbench: 1\ngates:\n  - {metric: skew, max: 5, on_inconclusive: [fail]}\n", "on_inconclusive"),
    ("optbench: 1\ngates:\n  - {metric: skew, max: 5, family: 7}\n", "family"),
    ("optbench: 1\ngates:\n  - {metric: skew, max: 5, family: '  '}\n", "family"),
])
def test_bad_policy_and_family_keys_are_one_sentence(text: str, key: str) -> None:
    import yaml

    with pytest.raises(ThresholdsError) as info:
        parse_thresholds(yaml.safe_load(text), "t.yaml")
    message = str(info.value)
    assert message.startswith("t.yaml") and f"key '{key}'" in message and "\n" not in message


# --------------------------------------------------------------------------- policy


def test_policy_precedence() -> None:
    assert Policy().for_gate(None) == "pass"
    assert Policy(file="fail").for_gate(None) == "fail" and Policy(file="fail").for_gate("pass") == "pass"
    assert Policy(cli="pass", file="fail").for_gate("fail") == "pass"
    assert Policy(strict=True).for_gate(None) == "fail" and Policy(strict=True).for_gate("pass") == "pass"
    # A gate not evaluated left its bound unenforced: strict mode fails it whatever is set.
    assert Policy(strict=True, cli="pass", file="pass").for_gate("pass", evaluated=False) == "fail"
    assert Policy(cli="pass").for_gate("fail", evaluated=False) == "pass"
    with pytest.raises(ValueError):
        Policy(cli="maybe")


def test_inconclusive_fails_the_session_only_under_a_fail_policy() -> None:
    skew = mean_agg("skew", np.random.default_rng(1).normal(4.0, 10.0, 10))
    gates = [Gate("skew", "max_abs", 5, "ci"), Gate("skew", "max_abs", 5, "ci", on_inconclusive="fail")]
    verdicts = evaluate(gates, [skew], PAIRS)
    assert [v.verdict for v in verdicts] == [INCONCLUSIVE, INCONCLUSIVE]
    lax = apply_policy(verdicts, Policy())
    assert [v.fails_session for v in lax] == [False, True]
    assert [v.fails_session for v in apply_policy(verdicts, Policy(strict=True))] == [True, True]
    assert [v.fails_session for v in apply_policy(verdicts, Policy(strict=True, file="pass"))] == [False, True]
    text = Policy().text(lax)
    assert text.startswith("policy: inconclusive gates pass (the default") and "1 gate row(s) with their own" in text
    assert text.endswith("2 inconclusive, 1 of them failing")
    assert lax[0].to_dict()["fails_session"] is False and lax[1].to_dict()["on_inconclusive"] == "fail"


def test_no_gate_at_all_is_a_strict_warning() -> None:
    from pytest_optbench.records.facts import RunFacts
    from pytest_optbench.records.item import ItemRecord

    record = ItemRecord(suite="s", item="i", condition="base", kind="inverted_pair", file="s.yaml", model="m",
                        prompts=[])
    (w,) = run_warnings([], [record], RunFacts(), gates=0, thresholds="t.yaml")
    assert w.code == "no-gates" and w.strict and "t.yaml has no gates" in w.text
    assert run_warnings([], [record], RunFacts(), gates=1) == []
    assert run_warnings([], [], RunFacts(), gates=0) == []  # nothing answered: nothing to gate


# --------------------------------------------------------------------------- a shard's static check


def test_a_shard_knows_a_gate_that_can_match_nothing() -> None:
    suites = selection_suites([("track-b", "inverted_pair", "base"), ("track-b", "inverted_pair", "narrative_up"),
                               ("known", "binary", "base")])
    assert suites["track-b"] == {"kinds": ["inverted_pair"], "conditions": ["base", "narrative_up"]}
    gates = [Gate("skew", "max_abs", 5, suites=("nothing-*",)), Gate("skew", "max_abs", 5),
             Gate("brier", "max", 0.2), Gate("skew", "max_abs", 5, conditions=("bsae",)),
             Gate("condition_effect", "max_abs", 5, conditions=("narrative_up",)),
             Gate("skew", "max_increase", 2)]
    found = unmatchable_warnings(gates, suites, "thresholds.yaml")
    assert len(found) == 2 and all(w.strict for w in found)
    assert "its suites ['nothing-*'] match none" in found[0].text and "conditions ['bsae']" in found[1].text
    assert unmatchable_warnings(gates, {"x": "not a mapping"}, None) == []
