"""Changes against a baseline run, paired by item.

Pure. Two runs over the same items compare item by item (an unpaired test would throw the
pairing away, lm-eval#3831): per (suite, condition), over the items both runs answered,
each metric's change comes with a paired bootstrap CI and a paired test. Items present in
only one run are listed, never silently dropped, and differences in settings are stated.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..kinds import KINDS, violation_metric
from ..kinds.base import VIOLATION, violation_counts
from ..metrics import calibration as cal
from ..metrics.axioms import complement_violation
from ..metrics.calibration_ci import OUTCOME_FLOORED
from ..metrics.confidence import (
    Confidence,
    StudentizedBootstrap,
    bootstrap_confidence,
    change_bounds,
    studentized_bootstrap,
)
from ..metrics.rates import rate_change_confidence
from ..metrics.resample import bootstrap_draws, scoring_numpy
from ..metrics.skew import pair_skews
from ..records.item import REFUSAL_VALUE, ItemRecord
from .aggregate import AggregateOptions, answer_resolution, finite_or_none, pair_answers, resolution_sd, seeded_rng
from .tolerances import effective_tolerance

# Run settings that change answers: a difference is stated above the comparison. Prompts are
# compared per suite (``suite_prompt_hashes``): the run's ``prompt_hash`` covers the suites
# that ran, so it changes with the selection (-k, --language) although no prompt did.
COMPARED_SETTINGS = ("model", "model_version", "samples_override", "temperature_override",
                     "system_prompt_override", "keep_fifty", "base_url_set", "elicit")
# Who the API said served the answers: compared only when both runs recorded some (a report
# from before they were kept, or a model that says nothing, is no evidence of a change).
SERVED_SETTINGS = {
    "served_models": ("served model", "the API served another model snapshot, which may answer differently"),
    "system_fingerprints": ("system_fingerprint", ("the provider's backend configuration changed, which may "
                                                  "change answers by itself")),
}
SHOWN_VALUES = 3
OUTCOME_FLOORED_CHANGE = "paired bootstrap-t/Student, ends floored at the calibration-null SD"
# Settings a report written before they existed did not record, and the value it had then.
SETTING_DEFAULTS = {"elicit": "text"}


@dataclass(frozen=True)
class Change:
    suite: str
    condition: str
    metric: str
    baseline: float
    current: float
    ci_low: float
    ci_high: float
    n: int  # items both runs answered
    p_value: float | None = None
    test: str = ""
    # The change's confidence distribution (CI and p come from it); not serialised.
    confidence: Confidence | None = field(default=None, compare=False, repr=False)
    tolerance: float | None = None  # violation rates: the tolerance (pp) both runs were scored at

    @property
    def delta(self) -> float:
        return self.current - self.baseline

    @property
    def interval_reason(self) -> str | None:
        """Why the change has no honest interval (as ``Aggregate.interval_reason``)."""
        return self.confidence.reason if self.confidence is not None else None

    def to_dict(self) -> dict[str, Any]:
        clean = finite_or_none
        return {"suite": self.suite, "condition": self.condition, "metric": self.metric,
                "baseline": clean(self.baseline), "current": clean(self.current), "delta": clean(self.delta),
                "ci_low": clean(self.ci_low), "ci_high": clean(self.ci_high), "n": self.n,
                "p_value": clean(self.p_value), "test": self.test, "tolerance": self.tolerance,
                **({"no_interval_reason": reason} if (reason := self.interval_reason) is not None else {})}


@dataclass
class Comparison:
    changes: list[Change]
    only_current: list[str] = field(default_factory=list)  # "suite::item[condition]"
    only_baseline: list[str] = field(default_factory=list)
    setting_differences: list[str] = field(default_factory=list)
    changed_prompts: list[str] = field(default_factory=list)  # items whose prompt hash differs
    changed_suites: list[str] = field(default_factory=list)  # shared suites whose prompts differ

    def find(self, suite: str, condition: str, metric: str, tolerance: float | None = None) -> Change | None:
        """The change of one metric; a violation rate's at ``tolerance`` (default: its default)."""
        tolerance = effective_tolerance(metric, tolerance)
        return next((c for c in self.changes if (c.suite, c.condition, c.metric, c.tolerance)
                     == (suite, condition, metric, tolerance)), None)

    def to_dict(self) -> dict[str, Any]:
        return {"changes": [c.to_dict() for c in self.changes], "only_in_current": self.only_current,
                "only_in_baseline": self.only_baseline, "setting_differences": self.setting_differences,
                "items_with_changed_prompts": self.changed_prompts, "suites_with_changed_prompts": self.changed_suites}



