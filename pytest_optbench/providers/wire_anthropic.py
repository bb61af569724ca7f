"""The Anthropic wire protocol, read and checked (``wire``): Messages replies, Message
Batches objects and their result lines. Plain JSON in, checked values out."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..text.display import one_line, well_formed
from . import wire
from .batch_api import BatchState, LineResult, read_line
from .remote import served
from .wire import BadReply, Choice, Reply

RETRYABLE_TYPES = ("api_error", "overloaded_error", "rate_limit_error", "timeout_error")
COUNTS = ("processing", "succeeded", "errored", "canceled", "expired")


def message_reply(data: Any, where: str = "the reply") -> Reply:
    """A message: its text blocks joined, or the forced tool's input as JSON (json mode)."""
    body = wire.mapping(data, where)
    prefix = "" if where == "the reply" else f"{where}."
    blocks = body.get("content")
    if blocks is None:
        error = body.get("error")
        detail = f" (its error: {one_line(str(error), 120)})" if error else ""
        raise BadReply(f"{prefix}content is missing{detail}")
    (input_tokens, output_tokens), problem = wire.counts(body.get("usage"), ("input_tokens", "output_tokens"),
                                                         f"{prefix}usage")
    try:
        answer = _blocks(wire.listing(blocks, f"{prefix}content"), f"{prefix}content")
        choice = Choice(answer, None, wire.word(body.get("stop_reason")))
    except BadReply as exc:
        choice = Choice(problem=str(exc))
    return Reply([choice], input_tokens, output_tokens, problem, served(body.get("model")))


def _blocks(blocks: list[Any], where: str) -> str:
    texts, tool = [], None
    for index, block in enumerate(blocks):
        at = f"{where}[{index}]"
        block = wire.mapping(block, at)
        kind = block.get("type")
        if kind == "text":
            texts.append(wire.text(block.get("text"), f"{at}.text"))
        elif kind == "tool_use" and tool is None:
            tool = dict(wire.mapping(block.get("input"), f"{at}.input"))
        elif not isinstance(kind, str):
            raise BadReply(f"{at}.type is {wire.kind(kind)}, not a block type")
        # other blocks (thinking, a second tool call) hold no answer
    if tool is not None:
        try:  # the forced tool's input is the answer (json mode)
            return well_formed(json.dumps(tool, ensure_ascii=False))
        except (ValueError, RecursionError):
            raise BadReply(f"{where}: the tool input cannot be written as JSON") from None
    return "".join(texts)


# --------------------------------------------------------------------------- Message Batches


def batch_state(data: Any) -> tuple[BatchState, str | None]:
    """A Message Batch object: its state and what was of no use in it. Raises ``BadReply``
    only without a usable id."""
    body = wire.mapping(data, "the batch")
    identifier = wire.identifier(body.get("id"), "the batch's id")
    status = wire.word(body.get("processing_status")) or ""
    problems = []
    expires = wire.timestamp(body.get("expires_at"))
    if expires is None and body.get("expires_at") is not None:
        problems.append(f"its expires_at is {one_line(repr(body.get('expires_at')), 40)}, not a time")
    numbers, problem = wire.counts(body.get("request_counts"), COUNTS, "its request_counts")
    if problem:
        problems.append(problem)
    found = dict(zip(COUNTS, numbers, strict=True))
    results = body.get("results_url")
    state = BatchState(id=identifier, status=status,
                       ended=status == "ended" or (isinstance(results, str) and bool(results)),
                       expires_at=expires, total=sum(numbers), done=found["succeeded"],
                       errored=found["errored"] + found["canceled"] + found["expired"])
    return state, "; ".join(problems) or None


def batch_line(raw: bytes | str) -> LineResult:
    """One line of a batch's results (JSONL): ``succeeded`` with the message, ``errored``
    with the error, or ``canceled`` / ``expired``; a line that cannot be read is an error of
    its own."""
    return read_line(raw, "anthropic batch", _line)


def _line(custom_id: str, data: Mapping[str, Any]) -> LineResult:
    result = wire.mapping(data.get("result"), "result")
    kind = wire.word(result.get("type")) or ""
    if kind == "succeeded":
        reply = message_reply(result.get("message"), "result.message")
        problems = reply.problems()
        if problems:
            raise BadReply(problems[0])
        return LineResult(custom_id, [c.text or "" for c in reply.choices], reply.input_tokens, reply.output_tokens,
                          usage_problem=reply.usage_problem, served_model=reply.served_model)
    if kind in ("expired", "canceled"):
        return LineResult(custom_id, error=f"anthropic batch: {kind}", expired=True)
    outer = result.get("error")
    error = outer.get("error") if isinstance(outer, Mapping) else None
    error = error if isinstance(error, Mapping) else {}
    error_type = wire.word(error.get("type")) or "error"
    message = one_line(str(error.get("message") or error_type), 200)
    return LineResult(custom_id, error=f"anthropic batch: {error_type}: {message}",
                      retryable=error_type in RETRYABLE_TYPES)
