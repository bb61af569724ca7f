"""Probability-axiom violation checks, on the mean answer (0-100) of each prompt.

A set violates an axiom when its answers break it by more than ``tolerance`` percentage
points. Inputs are arrays with one entry per item (NaN where an answer is missing: such
items are left out, never counted as coherent). A margin of 1e-9 pp keeps floating-point
rounding of sample means from counting as a violation.
"""

from __future__ import annotations

import numpy as np

EPSILON = 1e-9


def conjunction_violations(a: np.ndarray, b: np.ndarray, both: np.ndarray, tolerance: float = 0.0) -> np.ndarray:
    """P(a and b) may not exceed min(P(a), P(b))."""
    return np.asarray(both > np.minimum(a, b) + tolerance + EPSILON, dtype=bool)


def disjunction_violations(a: np.ndarray, b: np.ndarray, either: np.ndarray, tolerance: float = 0.0) -> np.ndarray:
    """P(a or b) may not fall below max(P(a), P(b))."""
    return np.asarray(either < np.maximum(a, b) - tolerance - EPSILON, dtype=bool)


def conditional_violations(a: np.ndarray, b_given_a: np.ndarray, both: np.ndarray, tolerance: float = 0.0) -> np.ndarray:
    """P(a and b) must equal P(a) * P(b | a) (on the 0-100 scale: a * b_given_a / 100)."""
    return np.asarray(np.abs(a * b_given_a / 100.0 - both) > tolerance + EPSILON, dtype=bool)


def dose_response_steps(ladder: np.ndarray, direction: str, tolerance: float = 0.0) -> np.ndarray:
    """For each adjacent pair of rungs: did the answer move against ``direction``?"""
    steps = np.diff(np.asarray(ladder, dtype=float))
    if direction == "increasing":
        return steps < -tolerance - EPSILON
    return steps > tolerance + EPSILON


def complement_violation(p_plus: np.ndarray, p_minus: np.ndarray) -> np.ndarray:
    """Unsigned |P+ + P- - 100| per pair (the signed version is Skew)."""
    return np.asarray(np.abs(np.asarray(p_plus) + np.asarray(p_minus) - 100.0), dtype=float)


def usable(*arrays: np.ndarray) -> np.ndarray:
    """Mask of items where every answer is present."""
    mask = np.ones(np.asarray(arrays[0]).shape, dtype=bool)
    for array in arrays:
        mask &= ~np.isnan(np.asarray(array, dtype=float))
    return mask
