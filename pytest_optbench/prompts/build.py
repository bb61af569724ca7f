"""Items x conditions -> the prompts sent to the model.

Pure. Each item kind (kinds/) builds its questions, one per role, and names its built-in
system prompt; a condition transforms the item's fields and may change the system prompt; the
template joins scenario and question.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import kinds
from ..kinds import base, binary, inverted_pair
from ..options import Settings
from ..suite.load import Condition, Item, Suite
from . import modes

# The built-in system prompts by name; the texts live with their kinds and each kind picks
# its own (``Kind.system_prompt``).
ANSWER_RULE = base.ANSWER_RULE
SYSTEM_PROMPTS: dict[str, str] = {
    "probability": base.PROBABILITY_PROMPT,
    "recommendation": inverted_pair.RECOMMENDATION_PROMPT,
    "salience": inverted_pair.SALIENCE_PROMPT,
    "binary": binary.SYSTEM_PROMPT,
}
DEFAULT_TEMPLATE = "{scenario}\n\n{question}"
DEFAULT_SAMPLES = 5
DEFAULT_TEMPERATURE = 0.7


def builtin_system_prompt(kind: str, track: str | None) -> str:
    return kinds.kind_of(kind).system_prompt(track)


@dataclass(frozen=True)
class PromptSpec:
    """One question asked of the model, ``samples`` times.

    ``role`` says which part of the item it is (``positive``, ``a``, ``rung2`` ...);
    ``meta`` carries the item's labelled data (kind, track, expected, outcome...) so that a
    simulated model or a user's pipeline can see what is being asked.
    """

    role: str
    system: str
    user: str
    samples: int
    temperature: float
    meta: Mapping[str, Any] = field(default_factory=dict)
    mode: str = modes.TEXT  # text | json | logprobs (elicit/modes.py)
    yes_no: bool = False  # logprobs mode on a yes/no item: P(yes) from the answer token

    @property
    def key(self) -> str:
        """Stable hash of everything that changes the answer (used for seeds and caching);
        text prompts keep the key they had before modes existed."""
        parts = [self.system, self.user, f"{self.temperature:.6g}"]
        if self.mode != modes.TEXT:
            parts.append(self.mode)
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def apply_condition(item: Item, condition: Condition) -> dict[str, Any]:
    """The item's fields after the condition's transforms (templates read the originals)."""
    values = {"id": item.id, "domain": item.domain or "", **item.fields}
    fields = dict(item.fields)
    for name, template in condition.transforms.items():
        fields[name] = template.format(**values)
    return fields


def system_prompt_for(suite: Suite, item: Item, condition: Condition, settings: Settings) -> str:
    system = settings.system_prompt or suite.system_prompt or builtin_system_prompt(item.kind, suite.track)
    if condition.system is not None:
        system = condition.system
    if condition.system_prefix:
        system = f"{condition.system_prefix}\n\n{system}"
    return system


def render_prompts(suite: Suite, item: Item, condition: Condition, settings: Settings) -> list[PromptSpec]:
    """All prompts of one item under one condition, with samples and temperature resolved."""
    samples = settings.samples or item.samples or suite.samples or DEFAULT_SAMPLES
    temperature = next(
        t for t in (settings.temperature, item.temperature, suite.temperature, DEFAULT_TEMPERATURE)
        if t is not None
    )
    mode = elicit_mode(suite, item, settings)
    system = system_prompt_for(suite, item, condition, settings)
    kind = kinds.kind_of(item.kind)
    yes_no = False
    if mode == modes.LOGPROBS:
        # One greedy request: the distribution is the answer, samples would repeat it.
        samples, temperature = 1, 0.0
        if base.BINARY in kind.families:
            yes_no = True
            if system == builtin_system_prompt(item.kind, suite.track):
                system = binary.YES_NO_PROMPT
    fields = apply_condition(item, condition)
    template = suite.template or DEFAULT_TEMPLATE
    meta_base = {
        "suite": suite.id, "item": item.id, "condition": condition.name, "kind": item.kind,
        "track": suite.track if kind.tracks else None,
        "language": suite.language, "domain": item.domain,
    }
    for key in kinds.label_fields():
        if key in item.fields:
            meta_base[key] = item.fields[key]
    specs = []
    for q in kind.questions(fields):
        values = {**fields, "id": item.id, "domain": item.domain or "", "scenario": q.scenario, "question": q.question}
        user = template.format(**values).strip()
        specs.append(PromptSpec(q.role, system, user, samples, temperature, {**meta_base, "role": q.role},
                                mode, yes_no))
    return specs


def elicit_mode(suite: Suite, item: Item, settings: Settings) -> str:
    """command line > item > suite defaults > text."""
    return settings.elicit or item.elicit or suite.elicit or modes.TEXT


def prompt_fingerprint(texts: list[str]) -> str:
    """Short hash identifying the system prompts and templates of a run."""
    return hashlib.sha256("\x1e".join(sorted(set(texts))).encode()).hexdigest()[:16]
