"""What the HTML report's figures show, as plain data; ``plots`` only draws it.

Every number here comes from the aggregates (estimates and CIs) or, for the reliability
diagram and the dose-response ladders, from the items' mean answers, binned and checked the
way the metrics do it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ...metrics.axioms import dose_response_steps
from ...metrics.calibration import N_BINS, bin_index
from ...records.item import ItemRecord
from ...scoring.aggregate import Aggregate, binary_data
from ...scoring.baseline import Comparison
from ...scoring.gates.spec import EFFECT_METRICS
from .fmt import excludes_zero, is_pp
from .tables import KEY_ORDER, groups_with, index_aggregates


@dataclass(frozen=True)
class ValencePoint:
    """One suite/condition (or one run): mean P+ - 50 and P- - 50 with 95% CIs, in pp."""

    label: str
    delta_plus: float
    plus_low: float
    plus_high: float
    delta_minus: float
    minus_low: float
    minus_high: float


@dataclass(frozen=True)
class Estimate:
    """One row of a bar or forest plot: an estimate and its 95% CI; ``panel`` groups rows
    that share a scale (e.g. percentage points vs rates)."""

    label: str
    value: float
    low: float
    high: float
    panel: str = ""

    @property
    def excludes_zero(self) -> bool:
        return excludes_zero(self.low, self.high)


@dataclass(frozen=True)
class Ladder:
    """One dose-response item: the mean answer per rung, the direction it should move, and
    the steps (index i: rung i to i + 1) that move against it at tolerance 0."""

    label: str
    means: tuple[float, ...]
    direction: str  # increasing | decreasing
    reversals: tuple[int, ...] = ()


@dataclass(frozen=True)
class LadderGroup:
    suite: str
    condition: str
    ladders: tuple[Ladder, ...]

    @property
    def reversals(self) -> int:
        return sum(len(ladder.reversals) for ladder in self.ladders)


@dataclass(frozen=True)
class Reliability:
    """A reliability diagram's data: per equal-width bin, the count, the mean stated
    probability and the observed frequency of yes (NaN in empty bins)."""

    suite: str
    condition: str
    n: int
    count: tuple[float, ...]
    mean_p: tuple[float, ...]
    freq: tuple[float, ...]


def valence_points(aggregates: Sequence[Aggregate]) -> list[ValencePoint]:
    index = index_aggregates(aggregates)
    points = []
    for suite, condition in groups_with(aggregates, "skew"):
        dp, dm = index.get((suite, condition, "delta_plus", None)), index.get((suite, condition, "delta_minus", None))
        if dp is not None and dm is not None:
            points.append(ValencePoint(f"{suite} / {condition}", dp.value, dp.ci_low, dp.ci_high,
                                       dm.value, dm.ci_low, dm.ci_high))
    return points


def domain_estimates(aggregates: Sequence[Aggregate]) -> list[Estimate]:
    """Per-domain Skew under ``base`` (the gated arm); the suite is named when several have domains."""
    rows = [a for a in aggregates if a.metric == "skew" and a.domain and a.condition == "base"]
    several = len({a.suite for a in rows}) > 1
    return [Estimate(f"{a.suite}: {a.domain}" if several else str(a.domain), a.value, a.ci_low, a.ci_high)
            for a in sorted(rows, key=lambda a: (a.suite, a.domain or ""))]


def effect_estimates(aggregates: Sequence[Aggregate]) -> list[Estimate]:
    """Condition effects, one panel per metric."""
    effects = sorted((a for a in aggregates if a.metric in EFFECT_METRICS),
                     key=lambda a: (a.metric, a.suite, a.condition))
    return [Estimate(f"{a.suite}: {a.condition}", a.value, a.ci_low, a.ci_high, a.metric) for a in effects]


def change_estimates(comparison: Comparison | None) -> list[Estimate]:
    """Key metrics' changes under base (every arm is in the table), one panel per scale."""
    if comparison is None:
        return []
    rows = [c for c in comparison.changes if c.metric in KEY_ORDER and c.condition == "base"]
    return [Estimate(f"{c.suite}: {c.metric}", c.delta, c.ci_low, c.ci_high,
                     "pp" if is_pp(c.metric) else "rate or score")
            for c in sorted(rows, key=lambda c: (not is_pp(c.metric), c.suite, c.metric))]


def reliability_bins(p: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(count, mean predicted, observed frequency) per bin of the calibration metrics."""
    p_arr, y_arr = np.asarray(p, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(p_arr) & np.isfinite(y_arr)
    p_arr, y_arr = p_arr[keep], y_arr[keep]
    index = bin_index(p_arr, N_BINS)
    count = np.bincount(index, minlength=N_BINS).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = np.bincount(index, weights=p_arr, minlength=N_BINS) / count
        freq = np.bincount(index, weights=y_arr, minlength=N_BINS) / count
    return count, mean_p, freq


def reliability(suite: str, condition: str, p: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray
                ) -> Reliability:
    count, mean_p, freq = reliability_bins(p, y)
    return Reliability(suite, condition, int(count.sum()), tuple(count.tolist()), tuple(mean_p.tolist()),
                       tuple(freq.tolist()))


def reliability_data(records: Iterable[ItemRecord]) -> list[Reliability]:
    """One diagram per suite x condition with known-answer items that were answered."""
    by_group: dict[tuple[str, str], list[ItemRecord]] = defaultdict(list)
    for record in records:
        if record.kind == "binary":
            by_group[(record.suite, record.condition)].append(record)
    out = []
    for (suite, condition), group in sorted(by_group.items()):
        p, y, _ids = binary_data(group)
        if p.size:
            out.append(reliability(suite, condition, p, y))
    return out


def make_ladder(label: str, means: Sequence[float], direction: str) -> Ladder:
    values = np.asarray(means, dtype=float)
    steps = () if values.size < 2 or np.isnan(values).any() else \
        tuple(int(i) for i in np.flatnonzero(dose_response_steps(values, direction)))
    return Ladder(label, tuple(float(v) for v in values), direction, steps)


def ladder_groups(records: Iterable[ItemRecord]) -> list[LadderGroup]:
    by_group: dict[tuple[str, str], list[Ladder]] = defaultdict(list)
    for r in records:
        if r.kind == "dose_response":
            by_group[(r.suite, r.condition)].append(
                make_ladder(r.item, [p.mean(keep_fifty=True) for p in r.prompts], r.direction or "increasing"))
    return [LadderGroup(s, c, tuple(ladders)) for (s, c), ladders in sorted(by_group.items())]

