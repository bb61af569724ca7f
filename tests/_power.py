"""Power at a printed detectable crossing, by brute force: the check the power tests share."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pytest_optbench.metrics import gate_tests
from pytest_optbench.metrics.confidence import studentized_bootstrap
from pytest_optbench.metrics.power import detectable_crossing


def caught_at_printed_crossing(draw: Callable[[np.random.Generator], np.ndarray], truth: float, side: str,
                               rng: np.random.Generator, pilots: int = 60, runs: int = 400,
                               resamples: int = 500) -> float:
    """How often a mean's gate whose bound lies the median printed crossing (over ``pilots``
    samples from ``draw``) short of the truth (``max``) or beyond it (``min``) fails on fresh
    samples: the power the crossing promises as 0.8."""
    printed = float(np.median([detectable_crossing(studentized_bootstrap(draw(rng), rng, resamples), side=side)
                               for _ in range(pilots)]))
    bound = truth - printed if side == "max" else truth + printed
    return float(np.mean([gate_tests.p_crossing(studentized_bootstrap(draw(rng), rng, resamples), side, bound) < 0.025
                          for _ in range(runs)]))
