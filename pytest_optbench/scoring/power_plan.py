"""Power from a finished run's JSON report: the smallest crossing or change it can detect,
and the items and samples a target effect needs (``optbench power``).

Pure. Skew, delta_plus and delta_minus are decomposed into item and sample variance from the
run's own answers (``metrics.power``), so the answer covers more samples per prompt as well
as more items. Every other metric is read off its stored 95% CI (per-item SD = se sqrt(n),
se from the CI's longer half), which answers for more items at the run's own samples; a
change of such a metric needs a baseline comparison in the report. Tests are one-sided at
2.5% with 80% power: an ``evidence: ci`` gate, or a 95% CI of a change that excludes 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..metrics.power import (
    POWER,
    DesignRow,
    VarianceComponents,
    design_table,
    item_variance,
    minimum_detectable_effect,
    pair_variance_components,
    required_items,
    variance_components,
)
from ..records.item import ItemRecord
from .tolerances import display_rank

ALPHA, SIDES = 0.025, 1  # one-sided 2.5%: a CI gate; a 95% CI of a change that excludes 0
Z_975 = 1.959963984540054
DECOMPOSED = ("skew", "delta_plus", "delta_minus")
SAMPLES = (1, 2, 3, 5, 10, 20)


@dataclass(frozen=True)
class PowerRow:
    """One (suite, condition, metric) of a run, and what its data can resolve."""

    suite: str
    condition: str
    metric: str
    n: int  # items (answers, checks for rates) the estimate rests on
    samples: float | None  # samples per prompt in the run (decomposed metrics only)
    detectable: float  # smallest crossing of a bound detected with 80% power
    detectable_change: float  # smallest change against a run on the same items (NaN: unknown)
    components: VarianceComponents | None = None  # decomposed metrics
    sd: float = math.nan  # per-item SD of the estimate (metrics read off their CI)
    change_sd: float = math.nan  # per-item SD of the change (from a stored baseline comparison)

    @property
    def source(self) -> str:
        return "items and samples" if self.components is not None else "stored 95% CI"

    def design(self, effect: float, change: bool = False, samples: Sequence[int] = SAMPLES) -> list[DesignRow]:
        """Items needed to detect ``effect`` (a crossing, or with ``change`` a change) per number
        of samples per prompt; one row at the run's own samples where only the CI is known."""
        if self.components is not None:
            return design_table(effect, self.components, samples, change, alpha=ALPHA, sides=SIDES)
        sd = self.change_sd if change else self.sd
        k = round(self.samples) if self.samples else 0
        if not (sd > 0 and math.isfinite(sd)):
            return [DesignRow(k, None)]
        return [DesignRow(k, required_items(effect, sd, ALPHA, POWER, SIDES))]


def _ci_sd(entry: Mapping[str, Any]) -> float:
    """Per-item SD implied by a stored estimate, its 95% CI and n."""
    numbers = [entry.get(k) for k in ("value", "ci_low", "ci_high", "n")]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in numbers):
        return math.nan
    value, low, high, n = (float(v) for v in numbers)  # type: ignore[arg-type]
    half = max(high - value, value - low)
    return half / Z_975 * math.sqrt(n) if half > 0 and n > 0 else math.nan


def _count(value: Any) -> int:
    """A stored n, 0 unless it is a whole number."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _mde(sd: float, n: int) -> float:
    return minimum_detectable_effect(sd, n, ALPHA, POWER, SIDES) if n >= 2 else math.nan


def _components(metric: str, records: Sequence[ItemRecord], keep_fifty: bool) -> VarianceComponents:
    pairs = [r for r in records if r.kind == "inverted_pair"]
    plus = [np.array(r.prompt("positive").values(keep_fifty), dtype=float) for r in pairs]
    minus = [np.array(r.prompt("negative").values(keep_fifty), dtype=float) for r in pairs]
    if metric == "skew":
        return pair_variance_components(plus, minus)
    return variance_components(plus if metric == "delta_plus" else minus)


def power_rows(data: Mapping[str, Any], records: Sequence[ItemRecord]) -> list[PowerRow]:
    """A row per overall aggregate of the report (a violation rate at its display tolerance)."""
    run = data.get("run")
    keep_fifty = bool(run.get("keep_fifty", False)) if isinstance(run, Mapping) else False
    # The baseline section is not checked when a report is read: take only well-formed changes.
    baseline = data.get("baseline")
    listed = baseline.get("changes") if isinstance(baseline, Mapping) else None
    changes = {(c.get("suite"), c.get("condition"), c.get("metric")): c
               for c in (listed if isinstance(listed, list) else []) if isinstance(c, Mapping)}
    chosen: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for a in data.get("aggregates") or []:
        if not isinstance(a, Mapping) or a.get("domain") is not None or not isinstance(a.get("metric"), str):
            continue
        key = (str(a.get("suite")), str(a.get("condition")), str(a["metric"]))
        held = chosen.get(key)
        if held is None or display_rank(key[2], a.get("tolerance")) < display_rank(key[2], held.get("tolerance")):
            chosen[key] = a
    by_group: dict[tuple[str, str], list[ItemRecord]] = {}
    for r in records:
        by_group.setdefault((r.suite, r.condition), []).append(r)
    rows = []
    for (suite, condition, metric), a in sorted(chosen.items()):
        n = _count(a.get("n"))
        change = changes.get((suite, condition, metric))
        change_n = _count(change.get("n")) if change else 0
        change_sd = _ci_sd({**change, "value": change.get("delta"), "n": change_n}) if change else math.nan
        group = by_group.get((suite, condition), [])
        if metric in DECOMPOSED and group:
            c = _components(metric, group, keep_fifty)
            if c.items >= 2 and math.isfinite(c.between) and math.isfinite(c.within) and c.samples > 0:
                k = c.samples
                rows.append(PowerRow(suite, condition, metric, c.items, k,
                                     _mde(math.sqrt(item_variance(c, k)), c.items),
                                     _mde(math.sqrt(item_variance(c, k, change=True)), c.items), c))
                continue
        sd = _ci_sd(a)
        rows.append(PowerRow(suite, condition, metric, n, None, _mde(sd, n), _mde(change_sd, change_n),
                             sd=sd, change_sd=change_sd))
    return rows
