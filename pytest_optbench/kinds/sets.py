"""What the three axiom-set kinds share (conjunction, disjunction, conditional): a scenario,
three questions, one rule over the three mean answers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..records.item import ItemRecord
from .base import VIOLATION, KindBase, Question, Violations

if TYPE_CHECKING:
    import numpy as np


class AxiomSet(KindBase):
    """A kind whose item asks three questions about one scenario; the last one is joint."""

    roles: tuple[str, str, str] = ("a", "b", "both")  # the fields asked, in order; the last is joint
    families = (VIOLATION,)

    @property
    def scored_roles(self) -> tuple[str, ...]:  # type: ignore[override]
        return self.roles

    def questions(self, fields: Mapping[str, Any]) -> list[Question]:
        scenario = str(fields.get("scenario", ""))
        return [Question(role, scenario, fields[role]) for role in self.roles]

    def rule(self, first: np.ndarray, second: np.ndarray, joint: np.ndarray, tolerance: float) -> np.ndarray:
        """Mask of the sets that break the rule (a function of metrics/axioms.py)."""
        raise NotImplementedError

    def violations(self, records: Sequence[ItemRecord], tolerance: float) -> Violations:
        import numpy as np

        from ..metrics import axioms

        columns = [np.array([r.prompt(role).mean(keep_fifty=True) for r in records]) for role in self.roles]
        keep = axioms.usable(*columns)
        first, second, joint = (c[keep] for c in columns)
        violated = self.rule(first, second, joint, tolerance)
        ids = [r.item for r, k in zip(records, keep, strict=True) if k]
        return Violations(int(violated.sum()), int(violated.size), [i for i, v in zip(ids, violated, strict=True) if v])
