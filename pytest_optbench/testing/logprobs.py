"""The fake API's token log-probabilities: what a server would return for a reply, in each
tokenizer's spelling (``TOKEN_STYLES``), in OpenAI's chat shape or the legacy completions
shape. Used by ``testing.FakeAPI``."""

from __future__ import annotations

import json
import math
from typing import Any

TOKEN_STYLES = ("whole", "digits", "gemma", "bpe", "sentencepiece", "bytes", "none")
# (token, logprob, [(alternative, logprob), ...]) per generated position
FakePosition = tuple[str, float, list[tuple[str, float]]]


FAKE_REASONING = "Judged from the scenario alone."


def as_json(text: str, reasoned: bool = False) -> dict[str, Any]:
    """The answer a schema-following server would send: the number of a bare-number reply
    ("65" -> 65, "0.25" -> 0.25, as a model that thinks in fractions writes it), after a
    reasoning where the schema asks for one."""
    stripped = text.strip().rstrip("%")
    try:
        number = float(stripped)
    except ValueError:
        answer = {"probability": 50} if not stripped.startswith("{") else json.loads(text)
    else:
        answer = {"probability": int(number) if number.is_integer() else number}
    return {"reasoning": FAKE_REASONING, **answer} if reasoned and "reasoning" not in answer else answer


def fake_positions(text: str, style: str = "whole") -> list[FakePosition]:
    """Token log-probabilities a server would return for ``text``: a bare number v gets
    P(v) = 0.6, P(v +- 5) = 0.15 each (where in 0-100) and 0.1 on "The"; "yes"/"no" get 0.8
    on that word, 0.15 on the other; anything else 0.9 on its first word. Tokenized by
    ``style`` (TOKEN_STYLES)."""
    bare = text.strip()
    if bare.lower() in ("yes", "no"):
        word, other = ("Yes", "No") if bare.lower() == "yes" else ("No", "Yes")
        return [(word, math.log(0.8), [(word, math.log(0.8)), (other, math.log(0.15)), ("I", math.log(0.05))])]
    if not (bare.isdigit() and int(bare) <= 100):
        first = bare.split()[0] if bare.split() else "I"
        return [(first, math.log(0.9), [(first, math.log(0.9)), ("5", math.log(0.05))])]
    value = int(bare)
    numbers = {value: 0.6}
    for other_value in (value + 5, value - 5):
        if 0 <= other_value <= 100:
            numbers[other_value] = 0.15
    if style in ("digits", "gemma", "bytes"):
        positions: list[FakePosition] = []
        if style == "gemma":  # a blank token first, then the digits
            positions.append((" ", math.log(0.9), [(" ", math.log(0.9)), (" The", math.log(0.1))]))
        positions += digit_positions(numbers, 0.1, style)
        return positions
    mark = {"bpe": "Ġ", "sentencepiece": "▁"}.get(style, "")
    alts = [(mark + str(v), math.log(p)) for v, p in sorted(numbers.items(), key=lambda kv: -kv[1])]
    alts.append((mark + "The", math.log(0.1)))
    return [(mark + str(value), math.log(0.6), alts)]


def digit_positions(numbers: dict[int, float], other: float, style: str, prefix: str = "") -> list[FakePosition]:
    """One digit per token along the most likely number; each position's alternatives are
    the next digit (or the end, a newline) of the numbers that share the prefix so far.
    ``prefix``: the digits the prompt already ends with (a completions request that extends
    the reply): the positions go on from there."""
    sharing = {v: p for v, p in numbers.items() if str(v).startswith(prefix)}
    if not sharing:  # no number goes on like this: the reply ends
        return [("\n", 0.0, [("\n", 0.0)])]
    best = str(max(sharing, key=lambda v: sharing[v]))
    numbers = sharing
    positions: list[FakePosition] = []
    for k in range(len(prefix), len(best) + 1):
        prefix = best[:k]
        nexts: dict[str, float] = {}
        for v, p in numbers.items():
            s = str(v)
            if s.startswith(prefix):
                key = s[k] if k < len(s) else "\n"
                nexts[key] = nexts.get(key, 0.0) + p
        total = sum(nexts.values()) + (other if k == 0 else 0.0)
        alts = [(t, math.log(p / total)) for t, p in sorted(nexts.items(), key=lambda kv: -kv[1])]
        if k == 0:
            alts.append(("The", math.log(other / total)))
        if style == "bytes":
            alts = [(f"<0x{ord(t):02X}>" if len(t) == 1 else t, lp) for t, lp in alts]
        if k == len(best):
            positions.append(("\n", dict(alts).get("\n", math.log(1.0)), alts))
            break
        token = f"<0x{ord(best[k]):02X}>" if style == "bytes" else best[k]
        positions.append((token, dict(alts)[token], alts))
    return positions


def display(token: str) -> str:
    if token.startswith("<0x") and token.endswith(">") and len(token) == 6:
        return chr(int(token[3:5], 16))
    return token.replace("Ġ", " ").replace("▁", " ")


def chat_entry(token: str, logprob: float, alts: list[tuple[str, float]], style: str) -> dict[str, Any]:
    def entry(text: str, lp: float) -> dict[str, Any]:
        raw = None if style in ("bpe", "sentencepiece") else list(display(text).encode())
        return {"token": text, "logprob": lp, "bytes": raw}
    return {**entry(token, logprob), "top_logprobs": [entry(t, lp) for t, lp in alts]}


def legacy_logprobs(positions: list[tuple[str, float, list[tuple[str, float]]]]) -> dict[str, Any]:
    offsets, at = [], 0
    for token, _lp, _alts in positions:
        offsets.append(at)
        at += len(display(token))
    return {"tokens": [t for t, _, _ in positions], "token_logprobs": [lp for _, lp, _ in positions],
            "top_logprobs": [dict(alts) for _, _, alts in positions], "text_offset": offsets}
