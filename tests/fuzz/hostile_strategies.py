"""Hypothesis strategies for what users and attackers hand pytest-optbench: suite files,
thresholds files, JSON reports (baselines, compare inputs) and model replies, each valid,
nearly valid (one thing wrong) or hostile (alias bombs, deep nesting, huge numbers, format
specs, control characters, surrogates, odd encodings).

Sizes stay small enough for the default profile to run in seconds; ``--hypothesis-profile
fuzz-long`` draws many more examples of the same shapes.
"""

from __future__ import annotations

import codecs
import copy
import json
import math
from typing import Any

import yaml
from hypothesis import strategies as st

KINDS_FIELDS = {
    "inverted_pair": {"scenario": "A team has planned a launch.", "positive": "Will it succeed?",
                      "negative": "Will it fail?"},
    "binary": {"question": "Is water wet?", "outcome": True},
    "conjunction": {"scenario": "A plan.", "a": "A happens?", "b": "B happens?", "both": "Both happen?"},
    "disjunction": {"scenario": "A plan.", "a": "A happens?", "b": "B happens?", "either": "Either happens?"},
    "conditional": {"scenario": "A plan.", "a": "A happens?", "b_given_a": "B if A?", "both": "Both happen?"},
    "dose_response": {"scenario": "A plan.", "question": "Will it work?", "direction": "increasing",
                      "ladder": ["Some sign.", "More signs.", "Strong signs."]},
}

# Text that has hurt someone: terminal escapes, bidi overrides, line breaks of every kind,
# lone surrogates (only where Python strings reach: replies, not YAML), NUL, huge runs.
NASTY_TEXT = [
    "\x1b[2J\x1b[31mred", "\x1b]0;title\x07", "a\rb", "a\r\nb", "\u2028\u2029", "\x85", "\u202eevil", "\x00",
    "{scenario!r:x>99}", "{scenario:>300000000}", "{0}", "{scenario.__class__}", "{}", "{{literal}}", "|pipe|",
    "<script>alert(1)</script>", "' OR 1=1 --", "%s%s%n", "\t\t", " ", "", "9" * 60, "\ufeff", "ℵ", "５０%",
    "٥٠٪", "五十", "x" * 3000,
]

ids = st.one_of(
    st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True),
    st.sampled_from(["", " lead", "trail ", "a::b", "a[b]", "a/b", "a\\b", "esc\x1b", "x\u202ey", "ok-1", "é"]),
)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10 ** 30, 10 ** 30), st.sampled_from([10 ** 400, -(10 ** 900)]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30), st.sampled_from(NASTY_TEXT),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=12)


@st.composite
def valid_suites(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(sorted(KINDS_FIELDS)))
    n = draw(st.integers(1, 4))
    items = []
    for i in range(n):
        item: dict[str, Any] = {"id": f"item-{i}", **copy.deepcopy(KINDS_FIELDS[kind])}
        if draw(st.booleans()):
            item["domain"] = draw(st.sampled_from(["academic", "business", "health habits"]))
        if kind == "inverted_pair" and draw(st.booleans()):
            item["expected"] = draw(st.integers(0, 100))
        items.append(item)
    suite: dict[str, Any] = {"optbench": 1, "suite": draw(st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)),
                             "kind": kind, "items": items}
    if draw(st.booleans()):
        suite["defaults"] = {"samples": draw(st.integers(1, 5)), "temperature": draw(st.sampled_from([0, 0.7, 2]))}
    if kind == "inverted_pair" and draw(st.booleans()):
        suite["conditions"] = {"base": {}, "framed": {"scenario": "{scenario} Think it over.",
                                                      "system_prefix": "Be careful."}}
    if draw(st.booleans()):
        suite["prompt"] = {"template": draw(st.sampled_from(
            ["{scenario}\n\n{question}", "{id}: {question}", "{question:>20}", "{scenario!s:.40} {question}"]))}
    return suite


