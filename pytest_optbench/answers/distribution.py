"""Token log-probabilities -> the answer's distribution on 0-100, or why there is none.

Pure (no SDK, no pytest). The server returns, for each generated token, its log-probability
and the ``top_logprobs`` alternatives at that position. The answer is read at the first
position that is not blank: a number for numeric items (its expected value and its
distribution), P(yes) for yes/no items. Rules (docs/answer-extraction.md, "Log-probability
mode"):

* **Spelling.** A token is read after undoing the tokenizer's markers (``Ġ`` and ``▁`` are
  spaces, ``Ċ`` a newline) and, when the server sends them, from its ``bytes``; leading
  spaces do not matter ("65", " 65", "Ġ65", "▁65" are the same answer).
* **Blank tokens first.** When the generated token is blank (Gemma writes " " and then the
  digits), numbers among its alternatives count with their own probability and the rest of
  the answer is read at the next position, weighted by the blank's probability.
* **Whole-number tokens** (OpenAI's and Llama 3's tokenizers have one token per number up
  to 999): a token "65" is the answer 65, unless the generated path goes on with digits.
* **Digit tokens** (SmolLM2, Gemma, Llama 2, Mistral write "6", "5"): the leading digit's
  distribution is exact; the continuation (more digits, or the number's end) is observed
  only after the generated leading digit. An alternative leading digit is given the same
  continuation (the model's choice of "round to 5 or 10" and of length is taken to be the
  same whatever the leading digit), restricted to values <= 100. Each continuation
  position is renormalised over its digits and its end (any token that is not a digit).
* **Out of range, decimals, fractions.** Values above 100 are not answers (their mass is
  not counted). A decimal point ends the number (65.5 -> 65), except "0." followed by a
  digit on the generated path: a 0-1 scale answer, which is "no answer" as in text mode.
  A leading "0" that is not the generated token is not counted (on the models we met it
  mostly starts "0.5", a 0-1 answer, whose continuation is unseen). After the digits only a
  clear end counts as the number's end (nothing, a blank, punctuation, "%", "percent", a
  special token); a word, "/" or ":" ("1 in 4", "1/4"), or a number after a space may make
  the digits part of something else, and that share is lost, not read as the number.
* **Mass.** ``mass`` is the share of the first answer position's probability that the
  reading accounts for (numbers 0-100, or yes and no). Below ``MIN_MASS`` the result is "no
  answer": the model mostly meant to say something else (a word, a sentence, a refusal).
  The distribution and the expected value are normalised over the mass accounted for.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..text.display import well_formed

# Below this share of the answer position's probability on numbers (or on yes and no), the
# model did not answer with one: "no answer". Half: the reading then speaks for most of
# what the model would say, and an answer still counts when it competes with one other way
# of starting the reply.
MIN_MASS = 0.5
MAX_VALUE = 100

LOW_MASS = "too little probability on numbers"
LOW_MASS_YES_NO = "too little probability on yes and no"
NO_POSITIONS = "no log-probabilities in the response"
SCALE_01 = "the answer is on a 0-1 scale (0.xx)"
FRACTION = "the answer's digits go on as something else (1/4, 1 in 4, 60-70), not a percentage"
DIGITS_NOT_FOLLOWED = ("the tokenizer writes numbers digit by digit and this endpoint cannot extend the reply, "
                       "so the first digit's probabilities are all there is: not a distribution over 0-100")
SPREAD = "the model's numbers spread over the scale: their mean is no answer"
# A number's distribution whose standard deviation is above this (pp) has no answer: its mean
# is set by the scale's ends, not by the question (a flat distribution on 0-100 has sd 29).
MAX_SPREAD = 20.0
# Digit tokenizers on a completions endpoint: at most this many follow-up requests per prompt
# (each reads one position after a prefix: "1" -> 1, 10-19, 100), none for a prefix holding
# less than MIN_PROBE_SHARE of the answer's probability.
MAX_PROBES = 12
MIN_PROBE_SHARE = 0.01

# Yes and no in the ten suite languages (lower case, as one token may spell them).
YES_WORDS = frozenset({"yes", "y", "ja", "oui", "sí", "si", "да", "हाँ", "हां", "نعم", "是", "是的", "对",
                       "はい", "네", "예"})
NO_WORDS = frozenset({"no", "n", "nein", "non", "нет", "नहीं", "لا", "否", "不", "不是", "いいえ", "아니요",
                      "아니오", "아니"})
_MARKERS = str.maketrans({"Ġ": " ", "▁": " ", "Ċ": "\n", "ĉ": "\t"})
_TRAILING = " \t\n.,:;!?*\"'`)]}。．！？、"
_FRACTION = ("/", ":", "⁄")
# After a number's digits, what clearly ends it (anything else may make it part of "1 in 4").
_END_CHARS = frozenset("%％.,;!?)]}\"'`*<。．、，！？")
_PERCENT_WORDS = ("percent", "per cent", "pct", "prozent", "pour cent", "por ciento", "por cento",
                  "процент", "प्रतिशत", "بالمئة", "في المئة", "퍼센트", "パーセント")


# Prefix of a followed number -> the next position's alternatives, (token, logprob) pairs.
Probes = Mapping[str, Sequence[tuple[str, float]]]


@dataclass(frozen=True)
class Position:
    """One generated token: its text, log-probability and the alternatives at its position
    (``top``: (token, logprob) pairs; the generated token may or may not be among them)."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()

    def generated(self) -> float:
        """The generated token's probability, on the same scale as ``alternatives``."""
        return self.alternatives().get(spelling(self.token), 0.0)

    def alternatives(self) -> dict[str, float]:
        """Normalised spelling -> probability at this position (same spellings add up)."""
        out: dict[str, float] = {}
        seen: set[str] = set()
        for token, logprob in ((self.token, self.logprob), *self.top):
            if token in seen:
                continue
            seen.add(token)
            p = _prob(logprob)
            if p > 0:
                text = spelling(token)
                out[text] = out.get(text, 0.0) + p
        total = sum(out.values())
        if total > 1.0:  # rounding, or a server that sends a token twice in different spellings
            out = {k: v / total for k, v in out.items()}
        return out


