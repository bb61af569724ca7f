"""Gates as tests: the p value of "the bound is crossed", and error control over many gates.

An ``evidence: ci`` gate fails when the whole (1 - alpha) CI lies beyond its bound. That is
a one-sided test of "the true value is on the allowed side" at level alpha / 2, and its p
value is read off the estimate's confidence distribution (``confidence.Confidence``):

    max b       p = p_greater(b)                      (fails when CI low > b)
    min b       p = p_less(b)                         (fails when CI high < b)
    max_abs b   p = min(p_greater(b), p_less(-b))     (fails when CI low > b or high < -b)

so "p < alpha / 2" and "the CI lies beyond the bound" are the same verdict. A session runs
many gates; with each at alpha / 2 the chance that some gate fails although every model is
within its bounds grows with their number. ``adjust`` applies Holm's step-down (family-wise
error at alpha / 2 over the session's gates, any dependence; Holm 1979) or
Benjamini-Hochberg (false discovery rate, positively dependent tests; 1995), and
``failures`` turns adjusted p values into verdicts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .confidence import Confidence
from .stats import CONFIDENCE, benjamini_hochberg, holm

ADJUSTMENTS = ("holm", "bh", "none")
# Bounds on a change against a baseline, as plain bounds on the change (gates.CHANGE_KEYS).
_CHANGE_BOUNDS = {"max_increase": ("max", 1.0), "max_decrease": ("min", -1.0), "max_change": ("max_abs", 1.0)}


def plain_bound(bound_kind: str, bound: float) -> tuple[str, float]:
    """A change bound (max_increase, max_decrease, max_change) as max/min/max_abs on the change."""
    if bound_kind in _CHANGE_BOUNDS:
        kind, sign = _CHANGE_BOUNDS[bound_kind]
        return kind, sign * bound
    if bound_kind not in ("max", "min", "max_abs"):
        raise ValueError(f"unknown bound kind {bound_kind!r}")
    return bound_kind, bound


def p_crossing(confidence: Confidence, bound_kind: str, bound: float) -> float:
    """One-sided p of "the true value lies beyond the bound" (small: it does).

    Consistent with the interval: ``p_crossing(cd, kind, b) < (1 - c) / 2`` exactly when the
    whole ``cd.interval(c)`` lies beyond the bound. NaN without a confidence distribution.
    """
    kind, b = plain_bound(bound_kind, bound)
    if kind == "max":
        return confidence.p_greater(b)
    if kind == "min":
        return confidence.p_less(b)
    return min(confidence.p_greater(b), confidence.p_less(-b))


def ci_crosses(low: float, high: float, bound_kind: str, bound: float) -> bool:
    """The CI rule itself: does the whole [low, high] lie beyond the bound?"""
    kind, b = plain_bound(bound_kind, bound)
    return {"max": low > b, "min": high < b, "max_abs": low > b or high < -b}[kind]


def adjust(p_values: Sequence[float] | np.ndarray, method: str = "holm") -> np.ndarray:
    """Adjusted p values over one session's gates; NaN (gates without a p) stay NaN and do
    not count towards the family."""
    p = np.asarray(p_values, dtype=float)
    if method == "holm":
        return holm(p)
    if method == "bh":
        return benjamini_hochberg(p)
    if method == "none":
        return p.copy()
    raise ValueError(f"adjustment must be one of {', '.join(ADJUSTMENTS)}, got {method!r}")


def failures(p_values: Sequence[float] | np.ndarray, method: str = "holm",
             confidence: float = CONFIDENCE) -> list[bool]:
    """Which gates fail: adjusted one-sided p below (1 - confidence) / 2.

    With ``method="none"`` this is the plain CI rule, gate by gate. NaN never fails.
    """
    threshold = (1.0 - confidence) / 2.0
    return [bool(math.isfinite(q) and q < threshold) for q in adjust(p_values, method)]
