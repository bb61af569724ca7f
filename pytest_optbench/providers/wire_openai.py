"""The OpenAI wire protocol, read and checked (``wire``): chat completions, completions
(OpenAI's legacy shape and llama.cpp's), Batch API objects and batch result lines.

Everything here takes plain JSON (what ``json.loads`` made of the body) and returns checked
values; nothing trusts a field's type. A choice that fails a check is that answer's problem
(``wire.Choice.problem``); a reply that is no reply at all (not an object, no choices) is
``BadReply``; usage counts that are no counts are 0 and noted (``Reply.usage_problem``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..prompts import modes
from ..text.display import one_line
from . import wire
from .batch_api import BatchState, LineResult, read_line, retryable_status
from .remote import NON_RETRYABLE_CODES, served
from .wire import BadReply, Choice, Reply

ENDED = ("completed", "expired", "cancelled", "failed", "succeeded", "complete", "done")
ACTIVE = ("validating", "in_progress", "finalizing", "cancelling", "queued", "running", "pending", "created")
NOT_RUN = ("batch_expired", "batch_cancelled")


def _reply(data: Any, read: Any) -> Reply:
    body = wire.mapping(data, "the reply")
    if "choices" not in body:
        error = body.get("error")
        detail = f" (its error: {one_line(str(error), 120)})" if error else ""
        raise BadReply(f"the reply has no choices{detail}")
    entries = wire.listing(body.get("choices"), "choices", empty=False)
    (input_tokens, output_tokens), problem = wire.counts(body.get("usage"), ("prompt_tokens", "completion_tokens"),
                                                         "usage")
    return Reply(wire.choices(entries, read), input_tokens, output_tokens, problem,
                 served(body.get("model")), served(body.get("system_fingerprint")))


def chat_reply(data: Any, mode: str = modes.TEXT) -> Reply:
    """A chat completion: each choice's ``message.content`` (text, null, or a list of text
    parts), finish reason and, in logprobs mode, ``logprobs.content``."""

    def read(entry: Any, where: str) -> Choice:
        choice = wire.mapping(entry, where)
        message = wire.mapping(choice.get("message"), f"{where}.message")
        content = message.get("content")
        if content is None and isinstance(message.get("refusal"), str):
            content = message["refusal"]  # a refusal is the model's reply (read as no answer)
        answer = _content(content, f"{where}.message.content")
        positions = None
        if mode == modes.LOGPROBS and choice.get("logprobs") is not None:
            logprobs = wire.mapping(choice.get("logprobs"), f"{where}.logprobs")
            positions = wire.chat_positions(logprobs.get("content"), f"{where}.logprobs.content")
        return Choice(answer, None, wire.word(choice.get("finish_reason")), positions)

    return _reply(data, read)


def _content(value: Any, where: str) -> str:
    """``message.content``: text, null (no text), or a list of ``{"type": "text", "text"}``
    parts (some servers send content parts back)."""
    if value is None:
        return ""
    if isinstance(value, list):
        parts = []
        for index, part in enumerate(value):
            part = wire.mapping(part, f"{where}[{index}]")
            if part.get("type") not in ("text", "output_text"):
                raise BadReply(f"{where}[{index}] is a {wire.word(part.get('type')) or 'untyped'} part, not text")
            parts.append(wire.text(part.get("text"), f"{where}[{index}].text"))
        return "".join(parts)
    return wire.text(value, where)


def completion_reply(data: Any, mode: str = modes.TEXT) -> Reply:
    """A completion: each choice's ``text`` and, in logprobs mode, its ``logprobs`` in the
    legacy shape (``tokens`` ...) or llama.cpp's chat shape (``content``)."""

    def read(entry: Any, where: str) -> Choice:
        choice = wire.mapping(entry, where)
        answer = "" if choice.get("text") is None else wire.text(choice.get("text"), f"{where}.text")
        positions = None
        if mode == modes.LOGPROBS and choice.get("logprobs") is not None:
            logprobs = wire.mapping(choice.get("logprobs"), f"{where}.logprobs")
            if logprobs.get("content"):
                positions = wire.chat_positions(logprobs.get("content"), f"{where}.logprobs.content")
            else:
                positions = wire.legacy_positions(logprobs, f"{where}.logprobs")
        return Choice(answer, None, wire.word(choice.get("finish_reason")), positions)

    return _reply(data, read)


# --------------------------------------------------------------------------- the Batch API


