"""Gates x aggregates -> verdicts: which (suite, condition) each gate decides, its test of the
bound, the multiplicity correction over each family, and the reason where none ran. Pure.

Every verdict is PASS (the evidence shows the bound holds), FAIL (it shows the bound is
crossed) or INCONCLUSIVE (it cannot tell: the interval straddles the bound, no honest interval
exists, or there is too little data or nothing to judge). An ``evidence: ci`` gate is decided by
one interval, the one the tables print beside it: its level is 95% without a correction and
wider under one (``levels.decision_tails``), so PASS never stands beside an interval that
lies wholly beyond its bound. A ``point`` gate is decided by its estimate, and is INCONCLUSIVE
where its data could not detect a crossing of the bound's size.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ...metrics.confidence import NATURAL_BOUNDS, Confidence, PointConfidence
from ...metrics.gate_tests import adjust, p_crossing
from ...metrics.power import detectable_crossing
from ...metrics.stats import CONFIDENCE
from ..aggregate import Aggregate, metric_applies
from ..baseline import Comparison
from ..minimum_data import shortfall, total_for, unit, usable_text
from .levels import decision_tails, level_text
from .reasons import NO_BASELINE, NO_HONEST_INTERVAL, ONLY_WITH, unmatched_reason, unshared_reason
from .spec import (
    DEFAULT_MULTIPLICITY,
    DEFAULT_ON_INCONCLUSIVE,
    EFFECT_METRICS,
    FAIL,
    GATE_ALPHA,
    INCONCLUSIVE,
    MULTIPLICITY,
    MULTIPLICITY_NAMES,
    PASS,
    Gate,
)


@dataclass(frozen=True)
class Verdict:
    gate: Gate
    suite: str | None
    condition: str | None
    verdict: str  # pass | fail | inconclusive
    value: float | None = None
    ci_low: float | None = None  # the estimate's own 95% CI (the aggregate's)
    ci_high: float | None = None
    n: int = 0
    reason: str = ""
    p_value: float | None = None  # the aggregate's own test (e.g. Skew vs 0), kept for reference
    # Holm / Benjamini-Hochberg adjusted p_crossing over the gate's family, whichever
    # correction decides (None outside a family).
    p_holm: float | None = None
    p_bh: float | None = None
    n_total: int | None = None  # items (checks, answers) there were in all; n of them were usable
    p_crossing: float | None = None  # one-sided p of "the true value lies beyond the bound"
    p_adjusted: float | None = None  # p_crossing under the session's correction (CI gates)
    multiplicity: str | None = None  # the correction that decided this CI gate
    family_size: int = 0  # evaluated CI gates in this gate's family
    detectable: float | None = None  # smallest crossing detected with 80% power at this n
    underpowered: bool = False  # the bound is closer to the metric's ideal than ``detectable``
    evaluated: bool = True  # False: nothing to judge, or too little data (the reason says which)
    level: float | None = None  # confidence level of the interval that decided (ci) or is shown (point)
    interval_low: float | None = None  # that interval
    interval_high: float | None = None
    family: str | None = None  # the multiplicity family it was corrected in (None: none)
    on_inconclusive: str = DEFAULT_ON_INCONCLUSIVE  # the exit policy applied (enforcement.apply_policy)
    confidence: Confidence | None = field(default=None, compare=False, repr=False)  # not serialised

    @property
    def fails_session(self) -> bool:
        """FAIL, or INCONCLUSIVE under ``on_inconclusive: fail`` (or strict mode)."""
        return self.verdict == FAIL or (self.verdict == INCONCLUSIVE and self.on_inconclusive == "fail")

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.gate.metric, "suite": self.suite, "condition": self.condition,
            "bound": self.gate.bound, "bound_kind": self.gate.bound_kind,
            "bound_text": self.gate.bound_text, "evidence": self.gate.evidence,
            "value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high, "n": self.n,
            "verdict": self.verdict, "evaluated": self.evaluated, "reason": self.reason,
            "level": self.level, "interval_low": self.interval_low, "interval_high": self.interval_high,
            "on_inconclusive": self.on_inconclusive, "fails_session": self.fails_session,
            "tolerance": self.gate.tolerance_used, "min_n": self.gate.required_n, "n_total": self.n_total,
            "p_value": self.p_value, "p_holm": self.p_holm, "p_bh": self.p_bh,
            "p_crossing": self.p_crossing, "p_adjusted": self.p_adjusted, "multiplicity": self.multiplicity,
            "family": self.family, "family_size": self.family_size, "detectable_crossing": self.detectable,
            "underpowered": self.underpowered,
        }


def _unjudged(gate: Gate, suite: str | None, condition: str | None, reason: str, value: float | None = None,
              n: int = 0, n_total: int | None = None, evaluated: bool = False) -> Verdict:
    """A gate with nothing (or too little) to judge, or (``evaluated``) whose estimate has no
    honest interval: INCONCLUSIVE with the reason, never PASS; decided already."""
    return Verdict(gate, suite, condition, INCONCLUSIVE, value, n=n, n_total=n_total, reason=reason,
                   evaluated=evaluated)


def evaluate(
    gates: Sequence[Gate],
    aggregates: Iterable[Aggregate],
    suite_kinds: Mapping[str, Sequence[str]],
    comparison: Comparison | None = None,
    totals: Mapping[tuple[str, str, str], int] | None = None,
    multiplicity: str = DEFAULT_MULTIPLICITY,
) -> list[Verdict]:
    """A verdict per gate x (suite, condition) it matches; one INCONCLUSIVE row (not
    evaluated, with the reason) for a gate that matched nothing.

    ``evidence: ci`` gates are tests of their bounds, corrected for multiplicity within their
    family (``multiplicity``: holm, bh or none; see ``_adjust``).

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
            rows.append(_unjudged(gate, None, None, unmatched_reason(gate, suite_kinds, by_suite)))
        verdicts.extend(rows)
    return _adjust(verdicts, multiplicity)


