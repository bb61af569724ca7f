"""Gate tests and Skew's p by simulation (issue 14, phase B).

    python bench/bench_gate_tests.py [--reps N] [--resamples B] [--seed S]

Prints three tables:

* **Skew's p under a zero mean**: how often the Wilcoxon signed-rank p (the paper's) and the
  bootstrap-t/Student p of the CI (``Aggregate.confidence.p_value(0)``) fall below 0.05 when
  the per-item mean is exactly 0, for symmetric, skewed and heavy-tailed per-item values.
* **One gate at its bound**: how often an ``evidence: ci`` gate fails when the true value sits
  exactly on its bound (nominal: 2.5%, the one-sided level of a 95% CI), through the real
  ``scoring.gates.evaluate`` on aggregates built as ``aggregate()`` builds them (bootstrap-t/
  Student for means, clustered Clopper-Pearson for rates).
* **A session of many CI gates**: the family-wise error (some gate fails although every true
  value is within its bound) with no correction, Holm (the default) and Benjamini-Hochberg,
  with every gate at its bound (the worst case) and with one in five at its bound and the
  rest comfortably inside.

Each cell shows the rate with its Wilson 95% CI over the replicates. Default: 1,000
replicates (about ten minutes on one busy core).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np

from pytest_optbench.metrics.confidence import studentized_bootstrap
from pytest_optbench.metrics.rates import rate_confidence
from pytest_optbench.metrics.stats import wilcoxon_p
from pytest_optbench.scoring.aggregate import Aggregate
from pytest_optbench.scoring.gates.evaluate import evaluate
from pytest_optbench.scoring.gates.spec import FAIL, Gate

Generator = Callable[[np.random.Generator, int], np.ndarray]
# Per-item values with mean exactly 0.
CENTRED: dict[str, Generator] = {
    "normal": lambda g, n: g.normal(0.0, 1.0, n),
    "exponential - 1 (right-skewed)": lambda g, n: g.exponential(1.0, n) - 1.0,
    "lognormal(0.75) centred": lambda g, n: g.lognormal(0.0, 0.75, n) - math.exp(0.75 ** 2 / 2),
    # A few scenarios carry most of the tilt: 10% of items at +9, the rest at -1 (+- noise).
    "10% of items carry the tilt": lambda g, n: np.where(g.random(n) < 0.1, 9.0, -1.0) + g.normal(0, 0.5, n),
    "t3 (heavy tails)": lambda g, n: g.standard_t(3, n),
}


def wilson(hits: int, total: int) -> str:
    if not total:
        return ""
    z = 1.959963984540054
    p = hits / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return f"{p:.3f} [{max(0.0, centre - half):.3f}, {min(1.0, centre + half):.3f}]"


def _skew_draw(generate: Generator, rng: np.random.Generator, resamples: int) -> Callable[[int], Aggregate]:
    """n -> the Skew aggregate of n fresh per-item values drawn by ``generate``."""
    return lambda n: mean_aggregate("s", generate(rng, n), rng, resamples)


def mean_aggregate(suite: str, values: np.ndarray, rng: np.random.Generator, resamples: int) -> Aggregate:
    cd = studentized_bootstrap(values, rng, resamples)
    interval = cd.interval()
    return Aggregate(suite, "base", "skew", float(values.mean()), interval.low, interval.high, values.size,
                     confidence=cd)


def clustered_rate_aggregate(suite: str, rng: np.random.Generator, items: int, size: int, rate: float,
                             icc: float) -> Aggregate:
    """Checks in clusters of ``size`` sharing a beta-distributed item rate with mean ``rate``."""
    scale = (1 - icc) / icc
    item_rates = rng.beta(rate * scale, (1 - rate) * scale, items)
    hits = rng.binomial(size, item_rates)
    checks = np.full(items, size)
    cd = rate_confidence(hits, checks)
    interval = cd.interval()
    return Aggregate(suite, "base", "error_rate", float(hits.sum() / checks.sum()), interval.low, interval.high,
                     int(checks.sum()), confidence=cd)


def skew_p_table(args: argparse.Namespace, rng: np.random.Generator) -> list[str]:
    lines = ["## Skew's p under a zero per-item mean: rejection rate at 0.05 (target 0.05)", "",
             "| per-item values | p | " + " | ".join(f"n={n}" for n in args.sizes) + " |",
             "|" + "---|" * (2 + len(args.sizes))]
    for name, generate in CENTRED.items():
        wil, boot = {n: 0 for n in args.sizes}, {n: 0 for n in args.sizes}
        for n in args.sizes:
            for _ in range(args.reps):
                x = generate(rng, n)
                wil[n] += wilcoxon_p(x) < 0.05
                boot[n] += studentized_bootstrap(x, rng, args.resamples).p_value(0.0) < 0.05
        lines.append(f"| {name} | Wilcoxon (old) | " + " | ".join(wilson(wil[n], args.reps) for n in args.sizes) + " |")
        lines.append(f"| {name} | bootstrap-t/Student | "
                     + " | ".join(wilson(boot[n], args.reps) for n in args.sizes) + " |")
    return lines


def one_gate_table(args: argparse.Namespace, rng: np.random.Generator) -> list[str]:
    lines = ["## One `evidence: ci` gate with the truth on its bound: failure rate (nominal 0.025)", "",
             "| gate | data | " + " | ".join(f"n={n}" for n in args.sizes) + " |",
             "|" + "---|" * (2 + len(args.sizes))]
    kinds = {"s": ["inverted_pair"]}
    cases: list[tuple[str, str, Callable[[int], Aggregate], Gate]] = []
    for name in ("normal", "exponential - 1 (right-skewed)", "10% of items carry the tilt", "t3 (heavy tails)"):
        generate = CENTRED[name]
        # Truth 0 = bound: "skew max 0"; for the left tail, "skew min 0" on the same data.
        draw = _skew_draw(generate, rng, args.resamples)
        cases.append(("skew <= 0", name, draw, Gate("skew", "max", 0.0, evidence="ci", min_n=2)))
        cases.append(("skew >= 0", name, draw, Gate("skew", "min", 0.0, evidence="ci", min_n=2)))
    cases.append(("error_rate <= 0.1", "5 checks per item, ICC 0.3",
                  lambda n: clustered_rate_aggregate("s", rng, n, 5, 0.1, 0.3),
                  Gate("error_rate", "max", 0.1, evidence="ci", min_n=2)))
    for label, data, make, gate in cases:
        cells = []
        for n in args.sizes:
            fails = sum(evaluate([gate], [make(n)], kinds)[0].verdict == FAIL for _ in range(args.reps))
            cells.append(wilson(fails, args.reps))
        lines.append(f"| {label} | {data} | " + " | ".join(cells) + " |")
    return lines


def session_table(args: argparse.Namespace, rng: np.random.Generator) -> list[str]:
    n = 60
    lines = [(f"## A session of many CI gates ({n} items each): family-wise error (some gate fails "
              "although every truth is within its bound)"), "",
             "| gates | at their bound | none | Holm (default) | BH |", "|---|---|---|---|---|"]
    shapes = [CENTRED["normal"], CENTRED["exponential - 1 (right-skewed)"], CENTRED["t3 (heavy tails)"]]
    reps = max(1, args.reps // 4)
    for m in (10, 50):
        for share in (1.0, 0.2):
            suites = {f"s{j}": ["inverted_pair"] for j in range(m)}
            gates = [Gate("skew", "max", 0.0, evidence="ci", suites=(f"s{j}",), min_n=2) for j in range(m)]
            fails = {"none": 0, "holm": 0, "bh": 0}
            for _ in range(reps):
                aggs = []
                for j in range(m):
                    # At the bound (truth 0) or one item-SD inside it (truth -1).
                    shift = 0.0 if j < round(share * m) else -1.0
                    aggs.append(mean_aggregate(f"s{j}", shapes[j % len(shapes)](rng, n) + shift, rng, 400))
                for method in fails:
                    verdicts = evaluate(gates, aggs, suites, multiplicity=method)
                    fails[method] += any(v.verdict == FAIL for v in verdicts)
            at = "all" if share == 1.0 else f"{round(share * m)} of {m}"
            lines.append(f"| {m} | {at} | " + " | ".join(wilson(fails[k], reps) for k in ("none", "holm", "bh"))
                         + " |")
    lines.append("")
    lines.append(f"({reps} sessions per row.)")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=1000, help="replicates per cell (default 1000)")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    parser.add_argument("--sizes", default="15,30,60,120", help="numbers of items")
    parser.add_argument("--sections", default="skew_p,one_gate,session")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.sizes = [int(s) for s in args.sizes.split(",")]
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    tables = {"skew_p": skew_p_table, "one_gate": one_gate_table, "session": session_table}
    print(f"# Gate tests: {args.reps} replicates, {args.resamples} resamples, seed {args.seed}\n", flush=True)
    for name in args.sections.split(","):
        t0 = time.perf_counter()
        print("\n".join(tables[name](args, rng)) + "\n", flush=True)  # each table as soon as it is done
        print(f"section {name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    print(f"({time.perf_counter() - start:.0f} s in all)")


if __name__ == "__main__":
    main()
