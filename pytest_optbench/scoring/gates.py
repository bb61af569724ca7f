"""thresholds.yaml -> ``Gate`` objects -> verdicts over aggregates.

Pure. A gate is a small object with ``check(aggregate)`` returning a message when it fails
(the shape pytest-benchmark uses for its thresholds), so verdicts are easy to test.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..didyoumean import hint
from ..metrics.stats import benjamini_hochberg, holm
from ..suites import SuiteError, read_yaml
from ..text import one_line, shown
from .aggregate import METRIC_KINDS, VIOLATION_METRICS, Aggregate, metric_applies
from .baseline import Comparison
from .gate_reasons import NO_BASELINE, ONLY_WITH, unmatched_reason, unshared_reason
from .minimum_data import MEAN_MIN_N, default_min_n, shortfall, total_for, unit, usable_text
from .tolerances import effective_tolerance

BOUND_KEYS = ("max", "min", "max_abs")
# Bounds on the change against a baseline run (current - baseline), and the plain bound each
# one is on the change: an increase of at most b is "change <= b", and so on.
CHANGE_KEYS = {"max_increase": "max", "max_decrease": "min", "max_change": "max_abs"}
EVIDENCE = ("point", "ci")
GATE_KEYS = ("metric", *BOUND_KEYS, *CHANGE_KEYS, "suites", "conditions", "evidence", "tolerance", "min_n")

PASS, FAIL, NOT_EVALUATED = "pass", "fail", "not evaluated"
EFFECT_METRICS = ("condition_effect", "skew_effect", "narrative_susceptibility")


class ThresholdsError(ValueError):
    """thresholds.yaml is malformed; ``str(err)`` is one sentence naming file, gate and key."""


@dataclass(frozen=True)
class Gate:
    metric: str
    bound_kind: str  # max | min | max_abs
    bound: float
    evidence: str = "point"
    suites: tuple[str, ...] = ()  # globs; empty = every suite the metric applies to
    conditions: tuple[str, ...] = ()  # globs; empty = every condition
    tolerance: float | None = None
    line: int = 0
    min_n: int | None = None  # None: the documented default (scoring/minimum_data.py)

    @property
    def is_change(self) -> bool:
        return self.bound_kind in CHANGE_KEYS

    @property
    def tolerance_used(self) -> float | None:
        """The tolerance a violation-rate gate is judged at: its own, else the metric's default."""
        return effective_tolerance(self.metric, self.tolerance)

    @property
    def required_n(self) -> int:
        """Items (checks, answers) a verdict needs: ``min_n``, else the default for the metric."""
        if self.min_n is not None:
            return self.min_n
        if self.is_change:
            return MEAN_MIN_N
        return default_min_n(self.metric, self.bound_kind, self.bound)

    @property
    def bound_text(self) -> str:
        return {
            "max": f"<= {self.bound:g}", "min": f">= {self.bound:g}", "max_abs": f"|x| <= {self.bound:g}",
            "max_increase": f"increase <= {self.bound:g}", "max_decrease": f"decrease <= {self.bound:g}",
            "max_change": f"|change| <= {self.bound:g}",
        }[self.bound_kind]

    def _plain(self) -> tuple[str, float]:
        """The bound as max/min/max_abs on the value (on the change, for change gates)."""
        if self.bound_kind == "max_decrease":
            return "min", -self.bound
        return CHANGE_KEYS.get(self.bound_kind, self.bound_kind), self.bound

    def matches(self, suite: str, condition: str) -> bool:
        suite_ok = not self.suites or any(fnmatch.fnmatchcase(suite, g) for g in self.suites)
        cond_ok = not self.conditions or any(fnmatch.fnmatchcase(condition, g) for g in self.conditions)
        return suite_ok and cond_ok

    def check(self, value: float, low: float, high: float) -> str | None:
        """None when the evidence holds the bound, else why not."""
        kind, bound = self._plain()
        if self.evidence == "ci":
            # Fail only when the whole CI lies beyond the bound.
            beyond = {
                "max": low > bound,
                "min": high < bound,
                "max_abs": low > bound or high < -bound,
            }[kind]
            return "the whole 95% CI lies beyond the bound" if beyond else None
        holds = {
            "max": value <= bound,
            "min": value >= bound,
            "max_abs": abs(value) <= bound,
        }[kind]
        return None if holds else "the estimate is beyond the bound"


