"""``conditional``: P(a), P(b given a), P(a and b); the joint must equal P(a) P(b | a)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..records.item import ItemRecord
from .base import FieldSpec, Simulator, Violation, item_rng, prompt_means
from .sets import AxiomSet

if TYPE_CHECKING:
    import numpy as np


class Conditional(AxiomSet):
    name = "conditional"
    roles = ("a", "b_given_a", "both")
    fields = (FieldSpec("scenario"), FieldSpec("a"), FieldSpec("b_given_a"), FieldSpec("both"))
    distinct = ("both",)
    default_tolerance = 10.0  # a product of two noisy means: three SDs of its residual

    def rule(self, first: np.ndarray, second: np.ndarray, joint: np.ndarray, tolerance: float) -> np.ndarray:
        from ..metrics import axioms

        return axioms.conditional_violations(first, second, joint, tolerance)

    def explain(self, record: ItemRecord) -> Violation:
        m = prompt_means(record)
        product = m["a"] * m["b_given_a"] / 100
        return Violation(abs(product - m["both"]), f"P(a) x P(b|a) = {product:.1f}, but P(a and b) = {m['both']:.1f}")

    def simulated_answer(self, meta: Mapping[str, Any], sim: Simulator) -> float:
        # P(a)P(b|a); with the profile's rate, a joint 12-18 pp above the product.
        rng = item_rng(sim, meta)
        a, b_given_a = rng.uniform(30, 80, size=2)
        both = a * b_given_a / 100
        if rng.random() < sim.parameter("conditional_violation_rate"):
            both += rng.uniform(12, 18)
        return float({"a": a, "b_given_a": b_given_a, "both": both}[meta["role"]])


KIND = Conditional()