def _prob(logprob: float) -> float:
    try:
        value = math.exp(float(logprob))
    except (OverflowError, ValueError, TypeError):
        return 0.0
    return value if math.isfinite(value) else 0.0


def spelling(token: str) -> str:
    """A token's text with the tokenizer's space and newline markers undone."""
    return unicodedata.normalize("NFKC", str(token).translate(_MARKERS))


def _digits(text: str) -> tuple[str, bool] | None:
    """A token's leading digits and whether the number ends inside the token ("65%", "5.");
    None when it does not start with a digit (after spaces)."""
    body = text.lstrip()
    run = 0
    while run < len(body) and body[run].isascii() and body[run].isdigit():
        run += 1
    if run == 0:
        return None
    return body[:run], run < len(body)


def _blank(text: str) -> bool:
    return not text.strip()


def _word(text: str) -> str:
    return text.strip().strip(_TRAILING).lower()


@dataclass
class Reading:
    """``value`` on 0-100 when there is an answer; ``reason`` when not. ``mass`` is the
    share of the answer position's probability accounted for; ``distribution`` maps each
    value (numbers) or "yes"/"no" to its normalised probability."""

    value: float | None
    reason: str | None = None
    mass: float = 0.0
    distribution: dict[str, float] = field(default_factory=dict)


