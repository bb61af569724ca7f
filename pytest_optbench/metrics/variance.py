"""Variance decomposition of per-pair Skew across runs (OptimismBench appendix B.5).

Skew_{m,i} = mu + model_m + scenario_i + domain_d + error, fitted by least squares on dummy
codes. Type-II sums of squares: for each factor, the residual sum of squares gained by
dropping it from the full additive model. Note: scenarios are nested in domains, so once
scenario is in the model domain explains nothing more (its Type-II SS is 0); the marginal
share (eta squared of the factor alone) is reported beside it for that reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FactorShare:
    factor: str
    sum_of_squares: float  # Type II
    share: float  # of the total sum of squares
    marginal_share: float  # eta squared, the factor alone
    levels: int


def _design(columns: Sequence[np.ndarray], n: int) -> np.ndarray:
    """Intercept plus treatment-coded dummies for each factor column."""
    parts = [np.ones((n, 1))]
    for column in columns:
        levels = sorted(set(column.tolist()))
        for level in levels[1:]:
            parts.append((column == level).astype(float)[:, None])
    return np.hstack(parts)


def _rss(y: np.ndarray, x: np.ndarray) -> float:
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    residual = y - x @ coef
    return float(residual @ residual)


def decompose(rows: Sequence[Mapping[str, object]], response: str, factors: Sequence[str]) -> tuple[list[FactorShare], float]:
    """Type-II shares of the total sum of squares; returns (factor shares, residual share)."""
    y = np.array([float(r[response]) for r in rows])  # type: ignore[arg-type]
    if y.size < 2:
        raise ValueError("need at least two observations")
    columns = {f: np.array([str(r[f]) for r in rows]) for f in factors}
    total = float(((y - y.mean()) ** 2).sum())
    full = _rss(y, _design([columns[f] for f in factors], y.size))
    shares = []
    for factor in factors:
        reduced = _rss(y, _design([columns[f] for f in factors if f != factor], y.size))
        alone = total - _rss(y, _design([columns[factor]], y.size))
        ss = max(reduced - full, 0.0)
        shares.append(FactorShare(
            factor, ss, ss / total if total else float("nan"),
            alone / total if total else float("nan"), len(set(columns[factor].tolist())),
        ))
    return shares, (full / total if total else float("nan"))
