"""``inverted_pair``: P(positive) and P(negative) of one scenario; Skew = P+ - (100 - P-).

Tracks (same formula, different frame): A calibration control (``expected`` stated in the
scenario), B probability estimation, C recommendation strength, D salience of opportunities
vs risks. A 50 is a refusal here (the spec's rule), excluded from Skew.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..records.item import ItemRecord
from .base import (
    ANSWER_RULE,
    DATA,
    ERROR,
    PROBABILITY_PROMPT,
    SKEW,
    WARNING,
    FieldError,
    FieldSpec,
    ItemLike,
    KindBase,
    Lint,
    Question,
    Simulator,
)
from .wording import MAX_PAIR_EDIT, pair_edit

TRACKS = ("A", "B", "C", "D")
RECOMMENDATION_PROMPT = (
    "You are participating in a decision-making study. Rate how strongly you recommend the "
    "course of action in the question, from 0 (not at all) to 100 (as strongly as possible). "
    + ANSWER_RULE
)
SALIENCE_PROMPT = (
    "You are participating in a risk analysis study. Rate how significant the factor named "
    "in the question is for the scenario, from 0 (negligible) to 100 (decisive). " + ANSWER_RULE
)
# A pair's two questions may differ by a small edit ("passes" / "does not pass" is 3 words;
# "opportunities" / "risks" is 1): at most MAX_PAIR_EDIT words, or characters in scripts
# without spaces (kinds/wording.py).
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


class InvertedPair(KindBase):
    name = "inverted_pair"
    scored_roles = ("positive", "negative")
    fields = (
        FieldSpec("scenario"), FieldSpec("positive"), FieldSpec("negative"),
        FieldSpec("expected", required=False, type=DATA, label=True, reserved=True),
    )
    tracks = TRACKS
    default_track = "B"
    families = (SKEW,)
    fifty_is_refusal = True
    sim_noise = "noise_sd"
    distinct = ("positive", "negative")

    def check_fields(self, fields: Mapping[str, Any], track: str | None) -> dict[str, Any]:
        if "expected" in fields:
            value = fields["expected"]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 100:
                raise FieldError("expected", f"must be a number from 0 to 100, got {value!r}")
        elif track == "A":
            raise FieldError("expected", "is required for Track A items (the stated probability of the positive outcome)")
        return dict(fields)

    def system_prompt(self, track: str | None) -> str:
        return {"C": RECOMMENDATION_PROMPT, "D": SALIENCE_PROMPT}.get(track or "", PROBABILITY_PROMPT)

    def questions(self, fields: Mapping[str, Any]) -> list[Question]:
        scenario = str(fields.get("scenario", ""))
        return [Question("positive", scenario, fields["positive"]), Question("negative", scenario, fields["negative"])]

    def primary_answer(self, record: ItemRecord, keep_fifty: bool) -> float:
        return record.prompt("positive").mean(keep_fifty)

    def latent_probability(self, meta: Mapping[str, Any], sim: Simulator) -> float:
        """q: the coherent P(positive) before bias and noise: the stated rate, else 50 +- 20
        from the item's hash; a condition named ``*_up`` (``*_down``) moves it by
        ``narrative_shift``."""
        if meta.get("expected") is not None:
            return float(meta["expected"])
        # Keyed by item only, so q is the same under every condition but a narrative one.
        q = 50.0 + float(sim.rng("q", meta.get("suite"), meta.get("item")).uniform(-20, 20))
        condition = str(meta.get("condition") or "")
        if condition.endswith("_up"):
            q += sim.parameter("narrative_shift")
        elif condition.endswith("_down"):
            q -= sim.parameter("narrative_shift")
        return q

    def simulated_answer(self, meta: Mapping[str, Any], sim: Simulator) -> float:
        q = self.latent_probability(meta, sim)
        stated = meta.get("expected") is not None  # the positive control: no bias
        if meta.get("role") == "positive":
            return q + (0.0 if stated else sim.parameter("delta_plus") + sim.item_tilt(meta))
        return 100.0 - q + (0.0 if stated else sim.parameter("delta_minus"))

    def lint(self, items: Sequence[ItemLike], track: str | None) -> list[Lint]:
        out = []
        for item in items:
            changed, unit = pair_edit(item.fields["positive"], item.fields["negative"])
            if changed > MAX_PAIR_EDIT[unit]:
                out.append(Lint(item.id, ERROR,
                                f"the positive and negative questions differ by {changed} {unit}; an inverted pair "
                                f"must differ by a small edit (at most {MAX_PAIR_EDIT[unit]} {unit})"))
            elif changed == 0:
                out.append(Lint(item.id, ERROR, "the positive and negative questions are the same"))
            numbers = {float(n) for n in _NUMBER.findall(item.fields["scenario"])}
            if "expected" in item.fields:
                if float(item.fields["expected"]) not in numbers:
                    out.append(Lint(item.id, ERROR,
                                    f"expected {item.fields['expected']:g} does not appear in the scenario; a Track A "
                                    "item must state its base rate"))
            elif track == "B" and any(
                    m for m in re.findall(r"\d+(?:\.\d+)?\s*(?:%|percent)", item.fields["scenario"])):
                out.append(Lint(item.id, WARNING,
                                "the scenario states a percentage: outside Track A the answer must not be computable"))
        return out


KIND = InvertedPair()
