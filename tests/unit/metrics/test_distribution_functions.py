"""metrics/distribution_functions.py and stats.mann_whitney_p return, bit for bit, what
scipy.stats returns: they exist only to spare scoring the import of scipy.stats."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.special
import scipy.stats
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pytest_optbench.metrics import distribution_functions as D
from pytest_optbench.metrics.stats import mann_whitney_p

EDGES = [0.0, 1.0, -1.0, 0.5, 1e-300, 1 - 1e-16, math.inf, -math.inf, math.nan, -0.0]
reals = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(EDGES),
                  st.floats(-10, 10))
probabilities = st.one_of(st.floats(0, 1), st.sampled_from([0.0, 1.0, 0.025, 0.975, 0.5, -0.1, 1.1, math.nan]))
# Degrees of freedom and beta shapes as the metrics pass them: counts, effective (non-integer)
# counts, and the invalid values a corner case might produce.
shapes = st.one_of(st.integers(1, 100_000).map(float), st.floats(1e-3, 1e5), st.sampled_from([0.0, -1.0, math.inf, math.nan]))


def same(ours: float, scipys: object) -> bool:
    theirs = float(np.asarray(scipys))
    return (math.isnan(ours) and math.isnan(theirs)) or ours == theirs


@given(reals)
def test_normal_cdf_sf(x: float) -> None:
    assert same(D.normal_cdf(x), scipy.stats.norm.cdf(x))
    assert same(D.normal_sf(x), scipy.stats.norm.sf(x))


@given(probabilities)
def test_normal_ppf_isf(q: float) -> None:
    assert same(D.normal_ppf(q), scipy.stats.norm.ppf(q))
    assert same(D.normal_isf(q), scipy.stats.norm.isf(q))


@given(reals, shapes)
def test_student_cdf_sf(x: float, df: float) -> None:
    assert same(D.student_cdf(x, df), scipy.stats.t.cdf(x, df))
    assert same(D.student_sf(x, df), scipy.stats.t.sf(x, df))


@given(probabilities, shapes)
def test_student_isf(q: float, df: float) -> None:
    assert same(D.student_isf(q, df), scipy.stats.t.isf(q, df))


@given(probabilities, shapes)
def test_chi2_ppf(q: float, df: float) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert same(D.chi2_ppf(q, df), scipy.stats.chi2.ppf(q, df))


@given(reals, shapes, shapes)
def test_beta_cdf_sf(x: float, a: float, b: float) -> None:
    assert same(D.beta_cdf(x, a, b), scipy.stats.beta.cdf(x, a, b))
    assert same(D.beta_sf(x, a, b), scipy.stats.beta.sf(x, a, b))


@given(probabilities, shapes, shapes)
@example(1.1125369292536007e-308, 2.0, math.inf)  # the subnormal branch once answered 0 where SciPy says NaN
def test_beta_ppf(q: float, a: float, b: float) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        expected = scipy.stats.beta.ppf(q, a, b)
    if any("Root finding" in str(w.message) for w in caught):
        # scipy.stats' own root finder gave up (boost's iteration limit): its value is not the
        # quantile, so the quantile is checked through the CDF (in log space for a subnormal q,
        # where the CDF itself has few digits).
        x = D.beta_ppf(q, a, b)
        if q >= D.TINY_Q:
            assert D.beta_cdf(x, a, b) == pytest.approx(q, rel=1e-6, abs=0)
        else:
            log_cdf = a * math.log(x) - math.log(a) - float(scipy.special.betaln(a, b))
            assert log_cdf == pytest.approx(math.log(q), rel=1e-9)
        return
    assert same(D.beta_ppf(q, a, b), expected)


def test_beta_ppf_of_a_subnormal_q_is_a_number() -> None:
    # Found by Hypothesis: betaincinv(2, 2, 5e-324) is NaN (scipy.stats: 2.5e-62, also wrong);
    # Beta(2, 2)'s CDF is 3 x^2 near 0, so the quantile is sqrt(q / 3).
    assert D.beta_ppf(5e-324, 2, 2) == pytest.approx(math.sqrt(5e-324) / math.sqrt(3), rel=1e-6, abs=0)


def test_beta_ppf_far_in_the_tail_is_the_quantile() -> None:
    # Found by Hypothesis: scipy.stats.beta.ppf gives 1.1e-50 here (its root finder gives up);
    # for Beta(2, 4) the CDF is 10 x^2 near 0, so the quantile is sqrt(q / 10) = 7.06e-67.
    q = 4.98e-132
    assert D.beta_ppf(q, 2, 4) == pytest.approx(math.sqrt(q / 10), rel=1e-6, abs=0)


def test_clopper_pearson_bounds_over_every_count_up_to_300() -> None:
    # The calls BetaConfidence.interval makes, exhaustively for the sample sizes most runs have.
    for n in range(1, 301):
        x = np.arange(1, n + 1, dtype=float)
        for q in (0.025, 0.975, 0.005, 0.995):
            expected = scipy.stats.beta.ppf(q, x, n - x + 1)
            assert [D.beta_ppf(q, xi, n - xi + 1) for xi in x] == expected.tolist()


def test_student_quantiles_known_values() -> None:
    # Textbook values, independent of SciPy: t_{0.975, 10} = 2.228, z_{0.975} = 1.960.
    assert D.student_isf(0.025, 10) == pytest.approx(2.2281, abs=1e-4)
    assert D.normal_isf(0.025) == pytest.approx(1.95996, abs=1e-5)
    assert D.beta_ppf(0.5, 1, 1) == 0.5


samples = hnp.arrays(np.float64, st.integers(1, 60), elements=st.one_of(st.integers(0, 12).map(float),
                                                                        st.floats(0, 1)))


@settings(max_examples=150)
@given(samples, samples)
def test_mann_whitney_p_is_scipys(x: np.ndarray, y: np.ndarray) -> None:
    expected = scipy.stats.mannwhitneyu(x, y, alternative="two-sided").pvalue
    assert same(mann_whitney_p(x, y), expected)


def test_mann_whitney_p_edges() -> None:
    assert math.isnan(mann_whitney_p(np.array([]), np.array([1.0])))
    assert math.isnan(mann_whitney_p(np.array([1.0, math.nan]), np.array([1.0])))
    same_value = np.full(20, 0.7)
    assert mann_whitney_p(same_value, same_value) == 1.0  # every value tied: no evidence
    # Complete separation of two samples of 30: the normal approximation's tail, far below 5%.
    assert mann_whitney_p(np.arange(30.0), np.arange(30.0) + 100) < 1e-9


def test_small_samples_without_ties_take_the_exact_null() -> None:
    # Two samples of 5, completely separated: 2 of the C(10, 5) = 252 orderings are as extreme.
    assert mann_whitney_p(np.arange(5.0), np.arange(5.0) + 10) == pytest.approx(2 / 252, rel=1e-12)