def read(positions: Sequence[Position], *, yes_no: bool = False, min_mass: float = MIN_MASS,
         probes: Probes | None = None) -> Reading:
    """The answer of a reply's log-probabilities: the expected number, or with ``yes_no``
    100 * P(yes) (a reply that answers with a number instead is read as a number).
    ``probes``: the next position after each followed prefix of the number (``follow``);
    without them a tokenizer that splits digits gives no numeric answer."""
    if not positions:
        return Reading(None, NO_POSITIONS)
    split = splits_digits(positions)
    numbers = _number_mass(positions) if not split else _leading_mass(positions)
    if yes_no:
        yes, no = _yes_no_mass(positions)
        # A reply with neither yes, no nor a number (Gemma through a chat template it does not
        # know echoes the question) is said to lack yes and no, what its question asked for.
        if yes + no >= min_mass or yes + no >= sum(numbers.values()):
            mass = yes + no
            if mass < min_mass:
                shares = _rounded({"yes": yes / mass, "no": no / mass}) if mass > 0 else {}
                return Reading(None, f"{LOW_MASS_YES_NO} ({mass:.2f} < {min_mass:g})", mass, shares)
            # 100 * (yes / mass): a share of at most 1, so the value never rounds above 100.
            return Reading(100.0 * (yes / mass), None, mass, _rounded({"yes": yes / mass, "no": no / mass}))
    if (shape := _path_shape(positions)) is not None:
        return Reading(None, shape, 0.0)
    if split:
        if sum(numbers.values()) < min_mass:  # prose: no number to follow, whatever the tokenizer
            return Reading(None, f"{LOW_MASS} ({sum(numbers.values()):.2f} < {min_mass:g})", sum(numbers.values()))
        if probes is None:
            return Reading(None, DIGITS_NOT_FOLLOWED, 0.0)
        numbers = walk(positions, probes).values
    mass = sum(numbers.values())
    if mass <= 0:
        return Reading(None, f"{LOW_MASS} (0.00 < {min_mass:g})", 0.0)
    distribution = {v: p / mass for v, p in numbers.items()}
    shown = _rounded({str(v): p for v, p in sorted(distribution.items())})
    if mass < min_mass:
        return Reading(None, f"{LOW_MASS} ({mass:.2f} < {min_mass:g})", mass, shown)
    value = sum(v * p for v, p in distribution.items())
    spread = math.sqrt(max(0.0, sum((v - value) ** 2 * p for v, p in distribution.items())))
    if spread > MAX_SPREAD:
        return Reading(None, f"{SPREAD} (sd {spread:.0f} > {MAX_SPREAD:g} pp)", mass, shown)
    return Reading(min(float(MAX_VALUE), max(0.0, value)), None, mass, shown)


# --------------------------------------------------------------------------- digit tokenizers


def splits_digits(positions: Sequence[Position]) -> bool:
    """Does the tokenizer write numbers digit by digit? Read from the reply itself: a token
    of two or more digits where the answer starts (among the alternatives too) says no; the
    generated number going on digit after digit, or only single digits among the
    alternatives, says yes. No number at all: no (there is nothing to follow)."""
    starts = list(_answer_start(positions))
    singles: set[str] = set()
    for index, _weight in starts:
        for text in positions[index].alternatives():
            run = _digits(text)
            if run is not None and len(run[0]) >= 2:
                return False
            if run is not None:
                singles.add(run[0])
    index = starts[-1][0]
    run = _digits(spelling(positions[index].token))
    if run is not None and not run[1] and index + 1 < len(positions) \
            and _after_digits(spelling(positions[index + 1].token)) == "digit":
        return True
    return len(singles) >= 2


def _leading_mass(positions: Sequence[Position]) -> dict[int, float]:
    """Leading digit -> probability where the answer starts (only to tell a number from prose)."""
    out: dict[int, float] = {}
    for index, weight in _answer_start(positions):
        for text, p in positions[index].alternatives().items():
            run = _digits(text)
            if run is not None:
                out[int(run[0][:1])] = out.get(int(run[0][:1]), 0.0) + weight * p
    return out


def number_lead(positions: Sequence[Position]) -> str:
    """The text the generated reply writes before its number's first digit (" " for "Answer: 65"):
    a followed prefix is sent after it."""
    lead = ""
    for index, _weight in _answer_start(positions):
        text = spelling(positions[index].token)
        if _blank(text):
            lead += text
            continue
        body = text.lstrip()
        return lead + text[: len(text) - len(body)]
    return lead


@dataclass
class Walk:
    """The number distribution as far as it is known: ``values`` (value -> probability, not
    normalised), and the prefixes whose next position is still unknown, most likely first."""

    values: dict[int, float]
    unknown: list[tuple[float, str]]


