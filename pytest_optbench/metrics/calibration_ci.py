"""Which interval each known-answer (binary) metric gets, all from one set of item resamples.

* Means of per-item scores (Brier, log loss, overconfidence, the leave-one-out recalibrated
  Brier): bootstrap-t floored at Student's t (``confidence.StudentizedBootstrap``), within
  the score's range. Accuracy, a share of independent items: Clopper-Pearson.
* Functions of the base rate alone (climatology Brier and uncertainty r (1 - r), the
  shrinkage centre b = r, the out-of-sample climatology b^2 + r (1 - 2b)): the image of the
  Wilson interval of r (``rates.base_rate_confidence``). These are fixed when the mix of
  outcomes is fixed by design (a balanced set): the interval then describes a set drawn at
  random from the same population, as every other interval here does.
* ECE (plug-in) and the debiased ECE: one interval for the population ECE
  (``confidence.EceConfidence``), containing both estimates.
* The rest (AUC, skill scores, reliability, resolution, the within-bin terms, shrinkage a):
  bias-corrected percentile (``confidence.bootstrap_confidence``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from . import calibration as cal
from .confidence import (
    NATURAL_BOUNDS,
    BetaConfidence,
    Confidence,
    EceConfidence,
    NoConfidence,
    bootstrap_confidence,
    studentized_from_draws,
)
from .rates import base_rate_confidence
from .resample import bootstrap_draws, weighted_mean_se

ECE_NULL_DRAWS = 2_000  # enough for the 95% quantile of the calibrated-model ECE
_SE = "\x1fse:"  # key prefix of the per-resample standard errors


def _base_rate_metrics(base_rate: float | None) -> dict[str, tuple[Callable[[float], float], tuple[float, ...]]]:
    spread = (lambda r: r * (1 - r), (0.5,))
    out: dict[str, tuple[Callable[[float], float], tuple[float, ...]]] = {
        "climatology_brier": spread, "uncertainty": spread, "shrinkage_b": (lambda r: r, ()),
    }
    if base_rate is not None:
        b = float(base_rate)
        out["climatology_brier_oos"] = (lambda r: b * b + r * (1 - 2 * b), ())
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
            out[name] = studentized_from_draws(value, float(point_all[_SE + name]), n, draws[name], draws[_SE + name],
                                               NATURAL_BOUNDS.get(name))
        elif name in rate_metrics:
            g, critical = rate_metrics[name]
            out[name] = base_rate_confidence(successes, n, g, critical)
        elif name not in ("ece", "ece_debiased"):
            out[name] = bootstrap_confidence(draws[name], value)
    out.update(_ece_confidences(p, point, draws.get("ece"), rng, n_resamples))
    return point, out


def _ece_confidences(p: np.ndarray, point: Mapping[str, float], draws: np.ndarray | None,
                     rng: np.random.Generator, n_resamples: int) -> dict[str, Confidence]:
    plugin, debiased = point.get("ece", float("nan")), point["ece_debiased"]
    if draws is None or not np.isfinite(plugin):
        return {"ece": NoConfidence(plugin), "ece_debiased": NoConfidence(debiased)}
    finite = draws[np.isfinite(draws)]
    if finite.size < 2:
        return {"ece": NoConfidence(plugin), "ece_debiased": NoConfidence(debiased)}
    null = np.sort(cal.ece_null_draws(p, min(n_resamples, ECE_NULL_DRAWS), rng))
    plugin_cd = EceConfidence(plugin, plugin, 2 * plugin - float(finite.mean()), float(finite.std(ddof=1)),
                              null, (plugin, debiased))
    return {"ece": plugin_cd, "ece_debiased": replace(plugin_cd, estimate=debiased)}
