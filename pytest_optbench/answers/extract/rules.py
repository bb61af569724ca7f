"""The named rules of answer extraction: what each decides, under a stable name.

Pure data. Every rule that gives a number its role, presents it as the answer or decides the
reading has an entry here: a dotted name (``stage.name``), the stage it belongs to, the phrase
it records on the number or the reading (the stable role and reason texts), and a one-line
account. ``reader`` and ``quantities`` record the name of the rule that decided each number
(``Quantity.rule``) and each reading (``Reading.rule``); ``explain`` shows them, and the JSON
report keeps the deciding rule of every answer (``rule``), so a reviewer can count readings by
rule. Names are part of the report format: rename one only with a note in the changelog.

Stages, in the order they run:

- ``quantity``: what a number is made of, and arithmetic across neighbours (``quantities.py``);
- ``role``: why a number is *not* an answer, from the tokens around it (``roles.py``);
- ``present``: how a number is presented as the answer (``reader.py``);
- ``context``: what the rest of the reply and the question say about a presented number;
- ``decide``: which of the remaining numbers, if any, is the reply's answer;
- ``json``: the answer of a JSON object (``answers/parse.py``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """One named rule. ``text``: the role or reason it records ('' when it records none,
    such as a presentation rule: the number then is the answer)."""

    name: str
    text: str
    doc: str

    @property
    def stage(self) -> str:
        return self.name.split(".", 1)[0]


STAGES = ("quantity", "role", "present", "context", "decide", "json")

_RULES: list[Rule] = []


def rule(name: str, text: str, doc: str) -> Rule:
    """Register a rule (module level only; names and texts are unique per stage)."""
    made = Rule(name, text, doc)
    _RULES.append(made)
    return made


def by_name() -> dict[str, Rule]:
    return {r.name: r for r in _RULES}


def all_rules() -> tuple[Rule, ...]:
    return tuple(_RULES)


_BY_TEXT: dict[str, str] = {}


def for_role(text: str | None) -> str | None:
    """The name of the rule that records role ``text`` (None for None or an unknown text)."""
    if text is None:
        return None
    if not _BY_TEXT:
        for r in _RULES:
            if r.text and r.stage in ("quantity", "role", "present", "context"):
                _BY_TEXT.setdefault(r.text, r.name)
    return _BY_TEXT.get(text)


def for_reason(reason: str | None) -> str | None:
    """The name of the decision rule whose reason ``reason`` starts with ("conflicting
    answers (70, 80)" -> ``decide.conflict``)."""
    if reason is None:
        return None
    best: Rule | None = None
    for r in _RULES:
        if r.stage in ("decide", "json") and r.text and reason.startswith(r.text) and (
                best is None or len(r.text) > len(best.text)):
            best = r
    return best.name if best is not None else None