def walk(positions: Sequence[Position], probes: Probes) -> Walk:
    """Digit tokenizers: the distribution over 0-100, followed position by position. The
    leading digit comes from where the answer starts; the position after a prefix from the
    generated path (when the path wrote that prefix) or from a probe (the prompt extended by
    the prefix, ``follow``). A prefix nobody asked about keeps its probability out of the
    reading (lost); two digits other than "10" end the number (a third makes it above 100)."""
    known: dict[str, dict[str, float]] = {}
    for prefix, alternatives in _path_prefixes(positions):
        known.setdefault(prefix, alternatives)
    for prefix, top in probes.items():
        known[prefix] = Position(top[0][0], top[0][1], tuple(top)).alternatives() if top else {}
    values: dict[int, float] = {}
    unknown: list[tuple[float, str]] = []
    pending: list[tuple[float, str]] = []
    for index, weight in _answer_start(positions):
        for text, p in positions[index].alternatives().items():
            run = _digits(text)
            if run is not None:
                _place(run[0], run[1], weight * p, values, pending)
    while pending:
        mass, prefix = pending.pop()
        if prefix not in known:
            unknown.append((mass, prefix))
            continue
        alternatives = known[prefix]
        if not alternatives:  # the server ended the reply there
            _add(values, int(prefix), mass)
            continue
        for text, q in alternatives.items():
            kind = _after_digits(text)
            if kind == "digit" and (run := _digits(text)) is not None:
                _place(prefix + run[0], run[1], mass * q, values, pending)
            elif kind == "end" and not (prefix == "0" and text.strip()[:1] in ".,"):
                _add(values, int(prefix), mass * q)
            # else: "1/4", "1 in 4", "0.5": not a percentage, its mass is lost
    unknown.sort(key=lambda entry: -entry[0])
    return Walk(values, unknown)


def _place(prefix: str, ended: bool, mass: float, values: dict[int, float], pending: list[tuple[float, str]]) -> None:
    """A prefix reached with ``mass``: a value when it ends here (in its token, or by
    length), lost when it cannot be a number on 0-100, else still to follow."""
    if (prefix.startswith("0") and len(prefix) > 1) or len(prefix) > 3 or int(prefix) > MAX_VALUE:
        return
    if ended or len(prefix) == 3 or (len(prefix) == 2 and prefix != "10"):
        _add(values, int(prefix), mass)
    else:
        pending.append((mass, prefix))


def _add(values: dict[int, float], value: int, mass: float) -> None:
    values[value] = values.get(value, 0.0) + mass


def _path_prefixes(positions: Sequence[Position]) -> list[tuple[str, dict[str, float]]]:
    """(prefix, alternatives of the position after it) along the generated number."""
    out: list[tuple[str, dict[str, float]]] = []
    starts = list(_answer_start(positions))
    index, prefix = starts[-1][0], ""
    while index < len(positions):
        text = spelling(positions[index].token)
        run = _digits(text) if not (prefix and text[:1].isspace()) else None  # " 5" after "6": another number
        if run is None:
            break
        prefix += run[0]
        if run[1] or index + 1 >= len(positions):
            break
        out.append((prefix, positions[index + 1].alternatives()))
        index += 1
    return out


def needs_follow(positions: Sequence[Position], min_mass: float = MIN_MASS) -> bool:
    """A numeric reply worth following position by position: a digit tokenizer, a reply that
    starts as a number on 0-100 (not "0.5" or "1/4"), and enough probability on numbers."""
    return bool(positions) and splits_digits(positions) and _path_shape(positions) is None \
        and sum(_leading_mass(positions).values()) >= min_mass


def next_probe(positions: Sequence[Position], probes: Probes,
               min_share: float = MIN_PROBE_SHARE) -> str | None:
    """The most likely prefix whose next position is unknown, when it holds at least
    ``min_share`` of the answer's probability (else None: the rest changes little)."""
    unknown = walk(positions, probes).unknown
    return unknown[0][1] if unknown and unknown[0][0] >= min_share else None


def _rounded(dist: Mapping[str, float]) -> dict[str, float]:
    return {k: round(v, 4) for k, v in dist.items() if v >= 5e-5}


