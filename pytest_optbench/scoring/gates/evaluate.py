"""Gates x aggregates -> verdicts: which (suite, condition) each gate decides, its test of the
bound, the multiplicity correction over the session's family, and the reason where none ran. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...metrics.confidence import NATURAL_BOUNDS, Confidence
from ...metrics.gate_tests import adjust, p_crossing
from ...metrics.power import detectable_crossing
from ..aggregate import Aggregate, metric_applies
from ..baseline import Comparison
from ..minimum_data import shortfall, total_for, unit, usable_text
from .reasons import NO_BASELINE, NO_HONEST_INTERVAL, ONLY_WITH, unmatched_reason, unshared_reason
from .spec import (
    DEFAULT_MULTIPLICITY,
    EFFECT_METRICS,
    FAIL,
    GATE_ALPHA,
    MULTIPLICITY,
    MULTIPLICITY_NAMES,
    NOT_EVALUATED,
    PASS,
    Gate,
)


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
    p_value: float | None = None  # the aggregate's own test (e.g. Skew vs 0), kept for reference
    # Holm / Benjamini-Hochberg adjusted p_crossing over the session's evaluated CI gates,
    # whichever correction decides (None outside that family).
    p_holm: float | None = None
    p_bh: float | None = None
    n_total: int | None = None  # items (checks, answers) there were in all; n of them were usable
    p_crossing: float | None = None  # one-sided p of "the true value lies beyond the bound"
    p_adjusted: float | None = None  # p_crossing under the session's correction (CI gates)
    multiplicity: str | None = None  # the correction that decided this CI gate
    family_size: int = 0  # evaluated CI gates in the session's family
    detectable: float | None = None  # smallest crossing detected with 80% power at this n
    underpowered: bool = False  # the bound is closer to the metric's ideal than ``detectable``

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.gate.metric, "suite": self.suite, "condition": self.condition,
            "bound": self.gate.bound, "bound_kind": self.gate.bound_kind,
            "bound_text": self.gate.bound_text, "evidence": self.gate.evidence,
            "value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high, "n": self.n,
            "verdict": self.verdict, "reason": self.reason, "tolerance": self.gate.tolerance_used,
            "min_n": self.gate.required_n, "n_total": self.n_total,
            "p_value": self.p_value, "p_holm": self.p_holm, "p_bh": self.p_bh,
            "p_crossing": self.p_crossing, "p_adjusted": self.p_adjusted, "multiplicity": self.multiplicity,
            "family_size": self.family_size, "detectable_crossing": self.detectable,
            "underpowered": self.underpowered,
        }



def evaluate(
    gates: Sequence[Gate],
    aggregates: Iterable[Aggregate],
    suite_kinds: Mapping[str, Sequence[str]],
    comparison: Comparison | None = None,
    totals: Mapping[tuple[str, str, str], int] | None = None,
    multiplicity: str = DEFAULT_MULTIPLICITY,
) -> list[Verdict]:
    """A verdict per gate x (suite, condition) it matches; ``not evaluated`` where none ran.

    ``evidence: ci`` gates are tests of their bounds, corrected together for multiplicity
    (``multiplicity``: holm, bh or none; see ``_adjust``).

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
    return _adjust(verdicts, multiplicity)


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
        if gate.evidence == "ci" and (why := change.interval_reason) is not None:
            rows.append(Verdict(gate, change.suite, change.condition, NOT_EVALUATED, change.delta, n=change.n,
                                reason=NO_HONEST_INTERVAL + why))
            continue
        if gate.evidence == "ci" and not (math.isfinite(low) and math.isfinite(high)):
            rows.append(Verdict(gate, change.suite, change.condition, NOT_EVALUATED, change.delta, n=change.n,
                                reason="too few shared items for a confidence interval"))
            continue
        failure = gate.check(change.delta, low, high)
        rows.append(Verdict(gate, change.suite, change.condition, FAIL if failure else PASS, change.delta,
                            low if math.isfinite(low) else None, high if math.isfinite(high) else None,
                            n=change.n, reason=failure or "", p_value=change.p_value,
                            **_test_of_bound(gate, change.confidence)))
    shared = {(c.suite, c.condition) for c in comparison.changes}
    return rows or [Verdict(gate, None, None, NOT_EVALUATED, reason=unshared_reason(gate, shared))]


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _test_of_bound(gate: Gate, confidence: Confidence | None) -> dict[str, Any]:
    """The gate as a test of its bound: p of "crossed", and the crossing it can detect."""
    if confidence is None:
        return {}
    kind, bound = gate._plain()
    p = _finite(p_crossing(confidence, kind, bound))
    detectable = _finite(detectable_crossing(confidence, GATE_ALPHA, side=kind, bound=bound))
    ideal = _ideal(gate)
    underpowered = (gate.evidence == "ci" and detectable is not None and ideal is not None
                    and 0 < abs(bound - ideal) < detectable)
    return {"p_crossing": p, "detectable": detectable, "underpowered": underpowered}


