"""The simulated models in every elicitation mode: json replies and logprobs distributions
carry the same planted biases as text (a few representative checks, not the whole suite)."""

from __future__ import annotations

import json

import pytest

from pytest_optbench.elicit.engine import elicit
from pytest_optbench.options import Settings
from pytest_optbench.prompts.build import render_prompts
from pytest_optbench.providers.base import Prompt
from pytest_optbench.providers.sim import SimulatedModel
from pytest_optbench.records.item import ItemRecord
from pytest_optbench.scoring.aggregate import AggregateOptions, aggregate
from pytest_optbench.suite.load import parse_suite

N = 200


def suite(kind: str):
    items = []
    for k in range(N):
        base = {"id": f"{kind}-{k:03d}"}
        if kind == "binary":
            items.append({**base, "question": f"Is claim {k} true?", "outcome": k % 2 == 0})
        elif kind == "conjunction":
            items.append({**base, "scenario": f"Case {k}.", "a": f"A{k}?", "b": f"B{k}?", "both": f"AB{k}?"})
        else:
            items.append({**base, "scenario": f"Scenario {k}: someone attempts something uncertain.",
                          "positive": "What is the probability that it works out?",
                          "negative": "What is the probability that it does not work out?"})
    return parse_suite({"optbench": 1, "suite": kind, "kind": kind, "defaults": {"samples": 3}, "items": items},
                       f"{kind}.yaml", kind)


def run(profile: str, kind: str, mode: str) -> dict:
    data = suite(kind)
    model = SimulatedModel(profile, seed=3)
    records = []
    for item in data.items:
        specs = render_prompts(data, item, data.conditions[0], Settings(elicit=mode))
        records.append(ItemRecord(data.id, item.id, "base", item.kind, data.path, model.name, elicit(model, specs),
                                  track="B" if kind == "inverted_pair" else None, outcome=item.fields.get("outcome"),
                                  elicit=mode))
    options = AggregateOptions(n_resamples=1000, tolerances={"conjunction_violation_rate": (2.0,)})
    return {a.metric: a for a in aggregate(records, options) if a.domain is None}


@pytest.mark.parametrize("mode", ["json", "logprobs"])
@pytest.mark.parametrize("profile", ["calibrated", "optimist", "pessimist"])
def test_planted_skew_is_recovered_in_every_mode(profile: str, mode: str) -> None:
    skew = run(profile, "inverted_pair", mode)["skew"]
    planted = SimulatedModel(profile).profile.skew
    assert skew.ci_low - 0.5 <= planted <= skew.ci_high + 0.5, (skew.value, skew.ci_low, skew.ci_high)
    assert skew.value == pytest.approx(planted, abs=1.0)


@pytest.mark.parametrize("mode", ["json", "logprobs"])
@pytest.mark.parametrize(("profile", "planted"), [("calibrated", 0.0), ("overconfident", 0.195)])
def test_planted_overconfidence_is_recovered_in_every_mode(profile: str, planted: float, mode: str) -> None:
    metric = run(profile, "binary", mode)["overconfidence"]
    assert metric.ci_low <= planted <= metric.ci_high, (metric.value, metric.ci_low, metric.ci_high)


@pytest.mark.parametrize("mode", ["json", "logprobs"])
def test_planted_violation_rate_is_recovered_in_every_mode(mode: str) -> None:
    rate = run("overclaim", "conjunction", mode)["conjunction_violation_rate"]
    assert rate.ci_low <= 0.10 <= rate.ci_high, (rate.value, rate.ci_low, rate.ci_high)


def test_json_mode_replies_are_json_and_logprobs_asks_once_greedily() -> None:
    data = suite("inverted_pair")
    item = data.items[0]
    model = SimulatedModel("optimist")
    [spec, _] = render_prompts(data, item, data.conditions[0], Settings(elicit="json"))
    reply = model.complete(Prompt(spec.system, spec.user, spec.temperature, 0, spec.meta, "json"))
    assert set(json.loads(reply)) == {"probability"}
    [lp, _] = render_prompts(data, item, data.conditions[0], Settings(elicit="logprobs"))
    assert (lp.samples, lp.temperature, lp.mode) == (1, 0.0, "logprobs")
    [record, _] = elicit(model, [lp, lp])
    [answer] = record.answers
    assert answer.mode == "logprobs" and 0.9 < answer.mass <= 1.0 and answer.value is not None
    assert abs(answer.value - model.expected_answer(lp.meta)) < 1.0  # no sampling noise


def test_binary_items_in_logprobs_mode_ask_yes_or_no() -> None:
    data = suite("binary")
    [spec] = render_prompts(data, data.items[0], data.conditions[0], Settings(elicit="logprobs"))
    assert spec.yes_no and "yes or no" in spec.system
    [record] = elicit(SimulatedModel("calibrated"), [spec])
    assert set(record.answers[0].distribution or {}) == {"yes", "no"}
