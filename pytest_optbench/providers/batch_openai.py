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

from collections.abc import Sequence
from typing import Any, Literal

from ..prompts.modes import TEXT
from . import http_limit, wire, wire_openai
from .batch_api import BatchClient, BatchLine, BatchState, LineResult, Rejection, dumps
from .openai_provider import OpenAIProvider
from .remote import ApiRequest, CallFailed

ENDPOINT: Literal["/v1/chat/completions"] = "/v1/chat/completions"


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
        """Upload the lines, create the batch; its state is read by a reader that cannot fail
        but for an unusable id, so the caller records the id before anything else happens."""
        data = b"".join(self.encode(line) + b"\n" for line in lines)
        client = self.api.client
        try:
            uploaded = await self._json(client.files.with_raw_response.create(
                file=("optbench-batch.jsonl", data, "application/jsonl"), purpose="batch"))
            file_id = wire.identifier(wire.mapping(uploaded, "the uploaded file").get("id"), "the uploaded file's id")
            batch = await self._json(client.batches.with_raw_response.create(
                input_file_id=file_id, endpoint=ENDPOINT, completion_window="24h"))
        except wire.BadReply as exc:
            raise CallFailed(f"openai batch: unusable response ({exc})", retryable=False) from None
        except Exception as exc:  # noqa: BLE001 - classified, never swallowed
            raise self.failure(exc) from None
        return self._state(batch)

    async def retrieve(self, batch_id: str) -> BatchState:
        return self._state(await self._retrieve(batch_id))

    async def _retrieve(self, batch_id: str) -> Any:
        try:
            return await self._json(self.api.client.batches.with_raw_response.retrieve(batch_id))
        except wire.BadReply as exc:
            raise CallFailed(f"openai batch: unusable response ({exc})", retryable=True) from None
        except Exception as exc:  # noqa: BLE001
            raise self.failure(exc) from None

    async def results(self, batch_id: str) -> list[LineResult]:
        """The lines of the output and error files, streamed, each read on its own."""
        files = wire_openai.result_files(await self._retrieve(batch_id))
        out: list[LineResult] = []
        try:
            for file_id in files:
                out += await self.read_lines(f"/files/{file_id}/content", self._line, {})
        except Exception as exc:  # noqa: BLE001
            raise self.failure(exc) from None
        return out

    async def _json(self, call: Any) -> Any:
        return wire.load(await http_limit.body(await call))

    def adapt(self, result: LineResult, request: ApiRequest) -> bool:
        sent = {"temperature": request.temperature, "max_tokens": request.max_tokens, "n": request.n}
        return bool(self.api._adapt(Rejection(result.param or "", result.error or ""), sent))

    def wire_state(self, batch: Any) -> tuple[BatchState, str | None]:
        return wire_openai.batch_state(batch)

    def wire_line(self, raw: bytes | str) -> LineResult:
        """One line of the output or error file."""
        return wire_openai.batch_line(raw)
