"""Per-item records -> aggregate metrics with CIs, per suite x condition (and per domain).

Pure. Results do not depend on the order records arrived in (xdist): groups and items are
sorted, and each metric's bootstrap has its own generator seeded from (seed, suite,
condition, metric, domain).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .metrics import skew as skew_metrics
from .metrics.stats import DEFAULT_RESAMPLES, Interval, bootstrap_ci, proportion_ci, wilcoxon_p
from .records import REFUSAL_VALUE, ItemRecord

# Every metric name of the spec, and the kinds each applies to (None: every kind).
METRIC_KINDS: dict[str, tuple[str, ...] | None] = {
    "skew": ("inverted_pair",),
    "delta_plus": ("inverted_pair",),
    "delta_minus": ("inverted_pair",),
    "calibration_error": ("inverted_pair",),
    "refusal_rate": None,
    "parse_rate": None,
    "error_rate": None,
    "item_sd": None,
    "overconfidence": ("binary",),
    "brier": ("binary",),
    "log_loss": ("binary",),
    "ece": ("binary",),
    "auc": ("binary",),
    "accuracy": ("binary",),
    "reliability": ("binary",),
    "resolution": ("binary",),
    "shrinkage_a": ("binary",),
    "conjunction_violation_rate": ("conjunction",),
    "disjunction_violation_rate": ("disjunction",),
    "conditional_violation_rate": ("conditional",),
    "dose_response_violation_rate": ("dose_response",),
    "condition_effect": None,
}
# Metrics this version computes; the others are "not evaluated" by gates.
COMPUTED = {
    "skew", "delta_plus", "delta_minus", "calibration_error",
    "refusal_rate", "parse_rate", "error_rate", "item_sd",
}


@dataclass(frozen=True)
class AggregateOptions:
    keep_fifty: bool = False
    seed: int = 0
    n_resamples: int = DEFAULT_RESAMPLES


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
    detail: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "suite": self.suite, "condition": self.condition, "metric": self.metric,
            "domain": self.domain, "value": _finite(self.value), "ci_low": _finite(self.ci_low),
            "ci_high": _finite(self.ci_high), "n": self.n, "p_value": _finite(self.p_value),
            "ci_method": self.ci_method, **dict(self.detail),
        }


def _finite(value: float | None) -> float | None:
    return None if value is None or not np.isfinite(value) else float(value)


def metric_applies(metric: str, kinds: Iterable[str]) -> bool:
    wanted = METRIC_KINDS[metric]
    return wanted is None or any(kind in wanted for kind in kinds)


class _Group:
    """The records of one suite x condition, and a seeded generator per metric."""

    def __init__(self, suite: str, condition: str, records: list[ItemRecord], options: AggregateOptions):
        self.suite, self.condition, self.options = suite, condition, options
        self.records = sorted(records, key=lambda r: r.item)

    def rng(self, metric: str, domain: str | None = None) -> np.random.Generator:
        text = "\x1f".join([str(self.options.seed), self.suite, self.condition, metric, domain or ""])
        return np.random.default_rng(int.from_bytes(hashlib.sha256(text.encode()).digest()[:16], "little"))

    def make(self, metric: str, value: float, interval: Interval, n: int, **kw: Any) -> Aggregate:
        return Aggregate(self.suite, self.condition, metric, float(value), interval.low,
                         interval.high, n, ci_method=interval.method, **kw)

    def mean_with_ci(self, metric: str, values: np.ndarray, domain: str | None = None, **kw: Any) -> Aggregate:
        values = np.asarray(values, dtype=float)
        value = float(np.mean(values)) if values.size else float("nan")
        interval = bootstrap_ci(values, self.rng(metric, domain), n_resamples=self.options.n_resamples)
        return self.make(metric, value, interval, int(values.size), domain=domain, **kw)

    def rate(self, metric: str, hits: int, total: int) -> Aggregate:
        value = hits / total if total else float("nan")
        return self.make(metric, value, proportion_ci(hits, total), total)


def aggregate(records: Iterable[ItemRecord], options: AggregateOptions = AggregateOptions()) -> list[Aggregate]:
    """Every metric this version computes, for every suite x condition that has records."""
    groups: dict[tuple[str, str], list[ItemRecord]] = defaultdict(list)
    for record in records:
        groups[(record.suite, record.condition)].append(record)
    out: list[Aggregate] = []
    for (suite, condition), group_records in sorted(groups.items()):
        group = _Group(suite, condition, group_records, options)
        out.extend(_answer_rates(group))
        out.extend(_skew_family(group))
    return out


def _answer_rates(group: _Group) -> list[Aggregate]:
    answers = [a for r in group.records for a in r.answers()]
    received = [a for a in answers if a.error is None]
    parsed = [a for a in received if a.value is not None]
    fifties = sum(1 for a in parsed if a.value == REFUSAL_VALUE)
    sds = [
        float(np.std(values, ddof=1))
        for r in group.records for p in r.prompts
        if len(values := p.values(keep_fifty=True)) >= 2
    ]
    return [
        group.rate("error_rate", len(answers) - len(received), len(answers)),
        group.rate("parse_rate", len(parsed), len(received)),
        group.rate("refusal_rate", fifties, len(parsed)),
        group.mean_with_ci("item_sd", np.array(sds)),
    ]


def _skew_family(group: _Group) -> list[Aggregate]:
    pairs = [r for r in group.records if r.kind == "inverted_pair"]
    if not pairs:
        return []
    keep = group.options.keep_fifty
    p_plus = np.array([r.prompt("positive").mean(keep) for r in pairs])
    p_minus = np.array([r.prompt("negative").mean(keep) for r in pairs])
    usable = ~(np.isnan(p_plus) | np.isnan(p_minus))
    plus, minus = p_plus[usable], p_minus[usable]
    skews = skew_metrics.pair_skews(plus, minus)
    if skews.size:
        delta_plus, delta_minus = skew_metrics.valence_parts(plus, minus)
    else:
        delta_plus = delta_minus = float("nan")
    plus_agg = group.mean_with_ci("delta_plus", plus - 50.0, p_value=wilcoxon_p(plus - 50.0))
    minus_agg = group.mean_with_ci("delta_minus", minus - 50.0, p_value=wilcoxon_p(minus - 50.0))
    skew_agg = group.mean_with_ci("skew", skews, p_value=wilcoxon_p(skews))
    # Name a quadrant only for a real tilt (Skew's CI excludes 0): a coherent model on
    # unfavourable scenarios also has d+ < 0 < d-, and that is not pessimism.
    tilted = skew_agg.ci_low > 0 or skew_agg.ci_high < 0
    label = skew_metrics.quadrant(delta_plus, delta_minus) if tilted else "none"
    out = [replace(skew_agg, detail={"quadrant": label}), plus_agg, minus_agg]
    domains = np.array([r.domain or "" for r in pairs])[usable]
    for domain in sorted(set(domains) - {""}):
        in_domain = skews[domains == domain]
        out.append(group.mean_with_ci("skew", in_domain, domain=domain, p_value=wilcoxon_p(in_domain)))

    calibration = [
        abs(r.prompt("positive").mean(keep_fifty=True) - r.expected)
        for r in pairs if r.expected is not None
    ]
    calibration = [c for c in calibration if np.isfinite(c)]
    if calibration:
        out.append(group.mean_with_ci("calibration_error", np.array(calibration)))
    return out
