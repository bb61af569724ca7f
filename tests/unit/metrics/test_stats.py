"""Unit tests for pytest_optbench.metrics.stats (tests, multiplicity corrections) and
pytest_optbench.metrics.resample (weighted bootstrap)."""

from __future__ import annotations

import itertools
import math
from importlib import import_module

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats as sps

from pytest_optbench.metrics import calibration as cal
from pytest_optbench.metrics.resample import (
    BATCH_CELLS,
    ordinary_pages,
    percentile_interval,
    prefetched,
    scoring_numpy,
    weight_batches,
    weighted_bootstrap,
)
from pytest_optbench.metrics.stats import benjamini_hochberg, holm, paired_permutation_p, sign_test_p, tost_p

# --------------------------------------------------------------------------- permutation test


def brute_force_permutation_p(d: list[int]) -> float:
    """Share of all 2^n sign flips whose |sum| is at least the observed |sum| (integers: exact)."""
    observed = abs(sum(d))
    hits = 0
    for signs in itertools.product((1, -1), repeat=len(d)):
        if abs(sum(s * x for s, x in zip(signs, d, strict=True))) >= observed:
            hits += 1
    return hits / 2 ** len(d)


@given(st.lists(st.integers(-30, 30), min_size=2, max_size=10))
def test_permutation_p_is_exact_for_small_n(d) -> None:
    got = paired_permutation_p(np.array(d, dtype=float), np.random.default_rng(0))
    want = 1.0 if all(x == 0 for x in d) else brute_force_permutation_p(d)
    assert got == pytest.approx(want, abs=1e-12)


def test_permutation_p_hand() -> None:
    # all 4 positive: only the all-plus and all-minus flips reach |sum| = 10 -> 2/16
    assert paired_permutation_p(np.array([1.0, 2, 3, 4]), np.random.default_rng(0)) == pytest.approx(2 / 16)
    assert paired_permutation_p(np.array([0.0, 0.0]), np.random.default_rng(0)) == 1.0
    assert paired_permutation_p(np.array([5.0]), np.random.default_rng(0)) == 1.0
    assert math.isnan(paired_permutation_p(np.array([]), np.random.default_rng(0)))
    assert math.isnan(paired_permutation_p(np.array([math.nan]), np.random.default_rng(0)))


def test_permutation_p_drops_nan() -> None:
    rng = np.random.default_rng(0)
    assert paired_permutation_p(np.array([1.0, math.nan, 2, 3, 4]), rng) == pytest.approx(2 / 16)


def test_permutation_p_random_mode_is_close_to_exact() -> None:
    d = [3, -1, 4, 1, 5, 9, -2, 6, 5, 3, -5, 8]  # 4096 flips
    exact = brute_force_permutation_p(d)
    got = paired_permutation_p(np.array(d, dtype=float), np.random.default_rng(1), n_resamples=2000)
    assert got == pytest.approx(exact, abs=0.03)
    assert paired_permutation_p(np.array(d, dtype=float), np.random.default_rng(1), n_resamples=2000) == got


# --------------------------------------------------------------------------- sign test and TOST


@given(st.lists(st.one_of(st.integers(-5, 5).map(float), st.just(math.nan)), max_size=40))
def test_sign_test_matches_binomtest(values) -> None:
    d = np.array(values, dtype=float)
    nonzero = [x for x in values if not math.isnan(x) and x != 0]
    got = sign_test_p(d)
    if not nonzero:
        assert got == 1.0
    else:
        want = sps.binomtest(sum(x > 0 for x in nonzero), len(nonzero), 0.5).pvalue
        assert got == pytest.approx(want, rel=1e-12)
    assert 0.0 <= got <= 1.0


def test_sign_test_seven_of_seven() -> None:
    # the calibration paper, section 3.4: 7 of 7 gives p = 0.016, 6 of 7 gives 0.125
    assert sign_test_p(np.ones(7)) == pytest.approx(2 / 128)
    assert sign_test_p(np.array([1.0] * 6 + [-1.0])) == pytest.approx(0.125)


def test_tost_margin_direction() -> None:
    rng = np.random.default_rng(3)
    d = rng.normal(0.3, 1.0, size=40)
    assert tost_p(d, 5.0) < 1e-6  # clearly inside +-5
    assert tost_p(d, 0.01) > 0.5  # cannot be within +-0.01
    assert tost_p(d + 10, 2.0) > 0.99  # far outside


@given(hnp.arrays(np.float64, st.integers(2, 30), elements=st.floats(-20, 20)),
       st.floats(0.01, 10), st.floats(0.01, 10))
def test_tost_is_monotone_in_margin(d, m1, m2) -> None:
    small, large = sorted((m1, m2))
    p_small, p_large = tost_p(d, small), tost_p(d, large)
    assert 0.0 <= p_small <= 1.0 and 0.0 <= p_large <= 1.0
    assert p_large <= p_small + 1e-12


