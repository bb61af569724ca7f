"""thresholds.yaml -> ``Gate`` objects: the keys, their checks and one-sentence errors.

Pure. A gate is a small object with ``check(aggregate)`` returning a message when it fails
(the shape pytest-benchmark uses for its thresholds), so verdicts are easy to test; the
verdicts themselves are ``evaluate.py``'s.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ...metrics.gate_tests import ADJUSTMENTS
from ...metrics.stats import CONFIDENCE
from ...text.didyoumean import hint
from ...text.display import one_line, shown
from ...text.yaml_input import YamlError, read_yaml
from ..aggregate import METRIC_KINDS, VIOLATION_METRICS
from ..minimum_data import MEAN_MIN_N, default_min_n
from ..tolerances import effective_tolerance

BOUND_KEYS = ("max", "min", "max_abs")
# Bounds on the change against a baseline run (current - baseline), and the plain bound each
# one is on the change: an increase of at most b is "change <= b", and so on.
CHANGE_KEYS = {"max_increase": "max", "max_decrease": "min", "max_change": "max_abs"}
EVIDENCE = ("point", "ci")
GATE_KEYS = ("metric", *BOUND_KEYS, *CHANGE_KEYS, "suites", "conditions", "evidence", "tolerance", "min_n")

PASS, FAIL, NOT_EVALUATED = "pass", "fail", "not evaluated"
EFFECT_METRICS = ("condition_effect", "skew_effect", "narrative_susceptibility")
# Error control over the session's ``evidence: ci`` gates (thresholds.yaml ``multiplicity:``,
# --optbench-multiplicity): Holm by default, the family-wise error of the gate verdicts.
MULTIPLICITY = ADJUSTMENTS
DEFAULT_MULTIPLICITY = "holm"
MULTIPLICITY_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no correction"}
# A CI gate is a one-sided test at (1 - confidence) / 2 (metrics/gate_tests.py).
GATE_ALPHA = (1.0 - CONFIDENCE) / 2.0
THRESHOLDS_KEYS = ("optbench", "gates", "multiplicity")


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
    source: str = ""  # the thresholds file it came from, as shown (one of several --thresholds)
    # The suite ids it may judge at most (the bundled default gates judge only the bundled
    # suites); None: every suite its globs match.
    scope: frozenset[str] | None = None

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
        if self.scope is not None and suite not in self.scope:
            return False
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
class Thresholds:
    """A thresholds file: its gates and its optional ``multiplicity`` (None: not set)."""

    gates: list[Gate]
    multiplicity: str | None = None


def read_thresholds(path: Path, display: str | None = None) -> Thresholds:
    display = display or str(path)
    try:
        data = read_yaml(path, display)
    except YamlError as exc:
        raise ThresholdsError(str(exc)) from None
    return Thresholds(parse_thresholds(data, display), parse_multiplicity(data, display))


def read_thresholds_files(files: Sequence[tuple[Path, str]]) -> Thresholds:
    """Several thresholds files (``--thresholds`` repeated): their gates add up, each gate
    keeping its file; their ``multiplicity`` settings must agree."""
    gates: list[Gate] = []
    chosen: tuple[str, str] | None = None  # (multiplicity, the file that set it)
    for path, display in files:
        read = read_thresholds(path, display)
        gates += [replace(g, source=display) for g in read.gates]
        if read.multiplicity is not None:
            if chosen is not None and chosen[0] != read.multiplicity:
                raise _err(display, None, None, "multiplicity", f"is {read.multiplicity!r}, but {chosen[1]} sets "
                           f"{chosen[0]!r}; the gates of one run have one error control: set it in one file")
            chosen = (read.multiplicity, display)
    return Thresholds(gates, chosen[0] if chosen else None)


def load_thresholds(path: Path, display: str | None = None) -> list[Gate]:
    return read_thresholds(path, display).gates


def parse_multiplicity(data: Any, display: str) -> str | None:
    """The file's ``multiplicity:`` (holm, bh or none), None when absent."""
    if not isinstance(data, Mapping) or data.get("multiplicity") is None:
        return None
    value = data["multiplicity"]
    if value not in MULTIPLICITY:
        raise _err(display, None, None, "multiplicity",
                   f"must be one of {', '.join(MULTIPLICITY)}, got {value!r}")
    return str(value)


def _err(display: str, index: int | None, line: int | None, key: str | None, message: str) -> ThresholdsError:
    parts = [display]
    if index is not None:
        parts.append(f"gate {index + 1}" + (f" (line {line})" if line else ""))
    if key:
        parts.append(f"key '{key}'")
    # Messages quote the offending value: keep them one short line whatever it holds.
    return ThresholdsError(one_line(", ".join(parts), 300) + f": {one_line(message, 2000).rstrip('.')}.")


class _Problems:
    """Where parsing puts an error: raised at once (a session: one sentence), or kept while
    parsing goes on (``optbench lint``: every error of the file)."""

    def __init__(self, keep: bool) -> None:
        self.keep = keep
        self.found: list[ThresholdsError] = []

    def add(self, error: ThresholdsError) -> None:
        if not self.keep:
            raise error
        self.found.append(error)

    def attempt(self, parse: Callable[[], Any], default: Any = None) -> Any:
        """``parse()``, or ``default`` after keeping its error."""
        try:
            return parse()
        except ThresholdsError as exc:
            self.add(exc)
            return default