def batch_id(data: Any) -> str:
    """The id of a batch object: the one field without which nothing can be done with it."""
    return wire.identifier(wire.mapping(data, "the batch").get("id"), "the batch's id")


def file_id(value: Any) -> str | None:
    return value if isinstance(value, str) and wire.IDENTIFIER.match(value) else None


def batch_state(data: Any) -> tuple[BatchState, str | None]:
    """A batch object (``batches.create`` or ``retrieve``): the state and, when a field was
    no use (an expiry that is no time, counts that are no counts), what was wrong. Raises
    ``BadReply`` only without a usable id."""
    body = wire.mapping(data, "the batch")
    identifier = batch_id(body)
    status = wire.word(body.get("status")) or ""
    problems = []
    if body.get("status") is not None and not status:
        problems.append(f"its status is {wire.kind(body.get('status'))}, not a word")
    expires = wire.timestamp(body.get("expires_at"))
    if expires is None and body.get("expires_at") is not None:
        problems.append(f"its expires_at is {one_line(repr(body.get('expires_at')), 40)}, not a time")
    (total, done, errored), problem = wire.counts(body.get("request_counts"), ("total", "completed", "failed"),
                                                  "its request_counts")
    if problem:
        problems.append(problem)
    errors = body.get("errors")
    data_list = errors.get("data") if isinstance(errors, Mapping) else None
    messages = []
    for error in (data_list if isinstance(data_list, list) else [])[:3]:
        if isinstance(error, Mapping):
            line = wire.count(error.get("line"))
            text = error.get("message") or error.get("code") or "no message"
            messages.append((f"line {line}: " if line else "") + one_line(str(text), 100))
    files = bool(file_id(body.get("output_file_id")) or file_id(body.get("error_file_id")))
    state = BatchState(id=identifier, status=status, ended=status in ENDED or (status not in ACTIVE and files),
                       failed=status == "failed", expires_at=expires, total=total, done=done, errored=errored,
                       message="; ".join(messages)[:300] or None)
    return state, "; ".join(problems) or None


def result_files(data: Any) -> list[str]:
    """The output and error file ids of an ended batch (ids that are no ids are left out)."""
    body = wire.mapping(data, "the batch")
    return [f for f in (file_id(body.get("output_file_id")), file_id(body.get("error_file_id"))) if f]


def batch_line(raw: bytes | str) -> LineResult:
    """One line of a batch's output or error file. A line that cannot be read is an error of
    its own (of its ``custom_id`` when that can be read), never of the other lines."""
    return read_line(raw, "openai batch", _line)


def _line(custom_id: str, data: Mapping[str, Any]) -> LineResult:
    response, error = data.get("response"), data.get("error")
    if isinstance(response, Mapping):
        status = wire.count(response.get("status_code"))
        body = response.get("body")
        if isinstance(body, str):  # a server that sends the body as JSON text
            body = wire.load(body, "response.body")
        if status == 200 and isinstance(body, Mapping):
            reply = chat_reply(body)
            good = reply.good()
            problems = reply.problems()
            if not good:
                raise BadReply(problems[0] if problems else "the response has no choices")
            return LineResult(custom_id, [c.text or "" for c in good], reply.input_tokens, reply.output_tokens,
                              problem=problems[0] if problems else None, usage_problem=reply.usage_problem,
                              served_model=reply.served_model, system_fingerprint=reply.system_fingerprint)
        detail = body.get("error") if isinstance(body, Mapping) else None
        detail = detail if isinstance(detail, Mapping) else {}
        message = one_line(str(detail.get("message") or detail.get("code") or "no message"), 200)
        text = f"{message} {detail.get('code') or ''}".lower()
        retryable = retryable_status(status) and not any(code in text for code in NON_RETRYABLE_CODES)
        param = detail.get("param")
        return LineResult(custom_id, error=f"openai batch: HTTP {status}: {message}", retryable=retryable,
                          param=param if isinstance(param, str) and len(param) <= wire.MAX_WORD else None)
    if isinstance(error, Mapping):
        code = wire.word(error.get("code")) or ""
        message = one_line(str(error.get("message") or code or "no message"), 200)
        if code in NOT_RUN:
            return LineResult(custom_id, error=f"openai batch: {code}", expired=True)
        return LineResult(custom_id, error=f"openai batch: {message}", retryable=True)
    return LineResult(custom_id, error="openai batch: a result line with neither response nor error", retryable=True)