def _change_verdicts(gate: Gate, comparison: Comparison | None) -> list[Verdict]:
    """Gates on the change against the baseline, one per (suite, condition) both runs share."""
    if comparison is None:
        return [_unjudged(gate, None, None, NO_BASELINE)]
    rows = []
    for change in comparison.changes:
        if change.metric != gate.metric or not gate.matches(change.suite, change.condition):
            continue
        if change.tolerance != gate.tolerance_used:
            continue  # a violation rate at another tolerance than this gate's
        where = (gate, change.suite, change.condition)
        if not math.isfinite(change.delta):
            rows.append(_unjudged(*where, "no usable answers in one of the runs", n=change.n))
            continue
        if (short := shortfall(change.n, None, gate.required_n, unit(gate.metric, change=True))) is not None:
            rows.append(_unjudged(*where, short, change.delta, n=change.n))
            continue
        low, high = change.ci_low, change.ci_high
        if gate.evidence == "ci" and (why := change.interval_reason) is not None:
            # Judged, and the evidence cannot tell: INCONCLUSIVE (not "not evaluated").
            rows.append(_unjudged(*where, NO_HONEST_INTERVAL + why, change.delta, n=change.n, evaluated=True))
            continue
        if gate.evidence == "ci" and not (math.isfinite(low) and math.isfinite(high)):
            rows.append(_unjudged(*where, "too few shared items for a confidence interval", change.delta, n=change.n))
            continue
        rows.append(Verdict(*where, INCONCLUSIVE, change.delta, _finite(low), _finite(high), n=change.n,
                            p_value=change.p_value, confidence=change.confidence,
                            **_test_of_bound(gate, change.confidence)))
    shared = {(c.suite, c.condition) for c in comparison.changes}
    return rows or [_unjudged(gate, None, None, unshared_reason(gate, shared))]


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _test_of_bound(gate: Gate, confidence: Confidence | None) -> dict[str, Any]:
    """The gate as a test of its bound: p of "crossed", and the crossing it can detect."""
    if confidence is None:
        return {}
    kind, bound = gate.plain()
    p = _finite(p_crossing(confidence, kind, bound))
    detectable = _finite(detectable_crossing(confidence, GATE_ALPHA, side=kind, bound=bound))
    ideal = _ideal(gate)
    underpowered = detectable is not None and ideal is not None and 0 < abs(bound - ideal) < detectable
    return {"p_crossing": p, "detectable": detectable, "underpowered": underpowered}


def _ideal(gate: Gate) -> float | None:
    """The value a gate's bound is a distance from (for the power warning): no change; 0 for
    a ``max``/``max_abs`` bound; the top of the metric's range for a ``min`` bound (rates,
    accuracy); None where the metric has no such value."""
    kind, _bound = gate.plain()
    if gate.is_change or kind != "min":
        return 0.0
    if gate.metric in ("parse_rate", "accuracy", "auc"):
        return 1.0
    return NATURAL_BOUNDS[gate.metric][1] if gate.metric in NATURAL_BOUNDS else None


