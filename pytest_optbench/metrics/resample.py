"""Bootstrap over items as multinomial weights, in memory-bounded batches.

Resampling N items with replacement is the same as giving item i the weight w_i = how often
it was drawn (w ~ Multinomial(N, 1/N)). Every metric of binary items is a function of a few
weighted sums, so one (B x N) weight matrix per batch serves all of them at once, paired by
item, with matrix-vector products instead of B Python loops. Bias-corrected percentile
intervals (see ``percentile_interval``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from importlib import import_module

import numpy as np

from .distribution_functions import normal_cdf, normal_ppf
from .stats import BATCH_CELLS, CONFIDENCE, DEFAULT_RESAMPLES, NO_INTERVAL, Interval


@contextmanager
def scoring_numpy() -> Iterator[None]:
    """numpy as scoring wants it, restored after: ordinary pages and one BLAS thread. Call it
    from the thread that starts scoring, before any worker thread."""
    with ordinary_pages(), one_blas_thread():
        yield


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """While scoring, the BLAS library behind numpy (OpenBLAS in its wheels) uses one thread.

    Its products here are matrix-vector products of a few MB at most, which a second thread
    does not make faster; its threads spin between calls instead, on the cores the session's
    other processes (session/spare.py) and the binary families' thread are using. Scoring the
    bundled bank's records in one process on 2 cores took 11.8-13.3 s of CPU with OpenBLAS's
    default of 2 threads and 7.1-9.0 s with one, in the same wall time; the numbers are the
    same to the bit (each output element is summed in the same order).
    """
    from threadpoolctl import threadpool_limits  # at scoring time only

    with threadpool_limits(limits=1, user_api="blas"):
        yield


@contextmanager
def ordinary_pages() -> Iterator[None]:
    """While scoring, numpy does not ask Linux for huge pages; the setting is restored after.

    Resampling allocates matrices of tens of MB batch after batch, each short-lived. numpy
    advises the kernel to back such arrays with 2 MB huge pages, and where the kernel must
    first compact memory to find one, every fresh page stalls: the weight matrices of
    4,000 binary items x 10,000 resamples took 0.9 to 4 s with huge pages from one run to
    the next on 2 cores, and 1.2 s every time without. The numbers do not change. Call it
    from the thread that starts scoring, before any worker thread.
    """
    switch = _madvise_switch()
    if switch is None:
        yield
        return
    previous = switch(False)
    try:
        yield
    finally:
        switch(previous)


def _madvise_switch() -> Callable[[bool], bool] | None:
    """numpy's runtime switch for NUMPY_MADVISE_HUGEPAGE (not in its type stubs): in
    ``numpy._core`` since numpy 2, ``numpy.core`` before; None where a numpy has none."""
    for name in ("numpy._core.multiarray", "numpy.core.multiarray"):
        try:
            switch: Callable[[bool], bool] | None = getattr(import_module(name), "_set_madvise_hugepage", None)
        except ImportError:
            continue
        if switch is not None:
            return switch
    return None


def weight_batches(n: int, n_resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Yield (b, n) float arrays of bootstrap counts; the b's add up to ``n_resamples``."""
    per_batch = max(1, min(n_resamples, BATCH_CELLS // max(n, 1)))
    done = 0
    while done < n_resamples:
        b = min(per_batch, n_resamples - done)
        cells = rng.integers(0, n, size=(b, n))
        cells += np.arange(0, b * n, n)[:, None]  # draw j of row i counts in cell i * n + j
        yield np.bincount(cells.ravel(), minlength=b * n).reshape(b, n).astype(float)
        done += b


def percentile_interval(values: np.ndarray, confidence: float = CONFIDENCE, estimate: float | None = None) -> Interval:
    """Percentile interval of bootstrap values; bias-corrected (BC) when the estimate is given.

    Statistics such as ECE and reliability are biased upward, more so on resamples, so a
    plain percentile interval can sit entirely above its own estimate. BC moves the
    percentiles by the share of resamples below the estimate; where even that leaves the
    estimate outside (every resample above it), the interval is extended to the estimate,
    so a CI never excludes the value it is reported with.
    """
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size < 2:
        return NO_INTERVAL
    alpha = (1 - confidence) / 2
    if estimate is None or not np.isfinite(estimate):
        low, high = np.quantile(values, [alpha, 1 - alpha])
        return Interval(float(low), float(high), "percentile")
    share = (np.count_nonzero(values < estimate) + 0.5 * np.count_nonzero(values == estimate)) / values.size
    z0 = normal_ppf(float(np.clip(share, 1 / (values.size + 1), values.size / (values.size + 1))))
    low, high = np.quantile(values, [normal_cdf(2 * z0 + normal_ppf(alpha)), normal_cdf(2 * z0 + normal_ppf(1 - alpha))])
    method = "BC"
    if not low <= estimate <= high:
        low, high, method = min(low, estimate), max(high, estimate), "BC, extended to the estimate"
    return Interval(float(low), float(high), method)


def weighted_bootstrap(
    statistics: Callable[[np.ndarray], Mapping[str, np.ndarray | float]],
    n: int,
    rng: np.random.Generator,
    n_resamples: int = DEFAULT_RESAMPLES,
) -> dict[str, Interval]:
    """Percentile CIs for every statistic that ``statistics(weights (b, n))`` returns, all
    computed on the same resamples (so they are paired by item)."""
    collected: dict[str, list[np.ndarray]] = {}
    if n < 2:
        return {name: NO_INTERVAL for name in statistics(np.ones((1, max(n, 1))))}
    for weights in weight_batches(n, n_resamples, rng):
        for name, values in statistics(weights).items():
            collected.setdefault(name, []).append(np.atleast_1d(np.asarray(values, dtype=float)))
    point = statistics(np.ones((1, n)))
    return {name: percentile_interval(np.concatenate(parts), estimate=float(np.atleast_1d(point[name])[0]))
            for name, parts in collected.items()}


def bootstrap_draws(
    statistics: Callable[[np.ndarray], Mapping[str, np.ndarray | float]],
    n: int,
    rng: np.random.Generator,
    n_resamples: int = DEFAULT_RESAMPLES,
) -> dict[str, np.ndarray]:
    """Every statistic that ``statistics(weights (b, n))`` returns, on the same resamples
    (paired by item): one array of ``n_resamples`` draws per name."""
    collected: dict[str, list[np.ndarray]] = {}
    for weights in prefetched(weight_batches(n, n_resamples, rng)):
        for name, values in statistics(weights).items():
            collected.setdefault(name, []).append(np.atleast_1d(np.asarray(values, dtype=float)))
    return {name: np.concatenate(parts) for name, parts in collected.items()}


def prefetched(batches: Iterator[np.ndarray]) -> Iterator[np.ndarray]:
    """``batches``, with the next one drawn in a thread while the caller works on this one.

    Only that thread draws, in order, so the draws are the ones a plain loop gets; numpy
    releases the GIL in the draws and in the matrix products, so the two overlap.
    """
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="optbench-draws") as pool:
        upcoming = pool.submit(next, batches, None)
        while (batch := upcoming.result()) is not None:
            upcoming = pool.submit(next, batches, None)
            yield batch


def weighted_mean_se(values: np.ndarray, w: np.ndarray | None,
                     total: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error of per-item ``values`` under item weights (one row each).

    The standard error is s / sqrt(N) with s the weighted sample SD (N - 1 in the
    denominator) and N the total weight: for bootstrap counts, the SE of the resample.
    ``total``: the weights' row sums, when the caller already has them (several scores
    share one batch of weights).
    """
    x = np.asarray(values, dtype=float)
    shift = float(x.mean()) if x.size else 0.0
    centred = x - shift  # sums of squares without cancellation
    weights = np.ones((1, x.size)) if w is None else np.atleast_2d(np.asarray(w, dtype=float))
    if total is None:
        total = weights.sum(axis=1)
    sums = weights @ np.stack([centred, centred * centred], axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums[:, 0] / total
        ss = np.maximum(sums[:, 1] - total * mean * mean, 0.0)
        # A row whose one-pass sum of squares is at rounding level may weigh one value only:
        # decide exactly (no spread when every weighted value is equal), else two-pass.
        scale = float(centred @ centred)
        suspect = np.flatnonzero(ss <= 1e-9 * scale)
        for row in suspect:
            used = centred[weights[row] > 0]
            if used.size == 0 or used.max() == used.min():
                ss[row] = 0.0
            else:
                w_used = weights[row][weights[row] > 0]
                exact = float(w_used @ (used - mean[row]) ** 2)
                ss[row] = 0.0 if exact <= 1e-24 * scale else exact  # float rounding of equal values
        variance = ss / (total - 1)
        return mean + shift, np.sqrt(variance / total)
