"""The batch half of ``testing.FakeAPI``: OpenAI's Files + Batches API and Anthropic's
Message Batches, on the real wire protocol, so the official SDKs talk to it unchanged.

OpenAI: ``POST /v1/files`` (multipart, purpose ``batch``), ``POST /v1/batches``,
``GET /v1/batches/{id}``, ``GET /v1/files/{id}/content``. Anthropic: ``POST
/v1/messages/batches``, ``GET /v1/messages/batches/{id}`` and ``.../results``.

A batch stays in progress for ``polls`` retrieves, then ends and runs its lines through the
fake's own ``answer`` (so a batch answer equals the real-time one). Faults, per batch in
``faults`` (consumed one per created batch): ``expire`` (the window ends after half the lines
ran), ``fail`` (the batch fails as a whole: OpenAI ``failed``; Anthropic: every line
``errored``), ``cancel`` (nothing runs), ``hold`` (in progress until ``release()``); per line
from ``line_fault(request)``: ``500``, ``429``, ``400``, ``expired``. A parameter in the
fake's ``reject_params`` makes a line a 400 that names it. ``max_lines`` and ``max_bytes``
refuse bigger batches as the providers do; ``call_faults`` (``500``, ``429``, ``auth``...)
are consumed one per batch-API call.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from .requests import FakeRequest, tokens

if TYPE_CHECKING:
    from http.server import BaseHTTPRequestHandler


class FakeAPI(Protocol):
    """What the batch APIs need of the fake server that hosts them (``testing.server.FakeAPI``):
    a protocol here, so that the two modules do not import each other."""

    @property
    def answer(self) -> Callable[[FakeRequest, int], str]: ...

    @property
    def support_n(self) -> bool: ...

    @property
    def served_model(self) -> str | None: ...

    @property
    def system_fingerprint(self) -> str | None: ...

    @property
    def reject_params(self) -> tuple[str, ...]: ...

    @property
    def anthropic_url(self) -> str: ...

    def _fault(self, handler: BaseHTTPRequestHandler, request: FakeRequest, fault: str) -> None: ...

    def mangled(self, what: str, body: Any) -> Any: ...

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, body: Any, content_type: str = "application/json",
              headers: dict[str, str] | None = None) -> None: ...

WINDOW = 24 * 3600.0
EXPIRED_MESSAGE = "This request could not be executed before the completion window expired."


@dataclass
class FakeBatch:
    id: str
    api: str  # "openai" or "anthropic"
    lines: list[dict[str, Any]]
    created: float
    fault: str | None = None
    polls: int = 0
    ended: bool = False
    status: str = "validating"
    results: list[dict[str, Any]] = field(default_factory=list)  # Anthropic result lines / OpenAI out+err
    output_file_id: str | None = None
    error_file_id: str | None = None
    ended_at: float | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)

    @property
    def expires_at(self) -> float:
        return self.created + WINDOW


@dataclass
class FakeBatches:
    polls: int = 1  # retrieves that see a batch in progress before it ends
    faults: list[str] = field(default_factory=list)  # one per created batch, in order
    fault_for: Callable[[FakeBatch], str | None] | None = None  # or decided per batch (its id, its lines)
    line_fault: Callable[[FakeRequest], str | None] | None = None
    max_lines: int | None = None  # default: the provider's (50,000 / 100,000)
    max_bytes: int | None = None  # default: the provider's (200 MB / 256 MB)
    call_faults: list[str] = field(default_factory=list)  # one per batch-API call
    batches: dict[str, FakeBatch] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    lines_run: list[FakeRequest] = field(default_factory=list)  # every line the fake ran or refused
    calls: list[tuple[str, str]] = field(default_factory=list)  # (method, path) of every batch-API call
    _held: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- for tests ------------------------------------------------------------------------

    def release(self) -> None:
        """Let every held batch end at its next retrieve."""
        with self._lock:
            self._held.clear()

    def created(self, api: str | None = None) -> list[FakeBatch]:
        return [b for b in self.batches.values() if api is None or b.api == api]

    def submitted_lines(self) -> int:
        return sum(len(b.lines) for b in self.batches.values())

    # -- routing --------------------------------------------------------------------------

    @staticmethod
    def handles(method: str, path: str) -> bool:
        return path.endswith(("/files", "/batches")) or "/batches/" in path or "/files/" in path

    def handle(self, fake: FakeAPI, handler: BaseHTTPRequestHandler, method: str, path: str, raw: bytes) -> None:
        api = "anthropic" if "/messages/batches" in path else "openai"
        with self._lock:
            self.calls.append((method, path))
            call_fault = self.call_faults.pop(0) if self.call_faults else None
        if call_fault:

            credential = str(handler.headers.get("x-api-key") or handler.headers.get("authorization") or "")
            return fake._fault(handler, FakeRequest(api, "", "", "", {}, credential), call_fault)
        parts = path.rstrip("/").split("/")
        try:
            if api == "anthropic":
                if method == "POST" and parts[-1] == "batches":
                    return self._anthropic_create(fake, handler, raw)
                if method == "GET" and parts[-1] == "results":
                    return self._anthropic_results(fake, handler, parts[-2])
                if method == "GET":
                    return self._send_batch(fake, handler, parts[-1])
            else:
                if method == "POST" and parts[-1] == "files":
                    return self._openai_upload(fake, handler, raw)
                if method == "POST" and parts[-1] == "batches":
                    return self._openai_create(fake, handler, raw)
                if method == "GET" and parts[-1] == "content":
                    return self._openai_content(fake, handler, parts[-2])
                if method == "GET" and parts[-2] == "batches":
                    return self._send_batch(fake, handler, parts[-1])
        except _Refused as refused:
            return fake._send(handler, refused.status, _error_body(api, refused.kind, refused.message))
        return fake._send(handler, 404, _error_body(api, "not_found_error", f"no route {method} {path}"))

    # -- OpenAI ---------------------------------------------------------------------------

    def _openai_upload(self, fake: FakeAPI, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        fields = _multipart(handler.headers.get("content-type", ""), raw)
        data, purpose = fields.get("file", b""), fields.get("purpose", b"").decode()
        if purpose != "batch":
            raise _Refused(400, "invalid_request_error", f"purpose must be 'batch', got {purpose!r}")
        limit = self.max_bytes or 200 * 1024 * 1024
        if len(data) > limit:
            raise _Refused(413, "invalid_request_error", f"File is too large: {len(data)} bytes exceeds the maximum "
                                                         f"of {limit} bytes for batch input files.")
        with self._lock:
            file_id = f"file-{len(self.files) + 1:06d}"
            self.files[file_id] = data
        return fake._send(handler, 200, _file_object(file_id, len(data), "batch", "optbench-batch.jsonl"))

    def _openai_create(self, fake: FakeAPI, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        body = _json(raw)
        if body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
            raise _Refused(400, "invalid_request_error", "endpoint must be /v1/chat/completions, window 24h")
        data = self.files.get(str(body.get("input_file_id")))
        if data is None:
            raise _Refused(404, "invalid_request_error", f"No such File object: {body.get('input_file_id')}")
        lines = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
        limit = self.max_lines or 50_000
        if len(lines) > limit:
            raise _Refused(400, "invalid_request_error", f"The batch input file has {len(lines)} requests, "
                                                         f"which exceeds the maximum of {limit} requests per batch.")
        batch = self._new(fake, "openai", lines)
        return self._send_batch(fake, handler, batch.id)

    def _openai_content(self, fake: FakeAPI, handler: BaseHTTPRequestHandler, file_id: str) -> None:
        data = self.files.get(file_id)
        if data is None:
            raise _Refused(404, "invalid_request_error", f"No such File object: {file_id}")
        return fake._send(handler, 200, data, content_type="application/octet-stream")

    # -- Anthropic ------------------------------------------------------------------------

    def _anthropic_create(self, fake: FakeAPI, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        limit_bytes = self.max_bytes or 256 * 1024 * 1024
        if len(raw) > limit_bytes:
            raise _Refused(413, "request_too_large", f"Request exceeds the maximum allowed number of bytes "
                                                     f"({limit_bytes}).")
        requests = _json(raw).get("requests")
        if not isinstance(requests, list) or not requests:
            raise _Refused(400, "invalid_request_error", "requests: at least one request is required")
        limit = self.max_lines or 100_000
        if len(requests) > limit:
            raise _Refused(400, "invalid_request_error", f"requests: too many requests ({len(requests)}); "
                                                         f"the maximum is {limit}.")
        ids = [r.get("custom_id") for r in requests]
        if len(set(ids)) < len(ids):
            raise _Refused(400, "invalid_request_error", "custom_id values must be unique within a batch")
        batch = self._new(fake, "anthropic", requests)
        return self._send_batch(fake, handler, batch.id)

    def _anthropic_results(self, fake: FakeAPI, handler: BaseHTTPRequestHandler, batch_id: str) -> None:
        batch = self.batches.get(batch_id)
        if batch is None or not batch.ended:
            raise _Refused(404 if batch is None else 400, "invalid_request_error",
                           f"batch {batch_id} has no results yet")
        return fake._send(handler, 200, _jsonl(fake, "anthropic", batch.results), content_type="application/binary")

    # -- both -----------------------------------------------------------------------------

    def _new(self, fake: FakeAPI, api: str, lines: list[dict[str, Any]]) -> FakeBatch:
        with self._lock:
            number = len(self.batches)
            fault = self.faults.pop(0) if self.faults else None
            prefix = "batch_" if api == "openai" else "msgbatch_"
            batch = FakeBatch(f"{prefix}{number + 1:06d}", api, lines, time.time(), fault)
            if fault is None and self.fault_for is not None:
                batch.fault = fault = self.fault_for(batch)
            batch.status = "validating" if api == "openai" else "in_progress"
            if fault == "hold":
                self._held.add(batch.id)
            self.batches[batch.id] = batch
        return batch

    def _send_batch(self, fake: FakeAPI, handler: BaseHTTPRequestHandler, batch_id: str) -> None:
        with self._lock:
            batch = self.batches.get(batch_id)
            if batch is None:
                raise _Refused(404, "not_found_error", f"No batch found with id '{batch_id}'.")
            if handler.command == "GET" and not batch.ended:
                batch.polls += 1
                if batch.polls > self.polls and batch.id not in self._held:
                    self._end(fake, batch)
                elif batch.api == "openai":
                    batch.status = "in_progress"
        body = _openai_batch(batch) if batch.api == "openai" else _anthropic_batch(batch, fake.anthropic_url)
        return fake._send(handler, 200, fake.mangled(f"{batch.api}-batch", body))

    def _end(self, fake: FakeAPI, batch: FakeBatch) -> None:
        """Run the batch's lines (under the lock) and produce its results."""
        batch.ended, batch.ended_at = True, time.time()
        fault = batch.fault
        if batch.api == "openai" and fault == "fail":
            batch.status = "failed"
            batch.errors = [{"code": "invalid_request", "message": "The batch could not be run (injected).",
                             "param": None, "line": None}]
            return
        run_upto = len(batch.lines) // 2 if fault == "expire" else (0 if fault == "cancel" else len(batch.lines))
        outputs: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for index, line in enumerate(batch.lines):
            request = _fake_request(batch.api, line)
            if index >= run_upto:
                result = _not_run(batch.api, line, "batch_cancelled" if fault == "cancel" else "batch_expired")
                errors.append(result)
                continue
            self.lines_run.append(request)
            line_fault = "500" if fault == "fail" else (self.line_fault(request) if self.line_fault else None)
            if line_fault is None:
                rejected = next((p for p in fake.reject_params if p in request.body), None)
                if rejected:
                    line_fault = f"400:{rejected}"
            if line_fault == "expired":
                errors.append(_not_run(batch.api, line, "batch_expired"))
            elif line_fault:
                errors.append(_line_error(batch.api, line, line_fault))
            else:
                outputs.append(_line_success(fake, batch.api, line, request))
        if batch.api == "anthropic":
            batch.status = "ended"
            batch.results = outputs + errors
            return
        batch.status = {"expire": "expired", "cancel": "cancelled"}.get(fault or "", "completed")
        batch.results = outputs + errors
        if outputs:
            batch.output_file_id = f"file-out-{batch.id}"
            self.files[batch.output_file_id] = _jsonl(fake, "openai", outputs)
        if errors:
            batch.error_file_id = f"file-err-{batch.id}"
            self.files[batch.error_file_id] = _jsonl(fake, "openai", errors)