@dataclass(frozen=True)
class Verdict:
    gate: Gate
    suite: str | None
    condition: str | None
    verdict: str
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0
    reason: str = ""
    p_value: float | None = None  # the aggregate's own test (e.g. Skew vs 0)
    p_holm: float | None = None  # adjusted over every evaluated gate of the run
    p_bh: float | None = None
    n_total: int | None = None  # items (checks, answers) there were in all; n of them were usable

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.gate.metric, "suite": self.suite, "condition": self.condition,
            "bound": self.gate.bound, "bound_kind": self.gate.bound_kind,
            "bound_text": self.gate.bound_text, "evidence": self.gate.evidence,
            "value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high, "n": self.n,
            "verdict": self.verdict, "reason": self.reason, "tolerance": self.gate.tolerance_used,
            "min_n": self.gate.required_n, "n_total": self.n_total,
            "p_value": self.p_value, "p_holm": self.p_holm, "p_bh": self.p_bh,
        }


def load_thresholds(path: Path, display: str | None = None) -> list[Gate]:
    display = display or str(path)
    try:
        data = read_yaml(path, display)
    except SuiteError as exc:
        raise ThresholdsError(str(exc)) from None
    return parse_thresholds(data, display)


def _err(display: str, index: int | None, line: int | None, key: str | None, message: str) -> ThresholdsError:
    parts = [display]
    if index is not None:
        parts.append(f"gate {index + 1}" + (f" (line {line})" if line else ""))
    if key:
        parts.append(f"key '{key}'")
    # Messages quote the offending value: keep them one short line whatever it holds.
    return ThresholdsError(one_line(", ".join(parts), 300) + f": {one_line(message, 2000).rstrip('.')}.")


def parse_thresholds(data: Any, display: str) -> list[Gate]:
    if data is None:
        return []
    if not isinstance(data, Mapping):
        raise _err(display, None, None, None, "must be a mapping with 'optbench: 1' and 'gates'")
    if data.get("optbench") != 1 or isinstance(data.get("optbench"), bool):
        raise _err(display, None, None, "optbench", f"must be 1 (the format version), got {data.get('optbench')!r}")
    unknown = set(data) - {"optbench", "gates"}
    if unknown:
        key = min(map(str, unknown))
        raise _err(display, None, None, key, f"unknown top-level key{hint(key, ('optbench', 'gates'))} "
                   "(allowed: optbench, gates)")
    raw_gates = data.get("gates") or []
    if not isinstance(raw_gates, list):
        raise _err(display, None, None, "gates", "must be a list of gates")
    return [_parse_gate(display, i, raw) for i, raw in enumerate(raw_gates)]


