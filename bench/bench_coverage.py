"""Coverage benchmark: do the intervals the tool prints cover, and do its tests hold their level?

By simulation, for n = 15, 30, 60, 120 items (``--sizes``), old methods (the ones before
issue 14) beside the new ones, on the same data:

* coverage of every 95% CI the tool prints, with a binomial (Clopper-Pearson) 95% CI on the
  coverage itself; "miss lo/hi" is how often the true value lay below / above the interval;
* the rejection rate at 0.05 of every test when its null holds (and, for baseline changes,
  how often CI and p disagree: "0 outside the CI" vs "p < 0.05");
* the family-wise error of a session of many ``evidence: ci`` gates whose true values sit
  exactly at their bounds: the plain CI rule, Holm, and Benjamini-Hochberg.

Data come from two kinds of generator:

* the project's simulated models (``providers/sim.py``) through the real path: suites ->
  prompts -> simulated answers -> parser -> ItemRecords -> ``aggregate()`` / ``compare()``.
  A pool of items is simulated once per profile; each replicate draws n items from it with
  replacement, so the replicates are i.i.d. samples of the pool's distribution and the true
  value of every metric is the pool's own value (exact, no approximation);
* direct numpy generators with known population values (normal, exponential, lognormal,
  Student t3, contaminated normal means; binary forecasts with population Brier, ECE,
  AUC... from 2,000,000 draws; clustered Bernoulli checks).

Run: python bench/bench_coverage.py [--reps N] [--resamples B] [--sizes 15,30,60,120]
     [--sections means,binary,rates,baseline,tests,fwer] [--seed S]
Defaults (60 replicates) finish in about 12 minutes on one core of a busy 2-core machine
(load 7-10; 22 minutes at 120 replicates); --reps 200 took 45 minutes there. Coverage from
R replicates is known to about +-2 sqrt(0.05 / R): --reps 2000 resolves +-0.01.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import scipy.stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_optbench.elicit.engine import elicit
from pytest_optbench.kinds import kind_of
from pytest_optbench.kinds.base import violation_counts
from pytest_optbench.metrics import auc_ci, gate_tests
from pytest_optbench.metrics import calibration as cal
from pytest_optbench.metrics.calibration_ci import binary_confidences
from pytest_optbench.metrics.confidence import NATURAL_BOUNDS, Confidence, StudentizedBootstrap, studentized_bootstrap
from pytest_optbench.metrics.distribution_functions import normal_isf
from pytest_optbench.metrics.power import detectable_crossing
from pytest_optbench.metrics.rates import rate_confidence
from pytest_optbench.metrics.resample import weighted_bootstrap
from pytest_optbench.metrics.stats import (
    BATCH_CELLS,
    NO_INTERVAL,
    Interval,
    paired_permutation_p,
    proportion_ci,
    wilcoxon_p,
)
from pytest_optbench.options import Settings
from pytest_optbench.prompts.build import render_prompts
from pytest_optbench.providers.sim import SimulatedModel
from pytest_optbench.records.item import REFUSAL_VALUE, Answer, ItemRecord, PromptRecord
from pytest_optbench.scoring.aggregate import (
    AggregateOptions,
    aggregate,
    binary_data,
    pair_answers,
    resolution_sd,
)
from pytest_optbench.scoring.baseline import BINARY_DECOMPOSABLE, BINARY_WHOLE, compare
from pytest_optbench.suite.load import Suite, parse_suite

SECTIONS = ("means", "binary", "rates", "baseline", "tests", "fwer", "edges", "change_power", "skewed_power",
            "auc_shapes", "ece_shapes", "coarse_shapes", "coarse_changes")
PAIR_PROFILES = ("calibrated", "optimist", "pessimist", "overclaim", "overconfident", "skewed")
BINARY_PROFILES = ("calibrated", "skewed", "overconfident")  # k = 1, 2, 5
ALPHA = 0.05

warnings.filterwarnings("ignore")


# --------------------------------------------------------------------------- tallies


@dataclass
class Tally:
    """How often an interval covered the truth, and on which side it missed."""

    covered: int = 0
    below: int = 0  # truth below the interval (the interval too high)
    above: int = 0
    total: int = 0

    def add(self, low: float, high: float, truth: float) -> None:
        self.total += 1
        if not (math.isfinite(low) and math.isfinite(high)):
            return  # no interval: counts as a miss on neither side
        if truth < low - 1e-12:
            self.below += 1
        elif truth > high + 1e-12:
            self.above += 1
        else:
            self.covered += 1

    def text(self) -> str:
        if not self.total:
            return ""
        ci = proportion_ci(self.covered, self.total)
        return f"{self.covered / self.total:.3f} ({ci.low:.3f}-{ci.high:.3f})"

    def misses(self) -> str:
        return f"{self.below / self.total:.3f}/{self.above / self.total:.3f}" if self.total else ""


@dataclass
class Rate:
    hits: int = 0
    total: int = 0

    def add(self, hit: bool) -> None:
        self.total += 1
        self.hits += bool(hit)

    def text(self) -> str:
        if not self.total:
            return ""
        ci = proportion_ci(self.hits, self.total)
        return f"{self.hits / self.total:.3f} ({ci.low:.3f}-{ci.high:.3f})"


@dataclass
class Board:
    """coverage[(metric, data, version)][n] and rates[(test, data, version)][n]."""

    coverage: dict[tuple[str, str, str], dict[int, Tally]] = field(default_factory=lambda: defaultdict(dict))
    methods: dict[tuple[str, str, str], str] = field(default_factory=dict)
    rejections: dict[tuple[str, str, str], dict[int, Rate]] = field(default_factory=lambda: defaultdict(dict))

    def cover(self, metric: str, data: str, version: str, method: str, n: int, interval: tuple[float, float],
              truth: float) -> None:
        key = (metric, data, version)
        self.methods.setdefault(key, method)
        self.coverage[key].setdefault(n, Tally()).add(interval[0], interval[1], truth)

    def reject(self, test: str, data: str, version: str, n: int, hit: bool) -> None:
        self.rejections[(test, data, version)].setdefault(n, Rate()).add(hit)


# --------------------------------------------------------------------------- simulated pools


def _pair_items(n: int) -> list[dict[str, Any]]:
    return [{"id": f"p{k:05d}", "scenario": f"Person {k} tries something uncertain.",
             "positive": "What is the probability that it works out?",
             "negative": "What is the probability that it does not work out?",
             "narrative_up": "Everything so far has gone well."} for k in range(n)]


def _suite(kind: str, n: int, samples: int = 5) -> Suite:
    if kind == "inverted_pair":
        data: dict[str, Any] = {"optbench": 1, "suite": "pairs", "kind": kind, "track": "B",
                                "defaults": {"samples": samples}, "items": _pair_items(n),
                                "conditions": {"base": {}, "narrative_up": {"scenario": "{scenario} {narrative_up}"},
                                               "framed": {"system_prefix": "Think it over."}}}
    elif kind == "binary":
        data = {"optbench": 1, "suite": "known", "kind": kind, "defaults": {"samples": samples},
                "items": [{"id": f"b{k:05d}", "question": f"Is claim {k} true?", "outcome": k % 2 == 0}
                          for k in range(n)]}
    elif kind == "dose_response":
        data = {"optbench": 1, "suite": "dose", "kind": kind, "defaults": {"samples": 3},
                "items": [{"id": f"d{k:05d}", "scenario": f"Case {k}.", "question": f"Does case {k} work out?",
                           "direction": "increasing" if k % 2 else "decreasing",
                           "ladder": ["Some evidence.", "More evidence.", "Much evidence.", "All evidence."]}
                          for k in range(n)]}
    else:  # conjunction
        data = {"optbench": 1, "suite": "conj", "kind": kind, "defaults": {"samples": 3},
                "items": [{"id": f"c{k:05d}", "scenario": f"Case {k}.", "a": f"A{k}?", "b": f"B{k}?", "both": f"AB{k}?"}
                          for k in range(n)]}
    return parse_suite(data, f"{data['suite']}.yaml", data["suite"])


_POOLS: dict[tuple[str, str, int, int], dict[str, list[ItemRecord]]] = {}


def simulate(spec: str, suite: Suite, seed: int) -> dict[str, list[ItemRecord]]:
    """Records of every item under every condition, aligned by item (simulated once)."""
    key = (spec, suite.id, len(suite.items), seed)
    if key not in _POOLS:
        t0 = time.perf_counter()
        _POOLS[key] = _simulate(spec, suite, seed)
        log(f"  pool {spec} / {suite.id}: {len(suite.items)} items in {time.perf_counter() - t0:.0f} s")
    return _POOLS[key]


def _simulate(spec: str, suite: Suite, seed: int) -> dict[str, list[ItemRecord]]:
    model = SimulatedModel(spec, seed=seed)
    out: dict[str, list[ItemRecord]] = {}
    for condition in suite.conditions:
        out[condition.name] = [
            ItemRecord(suite.id, item.id, condition.name, item.kind, suite.path, model.name,
                       elicit(model, render_prompts(suite, item, condition, Settings())), track=suite.track,
                       outcome=item.fields.get("outcome"), direction=item.fields.get("direction"))
            for item in suite.items
        ]
    return out


def draw(pool: dict[str, list[ItemRecord]], index: np.ndarray) -> list[ItemRecord]:
    """The records of the drawn items, renamed so that a twice-drawn item counts twice."""
    return [replace(records[j], item=f"{records[j].item}#{t}") for records in pool.values()
            for t, j in enumerate(index)]


# --------------------------------------------------------------------------- old methods


def bootstrap_ci(data: np.ndarray, rng: np.random.Generator, n_resamples: int) -> Interval:
    """The mean's CI before issue 14 (kept here only to measure against): SciPy's BCa,
    percentile where BCa is undefined, a point for a constant sample."""
    data = np.asarray(data, dtype=float)
    data = data[~np.isnan(data)]
    if data.size < 2:
        return NO_INTERVAL
    if np.all(data == data[0]):
        return Interval(float(data.mean()), float(data.mean()), "percentile")
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # DegenerateDataWarning: handled by the fallback
            result = scipy.stats.bootstrap((data,), np.mean, n_resamples=n_resamples, method=method, rng=rng,
                                           vectorized=True, axis=-1, batch=max(1, BATCH_CELLS // data.size))
        low, high = result.confidence_interval
        if np.isfinite(low) and np.isfinite(high):
            return Interval(float(low), float(high), method)
    return NO_INTERVAL


def old_mean(values: np.ndarray, rng: np.random.Generator, resamples: int) -> Interval:
    """Before issue 14: BCa (SciPy), percentile where BCa is undefined."""
    return bootstrap_ci(values, rng, n_resamples=resamples)


def new_mean(values: np.ndarray, rng: np.random.Generator, resamples: int, bounds: tuple[float, float] | None = None
             ) -> Confidence:
    return studentized_bootstrap(np.asarray(values, dtype=float), rng, resamples, bounds)


def old_binary(p: np.ndarray, y: np.ndarray, rng: np.random.Generator, resamples: int) -> dict[str, Interval]:
    """Before issue 14: every binary metric, BC percentile of one weighted bootstrap."""
    def statistics(w: np.ndarray | None) -> dict[str, Any]:
        return {"brier": cal.brier(p, y, w), "overconfidence": cal.overconfidence(p, y, w), "ece": cal.ece(p, y, w),
                "auc": cal.auc(p, y, w), "climatology_brier": cal.climatology_brier(y, None, w),
                "accuracy": cal.accuracy(p, y, w)}
    return weighted_bootstrap(statistics, p.size, rng, resamples)


def new_binary(p: np.ndarray, y: np.ndarray, rng: np.random.Generator, resamples: int) -> dict[str, Confidence]:
    def statistics(w: np.ndarray | None) -> dict[str, Any]:
        return {"ece": cal.ece(p, y, w), "auc": cal.auc(p, y, w), "climatology_brier": cal.climatology_brier(y, None, w)}
    scores = cal.item_scores(p, y)
    _, confidences = binary_confidences(statistics, {k: scores[k] for k in ("brier", "overconfidence", "accuracy")},
                                        p, y, rng, resamples)
    return confidences


def _violation_checks(kind: str, records: Sequence[ItemRecord]) -> tuple[list[int], list[int]]:
    hits, checks, _ = violation_counts(kind_of(kind), records, 2.0)
    return hits, checks


def old_rate(hits: Sequence[int] | np.ndarray, checks: Sequence[int] | np.ndarray) -> Interval:
    return proportion_ci(int(sum(hits)), int(sum(checks)))


# --------------------------------------------------------------------------- section: means


NUMPY_MEANS: dict[str, tuple[Callable[[np.random.Generator, int], np.ndarray], float]] = {
    "numpy normal": (lambda g, n: g.normal(0.0, 1.0, n), 0.0),
    "numpy exponential": (lambda g, n: g.exponential(1.0, n), 1.0),
    "numpy lognormal(0.75)": (lambda g, n: g.lognormal(0.0, 0.75, n), math.exp(0.75 ** 2 / 2)),
    "numpy t3": (lambda g, n: g.standard_t(3, n), 0.0),
    "numpy contaminated": (lambda g, n: np.where(g.random(n) < 0.1, g.normal(0, 5, n), g.normal(0, 1, n)), 0.0),
}


def section_means(board: Board, args: argparse.Namespace, rng: np.random.Generator) -> None:
    for name, (generate, truth) in NUMPY_MEANS.items():
        for n in args.sizes:
            for _ in range(args.reps):
                x = generate(rng, n)
                old = old_mean(x, rng, args.resamples)
                board.cover("mean (Skew, d+/d-, effects)", name, "old", old.method, n, (old.low, old.high), truth)
                new = new_mean(x, rng, args.resamples).interval()
                board.cover("mean (Skew, d+/d-, effects)", name, "new", new.method, n, (new.low, new.high), truth)
    suite = _suite("inverted_pair", args.pool)
    for profile in PAIR_PROFILES:
        pool = simulate(profile, suite, seed=args.seed)
        truths = _pair_truths(pool)
        reps = max(1, args.reps // 2)
        for n in args.sizes:
            for r in range(reps):
                index = rng.integers(0, args.pool, n)
                records = draw(pool, index)
                options = AggregateOptions(seed=r, n_resamples=args.resamples)
                got = {(a.condition, a.metric): a for a in aggregate(records, options) if a.domain is None}
                arrays = _pair_arrays(records)
                data = f"sim:{profile}"
                for key, values in arrays.items():
                    truth = truths[key]
                    old = old_mean(values, rng, args.resamples)
                    board.cover(key[1], data, "old", old.method, n, (old.low, old.high), truth)
                    agg = got.get(key)
                    if agg is not None:
                        board.cover(key[1], data, "new", agg.ci_method, n, (agg.ci_low, agg.ci_high), truth)


def _pair_arrays(records: Iterable[ItemRecord]) -> dict[tuple[str, str], np.ndarray]:
    """The per-item values aggregate() averages, for the old methods and the truths."""
    by_condition: dict[str, list[ItemRecord]] = defaultdict(list)
    for r in records:
        by_condition[r.condition].append(r)
    for rs in by_condition.values():
        rs.sort(key=lambda r: r.item)
    plus, minus = pair_answers(by_condition["base"], keep_fifty=False)
    use = np.isfinite(plus) & np.isfinite(minus)
    out = {("base", "skew"): (plus + minus - 100)[use], ("base", "delta_plus"): (plus - 50)[use],
           ("base", "delta_minus"): (minus - 50)[use]}
    base_plus = {r.item: r.prompt("positive").mean(False) for r in by_condition["base"]}
    base_skew = dict(zip([r.item for r in by_condition["base"]], plus + minus - 100, strict=True))
    for arm in ("narrative_up", "framed"):
        arm_plus, arm_minus = pair_answers(by_condition[arm], keep_fifty=False)
        items = [r.item for r in by_condition[arm]]
        effect = np.array([a - base_plus[i] for a, i in zip(arm_plus, items, strict=True)])
        skew_effect = np.array([a + b - 100 - base_skew[i] for a, b, i in zip(arm_plus, arm_minus, items, strict=True)])
        out[(arm, "condition_effect")] = effect[np.isfinite(effect)]
        out[(arm, "skew_effect")] = skew_effect[np.isfinite(skew_effect)]
    return out


def _pair_truths(pool: dict[str, list[ItemRecord]]) -> dict[tuple[str, str], float]:
    return {key: float(values.mean()) for key, values in _pair_arrays(r for rs in pool.values() for r in rs).items()}


# --------------------------------------------------------------------------- section: binary


def _sigmoid_forecasts(g: np.random.Generator, n: int, k: float, d: float = 0.6) -> tuple[np.ndarray, np.ndarray]:
    y = (g.random(n) < 0.5).astype(float)
    z = np.where(y == 1, d, -d) + g.standard_normal(n)
    return 1 / (1 + np.exp(-k * 2 * d * z)), y


def _binary_truths(p: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Population values: of the pool (its empirical distribution), or of 2,000,000 draws."""
    bins = cal.bin_index(p)
    ece = float(np.abs(np.bincount(bins, p - y, cal.N_BINS)).sum() / p.size)
    scores = cal.item_scores(p, y)
    return {"brier": float(scores["brier"].mean()), "overconfidence": float(scores["overconfidence"].mean()),
            "ece": ece, "auc": float(cal.auc(p, y)), "accuracy": float(scores["accuracy"].mean()),
            "climatology_brier": float(y.mean() * (1 - y.mean()))}


