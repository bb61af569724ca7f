"""Unit tests for pytest_optbench.metrics.calibration.

Every metric is checked against a plain-Python reference written here from the definitions
(spec section 2; calibration paper sections 3.4, 4.3, 4.4): explicit loops over items, the
Murphy terms in deviation form (the module uses raw moments), AUC by comparing every
yes/no pair (the module uses tie groups and cumulative sums), bins by the decimal value of p.
"""

from __future__ import annotations

import itertools
import math
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy import stats as sps

from pytest_optbench.metrics import calibration as cal

# --------------------------------------------------------------------------- reference


def _w(w, n):
    return [1.0] * n if w is None else [float(x) for x in w]


def ref_bin(p: float) -> int:
    """Equal-width bins [0, 0.1), ..., [0.9, 1.0] on the decimal value p stands for."""
    return min(int((Decimal(repr(float(p))) * 10).to_integral_value(rounding="ROUND_FLOOR")), 9)


def ref_mean(values, w=None):
    w = _w(w, len(values))
    total = sum(w)
    return sum(wi * v for wi, v in zip(w, values, strict=True)) / total if total else math.nan


def ref_brier(p, y, w=None):
    return ref_mean([(pi - yi) ** 2 for pi, yi in zip(p, y, strict=True)], w)


def ref_log_loss(p, y, w=None):
    losses = []
    for pi, yi in zip(p, y, strict=True):
        q = min(max(pi, 0.001), 0.999)
        losses.append(-math.log(q) if yi == 1 else -math.log(1 - q))
    return ref_mean(losses, w)


def ref_accuracy(p, y, w=None):
    return ref_mean([1.0 if (pi >= 0.5) == (yi == 1) else 0.0 for pi, yi in zip(p, y, strict=True)], w)


def ref_overconfidence(p, y, w=None):
    confidence = [pi if pi >= 0.5 else 1 - pi for pi in p]
    return ref_mean(confidence, w) - ref_accuracy(p, y, w)


def _ref_bins(p, y, w):
    """bin -> list of (weight, p, y)."""
    bins: dict[int, list[tuple[float, float, float]]] = {}
    for wi, pi, yi in zip(_w(w, len(p)), p, y, strict=True):
        bins.setdefault(ref_bin(pi), []).append((wi, pi, yi))
    return bins


def ref_ece(p, y, w=None):
    total = sum(_w(w, len(p)))
    out = 0.0
    for members in _ref_bins(p, y, w).values():
        n_k = sum(m[0] for m in members)
        if n_k == 0:
            continue
        mean_p = sum(m[0] * m[1] for m in members) / n_k
        rate = sum(m[0] * m[2] for m in members) / n_k
        out += n_k / total * abs(mean_p - rate)
    return out


def ref_murphy(p, y, w=None):
    """Stephenson, Coelho & Jolliffe (2008), in deviation form."""
    weights = _w(w, len(p))
    total = sum(weights)
    base = sum(wi * yi for wi, yi in zip(weights, y, strict=True)) / total
    rel = res = wbv = wbc = 0.0
    for members in _ref_bins(p, y, w).values():
        n_k = sum(m[0] for m in members)
        if n_k == 0:
            continue
        mean_p = sum(m[0] * m[1] for m in members) / n_k
        rate = sum(m[0] * m[2] for m in members) / n_k
        rel += n_k * (mean_p - rate) ** 2
        res += n_k * (rate - base) ** 2
        for wi, pi, yi in members:
            wbv += wi * (pi - mean_p) ** 2
            wbc += wi * (pi - mean_p) * (yi - rate)
    return {
        "reliability": rel / total, "resolution": res / total, "uncertainty": base * (1 - base),
        "within_bin_variance": wbv / total, "within_bin_covariance": 2 * wbc / total,
    }


def ref_auc(p, y, w=None):
    weights = _w(w, len(p))
    num = pos = neg = 0.0
    for wi, pi, yi in zip(weights, p, y, strict=True):
        if yi == 1:
            pos += wi
        else:
            neg += wi
    for wi, pi, yi in zip(weights, p, y, strict=True):
        if yi != 1:
            continue
        for wj, pj, yj in zip(weights, p, y, strict=True):
            if yj == 1:
                continue
            num += wi * wj * (1.0 if pi > pj else 0.5 if pi == pj else 0.0)
    return num / (pos * neg) if pos * neg else math.nan


def ref_shrinkage_parts(p, y, w=None):
    """(numerator, denominator, b) of the least-squares slope with b fixed at the base rate."""
    weights = _w(w, len(p))
    b = sum(wi * yi for wi, yi in zip(weights, y, strict=True)) / sum(weights)
    num = sum(wi * (pi - b) * (yi - b) for wi, pi, yi in zip(weights, p, y, strict=True))
    den = sum(wi * (pi - b) ** 2 for wi, pi in zip(weights, p, strict=True))
    return num, den, b


def ref_shrinkage_fit(p, y, w=None):
    num, den, b = ref_shrinkage_parts(p, y, w)
    return (num / den if den else math.nan), b


