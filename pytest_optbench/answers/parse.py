"""Free text -> a number on the 0-100 scale, or the reason it could not be read.

Pure. A number counts only where the reply presents it as its answer: the whole reply, a
JSON answer field, a labelled field ("Answer: 25"), "the probability [that E] is X", a
first-person estimate ("I'd put it at 92%"), "X% chance that E", in the ten bundled
languages. Numbers in other roles (ages, counts, years, list numbering, base rates, the
instruction's "0 to 100", a question the model invented, a probability of another event)
give no answer, with a reason. Thousands separators, the 0-1 scale, ranges, bounds,
fractions and odds, numbers in words, yes/no replies, revisions, conflicting answers,
refusals and cut-off replies each follow one documented rule (docs/answer-extraction.md).

Linear in the length of the reply; replies longer than ``extract.lexer.MAX_CHARS`` are read
in their first and last halves of that length.

The implementation lives in ``pytest_optbench.extract``: ``lexer`` (normalising and
tokenizing, numbers in words), ``words`` (the language tables), ``events`` (is a stated
event the asked one?) and ``reader`` (roles, presentation, decision).
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass, field

from ..prompts import modes
from . import distribution
from .extract import events, lexer, quantities, reader
from .extract.rules import rule

# Keys a JSON answer may carry its number under, most specific first. ("confidence" is not
# one: a confidence in a stated yes/no is not the probability of yes.)
JSON_KEYS = ("probability", "probability_percent", "percent", "percentage", "answer",
             "final_answer", "estimate", "likelihood", "chance", "value", "score", "rating",
             "recommendation", "significance", "p")

EMPTY = "empty answer"
JSON_NO_KEY = "JSON answer has none of the answer keys"

EMPTY_RULE = rule("decide.empty", EMPTY, "Nothing but whitespace.")
JSON_KEY = rule("json.key", "", "A JSON object (also in a code fence) whose probability, answer, estimate, rating, "
                "... key holds a number or a string such as \"25%\"; other keys do not compete.")
JSON_STRING = rule("json.string", "", "A JSON answer key holding a string: the string is read as a reply.")
JSON_BAD_VALUE = rule("json.bad-value", "JSON key", "A JSON answer key holding a boolean, a list, an object, "
                      "or a string with no answer in it.")
JSON_OUT_OF_RANGE = rule("json.out-of-range", reader.OUT_OF_RANGE + " (JSON", "A JSON answer outside 0-100.")
JSON_SCALE_01 = rule("json.scale-01", reader.SCALE_01 + " (JSON", "A JSON answer strictly between 0 and 1.")
JSON_NO_KEY_RULE = rule("json.no-key", JSON_NO_KEY, "A JSON object without an answer key, and no answer in the "
                        "rest of the reply.")

# The stable reasons, for callers that count them.
REASONS = (EMPTY, reader.NO_NUMBER, reader.OTHER_ROLES, reader.SCALE_01, reader.CONFLICT,
           reader.TRUNCATED, reader.YES_NO, reader.REFUSAL, reader.OUT_OF_RANGE,
           quantities.PER_MILLE, reader.ECHO, JSON_NO_KEY)


@dataclass(frozen=True)
class Parsed:
    """``value`` is on 0-100 when parsing succeeded; otherwise ``reason`` says why not.
    ``rule``: the name of the rule that decided (``extract/rules.py``; not compared)."""

    value: float | None
    reason: str | None = None
    rule: str | None = field(default=None, compare=False)

    @property
    def ok(self) -> bool:
        return self.value is not None


def parse_answer(text: str, *, question: str | None = None, truncated: bool | None = None) -> Parsed:
    """Read the probability (0-100) a model's reply gives as its answer.

    ``question`` is the user message that was sent: with it, echoes of the question and
    probabilities stated for another event are recognised. ``truncated`` says the reply hit
    the token limit (finish_reason "length"); ``None`` means unknown, and then only a reply
    that visibly ends on an unfinished number ("... is 0.", "... is 10" in prose) counts as
    cut off.
    """
    if text is None or not str(text).strip():
        return Parsed(None, EMPTY, EMPTY_RULE.name)
    text = str(text)
    if len(text) <= SHORT_REPLY:
        return _parse_short(text, question, truncated)
    return _parse(text, question, truncated)


REASONING_CONFLICT = "JSON answer's 'probability' contradicts its own reasoning"


def json_answer(text: str, question: str | None = None) -> Parsed | None:
    """A json-mode reply read strictly (``modes.json_value``), or None when it is no answer
    object (then it is read as text). A reasoned object whose reasoning states another
    number for the asked event than its field is no answer: the model said two things
    (Gemma through a chat template: "100", then 0.01). An exact 1 (1 % or certainty?) is
    read the one way its own reasoning allows, and declined when the reasoning does not
    tell (_one_by_reasoning)."""
    strict = modes.json_value(text)
    if strict is None:
        return None
    value, reason, reasoning = strict
    if not reasoning or (value is None and reason != modes.JSON_AMBIGUOUS):
        return Parsed(value, reason)  # nothing for the reasoning to check or settle
    said = parse_answer(reasoning, question=question).value
    side = _opening_yes_no(reasoning)
    if value is None and (value := _one_by_reasoning(said, side)) is None:
        return Parsed(None, reason)
    if said is not None and abs(said - value) > 0.5:
        return Parsed(None, f"{REASONING_CONFLICT} ({said:g} against {value:g})")
    # "No, mercury is not a liquid ...", then 100: a confidence in "no", or P(yes)? Declined.
    if side is not None and (value < 50 if side == "yes" else value > 50):
        return Parsed(None, f"{REASONING_CONFLICT} ({side} against {value:g})")
    return Parsed(value)


def _one_by_reasoning(said: float | None, side: str | None) -> float | None:
    """An exact 1 as the reasoning before it reads it: 1 % after "no" or a stated 1 %,
    certainty (100 %) after "yes" or a stated 100 %. Either other reading would contradict
    the reasoning and be declined, so this is the object's only consistent answer; None
    when the reasoning leaves both open (SmolLM2: "The answer is no, ...", then 1)."""
    if said in (1.0, 100.0):
        return said
    if said is None and side is not None:
        return 1.0 if side == "no" else 100.0
    return None


# Yes or no as a word of its own at the start: "No, ...", "Yes.", "The answer is no" (not
# "No doubt it will rain", "No one knows").
_OPENING_WORD = re.compile(r"\W*(?:the answer is\s+)?(\w+)\s*(?:[,.!;:，。！、]|$)", re.IGNORECASE)


def _opening_yes_no(reasoning: str) -> str | None:
    """"yes" or "no" when the reasoning opens with that answer (_OPENING_WORD)."""
    match = _OPENING_WORD.match(reasoning[:80])
    word = match.group(1).lower() if match else ""
    if len(word) == 1 and word.isascii():  # "N/A", "Y." are no answers
        return None
    return "yes" if word in distribution.YES_WORDS else "no" if word in distribution.NO_WORDS else None


# Reading is pure and ``Parsed`` immutable, so short replies, which repeat ("65" for many
# prompts, every sample of one), are read once; the bound keeps the memo to a few MB.
SHORT_REPLY = 512


@functools.lru_cache(maxsize=16384)
def _parse_short(text: str, question: str | None, truncated: bool | None) -> Parsed:
    return _parse(text, question, truncated)


@functools.lru_cache(maxsize=2048)
def _asked(question: str) -> events.Question:
    """A question is read once for all its samples (``events.Question`` is immutable)."""
    return events.read_question(question)


def _parse(text: str, question: str | None, truncated: bool | None, seen: list[Seen] | None = None) -> Parsed:
    """``seen``: when given, receives the text reading (for ``explain``)."""
    raw = lexer.cap(text)
    end = lexer.turn_end(raw)
    if end is not None:
        raw, truncated = raw[:end], False  # the model ended its own turn there
        if not raw.strip():
            return Parsed(None, reader.NO_NUMBER, reader.NO_ANSWER_NO_NUMBER.name)
    bare = raw.strip()
    if len(bare) <= 6 and truncated is not True:
        # The common case, fast: "65", "65%", "65 %", "60." (an integer 0-100 and nothing else).
        digits = bare.rstrip(".").rstrip("%").rstrip()
        if digits.isascii() and digits.isdigit() and len(digits) <= 3 and bare[len(digits):] in ("", ".", "%", " %", "%."):
            value = int(digits)
            if value <= 100:
                return Parsed(float(value), None, reader.BARE.name)
    asked = _asked(question) if question else None
    if "{" in raw:
        from_json = _from_json(raw, asked, truncated, seen)
        if from_json is not None:
            return from_json
    return _from_text(raw, asked, truncated, seen)


# What ``explain`` looks at: the prepared text and its reader (None when the text was empty).
Seen = tuple[str, "reader.Reader | None"]


def _from_text(raw: str, asked: events.Question | None, truncated: bool | None,
               seen: list[Seen] | None = None) -> Parsed:
    prepared = lexer.prepare(raw)
    if not prepared.strip():
        if seen is not None:
            seen.append((prepared, None))
        return Parsed(None, reader.NO_NUMBER, reader.NO_ANSWER_NO_NUMBER.name)
    kept: list[reader.Reader] | None = [] if seen is not None else None
    reading = reader.read(prepared, asked, truncated, kept)
    if seen is not None:
        seen.append((prepared, kept[0] if kept else None))
    return Parsed(reading.value, reading.reason, reading.rule)


def _checked(value: float, how: str) -> Parsed:
    try:
        value = float(value)
    except OverflowError:
        return Parsed(None, f"{reader.OUT_OF_RANGE} ({how} is a huge number)", JSON_OUT_OF_RANGE.name)
    if math.isnan(value) or not 0 <= value <= 100:
        return Parsed(None, f"{reader.OUT_OF_RANGE} ({how} {value:g})", JSON_OUT_OF_RANGE.name)
    if 0 < value < 1:
        return Parsed(None, f"{reader.SCALE_01} ({how} {value:g})", JSON_SCALE_01.name)
    return Parsed(value, None, JSON_KEY.name)


def _from_json(raw: str, asked: events.Question | None, truncated: bool | None,
               seen: list[Seen] | None = None) -> Parsed | None:
    """The answer of a JSON object in the reply (also inside a code fence), or None when
    there is no JSON object. An object without an answer key leaves the rest of the reply to
    be read as text."""
    start, end = raw.find("{"), raw.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(raw[start:end + 1])
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    lowered = {str(k).lower(): v for k, v in data.items()}
    for key in JSON_KEYS:
        if key not in lowered:
            continue
        value = lowered[key]
        if isinstance(value, bool):
            return Parsed(None, f"JSON key '{key}' holds a boolean, not a number", JSON_BAD_VALUE.name)
        if isinstance(value, (int, float)):
            return _checked(value, f"JSON '{key}'")
        if isinstance(value, str):
            if value.strip().lower() in ("yes", "no", "true", "false"):
                continue  # {"answer": "no", "probability": 2}: look for a number elsewhere
            inner = _from_text(value, None, False)
            if inner.ok:
                return Parsed(inner.value, None, JSON_STRING.name)
            return Parsed(None, f"JSON key '{key}': {inner.reason}", JSON_BAD_VALUE.name)
        return Parsed(None, f"JSON key '{key}' holds {type(value).__name__}, not a number", JSON_BAD_VALUE.name)
    rest = raw[:start] + "\n" + raw[end + 1:]
    if rest.strip():
        outside = _from_text(rest, asked, truncated, seen)
        if outside.ok:
            return outside
    return Parsed(None, JSON_NO_KEY, JSON_NO_KEY_RULE.name)