def parse_thresholds(data: Any, display: str) -> list[Gate]:
    return _parse_thresholds(data, display, _Problems(keep=False))


def thresholds_problems(data: Any, display: str) -> tuple[list[Gate], list[ThresholdsError]]:
    """Every error of a parsed thresholds file (not only the first), and the gates that parsed."""
    problems = _Problems(keep=True)
    gates = _parse_thresholds(data, display, problems)
    return gates, problems.found


def _parse_thresholds(data: Any, display: str, problems: _Problems) -> list[Gate]:
    if data is None:
        return []
    if not isinstance(data, Mapping):
        problems.add(_err(display, None, None, None, "must be a mapping with 'optbench: 1' and 'gates'"))
        return []
    if data.get("optbench") != 1 or isinstance(data.get("optbench"), bool):
        problems.add(_err(display, None, None, "optbench",
                          f"must be 1 (the format version), got {data.get('optbench')!r}"))
    for key in sorted(map(str, set(data) - set(THRESHOLDS_KEYS))):
        problems.add(_err(display, None, None, key, f"unknown top-level key{hint(key, THRESHOLDS_KEYS)} "
                          f"(allowed: {', '.join(THRESHOLDS_KEYS)})"))
    problems.attempt(lambda: parse_multiplicity(data, display))
    raw_gates = data.get("gates") or []
    if not isinstance(raw_gates, list):
        problems.add(_err(display, None, None, "gates", "must be a list of gates"))
        return []
    gates = [_parse_gate(display, i, raw, problems) for i, raw in enumerate(raw_gates)]
    return [g for g in gates if g is not None]


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


def _parse_gate(display: str, index: int, raw: Any, problems: _Problems) -> Gate | None:
    """One gate; None when it has an error (``problems`` raises or keeps each)."""
    line = getattr(raw, "line", None)
    if not isinstance(raw, Mapping):
        problems.add(_err(display, index, line, None, "each gate must be a mapping with 'metric' and a bound"))
        return None
    before = len(problems.found)

    def err(key: str | None, message: str) -> ThresholdsError:
        return _err(display, index, line, key, message)

    for key in raw:
        if key not in GATE_KEYS:
            problems.add(err(str(key), f"unknown gate key{hint(str(key), GATE_KEYS)} (allowed: {', '.join(GATE_KEYS)})"))
    metric = raw.get("metric")
    if metric is None:
        problems.add(err("metric", "is required"))
    elif not isinstance(metric, str) or metric not in METRIC_KINDS:
        close = hint(metric, METRIC_KINDS) if isinstance(metric, str) else ""
        problems.add(err("metric", f"unknown metric {metric!r}{close} (known: {', '.join(METRIC_KINDS)})"))
    bounds = [k for k in (*BOUND_KEYS, *CHANGE_KEYS) if k in raw]
    bound_kind, bound = (bounds[0], 0.0) if bounds else ("max", 0.0)
    if len(bounds) != 1:
        problems.add(err(bounds[1] if bounds else None, "a gate needs exactly one of the bounds max, min, max_abs, "
                         "max_increase, max_decrease, max_change"))
    elif (bound := problems.attempt(lambda: _number(display, index, line, bound_kind, raw[bound_kind]), 0.0)) < 0 \
            and bound_kind in ("max_abs", *CHANGE_KEYS):
        problems.add(err(bound_kind, "must not be negative"))
    evidence = raw.get("evidence", "point")
    if evidence not in EVIDENCE:
        problems.add(err("evidence", f"must be 'point' or 'ci', got {evidence!r}"))
    tolerance = _tolerance(display, index, line, raw, metric, problems)
    min_n = raw.get("min_n")
    if "min_n" in raw and (isinstance(min_n, bool) or not isinstance(min_n, int) or min_n < 1):
        problems.add(err("min_n", f"must be a whole number of at least 1, got {min_n!r}"))
    suites = problems.attempt(lambda: _globs(display, index, line, "suites", raw.get("suites")), ())
    conditions = problems.attempt(lambda: _globs(display, index, line, "conditions", raw.get("conditions")), ())
    if len(problems.found) > before:
        return None
    return Gate(metric=str(metric), bound_kind=bound_kind, bound=bound, evidence=evidence, suites=suites,
                conditions=conditions, tolerance=tolerance, line=line or 0, min_n=min_n)


def _tolerance(display: str, index: int, line: int | None, raw: Mapping[str, Any], metric: Any,
               problems: _Problems) -> float | None:
    if "tolerance" not in raw:
        return None
    if metric not in VIOLATION_METRICS:
        problems.add(_err(display, index, line, "tolerance", f"applies only to violation-rate metrics, not {metric}"))
        return None
    tolerance: float | None = problems.attempt(lambda: _number(display, index, line, "tolerance", raw["tolerance"]))
    if tolerance is not None and tolerance < 0:
        problems.add(_err(display, index, line, "tolerance", "must not be negative"))
    return tolerance