def ref_shrink(pi, a, b):
    return min(max(b + a * (pi - b), 0.0), 1.0)


def ref_loo(p, y):
    out = []
    for i in range(len(p)):
        others_p = [v for j, v in enumerate(p) if j != i]
        others_y = [v for j, v in enumerate(y) if j != i]
        a, b = ref_shrinkage_fit(others_p, others_y)
        out.append(ref_shrink(p[i], a, b) if not math.isnan(a) else math.nan)
    return out


def ref_climatology(y, base_rate=None, w=None):
    if base_rate is None:
        rate = ref_mean(list(y), w)
        return rate * (1 - rate)
    return ref_mean([(base_rate - yi) ** 2 for yi in y], w)


def ref_brier_skill(p, y, w=None, base_rate=None):
    clim, score = ref_climatology(y, base_rate, w), ref_brier(p, y, w)
    if clim == 0:  # one outcome only: climatology is perfect and skill is undefined
        return math.nan
    return 1 - score / clim


# --------------------------------------------------------------------------- data

# Hand data: 12 items, several bins, one tie across the classes, clipped extremes.
HAND_P = np.array([0.0, 0.05, 0.15, 0.3, 0.3, 0.45, 0.5, 0.62, 0.7, 0.85, 0.95, 1.0])
HAND_Y = np.array([0, 0, 1, 0, 1, 0, 1, 1, 0, 1, 1, 1], dtype=float)
HAND_W = np.array([1, 2, 0, 3, 1, 1, 2, 1, 1, 0, 4, 1], dtype=float)

# Realistic probabilities: the mean of integer answers over up to 10 samples, / 100 (so bin
# edges such as 0.7 are hit exactly, as in real runs).
grid_p = st.integers(0, 1000).map(lambda k: k / 1000)


def _clear_of_edges(x: float) -> bool:
    # The module nudges p by 1e-9 so that 0.7 lands in bin 7; floats that close below an edge
    # are ambiguous by design and never come from answers.
    return abs(x * 10 - round(x * 10)) > 1e-6 or x * 10 == round(x * 10)


any_p = st.floats(0, 1, allow_nan=False).filter(_clear_of_edges)
probabilities = st.one_of(grid_p, any_p)


@st.composite
def binary_sets(draw, min_size=1, max_size=40, p=probabilities, both_classes=False):
    n = draw(st.integers(max(min_size, 2 if both_classes else 1), max_size))
    ps = np.array(draw(st.lists(p, min_size=n, max_size=n)), dtype=float)
    ys = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=float)
    if both_classes:
        i, j = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
        ys[i], ys[j] = 1.0, 0.0
    return ps, ys


@st.composite
def weighted_sets(draw, both_classes=False):
    ps, ys = draw(binary_sets(both_classes=both_classes, max_size=25))
    ws = np.array(draw(st.lists(st.integers(0, 4), min_size=ps.size, max_size=ps.size)), dtype=float)
    if both_classes:
        # keep at least one yes and one no with positive weight
        ws[np.flatnonzero(ys == 1)[0]] += 1
        ws[np.flatnonzero(ys == 0)[0]] += 1
    elif ws.sum() == 0:
        ws[0] = 1
    return ps, ys, ws


SIMPLE = {
    "brier": (cal.brier, ref_brier),
    "log_loss": (cal.log_loss, ref_log_loss),
    "accuracy": (cal.accuracy, ref_accuracy),
    "overconfidence": (cal.overconfidence, ref_overconfidence),
    "ece": (cal.ece, ref_ece),
    "auc": (cal.auc, ref_auc),
    "brier_skill": (cal.brier_skill, ref_brier_skill),
}


def _close(got, want, tol=1e-10):
    if isinstance(want, float) and math.isnan(want):
        return bool(np.isnan(got))
    if isinstance(want, float) and math.isinf(want):
        return float(got) == want
    return abs(float(got) - want) <= tol * max(1.0, abs(want))


# --------------------------------------------------------------------------- hand data


def test_bin_edges() -> None:
    p = np.array([0.0, 0.0999, 0.1, 0.3, 0.6, 0.7, 0.7 - 1e-6, 0.9, 0.95, 1.0])
    assert cal.bin_index(p).tolist() == [0, 0, 1, 3, 6, 7, 6, 9, 9, 9]
    assert cal.bin_index(p).tolist() == [ref_bin(x) for x in p]
    # 70/100 and the mean of (69, 71)/100 both mean 0.7
    assert cal.bin_index(np.array([70 / 100, np.mean([69, 71]) / 100])).tolist() == [7, 7]


@pytest.mark.parametrize("name", sorted(SIMPLE))
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_simple_metrics_on_hand_data(name: str, weighted: bool) -> None:
    func, ref = SIMPLE[name]
    w = HAND_W if weighted else None
    assert _close(func(HAND_P, HAND_Y, w), ref(list(HAND_P), list(HAND_Y), None if w is None else list(w)))