@st.composite
def nearly_valid_suites(draw: st.DrawFn) -> dict[str, Any]:
    """A valid suite with one key set to something else, or deleted."""
    suite = draw(valid_suites())
    where = draw(st.sampled_from(["top", "item", "defaults", "prompt", "conditions"]))
    target: dict[str, Any] = suite
    if where == "item":
        target = suite["items"][0]
    elif where in ("defaults", "prompt", "conditions"):
        target = suite.setdefault(where, {})
    keys = sorted(target) + ["id", "kind", "samples", "temperature", "scenario", "template", "unknown", "<<"]
    key = draw(st.sampled_from(keys))
    if draw(st.integers(0, 4)) == 0:
        target.pop(key, None)
    else:
        target[key] = draw(values)
    return suite


def alias_bomb(levels: int, width: int) -> str:
    parts = ['&l0 ["lol"' + ', "lol"' * (width - 1) + "]"]
    parts += [f"&l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "optbench: 1\nsuite: [" + ", ".join(parts) + "]\nitems: []\n"


def nesting(depth: int, mapping: bool) -> str:
    value = "{a: " * depth + "1" + "}" * depth if mapping else "[" * depth + "]" * depth
    return f"optbench: 1\nitems: {value}\n"


MERGED = """
optbench: 1
suite: merged
items:
  - &base
    id: a
    scenario: A plan.
    positive: Will it work?
    negative: Will it fail?
  - <<: *base
    id: b
  - <<: [*base, {scenario: Another plan.}]
    id: c
"""

hostile_texts = st.one_of(
    st.builds(alias_bomb, st.integers(2, 9), st.integers(2, 10)),
    st.builds(nesting, st.integers(1, 1200), st.booleans()),
    st.just(MERGED),
    st.just(MERGED.replace("    id: b\n", "    id: b\n    id: b2\n")),  # a real duplicate
    st.just("optbench: &a [1, *a]\n"),
    st.sampled_from([
        "optbench: 1\nitems: !!python/object/apply:os.system ['true']\n",
        "optbench: 1\nsuite: !!binary aGVsbG8=\nitems: []\n",
        "optbench: 1\nsuite: 2024-13-45\nitems: []\n",
        "optbench: 1\nsuite: 0000-01-01\nitems: []\n",
        "optbench: 0x" + "f" * 2000 + "\n",
        "optbench: 1\ndefaults: {samples: " + "9" * 5000 + "}\nitems: []\n",
        "- optbench: 1\n  items: []\n",
        "optbench: 1\n---\noptbench: 1\n",
        "optbench: 1\nitems: [{id: a, scenario: s, positive: p, negative: n, ? [x]: y}]\n",
        "optbench: 1\nprompt: {template: '{scenario!r:x>300000000}'}\nitems: []\n",
        "%YAML 1.1\n---\noptbench: 1\n",
        "optbench: 1\nitems: [*undefined]\n",
        "\x00\x01\x02",
    ]),
    st.text(max_size=300).map(lambda t: "optbench: 1\n" + t),
)


def encode(text: str, encoding: str) -> bytes:
    if encoding == "utf-8-sig":
        return codecs.BOM_UTF8 + text.encode("utf-8")
    return text.encode(encoding, "surrogatepass")


@st.composite
def suite_files(draw: st.DrawFn) -> bytes:
    """The bytes of a file named *.yaml that mentions optbench: valid, nearly valid or hostile."""
    choice = draw(st.sampled_from(["valid", "nearly", "hostile", "hostile", "bytes"]))
    if choice == "bytes":
        return draw(st.binary(max_size=400)) + b"optbench"
    if choice == "hostile":
        text = draw(hostile_texts)
    else:
        data = draw(valid_suites() if choice == "valid" else nearly_valid_suites())
        text = yaml.safe_dump(data, sort_keys=draw(st.booleans()), default_flow_style=draw(st.sampled_from([None, True, False])),
                              allow_unicode=draw(st.booleans()))
    return encode(text, draw(st.sampled_from(["utf-8", "utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-32"])))


# --------------------------------------------------------------------------- thresholds


@st.composite
def thresholds_files(draw: st.DrawFn) -> bytes:
    gate: dict[str, Any] = {"metric": draw(st.sampled_from(["skew", "brier", "parse_rate", "conjunction_violation_rate",
                                                              "nope"])),
                            draw(st.sampled_from(["max", "min", "max_abs", "max_increase", "max_change"])):
                                draw(st.one_of(st.floats(-10, 10), scalars))}
    if draw(st.booleans()):
        gate[draw(st.sampled_from(["suites", "conditions", "evidence", "tolerance", "typo"]))] = draw(values)
    data: Any = {"optbench": 1, "gates": [gate] * draw(st.integers(0, 3))}
    if draw(st.integers(0, 3)) == 0:
        data = draw(values)
    text = yaml.safe_dump(data, allow_unicode=True) if draw(st.booleans()) else draw(hostile_texts).replace(
        "items", "gates")
    return text.encode("utf-8")


# --------------------------------------------------------------------------- reports


def _pair(i: int, plus: float, minus: float, model: str) -> dict[str, Any]:
    return {"suite": "track-b", "item": f"i{i}", "condition": "base", "kind": "inverted_pair", "file": "s.yaml",
            "model": model, "track": "B", "domain": "academic", "language": "en", "prompt_hash": "h", "notes": [],
            "prompts": [{"role": "positive", "user": "q+", "answers": [{"raw": str(plus), "value": plus}]},
                        {"role": "negative", "user": "q-", "answers": [{"raw": str(minus), "value": minus}]}]}


@st.composite
def valid_reports(draw: st.DrawFn) -> dict[str, Any]:
    model = draw(st.sampled_from(["model-a", "model-b"]))
    answers = st.floats(0, 100, allow_nan=False)
    n = draw(st.integers(0, 8))
    return {
        "format": "pytest-optbench-report", "format_version": 1,
        "run": {"model": model, "keep_fifty": draw(st.booleans()), "seed": 0, "bootstrap_resamples": 50},
        "items": [_pair(i, draw(answers), draw(answers), model) for i in range(n)],
        "aggregates": [{"suite": "track-b", "condition": "base", "metric": "skew", "domain": None,
                        "value": draw(st.one_of(st.none(), st.floats(-100, 100))), "ci_low": None, "ci_high": None,
                        "n": n, "p_value": None, "tolerance": None}],
        "gates": [], "languages": {"track_b_skew": [{"language": "en", "skew": 1.0, "n": n}]},
    }


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(data, dict):
        for key, value in data.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            out += _paths(value, (*prefix, index))
    return out


@st.composite
def report_files(draw: st.DrawFn) -> bytes:
    """A JSON report: valid, with one value replaced or deleted, or not a report at all."""
    data: Any = draw(valid_reports())
    choice = draw(st.sampled_from(["valid", "edit", "edit", "delete", "deep", "other"]))
    if choice in ("edit", "delete"):
        path = draw(st.sampled_from(_paths(data)))
        parent = data
        for step in path[:-1]:
            parent = parent[step]
        if choice == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(values)
    elif choice == "deep":
        depth = draw(st.integers(1, 5000))
        return b'{"format": "pytest-optbench-report", "format_version": 1, "run": ' + b"[" * depth + b"]" * depth + b"}"
    elif choice == "other":
        data = draw(values)
    text = json.dumps(data, allow_nan=True, default=str)
    return text.encode("utf-8")


# --------------------------------------------------------------------------- replies


reply_numbers = st.one_of(st.integers(-1000, 1000).map(str), st.floats(allow_nan=True).map(repr),
                          st.sampled_from(["50", "65%", "0.65", "1e309", "NaN", "-0", "100", "101", "٦٥", "６５"]))


@st.composite
def replies(draw: st.DrawFn) -> str:
    """What a model or a server may send back as an answer's text."""
    style = draw(st.sampled_from(["plain", "framed", "json", "nasty", "text", "digits", "surrogate"]))
    if style == "plain":
        return draw(reply_numbers)
    if style == "framed":
        return draw(st.sampled_from(["About {}%.", "Probability: {}", "{}/100", "I'd say {} percent", "**{}**"])).format(
            draw(reply_numbers))
    if style == "json":
        return json.dumps({"probability": draw(st.one_of(scalars, st.floats(0, 100)))}, default=str)
    if style == "nasty":
        return draw(st.sampled_from(NASTY_TEXT)) + draw(reply_numbers) + draw(st.sampled_from(NASTY_TEXT))
    if style == "digits":  # long runs of digits; kept short here (the parser's rewrite is pending)
        return draw(st.sampled_from("0123456789")) * draw(st.integers(1, 300))
    if style == "surrogate":
        return draw(reply_numbers) + draw(st.sampled_from(["\ud800", "\udfff", "\ud83d\ude00", "\udcff x"]))
    return draw(st.text(max_size=200))


def finite_or_none(value: float | None) -> bool:
    return value is None or (isinstance(value, float | int) and math.isfinite(value))


# --------------------------------------------------------------------------- server replies (issue 24)


# Values a hostile server puts where a field belongs: wrong types, lone surrogates, huge and
# non-finite numbers, dates that are no dates, ids that are paths.
HOSTILE_FIELDS = ["\ud800", "\udfff tail", 1e308, -1e308, 10 ** 30, 10 ** 400, "tomorrow", [], {}, None, True, 3.0,
                  -0.0, math.inf, -math.inf, math.nan, "../../etc/passwd", "9" * 5000, [5], {"type": 5}, "",
                  "\x1b[2J", "x" * 3000, -1, 2 ** 63]
reply_fields = st.one_of(st.sampled_from(HOSTILE_FIELDS), values)
# (which path, what to do, the value): applied to whatever the server is about to send.
mutations = st.tuples(st.integers(0, 10 ** 6), st.sampled_from(["set", "set", "set", "delete", "whole", "truncate"]),
                      reply_fields)


def mutate(body: Any, mutation: tuple[int, str, Any]) -> Any:
    """``body`` with one value replaced or deleted, or replaced whole, or cut short (bytes)."""
    index, action, value = mutation
    if action == "whole":
        return value
    if action == "truncate":
        data = json.dumps(body).encode()
        return data[: index % max(1, len(data))]
    body = copy.deepcopy(body)
    paths = _paths(body)
    if not paths:
        return value
    path = paths[index % len(paths)]
    parent = body
    for step in path[:-1]:
        parent = parent[step]
    if action == "delete" and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return body


_CHAT_LOGPROBS = {"content": [{"token": "6", "logprob": -0.1, "bytes": [54], "top_logprobs": [
    {"token": "6", "logprob": -0.1, "bytes": [54]}, {"token": "7", "logprob": -2.5, "bytes": [55]}]},
    {"token": "5", "logprob": -0.2, "bytes": [53], "top_logprobs": [{"token": "5", "logprob": -0.2, "bytes": [53]}]}]}
VALID_REPLIES: dict[str, Any] = {
    "chat": {"id": "c", "object": "chat.completion", "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "65"},
         "logprobs": _CHAT_LOGPROBS},
        {"index": 1, "finish_reason": "length", "message": {"role": "assistant", "content": '{"probability": 40}'}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 4}},
    "completions": {"id": "t", "object": "text_completion", "choices": [
        {"index": 0, "finish_reason": "stop", "text": " 65", "logprobs": {
            "tokens": [" 6", "5"], "token_logprobs": [-0.1, -0.2], "top_logprobs": [{" 6": -0.1, " 7": -2.5}, {"5": -0.2}]}},
        {"index": 1, "finish_reason": "stop", "text": "40", "logprobs": _CHAT_LOGPROBS}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 4}},
    "anthropic": {"id": "m", "type": "message", "content": [{"type": "text", "text": "65"},
                                                           {"type": "tool_use", "input": {"probability": 65}}],
                  "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 2}},
    "openai-batch": {"id": "batch_1", "object": "batch", "status": "completed", "output_file_id": "file-1",
                     "error_file_id": None, "expires_at": 1900000000, "errors": {"data": [{"line": 1, "message": "x"}]},
                     "request_counts": {"total": 2, "completed": 1, "failed": 1}},
    "anthropic-batch": {"id": "msgbatch_1", "type": "message_batch", "processing_status": "ended",
                        "expires_at": "2030-01-01T00:00:00Z", "results_url": "https://x/results",
                        "request_counts": {"processing": 0, "succeeded": 2, "errored": 0, "canceled": 0,
                                           "expired": 0}},
    "openai-batch-line": {"custom_id": "k-0-1", "response": {"status_code": 200, "body": {
        "choices": [{"message": {"content": "65"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1}}}, "error": None},
    "anthropic-batch-line": {"custom_id": "k-0-1", "result": {"type": "succeeded", "message": {
        "content": [{"type": "text", "text": "65"}], "usage": {"input_tokens": 3, "output_tokens": 1}}}},
}
