"""The elicitation modes: how an answer is asked for, and how its reply is read.

Pure. ``text``: the reply is prose, read by the answer extractor (parse.py). ``json``: the
server is asked for JSON that fits ``ANSWER_SCHEMA`` (OpenAI-style ``response_format``;
``ANSWER_GRAMMAR`` on llama.cpp, ``ANSWER_REGEX`` on vLLM, neither with room for free
whitespace; a forced tool on Anthropic) and the reply is read strictly as that object, on
the scale the schema states (``json_number``); a reply that is not such an object (a server that ignored the
schema and wrote prose) is read by the text extractor instead, and says so. ``logprobs``:
one greedy request per prompt, the answer read from the answer token's distribution
(distribution.py). Each mode is a different elicitation: a gate compares like with like.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

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
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {ANSWER_FIELD: {"type": "number", "minimum": 0, "maximum": 100, "description": SCALE_NOTE}},
    "required": [ANSWER_FIELD],
    "additionalProperties": False,
}
SCHEMA_NAME = "answer"
# The same object as a grammar with no free whitespace (llama.cpp's GBNF ``grammar``) and as a
# regular expression (vLLM's ``structured_outputs.regex``, ``guided_regex`` before v0.12). A
# JSON schema's grammar lets a model write whitespace between every token (llama.cpp allows a
# newline and 20 blanks at each of four places: Gemma filled 48 tokens with "{\n \t \t ..."),
# so where the server takes a grammar it gets this one: the model chooses only the number,
# and one blank before the brace (a base model continues "Answer:" with " {", as its examples
# show; forced to "{" it answered differently in 12 of 55 prompts). A fraction ("1/2", which
# the models write where JSON has no room for it) is allowed too: forbidden, "1/2" became "100".
# At most 4 decimals: a model that goes on writing zeros ("0.0000000...") is cut at a value
# that no longer changes.
ANSWER_GRAMMAR = (
    'root ::= " "? "{\\"' + ANSWER_FIELD + '\\": " number "}"\n'
    'number ::= "0" decimals? | [1-9] [0-9]? decimals? | "100" ("." "0"{1,4})? | [0-9]{1,3} "/" [1-9] [0-9]{0,3}\n'
    'decimals ::= "." [0-9]{1,4}\n'
)
# llama.cpp's chat endpoint: the object's start goes into the reply as a prefilled assistant
# message and the grammar constrains only the rest. A chat model that would rather write prose
# ("No, ...") spelled a grammar-forced "probability" as 'p', 'ro', 'ba', 'b', 'il', 'ity' and
# then answered another number than after the start as text (23 of 55 SmolLM2 prompts; 33 of
# 33 agree prefilled). The server returns the prefilled start with the reply.
JSON_START = '{"' + ANSWER_FIELD + '":'
ANSWER_TAIL_GRAMMAR = 'root ::= " "? number "}"\n' + ANSWER_GRAMMAR.split("\n", 1)[1]
ANSWER_REGEX = (r' ?\{"' + ANSWER_FIELD + r'": (0(\.[0-9]{1,4})?|[1-9][0-9]?(\.[0-9]{1,4})?|100(\.0{1,4})?'
                r'|[0-9]{1,3}/[1-9][0-9]{0,3})\}')
_RATIO = re.compile(r'\{"' + ANSWER_FIELD + r'": ([0-9]{1,3})/([0-9]{1,4})\}')
# Enough tokens for the object when digits are tokens of their own ('{"', 'probability', '":',
# ' ', '0', '.', '9', '9', '9', '9', '}'), whatever --max-tokens says: a grammar ends the reply
# at the closing brace, so a larger limit costs nothing.
JSON_MIN_TOKENS = 32
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


def json_value(text: str) -> tuple[float | None, str | None] | None:
    """Strict reading of a json-mode reply: (value, None), (None, reason), or None when
    the reply is not a JSON object at all (then the text extractor reads it)."""
    stripped = text.strip()
    if stripped.startswith("```"):  # a fenced object is still the object
        stripped = stripped.strip("`").removeprefix("json").strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return None
    try:
        data = json.loads(stripped)
    except (ValueError, RecursionError):
        ratio = _RATIO.fullmatch(stripped)  # the grammar's fraction, which JSON cannot hold
        if ratio is None:
            return None
        top, bottom = int(ratio.group(1)), int(ratio.group(2))
        if bottom == 0 or top > bottom:
            return None, f"{JSON_BAD_FIELD} (got {top}/{bottom})"
        return round(100 * top / bottom, 6), None
    if not isinstance(data, dict) or ANSWER_FIELD not in data:
        # Not the schema's object (a server that ignored it may send {"answer": 65}): the
        # text extractor reads it, with its own rules for JSON replies.
        return None
    value = data[ANSWER_FIELD]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None, f"{JSON_BAD_FIELD} (got {type(value).__name__})"
    return json_number(float(value))


def with_start(text: str) -> str:
    """A prefilled reply as the whole object: servers that return only what they generated
    (' 0.25}') get the start back."""
    return text if text.lstrip().startswith("{") else JSON_START + text


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
