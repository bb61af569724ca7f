"""The elicitation modes: how an answer is asked for, and how its reply is read.

Pure. ``text``: the reply is prose, read by the answer extractor (parse.py). ``json``: the
server is asked for JSON that fits ``REASONED_SCHEMA`` on a chat endpoint (a short reasoning,
then the number) or ``ANSWER_SCHEMA`` through the completions scaffold (OpenAI-style
``response_format``; the matching grammar on llama.cpp, regular expression on vLLM, neither
with room for free whitespace; a forced tool on Anthropic) and the reply is read strictly as
that object, on the scale the schema states (``json_number``); a reply that is not such an
object (a server that ignored the schema and wrote prose) is read by the text extractor
instead, and says so. ``logprobs``:
one greedy request per prompt, the answer read from the answer token's distribution
(distribution.py). Each mode is a different elicitation: a gate compares like with like.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, NamedTuple

TEXT, JSON, LOGPROBS = "text", "json", "logprobs"
MODES = (TEXT, JSON, LOGPROBS)
# The store key's mode for text answers since before modes existed: text answers keep
# their keys, so a store written by an older release still answers a text run.
STORE_MODES = {TEXT: "sample", JSON: "json", LOGPROBS: "logprobs"}

ANSWER_FIELD = "probability"
# One number with the scale the schema states: a percentage, or a fraction below 1 written as
# a decimal. Small models write 0-1 decimals ("0.25", "0.9999") where the prompt says percent;
# an integer-only schema cut them to their leading "0" (recorded as 0 %), so the number type
# takes both, and the reading (json_value) tells them apart by the value: 0.25 is 25 %, 25 is
# 25 %, and exactly 1 (1 % or certainty?) is no answer rather than a guess.
SCALE_NOTE = ("The probability in percent, from 0 to 100 (25 means 25%). A decimal below 1 is read as a "
              "fraction (0.25 means 25%); exactly 1 is ambiguous (1% or certain?) and is not counted.")
# Chat endpoints ask for the reasoning first, then the number (REASONED_SCHEMA). A chat model
# that would rather write prose wrote, into a bare object, a number unrelated to what its prose
# says (SmolLM2: 0.0000 or 0.0001 in 89 of 109 replies whose prose said 100 or 10); with its
# reasoning first, the number follows its own words (43 of 45). The completions scaffold keeps
# the bare object its few-shot examples show (ANSWER_SCHEMA): there the number was already the
# model's own (64 of 64, 45 of 47).
REASONING_FIELD = "reasoning"
REASONING_CHARS = 200
REASONING_NOTE = "One or two short sentences on how likely it is, written before the probability."
_NUMBER_SCHEMA: dict[str, Any] = {"type": "number", "minimum": 0, "maximum": 100, "description": SCALE_NOTE}
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {ANSWER_FIELD: _NUMBER_SCHEMA},
    "required": [ANSWER_FIELD],
    "additionalProperties": False,
}
REASONED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {REASONING_FIELD: {"type": "string", "description": REASONING_NOTE}, ANSWER_FIELD: _NUMBER_SCHEMA},
    "required": [REASONING_FIELD, ANSWER_FIELD],
    "additionalProperties": False,
}
SCHEMA_NAME = "answer"
# The same objects as grammars with no free whitespace (llama.cpp's GBNF ``grammar``) and as
# regular expressions (vLLM's ``structured_outputs.regex``, ``guided_regex`` before v0.12). A
# JSON schema's grammar lets a model write whitespace between every token (llama.cpp allows a
# newline and 20 blanks at each of four places: Gemma filled 48 tokens with "{\n \t \t ..."),
# so where the server takes a grammar it gets one of these, and the model chooses only the
# reasoning's words and the number. The bare object may start with one blank (a base model
# continues "Answer:" with " {", as its examples show; forced to "{" it answered differently in
# 12 of 55 prompts). Beyond JSON, the number may be a fraction (forbidden, "1/2" became "100")
# or a percentage with its sign (without it, SmolLM2 wrote "100/1000" after reasoning "... is
# 100%."). At most 4 decimals: a model that goes on writing zeros ("0.0000000...") is cut at a
# value that no longer changes. The reasoning holds no quote, backslash or newline, so the
# object stays one line and ends.
_NUMBER_RULES = (
    'number ::= plain "%"? | [0-9]{1,3} "/" [1-9] [0-9]{0,3}\n'
    'plain ::= "0" decimals? | [1-9] [0-9]? decimals? | "100" ("." "0"{1,4})?\n'
    'decimals ::= "." [0-9]{1,4}\n'
)
ANSWER_GRAMMAR = 'root ::= " "? "{\\"' + ANSWER_FIELD + '\\": " number "}"\n' + _NUMBER_RULES
REASONED_GRAMMAR = (
    'root ::= "{\\"' + REASONING_FIELD + '\\": \\"" reasoning "\\", \\"' + ANSWER_FIELD + '\\": " number "}"\n'
    'reasoning ::= [^"\\\\\\n]{0,' + str(REASONING_CHARS) + '}\n' + _NUMBER_RULES
)
_PLAIN = r'(?:0(?:\.[0-9]{1,4})?|[1-9][0-9]?(?:\.[0-9]{1,4})?|100(?:\.0{1,4})?)'
_NUMBER = r'(?:' + _PLAIN + r'%?|[0-9]{1,3}/[1-9][0-9]{0,3})'
ANSWER_REGEX = r' ?\{"' + ANSWER_FIELD + r'": ' + _NUMBER + r'\}'
REASONED_REGEX = (r'\{"' + REASONING_FIELD + r'": "[^"\\\n]{0,' + str(REASONING_CHARS) + r'}", "' + ANSWER_FIELD
                  + r'": ' + _NUMBER + r'\}')
# The grammars' two forms that JSON cannot hold, read by pattern: "1/2" and "25%".
_BEYOND_JSON = re.compile(r'(?:\{"' + REASONING_FIELD + r'": "([^"\\\n]*)", |\{)"' + ANSWER_FIELD
                          + r'": (?:([0-9]{1,3})/([0-9]{1,4})|(' + _PLAIN + r')%)\}')
# Enough tokens for the object when digits are tokens of their own ('{"', 'probability', '":',
# ' ', '0', '.', '9', '9', '9', '9', '}'), whatever --max-tokens says: a grammar ends the reply
# at the closing brace, so a larger limit costs nothing. The reasoned object needs room for its
# reasoning at up to a token a character (a run of digits).
JSON_MIN_TOKENS = 32
REASONED_MIN_TOKENS = REASONING_CHARS + JSON_MIN_TOKENS
# A reasoned answer is another elicitation than a bare one: its own store key.
REASONED_STORE_MODE = "json-reasoned"
# Logprobs mode: alternatives asked per position (OpenAI's maximum) and a token limit that
# covers "100" in digit tokens, a leading blank and the end.
TOP_LOGPROBS = 20
LOGPROBS_MAX_TOKENS = 8

NOT_JSON = "not a JSON answer object (the server ignored the schema); read as text"
JSON_BAD_FIELD = "JSON answer's 'probability' is not a number from 0 to 100"
JSON_AMBIGUOUS = "JSON answer's 'probability' is exactly 1: 1% or certainty, ambiguous"

# The answer rule that replaces "Reply with a single integer ..." for yes/no items in
# logprobs mode: P(yes) is read from the first token's distribution.
YES_NO_RULE = "Answer with yes or no and nothing else."


class JsonReading(NamedTuple):
    """A json-mode reply read strictly: ``value`` on 0-100, or ``reason`` why not; the
    ``reasoning`` a reasoned object gives before its number (None: a bare object)."""

    value: float | None
    reason: str | None
    reasoning: str | None = None


def json_value(text: str) -> JsonReading | None:
    """Strict reading of a json-mode reply, bare or reasoned, or None when the reply is not
    a JSON answer object at all (then the text extractor reads it)."""
    stripped = text.strip()
    if stripped.startswith("```"):  # a fenced object is still the object
        stripped = stripped.strip("`").removeprefix("json").strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return None
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError):
        return _beyond_json(stripped)
    if not isinstance(data, dict) or ANSWER_FIELD not in data:
        # Not the schema's object (a server that ignored it may send {"answer": 65}): the
        # text extractor reads it, with its own rules for JSON replies.
        return None
    reasoning = data.get(REASONING_FIELD)
    reasoning = reasoning if isinstance(reasoning, str) else None
    value = data[ANSWER_FIELD]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return JsonReading(None, f"{JSON_BAD_FIELD} (got {type(value).__name__})", reasoning)
    return JsonReading(*json_number(float(value)), reasoning)


def _beyond_json(text: str) -> JsonReading | None:
    """The grammars' fraction and percentage (_BEYOND_JSON); None for anything else."""
    match = _BEYOND_JSON.fullmatch(text)
    if match is None:
        return None
    reasoning, top, bottom, percent = match.groups()
    if percent is not None:  # the sign states the scale: 1% is 1 %, 0.5% half a per cent
        return JsonReading(float(percent), None, reasoning)
    if int(bottom) == 0 or int(top) > int(bottom):
        return JsonReading(None, f"{JSON_BAD_FIELD} (got {top}/{bottom})", reasoning)
    return JsonReading(round(100 * int(top) / int(bottom), 6), None, reasoning)


def json_number(number: float) -> tuple[float | None, str | None]:
    """The schema's scale (SCALE_NOTE): 0 and 1 < v <= 100 are percentages, 0 < v < 1 a
    fraction, exactly 1 ambiguous (no answer)."""
    if not math.isfinite(number) or not 0 <= number <= 100:
        return None, f"{JSON_BAD_FIELD} (got {number:g})"
    if number == 1:
        return None, JSON_AMBIGUOUS
    if 0 < number < 1:
        return round(100 * number, 6), None
    return number, None
