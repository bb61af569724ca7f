"""Unit tests for pytest_optbench.metrics.variance.decompose (Type-II sums of squares).

Independent references: for a balanced additive design the Type-II SS of a factor is the
between-level SS of its marginal means (levels x replicates x squared deviations); for an
unbalanced crossed design, SS(A | B) = RSS(B alone) - RSS(A + B) with the additive fit found by
backfitting (alternating level means), not by least squares on dummy codes.
"""

from __future__ import annotations

import math
from collections import defaultdict

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from pytest_optbench.metrics.variance import decompose


def _between_ss(rows, response, factor):
    """Sum over observations of (its level mean - grand mean)^2, by loops."""
    groups = defaultdict(list)
    for r in rows:
        groups[r[factor]].append(r[response])
    grand = sum(r[response] for r in rows) / len(rows)
    return sum(len(v) * (sum(v) / len(v) - grand) ** 2 for v in groups.values())


def _total_ss(rows, response):
    grand = sum(r[response] for r in rows) / len(rows)
    return sum((r[response] - grand) ** 2 for r in rows)


def _backfit_rss(rows, response, factors, sweeps=2000):
    """RSS of the additive model y = mu + sum of factor effects, by backfitting."""
    y = [r[response] for r in rows]
    mu = sum(y) / len(y)
    effects = {f: defaultdict(float) for f in factors}
    for _ in range(sweeps):
        change = 0.0
        for f in factors:
            sums, counts = defaultdict(float), defaultdict(int)
            for r, v in zip(rows, y, strict=True):
                partial = v - mu - sum(effects[g][r[g]] for g in factors if g != f)
                sums[r[f]] += partial
                counts[r[f]] += 1
            for level in sums:
                new = sums[level] / counts[level]
                change = max(change, abs(new - effects[f][level]))
                effects[f][level] = new
        if change < 1e-13:
            break
    return sum((v - mu - sum(effects[f][r[f]] for f in factors)) ** 2 for r, v in zip(rows, y, strict=True))


def _balanced(a_levels, b_levels, reps, values):
    rows = []
    k = 0
    for i in range(a_levels):
        for j in range(b_levels):
            for _ in range(reps):
                rows.append({"model": f"m{i}", "scenario": f"s{j}", "skew": values[k]})
                k += 1
    return rows


@st.composite
def balanced_designs(draw):
    a, b, reps = draw(st.integers(2, 4)), draw(st.integers(2, 5)), draw(st.integers(1, 3))
    values = draw(st.lists(st.integers(-30, 30).map(float), min_size=a * b * reps, max_size=a * b * reps))
    return _balanced(a, b, reps, values)


def _shares(rows, factors):
    shares, residual = decompose(rows, "skew", factors)
    return {s.factor: s for s in shares}, residual


# --------------------------------------------------------------------------- balanced designs


def test_balanced_hand_design() -> None:
    # 2 models x 3 scenarios x 2 replicates: model effect +-2, scenario effects -3, 0, 3,
    # plus a +-1 within-cell residual.
    rows = []
    for i, model in enumerate(("m0", "m1")):
        for j, scenario in enumerate(("s0", "s1", "s2")):
            for e in (-1.0, 1.0):
                rows.append({"model": model, "scenario": scenario, "skew": (2 if i else -2) + 3 * (j - 1) + e})
    shares, residual = _shares(rows, ["model", "scenario"])
    total = 12 * 4 + 8 * 9 + 12 * 1  # model 4 each, scenario 9 on 8 rows, residual 1 each
    assert shares["model"].sum_of_squares == pytest.approx(48)
    assert shares["scenario"].sum_of_squares == pytest.approx(72)
    assert shares["model"].share == pytest.approx(48 / total)
    assert shares["scenario"].share == pytest.approx(72 / total)
    assert residual == pytest.approx(12 / total)
    assert shares["model"].levels == 2 and shares["scenario"].levels == 3


