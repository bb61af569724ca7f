"""``dose_response``: one question asked with each rung of an evidence ladder appended to the
scenario (weakest first); adjacent answers may not move against the ladder's ``direction``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..records.item import ItemRecord
from .base import (
    DATA,
    ERROR,
    VIOLATION,
    WORD,
    FieldError,
    FieldSpec,
    ItemLike,
    KindBase,
    Lint,
    Question,
    Simulator,
    Violation,
    Violations,
    item_rng,
)

DIRECTIONS = ("increasing", "decreasing")
MIN_RUNGS = 3


def rung_role(index: int) -> str:
    """``rung1`` for the first (weakest) rung."""
    return f"rung{index}"


class DoseResponse(KindBase):
    name = "dose_response"
    fields = (
        FieldSpec("scenario"), FieldSpec("question"),
        FieldSpec("direction", type=WORD, label=True), FieldSpec("ladder", type=DATA),
    )
    families = (VIOLATION,)
    distinct = ("question",)
    default_tolerance = 2.0  # the rounding of answers and of their means

    def checks(self, record: ItemRecord) -> int:
        return max(0, len(record.prompts) - 1)  # one per adjacent pair of rungs

    def check_fields(self, fields: Mapping[str, Any], track: str | None) -> dict[str, Any]:
        if fields["direction"] not in DIRECTIONS:
            raise FieldError("direction", f"must be 'increasing' or 'decreasing', got {fields['direction']!r}")
        ladder = fields["ladder"]
        if not isinstance(ladder, list) or len(ladder) < MIN_RUNGS:
            raise FieldError("ladder", f"must be a list of at least {MIN_RUNGS} evidence sentences, weakest first")
        for rung, sentence in enumerate(ladder, start=1):
            if not isinstance(sentence, str) or not sentence.strip():
                raise FieldError("ladder", f"rung {rung} must be a non-empty string")
        return {**fields, "ladder": tuple(ladder)}

    def questions(self, fields: Mapping[str, Any]) -> list[Question]:
        scenario = str(fields.get("scenario", ""))
        return [Question(rung_role(i), f"{scenario} {rung}", fields["question"])
                for i, rung in enumerate(fields["ladder"], start=1)]

    def violations(self, records: Sequence[ItemRecord], tolerance: float) -> Violations:
        import numpy as np

        from ..metrics import axioms

        hits = checks = 0
        bad = []
        for r in records:
            ladder = np.array([p.mean(keep_fifty=True) for p in r.prompts])
            if np.isnan(ladder).any():
                continue
            steps = axioms.dose_response_steps(ladder, r.direction or "increasing", tolerance)
            hits, checks = hits + int(steps.sum()), checks + steps.size
            if steps.any():
                bad.append(r.item)
        return Violations(hits, checks, bad)

    def explain(self, record: ItemRecord) -> Violation:
        import numpy as np

        from ..metrics import axioms

        ladder = np.array([p.mean(keep_fifty=True) for p in record.prompts])
        direction = record.direction or "increasing"
        steps = np.diff(ladder) * (1 if direction == "increasing" else -1)
        against = -steps[axioms.dose_response_steps(ladder, direction)]
        rungs = ", ".join(f"{v:.0f}" for v in ladder)
        return Violation(float(against.sum()), f"rungs {rungs} (should be {direction}): {against.size} reversal(s)")

    def simulated_answer(self, meta: Mapping[str, Any], sim: Simulator) -> float:
        # Rungs 10 pp apart in the item's direction; each step reversed at the profile's rate.
        rng = item_rng(sim, meta)
        sign = 1.0 if meta.get("direction") == "increasing" else -1.0
        value = 30.0 if sign > 0 else 70.0
        ladder = [value]
        rate = sim.parameter("dose_response_violation_rate")
        for _ in range(11):  # enough rungs for any sensible ladder
            step = 10.0 * sign
            if rng.random() < rate:
                step = -step
            value = min(95.0, max(5.0, value + step))
            ladder.append(value)
        return ladder[int(str(meta.get("role")).removeprefix("rung")) - 1]

    def lint(self, items: Sequence[ItemLike], track: str | None) -> list[Lint]:
        return [Lint(item.id, ERROR, "the ladder repeats a rung")
                for item in items if len(set(item.fields["ladder"])) < len(item.fields["ladder"])]


KIND = DoseResponse()