def _number(display: str, index: int, line: int | None, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _err(display, index, line, key, f"must be a number, got {shown(value)}")
    try:
        number = float(value)  # an integer beyond 1e308 overflows
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise _err(display, index, line, key, f"must be a finite number, got {shown(value)}")
    return number


def _globs(display: str, index: int, line: int | None, key: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        example = '["track-b-*"]' if key == "suites" else '["base"]'
        what = "suite-id" if key == "suites" else "condition-name"
        raise _err(display, index, line, key, f"must be a list of {what} globs such as {example}")
    return tuple(value)


def _parse_gate(display: str, index: int, raw: Any) -> Gate:
    line = getattr(raw, "line", None)
    if not isinstance(raw, Mapping):
        raise _err(display, index, line, None, "each gate must be a mapping with 'metric' and a bound")
    for key in raw:
        if key not in GATE_KEYS:
            raise _err(display, index, line, str(key),
                       f"unknown gate key{hint(str(key), GATE_KEYS)} (allowed: {', '.join(GATE_KEYS)})")
    metric = raw.get("metric")
    if metric is None:
        raise _err(display, index, line, "metric", "is required")
    if not isinstance(metric, str) or metric not in METRIC_KINDS:
        close = hint(metric, METRIC_KINDS) if isinstance(metric, str) else ""
        raise _err(display, index, line, "metric", f"unknown metric {metric!r}{close} (known: {', '.join(METRIC_KINDS)})")
    bounds = [k for k in (*BOUND_KEYS, *CHANGE_KEYS) if k in raw]
    if len(bounds) != 1:
        raise _err(display, index, line, bounds[1] if bounds else None,
                   "a gate needs exactly one of the bounds max, min, max_abs, max_increase, max_decrease, max_change")
    bound_kind = bounds[0]
    bound = _number(display, index, line, bound_kind, raw[bound_kind])
    if bound_kind in ("max_abs", *CHANGE_KEYS) and bound < 0:
        raise _err(display, index, line, bound_kind, "must not be negative")
    evidence = raw.get("evidence", "point")
    if evidence not in EVIDENCE:
        raise _err(display, index, line, "evidence", f"must be 'point' or 'ci', got {evidence!r}")
    tolerance = None
    if "tolerance" in raw:
        if metric not in VIOLATION_METRICS:
            raise _err(display, index, line, "tolerance", f"applies only to violation-rate metrics, not {metric}")
        tolerance = _number(display, index, line, "tolerance", raw["tolerance"])
        if tolerance < 0:
            raise _err(display, index, line, "tolerance", "must not be negative")
    min_n = None
    if "min_n" in raw:
        value = raw["min_n"]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise _err(display, index, line, "min_n", f"must be a whole number of at least 1, got {value!r}")
        min_n = value
    return Gate(
        metric=metric, bound_kind=bound_kind, bound=bound, evidence=evidence,
        suites=_globs(display, index, line, "suites", raw.get("suites")),
        conditions=_globs(display, index, line, "conditions", raw.get("conditions")),
        tolerance=tolerance, line=line or 0, min_n=min_n,
    )


def evaluate(
    gates: Sequence[Gate],
    aggregates: Iterable[Aggregate],
    suite_kinds: Mapping[str, Sequence[str]],
    comparison: Comparison | None = None,
    totals: Mapping[tuple[str, str, str], int] | None = None,
) -> list[Verdict]:
    """A verdict per gate x (suite, condition) it matches; ``not evaluated`` where none ran.

    ``suite_kinds`` maps each suite that ran to the item kinds it holds, so that a gate
    without ``suites`` covers exactly the suites its metric applies to. ``totals`` gives
    how many items (checks, answers) each (suite, condition, metric) had in all, for
    "2 of 60 pairs usable"; see ``minimum_data.possible_n``.
    """
    totals = totals or {}
    by_key = {(a.suite, a.condition, a.metric, a.tolerance): a for a in aggregates if a.domain is None}
    # The arms that ran (every arm has a parse_rate); effect metrics add their own labels
    # such as "narrative_up-narrative_down".
    arms = {(s, c) for s, c, m, _t in by_key if m == "parse_rate"}
    verdicts: list[Verdict] = []
    for gate in gates:
        if gate.is_change:
            verdicts.extend(_change_verdicts(gate, comparison))
            continue
        rows = []
        labels = {(s, c) for s, c, m, _t in by_key if m == gate.metric}
        if gate.metric not in EFFECT_METRICS:  # effects exist only for the arms compared with base
            labels |= arms
        for suite in sorted(suite_kinds):
            if not metric_applies(gate.metric, suite_kinds[suite]) and not gate.suites:
                continue
            if gate.metric == "calibration_error" and not gate.suites and not any(
                    s == suite and m == gate.metric for s, _c, m, _t in by_key):
                continue  # computed only from items with a stated rate (Track A)
            for condition in sorted(c for s, c in labels if s == suite):
                if gate.matches(suite, condition):
                    agg = by_key.get((suite, condition, gate.metric, gate.tolerance_used))
                    total = total_for(totals, suite, condition, gate.metric)
                    rows.append(_verdict(gate, suite, condition, agg, suite_kinds[suite], total))
        if not rows:
            by_suite: dict[str, set[str]] = {}
            for s, c in labels:
                by_suite.setdefault(s, set()).add(c)
            rows.append(Verdict(gate, None, None, NOT_EVALUATED,
                                reason=unmatched_reason(gate, suite_kinds, by_suite)))
        verdicts.extend(rows)
    return _adjust(verdicts)


def _change_verdicts(gate: Gate, comparison: Comparison | None) -> list[Verdict]:
    """Gates on the change against the baseline, one per (suite, condition) both runs share."""
    if comparison is None:
        return [Verdict(gate, None, None, NOT_EVALUATED, reason=NO_BASELINE)]
    rows = []
    for change in comparison.changes:
        if change.metric != gate.metric or not gate.matches(change.suite, change.condition):
            continue
        if change.tolerance != gate.tolerance_used:
            continue  # a violation rate at another tolerance than this gate's
        if not math.isfinite(change.delta):
            rows.append(Verdict(gate, change.suite, change.condition, NOT_EVALUATED, n=change.n,
                                reason="no usable answers in one of the runs"))
            continue
        if (short := shortfall(change.n, None, gate.required_n, unit(gate.metric, change=True))) is not None:
            rows.append(Verdict(gate, change.suite, change.condition, NOT_EVALUATED, change.delta, n=change.n,
                                reason=short))
            continue
        low, high = change.ci_low, change.ci_high
        if gate.evidence == "ci" and not (math.isfinite(low) and math.isfinite(high)):
            rows.append(Verdict(gate, change.suite, change.condition, NOT_EVALUATED, change.delta, n=change.n,
                                reason="too few shared items for a confidence interval"))
            continue
        failure = gate.check(change.delta, low, high)
        rows.append(Verdict(gate, change.suite, change.condition, FAIL if failure else PASS, change.delta,
                            low if math.isfinite(low) else None, high if math.isfinite(high) else None,
                            n=change.n, reason=failure or "", p_value=change.p_value))
    shared = {(c.suite, c.condition) for c in comparison.changes}
    return rows or [Verdict(gate, None, None, NOT_EVALUATED, reason=unshared_reason(gate, shared))]


def _adjust(verdicts: list[Verdict]) -> list[Verdict]:
    """Many gates are many tests: add Holm and Benjamini-Hochberg adjusted p values."""
    raw = np.array([v.p_value if v.p_value is not None else np.nan for v in verdicts], dtype=float)
    by_holm, by_bh = holm(raw), benjamini_hochberg(raw)
    return [
        replace(v, p_holm=float(h), p_bh=float(b)) if np.isfinite(h) else v
        for v, h, b in zip(verdicts, by_holm, by_bh)
    ]


def _verdict(gate: Gate, suite: str, condition: str, agg: Aggregate | None, kinds: Sequence[str],
             total: int | None = None) -> Verdict:
    what = unit(gate.metric)
    if agg is None:
        if not metric_applies(gate.metric, kinds):
            reason = f"{gate.metric} does not apply to the items of this suite"
        elif gate.metric in ONLY_WITH:
            reason = f"{gate.metric} is computed only with {ONLY_WITH[gate.metric]}; pass it or drop the gate"
        else:
            reason = f"no usable answers: {usable_text(0, total, what)}"
        return Verdict(gate, suite, condition, NOT_EVALUATED, reason=reason, n_total=total)
    value, low, high = agg.value, agg.ci_low, agg.ci_high
    if not math.isfinite(value):
        return Verdict(gate, suite, condition, NOT_EVALUATED, n=agg.n, n_total=total,
                       reason=f"no usable answers: {usable_text(agg.n, total, what)}")
    if (short := shortfall(agg.n, total, gate.required_n, what)) is not None:
        return Verdict(gate, suite, condition, NOT_EVALUATED, value, n=agg.n, n_total=total, reason=short)
    if gate.evidence == "ci" and not (math.isfinite(low) and math.isfinite(high)):
        return Verdict(gate, suite, condition, NOT_EVALUATED, value, n=agg.n, n_total=total,
                       reason="too few items for a confidence interval")
    failure = gate.check(value, low, high)
    ci = (low if math.isfinite(low) else None, high if math.isfinite(high) else None)
    p = agg.p_value if agg.p_value is not None and math.isfinite(agg.p_value) else None
    return Verdict(gate, suite, condition, FAIL if failure else PASS, value, *ci, n=agg.n,
                   reason=failure or "", p_value=p, n_total=total)
