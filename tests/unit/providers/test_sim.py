"""Unit tests for pytest_optbench.providers.sim: determinism, spec parsing, planted biases."""

from __future__ import annotations

import re
from functools import cache

import numpy as np
import pytest

from pytest_optbench.answers.parse import parse_answer
from pytest_optbench.elicit.engine import elicit
from pytest_optbench.metrics.stats import proportion_ci
from pytest_optbench.options import Settings
from pytest_optbench.prompts.build import PromptSpec, render_prompts
from pytest_optbench.providers.base import Prompt
from pytest_optbench.providers.sim import PROFILES, SimProfile, SimSpecError, SimulatedModel, parse_sim_spec
from pytest_optbench.records.item import ItemRecord
from pytest_optbench.scoring.aggregate import Aggregate, AggregateOptions, aggregate
from pytest_optbench.suite.load import BASE_CONDITION, Suite, parse_suite

N_ITEMS = 200
SAMPLES = 5


def _pair_suite(n: int = N_ITEMS, suite_id: str = "sim-recovery", samples: int = SAMPLES) -> Suite:
    data = {
        "optbench": 1,
        "suite": suite_id,
        "defaults": {"samples": samples},
        "items": [
            {
                "id": f"item-{k:03d}",
                "domain": ("health", "work", "money")[k % 3],
                "scenario": f"Scenario number {k}: someone attempts something uncertain.",
                "positive": "What is the probability that it works out?",
                "negative": "What is the probability that it does not work out?",
            }
            for k in range(n)
        ],
    }
    return parse_suite(data, f"{suite_id}.yaml", default_id=suite_id)


@cache
def _specs(n: int = N_ITEMS, samples: int = SAMPLES) -> tuple[tuple[str, tuple[PromptSpec, ...]], ...]:
    suite = _pair_suite(n, samples=samples)
    return tuple(
        (item.id, tuple(render_prompts(suite, item, BASE_CONDITION, Settings()))) for item in suite.items
    )


def _run(model: SimulatedModel, n: int = N_ITEMS, samples: int = SAMPLES) -> list[ItemRecord]:
    records = []
    for item_id, specs in _specs(n, samples):
        records.append(ItemRecord(
            suite="sim-recovery", item=item_id, condition="base", kind="inverted_pair",
            file="sim-recovery.yaml", model=model.name, prompts=elicit(model, specs),
            track="B", domain=specs[0].meta["domain"],
        ))
    return records


def _metrics(records: list[ItemRecord]) -> dict[str, Aggregate]:
    aggs = aggregate(records, AggregateOptions(n_resamples=2000))
    return {a.metric: a for a in aggs if a.domain is None}


@cache
def _profile_run(spec: str, seed: int = 0) -> tuple[SimulatedModel, tuple[ItemRecord, ...], dict[str, Aggregate]]:
    model = SimulatedModel(spec, seed=seed)
    records = _run(model)
    return model, tuple(records), _metrics(records)


def _raw(records) -> list[str | None]:
    return [a.raw for r in records for a in r.answers()]


# --------------------------------------------------------------------------- determinism


def test_same_seed_gives_the_same_answers() -> None:
    a = _run(SimulatedModel("optimist", seed=1), n=30)
    b = _run(SimulatedModel("optimist", seed=1), n=30)
    assert _raw(a) == _raw(b)
    assert [r.to_dict() for r in a] == [r.to_dict() for r in b]


def test_different_seed_gives_different_answers() -> None:
    a = _raw(_run(SimulatedModel("optimist", seed=1), n=30))
    b = _raw(_run(SimulatedModel("optimist", seed=2), n=30))
    assert a != b
    assert sum(x != y for x, y in zip(a, b, strict=True)) > len(a) // 2


