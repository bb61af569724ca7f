"""The checks every reply field passes before it is used, shared by the wire protocols.

A server's reply is read from its raw JSON (never from the SDK's objects, which are built
without validation) by one module per wire protocol: ``wire_openai`` (chat, completions,
Batch API objects and result lines) and ``wire_anthropic`` (Messages, Message Batches).
Each field is checked for its type, its size, its encoding (lone surrogates are repaired,
as in every answer text) and its range (a log-probability is a finite number <= 0; a token
count a whole number >= 0). A field that fails names itself in one line (``BadReply``),
e.g. ``choices[1].message.content is a number, not text``: the answer it belongs to fails
with that reason and its neighbours are kept. Metadata that only describes an answer (a
finish reason, a usage count, a batch's expiry) is read as unknown instead, and noted.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..answers import distribution
from ..text.display import one_line, well_formed

# Per position of a logprobs reply: alternatives accepted (OpenAI's cap is 20) and the
# positions kept (the answer is read at the first few; modes.LOGPROBS_MAX_TOKENS asks 8).
MAX_ALTERNATIVES = 100
MAX_POSITIONS = 64
MAX_TOKEN_CHARS = 1000
MAX_WORD = 64  # a finish reason, a status, a block type
MAX_COUNT = 10 ** 12  # a token count above this is not one
# Batch and file ids go into URL paths: letters, digits and a few separators only.
IDENTIFIER = re.compile(r"^[A-Za-z0-9_.:-]{1,200}$")
CUSTOM_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class BadReply(ValueError):
    """A reply field that fails its check: one line naming the field and what it holds."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message, 300))


def kind(value: Any) -> str:
    """What a JSON value is, in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def load(body: bytes | str, what: str = "the reply") -> Any:
    """A reply body as JSON; a body that is none is ``BadReply``."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError, UnicodeDecodeError):  # also a 5,000-digit integer
        start = body[:40] if isinstance(body, str) else body[:40].decode("utf-8", "replace")
        raise BadReply(f"{what} is not JSON (it starts {start!r})") from None


def mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise BadReply(f"{where} is {kind(value)}, not an object")
    return value


def listing(value: Any, where: str, *, empty: bool = True, most: int | None = None) -> list[Any]:
    if not isinstance(value, list):
        raise BadReply(f"{where} is {kind(value)}, not a list")
    if not empty and not value:
        raise BadReply(f"{where} is empty")
    if most is not None and len(value) > most:
        raise BadReply(f"{where} has {len(value):,} entries, more than {most:,}")
    return value


def text(value: Any, where: str, *, most: int | None = None) -> str:
    """A string, as valid Unicode (lone surrogates become U+FFFD)."""
    if not isinstance(value, str):
        raise BadReply(f"{where} is {kind(value)}, not text")
    if most is not None and len(value) > most:
        raise BadReply(f"{where} is {len(value):,} characters long, more than {most:,}")
    return well_formed(value)


def optional_text(value: Any, where: str) -> str | None:
    return None if value is None else text(value, where)


def word(value: Any) -> str | None:
    """A short status word (finish reason, batch status): anything else is unknown."""
    if isinstance(value, str) and 0 < len(value) <= MAX_WORD and value.isprintable():
        return value
    return None


def count(value: Any) -> int | None:
    """A token or request count: a whole number from 0 to 10^12 (12.0 is 12); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value <= MAX_COUNT else None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and 0 <= value <= MAX_COUNT:
        return int(value)
    return None


def counts(data: Any, names: Sequence[str], where: str) -> tuple[list[int], str | None]:
    """Counts ``names`` of an object (missing: 0): the counts, and what was wrong when a
    field is there but no count (its count is then 0)."""
    if data is None:
        return [0] * len(names), None
    if not isinstance(data, Mapping):
        return [0] * len(names), f"{where} is {kind(data)}, not an object"
    out, problem = [], None
    for name in names:
        value = data.get(name)
        number = count(value)
        if number is None and value is not None and problem is None:
            problem = f"{where}.{name} is {kind(value)} ({one_line(repr(value), 40)}), not a whole number"
        out.append(number or 0)
    return out, problem


def identifier(value: Any, where: str, pattern: re.Pattern[str] = IDENTIFIER) -> str:
    """An id the protocol puts into a URL path or a ledger: a short run of safe characters."""
    if not isinstance(value, str) or not pattern.match(value):
        shown = one_line(repr(value), 60)
        raise BadReply(f"{where} is {shown}, not an id")
    return value


def timestamp(value: Any) -> float | None:
    """Unix seconds (a number) or an RFC 3339 time (text): None for anything else."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, float):
        return value if math.isfinite(value) and 0 < value < 1e11 else None
    if isinstance(value, int):
        return float(value) if 0 < value < 10 ** 11 else None
    if isinstance(value, str) and len(value) <= 64:
        try:
            return datetime.fromisoformat(value).timestamp()
        except (ValueError, OverflowError, OSError):
            return None
    return None


