"""Provider batch APIs behind one small interface: submit lines, poll, read results.

A batch is a list of ``BatchLine``s, each one ``ApiRequest`` under a ``custom_id``. The
provider runs them within its completion window (24 hours) at half the real-time price and
returns one result per line, in any order; ``custom_id`` matches them up. OpenAI takes the
lines as an uploaded JSONL file (Files API, purpose ``batch``) named in ``batches.create``;
Anthropic takes them in the body of ``messages.batches.create``. Both are reached through
their official SDKs (``providers.batch_openai``, ``providers.batch_anthropic``).

Nothing here retries, waits or stores: ``elicit.batch`` does, through the response store.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import http_limit, wire
from .remote import ApiProvider, ApiRequest, CallFailed

# Both providers bill a batch answer at half the real-time (list) price.
BATCH_PRICE = 0.5
# custom_id: Anthropic allows ^[a-zA-Z0-9_-]{1,64}$; OpenAI any string unique in the batch.
CUSTOM_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class BatchLine:
    custom_id: str
    request: ApiRequest


@dataclass
class BatchState:
    """What a poll says about one batch."""

    id: str
    status: str  # the provider's own word (validating, in_progress, ended, expired, ...)
    ended: bool = False  # no line will change any more: its results can be read
    failed: bool = False  # the batch as a whole was refused or failed: none of its lines ran
    expires_at: float | None = None  # Unix time when the provider gives up on the open lines
    total: int = 0
    done: int = 0  # lines that succeeded so far (as far as the provider says)
    errored: int = 0
    message: str | None = None  # why it failed, when it did
    problem: str | None = None  # fields of the batch object that were of no use (wire), for a note


@dataclass
class LineResult:
    """The result of one line."""

    custom_id: str
    texts: list[str] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    error: str | None = None  # why there is no answer (redacted)
    retryable: bool = False  # asking again can help (5xx, 429, overloaded)
    expired: bool = False  # never run: the window ended, or the batch was cancelled
    param: str | None = None  # the request parameter a 400 names, when it names one
    served_model: str | None = None  # the model id the response named (remote.served)
    system_fingerprint: str | None = None  # OpenAI's system_fingerprint of the response
    problem: str | None = None  # some of the line's choices failed their checks (wire): why
    usage_problem: str | None = None  # its usage counts were no counts (then 0)

    @property
    def ok(self) -> bool:
        return self.error is None and not self.expired


class BatchClient:
    """One provider's batch API. Subclasses set the limits and speak the protocol."""

    provider = "api"
    max_lines = 50_000  # requests per batch
    max_bytes = 200 * 1024 * 1024  # size of what is uploaded or posted

    def __init__(self, api: ApiProvider) -> None:
        self.api = api

    def encode(self, line: BatchLine) -> bytes:
        """The line as the provider takes it (a JSONL line, or one entry of a JSON list)."""
        raise NotImplementedError

    async def submit(self, lines: Sequence[BatchLine]) -> BatchState:
        """Create one batch; raises ``CallFailed`` (``BatchTooLarge`` when the server says the
        batch is over its size limits)."""
        raise NotImplementedError

    async def retrieve(self, batch_id: str) -> BatchState:
        raise NotImplementedError

    async def results(self, batch_id: str) -> list[LineResult]:
        """Every line result the provider returns for an ended batch."""
        raise NotImplementedError

    def adapt(self, result: LineResult, request: ApiRequest) -> bool:
        """A line the server refused for a parameter: change the requests to suit it (as the
        real-time path does, and noted the same way); True when asking again can help."""
        return False

    def failure(self, exc: BaseException) -> CallFailed:
        """An SDK exception as a ``CallFailed``; a refusal over size as ``BatchTooLarge``."""
        failure = self.api.sdk_failure(exc, self.api.sdk)
        text = str(failure).lower()
        if failure.status == 413 or (failure.status in (400, 422) and _SIZE_WORDS.search(text)):
            return BatchTooLarge(str(failure), status=failure.status)
        return failure

    def redact(self, text: str) -> str:
        return self.api.redact(text)

    def wire_state(self, batch: Any) -> tuple[BatchState, str | None]:
        """The protocol's reading of a batch object (wire_openai, wire_anthropic): its state
        and what is wrong with it, if anything; ``wire.BadReply`` when it cannot be read."""
        raise NotImplementedError

    def wire_line(self, raw: bytes | str) -> LineResult:
        """The protocol's reading of one result line."""
        raise NotImplementedError

    def _state(self, batch: Any) -> BatchState:
        """A batch object read and redacted; one the server accepted but no one can read
        cannot be polled either, so asking again does not help."""
        try:
            state, problem = self.wire_state(batch)
        except wire.BadReply as exc:
            raise CallFailed(f"{self.provider} batch: the server accepted the batch but {exc}; it cannot be polled",
                             retryable=False) from None
        state.problem = self.redact(problem) if problem else None
        state.message = self.redact(state.message) if state.message else None
        return state

    def _line(self, raw: bytes | str) -> LineResult:
        """One result line, its error redacted and cut to 300 characters."""
        result = self.wire_line(raw)
        if result.error:
            result.error = self.redact(result.error)[:300]
        return result

    async def read_lines(self, path: str, read: Callable[[bytes], LineResult], headers: Mapping[str, str]
                         ) -> list[LineResult]:
        """A result file's lines, streamed from ``path`` (never whole in memory), each read
        by ``read``; a line beyond --optbench-max-reply is an error of its own."""
        client = self.api.client
        httpx = http_limit.http_module(self.api.sdk)
        limit = self.api.max_reply
        out: list[LineResult] = []
        response = await client.get(path, cast_to=httpx.Response, stream=True, options={"headers": dict(headers)})
        try:
            async for raw in http_limit.lines(response.aiter_bytes(), limit):
                out.append(read(raw) if raw is not None else LineResult(
                    "", error=f"{self.provider} batch: a result line larger than {http_limit.megabytes(limit)} "
                              "(--optbench-max-reply)", retryable=True))
        finally:
            await response.aclose()
        return out