def _adjust(verdicts: list[Verdict], multiplicity: str = DEFAULT_MULTIPLICITY) -> list[Verdict]:
    """Correct each family's CI gates for multiplicity, then decide every gate.

    A family is every evaluated ``evidence: ci`` gate with a p of its bound (level and change
    gates alike) that shares the gate's ``family_name``: the metric gates form one, the
    plumbing gates (parse, error and refusal rates) another, and a gate's ``family:`` names
    its own. Each gate gets the level of the interval that decides it (``levels``); Holm and
    BH adjusted p values are both kept, whichever decides. ``point`` gates decide on the
    estimate and are in no family.
    """
    if multiplicity not in MULTIPLICITY:
        raise ValueError(f"multiplicity must be one of {', '.join(MULTIPLICITY)}, got {multiplicity!r}")
    families: dict[str, list[int]] = {}
    for i, v in enumerate(verdicts):
        if v.evaluated and v.gate.evidence == "ci" and v.p_crossing is not None and v.confidence is not None:
            families.setdefault(v.gate.family_name, []).append(i)
    out = list(verdicts)
    for name, members in families.items():
        raw = np.array([verdicts[i].p_crossing for i in members], dtype=float)
        by_holm, by_bh, chosen = adjust(raw, "holm"), adjust(raw, "bh"), adjust(raw, multiplicity)
        tails = decision_tails([float(p) for p in raw], multiplicity, GATE_ALPHA)
        for j, i in enumerate(members):
            out[i] = replace(verdicts[i], p_holm=float(by_holm[j]), p_bh=float(by_bh[j]), p_adjusted=float(chosen[j]),
                             multiplicity=multiplicity, family=name, family_size=len(members),
                             level=1.0 - 2.0 * tails[j])
    return [decide(v) if v.evaluated and not v.reason else v for v in out]


def decide(v: Verdict) -> Verdict:
    """PASS, FAIL or INCONCLUSIVE for an evaluated gate; ``point`` gates by their estimate.

    A ``ci`` gate FAILs when its interval at ``v.level`` (the corrected level; 95% when unset)
    lies wholly beyond the bound, and PASSes when its 95% interval lies wholly within it: a
    session passes only when every gate does, an intersection-union test that needs no
    correction (Berger 1982), while a single FAIL is a claim about one bound among many, which
    does. Either way the interval shown is the one that decided; an INCONCLUSIVE gate shows the
    corrected one, which straddles the bound.
    """
    if v.gate.evidence == "point":
        return _decide_point(v)
    level = v.level if v.level is not None else CONFIDENCE
    corrected, plain = _interval_at(v, level), _interval_at(v, CONFIDENCE)
    how = _correction_text(v)
    if corrected is not None and v.gate.beyond(*corrected):
        v = replace(v, level=level, interval_low=corrected[0], interval_high=corrected[1])
        if v.p_adjusted is not None and not v.p_adjusted < GATE_ALPHA:  # only at the edge of float rounding
            return replace(v, verdict=INCONCLUSIVE, reason=f"the {level_text(level)} interval and the corrected "
                           f"test disagree at the bound{how}")
        return replace(v, verdict=FAIL, reason=f"the whole {level_text(level)} interval lies beyond the bound{how}")
    if plain is not None and v.gate.holds(*plain) and not _ci_beyond(v):
        return replace(v, verdict=PASS, level=CONFIDENCE, interval_low=plain[0], interval_high=plain[1],
                       reason=f"the whole {level_text(CONFIDENCE)} interval lies within the bound")
    if corrected is None:
        method = v.confidence.method if v.confidence is not None else "none"
        return replace(v, verdict=INCONCLUSIVE, level=level, interval_low=None, interval_high=None,
                       reason=f"no honest {level_text(level)} interval for this estimate ({method})")
    v = replace(v, verdict=INCONCLUSIVE, level=level, interval_low=corrected[0], interval_high=corrected[1])
    if plain is not None and v.gate.beyond(*plain):
        reason = (f"the 95% interval lies beyond the bound, but the {level_text(level)} interval the correction "
                  f"asks for straddles it{how}: the data cannot tell")
    else:
        reason = f"the {level_text(level)} interval straddles the bound{how}: the data cannot tell"
    if v.underpowered and v.detectable is not None:
        reason += f"; with n = {v.n} only a crossing of {v.detectable:.3g} or more is detected with 80% power"
    return replace(v, reason=reason)