def test_answers_do_not_depend_on_call_order() -> None:
    # Each answer is a function of (seed, suite, item, condition, role, sample): this is what
    # makes a run under xdist give the same answers as a serial one.
    model = SimulatedModel("pessimist", seed=5)
    prompts = [
        Prompt(spec.system, spec.user, spec.temperature, sample, spec.meta)
        for _item, specs in _specs(20) for spec in specs for sample in range(SAMPLES)
    ]
    forward = [model.complete(p) for p in prompts]
    backward = [model.complete(p) for p in reversed(prompts)][::-1]
    fresh = SimulatedModel("pessimist", seed=5)
    assert forward == backward == [fresh.complete(p) for p in prompts]


def test_samples_of_one_prompt_differ() -> None:
    model = SimulatedModel("calibrated")
    (_, specs), *_ = _specs(1)
    answers = {model.complete(Prompt(specs[0].system, specs[0].user, 0.7, s, specs[0].meta)) for s in range(20)}
    assert len(answers) > 5


# --------------------------------------------------------------------------- spec parsing


def test_parse_sim_spec_plain_profile() -> None:
    name, profile = parse_sim_spec("optimist")
    assert name == "optimist" and profile == PROFILES["optimist"]


def test_parse_sim_spec_overrides_without_touching_the_profile() -> None:
    name, profile = parse_sim_spec("optimist?delta_plus=4&noise_sd=2")
    assert name == "optimist"
    assert profile.delta_plus == 4.0 and profile.noise_sd == 2.0
    assert profile.delta_minus == PROFILES["optimist"].delta_minus
    assert PROFILES["optimist"].delta_plus == 10  # the shared table is not mutated
    assert profile.skew == 4.0 + PROFILES["optimist"].delta_minus
    model = SimulatedModel("optimist?delta_plus=4&noise_sd=2", seed=3)
    assert model.name == "sim:optimist?delta_plus=4&noise_sd=2"
    assert model.profile == profile and model.profile_name == "optimist" and model.seed == 3


@pytest.mark.parametrize(
    ("spec", "pattern"),
    [
        ("realist", r"unknown simulated profile 'realist'.*calibrated, optimist"),
        ("", r"unknown simulated profile ''"),
        ("optimist?delta=3", r"unknown simulated-model parameter 'delta'.*known: .*delta_plus"),
        ("optimist?delta_plus=lots", r"parameter 'delta_plus' .* must be a number, got 'lots'"),
        ("optimist?delta_plus", r"parameter 'delta_plus' .* must be a number, got ''"),
    ],
)
def test_parse_sim_spec_errors(spec: str, pattern: str) -> None:
    with pytest.raises(SimSpecError, match=pattern) as info:
        parse_sim_spec(spec)
    assert "\n" not in str(info.value)
    with pytest.raises(SimSpecError):
        SimulatedModel(spec)


def test_documented_profile_table() -> None:
    table = {  # profile: (delta_plus, delta_minus, skew) from the module docstring
        "calibrated": (0, 0, 0), "optimist": (10, -2, 8), "pessimist": (-9, 2, -7),
        "overclaim": (7, 6, 13), "overconfident": (0, 0, 0), "skewed": (6, -2, 4),
    }
    assert set(PROFILES) == set(table)
    for name, (dp, dm, sk) in table.items():
        profile = PROFILES[name]
        assert (profile.delta_plus, profile.delta_minus, profile.skew) == (dp, dm, sk)
    assert SimProfile().skew == 0


# --------------------------------------------------------------------------- answers


def test_every_answer_is_an_integer_1_to_99_a_refusal_or_prose() -> None:
    _model, records, _ = _profile_run("optimist")
    for record in records:
        for answer in record.answers():
            assert answer.error is None and answer.raw is not None
            parsed = parse_answer(answer.raw)
            assert (parsed.value, parsed.reason) == (answer.value, answer.reason)
            if answer.value is None:
                assert not re.search(r"\d", answer.raw)  # prose refusal: no number at all
            else:
                assert answer.value == int(answer.value) and 1 <= answer.value <= 99
                if answer.value == 50:
                    assert answer.raw == "50"  # only planted refusals are 50