class _Refused(Exception):
    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message


def _jsonl(fake: FakeAPI, api: str, lines: list[dict[str, Any]]) -> bytes:
    """Result lines as JSONL, each through the fake's hostile hook (bytes replace a line's text)."""
    out = []
    for line in lines:
        value = fake.mangled(f"{api}-batch-line", line)
        out.append(value if isinstance(value, bytes) else json.dumps(value).encode())
    return b"".join(part + b"\n" for part in out)


def _error_body(api: str, kind: str, message: str) -> dict[str, Any]:
    if api == "openai":
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return {"type": "error", "error": {"type": kind, "message": message}}


def _json(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        raise _Refused(400, "invalid_request_error", "invalid JSON body") from None
    if not isinstance(body, dict):
        raise _Refused(400, "invalid_request_error", "the body must be a JSON object")
    return body


def _multipart(content_type: str, raw: bytes) -> dict[str, bytes]:
    """The fields of a multipart/form-data body (what the SDK's files.create sends)."""
    if not content_type.startswith("multipart/form-data"):
        raise _Refused(400, "invalid_request_error", "expected multipart/form-data")
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw)
    fields: dict[str, bytes] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if name:
            fields[str(name)] = payload if isinstance(payload, bytes) else b""
    return fields


def _file_object(file_id: str, size: int, purpose: str, name: str) -> dict[str, Any]:
    return {"id": file_id, "object": "file", "bytes": size, "created_at": int(time.time()), "filename": name,
            "purpose": purpose, "status": "processed", "expires_at": None, "status_details": None}