def _answer_start(positions: Sequence[Position]) -> Iterable[tuple[int, float]]:
    """(index, weight) of each position where the answer may start: blank generated tokens
    pass their probability on to the next position."""
    weight = 1.0
    for index, position in enumerate(positions):
        yield index, weight
        if not _blank(spelling(position.token)):
            return
        weight *= position.generated()


def _yes_no_mass(positions: Sequence[Position]) -> tuple[float, float]:
    yes = no = 0.0
    for index, weight in _answer_start(positions):
        for text, p in positions[index].alternatives().items():
            word = _word(text)
            if word in YES_WORDS:
                yes += weight * p
            elif word in NO_WORDS:
                no += weight * p
    return yes, no


def _number_mass(positions: Sequence[Position]) -> dict[int, float]:
    """Value -> probability (not normalised) over the answer start positions."""
    out: dict[int, float] = {}
    for index, weight in _answer_start(positions):
        position = positions[index]
        generated = spelling(position.token)
        gen_digits = _digits(generated)
        shared = _continuation(positions, index + 1) if gen_digits and not gen_digits[1] else {"": 1.0}
        for text, p in position.alternatives().items():
            digits = _digits(text)
            if digits is None:
                continue
            head, ended = digits
            if head == "0" and not ended and text != generated:
                continue  # "0" then unseen: mostly "0.5" (a 0-1 answer), rarely 0
            follow = {"": 1.0} if ended else shared
            for value, q in _values(head, follow, shared=text != generated).items():
                out[value] = out.get(value, 0.0) + weight * p * q
    return out


def _values(head: str, continuation: Mapping[str, float], shared: bool) -> dict[int, float]:
    """The values ``head`` + each continuation makes, above 100 left out. A ``shared``
    continuation (observed after another leading token) is renormalised over what is valid
    for this head; the generated head's own continuation loses the invalid share."""
    out: dict[int, float] = {}
    for suffix, q in continuation.items():
        text = (head + suffix).lstrip("0") or "0"
        if len(text) > 3:
            continue
        value = int(text)
        if value <= MAX_VALUE:
            out[value] = out.get(value, 0.0) + q
    total = sum(out.values())
    if shared and total > 0:
        out = {v: q / total for v, q in out.items()}
    return out


def _continuation(positions: Sequence[Position], index: int, depth: int = 0) -> dict[str, float]:
    """Suffix -> probability of the digits that follow a number at ``index`` ("" = it ends),
    renormalised over digits and end at each position; followed along the generated path
    and shared with the alternatives (module doc)."""
    if index >= len(positions) or depth >= 3:
        return {"": 1.0}
    position = positions[index]
    alternatives = position.alternatives()
    digit_p: dict[str, float] = {}
    end = lost = 0.0
    for text, p in alternatives.items():
        kind = _after_digits(text)
        run = _digits(text)
        if kind == "digit" and run is not None:
            digit_p[run[0]] = digit_p.get(run[0], 0.0) + p
        elif kind == "end":
            end += p
        else:  # "1 in 4", "1/4", "6 5": the number may go on as something else (its mass is lost)
            lost += p
    total = end + lost + sum(digit_p.values())
    if total <= lost:
        return {"": 1.0} if not lost else {}
    generated = spelling(position.token)
    gen = _digits(generated) if not generated[:1].isspace() else None
    deeper = _continuation(positions, index + 1, depth + 1) if gen and not gen[1] else {"": 1.0}
    out: dict[str, float] = {"": end / total} if end else {}
    for head, p in digit_p.items():
        # Only the generated digit's continuation was observed; another one ends here (a
        # third digit is rare below 100: "10" -> "100" is the generated path's case).
        follow = deeper if gen is not None and head == gen[0] else {"": 1.0}
        for suffix, q in follow.items():
            key = head + suffix
            out[key] = out.get(key, 0.0) + p / total * q
    return out


def _after_digits(text: str) -> str:
    """What a token after a number's digits does: "digit" (the number goes on), "end" (a
    clear end: nothing, a blank, punctuation, "%", "percent", a special token such as
    "<eos>"), or "other" (a word, a fraction bar, a new number after a space)."""
    if _digits(text) is not None and not text[:1].isspace():
        return "digit"
    body = text.strip()
    if not body or body[0] in _END_CHARS:
        return "end"
    if body.lower().startswith(_PERCENT_WORDS):
        return "end"
    return "other"