def test_all_answer_styles_appear() -> None:
    _model, records, _ = _profile_run("calibrated")
    raws = [r for r in _raw(records) if r]
    assert any(re.fullmatch(r"\d+", r) for r in raws)
    assert any(r.startswith("About ") for r in raws)
    assert any(r.startswith('{"probability"') for r in raws)
    assert any(r.endswith("/100") for r in raws)
    assert any(r.endswith(" percent.") for r in raws)
    assert any(r.startswith("Probability: ") for r in raws)


# --------------------------------------------------------------------------- planted biases


# "skewed" plants a heavy-tailed per-item tilt: 200 items recover its Skew only with the
# interval's 95% (it has its own tests below); the others are near-normal and recover it surely.
@pytest.mark.parametrize("name", sorted(set(PROFILES) - {"skewed"}))
def test_planted_skew_is_recovered(name: str) -> None:
    model, _records, metrics = _profile_run(name)
    skew = metrics["skew"]
    assert skew.n == N_ITEMS  # no item loses a whole side at these refusal rates
    assert skew.ci_low <= model.profile.skew <= skew.ci_high, (skew.value, skew.ci_low, skew.ci_high)
    assert skew.value == pytest.approx(model.profile.skew, abs=1.0)
    # delta_plus / delta_minus also carry mean(q) - 50 of the items, which cancels in Skew.
    q_shift = float(np.mean([model.latent_pair_probability(specs[0].meta) for _i, specs in _specs()])) - 50
    plus, minus = metrics["delta_plus"], metrics["delta_minus"]
    assert plus.ci_low <= model.profile.delta_plus + q_shift <= plus.ci_high
    assert minus.ci_low <= model.profile.delta_minus - q_shift <= minus.ci_high
    assert skew.value == pytest.approx(plus.value + minus.value, abs=1e-9)


# A quadrant is named only where both parts' CIs exclude 0: the pessimist's planted d- = +2
# is not distinguishable from 0 over these 200 items, so only its good side is named.
@pytest.mark.parametrize(("name", "quadrant"), [("optimist", "optimism"),
                                                ("pessimist", "good-side pessimism (d- not distinguishable from 0)"),
                                                ("overclaim", "compound overclaim"),
                                                ("calibrated?delta_plus=-4&delta_minus=-3&noise_sd=3",
                                                 "compound underclaim")])
def test_planted_quadrant_is_named(name: str, quadrant: str) -> None:
    _model, _records, metrics = _profile_run(name)
    assert metrics["skew"].detail["quadrant"] == quadrant
    assert metrics["skew"].p_value < 0.001


def test_calibrated_skew_is_not_significant() -> None:
    _model, _records, metrics = _profile_run("calibrated")
    assert metrics["skew"].ci_low <= 0 <= metrics["skew"].ci_high


def test_overridden_skew_is_recovered() -> None:
    model, _records, metrics = _profile_run("calibrated?delta_plus=-4&delta_minus=-3&noise_sd=3")
    assert model.profile.skew == -7
    assert metrics["skew"].ci_low <= -7 <= metrics["skew"].ci_high


@pytest.mark.parametrize(
    "spec",
    ["calibrated", "optimist", "overconfident", "calibrated?refusal_rate=0.15&prose_refusal_rate=0.10"],
)
def test_refusal_and_parse_rates_match_the_profile(spec: str) -> None:
    model, records, metrics = _profile_run(spec)
    profile = model.profile
    answers = [a for r in records for a in r.answers()]
    total = len(answers)
    assert total == N_ITEMS * 2 * SAMPLES
    # Share of all answers that are planted 50s / prose, with exact binomial CIs. Sixteen such
    # checks run here, so each uses a 99.9% interval: a miss means a wrong rate, not bad luck.
    fifties = sum(a.value == 50 for a in answers)
    prose = sum(a.value is None for a in answers)
    ci = proportion_ci(fifties, total, confidence=0.999)
    assert ci.low <= profile.refusal_rate <= ci.high
    ci = proportion_ci(prose, total, confidence=0.999)
    assert ci.low <= profile.prose_refusal_rate <= ci.high
    # The aggregate's rates are over parsed answers (refusal) and received answers (parse).
    received = [a for a in answers if a.error is None]
    parsed = [a for a in received if a.value is not None]
    assert metrics["refusal_rate"].value == fifties / len(parsed)
    assert metrics["parse_rate"].value == len(parsed) / len(received)
    ci = proportion_ci(fifties, len(parsed), confidence=0.999)
    assert ci.low <= profile.refusal_rate / (1 - profile.prose_refusal_rate) <= ci.high
    ci = proportion_ci(len(parsed), len(received), confidence=0.999)
    assert ci.low <= 1 - profile.prose_refusal_rate <= ci.high
    assert metrics["error_rate"].value == 0.0


