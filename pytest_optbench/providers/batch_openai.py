"""OpenAI's Batch API through the official SDK: ``client.files.create`` (the JSONL of
``/v1/chat/completions`` lines, purpose ``batch``), ``client.batches.create`` and
``retrieve``, and ``client.files.content`` for the output and error files.

A line is ``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}`` with
the body the real-time path would send (``n`` samples, temperature, token limit). Lines
that succeeded come back in the output file as ``{"custom_id", "response": {"status_code":
200, "body": <chat completion>}}``; the error file holds refused lines (``status_code``
4xx/5xx with ``body.error``) and lines the batch never ran (``response: null``, ``error:
{"code": "batch_expired" | "batch_cancelled"}``). Limits: 50,000 lines, 200 MB.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from ..prompts.modes import TEXT
from .batch_api import BatchClient, BatchLine, BatchState, LineResult, Rejection, dumps, retryable_status
from .openai_provider import OpenAIProvider
from .remote import NON_RETRYABLE_CODES, ApiRequest, served

ENDPOINT: Literal["/v1/chat/completions"] = "/v1/chat/completions"
ENDED = ("completed", "expired", "cancelled", "failed", "succeeded", "complete", "done")
ACTIVE = ("validating", "in_progress", "finalizing", "cancelling", "queued", "running", "pending", "created")
NOT_RUN = ("batch_expired", "batch_cancelled")


class OpenAIBatches(BatchClient):
    provider = "openai"
    max_lines = 50_000
    max_bytes = 200 * 1024 * 1024

    api: OpenAIProvider

    def body(self, request: ApiRequest) -> dict[str, Any]:
        """What the real-time path sends for this request, as the provider stands now (batch
        lines are text mode: json and logprobs prompts are asked in real time)."""
        return self.api.params(request, TEXT)

    def encode(self, line: BatchLine) -> bytes:
        return dumps({"custom_id": line.custom_id, "method": "POST", "url": ENDPOINT, "body": self.body(line.request)})

    async def submit(self, lines: Sequence[BatchLine]) -> BatchState:
        data = b"".join(self.encode(line) + b"\n" for line in lines)
        client = self.api.client
        try:
            uploaded = await client.files.create(file=("optbench-batch.jsonl", data, "application/jsonl"),
                                                 purpose="batch")
            batch = await client.batches.create(input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window="24h")
        except Exception as exc:  # noqa: BLE001 - classified, never swallowed
            raise self.failure(exc) from None
        return self._state(batch)

    async def retrieve(self, batch_id: str) -> BatchState:
        try:
            batch = await self.api.client.batches.retrieve(batch_id)
        except Exception as exc:  # noqa: BLE001
            raise self.failure(exc) from None
        return self._state(batch)

    async def results(self, batch_id: str) -> list[LineResult]:
        client = self.api.client
        try:
            batch = await client.batches.retrieve(batch_id)
            out: list[LineResult] = []
            for file_id in (batch.output_file_id, batch.error_file_id):
                if file_id:
                    content = await client.files.content(file_id)
                    out.extend(self._line(raw) for raw in content.text.splitlines() if raw.strip())
        except Exception as exc:  # noqa: BLE001
            raise self.failure(exc) from None
        return out

    def adapt(self, result: LineResult, request: ApiRequest) -> bool:
        sent = {"temperature": request.temperature, "max_tokens": request.max_tokens, "n": request.n}
        return bool(self.api._adapt(Rejection(result.param or "", result.error or ""), sent))

    def _state(self, batch: Any) -> BatchState:
        status = str(getattr(batch, "status", "") or "")
        counts = getattr(batch, "request_counts", None)
        errors = getattr(getattr(batch, "errors", None), "data", None) or []
        message = "; ".join(
            (f"line {e.line}: " if getattr(e, "line", None) else "") + str(getattr(e, "message", "") or e.code)
            for e in errors[:3]) or None
        # A server with its own words for "done" has ended once it names a result file.
        files = bool(getattr(batch, "output_file_id", None) or getattr(batch, "error_file_id", None))
        return BatchState(
            id=str(batch.id), status=status, ended=status in ENDED or (status not in ACTIVE and files),
            failed=status == "failed",
            expires_at=float(batch.expires_at) if getattr(batch, "expires_at", None) else None,
            total=int(getattr(counts, "total", 0) or 0), done=int(getattr(counts, "completed", 0) or 0),
            errored=int(getattr(counts, "failed", 0) or 0),
            message=self.redact(message)[:300] if message else None,
        )

    def _line(self, raw: str) -> LineResult:
        """One line of the output or error file; a line that cannot be read is an error."""
        try:
            data = json.loads(raw)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            return LineResult("", error="openai batch: an unreadable result line", retryable=True)
        custom_id = str(data.get("custom_id") or "")
        response, error = data.get("response"), data.get("error")
        if isinstance(response, dict):
            status = _int(response.get("status_code"))
            body = response.get("body")
            if isinstance(body, str):  # a server that sends the body as JSON text
                try:
                    body = json.loads(body)
                except ValueError:
                    body = None
            if status == 200 and isinstance(body, dict):
                choices = body.get("choices")
                if not isinstance(choices, list) or not choices:
                    return LineResult(custom_id, error="openai batch: the response has no choices", retryable=True)
                texts = [str(((c or {}).get("message") or {}).get("content") or "") for c in choices]
                usage = body.get("usage") or {}
                return LineResult(custom_id, texts, _int(usage.get("prompt_tokens")),
                                  _int(usage.get("completion_tokens")), served_model=served(body.get("model")),
                                  system_fingerprint=served(body.get("system_fingerprint")))
            detail = (body or {}).get("error") if isinstance(body, dict) else None
            detail = detail if isinstance(detail, dict) else {}
            message = str(detail.get("message") or detail.get("code") or "no message")
            text = f"{message} {detail.get('code') or ''}".lower()
            retryable = retryable_status(status) and not any(code in text for code in NON_RETRYABLE_CODES)
            return LineResult(custom_id, error=self.redact(f"openai batch: HTTP {status}: {message}")[:300],
                              retryable=retryable, param=str(detail.get("param") or "") or None)
        if isinstance(error, dict):
            code = str(error.get("code") or "")
            message = str(error.get("message") or code or "no message")
            if code in NOT_RUN:
                return LineResult(custom_id, error=f"openai batch: {code}", expired=True)
            return LineResult(custom_id, error=self.redact(f"openai batch: {message}")[:300], retryable=True)
        return LineResult(custom_id, error="openai batch: a result line with neither response nor error",
                          retryable=True)


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0