BINARY_METRICS = ("brier", "overconfidence", "accuracy", "ece", "auc", "climatology_brier")


def section_binary(board: Board, args: argparse.Namespace, rng: np.random.Generator) -> None:
    for k in (1.0, 2.0, 5.0):
        big_p, big_y = _sigmoid_forecasts(np.random.default_rng(12345), 2_000_000, k)
        truths = _binary_truths(big_p, big_y)
        truths["climatology_brier"] = 0.25
        data = f"numpy sigmoid k={k:g} (ECE {truths['ece']:.3f})"
        for n in args.sizes:
            for _ in range(args.reps):
                p, y = _sigmoid_forecasts(rng, n, k)
                _binary_compare(board, data, n, p, y, truths, rng, args.resamples)
    suite = _suite("binary", args.binary_pool)
    for profile in BINARY_PROFILES:
        pool = simulate(profile, suite, seed=args.seed)
        p_all, y_all, _ = binary_data(pool["base"])
        truths = _binary_truths(p_all, y_all)
        data = f"sim:{profile} (ECE {truths['ece']:.3f})"
        for n in args.sizes:
            for r in range(max(1, args.reps // 2)):
                records = draw(pool, rng.integers(0, args.binary_pool, n))
                got = {a.metric: a for a in aggregate(records, AggregateOptions(seed=r, n_resamples=args.resamples))}
                p, y, _ = binary_data(sorted((x for x in records if x.kind == "binary"), key=lambda x: x.item))
                old = old_binary(p, y, rng, args.resamples)
                for metric in BINARY_METRICS:
                    board.cover(metric, data, "old", old[metric].method, n, (old[metric].low, old[metric].high),
                                truths[metric])
                    agg = got[metric]
                    board.cover(metric, data, "new", agg.ci_method, n, (agg.ci_low, agg.ci_high), truths[metric])
                agg = got["ece_debiased"]
                board.cover("ece_debiased", data, "new", agg.ci_method, n, (agg.ci_low, agg.ci_high), truths["ece"])


def _binary_compare(board: Board, data: str, n: int, p: np.ndarray, y: np.ndarray, truths: dict[str, float],
                    rng: np.random.Generator, resamples: int) -> None:
    old = old_binary(p, y, rng, resamples)
    new = new_binary(p, y, rng, resamples)
    for metric in BINARY_METRICS:
        board.cover(metric, data, "old", old[metric].method, n, (old[metric].low, old[metric].high), truths[metric])
        interval = new[metric].interval()
        board.cover(metric, data, "new", interval.method, n, (interval.low, interval.high), truths[metric])


# --------------------------------------------------------------------------- section: rates


def _clustered_checks(g: np.random.Generator, clusters: int, size: int, rate: float, icc: float
                      ) -> tuple[np.ndarray, np.ndarray]:
    if icc > 0:
        scale = (1 - icc) / icc
        p = g.beta(rate * scale, (1 - rate) * scale, clusters)
    else:
        p = np.full(clusters, rate)
    return g.binomial(size, p), np.full(clusters, size)


def section_rates(board: Board, args: argparse.Namespace, rng: np.random.Generator) -> None:
    for rate, size, icc in ((0.10, 5, 0.3), (0.02, 10, 0.3), (0.10, 1, 0.0), (0.05, 5, 0.0)):
        data = f"numpy {size} checks/item, rate {rate:g}, ICC {icc:g}"
        for n in args.sizes:
            for _ in range(args.reps):
                hits, checks = _clustered_checks(rng, n, size, rate, icc)
                old = old_rate(hits, checks)
                board.cover("violation/parse rate", data, "old", old.method, n, (old.low, old.high), rate)
                new = rate_confidence(hits, checks).interval()
                board.cover("violation/parse rate", data, "new", new.method, n, (new.low, new.high), rate)
    # Dose-response ladders (3 steps each, sharing rungs) and conjunction sets (1 check each).
    for kind, metric in (("dose_response", "dose_response_violation_rate"), ("conjunction", "conjunction_violation_rate")):
        for profile in ("optimist", "skewed"):
            pool = simulate(profile, _suite(kind, args.rate_pool), seed=args.seed)
            hits_all, checks_all, _ = violation_counts(kind_of(kind), pool["base"], 2.0)
            truth = sum(hits_all) / sum(checks_all)
            data = f"sim:{profile} (rate {truth:.3f})"
            _rate_replicates(board, metric, data, pool, args, rng, truth,
                             functools.partial(_violation_checks, kind),
                             AggregateOptions(tolerances={metric: (2.0,)}), tolerance=2.0)
    # Parse and refusal rates: the samples of one item (its prompts) are clustered.
    suite = _suite("inverted_pair", args.pool)
    for profile in ("optimist", "skewed"):
        pool = simulate(profile, suite, seed=args.seed)
        base = {"base": pool["base"]}
        for metric, counts in (("parse_rate", _parse_counts), ("refusal_rate", _refusal_counts)):
            hits_all, checks_all = counts(base["base"])
            truth = sum(hits_all) / sum(checks_all)
            _rate_replicates(board, metric, f"sim:{profile} (rate {truth:.3f})", base, args, rng, truth, counts,
                             AggregateOptions())


def _parse_counts(records: Sequence[ItemRecord]) -> tuple[list[int], list[int]]:
    received = [[a for a in r.answers() if a.error is None] for r in records]
    return [sum(a.value is not None for a in x) for x in received], [len(x) for x in received]


def _refusal_counts(records: Sequence[ItemRecord]) -> tuple[list[int], list[int]]:
    parsed = [[a for a in r.answers() if a.value is not None] for r in records]
    return [sum(a.value == REFUSAL_VALUE for a in x) for x in parsed], [len(x) for x in parsed]


def _rate_replicates(board: Board, metric: str, data: str, pool: dict[str, list[ItemRecord]], args: argparse.Namespace,
                     rng: np.random.Generator, truth: float,
                     counts: Callable[[Sequence[ItemRecord]], tuple[list[int], list[int]]],
                     options: AggregateOptions, tolerance: float | None = None) -> None:
    size = len(next(iter(pool.values())))
    for n in args.sizes:
        for r in range(max(1, args.reps // 2)):
            records = draw(pool, rng.integers(0, size, n))
            got = {(a.metric, a.tolerance): a for a in aggregate(records, replace(options, seed=r, n_resamples=10))}
            hits, checks = counts(records)
            old = old_rate(hits, checks)
            board.cover(metric, data, "old", old.method, n, (old.low, old.high), truth)
            agg = got[(metric, tolerance)]
            board.cover(metric, data, "new", agg.ci_method, n, (agg.ci_low, agg.ci_high), truth)


# --------------------------------------------------------------------------- section: baseline


def _old_changes(now: list[ItemRecord], before: list[ItemRecord], rng: np.random.Generator,
                 resamples: int) -> dict[str, tuple[float, float, float]]:
    """Before issue 14: BCa CI and sign-flip permutation p on per-item differences (rates as
    per-item shares); whole-sample binary metrics BC percentile CI and raw-draw p."""
    out: dict[str, tuple[float, float, float]] = {}
    now, before = sorted(now, key=lambda r: r.item), sorted(before, key=lambda r: r.item)

    def decomposable(metric: str, a: np.ndarray, b: np.ndarray) -> None:
        keep = np.isfinite(a) & np.isfinite(b)
        d = a[keep] - b[keep]
        if d.size:
            interval = bootstrap_ci(d, rng, n_resamples=resamples)
            out[metric] = (interval.low, interval.high, paired_permutation_p(d, rng, resamples))

    def share(records: list[ItemRecord], counts: Callable[[Sequence[ItemRecord]], tuple[list[int], list[int]]]
              ) -> np.ndarray:
        hits, checks = counts(records)
        return np.array([h / c if c else np.nan for h, c in zip(hits, checks, strict=True)])

    decomposable("parse_rate", share(now, _parse_counts), share(before, _parse_counts))
    decomposable("refusal_rate", share(now, _refusal_counts), share(before, _refusal_counts))
    pairs_now = [r for r in now if r.kind == "inverted_pair"]
    if pairs_now:
        (pn, mn), (pb, mb) = pair_answers(pairs_now, False), pair_answers([r for r in before if r.kind == "inverted_pair"], False)
        decomposable("skew", pn + mn - 100, pb + mb - 100)
        decomposable("delta_plus", pn - 50, pb - 50)
    doses_now = [r for r in now if r.kind == "dose_response"]
    if doses_now:
        def dose_rate(records: list[ItemRecord]) -> np.ndarray:
            hits, checks, _ = violation_counts(kind_of("dose_response"), records, 0.0)
            return np.array([h / c if c else np.nan for h, c in zip(hits, checks, strict=True)])
        decomposable("dose_response_violation_rate", dose_rate(doses_now),
                     dose_rate([r for r in before if r.kind == "dose_response"]))
    binary_now = [r for r in now if r.kind == "binary"]
    if binary_now:
        p1 = np.array([r.prompt("yes").mean(True) / 100 for r in binary_now])
        p0 = np.array([r.prompt("yes").mean(True) / 100 for r in before if r.kind == "binary"])
        y = np.array([1.0 if r.outcome else 0.0 for r in binary_now])
        keep = np.isfinite(p1) & np.isfinite(p0)
        p1, p0, y = p1[keep], p0[keep], y[keep]
        for name, f in BINARY_DECOMPOSABLE.items():
            decomposable(name, f(p1, y), f(p0, y))
        draws: dict[str, list[np.ndarray]] = defaultdict(list)

        def statistics(w: np.ndarray) -> dict[str, Any]:
            values = {name: np.atleast_1d(f(p1, y, w)) - np.atleast_1d(f(p0, y, w)) for name, f in BINARY_WHOLE.items()}
            if w.shape[0] > 1:
                for name, v in values.items():
                    draws[name].append(v)
            return values

        intervals = weighted_bootstrap(statistics, p1.size, rng, resamples)
        for name in BINARY_WHOLE:
            d = np.concatenate(draws[name])
            d = d[np.isfinite(d)]
            p = float(min(1.0, 2 * min((d <= 0).mean(), (d >= 0).mean()))) if d.size else math.nan
            out[name] = (intervals[name].low, intervals[name].high, p)
    return out


BASELINE_METRICS = ("skew", "delta_plus", "parse_rate", "refusal_rate", "brier", "overconfidence", "accuracy",
                    "auc", "ece", "shrinkage_a", "dose_response_violation_rate")


RUNS = 4  # independent runs of each simulated item for the baseline section


def section_baseline(board: Board, args: argparse.Namespace, rng: np.random.Generator) -> None:
    """A model compared with itself: runs of one profile over the same items, with the same
    latent values and independent answers (a no-op override renames the model, which reseeds
    its answer noise only). Each replicate draws n items and, per item, two different runs of
    the RUNS simulated: the runs are exchangeable, so every change is exactly 0 in truth."""
    for profile in ("calibrated", "skewed"):
        noise = SimulatedModel(profile).profile.noise_sd
        runs: list[dict[str, list[ItemRecord]]] = []
        for r in range(RUNS):
            spec = profile if r == 0 else f"{profile}?noise_sd={noise:.{r}f}"  # same value, another name
            run: dict[str, list[ItemRecord]] = {}
            for kind in ("inverted_pair", "binary", "dose_response"):
                size = args.pool if kind == "inverted_pair" else args.rate_pool
                run[kind] = simulate(spec, _suite(kind, size), seed=args.seed)["base"]
            runs.append(run)
        data = f"sim:{profile} vs itself"
        reps = max(1, args.reps // 2)
        for n in args.sizes:
            for r in range(reps):
                now, before = [], []
                for kind in ("inverted_pair", "binary", "dose_response"):
                    size = len(runs[0][kind])
                    index = rng.integers(0, size, n)
                    first = rng.integers(0, RUNS, n)
                    second = (first + rng.integers(1, RUNS, n)) % RUNS
                    for t, (j, a, b) in enumerate(zip(index, first, second, strict=True)):
                        now.append(replace(runs[a][kind][j], item=f"{runs[a][kind][j].item}#{t}"))
                        before.append(replace(runs[b][kind][j], item=f"{runs[b][kind][j].item}#{t}"))
                comparison = compare(now, before, AggregateOptions(seed=r, n_resamples=args.resamples))
                new = {c.metric: c for c in comparison.changes if c.suite == "pairs" or c.metric not in
                       ("parse_rate", "refusal_rate", "error_rate")}
                old = _old_changes(now, before, rng, args.resamples)
                for metric in BASELINE_METRICS:
                    change = new.get(metric)
                    if change is not None:
                        board.cover(f"change: {metric}", data, "new", change.test, n, (change.ci_low, change.ci_high),
                                    0.0)
                        _consistency(board, metric, data, "new", n, change.ci_low, change.ci_high, change.p_value)
                    if metric in old:
                        low, high, p = old[metric]
                        board.cover(f"change: {metric}", data, "old", "BCa/BC + permutation", n, (low, high), 0.0)
                        _consistency(board, metric, data, "old", n, low, high, p)


def _consistency(board: Board, metric: str, data: str, version: str, n: int, low: float, high: float,
                 p: float | None) -> None:
    if p is None or not math.isfinite(p):
        return
    board.reject(f"change {metric}: p < 0.05", data, version, n, p < ALPHA)
    outside = math.isfinite(low) and math.isfinite(high) and not (low <= 0 <= high)
    board.reject(f"change {metric}: CI and p disagree", data, version, n, outside != (p < ALPHA))


# --------------------------------------------------------------------------- section: tests


def section_tests(board: Board, args: argparse.Namespace, rng: np.random.Generator) -> None:
    # Skew's p (Wilcoxon, the paper's) against the mean test the CI implies, mean 0.
    generators: dict[str, Callable[[np.random.Generator, int], np.ndarray]] = {
        "numpy normal": lambda g, n: g.normal(0, 1, n),
                  "numpy exponential - 1": lambda g, n: g.exponential(1.0, n) - 1.0,
                  "numpy t3": lambda g, n: g.standard_t(3, n)}
    for data, generate in generators.items():
        for n in args.sizes:
            for _ in range(args.reps):
                x = generate(rng, n)
                board.reject("mean = 0: Wilcoxon (Skew's p)", data, "old", n, wilcoxon_p(x) < ALPHA)
                board.reject("mean = 0: permutation (effects' p)", data, "old", n,
                             paired_permutation_p(x, rng, args.resamples) < ALPHA)
                cd = new_mean(x, rng, args.resamples)
                board.reject("mean = 0: bootstrap-t/Student p", data, "new", n, cd.p_value(0.0) < ALPHA)
                # A gate "max: mean" with the truth exactly at the bound fails at most alpha/2.
                board.reject("gate at its bound fails (nominal 0.025)", data, "new", n,
                             gate_tests.p_crossing(cd, "max", 0.0) < ALPHA / 2)
    # The ECE gate on a calibrated model at 240 items: fails when the CI's low end > bound.
    for bound in (0.02, 0.05):
        rate_old, rate_new = Rate(), Rate()
        for _ in range(args.reps):
            p, y = _sigmoid_forecasts(rng, 240, 1.0)
            old = old_binary(p, y, rng, args.resamples)["ece"]
            new = new_binary(p, y, rng, args.resamples)["ece"].interval()
            rate_old.add(old.low > bound)
            rate_new.add(new.low > bound)
        board.rejections[(f"ECE gate <= {bound:g} fails a calibrated model", "numpy sigmoid k=1", "old")][240] = rate_old
        board.rejections[(f"ECE gate <= {bound:g} fails a calibrated model", "numpy sigmoid k=1", "new")][240] = rate_new
    # Clustered rates at the bound.
    for n in args.sizes:
        for _ in range(args.reps):
            hits, checks = _clustered_checks(rng, n, 5, 0.1, 0.3)
            board.reject("rate gate at its bound fails (nominal 0.025)", "numpy 5 checks/item, ICC 0.3", "old", n,
                         old_rate(hits, checks).low > 0.1)
            board.reject("rate gate at its bound fails (nominal 0.025)", "numpy 5 checks/item, ICC 0.3", "new", n,
                         gate_tests.p_crossing(rate_confidence(hits, checks), "max", 0.1) < ALPHA / 2)


# --------------------------------------------------------------------------- section: fwer


def section_fwer(board: Board, args: argparse.Namespace, rng: np.random.Generator) -> None:
    """A session of m gates, each at its bound (the worst case for false failures)."""
    generators = [lambda g, n: g.normal(0, 1, n), lambda g, n: g.exponential(1.0, n) - 1.0,
                  lambda g, n: g.standard_t(5, n)]
    n = 60
    for m in (10, 50):
        plain, holm, bh = Rate(), Rate(), Rate()
        for _ in range(args.reps):
            ps, crossed = [], []
            for j in range(m):
                x = generators[j % len(generators)](rng, n)
                cd = new_mean(x, rng, 400)
                ps.append(gate_tests.p_crossing(cd, "max", 0.0))
                iv = cd.interval()
                crossed.append(gate_tests.ci_crosses(iv.low, iv.high, "max", 0.0))
            plain.add(any(crossed))
            holm.add(any(gate_tests.failures(ps, "holm")))
            bh.add(any(gate_tests.failures(ps, "bh")))
        data = f"{m} gates at their bounds, {n} items each"
        board.rejections[("family-wise error: plain CI rule", data, "old")][n] = plain
        board.rejections[("family-wise error: Holm (alpha/2 = 0.025)", data, "new")][n] = holm
        board.rejections[("family-wise error: BH", data, "new")][n] = bh


# --------------------------------------------------------------------------- section: edges


# One session's CI gates, every one with its true value exactly on its bound (issue 27): the
# metric, the side the gate bounds, and where its data come from.
EDGE_GATES = (("brier", "max"), ("log_loss", "max"), ("ece", "max"), ("overconfidence", "max"),
              ("reliability", "max"), ("accuracy", "min"), ("auc", "min"), ("skew", "max"), ("delta_plus", "max"),
              ("refusal_rate", "max"), ("parse_rate", "min"))
PILOT = 100  # replicates whose printed detectable crossings set the power section's bounds (with 40 the
# median crossing was noisy enough that one prototype cell read 0.74 and 0.82 in two runs)


@dataclass
class EdgeData:
    """Per-item arrays of one binary pool and one pair pool, and every metric's pool value."""

    p: np.ndarray
    y: np.ndarray
    skew: np.ndarray
    delta_plus: np.ndarray
    refusals: tuple[np.ndarray, np.ndarray]
    parses: tuple[np.ndarray, np.ndarray]
    truths: dict[str, float]


def _edge_data(binary_profile: str, args: argparse.Namespace) -> EdgeData:
    pool = simulate(binary_profile, _suite("binary", args.binary_pool), seed=args.seed)
    p, y, _ = binary_data(pool["base"])
    pairs = simulate("optimist", _suite("inverted_pair", args.pool), seed=args.seed)["base"]
    plus, minus = pair_answers(pairs, keep_fifty=False)
    use = np.isfinite(plus) & np.isfinite(minus)
    refusals = tuple(np.array(v, dtype=float) for v in _refusal_counts(pairs))
    parses = tuple(np.array(v, dtype=float) for v in _parse_counts(pairs))
    truths = {k: float(v) for k, v in cal.whole_sample_metrics(p, y).items()}
    truths.update(_binary_truths(p, y))
    truths["log_loss"] = float(cal.log_loss(p, y))
    skew, delta_plus = (plus + minus - 100)[use], (plus - 50)[use]
    truths["skew"], truths["delta_plus"] = float(skew.mean()), float(delta_plus.mean())
    truths["refusal_rate"] = float(refusals[0].sum() / refusals[1].sum())
    truths["parse_rate"] = float(parses[0].sum() / parses[1].sum())
    return EdgeData(p, y, skew, delta_plus, refusals, parses, truths)  # type: ignore[arg-type]


def _edge_session(data: EdgeData, n: int, rng: np.random.Generator, resamples: int) -> dict[str, Confidence]:
    """The confidences aggregate() gives these gates' metrics on n fresh items (the same
    functions, on the pool's per-item arrays: binary_confidences for the binary family,
    studentized_bootstrap with the answers' resolution floor, rate_confidence)."""
    index = rng.integers(0, data.p.size, n)
    p, y = data.p[index], data.y[index]
    order = np.argsort(index, kind="stable")  # aggregate() sorts items; the intervals do not care
    p, y = p[order], y[order]

    def statistics(w: np.ndarray | None) -> dict[str, Any]:
        return cal.whole_sample_metrics(p, y, w, None, with_auc=w is None)

    scores = cal.item_scores(p, y)
    _, cds = binary_confidences(statistics, scores, p, y, rng, resamples)
    out = dict(cds)
    pairs = rng.integers(0, data.skew.size, n)
    out["skew"] = studentized_bootstrap(data.skew[pairs], rng, resamples, NATURAL_BOUNDS["skew"],
                                        sd_floor=resolution_sd(1.0, 2))
    out["delta_plus"] = studentized_bootstrap(data.delta_plus[pairs], rng, resamples, NATURAL_BOUNDS["delta_plus"],
                                              sd_floor=resolution_sd(1.0, 1))
    items = rng.integers(0, data.refusals[0].size, n)
    out["refusal_rate"] = rate_confidence(data.refusals[0][items], data.refusals[1][items])
    out["parse_rate"] = rate_confidence(data.parses[0][items], data.parses[1][items])
    return out


def _power_bound(pilots: Sequence[Confidence], side: str, truth: float, metric: str) -> float:
    """The bound b whose printed detectable crossing d(b) (median over the pilot runs) puts
    the truth exactly d beyond it: b + d(b) = truth for a max gate, b - d(b) = truth for a
    min gate. A rate's and the AUC's d depend on b, and b -> b +- d(b) rises with b, so it
    is found by bisection on the side of the truth the bound lies. NaN when no such bound
    lies in the metric's range (a crossing near the edge, e.g. ECE near 0, cannot be placed
    by moving the bound: that needs another population)."""
    low, high = NATURAL_BOUNDS.get(metric, (0.0, 1.0))
    sign = 1.0 if side == "max" else -1.0

    def reached(bound: float) -> float:  # the truth that bound's printed crossing points to
        d = float(np.nanmedian([detectable_crossing(cd, ALPHA / 2, side=side, bound=bound) for cd in pilots]))
        return bound + sign * d

    inner, outer = (truth, low) if side == "max" else (truth, high)
    # reached(inner) lies beyond the truth; the bound sought lies between inner and outer.
    for candidate in (outer, *(inner + share * (outer - inner) for share in (0.999, 0.99, 0.9))):
        value = reached(candidate)
        if math.isfinite(value) and sign * (value - truth) <= 0:
            outer = candidate
            break
    else:
        return math.nan
    for _ in range(30):  # the range / 1e9
        middle = (inner + outer) / 2
        value = reached(middle)
        if math.isfinite(value) and sign * (value - truth) <= 0:
            outer = middle
        else:
            inner = middle
    return outer


def section_edges(board: Board, args: argparse.Namespace, rng: np.random.Generator) -> None:
    """Issue 27's cells: every binary metric's coverage on fresh items of sim:overconfident
    and sim:calibrated at each n; one session of EDGE_GATES with every truth on its bound
    (each gate's failure rate, and the family-wise error with Holm and without); and the
    power of each gate at the detectable crossing it printed (median over PILOT replicates),
    which should be 75-85%."""
    for profile in ("overconfident", "calibrated"):
        data = _edge_data(profile, args)
        label = f"sim:{profile} (ECE {data.truths['ece']:.3f}, AUC {data.truths['auc']:.3f})"
        for n in args.sizes:
            pilots: dict[str, list[Confidence]] = defaultdict(list)
            bounds: dict[str, float] = {}
            for r in range(args.reps):
                if r == PILOT:
                    bounds = {metric: _power_bound(pilots[metric], side, data.truths[metric], metric)
                              for metric, side in EDGE_GATES}
                cds = _edge_session(data, n, rng, args.resamples)
                for metric, cd in cds.items():
                    if metric in data.truths:
                        iv = cd.interval()
                        board.cover(metric, label, "new", iv.method.split(",")[0], n, (iv.low, iv.high),
                                    data.truths[metric])
                ps = []
                for metric, side in EDGE_GATES:
                    truth = data.truths[metric]
                    p = gate_tests.p_crossing(cds[metric], side, truth)
                    ps.append(p)
                    board.reject(f"gate {metric} {'<=' if side == 'max' else '>='} truth fails (nominal 0.025)",
                                 label, "new", n, math.isfinite(p) and p < ALPHA / 2)
                    if r < PILOT:
                        pilots[metric].append(cds[metric])
                    elif math.isfinite(bounds.get(metric, math.nan)):
                        q = gate_tests.p_crossing(cds[metric], side, bounds[metric])
                        board.reject(f"power at the printed crossing (target 0.75-0.85): {metric}", label, "new",
                                     n, math.isfinite(q) and q < ALPHA / 2)
                board.reject(f"family-wise error, {len(EDGE_GATES)} gates on their bounds: Holm", label, "new", n,
                             any(gate_tests.failures(ps, "holm")))
                board.reject(f"family-wise error, {len(EDGE_GATES)} gates on their bounds: none", label, "new", n,
                             any(gate_tests.failures(ps, "none")))
    _edge_numpy_cells(board, args, rng)


def _two_valued_forecaster(g: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """A forecaster that only ever states about 3% or 97% (uniform +-2 pp), right 80% of the time."""
    y = (g.random(n) < 0.5).astype(float)
    call = np.where(g.random(n) < 0.8, y, 1 - y)
    return np.where(call == 1, 0.97, 0.03) + g.uniform(-0.02, 0.02, n), y


def _ece_only(p: np.ndarray, y: np.ndarray, w: np.ndarray | None) -> dict[str, Any]:
    return {"ece": cal.ece(p, y, w)}


def _edge_numpy_cells(board: Board, args: argparse.Namespace, rng: np.random.Generator) -> None:
    """The edge cells outside the simulated models: the ECE of a two-valued forecaster (a pool
    of ``--binary-pool`` items, its own value the truth) and a rare clustered rate (2%, 10
    checks per item, ICC 0.3)."""
    pool_p, pool_y = _two_valued_forecaster(np.random.default_rng(args.seed + 99), args.binary_pool)
    truth = float(cal.ece(pool_p, pool_y))
    label = f"numpy two-valued forecaster, 3% / 97%, 80% right (ECE {truth:.3f})"
    for n in args.sizes:
        for _ in range(args.reps):
            index = rng.integers(0, pool_p.size, n)
            p, y = pool_p[index], pool_y[index]
            _, cds = binary_confidences(functools.partial(_ece_only, p, y), {}, p, y, rng, args.resamples)
            iv = cds["ece"].interval()
            board.cover("ece", label, "new", iv.method.split(",")[0], n, (iv.low, iv.high), truth)
            hits, checks = _clustered_checks(rng, n, 10, 0.02, 0.3)
            iv = rate_confidence(hits, checks).interval()
            board.cover("violation/parse rate", "numpy 10 checks/item, rate 0.02, ICC 0.3", "new", iv.method, n,
                        (iv.low, iv.high), 0.02)


# Binormal forecasters (latent score N(0, 1) for no-items, N(SEPARATION, SD^2) for yes-items,
# stated as a whole percent, so ties come as they do from a model): (yes-share, separation, SD).
AUC_SHAPES = ((0.5, 1.2, 1.0), (0.5, 2.0, 1.0), (0.3, 1.6, 1.0), (0.2, 2.0, 1.0), (0.5, 1.5, 0.4), (0.3, 1.5, 2.5),
              (0.2, 0.3, 3.0))


def _binormal(g: np.random.Generator, n: int, share: float, separation: float,
              sd: float) -> tuple[np.ndarray, np.ndarray]:
    """n items with both classes present."""
    while True:
        y = (g.random(n) < share).astype(float)
        if 0 < y.sum() < n:
            break
    score = g.normal(0.0, 1.0, n) * np.where(y == 1, sd, 1.0) + separation * y
    return np.round(100.0 / (1.0 + np.exp(-score))) / 100.0, y


def section_auc_shapes(board: Board, args: argparse.Namespace, rng: np.random.Generator) -> None:
    """The AUC interval where it is hardest: a high AUC (0.92), few items of one class
    (yes-share 0.2-0.5), classes of unequal spread; binormal forecasters in whole percents.
    The truth is the AUC of 400,000 draws at yes-share 0.5 (it does not depend on the share). Beside the
    interval the tool prints, DeLong's variance on the same scale and Newcombe's score
    interval, on the same draws."""
    for share, separation, sd in AUC_SHAPES:
        p, y = _binormal(np.random.default_rng(args.seed + 123), 400_000, 0.5, separation, sd)
        truth = float(cal.auc(p, y))
        label = f"numpy binormal, yes-share {share:g}, yes-sd {sd:g}, AUC {truth:.3f}"
        for n in args.sizes:
            for _ in range(args.reps):
                p, y = _binormal(rng, n, share, separation, sd)
                cd = auc_ci.auc_confidence(p, y)
                iv = cd.interval()
                board.cover("auc", label, "new", "as printed: unbiased variance (Newcombe where separated)", n,
                            (iv.low, iv.high), truth)
                estimate, se = auc_ci.delong_se(p, y)
                yes = int(y.sum())
                if 0 < estimate < 1 and se > 0:
                    logit_se = se / (estimate * (1 - estimate))
                    other = auc_ci.LogitNormalConfidence(estimate, logit_se, auc_ci.DELONG).interval()
                else:
                    other = iv
                board.cover("auc", label, "old", "DeLong, logit scale", n, (other.low, other.high), truth)
                score = auc_ci.NewcombeScoreConfidence(estimate, yes, n - yes).interval()
                board.cover("auc", label, "Newcombe", "Newcombe score", n, (score.low, score.high), truth)


# Continuous miscalibrated forecasters (numpy): name, the forecasts and the true event
# probabilities of n items.
def _shifted(g: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    truth = g.beta(2.0, 2.0, n)  # every forecast 0.1 too high (clipped to 0.99)
    return np.clip(truth + 0.1, 0.01, 0.99), truth


def _flat(g: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    p = g.uniform(0.01, 0.99, n)  # overconfident: true logits 0.3 times the stated ones
    return p, 1.0 / (1.0 + np.exp(-0.3 * np.log(p / (1.0 - p))))


def _underconfident(g: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    p = g.uniform(0.2, 0.8, n)  # true logits three times the stated ones
    return p, 1.0 / (1.0 + np.exp(-3.0 * np.log(p / (1.0 - p))))


ECE_SHAPES: tuple[tuple[str, Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray]]], ...] = (
    ("forecasts 0.1 above Beta(2, 2) truths", _shifted),
    ("uniform forecasts, true logits 0.3 times theirs", _flat),
    ("forecasts in 0.2-0.8, true logits 3 times theirs", _underconfident),
)


def section_ece_shapes(board: Board, args: argparse.Namespace, rng: np.random.Generator) -> None:
    """The ECE's upper end on continuous miscalibrated forecasters (numpy), at every size
    given (the finding is at 120 items and more: use --sizes up to 960). The truth is each
    forecaster's binned ECE over 2,000,000 draws, from the true probabilities. Beside the
    printed interval: the printed lower end with the upper end plug-in + z se, se the
    standard error of the mean of the items' signed errors sign(gap of the bin) (p - y),
    sqrt((Brier - ECE^2) / (n - 1)). That bound holds by construction (the plug-in is the
    largest mean of signed errors over all sign choices, so at least the one with the true
    signs, whose mean is unbiased), at the price of the plug-in's upward bias."""
    z = normal_isf(ALPHA / 2)
    for name, forecaster in ECE_SHAPES:
        big_p, big_q = forecaster(np.random.default_rng(args.seed + 7), 2_000_000)
        truth = float(cal.ece(big_p, big_q))  # the binned ECE, with the true probabilities as outcomes
        label = f"numpy: {name} (ECE {truth:.3f})"
        for n in args.sizes:
            for _ in range(args.reps):
                p, q = forecaster(rng, n)
                y = (rng.random(n) < q).astype(float)
                _, cds = binary_confidences(functools.partial(_ece_only, p, y), {}, p, y, rng, args.resamples)
                iv = cds["ece"].interval()
                board.cover("ece", label, "new", "as printed", n, (iv.low, iv.high), truth)
                plugin, brier = float(cal.ece(p, y)), float(cal.brier(p, y))
                bound = plugin + z * math.sqrt(max(brier - plugin * plugin, 0.0) / (n - 1))
                board.cover("ece", label, "sign bound", "upper end plug-in + z se (sign dominance)", n,
                            (iv.low, max(iv.high, bound)), truth)


# Forecasters as language models state them (numpy): in whole tenths or twentieths, some
# answers exactly 50, stretched away from 0.5 (overconfident) or not, and one with a rare
# "yes". True event probabilities q ~ Beta; the stated p is sigmoid(stretch * logit(q)),
# rounded to the step and kept within [step, 1 - step]; a share of items answers 0.5.
COARSE_SHAPES = (  # label, step, stretch, share at 50, mean of q (Beta(2 m, 2 (1 - m)); None: Beta(1.2, 1.2))
    ("tenths, stretched x2, 15% at 50", 0.1, 2.0, 0.15, None),
    ("twentieths, stretched x1.5, 5% at 50", 0.05, 1.5, 0.05, None),
    ("tenths, calibrated, 10% at 50", 0.1, 1.0, 0.10, None),
    ("tenths, stretched x3, 5% at 50, yes-share 0.15", 0.1, 3.0, 0.05, 0.15),
)
COARSE_METRICS = ("brier", "log_loss", "overconfidence", "accuracy", "ece", "auc")


def _coarse(g: np.random.Generator, n: int, step: float, stretch: float, fifty: float,
            share: float | None) -> tuple[np.ndarray, np.ndarray]:
    q = g.beta(1.2, 1.2, n) if share is None else g.beta(2 * share, 2 * (1 - share), n)
    p = 1.0 / (1.0 + np.exp(-stretch * np.log(q / (1.0 - q))))
    p = np.clip(np.round(p / step) * step, step, 1.0 - step)
    return np.where(g.random(n) < fifty, 0.5, p), q


def _coarse_truths(p: np.ndarray, q: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Population values from the true probabilities (the AUC from drawn outcomes)."""
    clipped = np.clip(p, *cal.LOG_LOSS_CLIP)
    right = np.where(p >= 0.5, q, 1.0 - q)  # the chance the call at 0.5 is right
    return {"brier": float(np.mean((p - q) ** 2 + q * (1 - q))),
            "log_loss": float(np.mean(-(q * np.log(clipped) + (1 - q) * np.log(1 - clipped)))),
            "overconfidence": float(np.mean(np.where(p >= 0.5, p, 1 - p)) - right.mean()),
            "accuracy": float(right.mean()), "ece": float(cal.ece(p, q)), "auc": float(cal.auc(p, y))}


def _whole_sample(p: np.ndarray, y: np.ndarray, w: np.ndarray | None) -> dict[str, Any]:
    return {"ece": cal.ece(p, y, w), "auc": cal.auc(p, y, w) if w is None else np.nan}


def section_coarse_shapes(board: Board, args: argparse.Namespace, rng: np.random.Generator) -> None:
    """Every known-answer interval on coarse, model-like forecasts (``COARSE_SHAPES``): ties,
    a mass at 0.5, and a rare class whose confident misses a small sample may not hold. The
    samples are not conditioned on the outcomes; the AUC is counted only where both classes
    are present (it is undefined otherwise)."""
    for label, step, stretch, fifty, share in COARSE_SHAPES:
        g = np.random.default_rng(args.seed + 11)
        big_p, big_q = _coarse(g, 2_000_000, step, stretch, fifty, share)
        truths = _coarse_truths(big_p, big_q, (g.random(big_p.size) < big_q).astype(float))
        data = f"numpy: {label} (Brier {truths['brier']:.3f}, AUC {truths['auc']:.3f})"
        for n in args.sizes:
            for _ in range(args.reps):
                p, q = _coarse(rng, n, step, stretch, fifty, share)
                y = (rng.random(n) < q).astype(float)
                scores = cal.item_scores(p, y)
                _, cds = binary_confidences(functools.partial(_whole_sample, p, y), scores, p, y, rng, args.resamples)
                for metric in COARSE_METRICS:
                    if metric == "auc" and not 0 < y.sum() < n:
                        continue
                    iv = cds[metric].interval()
                    board.cover(metric, data, "new", "as printed", n, (iv.low, iv.high), truths[metric])


# Two runs on the same items (``compare()``): label, step, stretch now, stretch before, mean of
# q (as COARSE_SHAPES). A sharper run against a softer one is flattered by a sample without a
# confident miss.
COARSE_PAIRS = (
    ("tenths, stretched x3 against x1, yes-share 0.15", 0.1, 3.0, 1.0, 0.15),
    ("tenths, stretched x1 against x3, yes-share 0.15", 0.1, 1.0, 3.0, 0.15),
    ("tenths, stretched x3 against x2, yes-share 0.15", 0.1, 3.0, 2.0, 0.15),
    ("tenths, stretched x2 against x1", 0.1, 2.0, 1.0, None),
)
CHANGE_METRICS = ("brier", "log_loss", "overconfidence", "accuracy")


def _stated(q: np.ndarray, step: float, stretch: float) -> np.ndarray:
    p = 1.0 / (1.0 + np.exp(-stretch * np.log(q / (1.0 - q))))
    return np.clip(np.round(p / step) * step, step, 1.0 - step)


def _binary_records(p: np.ndarray, y: np.ndarray) -> list[ItemRecord]:
    """One answer per item, as a whole percent (the prompts ask for one)."""
    return [ItemRecord("known", f"b{k:05d}", "base", "binary", "known.yaml", "m",
                       [PromptRecord("yes", "Q?", [Answer(f"{100 * a:.0f}", float(round(100 * a)))])], outcome=bool(o))
            for k, (a, o) in enumerate(zip(p, y, strict=True))]


def _expected_score(p: np.ndarray, q: np.ndarray, metric: str) -> float:
    """The population mean of a per-item score, outcome i being Bernoulli(q_i)."""
    yes, no = cal.item_scores(p, np.ones_like(p))[metric], cal.item_scores(p, np.zeros_like(p))[metric]
    return float(np.mean(q * yes + (1 - q) * no))


def section_coarse_changes(board: Board, args: argparse.Namespace, rng: np.random.Generator) -> None:
    """Changes of the decomposable known-answer scores between two runs on the same items
    (``COARSE_PAIRS``), through ``compare()``; the truth is the change of the populations'
    values, from the true probabilities."""
    for label, step, now_stretch, before_stretch, share in COARSE_PAIRS:
        q = np.random.default_rng(args.seed + 13).beta(
            *((1.2, 1.2) if share is None else (2 * share, 2 * (1 - share))), 2_000_000)
        now, before = _stated(q, step, now_stretch), _stated(q, step, before_stretch)
        truths = {metric: _expected_score(now, q, metric) - _expected_score(before, q, metric)
                  for metric in CHANGE_METRICS}
        data = f"numpy: {label} (Brier change {truths['brier']:+.4f})"
        for n in args.sizes:
            for _ in range(args.reps):
                drawn = rng.beta(*((1.2, 1.2) if share is None else (2 * share, 2 * (1 - share))), n)
                y = (rng.random(n) < drawn).astype(float)
                comparison = compare(_binary_records(_stated(drawn, step, now_stretch), y),
                                     _binary_records(_stated(drawn, step, before_stretch), y),
                                     AggregateOptions(n_resamples=args.resamples))
                for change in comparison.changes:
                    if change.metric in truths:
                        board.cover(f"change of {change.metric}", data, "new", "as printed", n,
                                    (change.ci_low, change.ci_high), truths[change.metric])


def _mean_power(board: Board, test: str, label: str, values: np.ndarray, truth: float, side: str, n: int,
                args: argparse.Namespace, rng: np.random.Generator, bounds: tuple[float, float] | None,
                floor: Callable[[np.ndarray], float] | None = None) -> None:
    """A mean's gate on n of ``values`` with its bound the printed crossing (median over PILOT
    runs) short of the truth (``max``) or beyond it (``min``): how often it fails. ``floor``:
    the SD under both ends of the drawn items' interval, as ``compare()`` floors a binary
    score's change."""
    def confidence() -> Confidence:
        index = rng.integers(0, values.size, n)
        cd = studentized_bootstrap(values[index], rng, args.resamples, bounds)
        if floor is not None and isinstance(cd, StudentizedBootstrap):
            cd = replace(cd, low_sd=floor(index), high_sd=floor(index))
        return cd

    pilots = [confidence() for _ in range(PILOT)]
    d = float(np.nanmedian([detectable_crossing(cd, ALPHA / 2, side=side) for cd in pilots]))
    bound = truth - d if side == "max" else truth + d
    for _ in range(args.reps):
        cd = confidence()
        q = gate_tests.p_crossing(cd, side, bound)
        board.reject(f"power at the printed crossing (target 0.75-0.85): {test}", label, "new", n,
                     math.isfinite(q) and q < ALPHA / 2)


def section_change_power(board: Board, args: argparse.Namespace, rng: np.random.Generator) -> None:
    """Change gates (issue 27, D8): a run of ``sim:overconfident`` against a baseline of
    ``sim:calibrated`` on the same items (the pools share items and outcomes), per-item
    changes of Brier and overconfidence as ``compare()`` takes them; the gate on the bound
    placed the printed crossing short of the true change (``max_increase``) or beyond it
    (``max_decrease`` of the reversed comparison) fails how often?"""
    now = simulate("overconfident", _suite("binary", args.binary_pool), seed=args.seed)["base"]
    before = simulate("calibrated", _suite("binary", args.binary_pool), seed=args.seed)["base"]
    p1, y, _ = binary_data(now)
    p0, y0, _ = binary_data(before)
    assert np.array_equal(y, y0) and p1.size == p0.size
    for metric in ("brier", "overconfidence"):
        diff = BINARY_DECOMPOSABLE[metric](p1, y) - BINARY_DECOMPOSABLE[metric](p0, y)
        truth = float(diff.mean())
        for side, sign in (("max", 1.0), ("min", -1.0)):
            values = sign * diff  # "min": the reversed comparison, a decrease of the same size
            label = f"sim:overconfident vs sim:calibrated, change {sign * truth:+.3f}"
            def floor(index: np.ndarray, metric: str = metric) -> float:
                return cal.null_sd_floor(cal.change_null_sd(p1[index], p0[index], metric), index.size)

            for n in args.sizes:
                _mean_power(board, f"change of {metric}, {side} gate", label, values, sign * truth, side, n, args,
                            rng, (-1.0, 1.0), floor)


def section_skewed_power(board: Board, args: argparse.Namespace, rng: np.random.Generator) -> None:
    """Gates on means of right-skewed per-item values (numpy pools of 200,000: exponential,
    lognormal sigma 1), both sides: the `min` side's power rests on a tail that a small
    sample rarely shows (docs/statistics.md, Power)."""
    g = np.random.default_rng(args.seed + 5)
    pools = {"numpy exponential(1)": g.exponential(1.0, 200_000), "numpy lognormal(0, 1)": g.lognormal(0.0, 1.0, 200_000)}
    for label, values in pools.items():
        for side in ("max", "min"):
            for n in args.sizes:
                _mean_power(board, f"mean, {side} gate", label, values, float(values.mean()), side, n, args, rng,
                            None)


# --------------------------------------------------------------------------- output


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def render(board: Board, sizes: Sequence[int]) -> str:
    lines = ["## Coverage of 95% CIs (binomial 95% CI of the coverage; target 0.94-0.96)", ""]
    header = "| metric | data | version | method | " + " | ".join(f"n={n}" for n in sizes) + " | miss lo/hi (all n) |"
    lines += [header, "|" + "---|" * (5 + len(sizes))]
    for key in sorted(board.coverage, key=lambda k: (k[0], k[1], k[2] != "old")):
        metric, data, version = key
        cells = board.coverage[key]
        total = Tally()
        for tally in cells.values():
            total.covered += tally.covered
            total.below += tally.below
            total.above += tally.above
            total.total += tally.total
        row = [metric, data, version, board.methods[key]] + [cells[n].text() if n in cells else "" for n in sizes]
        lines.append("| " + " | ".join(row) + f" | {total.misses()} |")
    lines += ["", "## Tests: rejection rates (null true unless stated)", ""]
    all_sizes = sorted({n for v in board.rejections.values() for n in v})
    lines += ["| test | data | version | " + " | ".join(f"n={n}" for n in all_sizes) + " |",
              "|" + "---|" * (3 + len(all_sizes))]
    for key in sorted(board.rejections, key=lambda k: (k[0], k[1], k[2] != "old")):
        rejected = board.rejections[key]
        lines.append("| " + " | ".join([*key, *(rejected[n].text() if n in rejected else "" for n in all_sizes)])
                     + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=60,
                        help="replicates per cell (default 60; the simulated-model cells use half)")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples per interval (default 1000)")
    parser.add_argument("--sizes", default="15,30,60,120", help="numbers of items")
    parser.add_argument("--sections", default=",".join(SECTIONS), help=f"any of {','.join(SECTIONS)}")
    parser.add_argument("--pool", type=int, default=400, help="simulated pair items per profile")
    parser.add_argument("--binary-pool", type=int, default=4000, help="simulated binary items per profile")
    parser.add_argument("--rate-pool", type=int, default=400, help="simulated items for rates and baselines")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.sizes = [int(s) for s in args.sizes.split(",")]
    sections = [s for s in args.sections.split(",") if s]
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections: {', '.join(sorted(unknown))}")
    board = Board()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    for section in sections:
        t0 = time.perf_counter()
        log(f"section {section} ...")
        globals()[f"section_{section}"](board, args, rng)
        log(f"section {section}: {time.perf_counter() - t0:.0f} s")
    print(f"# Coverage benchmark: {args.reps} replicates, {args.resamples} resamples, seed {args.seed} "
          f"({time.perf_counter() - start:.0f} s)\n")
    print(render(board, args.sizes))


if __name__ == "__main__":
    main()