def _path_shape(positions: Sequence[Position]) -> str | None:
    """The generated path is a 0-1 decimal ("0.25"), or its digits go on as something else
    ("1/4", "1 in 4", "60-70"): then the model's answer is not a number on 0-100, whatever
    the alternatives say."""
    texts = [spelling(p.token) for p in positions]
    joined = "".join(texts[:8]).lstrip()
    if len(joined) >= 3 and joined[0] == "0" and joined[1] in ".," and joined[2].isdigit():
        return SCALE_01
    index = next((i for i, t in enumerate(texts) if not _blank(t)), None)
    if index is None or _digits(texts[index]) is None:
        return None
    run = _digits(texts[index])
    while run is not None and not run[1] and index + 1 < len(texts):
        index += 1
        if _after_digits(texts[index]) == "digit":
            run = _digits(texts[index])
            continue
        return FRACTION if _after_digits(texts[index]) == "other" else None
    return None


# --------------------------------------------------------------------------- wire shapes


def positions_from_chat(content: Any) -> list[Position]:
    """OpenAI chat ``logprobs.content`` (also llama.cpp's and vLLM's, and llama.cpp's
    completions): a list of {token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}."""
    out = []
    for entry in content or ():
        token = _token_text(_get(entry, "token"), _get(entry, "bytes"))
        logprob = _number(_get(entry, "logprob"))
        top = tuple((_token_text(_get(alt, "token"), _get(alt, "bytes")), _number(_get(alt, "logprob")))
                    for alt in (_get(entry, "top_logprobs") or ()))
        out.append(Position(token, logprob, top))
    return out


def positions_from_completion(logprobs: Any) -> list[Position]:
    """OpenAI legacy completions ``logprobs``: parallel lists ``tokens``, ``token_logprobs``
    and ``top_logprobs`` (a list of {token: logprob}); llama.cpp sends the chat shape
    (``content``) here instead, which is read as such."""
    content = _get(logprobs, "content")
    if content:
        return positions_from_chat(content)
    tokens = _get(logprobs, "tokens") or []
    values = _get(logprobs, "token_logprobs") or []
    tops = _get(logprobs, "top_logprobs") or []
    out = []
    for i, token in enumerate(tokens):
        top = tops[i] if i < len(tops) and isinstance(tops[i], Mapping) else {}
        out.append(Position(str(token), _number(values[i] if i < len(values) else None),
                            tuple((str(k), _number(v)) for k, v in top.items())))
    return out


