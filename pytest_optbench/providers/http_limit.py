"""A bound on what one reply may bring into memory, through the SDK's own HTTP client.

The official SDKs read a reply's body whole before parsing it; a server that sends 300 MB
would take gigabytes. The client built here (``capped_client``) counts a body's bytes as
they arrive and stops reading at ``limit`` (``--optbench-max-reply``): the request fails
with ``ReplyTooLarge``, one line, not retried (the next try would bring the same). A body
whose Content-Length already says so is refused before it is read. Compressed bodies are
decompressed here, a bounded amount at a time (a gzip bomb expands no further than the
limit); only gzip and deflate are asked for, and a body in another encoding is refused.

The result files of a batch (OpenAI ``/files/{id}/content``, Anthropic ``.../results``)
are larger by nature: their successful bodies are not capped here, and are read line by
line by ``lines``, each line within the limit.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

from .remote import CallFailed

# The paths whose successful bodies are JSONL result files, read line by line.
RESULT_FILES = ("/content", "/results")
STEP = 1 << 20  # bytes decompressed at a time
ERROR_BODY = 64 * 1024  # bytes of an error reply's body read (the rest is cut)


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
        """The body as it arrives, decompressed here (gzip, deflate) within the limit."""

        def __init__(self, inner: Any, compressed: bool, cap: int | None, cut: bool = False) -> None:
            self.inner, self.cap, self.cut = inner, cap, cut
            self.decoder = zlib.decompressobj(47) if compressed else None  # 47: gzip or zlib header

        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            async for chunk in self.inner:
                for piece in self.decoded(chunk):
                    seen += len(piece)
                    if self.cap is not None and seen > self.cap:
                        if not self.cut:
                            raise ReplyTooLarge(self.cap)
                        yield piece[: len(piece) - (seen - self.cap)]  # an error's first words are enough
                        return
                    yield piece

        def decoded(self, chunk: bytes) -> Iterator[bytes]:
            """The chunk, decompressed at most STEP bytes at a time."""
            if self.decoder is None:
                yield chunk
                return
            data = chunk
            while data:
                piece = self.decoder.decompress(data, STEP)
                if piece:
                    yield piece
                data = self.decoder.unconsumed_tail

        async def aclose(self) -> None:
            await self.inner.aclose()

    async def cap(response: Any) -> None:
        # A result file is read line by line (lines), each line within the limit.
        whole = not (200 <= response.status_code < 300 and response.request.url.path.endswith(RESULT_FILES))
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("identity", "", "gzip", "deflate", "x-gzip"):
            await response.aclose()
            raise CallFailed(f"the reply is compressed as {encoding[:20]!r}, which was not asked for", retryable=False)
        compressed = encoding not in ("identity", "")
        if compressed:  # decompressed here, within bounds: a gzip bomb never expands whole
            del response.headers["content-encoding"]
        if response.status_code >= 400:
            # An error's status decides (a bad key stops the session, a 429 waits): its body is
            # cut at ERROR_BODY bytes, never refused.
            response.headers.pop("content-length", None)
            response.stream = Capped(response.stream, compressed, min(limit, ERROR_BODY), cut=True)
            return
        length = response.headers.get("content-length", "")
        if whole and length.isdigit() and int(length) > limit:
            await response.aclose()
            raise ReplyTooLarge(limit, int(length))
        response.stream = Capped(response.stream, compressed, limit if whole else None)

    return sdk.DefaultAsyncHttpxClient(timeout=timeout, event_hooks={"response": [cap]},
                                       headers={"Accept-Encoding": "gzip, deflate"})


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