def setting_differences(current: Mapping[str, Any], baseline: Mapping[str, Any]) -> list[str]:
    out = []
    for key in COMPARED_SETTINGS:
        now, before = (run.get(key, SETTING_DEFAULTS.get(key)) for run in (current, baseline))
        if now != before:
            why = (" (each elicitation mode is a different measurement: the changes below compare unlike "
                   "with unlike)") if key == "elicit" else ""
            if key == "model_version":
                why = " (the version or fingerprint the model declares: the model or its prompt changed)"
            out.append(f"{key}: baseline {before!r}, now {now!r}{why}")
    for key, (label, why) in SERVED_SETTINGS.items():
        now, before = (_texts(run.get(key)) for run in (current, baseline))
        if now and before and now != before:
            out.append(f"{label}: baseline {_listed(before)}, now {_listed(now)} ({why})")
    return out


def _texts(value: Any) -> list[str]:
    return sorted({str(v) for v in value}) if isinstance(value, (list, tuple)) else []


def _listed(values: Sequence[str]) -> str:
    shown = ", ".join(values[:SHOWN_VALUES])
    return shown + (f" and {len(values) - SHOWN_VALUES} more" if len(values) > SHOWN_VALUES else "")


def changed_suites(current: Mapping[str, Any], baseline: Mapping[str, Any]) -> list[str]:
    """Suites both runs hold whose prompts differ (reports without per-suite hashes: none)."""
    now, before = current.get("suite_prompt_hashes") or {}, baseline.get("suite_prompt_hashes") or {}
    if not (isinstance(now, Mapping) and isinstance(before, Mapping)):
        return []
    return sorted(str(s) for s in set(now) & set(before) if now[s] and before[s] and now[s] != before[s])


def compare(current: Iterable[ItemRecord], baseline: Iterable[ItemRecord],
            options: AggregateOptions | None = None,
            current_run: Mapping[str, Any] | None = None, baseline_run: Mapping[str, Any] | None = None) -> Comparison:
    options = options or AggregateOptions()
    now = {r.key: r for r in current}
    before = {r.key: r for r in baseline}
    comparison = Comparison(
        changes=[],
        only_current=sorted(now[k].label for k in set(now) - set(before)),
        only_baseline=sorted(before[k].label for k in set(before) - set(now)),
        setting_differences=setting_differences(current_run or {}, baseline_run or {}),
        changed_suites=changed_suites(current_run or {}, baseline_run or {}),
        changed_prompts=sorted(now[k].label for k in set(now) & set(before)
                               if now[k].prompt_hash and before[k].prompt_hash
                               and now[k].prompt_hash != before[k].prompt_hash),
    )
    groups: dict[tuple[str, str], list[tuple[ItemRecord, ItemRecord]]] = defaultdict(list)
    for key in sorted(set(now) & set(before)):
        if now[key].kind == before[key].kind:
            groups[(key[0], key[2])].append((now[key], before[key]))
    with scoring_numpy():
        for (suite, condition), pairs in sorted(groups.items()):
            comparison.changes.extend(_group_changes(suite, condition, pairs, options))
    return comparison


# --------------------------------------------------------------------------- per group


def _decomposable(suite: str, condition: str, metric: str, now: np.ndarray, before: np.ndarray,
                  options: AggregateOptions, scale: float = 1.0, sd_floor: float = 0.0,
                  outcome_sd: float = 0.0) -> Change | None:
    """A metric that is the mean of per-item values: paired differences, their bootstrap-t/Student CI and p.

    ``outcome_sd``: a floor under both ends (a binary score's change: ``_binary_changes``)."""
    keep = np.isfinite(now) & np.isfinite(before)
    now, before = now[keep] * scale, before[keep] * scale
    if not now.size:
        return None
    d = now - before
    rng = seeded_rng(options.seed, "baseline", suite, condition, metric)
    # CI and p from one method, so p < 0.05 exactly when the CI excludes 0.
    cd = studentized_bootstrap(d, rng, options.n_resamples, change_bounds(metric), sd_floor=sd_floor)
    test = "paired bootstrap-t/Student"
    if outcome_sd > 0 and isinstance(cd, StudentizedBootstrap):
        cd = replace(cd, low_sd=outcome_sd, high_sd=outcome_sd)
        test = OUTCOME_FLOORED_CHANGE
    interval = cd.interval()
    p = cd.p_value(0.0) if d.size >= 2 else (1.0 if d.size else float("nan"))
    return Change(suite, condition, metric, float(before.mean()), float(now.mean()),
                  interval.low, interval.high, int(d.size), p, test, cd)