def test_hand_values_worked_out() -> None:
    p = np.array([0.9, 0.8, 0.3, 0.3, 0.6])
    y = np.array([1, 0, 0, 1, 1], dtype=float)
    assert cal.brier(p, y) == pytest.approx((0.01 + 0.64 + 0.09 + 0.49 + 0.16) / 5)
    assert cal.accuracy(p, y) == pytest.approx(3 / 5)  # 0.9 yes, 0.8 wrong, 0.3 no, 0.3 wrong, 0.6 yes
    # confidence 0.9, 0.8, 0.7, 0.7, 0.6 -> mean 0.74
    assert cal.overconfidence(p, y) == pytest.approx(0.74 - 0.6)
    # yes-items 0.9, 0.3, 0.6 vs no-items 0.8, 0.3: 0.9 > both (2), 0.3 ties 0.3 (0.5),
    # 0.6 > 0.3 (1) -> 3.5 / 6
    assert cal.auc(p, y) == pytest.approx(3.5 / 6)
    # bins: 9 {0.9:1}, 8 {0.8:0}, 3 {0.3:0, 0.3:1}, 6 {0.6:1}
    assert cal.ece(p, y) == pytest.approx((0.1 + 0.8 + 2 * 0.2 + 0.4) / 5)
    assert cal.climatology_brier(y) == pytest.approx(0.6 * 0.4)
    assert cal.climatology_brier(y, 0.5) == pytest.approx(0.25)


def test_log_loss_clips() -> None:
    p = np.array([0.0, 1.0, 0.0, 1.0])
    y = np.array([1.0, 0.0, 0.0, 1.0])
    expected = (2 * -math.log(0.001) + 2 * -math.log(0.999)) / 4
    assert cal.log_loss(p, y) == pytest.approx(expected)
    assert np.isfinite(cal.log_loss(p, y))


def test_murphy_on_hand_data() -> None:
    for w in (None, HAND_W):
        got = cal.murphy(HAND_P, HAND_Y, w)
        want = ref_murphy(list(HAND_P), list(HAND_Y), None if w is None else list(w))
        assert set(got) == set(want)
        for key in want:
            assert _close(got[key], want[key]), key


def test_shrinkage_fit_on_hand_data() -> None:
    for w in (None, HAND_W):
        a, b = cal.shrinkage_fit(HAND_P, HAND_Y, w)
        ra, rb = ref_shrinkage_fit(list(HAND_P), list(HAND_Y), None if w is None else list(w))
        assert _close(a, ra) and _close(b, rb)


def test_shrinkage_recovers_a_planted_slope() -> None:
    # Outcomes as fractions make y = b + a (p - b) exact with b = mean(y): LS gives that a back.
    p = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
    b_true, a_true = 0.5, 0.4
    y = b_true + a_true * (p - b_true)  # mean is b_true
    a, b = cal.shrinkage_fit(p, y)
    assert a == pytest.approx(a_true) and b == pytest.approx(b_true)


def test_loo_on_hand_data() -> None:
    got = cal.loo_recalibrated(HAND_P, HAND_Y)
    np.testing.assert_allclose(got, ref_loo(list(HAND_P), list(HAND_Y)), rtol=0, atol=1e-12)


def test_loo_needs_three_items() -> None:
    assert np.isnan(cal.loo_recalibrated(np.array([0.2, 0.8]), np.array([0.0, 1.0]))).all()


def test_climatology_and_skill_on_hand_data() -> None:
    for w in (None, HAND_W):
        lw = None if w is None else list(w)
        assert _close(cal.climatology_brier(HAND_Y, None, w), ref_climatology(list(HAND_Y), None, lw))
        assert _close(cal.climatology_brier(HAND_Y, 0.3, w), ref_climatology(list(HAND_Y), 0.3, lw))
        assert _close(cal.brier_skill(HAND_P, HAND_Y, w, 0.3), ref_brier_skill(list(HAND_P), list(HAND_Y), lw, 0.3))


def test_auc_single_class_is_nan() -> None:
    assert np.isnan(cal.auc(np.array([0.2, 0.7]), np.array([1.0, 1.0])))


def test_climatology_forecast_has_zero_skill() -> None:
    y = HAND_Y
    p = np.full(y.size, y.mean())
    assert cal.brier_skill(p, y) == pytest.approx(0.0, abs=1e-12)
    assert cal.brier_skill(np.full(y.size, 0.3), y, base_rate=0.3) == pytest.approx(0.0, abs=1e-12)


# --------------------------------------------------------------------------- Hypothesis vs reference


@given(binary_sets())
def test_simple_metrics_match_reference(data) -> None:
    p, y = data
    for name, (func, ref) in SIMPLE.items():
        assert _close(func(p, y), ref(list(p), list(y))), name


@given(weighted_sets())
def test_weighted_metrics_match_reference(data) -> None:
    p, y, w = data
    for name, (func, ref) in SIMPLE.items():
        assert _close(func(p, y, w), ref(list(p), list(y), list(w))), name


