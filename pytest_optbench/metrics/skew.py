"""Inverted-pair Skew and its valence parts (OptimismBench, eqs. 1-2).

Skew_i = P+_i - (100 - P-_i); suite Skew = mean_i Skew_i = delta_plus + delta_minus, with
delta_plus = mean(P+) - 50 and delta_minus = mean(P-) - 50 over the same items.
"""

from __future__ import annotations

import numpy as np

QUADRANTS = {
    (True, False): "optimism",            # good outcomes up, bad outcomes down
    (False, True): "pessimism",
    (True, True): "compound overclaim",   # both sides rated above 50
    (False, False): "compound underclaim",
}


def pair_skews(p_plus: np.ndarray, p_minus: np.ndarray) -> np.ndarray:
    """Per-item Skew from the (sample-averaged) answers to the two questions."""
    return np.asarray(p_plus, dtype=float) - (100.0 - np.asarray(p_minus, dtype=float))


def complement_pairs(p_plus: np.ndarray, p_minus: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Drop items where either side has no usable answer (NaN); both arrays stay aligned."""
    p_plus, p_minus = np.asarray(p_plus, dtype=float), np.asarray(p_minus, dtype=float)
    keep = ~(np.isnan(p_plus) | np.isnan(p_minus))
    return p_plus[keep], p_minus[keep]


def valence_parts(p_plus: np.ndarray, p_minus: np.ndarray) -> tuple[float, float]:
    """(delta_plus, delta_minus): mean deviation of each side from the 50 anchor."""
    return float(np.mean(p_plus) - 50.0), float(np.mean(p_minus) - 50.0)


def quadrant(delta_plus: float, delta_minus: float) -> str:
    """Name of the valence-plane quadrant; "none" on an axis (a part exactly 0) or no data."""
    if not (np.isfinite(delta_plus) and np.isfinite(delta_minus)) or delta_plus == 0 or delta_minus == 0:
        return "none"
    return QUADRANTS[(delta_plus > 0, delta_minus > 0)]