def _rate_change(suite: str, condition: str, metric: str, now: tuple[list[int], list[int]],
                 before: tuple[list[int], list[int]]) -> Change | None:
    """A rate pooled over items (as in the aggregate), its change with a MOVER interval from
    the two runs' clustered intervals; p from inverting the same intervals."""
    checks_now, checks_before = np.array(now[1], dtype=float), np.array(before[1], dtype=float)
    shared = (checks_now > 0) & (checks_before > 0)
    if not shared.any():
        return None
    hits_now, hits_before = np.array(now[0], dtype=float)[shared], np.array(before[0], dtype=float)[shared]
    checks_now, checks_before = checks_now[shared], checks_before[shared]
    cd = rate_change_confidence(hits_now, checks_now, hits_before, checks_before)
    interval = cd.interval()
    return Change(suite, condition, metric, float(hits_before.sum() / checks_before.sum()),
                  float(hits_now.sum() / checks_now.sum()), interval.low, interval.high, int(shared.sum()),
                  cd.p_value(0.0), "MOVER on clustered Clopper-Pearson", cd)


def _group_changes(suite: str, condition: str, pairs: Sequence[tuple[ItemRecord, ItemRecord]],
                   options: AggregateOptions) -> list[Change]:
    out: list[Change | None] = []
    now_records = [a for a, _ in pairs]
    before_records = [b for _, b in pairs]

    def rate(metric: str, counts: Callable[[ItemRecord], tuple[int, int]]) -> None:
        def run(records: list[ItemRecord]) -> tuple[list[int], list[int]]:
            pairs = [counts(r) for r in records]
            return [h for h, _ in pairs], [c for _, c in pairs]
        out.append(_rate_change(suite, condition, metric, run(now_records), run(before_records)))

    rate("parse_rate", lambda r: _count(r, lambda a: a.value is not None, received_only=True))
    rate("refusal_rate", lambda r: _count(r, lambda a: a.value == REFUSAL_VALUE, parsed_only=True))
    rate("error_rate", lambda r: _count(r, lambda a: a.error is not None))

    pair_now = [(a, b) for a, b in pairs if a.kind == "inverted_pair"]
    if pair_now:
        keep = options.keep_fifty
        step = answer_resolution(r for x in pair_now for r in x)
        two, four = resolution_sd(step, 2), resolution_sd(step, 4)  # a change: each run's prompts
        (p_now, m_now), (p_before, m_before) = (pair_answers([x[i] for x in pair_now], keep) for i in (0, 1))
        out.append(_decomposable(suite, condition, "skew", pair_skews(p_now, m_now), pair_skews(p_before, m_before),
                                 options, sd_floor=four))
        out.append(_decomposable(suite, condition, "delta_plus", p_now - 50, p_before - 50, options, sd_floor=two))
        out.append(_decomposable(suite, condition, "delta_minus", m_now - 50, m_before - 50, options, sd_floor=two))
        (ap, am), (bp, bm) = (pair_answers([x[i] for x in pair_now], True) for i in (0, 1))
        out.append(_decomposable(suite, condition, "complement_violation",
                                 complement_violation(ap, am), complement_violation(bp, bm), options, sd_floor=four))
        if all(a.expected is not None for a, _ in pair_now):
            out.append(_decomposable(suite, condition, "calibration_error",
                                     np.abs(ap - np.array([a.expected for a, _ in pair_now], dtype=float)),
                                     np.abs(bp - np.array([a.expected for a, _ in pair_now], dtype=float)), options,
                                     sd_floor=two))

    binary = [(a, b) for a, b in pairs if a.kind == "binary"]
    if binary:
        out.extend(_binary_changes(suite, condition, binary, options))

    for kind in KINDS.values():
        sets = [(a, b) for a, b in pairs if a.kind == kind.name] if VIOLATION in kind.families else []
        metric = violation_metric(kind)
        # At the metric's default tolerance and at each one a gate asks for, as the aggregates.
        for tolerance in sorted({kind.default_tolerance, *options.tolerances.get(metric, ())}) if sets else ():
            counts = [violation_counts(kind, [x[i] for x in sets], tolerance)[:2] for i in (0, 1)]
            change = _rate_change(suite, condition, metric, counts[0], counts[1])
            out.append(replace(change, tolerance=tolerance) if change is not None else None)
    return [c for c in out if c is not None]