# --------------------------------------------------------------------------- log-probabilities


def logprob(value: Any, where: str) -> float:
    try:
        return distribution.checked_logprob(value)
    except ValueError as exc:
        raise BadReply(f"{where} {exc}") from None


def token_text(token: Any, raw: Any, where: str) -> str:
    """A token's text (from its ``bytes`` where they decode), checked."""
    spelled = text(token, f"{where}.token", most=MAX_TOKEN_CHARS)
    if raw is None:
        return distribution.token_text(spelled, None)
    values = listing(raw, f"{where}.bytes", most=4 * MAX_TOKEN_CHARS)
    if not all(isinstance(b, int) and not isinstance(b, bool) and 0 <= b < 256 for b in values):
        raise BadReply(f"{where}.bytes holds something that is not a byte (0-255)")
    return well_formed(distribution.token_text(spelled, values))


def chat_positions(content: Any, where: str) -> list[distribution.Position]:
    """OpenAI chat ``logprobs.content`` (also llama.cpp's and vLLM's): each entry
    ``{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}``."""
    if content is None:
        return []
    out = []
    for index, entry in enumerate(listing(content, where)[:MAX_POSITIONS]):
        at = f"{where}[{index}]"
        entry = mapping(entry, at)
        top = []
        for number, alt in enumerate(listing(entry.get("top_logprobs") or [], f"{at}.top_logprobs",
                                             most=MAX_ALTERNATIVES)):
            alt_at = f"{at}.top_logprobs[{number}]"
            alt = mapping(alt, alt_at)
            top.append((token_text(alt.get("token"), alt.get("bytes"), alt_at), logprob(alt.get("logprob"),
                                                                                          f"{alt_at}.logprob")))
        out.append(distribution.Position(token_text(entry.get("token"), entry.get("bytes"), at),
                                         logprob(entry.get("logprob"), f"{at}.logprob"), tuple(top)))
    return out


def legacy_positions(data: Mapping[str, Any], where: str) -> list[distribution.Position]:
    """OpenAI legacy completions ``logprobs``: parallel lists ``tokens``, ``token_logprobs``
    (null for a prompt token) and ``top_logprobs`` (a {token: logprob} object, or null)."""
    tokens = listing(data.get("tokens") or [], f"{where}.tokens")[:MAX_POSITIONS]
    values = listing(data.get("token_logprobs") or [], f"{where}.token_logprobs")
    tops = listing(data.get("top_logprobs") or [], f"{where}.top_logprobs")
    out = []
    for i, token in enumerate(tokens):
        value = values[i] if i < len(values) else None
        lp = -math.inf if value is None else logprob(value, f"{where}.token_logprobs[{i}]")
        top_at = f"{where}.top_logprobs[{i}]"
        alternatives = mapping(tops[i], top_at) if i < len(tops) and tops[i] is not None else {}
        if len(alternatives) > MAX_ALTERNATIVES:
            raise BadReply(f"{top_at} has {len(alternatives):,} entries, more than {MAX_ALTERNATIVES}")
        top = tuple((text(k, f"{top_at} key", most=MAX_TOKEN_CHARS), logprob(v, f"{top_at}[{k!r}]"))
                    for k, v in alternatives.items())
        out.append(distribution.Position(text(token, f"{where}.tokens[{i}]", most=MAX_TOKEN_CHARS), lp, top))
    return out


# --------------------------------------------------------------------------- what a reply holds


@dataclass
class Choice:
    """One answer of a reply: its text, or why it has none (``problem``)."""

    text: str | None = None
    problem: str | None = None
    finish_reason: str | None = None
    positions: list[distribution.Position] | None = None  # logprobs mode: None when none were sent


@dataclass
class Reply:
    """A reply read and checked: its answers, in order, and its usage counts."""

    choices: list[Choice] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    usage_problem: str | None = None  # a usage count the server sent that is no count
    # Who served it, where the reply says: the model id (a dated snapshot such as
    # "gpt-4.1-mini-2025-04-14") and OpenAI's system_fingerprint; one line, bounded (``served``).
    served_model: str | None = None
    system_fingerprint: str | None = None

    def good(self) -> list[Choice]:
        return [c for c in self.choices if c.problem is None]

    def problems(self) -> list[str]:
        return [c.problem for c in self.choices if c.problem is not None]


def choices(entries: list[Any], read: Any, where: str = "choices") -> list[Choice]:
    """Each entry read by ``read(entry, where)``; one that fails is that answer's problem."""
    out = []
    for index, entry in enumerate(entries):
        try:
            out.append(read(entry, f"{where}[{index}]"))
        except BadReply as exc:
            out.append(Choice(problem=str(exc)))
    return out