@given(binary_sets(), st.one_of(st.none(), st.just("w")), st.data())
def test_murphy_matches_reference(data, weighted, draw) -> None:
    p, y = data
    w = None
    if weighted:
        w = np.array(draw.draw(st.lists(st.integers(1, 4), min_size=p.size, max_size=p.size)), dtype=float)
    got = cal.murphy(p, y, w)
    want = ref_murphy(list(p), list(y), None if w is None else list(w))
    for key in want:
        assert _close(got[key], want[key], 1e-9), key


@given(binary_sets(min_size=2), st.floats(0.01, 0.99))
def test_climatology_and_skill_match_reference(data, base_rate) -> None:
    p, y = data
    assert _close(cal.climatology_brier(y), ref_climatology(list(y)))
    assert _close(cal.climatology_brier(y, base_rate), ref_climatology(list(y), base_rate))
    assert _close(cal.brier_skill(p, y, base_rate=base_rate), ref_brier_skill(list(p), list(y), None, base_rate))


@given(binary_sets(min_size=2))
def test_shrinkage_fit_matches_reference(data) -> None:
    p, y = data
    num, den, rb = ref_shrinkage_parts(list(p), list(y))
    assume(den > 1e-6)  # a is undefined when every p sits at the base rate
    a, b = cal.shrinkage_fit(p, y)
    assert b == pytest.approx(rb, abs=1e-12)
    assert a == pytest.approx(num / den, rel=1e-7, abs=1e-9)


@given(binary_sets(min_size=3, max_size=25))
def test_loo_matches_brute_force(data) -> None:
    p, y = data
    got = cal.loo_recalibrated(p, y)
    for i in range(p.size):
        others = [j for j in range(p.size) if j != i]
        num, den, b = ref_shrinkage_parts([p[j] for j in others], [y[j] for j in others])
        if den < 1e-6:
            continue  # slope undefined on the other items
        want = ref_shrink(p[i], num / den, b)
        assert got[i] == pytest.approx(want, abs=1e-7), i


@given(binary_sets(min_size=3, max_size=25))
def test_loo_equals_module_fit_on_the_others(data) -> None:
    # The same check phrased with the module's own fit and shrink (the O(n) shortcut must
    # agree with n separate fits).
    p, y = data
    got = cal.loo_recalibrated(p, y)
    for i in range(p.size):
        mask = np.arange(p.size) != i
        _, den, _ = ref_shrinkage_parts(list(p[mask]), list(y[mask]))
        if den < 1e-6:
            continue
        a, b = cal.shrinkage_fit(p[mask], y[mask])
        assert got[i] == pytest.approx(float(cal.shrink(p[i], a, b)), abs=1e-9)


# --------------------------------------------------------------------------- properties


@given(binary_sets())
def test_murphy_identity(data) -> None:
    p, y = data
    m = cal.murphy(p, y)
    total = (m["reliability"] - m["resolution"] + m["uncertainty"]
             + m["within_bin_variance"] - m["within_bin_covariance"])
    assert abs(cal.brier(p, y) - total) <= 1e-12


@given(weighted_sets())
def test_murphy_identity_weighted(data) -> None:
    p, y, w = data
    m = cal.murphy(p, y, w)
    total = (m["reliability"] - m["resolution"] + m["uncertainty"]
             + m["within_bin_variance"] - m["within_bin_covariance"])
    assert abs(cal.brier(p, y, w) - total) <= 1e-12


@given(binary_sets(both_classes=True, p=grid_p))
def test_auc_invariant_under_cubing(data) -> None:
    p, y = data
    assert cal.auc(p ** 3, y) == pytest.approx(cal.auc(p, y), abs=1e-12)


@given(binary_sets(both_classes=True))
def test_auc_invariant_under_rank_map(data) -> None:
    # A strictly increasing map that keeps ties: each value -> (its rank among the distinct
    # values) / count, squashed toward 1.
    p, y = data
    _, inverse = np.unique(p, return_inverse=True)
    mapped = 1 - 0.5 ** (inverse + 1.0)
    assert cal.auc(mapped, y) == pytest.approx(cal.auc(p, y), abs=1e-12)
    assert cal.auc(1 - p, 1 - y) == pytest.approx(cal.auc(p, y), abs=1e-12)


@given(binary_sets(both_classes=True))
def test_auc_equals_mann_whitney(data) -> None:
    p, y = data
    n1, n0 = int((y == 1).sum()), int((y == 0).sum())
    u = sps.mannwhitneyu(p[y == 1], p[y == 0]).statistic
    assert cal.auc(p, y) == pytest.approx(u / (n1 * n0), abs=1e-12)


@given(st.lists(probabilities, min_size=1, max_size=30), st.floats(0, 1))
def test_shrink_with_slope_one_is_identity(ps, b) -> None:
    p = np.array(ps)
    np.testing.assert_allclose(cal.shrink(p, 1.0, b), p, rtol=0, atol=1e-15)


