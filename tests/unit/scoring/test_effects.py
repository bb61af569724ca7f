"""Unit tests for the condition effects of pytest_optbench.aggregate.

condition_effect: per item, the arm's primary answer (P+ for a pair, else the mean over the
item's prompts) minus base's, averaged over the items both arms answered. skew_effect: the
same on per-pair Skew. narrative_susceptibility: narrative_up minus narrative_down.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from pytest_optbench.records.item import Answer, ItemRecord, PromptRecord
from pytest_optbench.scoring.aggregate import EQUIVALENCE_MARGIN, AggregateOptions, aggregate, condition_effects

OPTIONS = AggregateOptions(n_resamples=300)
SUITE = "effects"


def _prompt(role, values) -> PromptRecord:
    if not isinstance(values, (list, tuple)):
        values = [values]
    return PromptRecord(role, role, [Answer(None, None, reason="x") if v is None else Answer(str(v), float(v))
                                     for v in values])


def _pair(item, condition, plus, minus) -> ItemRecord:
    return ItemRecord(SUITE, item, condition, "inverted_pair", "e.yaml", "m",
                      [_prompt("positive", plus), _prompt("negative", minus)], track="B")


def _conj(item, condition, a, b, both) -> ItemRecord:
    return ItemRecord(SUITE, item, condition, "conjunction", "e.yaml", "m",
                      [_prompt("a", a), _prompt("b", b), _prompt("both", both)])


def _by_condition(records):
    out: dict[str, list[ItemRecord]] = {}
    for r in records:
        out.setdefault(r.condition, []).append(r)
    return out


def _effects(records, options=OPTIONS):
    return {(a.condition, a.metric): a for a in condition_effects(SUITE, _by_condition(records), options)}


# Pair answers per condition: item -> (P+, P-). Item "c" is missing under "up", item "d" under
# base, item "e" has no usable P+ under "down" (only a refusal 50, dropped by default).
PAIRS = {
    "base": {"a": (60, 40), "b": (70, 35), "c": (55, 50), "e": (40, 60)},
    "framed": {"a": (66, 38), "b": (71, 30), "c": (50, 45), "d": (90, 10), "e": (46, 55)},
    "narrative_up": {"a": (75, 30), "b": (80, 25), "d": (95, 5), "e": (52, 50)},
    "narrative_down": {"a": (51, 45), "b": (62, 40), "c": (40, 60), "e": (50, 55)},
}


def _pair_records():
    return [_pair(i, c, *v) for c, items in PAIRS.items() for i, v in items.items()]


def _ref_effect(base: dict, arm: dict, value) -> list[float]:
    """Plain-Python paired differences over the items both arms have, sorted by id."""
    diffs = []
    for item in sorted(set(base) & set(arm)):
        x, y = value(arm[item]), value(base[item])
        if x is None or y is None:
            continue
        diffs.append(x - y)
    return diffs


def _plus(v):
    return None if v[0] == 50 else float(v[0])  # a 50 is a refusal unless --keep-fifty


def _skew(v):
    if v[0] == 50 or v[1] == 50:
        return None
    return v[0] - (100 - v[1])


def test_condition_effect_hand() -> None:
    effects = _effects(_pair_records())
    framed = effects[("framed", "condition_effect")]
    # a: 66-60, b: 71-70, c: 50 is a refusal -> left out, d: not in base, e: 46-40
    assert framed.n == 3 and framed.value == pytest.approx((6 + 1 + 6) / 3)
    assert framed.value == pytest.approx(np.mean(_ref_effect(PAIRS["base"], PAIRS["framed"], _plus)))
    skew = effects[("framed", "skew_effect")]
    # skews base a 0, b 5, e 0; framed a 4, b 1, e 1 (c: refusal)
    assert skew.n == 3 and skew.value == pytest.approx((4 - 4 + 1) / 3)


@pytest.mark.parametrize("arm", ["framed", "narrative_up", "narrative_down"])
def test_condition_effects_match_reference(arm: str) -> None:
    effects = _effects(_pair_records())
    for metric, value in (("condition_effect", _plus), ("skew_effect", _skew)):
        d = _ref_effect(PAIRS["base"], PAIRS[arm], value)
        agg = effects[(arm, metric)]
        assert agg.n == len(d)
        assert agg.value == pytest.approx(sum(d) / len(d))
        assert len(d) >= 2 and agg.ci_low <= agg.value <= agg.ci_high


def test_narrative_susceptibility_hand() -> None:
    effects = _effects(_pair_records())
    agg = effects[("narrative_up-narrative_down", "narrative_susceptibility")]
    d = _ref_effect(PAIRS["narrative_down"], PAIRS["narrative_up"], _plus)
    # a 75-51, b 80-62; c missing in up, d missing in down; e: 52-50 is a down refusal
    assert d == [24.0, 18.0]
    assert agg.n == 2 and agg.value == pytest.approx(21.0)


def test_keep_fifty_changes_what_is_paired() -> None:
    effects = _effects(_pair_records(), AggregateOptions(n_resamples=300, keep_fifty=True))
    framed = effects[("framed", "condition_effect")]
    assert framed.n == 4 and framed.value == pytest.approx((6 + 1 - 5 + 6) / 4)


def test_non_pair_items_use_mean_over_prompts() -> None:
    base = [_conj("x", "base", 40, 60, 20), _conj("y", "base", [50, 70], 30, 10), _conj("z", "base", 10, None, 5)]
    arm = [_conj("x", "arm", 46, 60, 29), _conj("y", "arm", 60, 30, 16), _conj("z", "arm", 20, 20, 20)]
    effects = _effects(base + arm)
    agg = effects[("arm", "condition_effect")]
    # x: (46+60+29)/3 - (40+60+20)/3 = 5; y: (60+30+16)/3 - (60+30+10)/3 = 2; z: base has a gap
    assert agg.n == 2 and agg.value == pytest.approx(3.5)
    assert ("arm", "skew_effect") not in effects


def test_missing_items_are_left_out() -> None:
    base = {f"i{k}": (50 + k, 40) for k in range(8)}
    arm = {f"i{k}": (55 + 2 * k, 40) for k in range(3, 12)}
    records = [_pair(i, "base", *v) for i, v in base.items()] + [_pair(i, "arm", *v) for i, v in arm.items()]
    agg = _effects(records)[("arm", "condition_effect")]
    expected = [arm[i][0] - base[i][0] for i in sorted(set(base) & set(arm))]
    assert agg.n == 5 and agg.value == pytest.approx(np.mean(expected))


def test_no_base_no_effects() -> None:
    records = [_pair("a", "x", 60, 40), _pair("a", "y", 70, 40)]
    assert condition_effects(SUITE, _by_condition(records), OPTIONS) == []
    assert condition_effects(SUITE, _by_condition([_pair("a", "base", 60, 40)]), OPTIONS) == []


def test_aggregate_includes_condition_effects() -> None:
    aggs = aggregate(_pair_records(), OPTIONS)
    got = {(a.condition, a.metric) for a in aggs
           if a.metric in ("condition_effect", "skew_effect", "narrative_susceptibility")}
    assert got == set(_effects(_pair_records()))


# --------------------------------------------------------------------------- Hypothesis

answer = st.integers(1, 99).filter(lambda v: v != 50)


@st.composite
def two_arms(draw):
    ids = [f"i{k:02d}" for k in range(draw(st.integers(1, 15)))]
    base_ids = draw(st.lists(st.sampled_from(ids), unique=True, min_size=1)) if ids else []
    arm_ids = draw(st.lists(st.sampled_from(ids), unique=True, min_size=1)) if ids else []
    base = {i: (draw(answer), draw(answer)) for i in base_ids}
    arm = {i: (draw(answer), draw(answer)) for i in arm_ids}
    return base, arm


def _records_for(base, arm, base_name="base", arm_name="arm"):
    return ([_pair(i, base_name, *v) for i, v in base.items()]
            + [_pair(i, arm_name, *v) for i, v in arm.items()])


@given(two_arms())
def test_effects_match_reference_and_are_well_formed(arms) -> None:
    base, arm = arms
    effects = _effects(_records_for(base, arm))
    for metric, value in (("condition_effect", _plus), ("skew_effect", _skew)):
        agg = effects[("arm", metric)]
        d = _ref_effect(base, arm, value)
        assert agg.n == len(d)
        if not d:
            assert math.isnan(agg.value)
            continue
        assert agg.value == pytest.approx(sum(d) / len(d), abs=1e-9)
        assert 0.0 <= agg.p_value <= 1.0
        for key in ("p_wilcoxon", "p_sign"):
            assert 0.0 <= agg.detail[key] <= 1.0, key
        if len(d) >= 2:
            assert 0.0 <= agg.detail["p_equivalence"] <= 1.0
        else:
            assert agg.detail["p_equivalence"] is None
        assert agg.detail["equivalence_margin"] == EQUIVALENCE_MARGIN
        if len(d) >= 2:
            assert agg.ci_low - 1e-9 <= agg.value <= agg.ci_high + 1e-9


@given(two_arms())
def test_swapping_arms_negates_the_effect(arms) -> None:
    base, arm = arms
    forward = _effects(_records_for(base, arm))
    backward = _effects(_records_for(arm, base))  # the old arm is now base
    for metric in ("condition_effect", "skew_effect"):
        f, b = forward[("arm", metric)], backward[("arm", metric)]
        assert f.n == b.n
        if f.n:
            assert b.value == pytest.approx(-f.value, abs=1e-9)
            # two-sided tests do not care about the direction
            assert b.detail["p_sign"] == pytest.approx(f.detail["p_sign"])
            assert b.detail["p_wilcoxon"] == pytest.approx(f.detail["p_wilcoxon"])
            if f.detail["p_equivalence"] is not None:
                assert b.detail["p_equivalence"] == pytest.approx(f.detail["p_equivalence"])


@given(two_arms(), st.integers(-20, 20))
def test_a_constant_shift_is_recovered(arms, shift) -> None:
    base, _ = arms
    base = {i: (p, m) for i, (p, m) in base.items() if p + shift != 50}  # no refusals after the shift
    assume(base)
    arm = {i: (p + shift, m) for i, (p, m) in base.items()}
    agg = _effects(_records_for(base, arm))[("arm", "condition_effect")]
    assert agg.n == len(base) and agg.value == pytest.approx(shift)
    if shift == 0:
        assert agg.p_value == 1.0 and agg.detail["p_sign"] == 1.0 and agg.detail["p_wilcoxon"] == 1.0


def test_detail_keys_and_json() -> None:
    agg = _effects(_pair_records())[("framed", "condition_effect")]
    assert {"p_wilcoxon", "p_sign", "p_equivalence", "equivalence_margin"} <= set(agg.detail)
    as_dict = agg.to_dict()
    assert as_dict["metric"] == "condition_effect" and as_dict["p_sign"] == agg.detail["p_sign"]


def test_large_consistent_effect_is_significant_and_not_equivalent() -> None:
    base = {f"i{k:02d}": (40 + k % 7, 50 + k % 5) for k in range(25)}
    arm = {i: (p + 10 + (k % 3), m) for k, (i, (p, m)) in enumerate(base.items())}
    agg = _effects(_records_for(base, arm))[("arm", "condition_effect")]
    assert agg.value == pytest.approx(11.0, abs=0.1)
    assert agg.p_value < 0.01 and agg.detail["p_sign"] < 0.01 and agg.detail["p_wilcoxon"] < 0.01
    assert agg.detail["p_equivalence"] > 0.5
    assert agg.ci_low > 0


def test_negligible_effect_is_equivalent() -> None:
    base = {f"i{k:02d}": (40 + k % 7, 50) for k in range(40)}
    arm = {i: (p + (1 if k % 2 else -1) * (k % 2), 50 + 1) for k, (i, (p, _)) in enumerate(base.items())}
    agg = _effects(_records_for(base, arm))[("arm", "condition_effect")]
    assert abs(agg.value) < 1
    assert agg.detail["p_equivalence"] < 0.05
