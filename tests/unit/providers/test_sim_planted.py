"""Every planted parameter of the simulated profiles is recovered within its 95% CI:
overconfidence on known answers, and the axiom violation rates."""

from __future__ import annotations

import pytest

from pytest_optbench.elicit.engine import elicit
from pytest_optbench.options import Settings
from pytest_optbench.prompts.build import render_prompts
from pytest_optbench.providers.sim import SimulatedModel
from pytest_optbench.records.item import ItemRecord
from pytest_optbench.scoring.aggregate import AggregateOptions, aggregate
from pytest_optbench.suite.load import parse_suite

N = 200
TOLERANCE = {"conjunction_violation_rate": 2.0, "disjunction_violation_rate": 2.0,
             "conditional_violation_rate": 5.0, "dose_response_violation_rate": 2.0}
# Overconfidence of the binary answers on a balanced set (see providers/sim.py).
PLANTED_OVERCONFIDENCE = {"calibrated": 0.0, "overconfident": 0.195}


def items(kind: str) -> list[dict]:
    out = []
    for k in range(N):
        base = {"id": f"{kind}-{k:03d}", "domain": "d"}
        if kind == "binary":
            out.append({**base, "question": f"Is claim {k} true?", "outcome": k % 2 == 0})
        elif kind == "dose_response":
            out.append({**base, "scenario": f"Case {k}.", "question": f"Does case {k} work out?",
                        "direction": "increasing" if k % 2 else "decreasing",
                        "ladder": ["Some evidence.", "More evidence.", "Much evidence.", "All evidence."]})
        else:
            third = {"conjunction": "both", "disjunction": "either", "conditional": "both"}[kind]
            second = "b_given_a" if kind == "conditional" else "b"
            out.append({**base, "scenario": f"Case {k}.", "a": f"A{k}?", second: f"B{k}?", third: f"AB{k}?"})
    return out


def run(profile: str, kind: str) -> dict:
    suite = parse_suite({"optbench": 1, "suite": kind, "kind": kind, "defaults": {"samples": 3},
                         "items": items(kind)}, f"{kind}.yaml", kind)
    model = SimulatedModel(profile, seed=11)
    records = []
    for item in suite.items:
        condition = suite.conditions[0]
        specs = render_prompts(suite, item, condition, Settings())
        records.append(ItemRecord(suite.id, item.id, condition.name, item.kind, suite.path, model.name,
                                  elicit(model, specs), outcome=item.fields.get("outcome"),
                                  direction=item.fields.get("direction")))
    options = AggregateOptions(n_resamples=1000, tolerances={m: (t,) for m, t in TOLERANCE.items()})
    return {(a.metric, a.tolerance): a for a in aggregate(records, options) if a.domain is None}


@pytest.mark.parametrize("profile", sorted(PLANTED_OVERCONFIDENCE))
def test_planted_overconfidence_is_recovered(profile):
    metric = run(profile, "binary")[("overconfidence", None)]
    assert metric.ci_low <= PLANTED_OVERCONFIDENCE[profile] <= metric.ci_high


def distinct_plantings() -> list[tuple[str, str]]:
    """(profile, kind) for each distinct planted rate of a kind (profiles that plant the same
    rate would repeat a case): 0, and every other rate the profiles plant."""
    cases, seen = [], set()
    for kind in ("conjunction", "disjunction", "conditional", "dose_response"):
        for profile in ("calibrated", "optimist", "overclaim", "overconfident"):
            rate = getattr(SimulatedModel(profile).profile, f"{kind}_violation_rate")
            if (kind, rate) not in seen:
                seen.add((kind, rate))
                cases.append((profile, kind))
    return cases


@pytest.mark.parametrize(("profile", "kind"), distinct_plantings())
def test_planted_violation_rates_are_recovered(profile, kind):
    metric = f"{kind}_violation_rate"
    rate = run(profile, kind)[(metric, TOLERANCE[metric])]
    expected = getattr(SimulatedModel(profile).profile, metric)
    assert rate.ci_low <= expected <= rate.ci_high, (rate.value, rate.ci_low, rate.ci_high)
