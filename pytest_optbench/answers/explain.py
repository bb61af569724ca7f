"""Why a reply was read as it was: every number found, the rule that decided its role, and the
reading (or the reason there is none).

Pure. ``explain`` reads a reply exactly as ``parse.parse_answer`` does (same value, same
reason, same deciding rule) and keeps what the reader found on the way; ``Explanation.text()``
is what ``optbench explain "REPLY" [--question Q]`` prints. Rule names are those of
``extract/rules.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import parse
from .extract import lexer, reader, rules
from .extract.quantities import Quantity


@dataclass(frozen=True)
class NumberFound:
    """One number of the reply: as written, as read (on 0-100 when it carries its percent,
    fraction or odds), what it was taken for and the rule that decided."""

    text: str
    value: float
    role: str | None          # why it is not the answer (None: it was presented as an answer)
    rule: str | None          # the deciding rule's name
    answer: bool = False      # the number read as the reply's answer

    def line(self) -> str:
        if self.answer:
            taken = "the answer"
        elif self.role is not None:
            taken = self.role
        elif self.rule is not None:
            taken = "presented as an answer, not the one read"
        else:
            taken = "not presented as an answer (no presentation rule applies)"
        return f"{self.text!r} ({self.value:g}): {taken}" + (f" [{self.rule}]" if self.rule else "")


@dataclass(frozen=True)
class Explanation:
    """The reading of one reply and how it came about."""

    value: float | None
    reason: str | None
    rule: str | None
    numbers: tuple[NumberFound, ...]

    def text(self) -> str:
        """The explanation as lines of text."""
        lines = [f"numbers found: {len(self.numbers)}" + (" (read from a JSON answer key)" if (
            self.rule or "").startswith("json.") else "")]
        lines += [f"  {k + 1}. {n.line()}" for k, n in enumerate(self.numbers)]
        if self.value is not None:
            lines.append(f"reading: {self.value:g} [{self.rule or 'no rule'}]")
        else:
            lines.append(f"reading: none, {self.reason} [{self.rule or 'no rule'}]")
        if self.rule is not None:
            found = rules.by_name().get(self.rule)
            if found is not None:
                lines.append(f"  {self.rule}: {' '.join(found.doc.split())}")
        return "\n".join(lines)


def _number(prepared: str, r: reader.Reader, q: Quantity, answer: bool, reading_rule: str | None) -> NumberFound:
    toks = r.toks
    written = prepared[toks[q.first].start:toks[q.last].end]
    decided = q.rule or rules.for_role(q.role) or (reader.presentation_rule(q) if q.role is None else None)
    if answer and decided is None:
        decided = reading_rule  # a number no presentation rule presented, read by a decision rule
    return NumberFound(written, q.value, q.role, decided, answer)


def explain(text: str, *, question: str | None = None, truncated: bool | None = None) -> Explanation:
    """Read ``text`` as ``parse_answer(text, question=..., truncated=...)`` does, and say why.

    The value, reason and rule are those ``parse_answer`` returns; ``numbers`` lists every
    number the reader found in the reply (none when the reply was read from a JSON answer key
    or by the whole-number shortcut), each with the rule that decided its role.
    """
    if text is None or not str(text).strip():
        return Explanation(None, parse.EMPTY, parse.EMPTY_RULE.name, ())
    seen: list[parse.Seen] = []
    parsed = parse._parse(str(text), question, truncated, seen)
    numbers: list[NumberFound] = []
    answer_at = _answer_token(parsed, seen)
    for prepared, r in seen[-1:]:
        if r is None:
            continue
        numbers += [_number(prepared, r, q, q.first == answer_at, parsed.rule) for q in r.qs]
    if not numbers and parsed.rule == reader.BARE.name:
        bare = lexer.cap(str(text)).strip()
        numbers.append(NumberFound(bare, float(parsed.value or 0), None, reader.BARE.name, True))
    return Explanation(parsed.value, parsed.reason, parsed.rule, tuple(numbers))


def _answer_token(parsed: parse.Parsed, seen: list[parse.Seen]) -> int:
    """The first token of the number read as the answer in the last text read (-1: none)."""
    if parsed.value is None or not seen or seen[-1][1] is None:
        return -1
    r = seen[-1][1]
    return r.answer_at


def rule_account(name: str) -> str | None:
    """The one-paragraph account of the rule named ``name`` (None for a name this version has
    no rule of, e.g. one read from an older or newer report)."""
    found = rules.by_name().get(name)
    return " ".join(found.doc.split()) if found is not None else None
