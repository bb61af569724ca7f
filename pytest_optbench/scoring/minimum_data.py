"""No verdict without data: how many items a gate needs, and how many there were.

Pure. Every aggregate rests on ``n`` usable items (pairs, checks, answers); below a gate's
``min_n`` the gate is ``not evaluated`` ("2 of 60 pairs usable"), never PASS or FAIL. The
defaults come from the test behind each kind of CI, as the smallest n at which the data
could decide the gate at all:

* Rates (violation, parse, refusal and error rates) have exact Clopper-Pearson CIs, the
  inversion of the exact binomial test. With n checks the 95% CI can lie wholly above a
  bound ``b`` only when 0.025 ** (1 / n) > b (every check a violation), and wholly below it
  only when 1 - 0.025 ** (1 / n) < b (none). Below that n an ``evidence: ci`` gate cannot
  fail whatever the answers: its PASS says nothing. ``max: 0.10`` needs 2 checks,
  ``max: 0.25`` 3, ``max: 0.50`` 6; ``min: 0.95`` 2.
* Means over items (Skew and its parts, calibration error, the binary family, condition
  effects) and every change against a baseline are tested with exact sign-flip or
  Wilcoxon signed-rank tests, whose smallest two-sided p is 2 / 2**n: no result of fewer
  than 6 items can be significant at 5% (2 / 2**5 = 0.0625), and a bootstrap CI of so few
  values claims more than they hold. These need 6.

A gate's ``min_n:`` in thresholds.yaml replaces the default (``min_n: 1`` turns it off).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping

from ..kinds import kind_of, uses, violation_metric
from ..kinds.base import VIOLATION
from ..records.item import ItemRecord
from .families import BINARY_METRICS

CONFIDENCE = 0.95
MEAN_MIN_N = 6  # smallest n with 2 / 2**n < 0.05
PAIR_METRICS = frozenset({"skew", "delta_plus", "delta_minus", "complement_violation", "calibration_error"})
ANSWER_METRICS = frozenset({"parse_rate", "refusal_rate", "error_rate"})


def is_rate(metric: str) -> bool:
    """Is this metric a rate of checks or answers (with an exact binomial CI)?"""
    return metric in ANSWER_METRICS or metric.endswith("_violation_rate")


def rate_min_n(bound_kind: str, bound: float, confidence: float = CONFIDENCE) -> int:
    """Smallest n at which an exact CI of a rate can lie wholly beyond ``bound``."""
    tail = (1 - confidence) / 2
    # A max (or max_abs) bound is crossed by a CI above it; a min bound by a CI below it.
    edge = bound if bound_kind in ("max", "max_abs") else 1 - bound
    if not 0 < edge < 1:
        return 1  # a bound at or beyond the ends of [0, 1]: one check decides it, or none can
    return math.floor(math.log(tail) / math.log(edge)) + 1


def default_min_n(metric: str, bound_kind: str, bound: float) -> int:
    """The documented default of a gate's ``min_n``."""
    if is_rate(metric) and bound_kind in ("max", "min", "max_abs"):
        return max(1, rate_min_n(bound_kind, bound))
    return MEAN_MIN_N  # means over items, and every change against a baseline


def unit(metric: str, change: bool = False) -> str:
    """What a metric's n counts, for sentences such as "2 of 60 pairs usable"."""
    if change:
        return "items shared with the baseline"
    if metric in PAIR_METRICS or metric == "skew_effect":
        return "pairs"
    if metric.endswith("_violation_rate"):
        return "checks"
    if metric in ANSWER_METRICS:
        return "answers"
    if metric == "item_sd":
        return "prompts"
    return "items"


def possible_n(records: Iterable[ItemRecord]) -> dict[tuple[str, str, str], int]:
    """(suite, condition, metric) -> how many items (checks, answers) there were in all, so
    that "n usable" can be read against it."""
    groups: dict[tuple[str, str], list[ItemRecord]] = defaultdict(list)
    for record in records:
        groups[(record.suite, record.condition)].append(record)
    out: dict[tuple[str, str, str], int] = {}
    for (suite, condition), group in groups.items():
        counts: dict[str, int] = defaultdict(int)
        for r in group:
            answers = r.answers()
            counts["error_rate"] += len(answers)
            counts["parse_rate"] += sum(1 for a in answers if a.error is None)
            counts["refusal_rate"] += sum(1 for a in answers if a.value is not None)
            counts["item_sd"] += len(r.prompts)
            if r.kind == "inverted_pair":
                for metric in ("skew", "delta_plus", "delta_minus", "complement_violation"):
                    counts[metric] += 1
                counts["calibration_error"] += r.expected is not None
            elif r.kind == "binary":
                counts["binary"] += 1
            elif uses(r.kind, VIOLATION):
                kind = kind_of(r.kind)
                counts[violation_metric(kind)] += kind.checks(r)
        for metric, count in counts.items():
            if count:
                out[(suite, condition, metric)] = count
    return out


def total_for(totals: Mapping[tuple[str, str, str], int], suite: str, condition: str, metric: str) -> int | None:
    """The possible n of one gate row (binary metrics share the count of binary items)."""
    key = (suite, condition, metric)
    if key in totals:
        return totals[key]
    if metric in BINARY_METRICS:
        return totals.get((suite, condition, "binary"))
    return None


def usable_text(n: int, total: int | None, what: str) -> str:
    """``"2 of 60 pairs usable"`` (``"2 pairs usable"`` when the total is unknown). Answer
    metrics (parse_rate ...) count every answer, read or not: "1 of 1 answers", not usable."""
    usable = "" if what == "answers" else " usable"
    return f"{n} of {total} {what}{usable}" if total is not None else f"{n} {what}{usable}"


def shortfall(n: int, total: int | None, min_n: int, what: str) -> str | None:
    """The not-evaluated reason when ``n`` is below ``min_n``, else None."""
    if n >= min_n:
        return None
    return f"{usable_text(n, total, what)}, fewer than min_n {min_n}"