@given(st.lists(probabilities, min_size=1, max_size=30), st.floats(0, 1))
def test_shrink_with_slope_zero_is_the_base_rate(ps, b) -> None:
    np.testing.assert_allclose(cal.shrink(np.array(ps), 0.0, b), b, rtol=0, atol=0)


@given(st.lists(st.integers(0, 5), min_size=10, max_size=10), st.data())
def test_perfectly_calibrated_set(multipliers, data) -> None:
    # Per bin: 20*m items at the bin centre with exactly that share of yes -> no reliability
    # loss, no ECE, no overconfidence, and Brier = UNC - RES + WBV - WBC with WBV = WBC = 0.
    assume(sum(multipliers) > 0)
    p_list, y_list = [], []
    for k, m in enumerate(multipliers):
        centre = (2 * k + 1) / 20
        count = 20 * m
        yes = round(centre * count)
        p_list += [centre] * count
        y_list += [1.0] * yes + [0.0] * (count - yes)
    # A seeded shuffle: st.permutations draws one choice per element (up to 1,000 here).
    order = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))).permutation(len(p_list))
    p, y = np.array(p_list)[order], np.array(y_list)[order]
    m = cal.murphy(p, y)
    assert m["reliability"] <= 1e-20
    assert cal.ece(p, y) <= 1e-12
    assert abs(cal.overconfidence(p, y)) <= 1e-12
    assert abs(m["within_bin_variance"]) <= 1e-12 and abs(m["within_bin_covariance"]) <= 1e-12


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(1, 6)), min_size=1, max_size=10, unique_by=lambda t: t[0]),
       st.data())
def test_calibrated_with_spread_within_bins(bins, data) -> None:
    # p varies inside each bin, but each bin's event rate equals its mean p: reliability 0.
    p_list, y_list = [], []
    for k, half in bins:
        lo = k / 10
        values = [lo + 0.01 + 0.08 * j / (2 * half) for j in range(2 * half)]
        mean_p = sum(values) / len(values)
        # 100 items per value; yes share = mean_p on the whole bin
        n_bin = 100 * len(values)
        yes = mean_p * n_bin
        assume(abs(yes - round(yes)) < 1e-9)
        yes = round(yes)
        ps = [v for v in values for _ in range(100)]
        p_list += ps
        y_list += [1.0] * yes + [0.0] * (n_bin - yes)
    p, y = np.array(p_list), np.array(y_list)
    assert cal.murphy(p, y)["reliability"] <= 1e-20
    assert cal.ece(p, y) <= 1e-12


@given(binary_sets())
def test_rates_are_in_unit_interval(data) -> None:
    p, y = data
    for value in (cal.ece(p, y), cal.accuracy(p, y), cal.brier(p, y), cal.climatology_brier(y)):
        assert 0.0 <= value <= 1.0
    m = cal.murphy(p, y)
    for key in ("reliability", "resolution", "uncertainty"):
        assert -1e-15 <= m[key] <= 1.0
    assert m["uncertainty"] <= 0.25
    assert m["within_bin_variance"] >= -1e-12
    # confidence is in [0.5, 1] and accuracy in [0, 1]
    assert -0.5 - 1e-15 <= cal.overconfidence(p, y) <= 1.0
    if 0 < y.sum() < y.size:
        assert 0.0 <= cal.auc(p, y) <= 1.0


@given(st.lists(st.integers(0, 1), min_size=1, max_size=30))
def test_perfect_forecaster(outcomes) -> None:
    y = np.array(outcomes, dtype=float)
    p = y.copy()
    assert cal.overconfidence(p, y) == 0.0
    assert cal.brier(p, y) == 0.0
    assert cal.accuracy(p, y) == 1.0
    assert cal.ece(p, y) == 0.0
    if 0 < y.sum() < y.size:
        assert cal.auc(p, y) == 1.0


# --------------------------------------------------------------------------- weights


def _repeated(p, y, w):
    counts = w.astype(int)
    return np.repeat(p, counts), np.repeat(y, counts)


@given(weighted_sets(both_classes=True))
def test_integer_weights_equal_repetition(data) -> None:
    p, y, w = data
    rp, ry = _repeated(p, y, w)
    for name in ("brier", "auc", "ece", "log_loss", "accuracy", "overconfidence", "brier_skill"):
        func = SIMPLE[name][0]
        assert func(p, y, w) == pytest.approx(func(rp, ry), abs=1e-12, nan_ok=True), name
    got, want = cal.murphy(p, y, w), cal.murphy(rp, ry)
    for key in want:
        assert got[key] == pytest.approx(want[key], abs=1e-12), key
    assert cal.climatology_brier(y, None, w) == pytest.approx(cal.climatology_brier(ry), abs=1e-12)
    assert cal.climatology_brier(y, 0.4, w) == pytest.approx(cal.climatology_brier(ry, 0.4), abs=1e-12)
    _, den, _ = ref_shrinkage_parts(list(rp), list(ry))
    if den > 1e-6:
        a, b = cal.shrinkage_fit(p, y, w)
        ra, rb = cal.shrinkage_fit(rp, ry)
        assert a == pytest.approx(ra, rel=1e-7, abs=1e-9) and b == pytest.approx(rb, abs=1e-12)