def _get(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    value = getattr(obj, name, None)
    if value is None:  # pydantic keeps unknown fields in model_extra
        extra = getattr(obj, "model_extra", None)
        if isinstance(extra, Mapping):
            value = extra.get(name)
    return value


def _number(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return -math.inf
    return number if not math.isnan(number) else -math.inf


# A log-probability above 0 is a probability above 1: no model's. Servers round, so up to
# this much above 0 is read as 0 (probability 1).
LOGPROB_SLACK = 1e-6


class BadLogprob(ValueError):
    """A log-probability (or a model's position list) that is none: what is wrong with it."""


def checked_logprob(value: Any) -> float:
    """A log-probability as a server or a model must give it: a finite number <= 0 (a
    rounding error above 0 is 0); ValueError saying what is wrong otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadLogprob(f"is {_kind(value)}, not a log-probability")
    try:
        number = float(value)
    except OverflowError:  # an integer of 310+ digits
        raise BadLogprob("is a number too large for a log-probability") from None
    if not math.isfinite(number):
        raise BadLogprob(f"is {number}, not a finite log-probability")
    if number > LOGPROB_SLACK:
        raise BadLogprob(f"is {number:g}, above 0 (a probability above 1)")
    return min(number, 0.0)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return "text" if isinstance(value, str) else f"a {type(value).__name__}"


def checked(positions: Any, most: int = 64) -> list[Position]:
    """A model's own ``logprobs(prompt)`` result, checked like a server's: a list of
    ``Position`` whose tokens are text and whose log-probabilities are finite and <= 0; at
    most ``most`` positions are kept. ValueError naming the first problem."""
    if isinstance(positions, (str, bytes)) or not isinstance(positions, Sequence):
        raise BadLogprob(f"logprobs() returned {type(positions).__name__}, not a list of Position")
    out = []
    for index, position in enumerate(list(positions[:most])):
        if not isinstance(position, Position) or not isinstance(position.token, str):
            raise BadLogprob(f"logprobs() position {index} is not a Position with a text token")
        try:
            top = tuple((well_formed(str(t)), checked_logprob(lp)) for t, lp in position.top)
            out.append(Position(well_formed(position.token), checked_logprob(position.logprob), top))
        except (ValueError, TypeError) as exc:
            raise BadLogprob(f"logprobs() position {index}: a log-probability {exc}") from None
    return out


def token_text(token: Any, raw: Any) -> str:
    """The token's text, from its bytes where they decode (public for the wire readers)."""
    return _token_text(token, raw)


def _token_text(token: Any, raw: Any) -> str:
    """The token's text, from its bytes where they decode (a token may be a byte fallback
    such as "<0x36>", or a partial character)."""
    if isinstance(raw, list) and raw and all(isinstance(b, int) and 0 <= b < 256 for b in raw):
        try:
            return bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            pass
    text = str(token) if token is not None else ""
    if text.startswith("<0x") and text.endswith(">") and len(text) == 6:  # SentencePiece byte fallback
        try:
            return bytes([int(text[3:5], 16)]).decode("latin-1")
        except ValueError:
            return text
    return text


def to_json(positions: Sequence[Position]) -> list[Any]:
    """Compact form for the store: [[token, logprob, [[alt, logprob], ...]], ...]."""
    return [[p.token, _finite(p.logprob), [[t, _finite(lp)] for t, lp in p.top]] for p in positions]


def _finite(value: float) -> float | None:
    return round(value, 6) if math.isfinite(value) else None


def from_json(data: Any) -> list[Position]:
    """The inverse of ``to_json``; malformed entries are skipped."""
    out = []
    for entry in data if isinstance(data, list) else ():
        if not isinstance(entry, list) or len(entry) != 3 or not isinstance(entry[2], list):
            continue
        top = tuple((str(alt[0]), _number(alt[1])) for alt in entry[2] if isinstance(alt, list) and len(alt) == 2)
        out.append(Position(str(entry[0]), _number(entry[1]), top))
    return out


def stored(positions_json: Any, probes: Probes | None, lead: str = "") -> Any:
    """What the store keeps of a logprobs reply: the positions, and the probes when a number
    was followed ({"positions": [...], "probes": {prefix: [[token, logprob], ...]}, "lead": " "})."""
    if probes is None:
        return positions_json
    return {"positions": positions_json, "lead": lead,
            "probes": {k: [[t, _finite(lp)] for t, lp in v] for k, v in probes.items()}}


def from_stored(data: Any) -> tuple[list[Position], dict[str, list[tuple[str, float]]] | None]:
    """The inverse of ``stored``: positions, and the probes (None when the number was not followed)."""
    if not isinstance(data, Mapping):
        return from_json(data), None
    probes: dict[str, list[tuple[str, float]]] = {}
    raw = data.get("probes")
    for prefix, top in (raw.items() if isinstance(raw, Mapping) else ()):
        if isinstance(prefix, str) and prefix.isascii() and prefix.isdigit() and isinstance(top, list):
            probes[prefix] = [(str(alt[0]), _number(alt[1])) for alt in top if isinstance(alt, list) and len(alt) == 2]
    return from_json(data.get("positions")), probes


def top_tokens(positions: Sequence[Position], count: int = 5) -> str:
    """A short human-readable view of the answer position, for reports and hand checks."""
    for index, _weight in _answer_start(positions):
        if index == len(positions) - 1 or not _blank(spelling(positions[index].token)):
            alts = sorted(positions[index].alternatives().items(), key=lambda kv: -kv[1])[:count]
            return ", ".join(f"{k!r}:{v:.2f}" for k, v in alts)
    return ""
