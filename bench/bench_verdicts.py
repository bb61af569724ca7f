"""Three verdicts by simulation: how often a CI session goes red, green or stays inconclusive (issue 24).

    python bench/bench_verdicts.py [--reps N] [--seed S]

Sessions of m ``evidence: ci`` gates ``error_rate <= 0.05`` (one per suite, n answers each),
judged by the real ``scoring.gates.evaluate`` under Holm (the default), on Clopper-Pearson
rates as ``aggregate()`` builds them. Per scenario it prints the share of sessions

* **red**: some gate FAILs (the whole interval at its corrected level lies beyond the bound);
* **green**: every gate PASSes (its whole 95% interval lies within the bound): what a session
  under ``on_inconclusive: fail`` (or strict mode) needs;
* **inconclusive**: neither; under the default ``on_inconclusive: pass`` such a session passes.

Scenarios: every truth on the bound (red must stay near 2.5%: Holm's family-wise error), one
truth well beyond the bound and the rest far inside (green must stay below 2.5%: the
intersection-union test of Berger 1982, no correction needed), and a healthy model (every truth
at a fifth of the bound: how many answers a gate needs before it can be shown to hold).
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from pytest_optbench.metrics.rates import rate_confidence
from pytest_optbench.scoring.aggregate import Aggregate
from pytest_optbench.scoring.gates.evaluate import evaluate
from pytest_optbench.scoring.gates.spec import FAIL, PASS, Gate

BOUND = 0.05


def wilson(hits: int, total: int) -> str:
    z = 1.959963984540054
    p = hits / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return f"{p:.3f} [{max(0.0, centre - half):.3f}, {min(1.0, centre + half):.3f}]"


def session(rng: np.random.Generator, truths: list[float], n: int) -> str:
    aggs, kinds = [], {}
    for i, truth in enumerate(truths):
        hits = int(rng.binomial(n, truth))
        cd = rate_confidence(np.array([hits]), np.array([n]))
        interval = cd.interval()
        aggs.append(Aggregate(f"s{i}", "base", "error_rate", hits / n, interval.low, interval.high, n,
                              ci_method=interval.method, confidence=cd))
        kinds[f"s{i}"] = ["inverted_pair"]
    verdicts = evaluate([Gate("error_rate", "max", BOUND, "ci", min_n=1)], aggs, kinds)
    if any(v.verdict == FAIL for v in verdicts):
        return "red"
    return "green" if all(v.verdict == PASS for v in verdicts) else "inconclusive"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"{args.reps} sessions per row; gate error_rate <= {BOUND} (ci), Holm; share [Wilson 95% CI]\n")
    print(f"{'scenario':<44} {'m':>3} {'n':>5}  {'red':<22} {'green':<22} inconclusive")
    rows = [("every truth on the bound", 10, 400, [BOUND] * 10),
            ("every truth on the bound", 3, 400, [BOUND] * 3),
            ("one truth at 2x the bound, rest at 0.01", 10, 100, [2 * BOUND] + [0.01] * 9),
            ("one truth at 2x the bound, rest at 0.01", 10, 400, [2 * BOUND] + [0.01] * 9),
            ("one truth just beyond (0.06), rest at 0.01", 10, 400, [0.06] + [0.01] * 9),
            ("healthy: every truth at 0.01", 10, 100, [0.01] * 10),
            ("healthy: every truth at 0.01", 10, 200, [0.01] * 10),
            ("healthy: every truth at 0.01", 10, 400, [0.01] * 10)]
    for name, m, n, truths in rows:
        counts = {"red": 0, "green": 0, "inconclusive": 0}
        for _ in range(args.reps):
            counts[session(rng, truths, n)] += 1
        print(f"{name:<44} {m:>3} {n:>5}  {wilson(counts['red'], args.reps):<22} "
              f"{wilson(counts['green'], args.reps):<22} {wilson(counts['inconclusive'], args.reps)}")


if __name__ == "__main__":
    main()