@given(binary_sets(both_classes=True, max_size=20), st.integers(1, 5), st.data())
def test_weight_matrix_rows_match_single_rows(data, rows, draw) -> None:
    p, y = data
    w = np.array(draw.draw(st.lists(
        st.lists(st.integers(0, 4), min_size=p.size, max_size=p.size), min_size=rows, max_size=rows)), dtype=float)
    w[:, np.flatnonzero(y == 1)[0]] += 1  # every row keeps both classes
    w[:, np.flatnonzero(y == 0)[0]] += 1
    batched = {name: SIMPLE[name][0](p, y, w) for name in SIMPLE}
    batched_murphy = cal.murphy(p, y, w)
    batched_a, batched_b = cal.shrinkage_fit(p, y, w)
    batched_clim = cal.climatology_brier(y, None, w)
    batched_oos = cal.brier_skill(p, y, w, 0.25)
    for name, values in batched.items():
        assert np.shape(values) == (rows,), name
    for r in range(rows):
        for name, values in batched.items():
            assert values[r] == pytest.approx(SIMPLE[name][0](p, y, w[r]), abs=1e-12, nan_ok=True), name
        single = cal.murphy(p, y, w[r])
        for key in single:
            assert batched_murphy[key][r] == pytest.approx(single[key], abs=1e-12), key
        a, b = cal.shrinkage_fit(p, y, w[r])
        assert batched_a[r] == pytest.approx(a, nan_ok=True) and batched_b[r] == pytest.approx(b)
        assert batched_clim[r] == pytest.approx(cal.climatology_brier(y, None, w[r]))
        assert batched_oos[r] == pytest.approx(cal.brier_skill(p, y, w[r], 0.25), nan_ok=True)


def test_unit_weights_equal_no_weights() -> None:
    ones = np.ones(HAND_P.size)
    for name, (func, _) in SIMPLE.items():
        assert func(HAND_P, HAND_Y, ones) == pytest.approx(func(HAND_P, HAND_Y)), name
    m1, m0 = cal.murphy(HAND_P, HAND_Y, ones), cal.murphy(HAND_P, HAND_Y)
    assert all(m1[k] == pytest.approx(m0[k]) for k in m0)


def test_debiased_ece_with_resample_weights_is_the_ece_of_the_resampled_items() -> None:
    """Weights are item counts of a resample: brute force by repeating the items."""
    rng = np.random.default_rng(8)
    p = rng.uniform(0.02, 0.98, 50)
    y = (rng.uniform(size=50) < p).astype(float)
    counts = rng.multinomial(50, np.full(50, 1 / 50), size=4).astype(float)
    got = cal.ece_debiased(p, y, counts)
    for row, value in zip(counts, np.atleast_1d(got), strict=True):
        repeated = np.repeat(np.arange(50), row.astype(int))
        assert value == pytest.approx(cal.ece_debiased(p[repeated], y[repeated]), abs=1e-12)
    assert cal.ece_debiased(p, y, counts[0]) == pytest.approx(float(np.atleast_1d(got)[0]), abs=1e-12)


# --------------------------------------------------------------------------- the bootstrap's shared pass


def _same(got, want) -> bool:
    """Equal to the last bit (NaN where NaN), whether scalars or one value per row."""
    return np.array_equal(np.asarray(got, dtype=float), np.asarray(want, dtype=float), equal_nan=True)


@given(weighted_sets(), st.integers(0, 2**16), st.sampled_from(["none", "1-d", "rows"]),
       st.one_of(st.none(), st.floats(0.05, 0.95)))
def test_whole_sample_metrics_are_the_functions_one_at_a_time(data, seed, shape, base_rate) -> None:
    p, y, w = data
    weights = {"none": None, "1-d": w,
               "rows": np.random.default_rng(seed).multinomial(p.size, np.full(p.size, 1 / p.size), 6).astype(float)}[shape]
    want = {"ece": cal.ece(p, y, weights), "auc": cal.auc(p, y, weights),
            "climatology_brier": cal.climatology_brier(y, None, weights), "brier_skill": cal.brier_skill(p, y, weights),
            **cal.murphy(p, y, weights)}
    want["shrinkage_a"], want["shrinkage_b"] = cal.shrinkage_fit(p, y, weights)
    if base_rate is not None:
        want["climatology_brier_oos"] = cal.climatology_brier(y, base_rate, weights)
        want["brier_skill_oos"] = cal.brier_skill(p, y, weights, base_rate)
    got = cal.whole_sample_metrics(p, y, weights, base_rate)
    assert list(got) == list(want)
    for name, value in want.items():
        assert _same(got[name], value), name
        assert np.ndim(got[name]) == np.ndim(value), name