def test_tost_hand_against_two_t_tests() -> None:
    d = np.array([0.5, -0.2, 1.1, 0.3, 0.0, -0.6, 0.9, 0.4])
    margin = 1.0
    se = d.std(ddof=1) / math.sqrt(d.size)
    lower = sps.t.sf((d.mean() + margin) / se, d.size - 1)
    upper = sps.t.cdf((d.mean() - margin) / se, d.size - 1)
    assert tost_p(d, margin) == pytest.approx(max(lower, upper))


def test_tost_degenerate_inputs() -> None:
    assert math.isnan(tost_p(np.array([1.0]), 2.0))
    assert math.isnan(tost_p(np.array([1.0, 2.0]), 0.0))
    assert tost_p(np.array([1.0, 1.0, 1.0]), 2.0) == 0.0  # zero variance, inside
    assert tost_p(np.array([3.0, 3.0, 3.0]), 2.0) == 1.0  # zero variance, outside


# --------------------------------------------------------------------------- multiplicity


def ref_holm(p: list[float]) -> list[float]:
    idx = [i for i, x in enumerate(p) if not math.isnan(x)]
    m = len(idx)
    order = sorted(idx, key=lambda i: p[i])
    out = [math.nan] * len(p)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, (m - rank) * p[i])
        out[i] = min(running, 1.0)
    return out


p_value_lists = st.lists(st.one_of(st.floats(0, 1), st.just(math.nan), st.sampled_from([0.01, 0.04, 0.05])),
                         max_size=25)


@given(p_value_lists)
def test_holm_matches_hand_implementation(p) -> None:
    got = holm(np.array(p, dtype=float))
    np.testing.assert_allclose(got, ref_holm(p), rtol=1e-12, atol=0, equal_nan=True)


@given(p_value_lists)
def test_holm_properties(p) -> None:
    raw = np.array(p, dtype=float)
    adj = holm(raw)
    finite = ~np.isnan(raw)
    assert (np.isnan(adj) == ~finite).all()
    assert (adj[finite] <= 1.0).all() and (adj[finite] >= raw[finite] - 1e-15).all()
    order = np.argsort(raw[finite], kind="stable")
    assert (np.diff(adj[finite][order]) >= -1e-15).all()  # monotone in the raw p


def test_holm_hand() -> None:
    got = holm(np.array([0.01, 0.04, math.nan, 0.03, 0.5]))
    # sorted 0.01, 0.03, 0.04, 0.5 with m = 4: 0.04, 0.09, 0.09 (max with 0.08), 0.5
    np.testing.assert_allclose(got, [0.04, 0.09, math.nan, 0.09, 0.5], equal_nan=True)


@given(p_value_lists)
def test_bh_matches_scipy(p) -> None:
    raw = np.array(p, dtype=float)
    got = benjamini_hochberg(raw)
    finite = ~np.isnan(raw)
    assert np.isnan(got[~finite]).all()
    if finite.any():
        np.testing.assert_array_equal(got[finite], sps.false_discovery_control(raw[finite], method="bh"))
        assert (got[finite] >= raw[finite] - 1e-15).all() and (got[finite] <= 1).all()
        assert (got[finite] <= holm(raw)[finite] + 1e-12).all()  # BH is never stricter than Holm


def test_corrections_all_nan_or_empty() -> None:
    for f in (holm, benjamini_hochberg):
        assert np.isnan(f(np.array([math.nan, math.nan]))).all()
        assert f(np.array([])).size == 0


# --------------------------------------------------------------------------- resample


@given(st.integers(1, 60), st.integers(1, 400), st.integers(0, 2 ** 32))
def test_weight_batches_rows_sum_to_n(n, n_resamples, seed) -> None:
    batches = list(weight_batches(n, n_resamples, np.random.default_rng(seed)))
    assert sum(b.shape[0] for b in batches) == n_resamples
    for b in batches:
        assert b.shape[1] == n
        assert (b.sum(axis=1) == n).all()
        assert (b >= 0).all() and (b == np.round(b)).all()


def test_weight_batches_split_large_problems() -> None:
    n = BATCH_CELLS // 3 + 1  # two rows per batch at most
    batches = list(weight_batches(n, 5, np.random.default_rng(0)))
    assert [b.shape[0] for b in batches] == [2, 2, 1]
    assert all((b.sum(axis=1) == n).all() for b in batches)


def test_prefetched_batches_are_the_draws_of_a_plain_loop_in_order() -> None:
    n = BATCH_CELLS // 3 + 1  # several batches
    plain = list(weight_batches(n, 7, np.random.default_rng(5)))
    ahead = list(prefetched(weight_batches(n, 7, np.random.default_rng(5))))
    assert len(ahead) == len(plain) == 4 and all(np.array_equal(a, b) for a, b in zip(ahead, plain, strict=True))


