"""A bound on what one reply may bring into memory, through the SDK's own HTTP client.

The official SDKs read a reply's body whole before parsing it; a server that sends 300 MB
would take gigabytes. The client built here (``capped_client``) counts a body's bytes as
they arrive and stops reading at ``limit`` (``--optbench-max-reply``): the request fails
with ``ReplyTooLarge``, one line, not retried (the next try would bring the same). A body
whose Content-Length already says so is refused before it is read.

The result files of a batch (OpenAI ``/files/{id}/content``, Anthropic ``.../results``)
are larger by nature: their successful bodies are not capped here, and are read line by
line by ``lines``, each line within the limit.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator
from typing import Any

from .remote import CallFailed

# The paths whose successful bodies are JSONL result files, read line by line.
RESULT_FILES = ("/content", "/results")


class ReplyTooLarge(CallFailed):
    """A reply body beyond the limit: the answer fails; asking again would bring the same."""

    def __init__(self, limit: int, size: int | None = None) -> None:
        said = f" (it says {size:,} bytes)" if size else ""
        super().__init__(f"the reply is larger than {megabytes(limit)}{said} (--optbench-max-reply); "
                         "it was not read", retryable=False)
        self.limit = limit


def megabytes(size: int) -> str:
    return f"{size / 1e6:g} MB"


def http_module(sdk: Any) -> Any:
    """The HTTP library the SDK is built on (httpx, or the httpx2 of newer releases)."""
    base = importlib.import_module(f"{sdk.__name__}._base_client")
    return getattr(base, "httpx2", None) or base.httpx


def capped_client(sdk: Any, limit: int, timeout: float) -> Any:
    """The SDK's default async HTTP client, every reply body read within ``limit`` bytes."""
    httpx = http_module(sdk)

    class Capped(httpx.AsyncByteStream):  # type: ignore[misc, name-defined]
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            async for chunk in self.inner:
                seen += len(chunk)
                if seen > limit:
                    raise ReplyTooLarge(limit)
                yield chunk

        async def aclose(self) -> None:
            await self.inner.aclose()

    async def cap(response: Any) -> None:
        if 200 <= response.status_code < 300 and response.request.url.path.endswith(RESULT_FILES):
            return  # a result file: read line by line (lines)
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > limit:
            await response.aclose()
            raise ReplyTooLarge(limit, int(length))
        response.stream = Capped(response.stream)

    return sdk.DefaultAsyncHttpxClient(timeout=timeout, event_hooks={"response": [cap]})


async def body(raw_response: Any) -> bytes:
    """The body of an SDK raw response (``with_raw_response``), read within the cap."""
    http = getattr(raw_response, "http_response", raw_response)
    return bytes(await http.aread())


async def lines(chunks: AsyncIterator[bytes], limit: int) -> AsyncIterator[bytes | None]:
    """The lines of a JSONL body as they arrive; a line longer than ``limit`` bytes is not
    kept: ``None`` stands for it (its answer fails; the other lines are read)."""
    buffer = bytearray()
    overlong = False
    async for chunk in chunks:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                if not overlong:
                    buffer += chunk[start:]
                    if len(buffer) > limit:
                        overlong, buffer = True, bytearray()
                break
            if overlong:
                yield None
            elif buffer or end > start:
                buffer += chunk[start:end]
                if len(buffer) > limit:
                    yield None
                elif bytes(buffer).strip():
                    yield bytes(buffer)
            buffer, overlong = bytearray(), False
            start = end + 1
    if overlong:
        yield None
    elif bytes(buffer).strip():
        yield bytes(buffer)