def _count(record: ItemRecord, hit: Callable[[Any], bool], received_only: bool = False,
           parsed_only: bool = False) -> tuple[int, int]:
    """(hits, answers) of one item."""
    answers = record.answers()
    if received_only:
        answers = [a for a in answers if a.error is None]
    if parsed_only:
        answers = [a for a in answers if a.value is not None]
    return sum(1 for a in answers if hit(a)), len(answers)


BINARY_DECOMPOSABLE: dict[str, Callable[..., Any]] = {
    "brier": lambda p, y: (p - y) ** 2,
    "log_loss": lambda p, y: -(y * np.log(np.clip(p, *cal.LOG_LOSS_CLIP)) + (1 - y) * np.log(1 - np.clip(p, *cal.LOG_LOSS_CLIP))),
    "accuracy": lambda p, y: ((p >= 0.5) == (y == 1)).astype(float),
    "overconfidence": lambda p, y: np.where(p >= 0.5, p, 1 - p) - ((p >= 0.5) == (y == 1)),
}
BINARY_WHOLE: dict[str, Callable[..., Any]] = {"auc": cal.auc, "ece": cal.ece, "ece_debiased": cal.ece_debiased,
                                               "shrinkage_a": lambda p, y, w=None: cal.shrinkage_fit(p, y, w)[0]}


def _binary_changes(suite: str, condition: str, pairs: Sequence[tuple[ItemRecord, ItemRecord]],
                    options: AggregateOptions) -> list[Change | None]:
    p_now = np.array([a.prompt("yes").mean(keep_fifty=True) / 100 for a, _ in pairs])
    p_before = np.array([b.prompt("yes").mean(keep_fifty=True) / 100 for _, b in pairs])
    y = np.array([1.0 if a.outcome else 0.0 for a, _ in pairs])
    keep = np.isfinite(p_now) & np.isfinite(p_before)
    p_now, p_before, y = p_now[keep], p_before[keep], y[keep]
    # A sample without a confident miss hides the outcomes' spread from a change as from a
    # level (docs/statistics.md, "Known-answer scores without a confident miss"), on either
    # side: whichever run is the sharper is flattered by it.
    out: list[Change | None] = [
        _decomposable(suite, condition, name, f(p_now, y), f(p_before, y), options,
                      outcome_sd=cal.null_sd_floor(cal.change_null_sd(p_now, p_before, name), p_now.size)
                      if name in OUTCOME_FLOORED and p_now.size else 0.0)
        for name, f in BINARY_DECOMPOSABLE.items()
    ]
    if p_now.size < 2:
        return out
    # Whole-sample metrics: paired bootstrap of the difference; CI (percentile) and p from the
    # same draws, so p < 0.05 exactly when the CI excludes 0.
    rng = seeded_rng(options.seed, "baseline", suite, condition, "binary")

    def statistics(w: np.ndarray) -> dict[str, Any]:
        return {name: np.atleast_1d(f(p_now, y, w)) - np.atleast_1d(f(p_before, y, w)) for name, f in BINARY_WHOLE.items()}

    draws = bootstrap_draws(statistics, p_now.size, rng, options.n_resamples)
    for name, f in BINARY_WHOLE.items():
        before_value, now_value = float(f(p_before, y)), float(f(p_now, y))
        cd = bootstrap_confidence(draws[name], now_value - before_value, bias_correct=False)
        interval = cd.interval()
        out.append(Change(suite, condition, name, before_value, now_value, interval.low, interval.high,
                          int(p_now.size), cd.p_value(0.0), "paired bootstrap percentile", cd))
    return out
