"""Anthropic's Message Batches API through the official SDK: ``client.messages.batches.create``
(the requests in the body, each ``{"custom_id", "params"}`` with the Messages API
parameters), ``retrieve`` (``processing_status`` ``in_progress`` -> ``ended``) and
``results`` (JSONL from the batch's ``results_url``: each line ``succeeded`` with the message,
``errored`` with the error, or ``canceled`` / ``expired``). Limits: 100,000 requests, 256 MB.
The Messages API has no ``n``: one line per sample.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .anthropic_provider import AnthropicProvider
from .batch_api import BatchClient, BatchLine, BatchState, LineResult, dumps
from .remote import ApiRequest, served

RETRYABLE_TYPES = ("api_error", "overloaded_error", "rate_limit_error", "timeout_error")


class AnthropicBatches(BatchClient):
    provider = "anthropic"
    max_lines = 100_000
    max_bytes = 256 * 1024 * 1024

    api: AnthropicProvider

    def params(self, request: ApiRequest) -> dict[str, Any]:
        api = self.api
        params: dict[str, Any] = {
            "model": api.model, "system": request.system,
            "messages": [{"role": "user", "content": request.user}],
            "max_tokens": request.max_tokens or api.default_max_tokens,
        }
        if api.send_temperature:
            params["temperature"] = request.temperature
        return params

    def encode(self, line: BatchLine) -> bytes:
        return dumps({"custom_id": line.custom_id, "params": self.params(line.request)})

    async def submit(self, lines: Sequence[BatchLine]) -> BatchState:
        requests = [{"custom_id": line.custom_id, "params": self.params(line.request)} for line in lines]
        try:
            batch = await self.api.client.messages.batches.create(requests=requests)
        except Exception as exc:  # noqa: BLE001 - classified, never swallowed
            raise self.failure(exc) from None
        return self._state(batch)

    async def retrieve(self, batch_id: str) -> BatchState:
        try:
            batch = await self.api.client.messages.batches.retrieve(batch_id)
        except Exception as exc:  # noqa: BLE001
            raise self.failure(exc) from None
        return self._state(batch)

    async def results(self, batch_id: str) -> list[LineResult]:
        out: list[LineResult] = []
        try:
            decoder = await self.api.client.messages.batches.results(batch_id)
            async for line in decoder:
                out.append(self._line(line))
        except Exception as exc:  # noqa: BLE001
            raise self.failure(exc) from None
        return out

    def adapt(self, result: LineResult, request: ApiRequest) -> bool:
        if "temperature" not in (result.error or "").lower():
            return False
        if self.api.send_temperature:
            self.api.send_temperature = False
            self.api.adapted(f"{self.api.model}: the server rejected temperature, so it is no longer sent")
        return True

    def _state(self, batch: Any) -> BatchState:
        counts = getattr(batch, "request_counts", None)

        def count(name: str) -> int:
            return int(getattr(counts, name, 0) or 0)

        status = str(getattr(batch, "processing_status", "") or "")
        expires = getattr(batch, "expires_at", None)
        return BatchState(
            id=str(batch.id), status=status, ended=status == "ended" or bool(getattr(batch, "results_url", None)),
            expires_at=float(expires.timestamp()) if expires is not None and hasattr(expires, "timestamp") else None,
            total=sum(count(n) for n in ("processing", "succeeded", "errored", "canceled", "expired")),
            done=count("succeeded"), errored=count("errored") + count("canceled") + count("expired"),
        )

    def _line(self, line: Any) -> LineResult:
        custom_id = str(getattr(line, "custom_id", "") or "")
        result = getattr(line, "result", None)
        kind = str(getattr(result, "type", "") or "")
        if kind == "succeeded":
            message = getattr(result, "message", None)
            blocks = getattr(message, "content", None)
            if not isinstance(blocks, list):
                return LineResult(custom_id, error="anthropic batch: the message has no content", retryable=True)
            text = "".join(str(getattr(b, "text", "") or "") for b in blocks if getattr(b, "type", "") == "text")
            usage = getattr(message, "usage", None)
            return LineResult(custom_id, [text], int(getattr(usage, "input_tokens", 0) or 0),
                              int(getattr(usage, "output_tokens", 0) or 0),
                              served_model=served(getattr(message, "model", None)))
        if kind in ("expired", "canceled"):
            return LineResult(custom_id, error=f"anthropic batch: {kind}", expired=True)
        error = getattr(getattr(result, "error", None), "error", None)
        error_type = str(getattr(error, "type", "") or "error")
        message = str(getattr(error, "message", "") or error_type)
        return LineResult(custom_id, error=self.redact(f"anthropic batch: {error_type}: {message}")[:300],
                          retryable=error_type in RETRYABLE_TYPES)
