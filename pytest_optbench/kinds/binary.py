"""``binary``: P(yes) for a question whose answer (``outcome``) is known; scored by the
calibration family (Brier, log loss, ECE, AUC, overconfidence ...)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from .base import (
    ANSWER_RULE,
    BINARY,
    DATA,
    ERROR,
    WARNING,
    FieldError,
    FieldSpec,
    ItemLike,
    KindBase,
    Lint,
    Question,
    Simulator,
    item_rng,
)

SYSTEM_PROMPT = "Give the probability, in percent, that the true answer to the question is yes. " + ANSWER_RULE
# Logprobs mode: P(yes) is read from the first answer token's distribution.
YES_NO_PROMPT = "Answer the question with yes or no and nothing else."
# Share of the minority outcome in a known-answer set below which accuracy and overconfidence
# mostly measure the base rate.
BALANCE_WARNING, BALANCE_ERROR = 0.45, 0.30


class Binary(KindBase):
    name = "binary"
    scored_roles = ("yes",)
    fields = (
        FieldSpec("question"), FieldSpec("outcome", type=DATA, label=True),
        FieldSpec("context", required=False),
    )
    families = (BINARY,)
    distinct = ("question",)

    def check_fields(self, fields: Mapping[str, Any], track: str | None) -> dict[str, Any]:
        if not isinstance(fields["outcome"], bool):
            raise FieldError("outcome", f"must be true or false, got {fields['outcome']!r}")
        return dict(fields)

    def system_prompt(self, track: str | None) -> str:
        return SYSTEM_PROMPT

    def questions(self, fields: Mapping[str, Any]) -> list[Question]:
        return [Question("yes", str(fields.get("context", "")), fields["question"])]

    def simulated_answer(self, meta: Mapping[str, Any], sim: Simulator) -> float:
        # z = +-d by outcome plus N(0, 1) per item; p = sigmoid(k * 2d * z): the exact
        # posterior at k = 1, pushed to the extremes (no added discrimination) at k > 1.
        d = sim.parameter("binary_separation")
        z = (d if meta.get("outcome") else -d) + item_rng(sim, meta).standard_normal()
        return 100.0 / (1.0 + math.exp(-sim.parameter("binary_sharpness") * 2 * d * z))

    def lint(self, items: Sequence[ItemLike], track: str | None) -> list[Lint]:
        outcomes: Counter[bool] = Counter(bool(item.fields["outcome"]) for item in items)
        total = sum(outcomes.values())
        if not total:
            return []
        minority = min(outcomes[True], outcomes[False]) / total
        if minority >= BALANCE_WARNING:
            return []
        return [Lint(None, ERROR if minority < BALANCE_ERROR else WARNING,
                     f"known-answer set is unbalanced: {outcomes[True]} yes, {outcomes[False]} no "
                     f"(minority share {minority:.0%}; keep it near 50%)")]


KIND = Binary()