@given(weighted_sets(), st.integers(0, 2**16))
def test_auc_with_whole_number_weights_is_exact(data, seed) -> None:
    # Counts make every pair sum a whole or half number: the value is the reference's exactly,
    # for one weight vector and for each row of a batch of bootstrap counts.
    p, y, w = data
    assert _same(cal.auc(p, y, w), ref_auc(list(p), list(y), list(w)))
    rows = np.random.default_rng(seed).multinomial(p.size, np.full(p.size, 1 / p.size), 5).astype(float)
    assert _same(cal.auc(p, y, rows), [ref_auc(list(p), list(y), list(r)) for r in rows])


def test_ece_rate_sd_is_the_laplace_posterior_spread_of_each_bins_rate() -> None:
    # Two bins: 0.95 (4 items, all came true) and 0.05 (2 items, none came true).
    p = np.array([0.95, 0.95, 0.95, 0.95, 0.05, 0.05])
    y = np.array([1.0, 1.0, 1.0, 1.0, 0.0, 0.0])
    high = (5 / 6) * (1 / 6) / 7  # Beta(5, 1): r~ = 5/6, variance r~ (1 - r~) / (n + 3)
    low = (1 / 4) * (3 / 4) / 5  # Beta(1, 3)
    expected = math.sqrt((4 / 6) ** 2 * high + (2 / 6) ** 2 * low)
    assert cal.ece_rate_sd(p, y) == pytest.approx(expected, rel=1e-12)
    # What the bootstrap sees there: no spread at all (every resample has the same rates).
    assert float(np.std([cal.ece(p[i], y[i]) for i in np.random.default_rng(0).integers(0, 6, (50, 6))])) < 1e-12
    assert math.isnan(cal.ece_rate_sd(np.array([]), np.array([])))


def _laplace_rate_sd(p: np.ndarray, y: np.ndarray) -> float:
    """The floor before 2026-12-05: every bin at its Laplace posterior SD."""
    total = 0.0
    bins = cal.bin_index(p)
    for k in set(bins.tolist()):
        inside = bins == k
        m, x = int(inside.sum()), float(y[inside].sum())
        r = (x + 1) / (m + 2)
        total += (m / p.size) ** 2 * r * (1 - r) / (m + 3)
    return math.sqrt(total)


def test_ece_rate_sd_reaches_as_far_as_jeffreys_on_the_side_a_clear_gap_grows() -> None:
    """A forecaster stating 3% or 97%, right 80% of the time (ECE 0.17, its share of wrong
    calls): its upper end fell short 6-8% of the time at 30-60 items with Laplace's SD alone."""
    p = np.r_[np.full(15, 0.97), np.full(15, 0.03)]
    y = np.r_[np.ones(12), np.zeros(3), np.ones(3), np.zeros(12)]
    z = sps.norm.ppf(0.975)
    # Bin 9: rate 0.8 under forecasts of 0.97, so the ECE grows as the rate falls (its lower
    # Jeffreys end); bin 0: rate 0.2 over 0.03, it grows as the rate rises (the upper end).
    high = (0.8 - sps.beta.ppf(0.025, 12.5, 3.5)) / z
    low = (sps.beta.ppf(0.975, 3.5, 12.5) - 0.2) / z
    expected = math.sqrt(0.25 * high**2 + 0.25 * low**2)
    assert cal.ece_rate_sd(p, y) == pytest.approx(expected, rel=1e-9)
    assert cal.ece_rate_sd(p, y) > 1.1 * _laplace_rate_sd(p, y)


@given(st.lists(st.tuples(st.integers(0, 100), st.booleans()), min_size=1, max_size=40))
def test_ece_rate_sd_is_never_below_the_laplace_floor(pairs) -> None:
    p = np.array([k / 100 for k, _ in pairs])
    y = np.array([float(hit) for _, hit in pairs])
    assert cal.ece_rate_sd(p, y) >= _laplace_rate_sd(p, y) * (1 - 1e-12)


def test_cross_fitted_ece_gives_an_item_alone_in_its_bin_the_nearest_bins_sign() -> None:
    """Before: an item alone in its bin added 0, so at 15-30 items (many such bins) the ECE's
    lower end sat too low (a gate on the bound failed 0.3% of the time, not 2.5%)."""
    # Bin 9: three items at 0.95 that did not happen (gap +0.95 each); bin 7: one at 0.75 that
    # did not happen either. Its sign now comes from bin 9 (+), not from itself.
    p = np.array([0.95, 0.95, 0.95, 0.75])
    estimate, se = cal.ece_cross_fitted(p, np.zeros(4))
    assert estimate == pytest.approx(p.mean())
    assert se == pytest.approx(p.std(ddof=1) / 2)
    # Bins 3 (e = -0.65, +0.35), 4 (alone, e = -0.55) and 5 (alone, e = +0.55). Bin 4's
    # neighbours are both one step away and pooled: -0.3 + 0.55 > 0. Bin 5's nearest is bin 4.
    p = np.array([0.35, 0.35, 0.45, 0.55])
    y = np.array([1.0, 0.0, 1.0, 0.0])
    assert list(cal.ece_cross_fitted_signs(p, y)) == [1.0, -1.0, 1.0, -1.0]
    assert cal.ece_cross_fitted(p, y)[0] == pytest.approx((-0.65 - 0.35 - 0.55 - 0.55) / 4)


