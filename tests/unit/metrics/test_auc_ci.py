"""The AUC's interval: the unbiased U-statistic variance on the logit scale (issue 27's
follow-up: DeLong's variance, biased upward, made the interval cover 0.98 at 15 items)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from pytest_optbench.metrics import calibration as cal
from pytest_optbench.metrics.auc_ci import (
    UNBIASED,
    LogitNormalConfidence,
    NewcombeScoreConfidence,
    auc_confidence,
    delong_se,
    unbiased_variance,
)


def _enumerate(yes_values: tuple[float, ...], no_values: tuple[float, ...], m: int, n: int
               ) -> tuple[float, float, float]:
    """Every sample of m yes- and n no-items drawn with replacement from equally likely values:
    (the AUC's exact variance, the mean unbiased estimate, the mean DeLong estimate)."""
    aucs, unbiased, delong = [], [], []
    for yes in itertools.product(yes_values, repeat=m):
        for no in itertools.product(no_values, repeat=n):
            p = np.array(yes + no)
            y = np.array([1.0] * m + [0.0] * n)
            auc, variance = unbiased_variance(p, y)
            aucs.append(auc)
            unbiased.append(variance)
            delong.append(delong_se(p, y)[1] ** 2)
    return float(np.var(aucs)), float(np.mean(unbiased)), float(np.mean(delong))


@pytest.mark.parametrize(("m", "n"), [(2, 3), (3, 3), (4, 2)])
def test_the_variance_estimate_is_unbiased_exactly_and_delongs_is_not(m: int, n: int) -> None:
    # Ties between the classes (0.4, 0.7) and within them count half, as the AUC counts them.
    exact, unbiased, delong = _enumerate((0.4, 0.7, 0.9), (0.1, 0.4, 0.7), m, n)
    assert unbiased == pytest.approx(exact, rel=1e-12, abs=1e-15)
    assert delong > exact * 1.05  # DeLong's, a jackknife-type estimate, is biased upward


def test_the_estimate_matches_the_brute_force_u_statistics() -> None:
    rng = np.random.default_rng(1)
    p = np.round(rng.random(23), 1)
    y = (rng.random(23) < 0.45).astype(float)
    pos, neg = p[y == 1], p[y == 0]
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    m, n = psi.shape
    theta = psi.mean()
    pairs = [(i, j, k, ell) for i in range(m) for j in range(n) for k in range(m) for ell in range(n)]
    same_row = np.mean([psi[i, j] * psi[i, ell] for i, j, k, ell in pairs if i == k and j != ell])
    same_col = np.mean([psi[i, j] * psi[k, j] for i, j, k, ell in pairs if i != k and j == ell])
    disjoint = np.mean([psi[i, j] * psi[k, ell] for i, j, k, ell in pairs if i != k and j != ell])
    expected = ((psi ** 2).mean() - disjoint + (n - 1) * (same_row - disjoint) + (m - 1) * (same_col - disjoint)) / (m * n)
    auc, variance = unbiased_variance(p, y)
    assert auc == pytest.approx(theta, abs=1e-15) == pytest.approx(float(cal.auc(p, y)), abs=1e-12)
    assert variance == pytest.approx(float(expected), rel=1e-10)


def test_auc_at_15_items_covers_95_percent_with_both_tails_near_25() -> None:
    """Before (DeLong's variance): 0.98 at 15 items, the lower end missing 0.1% of the time
    (a gate ``auc <= b`` on its bound could then almost never fail)."""
    rng = np.random.default_rng(5)
    big_y = (rng.random(1_000_000) < 0.5).astype(float)
    big_p = np.round(1 / (1 + np.exp(-(np.where(big_y == 1, 0.6, -0.6) + rng.standard_normal(big_y.size)) * 1.2)), 2)
    truth = float(cal.auc(big_p, big_y))
    assert 0.78 < truth < 0.84
    below = above = total = 0
    for _ in range(3000):
        index = rng.integers(0, big_y.size, 15)
        p, y = big_p[index], big_y[index]
        if y.min() == y.max():
            continue
        interval = auc_confidence(p, y, float(cal.auc(p, y))).interval()
        total += 1
        below += truth < interval.low
        above += truth > interval.high
    assert 0.94 <= 1 - (below + above) / total <= 0.96
    assert below / total >= 0.012 and above / total >= 0.012


def test_edge_cases_get_newcombes_score_interval() -> None:
    separated = auc_confidence(np.array([0.9, 0.8, 0.2, 0.1]), np.array([1.0, 1.0, 0.0, 0.0]))
    one_yes = auc_confidence(np.array([0.9, 0.8, 0.2, 0.1]), np.array([1.0, 0.0, 0.0, 0.0]))
    assert isinstance(separated, NewcombeScoreConfidence) and isinstance(one_yes, NewcombeScoreConfidence)
    assert math.isnan(unbiased_variance(np.array([0.9, 0.1]), np.array([1.0, 0.0]))[1])
    overlapping = auc_confidence(np.array([0.9, 0.3, 0.6, 0.2, 0.5, 0.4]), np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0]))
    assert isinstance(overlapping, LogitNormalConfidence) and overlapping.method == UNBIASED
