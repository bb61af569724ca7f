"""Per-item records -> aggregate metrics with CIs, per suite x condition (and per domain).

Pure. Results do not depend on the order records arrived in (xdist): groups and items are
sorted, and each metric family's resampling has its own generator seeded from (seed, suite,
condition, metric, domain).
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..kinds import KINDS, DerivedTable, kind_of, uses, violation_metric
from ..kinds.base import BINARY, SKEW, VIOLATION, violation_counts
from ..metrics import axioms
from ..metrics import calibration as cal
from ..metrics import skew as skew_metrics
from ..metrics.calibration_ci import binary_confidences
from ..metrics.confidence import NATURAL_BOUNDS, Confidence, studentized_bootstrap
from ..metrics.rates import rate_confidence
from ..metrics.resample import scoring_numpy
from ..metrics.stats import (
    DEFAULT_RESAMPLES,
    Interval,
    mann_whitney_p,
    paired_permutation_p,
    sign_test_p,
    tost_p,
    wilcoxon_p,
)
from ..records.item import REFUSAL_VALUE, ItemRecord, prompt_means, prompt_sds
from .families import ANSWER_METRICS, BINARY_METRICS, CONDITION_METRICS, SKEW_METRICS
from .labels import quadrant_label


def _kinds_using(family: str) -> tuple[str, ...]:
    return tuple(name for name, kind in KINDS.items() if family in kind.families)


def _metric_kinds() -> dict[str, tuple[str, ...] | None]:
    table: dict[str, tuple[str, ...] | None] = dict.fromkeys(SKEW_METRICS, _kinds_using(SKEW))
    table.update(dict.fromkeys(ANSWER_METRICS))
    table.update(dict.fromkeys(BINARY_METRICS, _kinds_using(BINARY)))
    table.update({violation_metric(k): (k.name,) for k in KINDS.values() if VIOLATION in k.families})
    table.update(dict.fromkeys(CONDITION_METRICS))
    return table


# Every metric name gates may use, and the item kinds each applies to (None: every kind).
METRIC_KINDS: Mapping[str, tuple[str, ...] | None] = DerivedTable(_metric_kinds)
# Violation-rate metric -> its kind.
VIOLATION_METRICS: Mapping[str, str] = DerivedTable(
    lambda: {violation_metric(k): k.name for k in KINDS.values() if VIOLATION in k.families}
)
# Margin (pp) under which a condition effect counts as negligible, for the TOST equivalence
# test: the paper calls perspective effects of |delta| < 2 pp "near zero".
EQUIVALENCE_MARGIN = 2.0


@dataclass(frozen=True)
class AggregateOptions:
    keep_fifty: bool = False
    seed: int = 0
    n_resamples: int = DEFAULT_RESAMPLES
    base_rate: float | None = None  # out-of-sample climatology for binary items, 0-1
    # Violation tolerances (pp) to compute, per violation metric; the default is always computed.
    tolerances: Mapping[str, tuple[float, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Aggregate:
    suite: str
    condition: str
    metric: str
    value: float
    ci_low: float
    ci_high: float
    n: int
    domain: str | None = None
    p_value: float | None = None
    ci_method: str = "none"
    tolerance: float | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)
    # The estimate's confidence distribution: its interval at any level and the p value of
    # any bound (metrics.confidence, metrics.gate_tests). Not serialised.
    confidence: Confidence | None = field(default=None, compare=False, repr=False)

    @property
    def interval_reason(self) -> str | None:
        """Why there is no honest interval (no spread, perfect separation, too few items, a
        bias correction beyond the draws); None when there is one. CI gates on such an
        aggregate are not evaluated: its interval, if any is printed, decides nothing."""
        return self.confidence.reason if self.confidence is not None else None

    def to_dict(self) -> dict[str, Any]:
        out = {
            "suite": self.suite, "condition": self.condition, "metric": self.metric,
            "domain": self.domain, "value": finite_or_none(self.value), "ci_low": finite_or_none(self.ci_low),
            "ci_high": finite_or_none(self.ci_high), "n": self.n, "p_value": finite_or_none(self.p_value),
            "ci_method": self.ci_method, "tolerance": self.tolerance, **dict(self.detail),
        }
        if (reason := self.interval_reason) is not None:
            out["no_interval_reason"] = reason
        return out


def finite_or_none(value: float | None) -> float | None:
    """JSON has no NaN or infinity: report them as null."""
    return None if value is None or not np.isfinite(value) else float(value)


def metric_applies(metric: str, kinds: Iterable[str]) -> bool:
    wanted = METRIC_KINDS[metric]
    return wanted is None or any(kind in wanted for kind in kinds)


def seeded_rng(*parts: Any) -> np.random.Generator:
    text = "\x1f".join(str(p) for p in parts)
    return np.random.default_rng(int.from_bytes(hashlib.sha256(text.encode()).digest()[:16], "little"))


def answer_resolution(records: Iterable[ItemRecord]) -> float:
    """The step of the answers these records hold: 1 pp when every parsed answer is a whole
    number (what the prompts ask for), else 0 (unknown: no floor)."""
    for record in records:
        for answer in record.answers():
            if answer.value is not None and not float(answer.value).is_integer():
                return 0.0
    return 1.0


def resolution_sd(resolution: float, prompts: int) -> float:
    """The smallest SD a per-item value made of ``prompts`` prompt means (each with weight
    +-1) can show: each mean is known to within its answers' step h, a uniform rounding of
    variance h^2 / 12 (Sheppard 1898). Not divided by the samples per prompt: k identical
    samples of one prompt are one rounding, not k independent ones."""
    return resolution * math.sqrt(prompts / 12.0)


class _Group:
    """The records of one suite x condition, and a seeded generator per metric."""

    def __init__(self, suite: str, condition: str, records: list[ItemRecord], options: AggregateOptions):
        self.suite, self.condition, self.options = suite, condition, options
        self.records = sorted(records, key=lambda r: r.item)

    @property
    def resolution(self) -> float:
        if not hasattr(self, "_resolution"):
            self._resolution = answer_resolution(self.records)
        return self._resolution

    def floor(self, prompts: int) -> float:
        return resolution_sd(self.resolution, prompts)

    def of_kind(self, kind: str) -> list[ItemRecord]:
        return [r for r in self.records if r.kind == kind]

    def of_family(self, family: str) -> list[ItemRecord]:
        """The records of every kind the family applies to."""
        return [r for r in self.records if uses(r.kind, family)]

    def rng(self, metric: str, domain: str | None = None) -> np.random.Generator:
        return seeded_rng(self.options.seed, self.suite, self.condition, metric, domain or "")

    def make(self, metric: str, value: float, interval: Interval, n: int, **kw: Any) -> Aggregate:
        return Aggregate(self.suite, self.condition, metric, float(value), interval.low,
                         interval.high, n, ci_method=interval.method, **kw)

    def mean_with_ci(self, metric: str, values: np.ndarray, domain: str | None = None, sd_floor: float = 0.0,
                     **kw: Any) -> Aggregate:
        values = np.asarray(values, dtype=float)
        value = float(np.mean(values)) if values.size else float("nan")
        cd = studentized_bootstrap(values, self.rng(metric, domain), self.options.n_resamples, NATURAL_BOUNDS.get(metric),
                                   sd_floor=sd_floor)
        return self.make(metric, value, cd.interval(), int(values.size), domain=domain, confidence=cd, **kw)

    def rate(self, metric: str, hits: Sequence[int], checks: Sequence[int], **kw: Any) -> Aggregate:
        """A rate over clustered checks: per-item hits and checks (one check each: independent)."""
        total = int(sum(checks))
        value = sum(hits) / total if total else float("nan")
        cd = rate_confidence(hits, checks)
        return self.make(metric, value, cd.interval(), total, confidence=cd, **kw)


Suites = list[tuple[str, dict[str, list[ItemRecord]], list["_Group"]]]


def aggregate(records: Iterable[ItemRecord], options: AggregateOptions = AggregateOptions(),
              pool: Executor | None = None, ahead: SuitesAhead | None = None) -> list[Aggregate]:
    """Every metric this version computes, for every suite x condition that has records.
    ``pool``: processes that score whole suites beside this one; ``ahead``: the suites
    given to them while the items ran. The aggregates are the same either way."""
    by_suite: dict[str, list[ItemRecord]] = defaultdict(list)
    for record in records:
        by_suite[record.suite].append(record)
    suites: Suites = [_suite_entry(suite, _by_condition(by_suite[suite]), options) for suite in sorted(by_suite)]
    with scoring_numpy():
        if pool is not None and len(suites) > 1:
            return _shared_suites(suites, options, pool, ahead)
        return _aggregate_suites(suites, options)


def _by_condition(records: Iterable[ItemRecord]) -> dict[str, list[ItemRecord]]:
    by_condition: dict[str, list[ItemRecord]] = defaultdict(list)
    for record in records:
        by_condition[record.condition].append(record)
    return by_condition


def _suite_entry(suite: str, by_condition: dict[str, list[ItemRecord]],
                 options: AggregateOptions) -> tuple[str, dict[str, list[ItemRecord]], list[_Group]]:
    return suite, by_condition, [_Group(suite, c, by_condition[c], options) for c in sorted(by_condition)]


def _record_ids(by_condition: Mapping[str, Sequence[ItemRecord]]) -> list[int]:
    """Which records a suite was scored from, in the order its groups take them."""
    return [id(r) for c in sorted(by_condition) for r in by_condition[c]]


def _aggregate_suites(suites: Suites, options: AggregateOptions) -> list[Aggregate]:
    out: list[Aggregate] = []
    # The binary families run in one worker thread beside the rest, which is most of a second
    # core's work: their matrix products and draws release the GIL. Each family has its own
    # generator and the results are put in the usual order, so nothing depends on the timing.
    # (They touch no warnings filters, which are not thread-safe.)
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="optbench-binary")
    try:
        binary = {(g.suite, g.condition): pool.submit(_binary_family, g) for _, _, groups in suites for g in groups}
        for suite, by_condition, groups in suites:
            for group in groups:
                out.extend(_answer_rates(group))
                out.extend(_skew_family(group))
                out.extend(binary[group.suite, group.condition].result())
                out.extend(_axiom_family(group))
            out.extend(condition_effects(suite, by_condition, options))
    finally:
        pool.shutdown(cancel_futures=True)
    return out


def suite_aggregates(suite: str, by_condition: dict[str, list[ItemRecord]], options: AggregateOptions) -> list[Aggregate]:
    """One suite's aggregates, in their usual order (also in a pool's process)."""
    with scoring_numpy():
        return _aggregate_suites([_suite_entry(suite, by_condition, options)], options)


def _shared_suites(suites: Suites, options: AggregateOptions, pool: Executor, ahead: SuitesAhead | None) -> list[Aggregate]:
    """The pool scores suites from the last backwards (after those given to it ahead) while
    this process scores them from the first, taking back each one the pool has not started
    and leaving it those it has. Every family's generator is its own, so each suite's
    aggregates are the same whoever computes them."""
    ahead = ahead if ahead is not None and ahead.options == options else None
    futures: list[Future[list[Aggregate]] | None] = [
        ahead.ready(suite, by_condition) if ahead else None
        for suite, by_condition, _ in suites]
    for i in reversed(range(len(suites))):
        if futures[i] is None:
            futures[i] = _submit(pool, suites[i][0], dict(suites[i][1]), options)
    done: dict[int, list[Aggregate]] = {}
    for i, (suite, by_condition, groups) in enumerate(suites):
        if futures[i] is None or futures[i].cancel():  # type: ignore[union-attr]
            done[i] = _aggregate_suites([(suite, by_condition, groups)], options)
    out: list[Aggregate] = []
    for i, (suite, by_condition, groups) in enumerate(suites):
        if i not in done:
            try:
                done[i] = futures[i].result()  # type: ignore[union-attr]
            except Exception:  # noqa: BLE001 - a broken pool: scored here
                done[i] = _aggregate_suites([(suite, by_condition, groups)], options)
        out.extend(done.pop(i))
    return out


def _submit(pool: Executor, suite: str, by_condition: dict[str, list[ItemRecord]],
            options: AggregateOptions) -> Future[list[Aggregate]] | None:
    """The suite given to the pool, or None when the pool takes no more work (broken, shut)."""
    try:
        return pool.submit(suite_aggregates, suite, by_condition, options)
    except Exception:  # noqa: BLE001 - BrokenProcessPool, RuntimeError after shutdown: scored here
        return None


class SuitesAhead:
    """Suites given to a pool as soon as their last record is in (a serial run knows each
    suite's items), so that it scores them while the last items run. ``aggregate`` takes a
    suite's aggregates from here only if its records are still the same objects, in the
    same order."""

    def __init__(self, pool: Executor, items_per_suite: Mapping[str, int], options: AggregateOptions) -> None:
        self.pool, self.options = pool, options
        self._left = dict(items_per_suite)
        self._given: dict[str, tuple[list[int], Future[list[Aggregate]]]] = {}

    def add(self, record: ItemRecord, records: Mapping[tuple[str, str, str], ItemRecord]) -> None:
        """``record`` has just been added to ``records`` (by key)."""
        left = self._left.get(record.suite)
        if left is None:
            return
        self._left[record.suite] = left - 1
        if left == 1:
            by_condition = _by_condition(records[k] for k in sorted(k for k in records if k[0] == record.suite))
            future = _submit(self.pool, record.suite, by_condition, self.options)
            if future is not None:
                self._given[record.suite] = (_record_ids(by_condition), future)

    def ready(self, suite: str, by_condition: Mapping[str, Sequence[ItemRecord]]) -> Future[list[Aggregate]] | None:
        """The pool's work on ``suite``, if it was given exactly these records."""
        given = self._given.pop(suite, None)
        if given is None:
            return None
        if given[0] != _record_ids(by_condition):
            given[1].cancel()
            return None
        return given[1]


# --------------------------------------------------------------------------- every kind


def _answer_rates(group: _Group) -> list[Aggregate]:
    # Per item (the answers of one item are clustered: its prompts and their samples).
    answers = [r.answers() for r in group.records]
    received = [[a for a in item if a.error is None] for item in answers]
    parsed = [[a for a in item if a.value is not None] for item in received]
    fifties = [sum(1 for a in item if a.value == REFUSAL_VALUE) for item in parsed]
    sds = prompt_sds([p for r in group.records for p in r.prompts])
    sds = sds[~np.isnan(sds)]  # prompts with fewer than two values have none
    return [
        group.rate("error_rate", [len(a) - len(r) for a, r in zip(answers, received, strict=True)], [len(a) for a in answers]),
        group.rate("parse_rate", [len(p) for p in parsed], [len(r) for r in received]),
        group.rate("refusal_rate", fifties, [len(p) for p in parsed]),
        group.mean_with_ci("item_sd", sds, sd_floor=group.floor(1)),
    ]


def primary_answer(record: ItemRecord, keep_fifty: bool) -> float:
    """The one number condition effects compare (the kind decides: P+ for pairs, else the
    mean over prompts)."""
    return kind_of(record.kind).primary_answer(record, keep_fifty)


# --------------------------------------------------------------------------- inverted pairs


def pair_answers(records: Sequence[ItemRecord], keep_fifty: bool) -> tuple[np.ndarray, np.ndarray]:
    return (prompt_means([r.prompt("positive") for r in records], keep_fifty),
            prompt_means([r.prompt("negative") for r in records], keep_fifty))


def _skew_family(group: _Group) -> list[Aggregate]:
    pairs = group.of_family(SKEW)
    if not pairs:
        return []
    p_plus, p_minus = pair_answers(pairs, group.options.keep_fifty)
    usable = axioms.usable(p_plus, p_minus)
    plus, minus = p_plus[usable], p_minus[usable]
    skews = skew_metrics.pair_skews(plus, minus)
    one, two = group.floor(1), group.floor(2)
    plus_agg = _mean_test(group.mean_with_ci("delta_plus", plus - 50.0, sd_floor=one), plus - 50.0)
    minus_agg = _mean_test(group.mean_with_ci("delta_minus", minus - 50.0, sd_floor=one), minus - 50.0)
    skew_agg = _mean_test(group.mean_with_ci("skew", skews, sd_floor=two), skews)
    # A quadrant only where Skew's and both parts' CIs back the signs (scoring/labels.py).
    label = quadrant_label((skew_agg.value, skew_agg.ci_low, skew_agg.ci_high),
                           (plus_agg.value, plus_agg.ci_low, plus_agg.ci_high),
                           (minus_agg.value, minus_agg.ci_low, minus_agg.ci_high), n=skew_agg.n)
    out = [replace(skew_agg, detail={**skew_agg.detail, "quadrant": label}), plus_agg, minus_agg]
    domains = np.array([r.domain or "" for r in pairs])[usable]
    for domain in sorted(set(domains) - {""}):
        in_domain = skews[domains == domain]
        out.append(_mean_test(group.mean_with_ci("skew", in_domain, domain=domain, sd_floor=two), in_domain))

    # Unsigned coherence, on every parsed answer (a 50 is a legitimate half of a pair here).
    all_plus, all_minus = (p_plus, p_minus) if group.options.keep_fifty else pair_answers(pairs, keep_fifty=True)
    both = axioms.usable(all_plus, all_minus)
    out.append(group.mean_with_ci("complement_violation", axioms.complement_violation(all_plus[both], all_minus[both]),
                                  sd_floor=two))
    with_expected = [i for i, r in enumerate(pairs) if r.expected is not None]
    calibration = np.abs(all_plus[with_expected] - np.array([pairs[i].expected for i in with_expected], dtype=float))
    calibration = calibration[np.isfinite(calibration)]
    if calibration.size:
        out.append(group.mean_with_ci("calibration_error", calibration, sd_floor=one))
    return out


def _mean_test(agg: Aggregate, values: np.ndarray) -> Aggregate:
    """p of "the mean is 0" from the aggregate's own confidence distribution, so p < 0.05
    exactly when its 95% CI excludes 0. The paper's Wilcoxon signed-rank p stays in the
    detail (``p_wilcoxon``): it tests symmetry about 0, not the mean, and rejects a zero mean
    of right-skewed items far more often than 5% (bench/bench_gate_tests.py)."""
    values = values[np.isfinite(values)]
    if agg.confidence is not None and values.size >= 2:
        p = agg.confidence.p_value(0.0)
    else:
        p = 1.0 if values.size else float("nan")  # one item: no evidence
    return replace(agg, p_value=p, detail={**agg.detail, "p_wilcoxon": finite_or_none(wilcoxon_p(values))})


# --------------------------------------------------------------------------- binary items


def binary_data(records: Sequence[ItemRecord]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(p in [0, 1], outcome 0/1, item ids) for the items with a usable answer."""
    p = prompt_means([r.prompt("yes") for r in records]) / 100.0
    y = np.array([1.0 if r.outcome else 0.0 for r in records])
    keep = ~np.isnan(p)
    return p[keep], y[keep], [r.item for r, k in zip(records, keep, strict=True) if k]


# The order binary metrics are reported in (reports have always listed them so).
_BINARY_ORDER = (
    "brier", "log_loss", "ece", "accuracy", "overconfidence", "auc", "climatology_brier", "brier_skill",
    "brier_recalibrated", "reliability", "resolution", "uncertainty", "within_bin_variance", "within_bin_covariance",
    "shrinkage_a", "shrinkage_b", "climatology_brier_oos", "brier_skill_oos", "ece_debiased",
)


def _binary_family(group: _Group) -> list[Aggregate]:
    records = group.of_family(BINARY)
    if not records:
        return []
    p, y, _ids = binary_data(records)
    n = p.size
    if n == 0:
        return []
    base_rate = group.options.base_rate
    loo_sq_error = (cal.loo_recalibrated(p, y) - y) ** 2

    def statistics(w: np.ndarray | None) -> dict[str, Any]:
        return cal.whole_sample_metrics(p, y, w, base_rate, with_auc=w is None)

    # One shared set of resamples, so every binary metric's CI is paired over the same items.
    # The means of per-item scores (Brier, log loss, ...) come from binary_confidences.
    point, confidences = binary_confidences(statistics, {**cal.item_scores(p, y), "brier_recalibrated": loo_sq_error},
                                            p, y, group.rng("binary"), group.options.n_resamples, base_rate)
    p_values = _binary_p_values(p, y, loo_sq_error, base_rate, group)
    details: dict[str, dict[str, Any]] = {}
    if "auc" in confidences:
        # AUC's p is "no discrimination" (0.5) on its own confidence distribution, so it is
        # below 0.05 exactly when the 95% CI excludes 0.5; Mann-Whitney's stays in the detail.
        mann_whitney = p_values.pop("auc", None)
        auc_p = confidences["auc"].p_value(0.5)
        if math.isfinite(auc_p):
            p_values["auc"] = auc_p
        details["auc"] = {"p_mann_whitney": finite_or_none(mann_whitney)}
    order = sorted(point, key=lambda name: _BINARY_ORDER.index(name) if name in _BINARY_ORDER else len(_BINARY_ORDER))
    return [group.make(name, float(point[name]), confidences[name].interval(), n, p_value=p_values.get(name),
                       confidence=confidences[name], **({"detail": details[name]} if name in details else {}))
            for name in order]


def _binary_p_values(p: np.ndarray, y: np.ndarray, loo_sq_error: np.ndarray, base_rate: float | None,
                     group: _Group) -> dict[str, float]:
    """Paired permutation tests against climatology; Mann-Whitney for AUC against 0.5 (kept in
    the AUC's detail as ``p_mann_whitney``; its ``p_value`` comes from its interval's family)."""
    out: dict[str, float] = {}
    model_sq = (p - y) ** 2
    in_sample = y.mean()
    out["brier_skill"] = paired_permutation_p(model_sq - (in_sample - y) ** 2, group.rng("brier_skill_p"),
                                              group.options.n_resamples)
    out["brier_recalibrated"] = paired_permutation_p(loo_sq_error - model_sq, group.rng("recal_p"),
                                                     group.options.n_resamples)
    if base_rate is not None:
        out["brier_skill_oos"] = paired_permutation_p(model_sq - (base_rate - y) ** 2, group.rng("oos_p"),
                                                      group.options.n_resamples)
    yes, no = p[y == 1], p[y == 0]
    if yes.size and no.size:
        out["auc"] = mann_whitney_p(yes, no)
    return out


# --------------------------------------------------------------------------- axiom batteries


def axiom_violations(records: Sequence[ItemRecord], kind: str, tolerance: float) -> tuple[int, int, list[str]]:
    """(violations, checks, violating item ids) for one battery at one tolerance."""
    return kind_of(kind).violations(records, tolerance)


def _axiom_family(group: _Group) -> list[Aggregate]:
    out = []
    for kind in KINDS.values():
        if VIOLATION not in kind.families:
            continue
        records = group.of_kind(kind.name)
        if not records:
            continue
        metric = violation_metric(kind)
        # The metric's default tolerance, and every other one a gate asks for (0 only then).
        for tolerance in sorted({kind.default_tolerance, *group.options.tolerances.get(metric, ())}):
            hits, checks, bad = violation_counts(kind, records, tolerance)
            out.append(group.rate(metric, hits, checks, tolerance=tolerance,
                                  detail={"violating_items": bad}))
    return out


# --------------------------------------------------------------------------- condition effects


def _paired(base: Mapping[str, float], arm: Mapping[str, float]) -> np.ndarray:
    shared = sorted(set(base) & set(arm))
    d = np.array([arm[i] - base[i] for i in shared])
    finite: np.ndarray = d[~np.isnan(d)]
    return finite


def _effect(suite: str, label: str, metric: str, d: np.ndarray, options: AggregateOptions,
            sd_floor: float = 0.0) -> Aggregate:
    rng = seeded_rng(options.seed, suite, label, metric)
    # CI and p from one method (bootstrap-t/Student), so p < 0.05 exactly when 0 is outside.
    cd = studentized_bootstrap(d, rng, options.n_resamples, NATURAL_BOUNDS.get(metric), sd_floor=sd_floor)
    interval = cd.interval()
    p = cd.p_value(0.0) if d.size >= 2 else (1.0 if d.size else float("nan"))  # one item: no evidence
    return Aggregate(
        suite, label, metric, float(d.mean()) if d.size else float("nan"), interval.low, interval.high,
        int(d.size), p_value=p, ci_method=interval.method, confidence=cd,
        detail={"p_permutation": finite_or_none(paired_permutation_p(
                    d, seeded_rng(options.seed, suite, label, metric, "p"), options.n_resamples)),
                "p_wilcoxon": finite_or_none(wilcoxon_p(d)), "p_sign": finite_or_none(sign_test_p(d)),
                "p_equivalence": finite_or_none(tost_p(d, EQUIVALENCE_MARGIN)),
                "equivalence_margin": EQUIVALENCE_MARGIN},
    )


def condition_effects(suite: str, by_condition: Mapping[str, list[ItemRecord]], options: AggregateOptions) -> list[Aggregate]:
    """Paired effects of every arm against ``base`` (and narrative up vs down), by item."""
    if "base" not in by_condition or len(by_condition) < 2:
        return []
    keep = options.keep_fifty

    def primary(condition: str) -> dict[str, float]:
        return {r.item: primary_answer(r, keep) for r in by_condition[condition]}

    def skews(condition: str) -> dict[str, float]:
        pairs = [r for r in by_condition[condition] if uses(r.kind, SKEW)]
        plus, minus = pair_answers(pairs, keep)
        return dict(zip([r.item for r in pairs], skew_metrics.pair_skews(plus, minus), strict=True))

    base, base_skews = primary("base"), skews("base")
    step = answer_resolution(r for records in by_condition.values() for r in records)
    out = []
    for arm in sorted(c for c in by_condition if c != "base"):
        out.append(_effect(suite, arm, "condition_effect", _paired(base, primary(arm)), options,
                           resolution_sd(step, 2)))
        if base_skews:
            out.append(_effect(suite, arm, "skew_effect", _paired(base_skews, skews(arm)), options,
                               resolution_sd(step, 4)))
    if "narrative_up" in by_condition and "narrative_down" in by_condition:
        d = _paired(primary("narrative_down"), primary("narrative_up"))
        out.append(_effect(suite, "narrative_up-narrative_down", "narrative_susceptibility", d, options,
                           resolution_sd(step, 2)))
    return out