def test_an_error_while_drawing_ahead_reaches_the_caller() -> None:
    def failing():
        yield np.ones((1, 2))
        raise MemoryError("no room for the next batch")

    batches = prefetched(failing())
    assert next(batches).shape == (1, 2)
    with pytest.raises(MemoryError, match="no room"):
        next(batches)


def test_weight_batches_are_multinomial() -> None:
    counts = np.vstack(list(weight_batches(5, 20000, np.random.default_rng(0))))
    # each item's count is Binomial(5, 1/5): mean 1, variance 0.8
    assert counts.mean(axis=0) == pytest.approx(np.ones(5), abs=0.03)
    assert counts.var(axis=0) == pytest.approx(np.full(5, 0.8), abs=0.05)


def test_weight_batches_are_reproducible() -> None:
    a = np.vstack(list(weight_batches(7, 50, np.random.default_rng(9))))
    b = np.vstack(list(weight_batches(7, 50, np.random.default_rng(9))))
    assert (a == b).all()


def test_percentile_interval() -> None:
    values = np.arange(1001, dtype=float)
    interval = percentile_interval(values)
    assert interval.method == "percentile"
    assert (interval.low, interval.high) == pytest.approx((25.0, 975.0))
    interval = percentile_interval(np.r_[values, math.nan, math.inf], confidence=0.5)  # non-finite dropped
    assert (interval.low, interval.high) == pytest.approx((250.0, 750.0))
    assert percentile_interval(np.array([1.0])).method == "none"
    assert percentile_interval(np.array([math.nan, 1.0])).method == "none"


def test_weighted_bootstrap_single_item_has_no_interval() -> None:
    p, y = np.array([0.3]), np.array([1.0])
    got = weighted_bootstrap(lambda w: {"brier": cal.brier(p, y, w)}, 1, np.random.default_rng(0), 100)
    assert got["brier"].method == "none"


probabilities = st.integers(0, 100).map(lambda k: k / 100)


@st.composite
def binary_data(draw):
    n = draw(st.integers(2, 40))
    p = np.array(draw(st.lists(probabilities, min_size=n, max_size=n)))
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=float)
    return p, y


@given(binary_data(), st.integers(0, 2 ** 32))
def test_weighted_bootstrap_ci_contains_brier(data, seed) -> None:
    p, y = data
    intervals = weighted_bootstrap(
        lambda w: {"brier": cal.brier(p, y, w), "accuracy": cal.accuracy(p, y, w)},
        p.size, np.random.default_rng(seed), n_resamples=200,
    )
    for name, func in (("brier", cal.brier), ("accuracy", cal.accuracy)):
        interval = intervals[name]
        assert interval.method.startswith("BC")
        assert interval.low <= func(p, y) <= interval.high, name


def test_weighted_bootstrap_matches_explicit_resampling() -> None:
    # With the same draws, the weighted statistic equals the statistic on the resampled items.
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 1, 30)
    y = (rng.uniform(0, 1, 30) < p).astype(float)
    (weights,) = list(weight_batches(30, 50, np.random.default_rng(5)))
    explicit = [cal.brier(np.repeat(p, w.astype(int)), np.repeat(y, w.astype(int))) for w in weights]
    np.testing.assert_allclose(cal.brier(p, y, weights), explicit, rtol=1e-12)
    got = weighted_bootstrap(lambda w: {"brier": cal.brier(p, y, w)}, 30, np.random.default_rng(5), 50)
    want = percentile_interval(np.array(explicit), estimate=float(cal.brier(p, y)))
    assert got["brier"].low == pytest.approx(want.low) and got["brier"].high == pytest.approx(want.high)


def test_scoring_asks_numpy_for_ordinary_pages_and_restores_its_setting() -> None:
    switch = import_module("numpy._core.multiarray")._set_madvise_hugepage
    original = switch(True)
    try:
        with ordinary_pages():
            assert switch(False) is False  # off inside (the call reports the setting it replaces)
        assert switch(True) is True  # restored on the way out
        with pytest.raises(RuntimeError), ordinary_pages():
            raise RuntimeError("scoring failed")
        assert switch(True) is True  # and after an error
    finally:
        switch(original)


def test_scoring_uses_one_blas_thread_and_restores_the_library_setting() -> None:
    from threadpoolctl import threadpool_info

    def blas_threads() -> list[int]:
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    before = blas_threads()
    assert before, "numpy's BLAS library is loaded"
    with scoring_numpy():
        assert blas_threads() == [1] * len(before)
    assert blas_threads() == before
    with pytest.raises(RuntimeError), scoring_numpy():
        raise RuntimeError("scoring failed")
    assert blas_threads() == before


def test_ordinary_pages_runs_the_block_where_numpy_has_no_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_optbench.metrics import resample

    monkeypatch.setattr(resample, "import_module", lambda name: object())  # a numpy without the switch
    assert resample._madvise_switch() is None
    ran = []
    with ordinary_pages():
        ran.append(True)
    assert ran == [True]
