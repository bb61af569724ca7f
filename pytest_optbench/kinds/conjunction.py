"""``conjunction``: P(a), P(b), P(a and b); the joint may not exceed min(P(a), P(b))."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..records.item import ItemRecord
from .base import FieldSpec, Simulator, Violation, item_rng, prompt_means
from .sets import AxiomSet

if TYPE_CHECKING:
    import numpy as np


class Conjunction(AxiomSet):
    name = "conjunction"
    roles = ("a", "b", "both")
    fields = (FieldSpec("scenario"), FieldSpec("a"), FieldSpec("b"), FieldSpec("both"))
    distinct = ("both",)
    default_tolerance = 2.0  # the rounding of answers and of their means

    def rule(self, first: np.ndarray, second: np.ndarray, joint: np.ndarray, tolerance: float) -> np.ndarray:
        from ..metrics import axioms

        return axioms.conjunction_violations(first, second, joint, tolerance)

    def explain(self, record: ItemRecord) -> Violation:
        m = prompt_means(record)
        bound = min(m["a"], m["b"])
        return Violation(m["both"] - bound, f"P(a and b) {m['both']:.1f} > min(P(a), P(b)) {bound:.1f}")

    def simulated_answer(self, meta: Mapping[str, Any], sim: Simulator) -> float:
        # Coherent P(a)P(b); with the profile's rate, a joint 8-12 pp above the bound.
        rng = item_rng(sim, meta)
        a, b = rng.uniform(30, 80, size=2)
        both = a * b / 100
        if rng.random() < sim.parameter("conjunction_violation_rate"):
            both = min(a, b) + rng.uniform(8, 12)
        return float({"a": a, "b": b, "both": both}[meta["role"]])


KIND = Conjunction()
