"""Scoring benchmark: every metric with 10,000 bootstrap resamples over 40,000 answers.

Reports the time of ``aggregate()`` (the median of ``--repeats`` runs) and its ratio to one
plain numpy pass over the same answers (the point estimates of the same metric families,
computed directly with numpy, no resampling, no records). Peak memory is measured in a
separate run under tracemalloc, which slows every allocation: timing that run would
overstate the time (its figure is printed too, labelled). Run:
python bench/bench_scoring.py [--resamples N] [--repeats K]
"""

from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc

import numpy as np

from pytest_optbench.records.item import Answer, ItemRecord, PromptRecord
from pytest_optbench.scoring.aggregate import AggregateOptions, aggregate

SAMPLES = 5


def make_records(rng: np.random.Generator) -> tuple[list[ItemRecord], dict[str, np.ndarray]]:
    """2,000 pairs (20,000 answers), 2,000 binary (10,000), 667 conjunction sets (10,005)."""
    records: list[ItemRecord] = []
    raw: dict[str, np.ndarray] = {}

    def prompt(role: str, centre: float) -> PromptRecord:
        values = np.clip(np.round(centre + rng.normal(0, 5, SAMPLES)), 1, 99)
        return PromptRecord(role, role, [Answer(str(int(v)), float(v)) for v in values])

    plus, minus = [], []
    for i in range(2000):
        q = rng.uniform(30, 70)
        pos, neg = prompt("positive", q + 6), prompt("negative", 100 - q + 2)
        plus.append(pos.mean())
        minus.append(neg.mean())
        records.append(ItemRecord("pairs", f"p{i:05d}", "base", "inverted_pair", "bench", "bench",
                                  [pos, neg], track="B", domain=f"d{i % 6}"))
    p, y = [], []
    for i in range(2000):
        outcome = bool(rng.random() < 0.5)
        yes = prompt("yes", 50 + (15 if outcome else -15) + rng.normal(0, 15))
        p.append(yes.mean() / 100)
        y.append(float(outcome))
        records.append(ItemRecord("known", f"k{i:05d}", "base", "binary", "bench", "bench", [yes], outcome=outcome))
    for i in range(667):
        a, b = rng.uniform(30, 80, 2)
        records.append(ItemRecord("conj", f"c{i:05d}", "base", "conjunction", "bench", "bench",
                                  [prompt("a", a), prompt("b", b), prompt("both", a * b / 100)]))
    raw.update(plus=np.array(plus), minus=np.array(minus), p=np.array(p), y=np.array(y))
    return records, raw


def plain_numpy_pass(raw: dict[str, np.ndarray]) -> float:
    """Point estimates of the same families, straight numpy: the unit of comparison."""
    plus, minus, p, y = raw["plus"], raw["minus"], raw["p"], raw["y"]
    skew = plus - (100 - minus)
    bins = np.minimum((p * 10).astype(int), 9)
    counts = np.bincount(bins, minlength=10)
    ece = np.abs(np.bincount(bins, p, 10) - np.bincount(bins, y, 10)).sum() / p.size
    order = np.argsort(p)
    ranks = np.empty(p.size)
    ranks[order] = np.arange(1, p.size + 1)
    auc = (ranks[y == 1].sum() - (y == 1).sum() * ((y == 1).sum() + 1) / 2) / ((y == 1).sum() * (y == 0).sum())
    return float(skew.mean() + ((p - y) ** 2).mean() + ece + auc + counts.sum())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of aggregate(); the median is reported")
    args = parser.parse_args()
    records, raw = make_records(np.random.default_rng(0))
    answers = sum(len(p.answers) for r in records for p in r.prompts)
    options = AggregateOptions(n_resamples=args.resamples)

    repeats = 200
    start = time.perf_counter()
    for _ in range(repeats):
        plain_numpy_pass(raw)
    plain = (time.perf_counter() - start) / repeats

    aggregate(records[:50] + records[2000:2050], AggregateOptions(n_resamples=100))  # warm: SciPy loads on first use
    times = []
    for _ in range(max(1, args.repeats)):
        start = time.perf_counter()
        aggregates = aggregate(records, options)
        times.append(time.perf_counter() - start)
    scored = statistics.median(times)

    # Memory in its own run: tracemalloc slows every allocation, so this run is not the timed one.
    tracemalloc.start()
    start = time.perf_counter()
    aggregate(records, options)
    traced = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    print(f"answers: {answers:,}; aggregates: {len(aggregates)}; resamples: {args.resamples:,}")
    print(f"plain numpy pass:            {plain * 1e3:9.2f} ms")
    print(f"aggregate() with bootstrap:  {scored * 1e3:9.2f} ms  (median of {len(times)}: "
          f"{', '.join(f'{t * 1e3:.0f}' for t in times)} ms)")
    print(f"  peak traced memory {peak / 2**20:.0f} MiB, from a separate run under tracemalloc "
          f"({traced * 1e3:.0f} ms there; tracemalloc slows allocation)")
    print(f"ratio aggregate / plain pass: {scored / plain:,.0f}x "
          f"= {scored / plain / args.resamples:.2f}x a plain pass per resample")


if __name__ == "__main__":
    main()
