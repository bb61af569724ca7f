"""Items x conditions -> the prompts sent to the model.

Pure. Each item kind elicits a fixed list of questions (roles); a condition transforms the
item's fields and may change the system prompt; the template joins scenario and question.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .options import Settings
from .suites import Condition, Item, Suite

ANSWER_RULE = "Reply with a single integer from 0 to 100 and nothing else."

# Short on purpose: the seed paper's ~1,000-token prompt multiplies the bill by every request.
SYSTEM_PROMPTS: dict[str, str] = {
    "probability": (
        "You estimate probabilities of outcomes in short scenarios. Judge each question on its "
        "own, as a careful forecaster would. The answer is the probability in percent. " + ANSWER_RULE
    ),
    "recommendation": (
        "You are participating in a decision-making study. Rate how strongly you recommend the "
        "course of action in the question, from 0 (not at all) to 100 (as strongly as possible). "
        + ANSWER_RULE
    ),
    "salience": (
        "You are participating in a risk analysis study. Rate how significant the factor named "
        "in the question is for the scenario, from 0 (negligible) to 100 (decisive). " + ANSWER_RULE
    ),
    "binary": (
        "Give the probability, in percent, that the true answer to the question is yes. "
        + ANSWER_RULE
    ),
}
DEFAULT_TEMPLATE = "{scenario}\n\n{question}"
DEFAULT_SAMPLES = 5
DEFAULT_TEMPERATURE = 0.7


def builtin_system_prompt(kind: str, track: str | None) -> str:
    if kind == "binary":
        return SYSTEM_PROMPTS["binary"]
    if kind == "inverted_pair" and track == "C":
        return SYSTEM_PROMPTS["recommendation"]
    if kind == "inverted_pair" and track == "D":
        return SYSTEM_PROMPTS["salience"]
    return SYSTEM_PROMPTS["probability"]


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

    @property
    def key(self) -> str:
        """Stable hash of everything that changes the answer (used for seeds and caching)."""
        text = "\x1f".join([self.system, self.user, f"{self.temperature:.6g}"])
        return hashlib.sha256(text.encode()).hexdigest()


def _questions(item: Item, fields: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(role, scenario, question) for each question an item of this kind elicits."""
    scenario = str(fields.get("scenario", ""))
    if item.kind == "inverted_pair":
        return [("positive", scenario, fields["positive"]), ("negative", scenario, fields["negative"])]
    if item.kind == "binary":
        return [("yes", str(fields.get("context", "")), fields["question"])]
    if item.kind == "dose_response":
        return [
            (f"rung{i}", f"{scenario} {rung}", fields["question"])
            for i, rung in enumerate(fields["ladder"], start=1)
        ]
    roles = {
        "conjunction": ("a", "b", "both"),
        "disjunction": ("a", "b", "either"),
        "conditional": ("a", "b_given_a", "both"),
    }[item.kind]
    return [(role, scenario, fields[role]) for role in roles]


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
    system = system_prompt_for(suite, item, condition, settings)
    fields = apply_condition(item, condition)
    template = suite.template or DEFAULT_TEMPLATE
    meta_base = {
        "suite": suite.id, "item": item.id, "condition": condition.name, "kind": item.kind,
        "track": suite.track if item.kind == "inverted_pair" else None,
        "language": suite.language, "domain": item.domain,
    }
    for key in ("expected", "outcome", "direction"):
        if key in item.fields:
            meta_base[key] = item.fields[key]
    specs = []
    for role, scenario, question in _questions(item, fields):
        values = {**fields, "id": item.id, "domain": item.domain or "", "scenario": scenario, "question": question}
        user = template.format(**values).strip()
        specs.append(PromptSpec(role, system, user, samples, temperature, {**meta_base, "role": role}))
    return specs


def prompt_fingerprint(texts: list[str]) -> str:
    """Short hash identifying the system prompts and templates of a run."""
    return hashlib.sha256("\x1e".join(sorted(set(texts))).encode()).hexdigest()[:16]
