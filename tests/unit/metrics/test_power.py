"""Unit tests for pytest_optbench.metrics.power: variance components, power of the t test,
minimum detectable effects, and the items and samples a target effect needs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from pytest_optbench.metrics import power
from pytest_optbench.metrics.confidence import studentized_bootstrap


def test_variance_components_hand_balanced() -> None:
    # Balanced one-way layout: MSW = mean within variance, MSB = k * var(means).
    groups = [np.array([1.0, 3.0]), np.array([4.0, 6.0]), np.array([10.0, 12.0])]
    got = power.variance_components(groups)
    msw = np.mean([g.var(ddof=1) for g in groups])
    msb = 2 * np.var([g.mean() for g in groups], ddof=1)
    assert got.within == pytest.approx(msw)
    assert got.between == pytest.approx((msb - msw) / 2)
    assert (got.items, got.samples) == (3, 2.0)


def test_variance_components_recover_known_values() -> None:
    rng = np.random.default_rng(0)
    item = rng.normal(0, 3.0, 4000)
    sizes = rng.integers(2, 7, 4000)  # unbalanced
    groups = [m + rng.normal(0, 5.0, k) for m, k in zip(item, sizes, strict=True)]
    got = power.variance_components(groups)
    assert got.within == pytest.approx(25.0, rel=0.03)
    assert got.between == pytest.approx(9.0, rel=0.1)


def test_variance_components_edge_cases() -> None:
    assert math.isnan(power.variance_components([]).between)
    one = power.variance_components([[1.0, 2.0, 3.0]])
    assert math.isnan(one.between) and one.within == pytest.approx(1.0)
    singles = power.variance_components([[1.0], [2.0], [4.0]])
    assert math.isnan(singles.within) and math.isnan(singles.between)
    # Identical items: no between-item variance (clipped at 0, never negative).
    same = power.variance_components([[1.0, 2.0], [2.0, 1.0], [1.5, 1.5]])
    assert same.between == 0.0


def test_pair_variance_components_recover_known_values() -> None:
    rng = np.random.default_rng(1)
    n, k = 3000, 5
    tilt = rng.normal(8.0, 4.0, n)  # true item Skew
    q = rng.uniform(30, 70, n)
    plus = [q[i] + tilt[i] / 2 + rng.normal(0, 5.0, k) for i in range(n)]
    minus = [100 - q[i] + tilt[i] / 2 + rng.normal(0, 3.0, k) for i in range(n)]
    got = power.pair_variance_components(plus, minus)
    assert got.within == pytest.approx(25.0 + 9.0, rel=0.03)
    assert got.between == pytest.approx(16.0, rel=0.1)
    assert got.items == n and got.samples == k


@pytest.mark.parametrize(("effect", "sd", "n", "alpha", "sides"),
                         [(0.5, 1.0, 20, 0.05, 2), (1.0, 3.0, 60, 0.025, 1), (2.0, 5.0, 30, 0.05, 1)])
def test_power_of_t_test_matches_simulation(effect: float, sd: float, n: int, alpha: float, sides: int) -> None:
    got = power.power_of_t_test(effect, sd, n, alpha, sides)
    rng = np.random.default_rng(2)
    x = rng.normal(effect, sd, (40_000, n))
    t = x.mean(axis=1) / (x.std(axis=1, ddof=1) / math.sqrt(n))
    critical = sps.t.isf(alpha / sides, n - 1)
    simulated = np.mean(t > critical) + (np.mean(t < -critical) if sides == 2 else 0.0)
    assert got == pytest.approx(simulated, abs=0.01)


def test_power_reduces_to_the_normal_formula_for_many_items() -> None:
    sd, n, effect = 10.0, 10_000, 0.3
    z = effect / (sd / math.sqrt(n)) - sps.norm.isf(0.025)
    assert power.power_of_t_test(effect, sd, n, 0.025, 1) == pytest.approx(sps.norm.cdf(z), abs=1e-3)


@settings(max_examples=30, deadline=None)
@given(st.floats(0.5, 20), st.integers(3, 500), st.sampled_from([(0.05, 2), (0.025, 1), (0.05, 1)]))
def test_mde_has_the_target_power(sd: float, n: int, test: tuple[float, int]) -> None:
    alpha, sides = test
    mde = power.minimum_detectable_effect(sd, n, alpha, 0.8, sides)
    assert power.power_of_t_test(mde, sd, n, alpha, sides) == pytest.approx(0.8, abs=1e-6)
    # Roughly (z_alpha + z_power) se for large n.
    if n > 100:
        z = sps.norm.isf(alpha / sides) + sps.norm.ppf(0.8)
        assert mde == pytest.approx(z * sd / math.sqrt(n), rel=0.02)


@settings(max_examples=30, deadline=None)
@given(st.floats(0.2, 5), st.floats(1, 20))
def test_required_items_is_the_smallest_enough(effect: float, sd: float) -> None:
    n = power.required_items(effect, sd)
    assert n is not None
    assert power.power_of_t_test(effect, sd, n) >= 0.8
    if n > 2:
        assert power.power_of_t_test(effect, sd, n - 1) < 0.8


def test_required_items_edges() -> None:
    assert power.required_items(0.0, 1.0) is None
    assert power.required_items(1.0, 0.0) == 2
    assert power.required_items(1e-4, 10.0, limit=1000) is None


def test_required_samples_and_the_item_floor() -> None:
    comps = power.VarianceComponents(between=9.0, within=100.0, items=60, samples=5)
    # A level test cannot beat the item component: sd >= 3 whatever k.
    assert power.required_samples(0.5, comps, items=60) is None
    k = power.required_samples(2.0, comps, items=60)
    assert k is not None
    assert power.power_of_t_test(2.0, math.sqrt(9 + 100 / k), 60) >= 0.8
    assert k == 1 or power.power_of_t_test(2.0, math.sqrt(9 + 100 / (k - 1)), 60) < 0.8
    # A change on the same items: the item component cancels, more samples always help.
    k_change = power.required_samples(1.0, comps, items=60, change=True)
    assert k_change is not None
    assert power.power_of_t_test(1.0, math.sqrt(2 * 100 / k_change), 60) >= 0.8


def test_design_table_answers_how_many_items_and_samples() -> None:
    comps = power.VarianceComponents(between=16.0, within=50.0, items=60, samples=5)
    rows = power.design_table(2.0, comps, samples=(1, 5, 20), change=True, sides=1, alpha=0.025)
    assert [r.samples for r in rows] == [1, 5, 20]
    items = [r.items for r in rows]
    assert all(i is not None for i in items) and items[0] > items[1] > items[2]
    for row in rows:
        sd = math.sqrt(2 * 50.0 / row.samples)
        assert power.power_of_t_test(2.0, sd, row.items, 0.025, 1) >= 0.8


def test_rate_mde() -> None:
    mde = power.rate_minimum_detectable_effect(0.1, 400, deff=2.0)
    z = sps.norm.isf(0.025) + sps.norm.ppf(0.8)
    assert mde == pytest.approx(z * math.sqrt(0.09 * 2 / 400))
    assert power.rate_minimum_detectable_effect(0.0, 100) > 0
    assert math.isnan(power.rate_minimum_detectable_effect(0.1, 0))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-50, 50, allow_nan=False), min_size=3, max_size=40).filter(lambda v: np.ptp(v) > 1e-3),
       st.floats(-100, 100), st.floats(0.1, 10), st.sampled_from(["max", "min", "max_abs"]), st.integers(0, 2**32 - 1))
def test_a_means_detectable_crossing_moves_with_its_values(values: list[float], shift: float, scale: float,
                                                           side: str, seed: int) -> None:
    """The bootstrap power of a mean's gate (the same resamples): shifting every value leaves
    the crossing alone, scaling them scales it, and it is positive wherever it is defined."""
    x = np.asarray(values)

    def crossing(v: np.ndarray) -> float:
        return power.detectable_crossing(studentized_bootstrap(v, np.random.default_rng(seed), 200), side=side)

    base = crossing(x)
    assert math.isnan(base) or base > 0
    if math.isfinite(base):
        assert crossing(x + shift) == pytest.approx(base, rel=1e-6, abs=1e-9 * (1 + abs(shift)))
        assert crossing(x * scale) == pytest.approx(base * scale, rel=1e-6)