def _ideal(gate: Gate) -> float | None:
    """The value a gate's bound is a distance from (for the power warning): no change; 0 for
    a ``max``/``max_abs`` bound; the top of the metric's range for a ``min`` bound (rates,
    accuracy); None where the metric has no such value."""
    kind, _bound = gate._plain()
    if gate.is_change or kind != "min":
        return 0.0
    if gate.metric in ("parse_rate", "accuracy", "auc"):
        return 1.0
    return NATURAL_BOUNDS[gate.metric][1] if gate.metric in NATURAL_BOUNDS else None


def _adjust(verdicts: list[Verdict], multiplicity: str = DEFAULT_MULTIPLICITY) -> list[Verdict]:
    """Many CI gates are many tests: correct their verdicts for multiplicity.

    The family is every evaluated ``evidence: ci`` gate with a p of its bound (level and
    change gates alike). A gate whose whole CI lies beyond its bound fails only when its
    adjusted p is also below (1 - confidence) / 2; with ``none`` that is the CI rule itself.
    ``point`` gates decide on the estimate and are not in the family. Holm and BH adjusted
    p values are both kept, whichever decides.
    """
    if multiplicity not in MULTIPLICITY:
        raise ValueError(f"multiplicity must be one of {', '.join(MULTIPLICITY)}, got {multiplicity!r}")
    family = [i for i, v in enumerate(verdicts)
              if v.gate.evidence == "ci" and v.verdict != NOT_EVALUATED and v.p_crossing is not None]
    raw = np.array([verdicts[i].p_crossing for i in family], dtype=float)
    by_holm, by_bh, chosen = adjust(raw, "holm"), adjust(raw, "bh"), adjust(raw, multiplicity)
    out = list(verdicts)
    name = MULTIPLICITY_NAMES[multiplicity]
    for j, i in enumerate(family):
        v, q = verdicts[i], float(chosen[j])
        updated = replace(v, p_holm=float(by_holm[j]), p_bh=float(by_bh[j]), p_adjusted=q,
                          multiplicity=multiplicity, family_size=len(family))
        if v.verdict == FAIL and multiplicity != "none" and not q < GATE_ALPHA:
            updated = replace(updated, verdict=PASS, reason=(
                f"the whole 95% CI lies beyond the bound, but not after {name}'s correction over "
                f"{len(family)} CI gates (adjusted p {q:.3g} >= {GATE_ALPHA:g})"))
        elif v.verdict == FAIL and multiplicity != "none":
            updated = replace(updated, reason=f"{v.reason} ({name}-adjusted p {q:.3g} over {len(family)} CI gates)")
        out[i] = updated
    return out


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
        # Some answers are usable, but too few (or too alike) for the metric to have a value.
        reason = (f"no usable answers: {usable_text(0, total, what)}" if agg.n == 0 else
                  f"{usable_text(agg.n, total, what)}, too few for {gate.metric} to have a value")
        return Verdict(gate, suite, condition, NOT_EVALUATED, n=agg.n, n_total=total, reason=reason)
    if (short := shortfall(agg.n, total, gate.required_n, what)) is not None:
        return Verdict(gate, suite, condition, NOT_EVALUATED, value, n=agg.n, n_total=total, reason=short)
    if gate.evidence == "ci" and (why := agg.interval_reason) is not None:
        # The method cannot give an honest interval here (no spread, a separated sample, a
        # bias correction beyond the draws): the gate decides nothing, either way.
        return Verdict(gate, suite, condition, NOT_EVALUATED, value, n=agg.n, n_total=total,
                       reason=NO_HONEST_INTERVAL + why)
    if gate.evidence == "ci" and not (math.isfinite(low) and math.isfinite(high)):
        return Verdict(gate, suite, condition, NOT_EVALUATED, value, n=agg.n, n_total=total,
                       reason="too few items for a confidence interval")
    failure = gate.check(value, low, high)
    ci = (low if math.isfinite(low) else None, high if math.isfinite(high) else None)
    p = agg.p_value if agg.p_value is not None and math.isfinite(agg.p_value) else None
    return Verdict(gate, suite, condition, FAIL if failure else PASS, value, *ci, n=agg.n,
                   reason=failure or "", p_value=p, n_total=total, **_test_of_bound(gate, agg.confidence))
