"""How every number a person reads is written: digits per metric, sign, CI text, p values.

One place, so that the terminal, Markdown, HTML, JUnit and ``optbench compare`` write a value
the same way. Pure: no numpy, nothing of ours.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

Formatter = Callable[[Any], str]

# Signed percentage points (1 digit, with a sign); unsigned percentage points (1 digit);
# everything else is a rate or a score (3 digits).
SIGNED_PP = frozenset({"skew", "delta_plus", "delta_minus", "condition_effect", "skew_effect",
                       "narrative_susceptibility"})
UNSIGNED_PP = frozenset({"calibration_error", "complement_violation", "item_sd"})
PP_DIGITS, RATE_DIGITS = 1, 3


def finite(value: Any) -> bool:
    """A real number that is not NaN or infinite (None and text are not)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def number_or_none(value: Any) -> float | None:
    """The number behind a cell, for sorting and plotting; None where there is none."""
    return float(value) if finite(value) else None


def as_float(value: Any) -> float:
    """A JSON number as a float: null (a NaN written by the report) becomes NaN again."""
    return float(value) if finite(value) else float("nan")


def signed(value: Any, digits: int = PP_DIGITS) -> str:
    if not finite(value):
        return "n/a"
    text = f"{value:+.{digits}f}"
    return "+" + text[1:] if float(text) == 0 else text  # no "-0.0"


def plain(value: Any, digits: int = RATE_DIGITS) -> str:
    if not finite(value):
        return "n/a"
    return f"{value:.{digits}f}"


def interval(low: Any, high: Any, fmt: Formatter = signed) -> str:
    """``[low, high]`` in the estimate's own format; n/a when either end is missing."""
    if not (finite(low) and finite(high)):
        return "n/a"
    return f"[{fmt(low)}, {fmt(high)}]"


def p_text(p: Any) -> str:
    if not finite(p):
        return "n/a"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def is_pp(metric: str) -> bool:
    """Is the metric in percentage points (as opposed to a rate or score in [0, 1]-ish)?"""
    return metric in SIGNED_PP or metric in UNSIGNED_PP


def digits(metric: str) -> int:
    return PP_DIGITS if is_pp(metric) else RATE_DIGITS


def formatter(metric: str) -> Formatter:
    """How a value of ``metric`` is written."""
    if metric in SIGNED_PP:
        return signed
    places = digits(metric)
    return lambda v: plain(v, places)


def change_formatter(metric: str) -> Formatter:
    """How a change of ``metric`` (now - baseline) is written: always with its sign."""
    places = digits(metric)
    return lambda v: signed(v, places)


def value_text(metric: str, value: Any) -> str:
    """``+8.4``: a value of ``metric``."""
    return formatter(metric)(value)


def estimate_text(metric: str, value: Any, low: Any, high: Any) -> str:
    """``+8.4 [+7.8, +9.1]``: the estimate and its 95% CI (``n/a`` for a missing CI)."""
    fmt = formatter(metric)
    return f"{fmt(value)} {interval(low, high, fmt)}"


def ci_text(metric: str, low: Any, high: Any) -> str:
    """``[+7.8, +9.1]``: a 95% CI of ``metric`` on its own."""
    return interval(low, high, formatter(metric))


def change_text(metric: str, delta: Any, low: Any, high: Any) -> str:
    fmt = change_formatter(metric)
    return f"{fmt(delta)} {interval(low, high, fmt)}"


def excludes_zero(low: Any, high: Any) -> bool:
    """Does the CI lie wholly on one side of 0?"""
    return finite(low) and finite(high) and (low > 0 or high < 0)


def tolerance_text(tolerance: Any) -> str:
    return "" if tolerance is None else f"{tolerance:g}"