@given(balanced_designs())
def test_balanced_type2_equals_marginal_between_ss(rows) -> None:
    total = _total_ss(rows, "skew")
    assume(total > 0)
    shares, residual = _shares(rows, ["model", "scenario"])
    for factor in ("model", "scenario"):
        between = _between_ss(rows, "skew", factor)
        assert shares[factor].sum_of_squares == pytest.approx(between, rel=1e-9, abs=1e-9 * total)
        # orthogonal factors: the share alone is the share in the model
        assert shares[factor].marginal_share == pytest.approx(shares[factor].share, rel=1e-9, abs=1e-9)
    assert sum(s.share for s in shares.values()) + residual == pytest.approx(1.0, abs=1e-9)
    assert 0.0 <= residual <= 1.0 + 1e-12


@given(balanced_designs())
def test_factor_order_does_not_matter(rows) -> None:
    assume(_total_ss(rows, "skew") > 0)
    one, r1 = _shares(rows, ["model", "scenario"])
    two, r2 = _shares(rows, ["scenario", "model"])
    assert r1 == pytest.approx(r2)
    for f in one:
        assert one[f].sum_of_squares == pytest.approx(two[f].sum_of_squares, rel=1e-9, abs=1e-9)


# --------------------------------------------------------------------------- unbalanced designs


@st.composite
def unbalanced_designs(draw):
    a, b = draw(st.integers(2, 3)), draw(st.integers(2, 4))
    rows = []
    for i in range(a):
        for j in range(b):
            for _ in range(draw(st.integers(1, 3))):  # every cell filled: a connected design
                rows.append({"model": f"m{i}", "scenario": f"s{j}", "skew": float(draw(st.integers(-20, 20)))})
    return rows


@given(unbalanced_designs())
def test_unbalanced_type2_matches_backfitting(rows) -> None:
    total = _total_ss(rows, "skew")
    assume(total > 0)
    shares, residual = _shares(rows, ["model", "scenario"])
    full = _backfit_rss(rows, "skew", ["model", "scenario"])
    for factor, other in (("model", "scenario"), ("scenario", "model")):
        rss_other = total - _between_ss(rows, "skew", other)
        want = max(rss_other - full, 0.0)
        assert shares[factor].sum_of_squares == pytest.approx(want, rel=1e-6, abs=1e-6 * total)
        assert shares[factor].marginal_share == pytest.approx(_between_ss(rows, "skew", factor) / total, abs=1e-9)
    assert residual == pytest.approx(full / total, abs=1e-6)


def test_unbalanced_shares_need_not_add_up() -> None:
    # Correlated factors: Type-II SS leave out what the two share, so shares + residual < 1.
    rows = [
        {"model": "m0", "scenario": "s0", "skew": 0.0}, {"model": "m0", "scenario": "s0", "skew": 1.0},
        {"model": "m0", "scenario": "s0", "skew": 0.5}, {"model": "m0", "scenario": "s1", "skew": 4.0},
        {"model": "m1", "scenario": "s0", "skew": 5.0}, {"model": "m1", "scenario": "s1", "skew": 9.0},
        {"model": "m1", "scenario": "s1", "skew": 10.0}, {"model": "m1", "scenario": "s1", "skew": 8.0},
    ]
    shares, residual = _shares(rows, ["model", "scenario"])
    assert sum(s.share for s in shares.values()) + residual < 1.0 - 1e-3


# --------------------------------------------------------------------------- nesting


def _nested_rows(values_by_scenario, models=("m0", "m1", "m2")):
    """Scenario s{j} belongs to domain d{j // 2}; every model answers every scenario."""
    rows = []
    for j, base in enumerate(values_by_scenario):
        for i, model in enumerate(models):
            rows.append({"model": model, "scenario": f"s{j}", "domain": f"d{j // 2}", "skew": base + 1.5 * i})
    return rows