def test_noise_level_shows_in_item_sd() -> None:
    # Within-prompt SD of the samples is the profile's noise_sd (answers are rounded, and
    # the rare planted 50 adds a little).
    model, _records, metrics = _profile_run("calibrated")
    assert metrics["item_sd"].value == pytest.approx(model.profile.noise_sd, rel=0.25)


# --------------------------------------------------------------------------- the skewed profile


def test_skewed_profile_tilt_is_centred_right_skewed_and_heavy_tailed() -> None:
    model = SimulatedModel("skewed", seed=3)
    tilts = np.array([model.item_tilt({"suite": "s", "item": f"i{k}"}) for k in range(20_000)])
    sd = model.profile.item_tilt_sd
    assert abs(tilts.mean()) < 4 * sd / np.sqrt(tilts.size)  # mean 0: Skew stays as planted
    assert tilts.std() == pytest.approx(sd, rel=0.05)
    skewness = float(np.mean((tilts - tilts.mean()) ** 3) / tilts.std() ** 3)
    assert skewness == pytest.approx(2.0, abs=0.3)  # Exponential(1) - 1
    assert tilts.min() >= -sd - 1e-9  # bounded below, long tail above
    # Other profiles get no tilt.
    assert SimulatedModel("optimist").item_tilt({"suite": "s", "item": "i0"}) == 0.0


def test_skewed_profile_refusals_cluster_by_item() -> None:
    model, records, _ = _profile_run("skewed")
    profile = model.profile
    per_item = np.array([sum(a.value is None or a.value == 50 for a in r.answers()) for r in records], dtype=float)
    answers = len(records[0].answers())
    total = profile.refusal_rate + profile.prose_refusal_rate
    # The overall rate is as planted (99.9% binomial interval widened by the clustering) ...
    ci = proportion_ci(int(per_item.sum()), per_item.size * answers, confidence=0.999)
    assert ci.low - 0.02 <= total <= ci.high + 0.02
    # ... but refusals pile up in a few items: far more spread than independent answers give.
    rate = per_item.sum() / (per_item.size * answers)
    assert per_item.var() > 3 * answers * rate * (1 - rate)
    # With clustering off the same profile refuses independently.
    independent = SimulatedModel("skewed?refusal_clustering=0", seed=0)
    counts = np.array([sum(a.value is None or a.value == 50 for a in r.answers()) for r in _run(independent)], float)
    rate = counts.sum() / (counts.size * answers)
    assert counts.var() < 2 * answers * rate * (1 - rate)


def test_skewed_profile_skew_is_planted_at_scale() -> None:
    # The scale is in the items (the heavy tail averages out over many): two samples each
    # keep the answer noise of the item means small beside the tilt's spread.
    model = SimulatedModel("skewed", seed=4)
    records = _run(model, n=2000, samples=2)
    skew = _metrics(records)["skew"]
    assert skew.ci_low <= model.profile.skew <= skew.ci_high
    assert skew.value == pytest.approx(model.profile.skew, abs=0.6)


def test_every_profile_parameter_has_a_checked_range() -> None:
    """A parameter without a range would be a KeyError, not a usage error, when set."""
    from dataclasses import fields

    from pytest_optbench.providers.sim import PARAMETER_RANGES, SimProfile

    assert set(PARAMETER_RANGES) == {f.name for f in fields(SimProfile)}