_SIZE_WORDS = re.compile(r"too large|too many|exceed|maximum|at most|limit|size")


class BatchTooLarge(CallFailed):
    """The server refused a batch for its size: split it and submit the halves."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message, retryable=False, status=status)


@dataclass
class Rejection:
    """What the real-time path's ``_adapt`` reads from an SDK BadRequestError."""

    param: str
    message: str


def line_size(client: BatchClient, line: BatchLine) -> int:
    return len(client.encode(line)) + 1


def chunks(client: BatchClient, lines: Sequence[BatchLine], max_lines: int | None = None) -> list[list[BatchLine]]:
    """Split lines into batches within the provider's limits (lines and bytes, with 5%
    headroom for the request around them)."""
    cap_lines = min(client.max_lines, max_lines or client.max_lines)
    cap_bytes = int(client.max_bytes * 0.95)
    out: list[list[BatchLine]] = []
    size = 0
    for line in lines:
        n = line_size(client, line)
        if not out or len(out[-1]) >= cap_lines or size + n > cap_bytes:
            out.append([])
            size = 0
        out[-1].append(line)
        size += n
    return out


def retryable_status(status: int | None) -> bool:
    return status is not None and (status in (408, 409, 429) or status >= 500)


def dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def read_line(raw: bytes | str, label: str, read: Callable[[str, Mapping[str, Any]], LineResult]) -> LineResult:
    """One line of a batch's results, read by the protocol's ``read(custom_id, data)``: a line
    that cannot be read is an error of its own (of its ``custom_id`` when that can be read),
    never of the other lines."""
    try:
        data = wire.mapping(wire.load(raw, "a result line"), "a result line")
    except wire.BadReply as exc:
        return LineResult("", error=f"{label}: {exc}", retryable=True)
    custom = data.get("custom_id")
    custom_id = custom if isinstance(custom, str) and wire.CUSTOM_ID.match(custom) else ""
    try:
        return read(custom_id, data)
    except wire.BadReply as exc:
        return LineResult(custom_id, error=f"{label}: {exc}", retryable=True)
