"""The elicitation modes: how an answer is asked for, and how its reply is read.

Pure. ``text``: the reply is prose, read by the answer extractor (parse.py). ``json``: the
server is asked for JSON that fits ``ANSWER_SCHEMA`` (OpenAI-style ``response_format``,
a grammar on llama.cpp's completions, a forced tool on Anthropic) and the reply is read
strictly as that object; a reply that is not such an object (a server that ignored the
schema and wrote prose) is read by the text extractor instead, and says so. ``logprobs``:
one greedy request per prompt, the answer read from the answer token's distribution
(distribution.py). Each mode is a different elicitation: a gate compares like with like.
"""

from __future__ import annotations

import json
import math
from typing import Any

TEXT, JSON, LOGPROBS = "text", "json", "logprobs"
MODES = (TEXT, JSON, LOGPROBS)
# The store key's mode for text answers since before modes existed: text answers keep
# their keys, so a store written by an older release still answers a text run.
STORE_MODES = {TEXT: "sample", JSON: "json", LOGPROBS: "logprobs"}

ANSWER_FIELD = "probability"
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {ANSWER_FIELD: {"type": "integer", "minimum": 0, "maximum": 100}},
    "required": [ANSWER_FIELD],
    "additionalProperties": False,
}
SCHEMA_NAME = "answer"
# Logprobs mode: alternatives asked per position (OpenAI's maximum) and a token limit that
# covers "100" in digit tokens, a leading blank and the end.
TOP_LOGPROBS = 20
LOGPROBS_MAX_TOKENS = 8

NOT_JSON = "not a JSON answer object (the server ignored the schema); read as text"
JSON_BAD_FIELD = "JSON answer's 'probability' is not a number from 0 to 100 (percent)"

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
        return None
    if not isinstance(data, dict) or ANSWER_FIELD not in data:
        # Not the schema's object (a server that ignored it may send {"answer": 65}): the
        # text extractor reads it, with its own rules for JSON replies.
        return None
    value = data[ANSWER_FIELD]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None, f"{JSON_BAD_FIELD} (got {type(value).__name__})"
    number = float(value)
    if not math.isfinite(number) or not 0 <= number <= 100 or 0 < number < 1:
        # -1, 250, or 0.35 (the 0-1 scale, which the schema's integer rules out); a server
        # that does not enforce the schema may send 65.5, which is still the model's answer.
        return None, f"{JSON_BAD_FIELD} (got {value!r})"
    return number, None