def _decide_point(v: Verdict) -> Verdict:
    v = replace(v, level=CONFIDENCE, interval_low=v.ci_low, interval_high=v.ci_high)
    if v.value is None or not v.gate.holds(v.value, v.value):
        return replace(v, verdict=FAIL, reason="the estimate is beyond the bound")
    if _ci_beyond(v):
        return replace(v, verdict=INCONCLUSIVE, reason="the estimate holds the bound but its whole 95% CI lies beyond it")
    if v.underpowered and v.detectable is not None:
        return replace(v, verdict=INCONCLUSIVE, reason=(
            f"the estimate holds the bound, but with n = {v.n} only a crossing of {v.detectable:.3g} or more is "
            "detected with 80% power: too few items for this bound"))
    return replace(v, verdict=PASS, reason="the estimate holds the bound")


def _ci_beyond(v: Verdict) -> bool:
    """Does the estimate's own 95% CI lie wholly beyond the bound (then no PASS)?"""
    return v.ci_low is not None and v.ci_high is not None and v.gate.beyond(v.ci_low, v.ci_high)


def _interval_at(v: Verdict, level: float) -> tuple[float, float] | None:
    """The interval at ``level``, None where no honest one exists: no confidence distribution
    beyond the 95% CI, a method that is no interval ("none": every value equal), or an
    interval that is not finite."""
    if isinstance(v.confidence, PointConfidence) and str(v.confidence.method).startswith("none"):
        return _no_spread(v, level)
    if v.confidence is not None:
        found = v.confidence.interval(level)
        low, high, method = found.low, found.high, found.method
    elif abs(level - CONFIDENCE) < 1e-12 and v.ci_low is not None and v.ci_high is not None:
        low, high, method = v.ci_low, v.ci_high, "the aggregate's"
    else:
        return None
    if not (math.isfinite(low) and math.isfinite(high)) or low > high or str(method).startswith("none"):
        return None
    return float(low), float(high)


def _no_spread(v: Verdict, level: float) -> tuple[float, float] | None:
    """n values, every one equal to e: no spread to estimate a mean's interval from. The sign
    test still speaks: every value lies on one side of any other value, with one-sided p
    0.5^n, so [e, e] is the distribution-free interval at ``level`` when 0.5^n is below its
    tail, and there is none (cannot tell) when it is not (n = 6 at 95%; more under a
    correction)."""
    estimate = v.confidence.estimate if v.confidence is not None else math.nan
    if not math.isfinite(estimate) or v.n < 1 or not 0.5 ** v.n < (1.0 - level) / 2.0:
        return None
    return float(estimate), float(estimate)


def _correction_text(v: Verdict) -> str:
    if v.multiplicity in (None, "none") or v.family_size <= 1:
        return ""
    q = "" if v.p_adjusted is None else f", adjusted p {v.p_adjusted:.3g}"
    return f" ({MULTIPLICITY_NAMES[v.multiplicity or 'none']} over the {v.family_size} gates of family {v.family}{q})"


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
        return _unjudged(gate, suite, condition, reason, n_total=total)
    value, low, high = agg.value, agg.ci_low, agg.ci_high
    if not math.isfinite(value):
        # Some answers are usable, but too few (or too alike) for the metric to have a value.
        reason = (f"no usable answers: {usable_text(0, total, what)}" if agg.n == 0 else
                  f"{usable_text(agg.n, total, what)}, too few for {gate.metric} to have a value")
        return _unjudged(gate, suite, condition, reason, n=agg.n, n_total=total)
    if (short := shortfall(agg.n, total, gate.required_n, what)) is not None:
        return _unjudged(gate, suite, condition, short, value, n=agg.n, n_total=total)
    if gate.evidence == "ci" and (why := agg.interval_reason) is not None:
        # The method cannot give an honest interval here (no spread, a separated sample, a
        # bias correction beyond the draws): the gate decides nothing, either way.
        return _unjudged(gate, suite, condition, NO_HONEST_INTERVAL + why, value, n=agg.n, n_total=total,
                         evaluated=True)
    if gate.evidence == "ci" and not (math.isfinite(low) and math.isfinite(high)):
        return _unjudged(gate, suite, condition, "too few items for a confidence interval", value, n=agg.n,
                         n_total=total)
    p = agg.p_value if agg.p_value is not None and math.isfinite(agg.p_value) else None
    return Verdict(gate, suite, condition, INCONCLUSIVE, value, _finite(low), _finite(high), n=agg.n, p_value=p,
                   n_total=total, confidence=agg.confidence, **_test_of_bound(gate, agg.confidence))
