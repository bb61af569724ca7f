"""``disjunction``: P(a), P(b), P(a or b); the union may not fall below max(P(a), P(b))."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..records.item import ItemRecord
from .base import FieldSpec, Simulator, Violation, item_rng, prompt_means
from .sets import AxiomSet

if TYPE_CHECKING:
    import numpy as np


class Disjunction(AxiomSet):
    name = "disjunction"
    roles = ("a", "b", "either")
    fields = (FieldSpec("scenario"), FieldSpec("a"), FieldSpec("b"), FieldSpec("either"))
    distinct = ("either",)
    default_tolerance = 2.0  # the rounding of answers and of their means

    def rule(self, first: np.ndarray, second: np.ndarray, joint: np.ndarray, tolerance: float) -> np.ndarray:
        from ..metrics import axioms

        return axioms.disjunction_violations(first, second, joint, tolerance)

    def explain(self, record: ItemRecord) -> Violation:
        m = prompt_means(record)
        bound = max(m["a"], m["b"])
        return Violation(bound - m["either"], f"P(a or b) {m['either']:.1f} < max(P(a), P(b)) {bound:.1f}")

    def simulated_answer(self, meta: Mapping[str, Any], sim: Simulator) -> float:
        # Inclusion-exclusion; with the profile's rate, a union 8-12 pp below the bound.
        rng = item_rng(sim, meta)
        a, b = rng.uniform(20, 60, size=2)
        either = a + b - a * b / 100
        if rng.random() < sim.parameter("disjunction_violation_rate"):
            either = max(a, b) - rng.uniform(8, 12)
        return float({"a": a, "b": b, "either": either}[meta["role"]])


KIND = Disjunction()
