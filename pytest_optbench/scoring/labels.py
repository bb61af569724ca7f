"""Quadrant labels that the statistics support.

Pure. OptimismBench names a quadrant of the valence plane by the signs of delta_plus and
delta_minus (optimism: +, -; pessimism: -, +; compound overclaim: +, +; compound
underclaim: -, -). Read off point estimates, a sign that is noise flips the name: planted
optimism with d+ = +10 and d- = -2 reads "compound overclaim" in about one run in five
with 30 items. So a sign counts only where its 95% CI excludes 0:

* no label ("none") unless Skew's own CI excludes 0: a coherent model on unfavourable
  scenarios also has d+ < 0 < d-, and that is no tilt;
* both signs established: the paper's quadrant;
* one sign established: the side it shows, in the paper's words for such a model
  ("good-side pessimism": d+ < 0 with d- near 0), with the other part stated:
  "good-side optimism (d- not distinguishable from 0)" for d+ > 0, "bad-side pessimism
  (d+ not distinguishable from 0)" for d- > 0;
* neither established: the sign of Skew only, "positive skew (neither d+ nor d- ...)";
* fewer than 6 usable pairs: no name at all ("none (2 pairs)"), as for gates (min_n): the
  CI of so few values backs nothing.
"""

from __future__ import annotations

import math

from ..metrics.skew import quadrant
from .minimum_data import MEAN_MIN_N

NONE = "none"


def excludes_zero(low: float, high: float) -> bool:
    return math.isfinite(low) and math.isfinite(high) and (low > 0 or high < 0)


def established_sign(value: float, low: float, high: float) -> int:
    """+1 or -1 when the CI lies wholly on that side of 0, else 0."""
    if not excludes_zero(low, high) or not math.isfinite(value):
        return 0
    return 1 if low > 0 else -1


def quadrant_label(skew: tuple[float, float, float], plus: tuple[float, float, float],
                   minus: tuple[float, float, float], n: int | None = None) -> str:
    """The label for (value, ci_low, ci_high) of Skew, delta_plus and delta_minus over ``n``
    usable pairs."""
    if n is not None and 0 < n < MEAN_MIN_N:
        return f"{NONE} ({n} pair{'s' if n > 1 else ''})"
    skew_sign = established_sign(*skew)
    if skew_sign == 0:
        return NONE
    plus_sign, minus_sign = established_sign(*plus), established_sign(*minus)
    if plus_sign and minus_sign:
        return quadrant(plus[0], minus[0])
    if plus_sign:  # good outcomes up is the optimistic side, down the pessimistic one
        return ("good-side optimism" if plus_sign > 0 else "good-side pessimism") + " (d- not distinguishable from 0)"
    if minus_sign:  # bad outcomes down is the optimistic side
        return ("bad-side optimism" if minus_sign < 0 else "bad-side pessimism") + " (d+ not distinguishable from 0)"
    return ("positive" if skew_sign > 0 else "negative") + " skew (neither d+ nor d- distinguishable from 0)"