@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=2, max_size=30))
def test_cross_fitted_ece_never_takes_an_items_sign_from_its_own_outcome(items: list[tuple[float, bool]]) -> None:
    """Why its lower end is not biased up: every item's sign is a function of the other
    items' outcomes only, so flipping an item's own outcome leaves its sign as it was."""
    p = np.array([a for a, _ in items])
    y = np.array([float(b) for _, b in items])
    signs = cal.ece_cross_fitted_signs(p, y)
    for i in range(p.size):
        flipped = y.copy()
        flipped[i] = 1 - flipped[i]
        assert cal.ece_cross_fitted_signs(p, flipped)[i] == signs[i]


def test_calibration_null_sd_is_spiegelhalters_for_the_brier_score_and_the_same_rule_for_the_others() -> None:
    p = np.array([0.1, 0.1, 0.2, 0.5, 0.8, 0.95, 0.0005])
    n = p.size
    spiegelhalter = math.sqrt(float(np.sum((1 - 2 * p) ** 2 * p * (1 - p)))) / n
    assert cal.calibration_null_sd(p, "brier") == pytest.approx(spiegelhalter, rel=1e-12)
    # Overconfidence moves by 1 when an outcome flips; log loss by log((1 - q) / q), q clipped.
    assert cal.calibration_null_sd(p, "overconfidence") == pytest.approx(math.sqrt(float(np.sum(p * (1 - p)))) / n)
    q = np.clip(p, *cal.LOG_LOSS_CLIP)
    expected = math.sqrt(float(np.sum(np.log((1 - q) / q) ** 2 * p * (1 - p)))) / n
    assert cal.calibration_null_sd(p, "log_loss") == pytest.approx(expected, rel=1e-12)
    # Certain forecasts leave nothing to the outcomes; no items, no SD.
    assert cal.calibration_null_sd(np.array([0.0, 1.0]), "brier") == 0.0
    assert math.isnan(cal.calibration_null_sd(np.array([]), "brier"))


@given(st.lists(st.floats(0, 1), min_size=1, max_size=40), st.sampled_from(["brier", "log_loss", "overconfidence"]))
def test_calibration_null_sd_is_the_sd_of_the_scores_mean_over_bernoulli_outcomes(p: list[float], score: str) -> None:
    """Exact, by enumeration over every outcome vector for a few items (the formula's claim)."""
    forecasts = np.array(p[:6])
    n = forecasts.size
    means, weights = [], []
    for outcomes in itertools.product([0.0, 1.0], repeat=n):
        y = np.array(outcomes)
        means.append(float(cal.item_scores(forecasts, y)[score].mean()))
        weights.append(float(np.prod(np.where(y == 1, forecasts, 1 - forecasts))))
    m, w = np.array(means), np.array(weights)
    centre = float(w @ m)
    sd = math.sqrt(max(float(w @ (m - centre) ** 2), 0.0))
    assert cal.calibration_null_sd(forecasts, score) == pytest.approx(sd, rel=1e-9, abs=1e-12)


def test_change_null_sd_moves_each_item_by_the_difference_of_its_flip_effects() -> None:
    now, before = np.array([0.1, 0.1, 0.9, 0.5]), np.array([0.3, 0.1, 0.6, 0.2])
    moved = (1 - 2 * now) - (1 - 2 * before)  # the Brier score's flip effects
    spread = np.maximum(now * (1 - now), before * (1 - before))
    expected = math.sqrt(float(np.sum(moved**2 * spread))) / 4
    assert cal.change_null_sd(now, before, "brier") == pytest.approx(expected, rel=1e-12)
    # Runs that agree on every forecast cannot change by an outcome: no floor.
    assert cal.change_null_sd(now, now, "log_loss") == 0.0
    # Overconfidence moves by +-1 on either side of 0.5: only a call that changed side counts.
    assert cal.change_null_sd(np.array([0.9, 0.2]), np.array([0.6, 0.7]), "overconfidence") == pytest.approx(
        math.sqrt(4 * max(0.2 * 0.8, 0.7 * 0.3)) / 2)


def test_null_sd_floor_is_the_chi_square_share_a_sample_sd_plausibly_shows() -> None:
    from scipy import stats

    for n in (2, 15, 120):
        share = math.sqrt(stats.chi2.ppf(0.10, n - 1) / (n - 1))
        assert cal.null_sd_floor(0.5, n) == pytest.approx(0.5 * share, rel=1e-12)
    assert cal.null_sd_floor(0.05, 15) == pytest.approx(0.05 * 0.7459, rel=1e-4)
    assert cal.null_sd_floor(0.5, 1) == 0.0 and cal.null_sd_floor(math.nan, 30) == 0.0