def _fake_request(api: str, line: dict[str, Any]) -> FakeRequest:

    body = line.get("body" if api == "openai" else "params") or {}
    messages = body.get("messages", [])
    user = next((m.get("content") for m in messages if m.get("role") == "user"), "")
    if api == "openai":
        system = next((m.get("content") for m in messages if m.get("role") == "system"), "")
    else:
        system = body.get("system", "")
    return FakeRequest(api, body.get("model", ""), system if isinstance(system, str) else "",
                       user if isinstance(user, str) else json.dumps(user), body, "")


def _line_success(fake: FakeAPI, api: str, line: dict[str, Any], request: FakeRequest) -> dict[str, Any]:

    tokens_in = tokens(request.system + request.user)
    if api == "anthropic":
        return {"custom_id": line.get("custom_id"), "result": {"type": "succeeded", "message": {
            "id": f"msg_{line.get('custom_id')}", "type": "message", "role": "assistant",
            "model": fake.served_model or request.model,
            "content": [{"type": "text", "text": fake.answer(request, 0)}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": tokens_in, "output_tokens": 2}}}}
    count = request.n if fake.support_n else 1
    choices = [{"index": i, "finish_reason": "stop", "message": {"role": "assistant", "content": fake.answer(request, i)}}
               for i in range(count)]
    body: dict[str, Any] = {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
        "model": fake.served_model or request.model, "choices": choices,
        "usage": {"prompt_tokens": tokens_in, "completion_tokens": 2 * count, "total_tokens": tokens_in + 2 * count}}
    if fake.system_fingerprint is not None:
        body["system_fingerprint"] = fake.system_fingerprint
    return {"id": f"batch_req_{line.get('custom_id')}", "custom_id": line.get("custom_id"), "error": None,
            "response": {"status_code": 200, "request_id": f"req_{line.get('custom_id')}", "body": body}}


def _line_error(api: str, line: dict[str, Any], fault: str) -> dict[str, Any]:
    code, _, param = fault.partition(":")
    status = int(code) if code.isdigit() else 500
    kind, message = {
        400: ("invalid_request_error", f"Unsupported parameter: '{param}' is not supported with this model."
              if param else "Invalid request (injected)."),
        429: ("rate_limit_error", "Rate limit reached for requests"),
    }.get(status, ("server_error" if api == "openai" else "api_error", "The server had an error"))
    if api == "anthropic":
        return {"custom_id": line.get("custom_id"), "result": {"type": "errored", "error": {
            "type": "error", "error": {"type": kind, "message": message}}}}
    return {"id": f"batch_req_{line.get('custom_id')}", "custom_id": line.get("custom_id"), "error": None,
            "response": {"status_code": status, "request_id": "req_x", "body": {"error": {
                "message": message, "type": kind, "param": param or None, "code": None}}}}


def _not_run(api: str, line: dict[str, Any], code: str) -> dict[str, Any]:
    if api == "anthropic":
        return {"custom_id": line.get("custom_id"),
                "result": {"type": "canceled" if code == "batch_cancelled" else "expired"}}
    message = EXPIRED_MESSAGE if code == "batch_expired" else "This request was cancelled."
    return {"id": f"batch_req_{line.get('custom_id')}", "custom_id": line.get("custom_id"), "response": None,
            "error": {"code": code, "message": message}}


def _rfc3339(t: float | None) -> str | None:
    return datetime.fromtimestamp(t, tz=UTC).isoformat().replace("+00:00", "Z") if t else None


def _openai_batch(batch: FakeBatch) -> dict[str, Any]:
    done = sum(1 for r in batch.results if (r.get("response") or {}).get("status_code") == 200)
    ended = batch.ended_at and int(batch.ended_at)
    return {
        "id": batch.id, "object": "batch", "endpoint": "/v1/chat/completions",
        "errors": {"object": "list", "data": batch.errors} if batch.errors else None,
        "input_file_id": "file-in", "completion_window": "24h", "status": batch.status,
        "output_file_id": batch.output_file_id, "error_file_id": batch.error_file_id,
        "created_at": int(batch.created), "in_progress_at": int(batch.created), "expires_at": int(batch.expires_at),
        "finalizing_at": ended if batch.status == "completed" else None,
        "completed_at": ended if batch.status == "completed" else None,
        "failed_at": ended if batch.status == "failed" else None,
        "expired_at": ended if batch.status == "expired" else None,
        "cancelled_at": ended if batch.status == "cancelled" else None,
        "request_counts": {"total": len(batch.lines), "completed": done,
                           "failed": len(batch.results) - done if batch.ended else 0},
        "metadata": None,
    }


def _anthropic_batch(batch: FakeBatch, base_url: str) -> dict[str, Any]:
    kinds = [str((r.get("result") or {}).get("type")) for r in batch.results]
    return {
        "id": batch.id, "type": "message_batch", "processing_status": batch.status,
        "request_counts": {"processing": 0 if batch.ended else len(batch.lines),
                           "succeeded": kinds.count("succeeded"), "errored": kinds.count("errored"),
                           "canceled": kinds.count("canceled"), "expired": kinds.count("expired")},
        "created_at": _rfc3339(batch.created), "expires_at": _rfc3339(batch.expires_at),
        "ended_at": _rfc3339(batch.ended_at), "archived_at": None, "cancel_initiated_at": None,
        "results_url": f"{base_url}/v1/messages/batches/{batch.id}/results" if batch.ended else None,
    }
