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

from . import http_limit, wire, wire_anthropic
from .anthropic_provider import AnthropicProvider
from .batch_api import BatchClient, BatchLine, BatchState, LineResult, dumps
from .remote import ApiRequest, CallFailed

RETRYABLE_TYPES = wire_anthropic.RETRYABLE_TYPES


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
            batch = await self._json(self.api.client.messages.batches.with_raw_response.create(requests=requests))
        except wire.BadReply as exc:
            raise CallFailed(f"anthropic batch: unusable response ({exc})", retryable=False) from None
        except Exception as exc:  # noqa: BLE001 - classified, never swallowed
            raise self.failure(exc) from None
        return self._state(batch)

    async def retrieve(self, batch_id: str) -> BatchState:
        try:
            batch = await self._json(self.api.client.messages.batches.with_raw_response.retrieve(batch_id))
        except wire.BadReply as exc:
            raise CallFailed(f"anthropic batch: unusable response ({exc})", retryable=True) from None
        except Exception as exc:  # noqa: BLE001
            raise self.failure(exc) from None
        return self._state(batch)

    async def results(self, batch_id: str) -> list[LineResult]:
        """The result lines, streamed from the batch's results path on the API's own host
        (whatever ``results_url`` says: a key is never sent elsewhere)."""
        try:
            return await self.read_lines(f"/v1/messages/batches/{batch_id}/results", self._line,
                                         {"Accept": "application/binary"})
        except Exception as exc:  # noqa: BLE001
            raise self.failure(exc) from None

    async def _json(self, call: Any) -> Any:
        return wire.load(await http_limit.body(await call))

    def adapt(self, result: LineResult, request: ApiRequest) -> bool:
        if "temperature" not in (result.error or "").lower():
            return False
        if self.api.send_temperature:
            self.api.send_temperature = False
            self.api.adapted(f"{self.api.model}: the server rejected temperature, so it is no longer sent")
        return True

    def wire_state(self, batch: Any) -> tuple[BatchState, str | None]:
        return wire_anthropic.batch_state(batch)

    def wire_line(self, raw: bytes | str) -> LineResult:
        return wire_anthropic.batch_line(raw)
