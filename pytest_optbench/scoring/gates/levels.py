"""The level of the interval that decides each gate of a family under a multiplicity correction. Pure.

An ``evidence: ci`` gate is a one-sided test of its bound at ``alpha`` (2.5%): it is crossed
when the whole (1 - 2 alpha) interval lies beyond the bound, which is the same as its p of
crossing lying below alpha (``metrics.gate_tests``). Under a correction over m gates each
test runs at a smaller tail, and the interval printed beside the verdict must be the interval
at that tail, or PASS could stand beside an interval wholly beyond its bound. ``decision_tails``
gives, for each gate, the one-sided tail ``t`` such that

    p_i < t_i    exactly when    the corrected p of gate i is below alpha

so the interval at level 1 - 2 t_i lies beyond the bound exactly when the correction says
the bound is crossed:

* ``none``: t = alpha for every gate.
* ``holm`` (step-down, Holm 1979): with the p values sorted, p_(1) <= ... <= p_(m), and s the
  first rank with p_(s) >= alpha / (m - s + 1) (m + 1 if none), the gate of rank j gets
  t = alpha / (m - min(j, s) + 1). The gates rejected by the step-down get the tail they were
  tested at; the rest the tail at which the procedure stopped. With one gate this is alpha;
  with no gate crossed it is Bonferroni's alpha / m.
* ``bh`` (step-up, Benjamini and Hochberg 1995): with k the largest rank with
  p_(k) < k alpha / m (0 if none), every gate gets t = max(k, 1) alpha / m: the FCR-adjusted
  intervals of Benjamini and Yekutieli (2005).
"""

from __future__ import annotations

from collections.abc import Sequence


def decision_tails(p_values: Sequence[float], method: str, alpha: float) -> list[float]:
    """One tail per p value (same order); see the module docstring."""
    m = len(p_values)
    if m == 0:
        return []
    if method == "none":
        return [alpha] * m
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    if method == "holm":
        stop = m  # 0-based rank of the first gate the step-down does not reject
        for rank, i in enumerate(order):
            if not p_values[i] < alpha / (m - rank):
                stop = rank
                break
        tails = [alpha] * m
        for rank, i in enumerate(order):
            tails[i] = alpha / (m - min(rank, stop))
        return tails
    if method == "bh":
        k = 0
        for rank, i in enumerate(order, start=1):
            if p_values[i] < rank * alpha / m:
                k = rank
        return [min(alpha, alpha * (max(k, 1) / m))] * m
    raise ValueError(f"unknown correction {method!r}")


def level_text(level: float) -> str:
    """A confidence level as the tables print it: 95%, 99.29%, 99.9%."""
    return f"{100 * level:.4g}%"