def test_nested_domain_gets_no_type2_ss_but_a_marginal_share() -> None:
    rows = _nested_rows([10.0, 12.0, -5.0, -7.0, 3.0, 1.0])
    shares, residual = _shares(rows, ["model", "scenario", "domain"])
    total = _total_ss(rows, "skew")
    assert shares["domain"].sum_of_squares == pytest.approx(0.0, abs=1e-9 * total)
    assert shares["domain"].marginal_share == pytest.approx(_between_ss(rows, "skew", "domain") / total)
    assert shares["domain"].marginal_share > 0.5
    # scenario's Type-II SS is what it explains beyond its domain (balanced: between - domain)
    want = _between_ss(rows, "skew", "scenario") - _between_ss(rows, "skew", "domain")
    assert shares["scenario"].sum_of_squares == pytest.approx(want)
    assert shares["model"].sum_of_squares == pytest.approx(_between_ss(rows, "skew", "model"))
    assert residual == pytest.approx(0.0, abs=1e-12)  # exactly additive data
    assert shares["domain"].levels == 3 and shares["scenario"].levels == 6


@given(st.lists(st.integers(-20, 20).map(float), min_size=4, max_size=10).filter(lambda v: len(v) % 2 == 0),
       st.lists(st.integers(-5, 5).map(float), min_size=30, max_size=30))
def test_nested_domain_property(values, noise) -> None:
    rows = _nested_rows(values)
    for r, e in zip(rows, noise, strict=False):  # noise: more than enough values
        r["skew"] += e
    total = _total_ss(rows, "skew")
    assume(total > 0)
    shares, _ = _shares(rows, ["model", "scenario", "domain"])
    assert shares["domain"].sum_of_squares == pytest.approx(0.0, abs=1e-9 * total)
    assert shares["domain"].marginal_share == pytest.approx(_between_ss(rows, "skew", "domain") / total, abs=1e-9)
    assume(_between_ss(rows, "skew", "domain") > 1e-6 * total)
    assert shares["domain"].marginal_share > 0


# --------------------------------------------------------------------------- edges


def test_too_few_observations() -> None:
    with pytest.raises(ValueError):
        decompose([{"skew": 1.0, "model": "m"}], "skew", ["model"])


def test_constant_response_gives_nan_shares() -> None:
    rows = [{"model": m, "scenario": s, "skew": 3.0} for m in ("a", "b") for s in ("x", "y")]
    shares, residual = decompose(rows, "skew", ["model", "scenario"])
    for share in shares:
        assert math.isnan(share.share) and math.isnan(share.marginal_share)
        assert share.sum_of_squares == pytest.approx(0.0)
    assert math.isnan(residual)


SINGLE_FACTOR_BUG = (
    "BUG: decompose() with one factor crashes (ValueError: need at least one array to concatenate): "
    "the reduced model has no factors and _design([]) returns np.hstack([]) because the intercept "
    "column is only added 'if columns' (pytest_optbench/metrics/variance.py:29-34). Pass n to "
    "_design and always start with np.ones((n, 1))."
)


def test_single_factor_is_one_way_anova() -> None:
    rows = [{"model": m, "skew": v} for m, v in [("a", 1.0), ("a", 3.0), ("b", 6.0), ("b", 8.0), ("c", 0.0)]]
    (share,), residual = decompose(rows, "skew", ["model"])
    total = _total_ss(rows, "skew")
    between = _between_ss(rows, "skew", "model")
    assert share.sum_of_squares == pytest.approx(between)
    assert share.share == pytest.approx(between / total) == pytest.approx(share.marginal_share)
    assert residual == pytest.approx(1 - between / total)


def test_numeric_levels_are_categories() -> None:
    rows = [{"model": m, "scenario": s, "skew": v}
            for (m, v), s in zip([(1, 1.0), (1, 3.0), (2, 6.0), (10, 8.0), (10, 7.0), (2, 4.0)], "xyxyxy", strict=True)]
    shares, _ = _shares(rows, ["model", "scenario"])
    assert shares["model"].levels == 3  # 1, 2 and 10 are three levels, not one numeric column
    # balanced (each model once per scenario): Type-II SS is the between-level SS
    assert shares["model"].sum_of_squares == pytest.approx(_between_ss(rows, "skew", "model"))


def test_constant_response_single_factor() -> None:
    rows = [{"model": m, "skew": 3.0} for m in ("a", "b", "a", "b")]
    (share,), residual = decompose(rows, "skew", ["model"])
    assert math.isnan(share.share) and math.isnan(residual)
