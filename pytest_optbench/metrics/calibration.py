"""Scores for probabilities of known outcomes (calibration paper, sections 3.4 and 4).

p in [0, 1] is the stated probability of "yes", y in {0, 1} the outcome. Every function takes
optional item weights ``w``: None (each item once), shape (n,), or (b, n) for b bootstrap
resamples at once (see ``resample``); it then returns one value per row.
"""

from __future__ import annotations

import math

import numpy as np

from .distribution_functions import chi2_ppf

N_BINS = 10
LOG_LOSS_CLIP = (0.001, 0.999)


def _weights(w: np.ndarray | None, n: int) -> tuple[np.ndarray, bool]:
    if w is None:
        return np.ones((1, n)), True
    w = np.asarray(w, dtype=float)
    return (w[None, :], True) if w.ndim == 1 else (w, False)


def _out(values: np.ndarray, single: bool) -> np.ndarray | float:
    # np.float64, not float: 0/0 must give NaN (with numpy's errstate), not raise.
    out: np.ndarray | float = values[0] if single else values
    return out


def _wmean(x: np.ndarray, w: np.ndarray | None) -> np.ndarray | float:
    weights, single = _weights(w, x.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _out(weights @ x / weights.sum(axis=1), single)


def bin_index(p: np.ndarray, n_bins: int = N_BINS) -> np.ndarray:
    """Equal-width bins [0, 0.1), ..., [0.9, 1.0]; the tiny epsilon keeps 0.7 out of bin 6."""
    index: np.ndarray = np.minimum((np.asarray(p) * n_bins + 1e-9).astype(int), n_bins - 1)
    return index


def brier(p: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> np.ndarray | float:
    return _wmean((p - y) ** 2, w)


def log_loss(p: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> np.ndarray | float:
    q = np.clip(p, *LOG_LOSS_CLIP)
    return _wmean(-(y * np.log(q) + (1 - y) * np.log(1 - q)), w)


def accuracy(p: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> np.ndarray | float:
    """Share right when every p >= 0.5 is read as "yes"."""
    return _wmean(((p >= 0.5) == (y == 1)).astype(float), w)


def overconfidence(p: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> np.ndarray | float:
    """Mean confidence in the predicted side minus accuracy (0 for a calibrated forecaster)."""
    confidence = np.where(p >= 0.5, p, 1 - p)
    return _wmean(confidence, w) - accuracy(p, y, w)


def _bin_sums(p: np.ndarray, y: np.ndarray, w: np.ndarray | None, n_bins: int) -> tuple[np.ndarray, ...]:
    """Per-bin weighted sums: count, sum p, sum y, sum p^2, sum p*y; each (b, n_bins)."""
    weights, _ = _weights(w, p.size)
    onehot = np.zeros((p.size, n_bins))
    onehot[np.arange(p.size), bin_index(p, n_bins)] = 1.0
    columns = np.stack([onehot, onehot * p[:, None], onehot * y[:, None],
                        onehot * (p ** 2)[:, None], onehot * (p * y)[:, None]])
    return tuple(weights @ column for column in columns)


def ece(p: np.ndarray, y: np.ndarray, w: np.ndarray | None = None, n_bins: int = N_BINS) -> np.ndarray | float:
    """Sum over bins of n_k / N * |mean p - event rate| = sum |sum p - sum y| / N."""
    return _ece_from_sums(_bin_sums(p, y, w, n_bins), w is None or np.ndim(w) == 1)


def _ece_from_sums(sums: tuple[np.ndarray, ...], single: bool) -> np.ndarray | float:
    count, sum_p, sum_y, _, _ = sums
    values = np.abs(sum_p - sum_y).sum(axis=1) / count.sum(axis=1)
    return _out(values, single)


def murphy(p: np.ndarray, y: np.ndarray, w: np.ndarray | None = None, n_bins: int = N_BINS) -> dict[str, np.ndarray | float]:
    """Brier = REL - RES + UNC + WBV - WBC exactly (Stephenson, Coelho & Jolliffe 2008).

    REL reliability, RES resolution, UNC uncertainty, WBV within-bin variance of the
    forecasts, WBC within-bin covariance of forecasts and outcomes (twice it, as in the paper).
    """
    return _murphy_from_sums(_bin_sums(p, y, w, n_bins), w is None or np.ndim(w) == 1)


def _murphy_from_sums(sums: tuple[np.ndarray, ...], single: bool) -> dict[str, np.ndarray | float]:
    count, sum_p, sum_y, sum_pp, sum_py = sums
    total = count.sum(axis=1)
    base = sum_y.sum(axis=1) / total
    with np.errstate(invalid="ignore", divide="ignore"):
        filled = count > 0
        mean_p = np.where(filled, sum_p / np.where(filled, count, 1), 0.0)
        rate = np.where(filled, sum_y / np.where(filled, count, 1), 0.0)
    rel = (count * (mean_p - rate) ** 2).sum(axis=1) / total
    res = (count * (rate - base[:, None]) ** 2).sum(axis=1) / total
    unc = base * (1 - base)
    wbv = (sum_pp - count * mean_p ** 2).sum(axis=1) / total
    wbc = 2 * (sum_py - count * mean_p * rate).sum(axis=1) / total
    return {"reliability": _out(rel, single), "resolution": _out(res, single), "uncertainty": _out(unc, single),
            "within_bin_variance": _out(wbv, single), "within_bin_covariance": _out(wbc, single)}


def auc(p: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> np.ndarray | float:
    """P(p of a yes-item > p of a no-item), ties counted half: Mann-Whitney U / (n1 * n0).

    Each yes-item adds its weight times the weight of the no-items below it plus half of
    those tied with it, both read off one running sum of the no-items' weights in order of
    p. With whole-number weights (none, or bootstrap counts) every sum is an exact integer
    or half-integer, so U, n1 and n0 are exact and the result does not depend on the order
    in which they are summed.
    """
    weights, single = _weights(w, p.size)
    yes = np.flatnonzero(y == 1)
    no = np.flatnonzero(y != 1)
    no = no[np.argsort(p[no], kind="stable")]
    no_p = p[no]
    below = np.zeros((weights.shape[0], no.size + 1))  # column k: weight of the k lowest no-items
    np.cumsum(np.take(weights, no, axis=1), axis=1, out=below[:, 1:])
    w_yes = np.take(weights, yes, axis=1)
    # 2 (below + tied / 2) = (weight strictly below) + (weight at or below)
    twice = np.take(below, np.searchsorted(no_p, p[yes], side="left"), axis=1)
    twice += np.take(below, np.searchsorted(no_p, p[yes], side="right"), axis=1)
    u = 0.5 * np.einsum("ij,ij->i", w_yes, twice)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = u / (w_yes.sum(axis=1) * below[:, -1])
    return _out(values, single)


def _moments(p: np.ndarray, y: np.ndarray, w: np.ndarray | None) -> tuple[np.ndarray, ...]:
    weights, _ = _weights(w, p.size)
    return tuple(weights @ v for v in (np.ones_like(p), p, y, p * p, p * y))


def _shrinkage_from_moments(s: np.ndarray | float, sp: np.ndarray, sy: np.ndarray, spp: np.ndarray,
                            spy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    b = sy / s
    with np.errstate(invalid="ignore", divide="ignore"):
        a = (spy - b * sp - b * sy + b * b * s) / (spp - 2 * b * sp + b * b * s)
    return np.asarray(a), np.asarray(b)


def shrinkage_fit(p: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> tuple[np.ndarray | float, np.ndarray | float]:
    """Least-squares (a, b) of p' = b + a (p - b), with b the base rate of the fitted items."""
    a, b = _shrinkage_from_moments(*_moments(p, y, w))
    single = w is None or np.ndim(w) == 1
    return _out(a, single), _out(b, single)


def shrink(p: np.ndarray, a: float, b: float) -> np.ndarray:
    return np.clip(b + a * (p - b), 0.0, 1.0)


def loo_recalibrated(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each item's probability after a shrinkage fitted on all the *other* items."""
    n = p.size
    if n < 3:
        return np.full(n, np.nan)
    _s, sp, sy, spp, spy = (float(v[0]) for v in _moments(p, y, None))
    a, b = _shrinkage_from_moments(n - 1.0, sp - p, sy - y, spp - p * p, spy - p * y)
    return np.asarray(np.clip(b + a * (p - b), 0.0, 1.0), dtype=float)


def climatology_brier(y: np.ndarray, base_rate: float | None = None, w: np.ndarray | None = None) -> np.ndarray | float:
    """Brier of always stating the base rate: in-sample (= y's variance) or a given one."""
    if base_rate is None:
        rate = _wmean(y.astype(float), w)
        return rate * (1 - rate)
    return _wmean((base_rate - y) ** 2, w)


def brier_skill(p: np.ndarray, y: np.ndarray, w: np.ndarray | None = None, base_rate: float | None = None) -> np.ndarray | float:
    """1 - Brier / Brier of climatology: > 0 beats stating the base rate."""
    return _skill(brier(p, y, w), climatology_brier(y, base_rate, w))


def _skill(model: np.ndarray | float, climatology: np.ndarray | float) -> np.ndarray | float:
    with np.errstate(invalid="ignore", divide="ignore"):
        reference = np.asarray(climatology)
        # Undefined (not -inf) when climatology is perfect: every outcome the same.
        skill = np.where(reference > 0, 1 - np.asarray(model) / np.where(reference > 0, reference, 1), np.nan)
    return skill if skill.ndim else skill[()]


def whole_sample_metrics(p: np.ndarray, y: np.ndarray, w: np.ndarray | None = None,
                         base_rate: float | None = None, with_auc: bool = True) -> dict[str, np.ndarray | float]:
    """ECE, AUC, climatology Brier, Brier skill, Murphy's terms and the shrinkage fit (and,
    with a base rate, its climatology Brier and skill): exactly what the functions above give
    one at a time, with the weighted sums they share computed once. The bootstrap evaluates
    them all on every batch of resample weights, where each sum is a pass over a large matrix.
    """
    weights, _ = _weights(w, p.size)
    single = w is None or np.ndim(w) == 1
    total = weights.sum(axis=1)

    def wmean(sums: np.ndarray) -> np.ndarray | float:  # as _wmean, from weights @ x
        with np.errstate(invalid="ignore", divide="ignore"):
            return _out(sums / total, single)

    sum_y = weights @ y.astype(float)
    rate, model = wmean(sum_y), wmean(weights @ ((p - y) ** 2))
    climatology = rate * (1 - rate)
    bins = _bin_sums(p, y, w, N_BINS)
    values: dict[str, np.ndarray | float] = {
        "ece": _ece_from_sums(bins, single),
        # The AUC's interval needs no resamples (metrics/auc_ci.py): left out of them.
        **({"auc": auc(p, y, w)} if with_auc else {}),
        "climatology_brier": climatology, "brier_skill": _skill(model, climatology), **_murphy_from_sums(bins, single),
    }
    a, b = _shrinkage_from_moments(weights @ np.ones_like(p), weights @ p, sum_y, weights @ (p * p), weights @ (p * y))
    values["shrinkage_a"], values["shrinkage_b"] = _out(a, single), _out(b, single)
    if base_rate is not None:
        values["climatology_brier_oos"] = oos = wmean(weights @ ((base_rate - y) ** 2))
        values["brier_skill_oos"] = _skill(model, oos)
    return values


# --------------------------------------------------------------------------- ECE beyond the plug-in


def _folded_normal_mean(mean: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """E|X| for X ~ N(mean, sd^2); |mean| where sd is 0."""
    # The standard normal CDF (what scipy.stats.norm.cdf computes), from scipy.special: it
    # loads in a third of the time, and scoring often runs this before anything needs stats.
    from scipy.special import ndtr  # imported on first use

    safe = np.where(sd > 0, sd, 1.0)
    folded = safe * np.sqrt(2 / np.pi) * np.exp(-mean * mean / (2 * safe * safe)) + mean * (1 - 2 * ndtr(-mean / safe))
    return np.asarray(np.where(sd > 0, folded, np.abs(mean)), dtype=float)


def ece_debiased(p: np.ndarray, y: np.ndarray, w: np.ndarray | None = None,
                 n_bins: int = N_BINS) -> np.ndarray | float:
    """Debiased ECE of Kumar, Liang and Ma (2019, "Verified uncertainty calibration", sec. 5).

    The plug-in |mean p - event rate| of a bin is biased upward by the noise of the event
    rate. Their estimator subtracts that bias under a normal model of the bin's event rate
    (their ``normal_debiased_ce``): 2 ECE - sum_k w_k E|N(d_k, s_k^2)|, with d_k the bin's
    gap and s_k^2 = r_k (1 - r_k) / n_k its variance; E|N| in closed form instead of their
    1,000 normal draws. Where a bin holds one item (their code refuses such bins) s_k^2 is
    the variance the outcome would have if calibrated, p (1 - p). Clipped at 0: ECE >= 0.
    ``w``: resample weights as elsewhere here (a paired bootstrap of the change).
    """
    p, y = np.asarray(p, dtype=float), np.asarray(y, dtype=float)
    if p.size == 0:
        return float("nan")
    count, sum_p, sum_y, _, _ = _bin_sums(p, y, w, n_bins)
    filled = count > 0
    safe = np.where(filled, count, 1.0)
    mean_p, rate = sum_p / safe, sum_y / safe
    variance = np.where(count >= 2, rate * (1 - rate), mean_p * (1 - mean_p)) / safe
    gap = np.where(filled, mean_p - rate, 0.0)
    weight = count / count.sum(axis=1, keepdims=True)
    plugin = (weight * np.abs(gap)).sum(axis=1)
    folded = _folded_normal_mean(gap, np.sqrt(np.maximum(variance, 0.0)))
    values = np.maximum(0.0, 2 * plugin - (weight * folded).sum(axis=1))
    return _out(values, w is None or np.ndim(w) == 1)


def ece_null_draws(p: np.ndarray, n_draws: int, rng: np.random.Generator, n_bins: int = N_BINS,
                   batch_cells: int = 4_000_000) -> np.ndarray:
    """Plug-in ECE of the same forecasts with outcomes drawn from them (y* ~ Bernoulli(p)).

    Consistency resampling (Broecker and Smith 2007): the distribution the ECE has when the
    forecaster is calibrated, given its forecasts.
    """
    return calibration_null_draws(p, n_draws, rng, n_bins, batch_cells)[0]


def calibration_null_draws(p: np.ndarray, n_draws: int, rng: np.random.Generator, n_bins: int = N_BINS,
                           batch_cells: int = 4_000_000) -> tuple[np.ndarray, np.ndarray]:
    """(plug-in ECE, reliability) of the same forecasts with outcomes drawn from them, on the
    same draws (see ``ece_null_draws``)."""
    p = np.asarray(p, dtype=float)
    n = p.size
    onehot = np.zeros((n, n_bins))
    onehot[np.arange(n), bin_index(p, n_bins)] = 1.0
    counts = np.maximum(onehot.sum(axis=0), 1.0)
    eces, rels = [], []
    per_batch = max(1, min(n_draws, batch_cells // max(n, 1)))
    done = 0
    while done < n_draws:
        b = min(per_batch, n_draws - done)
        gaps = (p[None, :] - (rng.random((b, n)) < p[None, :])) @ onehot
        eces.append(np.abs(gaps).sum(axis=1) / n)
        rels.append((gaps * gaps / counts).sum(axis=1) / n)
        done += b
    if not eces:
        return np.array([]), np.array([])
    return np.concatenate(eces), np.concatenate(rels)


def _mean_se(values: np.ndarray) -> tuple[float, float]:
    n = values.size
    if n < 2:
        return float("nan"), float("nan")
    return float(values.mean()), float(values.std(ddof=1) / np.sqrt(n))


def ece_cross_fitted(p: np.ndarray, y: np.ndarray, n_bins: int = N_BINS) -> tuple[float, float]:
    """(estimate, standard error) of the population ECE with each bin's sign cross-fitted.

    The plug-in ECE is exactly the mean over items of sign(gap of the item's bin) (p_i - y_i);
    its upward bias comes from taking that sign from the item itself. Here each item's sign
    is its bin's gap without it (leave one out), so the mean no longer selects its own sign:
    biased down where a bin's gap is near 0, not up. An item alone in its bin takes the sign
    of the nearest occupied bins' gap (both, pooled, at equal distance): still other items'
    outcomes, so still not biased up, where a sign of 0 (adding nothing) made the lower end
    too low at 15-30 items, when many bins hold one item.
    """
    p, y = np.asarray(p, dtype=float), np.asarray(y, dtype=float)
    return _mean_se(ece_cross_fitted_signs(p, y, n_bins) * (p - y))


SIGN_ROUNDING = 1e-9  # per item; a sum of errors in [-1, 1] rounds to ~1e-16 per term


def ece_cross_fitted_signs(p: np.ndarray, y: np.ndarray, n_bins: int = N_BINS) -> np.ndarray:
    """Each item's sign in ``ece_cross_fitted``, from the other items' outcomes only."""
    p, y = np.asarray(p, dtype=float), np.asarray(y, dtype=float)
    bins = bin_index(p, n_bins)
    e = p - y
    sums = np.bincount(bins, e, n_bins)
    counts = np.bincount(bins, minlength=n_bins)
    others = sums[bins] - e
    alone = counts[bins] == 1
    others[alone] = _nearest_gaps(sums, counts)[bins[alone]]
    # A gap of 0 left over by subtraction can carry rounding of the item's own e: no sign.
    return np.where(np.abs(others) <= SIGN_ROUNDING * np.maximum(counts[bins], 1), 0.0, np.sign(others))


def _nearest_gaps(sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per bin, the summed gap of the nearest other occupied bins (both at equal distance;
    0 where no other bin is occupied)."""
    occupied = np.flatnonzero(counts)
    out = np.zeros(sums.size)
    for k in occupied:
        distance = np.abs(occupied - k)
        distance[occupied == k] = sums.size + 1
        if occupied.size > 1:
            out[k] = sums[occupied[distance == distance.min()]].sum()
    return out


RATE_PSEUDO = 1.0  # pseudo-events and pseudo-non-events per bin in ece_rate_sd
CLEAR_SIGN_SDS = 1.0  # a bin's gap this many SDs of its rate from 0 has a sign ece_rate_sd trusts
JEFFREYS_TAIL = 0.025  # the one-sided level of ece_rate_sd's reach (that of the upper end it floors)


def ece_rate_sd(p: np.ndarray, y: np.ndarray, n_bins: int = N_BINS) -> float:
    """The plug-in ECE's standard error from its bins' event rates, none taken at 0 or 1.

    The ECE is sum_k w_k |mean p_k - r_k|; its delta-method variance is
    sum_k w_k^2 Var(r_k). With r_k (1 - r_k) / n_k (what the bootstrap sees) a bin whose items
    all came true, or none did, contributes nothing, the failure of Wald's interval at 0
    events (Brown, Cai and DasGupta 2001, "Interval estimation for a binomial proportion").
    Here Var(r_k) is the posterior variance of the bin's rate under the uniform prior
    (Laplace: one pseudo-event and one pseudo-non-event, Beta(x + 1, n_k - x + 1)):
    r~ (1 - r~) / (n_k + 3), r~ = (x + 1) / (n_k + 2).

    Where a bin's gap lies more than ``CLEAR_SIGN_SDS`` of those SDs from 0, the ECE grows on
    one side of its rate only, and a rate away from 1/2 reaches further on the side towards
    it than any symmetric SD says: there Var(r_k) is at least the square of the bin's
    Jeffreys reach on that side, (r_k - q_0.025) / z or (q_0.975 - r_k) / z of
    Beta(x + 1/2, n_k - x + 1/2) (the interval Brown, Cai and DasGupta recommend). A forecaster
    that states only 3% or 97% and is right 80% of the time has an ECE that is its share of
    wrong calls, and the upper end fell short of it 6-8% of the time at 30-60 items without
    it. Bins whose sign is unclear keep Laplace's SD (a one-sided reach there missed the
    other side). It serves as a floor under the upper end's bootstrap SD
    (``EceConfidence.rate_sd``), so it can only widen the upper end.
    """
    from scipy.special import betaincinv, ndtri  # imported on first use, as in _folded_normal_mean

    p, y = np.asarray(p, dtype=float), np.asarray(y, dtype=float)
    if p.size == 0:
        return float("nan")
    bins = bin_index(p, n_bins)
    counts = np.bincount(bins, minlength=n_bins).astype(float)
    events = np.bincount(bins, y, n_bins)
    rate = (events + RATE_PSEUDO) / (counts + 2 * RATE_PSEUDO)
    variance = rate * (1 - rate) / (counts + 2 * RATE_PSEUDO + 1)
    filled = counts > 0
    safe = np.where(filled, counts, 1.0)
    observed = events / safe
    gap = np.bincount(bins, p, n_bins) / safe - observed
    clear = filled & (np.abs(gap) > CLEAR_SIGN_SDS * np.sqrt(variance))
    if clear.any():
        a, b = events[clear] + 0.5, counts[clear] - events[clear] + 0.5
        toward_low = gap[clear] > 0  # forecasts above the rate: the ECE grows as the rate falls
        tail = np.where(toward_low, JEFFREYS_TAIL, 1 - JEFFREYS_TAIL)
        reach = np.abs(observed[clear] - betaincinv(a, b, tail)) / ndtri(1 - JEFFREYS_TAIL)
        variance[clear] = np.maximum(variance[clear], reach * reach)
    weight = counts / p.size
    return float(np.sqrt(float((weight * weight * variance).sum())))


def reliability_cross_fitted(p: np.ndarray, y: np.ndarray, n_bins: int = N_BINS) -> tuple[float, float]:
    """(estimate, standard error) of the population reliability without the plug-in's bias.

    The plug-in's bin term n_k gap_k^2 = (sum e)^2 / n_k holds each item's own e_i^2; the
    U-statistic (sum e)^2 - sum e^2 over n_k - 1 does not (unbiased for n_k times the
    squared mean gap; an item alone in its bin adds 0). Written as a mean over items of
    e_i (S_k - e_i) / (n_k - 1).
    """
    p, y = np.asarray(p, dtype=float), np.asarray(y, dtype=float)
    bins = bin_index(p, n_bins)
    e = p - y
    sums = np.bincount(bins, e, n_bins)
    counts = np.bincount(bins, minlength=n_bins).astype(float)
    others = np.maximum(counts[bins] - 1.0, 1.0)
    terms = np.where(counts[bins] >= 2, e * (sums[bins] - e) / others, 0.0)
    return _mean_se(terms)


def item_scores(p: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """Per-item values whose mean is the metric: the decomposable binary scores."""
    q = np.clip(p, *LOG_LOSS_CLIP)
    correct = ((p >= 0.5) == (y == 1)).astype(float)
    return {
        "brier": (p - y) ** 2,
        "log_loss": -(y * np.log(q) + (1 - y) * np.log(1 - q)),
        "accuracy": correct,
        "overconfidence": np.where(p >= 0.5, p, 1 - p) - correct,
    }


# A sample SD below this chi-square quantile of the outcomes' null SD is implausibly small
# (``null_sd_floor``).
NULL_SD_QUANTILE = 0.10


def flip_effects(p: np.ndarray, score: str) -> np.ndarray:
    """How much each item's score moves when its outcome flips: s(p, 1) - s(p, 0) (1 - 2p for
    the Brier score, +-1 for overconfidence, log((1 - p) / p) for log loss)."""
    p = np.asarray(p, dtype=float)
    flip: np.ndarray = item_scores(p, np.ones_like(p))[score] - item_scores(p, np.zeros_like(p))[score]
    return flip


def calibration_null_sd(p: np.ndarray, score: str) -> float:
    """The SD a per-item score's mean would have from the outcomes alone, were the forecasts
    calibrated: each outcome Bernoulli(p_i), so sqrt(sum d_i^2 p_i (1 - p_i)) / n with d_i the
    item's ``flip_effects`` (for the Brier score Spiegelhalter's 1986 null variance,
    "Probabilistic prediction in patient management and clinical trials"). It depends on the
    forecasts only, not on which outcomes came.

    Why it is needed: a small sample in which every confident forecast came true shows almost
    no spread, and a bootstrap of it cannot know the confident misses the population holds
    (15 items of a model that says 10% to most of its rare "yes" questions: the Brier's
    upper end fell short 10% of the time, log loss 11.5%). The model's own forecasts say how
    much the outcomes could have varied; ``calibration_ci`` floors the upper end there.
    """
    p = np.asarray(p, dtype=float)
    if p.size == 0:
        return float("nan")
    flip = flip_effects(p, score)
    return float(np.sqrt(float(np.sum(flip * flip * p * (1 - p))))) / p.size


def change_null_sd(p_now: np.ndarray, p_before: np.ndarray, score: str) -> float:
    """The same for a per-item change of a score between two runs on the same outcomes: a flip
    moves item i's change by d_now - d_before, and either run's forecast may be the right
    one, so each outcome's variance is the larger of p (1 - p) of the two (a sharper model
    against a softer one on a rare yes: the change's CI covered 0.72-0.81 at 15-30 items)."""
    p_now, p_before = np.asarray(p_now, dtype=float), np.asarray(p_before, dtype=float)
    if p_now.size == 0:
        return float("nan")
    moved = flip_effects(p_now, score) - flip_effects(p_before, score)
    spread = np.maximum(p_now * (1 - p_now), p_before * (1 - p_before))
    return float(np.sqrt(float(np.sum(moved * moved * spread)))) / p_now.size


def null_sd_floor(null_sd: float, n: int) -> float:
    """A null SD discounted to the smallest share of it a sample SD on n - 1 degrees of freedom
    plausibly shows (the chi-square's ``NULL_SD_QUANTILE``: 0.75 at 15 items, 0.92 at 120).

    Where the forecasts are right a sample's own SD estimates that spread and falls below it
    half the time; the full null SD as a floor made a calibrated model's Brier and log loss
    cover 0.98-0.99 at 15 items. Discounted, it binds only where a sample shows much less
    spread than its forecasts leave to the outcomes: no confident miss among them. Prototype
    (numpy, 1,000 samples a cell, upper misses at 15 items, no floor / full / quantile 0.025,
    0.05, 0.10): a rare yes, Brier 0.100 / 0.000 / 0.076 / 0.039 / 0.022, log loss 0.115 /
    0.000 / 0.064 / 0.017 / 0.000; calibrated forecasts in tenths, Brier 0.035 / 0.003 /
    0.035 / 0.035 / 0.028, log loss 0.045 / 0.002 / 0.045 / 0.039 / 0.031.
    """
    if n < 2 or not math.isfinite(null_sd):
        return 0.0
    return null_sd * math.sqrt(chi2_ppf(NULL_SD_QUANTILE, n - 1) / (n - 1))
