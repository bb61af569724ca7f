"""Unit tests for the binary (known-answer) part of pytest_optbench.aggregate.

Per spec section 2, p = (mean of an item's parsed samples) / 100, refusals (50) included; every
binary metric is the calibration module's function of that p and the outcomes, with a bootstrap
percentile CI over items. The simulated profiles check the metrics recover planted behaviour.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_optbench.elicit.engine import elicit
from pytest_optbench.metrics import calibration as cal
from pytest_optbench.metrics.calibration_ci import OUTCOME_FLOOR_METHOD
from pytest_optbench.options import Settings
from pytest_optbench.prompts.build import DEFAULT_TEMPLATE, prompt_fingerprint, render_prompts
from pytest_optbench.providers.sim import SimulatedModel
from pytest_optbench.records.item import Answer, ItemRecord, PromptRecord
from pytest_optbench.scoring.aggregate import METRIC_KINDS, AggregateOptions, aggregate
from pytest_optbench.suite.load import parse_suite

OPTIONS = AggregateOptions(n_resamples=500)
BINARY_METRICS = {m for m, kinds in METRIC_KINDS.items() if kinds == ("binary",)}
OOS = {"climatology_brier_oos", "brier_skill_oos"}


def _record(item: str, outcome: bool, answers, condition: str = "base", suite: str = "known") -> ItemRecord:
    parsed = []
    for a in answers:
        if a is None:
            parsed.append(Answer("no idea", None, reason="no number"))
        elif a == "error":
            parsed.append(Answer(None, error="TimeoutError"))
        else:
            parsed.append(Answer(str(a), float(a)))
    return ItemRecord(suite, item, condition, "binary", f"{suite}.yaml", "m",
                      [PromptRecord("yes", f"Q {item}?", parsed)], outcome=outcome)


# Item answers (0-100 samples): a 50 is a legitimate answer here; "z" has no usable answer.
HAND = {
    "a": (True, [90, 80, 85]), "b": (False, [70, 60]), "c": (True, [30, 50, None]),
    "d": (False, [10, 5, 15]), "e": (True, [65]), "f": (False, [40, 45, "error"]),
    "g": (True, [99, 100]), "h": (False, [0, 2]), "i": (True, [55, 45]), "j": (False, [20, 35]),
    "z": (True, [None, "error"]),
}


def _hand_records():
    return [_record(i, o, a) for i, (o, a) in HAND.items()]


def _hand_arrays():
    p, y = [], []
    for item in sorted(HAND):
        outcome, answers = HAND[item]
        values = [a for a in answers if a is not None and a != "error"]
        if values:
            p.append(sum(values) / len(values) / 100)
            y.append(1.0 if outcome else 0.0)
    return np.array(p), np.array(y)


def _metrics(records, options=OPTIONS):
    return {a.metric: a for a in aggregate(records, options) if a.metric in BINARY_METRICS}


def _expected(p, y, base_rate=None):
    out = {
        "brier": cal.brier(p, y), "log_loss": cal.log_loss(p, y), "ece": cal.ece(p, y),
        "ece_debiased": cal.ece_debiased(p, y),
        "accuracy": cal.accuracy(p, y), "overconfidence": cal.overconfidence(p, y), "auc": cal.auc(p, y),
        "climatology_brier": cal.climatology_brier(y), "brier_skill": cal.brier_skill(p, y),
        "brier_recalibrated": float(np.mean((cal.loo_recalibrated(p, y) - y) ** 2)),
        **cal.murphy(p, y),
    }
    out["shrinkage_a"], out["shrinkage_b"] = cal.shrinkage_fit(p, y)
    if base_rate is not None:
        out["climatology_brier_oos"] = cal.climatology_brier(y, base_rate)
        out["brier_skill_oos"] = cal.brier_skill(p, y, base_rate=base_rate)
    return out


def test_hand_p_values() -> None:
    p, _y = _hand_arrays()
    assert p.size == 10  # "z" has no parsed answer and is left out
    assert p[sorted(HAND).index("c")] == pytest.approx(0.40)  # (30 + 50) / 2: 50 kept
    assert p[sorted(HAND).index("f")] == pytest.approx(0.425)


def test_every_metric_equals_the_calibration_function() -> None:
    got = _metrics(_hand_records())
    p, y = _hand_arrays()
    want = _expected(p, y)
    assert set(got) == set(want) == BINARY_METRICS - OOS
    for name, value in want.items():
        assert got[name].value == pytest.approx(float(value), abs=1e-12), name
        assert got[name].n == 10, name


def test_hand_values_independent_of_the_module() -> None:
    got = _metrics(_hand_records())
    p, y = _hand_arrays()
    assert got["brier"].value == pytest.approx(sum((a - b) ** 2 for a, b in zip(p, y, strict=True)) / 10)
    assert got["accuracy"].value == pytest.approx(np.mean((p >= 0.5) == (y == 1)))
    assert got["climatology_brier"].value == pytest.approx(0.5 * 0.5)
    yes, no = p[y == 1], p[y == 0]
    pairs = [(a > b) + 0.5 * (a == b) for a in yes for b in no]
    assert got["auc"].value == pytest.approx(sum(pairs) / len(pairs))


# The interval each binary metric gets (metrics/calibration_ci.py).
CI_METHODS = {
    "brier": OUTCOME_FLOOR_METHOD, "log_loss": OUTCOME_FLOOR_METHOD, "overconfidence": OUTCOME_FLOOR_METHOD,
    "brier_recalibrated": "bootstrap-t/Student", "accuracy": "clopper-pearson",
    "climatology_brier": "wilson image", "uncertainty": "wilson image", "shrinkage_b": "wilson image",
    "climatology_brier_oos": "wilson image",
    "ece": "calibration-null / cross-fitted", "ece_debiased": "calibration-null / cross-fitted",
    "reliability": "calibration-null / cross-fitted", "auc": "unbiased U-statistic variance, logit scale",
}


@pytest.mark.parametrize("name", sorted(BINARY_METRICS - OOS))
def test_ci_contains_estimate(name: str) -> None:
    agg = _metrics(_hand_records())[name]
    assert agg.ci_method.startswith(CI_METHODS.get(name, "BC"))  # default: bias-corrected percentile
    assert agg.ci_low <= agg.value <= agg.ci_high
    assert agg.confidence is not None
    interval = agg.confidence.interval()
    assert (interval.low, interval.high) == (agg.ci_low, agg.ci_high)


def test_out_of_sample_metrics_with_a_base_rate() -> None:
    got = _metrics(_hand_records(), AggregateOptions(n_resamples=500, base_rate=0.3))
    p, y = _hand_arrays()
    want = _expected(p, y, 0.3)
    assert set(got) == BINARY_METRICS
    for name in OOS:
        assert got[name].value == pytest.approx(float(want[name]), abs=1e-12)
        assert got[name].ci_low <= got[name].value <= got[name].ci_high
    assert got["climatology_brier_oos"].value == pytest.approx(np.mean((0.3 - y) ** 2))
    assert 0.0 <= got["brier_skill_oos"].p_value <= 1.0
    assert "brier_skill_oos" not in _metrics(_hand_records())


def test_p_values_present_and_valid() -> None:
    got = _metrics(_hand_records())
    for name in ("brier_skill", "brier_recalibrated", "auc"):
        assert 0.0 <= got[name].p_value <= 1.0, name


def test_no_usable_binary_answer_gives_no_binary_metrics() -> None:
    assert _metrics([_record("z", True, [None, "error"])]) == {}


def test_conditions_are_scored_separately() -> None:
    records = _hand_records() + [_record(i, o, [100 - a if isinstance(a, int) else a for a in ans], "flipped")
                                 for i, (o, ans) in HAND.items()]
    aggs = [a for a in aggregate(records, OPTIONS) if a.metric == "brier"]
    by_condition = {a.condition: a for a in aggs}
    p, y = _hand_arrays()
    assert by_condition["base"].value == pytest.approx(cal.brier(p, y))
    assert by_condition["flipped"].value == pytest.approx(cal.brier(1 - p, y))


answer = st.one_of(st.integers(0, 100), st.none())


@given(st.lists(st.tuples(st.booleans(), st.lists(answer, min_size=1, max_size=3)), min_size=2, max_size=25))
def test_hypothesis_records_match_module(items) -> None:
    records = [_record(f"i{k:02d}", o, a) for k, (o, a) in enumerate(items)]
    p, y = [], []
    for o, answers in items:
        values = [a for a in answers if a is not None]
        if values:
            p.append(float(np.mean(values)) / 100)
            y.append(1.0 if o else 0.0)
    got = _metrics(records, AggregateOptions(n_resamples=100))
    if not p:
        assert got == {}
        return
    want = _expected(np.array(p), np.array(y))
    for name, value in want.items():
        value = float(value)
        if math.isnan(value):
            assert math.isnan(got[name].value), name
        else:
            assert got[name].value == pytest.approx(value, abs=1e-12), name
        assert got[name].n == len(p)


# --------------------------------------------------------------------------- simulated profiles

N_SIM = 300


@cache
def _suite():
    data = {
        "optbench": 1, "suite": "sim-known", "kind": "binary", "defaults": {"samples": 3},
        "items": [{"id": f"q{k:03d}", "question": f"Is statement {k} true?", "outcome": k % 2 == 0}
                  for k in range(N_SIM)],
    }
    return parse_suite(data, "sim-known.yaml", default_id="sim-known")


@cache
def _sim_metrics(profile: str):
    suite = _suite()
    model = SimulatedModel(profile)
    records = []
    condition = suite.conditions[0]
    for item in suite.items:
        specs = render_prompts(suite, item, condition, Settings())
        records.append(ItemRecord(  # as collect.OptbenchItem.runtest builds it
            suite=suite.id, item=item.id, condition=condition.name, kind=item.kind, file=suite.path,
            model=model.name, prompts=elicit(model, specs), track=None, domain=item.domain,
            language=suite.language, expected=item.fields.get("expected"),
            outcome=item.fields.get("outcome"), direction=item.fields.get("direction"),
            prompt_hash=prompt_fingerprint([s.system for s in specs] + [suite.template or DEFAULT_TEMPLATE]),
        ))
    return _metrics(records)


def test_overconfident_profile_is_detected() -> None:
    m = _sim_metrics("overconfident")
    assert m["overconfidence"].ci_low > 0
    assert m["shrinkage_a"].ci_high < 1  # answers need compressing toward the base rate
    assert m["auc"].ci_low > 0.5


def test_calibrated_profile_is_not_flagged() -> None:
    m = _sim_metrics("calibrated")
    assert m["overconfidence"].ci_low <= 0 <= m["overconfidence"].ci_high
    assert m["shrinkage_a"].ci_low <= 1 <= m["shrinkage_a"].ci_high
    assert m["auc"].ci_low > 0.5
    # discrimination is the same; the overconfident one loses on reliability
    over = _sim_metrics("overconfident")
    assert over["reliability"].value > m["reliability"].value
    assert over["brier"].value > m["brier"].value


# Reliability is biased upward, more so on a resample (duplicated items make bins purer), so
# its percentile interval can sit wholly above the estimate: see below. (ECE's interval is
# built for the population ECE and holds both estimates.)
BIASED_UP = {"reliability"}


@pytest.mark.parametrize("profile", ["calibrated", "overconfident"])
def test_sim_cis_contain_estimates(profile: str) -> None:
    for name, agg in _sim_metrics(profile).items():
        assert agg.n >= N_SIM - 5, name
        if agg.interval_reason is not None:  # no honest interval: none is claimed, and why is said
            assert math.isnan(agg.ci_low) and math.isnan(agg.ci_high), name
            assert "bootstrap draws" in agg.interval_reason and "no_interval_reason" in agg.to_dict(), name
        elif name not in BIASED_UP:
            assert agg.ci_low <= agg.value <= agg.ci_high, name


def _calibrated_records(seed: int, n: int = 60) -> list[ItemRecord]:
    """Answers that are the true probability: a perfectly calibrated forecaster."""
    rng = np.random.default_rng(seed)
    q = rng.integers(1, 100, n)
    y = rng.uniform(0, 100, n) < q
    return [_record(f"i{k:03d}", bool(y[k]), [int(q[k])]) for k in range(n)]


def test_biased_metric_cis_contain_estimate_on_calibrated_data() -> None:
    m = _metrics(_calibrated_records(seed=9))
    for name in sorted(BIASED_UP):
        assert m[name].ci_low <= m[name].value <= m[name].ci_high, name


def test_binary_families_beside_the_rest_keep_the_sequential_values_and_order() -> None:
    # aggregate() computes the binary families in a worker thread; the result must be what
    # computing every family of every group in turn gives, value for value and in that order.
    from pytest_optbench.scoring import aggregate as agg

    rng = np.random.default_rng(3)
    records = [_record(f"{suite}{i}", bool(i % 2), list(rng.integers(0, 101, 3)), condition, suite)
               for suite in ("known-a", "known-b") for condition in ("base", "narrative_up") for i in range(40)]
    got = aggregate(records, OPTIONS)
    want = []
    for suite in ("known-a", "known-b"):
        by_condition = {c: [r for r in records if r.suite == suite and r.condition == c] for c in ("base", "narrative_up")}
        for condition, group_records in by_condition.items():
            group = agg._Group(suite, condition, group_records, OPTIONS)
            for family in (agg._answer_rates, agg._skew_family, agg._binary_family, agg._axiom_family):
                want.extend(family(group))
        want.extend(agg.condition_effects(suite, by_condition, OPTIONS))
    assert [a.to_dict() for a in got] == [a.to_dict() for a in want]
    assert any(a.metric == "auc" for a in got) and any(a.metric == "condition_effect" for a in got)


def test_a_change_between_runs_without_a_confident_miss_reaches_the_outcomes_spread() -> None:
    """A sharper model (10-20% / 80-90%) against a softer one (30-40% / 60-70%) on 15
    questions, every call right: the sharper one's Brier score is lower on every item, by
    0.088 with little spread (before: [-0.097, -0.079]), although each confident miss in the
    population costs the sharper model up to 0.32 more. Both ends now reach the change's
    calibration-null SD (the larger of the two runs' p (1 - p) per item), discounted."""
    from pytest_optbench.scoring.baseline import OUTCOME_FLOORED_CHANGE, compare

    outcomes = [False] * 12 + [True] * 3
    sharp = [10] * 10 + [20, 20] + [90, 90, 80]
    soft = [30] * 10 + [40, 40] + [70, 70, 60]
    now = [_record(f"i{k}", o, [a]) for k, (o, a) in enumerate(zip(outcomes, sharp, strict=True))]
    before = [_record(f"i{k}", o, [a]) for k, (o, a) in enumerate(zip(outcomes, soft, strict=True))]
    comparison = compare(now, before, OPTIONS)
    change = next(c for c in comparison.changes if c.metric == "brier")
    p_now, p_before = np.array(sharp) / 100, np.array(soft) / 100
    floor = cal.null_sd_floor(cal.change_null_sd(p_now, p_before, "brier"), 15)
    z = 1.959963984540054
    assert change.test == OUTCOME_FLOORED_CHANGE
    assert change.ci_low == pytest.approx(change.delta - z * floor, rel=1e-9)
    assert change.ci_high == pytest.approx(change.delta + z * floor, rel=1e-9)
    assert change.delta == pytest.approx(-0.088)
