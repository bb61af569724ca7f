"""Which interval each known-answer (binary) metric gets, all from one set of item resamples.

* Means of per-item scores (Brier, log loss, overconfidence, the leave-one-out recalibrated
  Brier): bootstrap-t floored at Student's t (``confidence.StudentizedBootstrap``), within
  the score's range; for the first three the upper end is also at least the estimate plus
  z times the score's calibration-null SD (``calibration.calibration_null_sd``, the spread
  the outcomes alone would give were the forecasts right) as far as a sample's SD may fall
  below it by chance (``calibration.null_sd_floor``): a sample without a confident miss
  shows less. Accuracy, a share of independent items: Clopper-Pearson.
* Functions of the base rate alone (climatology Brier and uncertainty r (1 - r), the
  shrinkage centre b = r, the out-of-sample climatology b^2 + r (1 - 2b)): the image of the
  Wilson interval of r (``rates.base_rate_confidence``). These are fixed when the mix of
  outcomes is fixed by design (a balanced set): the interval then describes a set drawn at
  random from the same population, as every other interval here does.
* ECE (plug-in) and the debiased ECE: one interval for the population ECE
  (``confidence.EceConfidence``), containing both estimates; reliability the same kind of
  interval (its own null draws and cross-fitted estimate).
* AUC: the unbiased U-statistic variance on the logit scale, Newcombe's score interval for a separated sample
  (``auc_ci``).
* The rest (skill scores, resolution, the within-bin terms, shrinkage a): bias-corrected
  percentile (``confidence.bootstrap_confidence``), or no interval, with the reason, where
  BC's corrected percentiles leave the draws.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from . import calibration as cal
from .auc_ci import auc_confidence
from .confidence import (
    NATURAL_BOUNDS,
    BetaConfidence,
    Confidence,
    EceConfidence,
    NoConfidence,
    StudentizedBootstrap,
    bootstrap_confidence,
    studentized_from_draws,
)
from .rates import base_rate_confidence
from .resample import bootstrap_draws, weighted_mean_se

# Scores whose upper end is at least the estimate plus z times their calibration-null SD
# (``calibration.calibration_null_sd``) as far as a sample's SD may fall below it by chance
# (``calibration.null_sd_floor``): a small sample can lack the confident misses.
OUTCOME_FLOORED = ("brier", "log_loss", "overconfidence")
OUTCOME_FLOOR_METHOD = "bootstrap-t/Student, upper end floored at the calibration-null SD"
ECE_NULL_DRAWS = 2_000  # enough for the 95% quantile of the calibrated-model ECE
_SE = "\x1fse:"  # key prefix of the per-resample standard errors


def _spread(r: float) -> float:
    return r * (1 - r)


def _same(r: float) -> float:
    return r


def _climatology_oos(b: float, r: float) -> float:
    return b * b + r * (1 - 2 * b)


def _base_rate_metrics(base_rate: float | None) -> dict[str, tuple[Callable[[float], float], tuple[float, ...]]]:
    # Functions of the module (not lambdas): the confidences travel to another process
    # (session/spare.py) by pickle.
    spread = (_spread, (0.5,))
    out: dict[str, tuple[Callable[[float], float], tuple[float, ...]]] = {
        "climatology_brier": spread, "uncertainty": spread, "shrinkage_b": (_same, ()),
    }
    if base_rate is not None:
        out["climatology_brier_oos"] = (functools.partial(_climatology_oos, float(base_rate)), ())
    return out


def binary_confidences(
    statistics: Callable[[np.ndarray | None], Mapping[str, Any]],
    per_item: Mapping[str, np.ndarray],
    p: np.ndarray,
    y: np.ndarray,
    rng: np.random.Generator,
    n_resamples: int,
    base_rate: float | None = None,
) -> tuple[dict[str, float], dict[str, Confidence]]:
    """Point values and confidences of every binary metric.

    ``statistics(w)`` gives the whole-sample metrics under item weights (None: each item
    once); ``per_item`` the per-item scores of the decomposable ones (their mean is the
    metric), which override any same-named entry of ``statistics``. Adds ``ece_debiased``.
    """
    p, y = np.asarray(p, dtype=float), np.asarray(y, dtype=float)
    n = p.size

    def everything(w: np.ndarray | None) -> dict[str, Any]:
        values = dict(statistics(w))
        total = None if w is None else np.atleast_2d(np.asarray(w, dtype=float)).sum(axis=1)
        for name, scores in per_item.items():
            mean, se = weighted_mean_se(scores, w, total)
            values[name], values[_SE + name] = (float(mean[0]), float(se[0])) if w is None else (mean, se)
        return values

    point_all = everything(None)
    point = {name: float(np.asarray(value)) for name, value in point_all.items() if not name.startswith(_SE)}
    point["ece_debiased"] = float(cal.ece_debiased(p, y))
    if n < 2:
        return point, {name: NoConfidence(value) for name, value in point.items()}
    draws = bootstrap_draws(everything, n, rng, n_resamples)
    successes = float(y.sum())
    rate_metrics = _base_rate_metrics(base_rate)
    out: dict[str, Confidence] = {}
    for name, value in point.items():
        if name == "accuracy":  # a share of independent items: exact
            out[name] = BetaConfidence(value, value * n, n)
        elif name in per_item:
            mean = studentized_from_draws(value, float(point_all[_SE + name]), n, draws[name], draws[_SE + name],
                                          NATURAL_BOUNDS.get(name))
            if name in OUTCOME_FLOORED and isinstance(mean, StudentizedBootstrap):
                mean = replace(mean, high_sd=cal.null_sd_floor(cal.calibration_null_sd(p, name), n),
                               method=OUTCOME_FLOOR_METHOD)
            out[name] = mean
        elif name in rate_metrics:
            g, critical = rate_metrics[name]
            out[name] = base_rate_confidence(successes, n, g, critical)
        elif name == "auc":
            out[name] = auc_confidence(p, y, value)
        elif name not in ("ece", "ece_debiased", "reliability"):
            out[name] = bootstrap_confidence(draws[name], value)
    out.update(_gap_confidences(p, y, point, draws, rng, n_resamples))
    return point, out


def _gap_confidences(p: np.ndarray, y: np.ndarray, point: Mapping[str, float], draws: Mapping[str, np.ndarray],
                     rng: np.random.Generator, n_resamples: int) -> dict[str, Confidence]:
    """ECE (plug-in and debiased, one interval) and reliability: ``EceConfidence``."""
    wanted = [name for name in ("ece", "reliability") if name in point]
    out: dict[str, Confidence] = {}
    if not wanted:
        return out
    null_ece, null_rel = cal.calibration_null_draws(p, min(n_resamples, ECE_NULL_DRAWS), rng)
    nulls = {"ece": np.sort(null_ece), "reliability": np.sort(null_rel)}
    cross = {"ece": cal.ece_cross_fitted, "reliability": cal.reliability_cross_fitted}
    for name in wanted:
        plugin = point[name]
        found = draws.get(name)
        finite = found[np.isfinite(found)] if found is not None else np.array([])
        if not np.isfinite(plugin) or finite.size < 2:
            out[name] = NoConfidence(plugin)
            continue
        centre, se = cross[name](p, y)
        sd = float(finite.std(ddof=1))
        if name == "reliability":
            # Its cross-fitted terms share their bin's sum (a U-statistic of degree 2), so the
            # per-item SE understates its spread (lower end too high 9% of the time at 120
            # overconfident items): the bootstrap SD of the plug-in stands in (conservative).
            se = sd
        contains = (plugin, point["ece_debiased"]) if name == "ece" else (plugin,)
        rate_sd = cal.ece_rate_sd(p, y) if name == "ece" else 0.0
        out[name] = EceConfidence(plugin, plugin, 2 * plugin - float(finite.mean()), sd,
                                  nulls[name], contains, centre, se if np.isfinite(se) else 0.0, rate_sd)
    if "ece" in out:
        out["ece_debiased"] = (replace(out["ece"], estimate=point["ece_debiased"])
                               if isinstance(out["ece"], EceConfidence) else NoConfidence(point["ece_debiased"]))
    return out
