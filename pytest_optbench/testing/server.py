"""A local fake of the OpenAI and Anthropic HTTP APIs, for tests that never touch the internet.

It speaks the real wire protocol (``POST /v1/chat/completions``, ``POST /v1/completions`` and
``POST /v1/messages``), so the official SDKs talk to it unchanged, and it injects the faults
real servers produce: 429 with Retry-After, 500, slow answers (timeouts), garbage bodies, auth
errors, rejected parameters, replies cut off at the token limit (``cut_off``). It also runs
both batch APIs (OpenAI's Files + Batches, Anthropic's Message Batches; ``testing_batches.py``)
with batch faults: expiry, failure, partial failure. Loopback only.

Elicitation modes: a request for structured output in the words of ``server_kind`` makes
the reply ``{"probability": N}`` (``structured=False``: ignored, prose as a server without
it): ``openai`` takes the JSON-schema ``response_format`` and rejects parameters it does not
know (``grammar``, ``structured_outputs``) as OpenAI does; ``llama.cpp`` also takes ``grammar``
and ``json_schema`` (both at once is its 400); ``vllm`` takes ``structured_outputs`` from
``vllm_version`` 0.12 on and ``guided_regex`` before it, ignoring the other as vLLM ignores
unknown fields; ``ollama`` takes ``response_format`` on the chat endpoint only. ``GET
/v1/models`` says who serves (``owned_by``), as do vLLM's ``/version`` and Ollama's
``/api/version`` (GETs are listed in ``gets``, not ``requests``), and llama.cpp's ``/props`` its
``chat_template``;
a forced Anthropic tool gets a ``tool_use`` block; ``logprobs`` returns the answer's tokens
with ``top_logprobs`` in OpenAI's chat shape (also llama.cpp's, on both endpoints) or the
legacy completions shape, tokenized as ``token_style`` says (``testing_logprobs.py``):
``whole`` (one token per number, OpenAI), ``digits`` (one per digit, SmolLM2), ``gemma`` (a
blank token, then digits), ``bpe`` ("Ġ65", no bytes), ``sentencepiece`` ("▁65"), ``bytes``
(byte-fallback tokens, the text only in ``bytes``), or ``none`` (the server ignores
``logprobs``). ``numbers_for`` gives the model's distribution over 0-100 per request: a
digit-style completions prompt that ends with "Answer: <digits>" then gets the positions
after those digits, as a real model continues its own prefix.

    with FakeAPI(answer=lambda req: "60") as api:
        ... --model openai:fake --base-url {api.openai_url}
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from .batches import FakeBatches
from .logprobs import (
    TOKEN_STYLES,
    FakePosition,
    as_json,
    chat_entry,
    digit_positions,
    display,
    fake_positions,
    legacy_logprobs,
)
from .requests import FakeRequest, tokens

__all__ = ["TOKEN_STYLES", "FakeAPI", "FakePosition", "FakeRequest", "Streamed", "fake_positions", "huge_reply"]

FAULTS = ("429", "500", "timeout", "garbage", "auth", "quota", "overloaded", "badjson", "badrequest")


@dataclass(frozen=True)
class Streamed:
    """A body sent in chunks (chunked transfer encoding), ``delay`` seconds before each: a
    reply larger than memory, made as it is sent, or one that trickles in."""

    chunks: Iterable[bytes]
    delay: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()  # e.g. (("content-encoding", "gzip"),)


def huge_reply(size: int, head: bytes = b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "',
               tail: bytes = b'"}, "finish_reason": "stop"}]}', fill: bytes = b"7") -> Streamed:
    """A JSON reply of about ``size`` bytes, made while it is sent (the server holds 1 MiB)."""
    block = fill * (1 << 20)

    def chunks() -> Iterable[bytes]:
        yield head
        left = max(0, size - len(head) - len(tail))
        while left > 0:
            yield block[:left]
            left -= len(block)
        yield tail

    return Streamed(chunks())


def default_answer(request: FakeRequest, index: int) -> str:
    """A deterministic number from the user text, varied by sample index."""
    digest = hashlib.sha256(f"{request.user}|{index}".encode()).digest()
    return str(20 + digest[0] % 60)


@dataclass
class FakeAPI:
    """Start with ``with FakeAPI(...) as api`` (or ``start()``/``stop()``)."""

    answer: Callable[[FakeRequest, int], str] = default_answer
    latency: float = 0.0
    faults: list[str] = field(default_factory=list)  # consumed one per request, in order
    fault_for: Callable[[FakeRequest], str | None] | None = None  # or decided per request
    retry_after: str | None = "0"  # Retry-After header sent with a 429
    support_n: bool = True  # False: ignore n and return one choice (as some local servers do)
    reject_params: tuple[str, ...] = ()  # e.g. ("temperature", "max_tokens"): 400 when sent
    max_n: int | None = None  # a larger n gets llama.cpp's 400 (its cap is its number of slots)
    timeout_sleep: float = 5.0
    # Which replies were cut off at the token limit: OpenAI finish_reason "length", Anthropic
    # stop_reason "max_tokens" (else "stop" / "end_turn"); called with the request and sample index.
    cut_off: Callable[[FakeRequest, int], bool] | None = None
    structured: bool = True  # False: ignore response_format / json_schema (prose comes back)
    max_top_logprobs: int | None = None  # more alternatives asked get a 400 stating the cap (vLLM's words)
    token_style: str = "whole"  # how logprobs tokenize a number (TOKEN_STYLES)
    completions_shape: str = "openai"  # logprobs on /completions: "openai" (legacy) or "llama.cpp"
    # Or the positions themselves, per request and sample: the reply is their tokens joined.
    logprobs_for: Callable[[FakeRequest, int], list[FakePosition]] | None = None
    # Or the model's distribution over 0-100 (digit styles): prefixes in the prompt are continued.
    numbers_for: Callable[[FakeRequest], dict[int, float]] | None = None
    server_kind: str = "openai"  # openai | llama.cpp | vllm | ollama: its structured-output words
    vllm_version: str = "0.12.0"
    # llama.cpp's GET /props: the chat template it applies (its ChatML fallback for a model
    # file without one: providers.openai_provider.LLAMA_CPP_CHATML_FALLBACK).
    chat_template: str = "{{ messages[0]['content'] }}"
    gets: list[str] = field(default_factory=list)
    port_number: int = 0  # 0: any free port
    # What a response says served it: the model id (default: the one asked for, as OpenAI's
    # dated ids are not) and OpenAI's system_fingerprint (default: none sent).
    served_model: str | None = None
    system_fingerprint: str | None = None
    requests: list[FakeRequest] = field(default_factory=list)
    batches: FakeBatches = field(default_factory=FakeBatches)  # the batch APIs (testing_batches.py)
    # A hostile server: called with what is about to be sent and its JSON value, returns what
    # to send instead (any JSON value, raw bytes, or a ``Streamed`` body). ``what``: "openai",
    # "completions", "anthropic" (real-time replies), "openai-batch", "anthropic-batch" (batch
    # objects, on create and retrieve), "openai-batch-line", "anthropic-batch-line" (one line
    # of a batch's results; bytes replace the line's text), "<api>-error" (the body of an
    # injected fault: 429, 500, auth ...).
    mangle: Callable[[str, Any], Any] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- lifecycle ------------------------------------------------------------------------

    def reconfigure(self, **changes: Any) -> Self:
        """A running server made as ``FakeAPI(**changes)`` would be, port aside: every setting
        back to its default or the given value, no requests seen, fresh batch state. Tests share
        one server per module (tests/conftest.py: ``shared_server``) and call this between cases."""
        fresh = FakeAPI(**changes)
        with self._lock:
            for name in (f.name for f in fields(self) if f.name not in ("port_number", "_lock")):
                setattr(self, name, getattr(fresh, name))
        return self

    def start(self) -> Self:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # http.server sends headers and body apart: with Nagle on, every answer waits
            # ~40 ms on loopback for the client's delayed ACK.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                api._handle(self, raw)

            def do_GET(self) -> None:
                api._handle(self, b"")

        class QuietServer(ThreadingHTTPServer):
            request_queue_size = 128  # a burst of concurrent connections must not overflow
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # clients that time out and hang up are part of the tests

        self._server = QuietServer(("127.0.0.1", self.port_number), Handler)
        self._server.daemon_threads = True
        # A short poll: stop() waits for the serving loop to notice, up to one interval.
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # -- protocol -------------------------------------------------------------------------

    def _handle(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        path = handler.path.split("?")[0]
        if handler.command == "GET" and (found := self._get(path)) is not None:
            with self._lock:
                self.gets.append(path)
            return self._send(handler, *found)
        if self.batches.handles(handler.command, path):
            return self.batches.handle(self, handler, handler.command, path, raw)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return self._send(handler, 400, {"error": {"message": "invalid JSON body"}})
        if path.endswith("/completions") and not path.endswith("/chat/completions"):
            prompt = body.get("prompt", "")
            request = FakeRequest("completions", body.get("model", ""), "", prompt if isinstance(prompt, str) else
                                  json.dumps(prompt), body, handler.headers.get("authorization", ""))
        elif path.endswith("/chat/completions"):
            messages = body.get("messages", [])
            system = next((m["content"] for m in messages if m.get("role") == "system"), "")
            user = next((m["content"] for m in messages if m.get("role") == "user"), "")
            request = FakeRequest("openai", body.get("model", ""), system, user, body,
                                  handler.headers.get("authorization", ""))
        elif path.endswith("/messages"):
            messages = body.get("messages", [])
            user = next((m["content"] for m in messages if m.get("role") == "user"), "")
            system = body.get("system", "")
            # The SDK sends the key as x-api-key (older releases) or as a bearer token.
            credential = handler.headers.get("x-api-key") or handler.headers.get("authorization") or ""
            request = FakeRequest("anthropic", body.get("model", ""), system if isinstance(system, str) else "",
                                  user if isinstance(user, str) else json.dumps(user), body, credential or "")
        else:
            return self._send(handler, 404, {"error": {"message": f"no route {path}"}})
        with self._lock:
            self.requests.append(request)
            fault = self.faults.pop(0) if self.faults else None
        if fault is None and self.fault_for is not None:
            fault = self.fault_for(request)
        if self.latency:
            time.sleep(self.latency)
        if fault:
            return self._fault(handler, request, fault)
        for param in self.reject_params:
            if param in body:
                return self._send(handler, 400, {"error": {
                    "message": f"Unsupported parameter: '{param}' is not supported with this model.",
                    "type": "invalid_request_error", "param": param, "code": "unsupported_parameter"}})
        if self.max_top_logprobs is not None and request.top_logprobs > self.max_top_logprobs:
            return self._send(handler, 400, {"error": {
                "code": 400, "type": "BadRequestError", "param": None,
                "message": f"Requested top_logprobs ({request.top_logprobs}) exceeds maximum allowed value "
                           f"({self.max_top_logprobs})"}})
        if (refusal := self._refuse_structure(request)) is not None:
            return self._send(handler, 400, {"error": {"message": refusal, "type": "invalid_request_error",
                                                       "param": None, "code": None}})
        if request.api != "anthropic" and self.max_n is not None and request.n > self.max_n:
            return self._send(handler, 400, {"error": {
                "code": 400, "type": "invalid_request_error",
                "message": f"Field 'n': Value must be between 1 <= value <= {self.max_n}, but got {request.n}"}})
        if request.api in ("openai", "completions"):
            count = request.n if self.support_n else 1
            choices = [self._choice(request, i) for i in range(count)]
            reply: dict[str, Any] = {
                "id": "chatcmpl-fake", "object": "chat.completion" if request.api == "openai" else "text_completion",
                "created": int(time.time()), "model": self.served_model or request.model, "choices": choices,
                "usage": {"prompt_tokens": tokens(request.system + request.user),
                          "completion_tokens": 2 * count,
                          "total_tokens": tokens(request.system + request.user) + 2 * count},
            }
            if self.system_fingerprint is not None:
                reply["system_fingerprint"] = self.system_fingerprint
            return self._reply(handler, request.api, reply)
        text = self.answer(request, 0)
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        stop = "max_tokens" if self._cut_off(request, 0) else "end_turn"
        tool = request.body.get("tool_choice")
        if isinstance(tool, dict) and tool.get("type") == "tool" and self.structured:
            content = [{"type": "tool_use", "id": "toolu_fake", "name": tool.get("name", "answer"),
                        "input": as_json(text, self._reasoned(request))}]
            stop = "tool_use"
        return self._reply(handler, "anthropic", {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": self.served_model or request.model,
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": tokens(request.system + request.user), "output_tokens": 2},
        })

    def _reply(self, handler: BaseHTTPRequestHandler, what: str, body: Any) -> None:
        return self._send(handler, 200, self.mangled(what, body))

    def mangled(self, what: str, body: Any) -> Any:
        """What the hostile hook makes of a reply (the reply itself without one)."""
        return body if self.mangle is None else self.mangle(what, body)

    def _choice(self, request: FakeRequest, index: int) -> dict[str, Any]:
        reason = "length" if self._cut_off(request, index) else "stop"
        positions: list[FakePosition] | None = None
        top = request.top_logprobs
        if self.logprobs_for is not None and top:
            positions = self.logprobs_for(request, index)
            text = "".join(display(p[0]) for p in positions)
        elif self.numbers_for is not None and top and self.token_style in ("digits", "gemma"):
            positions = self._continued(request)
            text = "".join(display(p[0]) for p in positions)
        else:
            text = self.answer(request, index)
            if self._structured(request):
                text = json.dumps(as_json(text, self._reasoned(request)))
            elif top and self.token_style != "none":
                positions = fake_positions(text, self.token_style)
                text = "".join(display(p[0]) for p in positions)
        choice: dict[str, Any] = {"index": index, "finish_reason": reason}
        if request.api == "openai":
            choice["message"] = {"role": "assistant", "content": text}
        else:
            choice["text"] = text
        if positions is not None and self.token_style != "none":
            limited = [(t, lp, alts[:top]) for t, lp, alts in positions]
            if request.api == "completions" and self.completions_shape == "openai":
                choice["logprobs"] = legacy_logprobs(limited)
            else:
                choice["logprobs"] = {"content": [chat_entry(t, lp, alts, self.token_style) for t, lp, alts in limited],
                                      "refusal": None}
        else:
            choice["logprobs"] = None
        return choice

    def _get(self, path: str) -> tuple[int, dict[str, Any]] | None:
        """GET /v1/models (who serves: ``owned_by``), llama.cpp's /props, vLLM's /version, Ollama's
        /api/version."""
        if path.endswith("/models"):
            owner = {"llama.cpp": "llamacpp", "vllm": "vllm", "ollama": "library"}.get(self.server_kind, "system")
            return 200, {"object": "list", "data": [{"id": "fake", "object": "model", "created": 0, "owned_by": owner}]}
        if path == "/props" and self.server_kind == "llama.cpp":
            return 200, {"chat_template": self.chat_template, "bos_token": "<bos>", "eos_token": "<eos>"}
        if path == "/version" and self.server_kind == "vllm":
            return 200, {"version": self.vllm_version}
        if path == "/api/version" and self.server_kind == "ollama":
            return 200, {"version": "0.12.6"}
        return None

    def _legacy_vllm(self) -> bool:
        major, minor = (int(x) for x in self.vllm_version.split(".")[:2])
        return (major, minor) < (0, 12)

    def _refuse_structure(self, request: FakeRequest) -> str | None:
        """The 400s real servers give: OpenAI for parameters it does not know, llama.cpp
        for a grammar and a schema at once."""
        body = request.body
        if self.server_kind == "openai" and request.api != "anthropic":
            for name in ("grammar", "json_schema", "structured_outputs", "guided_regex", "guided_json"):
                if name in body:
                    return f"Unrecognized request argument supplied: {name}"
        if self.server_kind == "llama.cpp" and body.get("grammar") and (
                body.get("json_schema") or body.get("response_format")):
            return "Cannot use both json_schema and grammar"
        return None

    def _structured(self, request: FakeRequest) -> bool:
        """Did the request ask for the answer object in words this server honours?"""
        if not self.structured:
            return False
        body = request.body
        fmt = body.get("response_format")
        schema = isinstance(fmt, dict) and fmt.get("type") in ("json_schema", "json_object")
        if self.server_kind == "llama.cpp":
            return bool(schema or body.get("grammar") or body.get("json_schema"))
        if self.server_kind == "vllm":
            words = body.get("guided_regex") if self._legacy_vllm() else body.get("structured_outputs")
            return bool(schema or words)
        if self.server_kind == "ollama":
            return bool(schema and request.api == "openai")
        return bool(schema)

    @staticmethod
    def _reasoned(request: FakeRequest) -> bool:
        """Does the requested shape (schema, grammar, regex or tool) put a reasoning first?"""
        body = request.body
        shapes = [body.get(name) for name in ("response_format", "grammar", "json_schema", "structured_outputs",
                                              "guided_regex", "guided_json", "tools")]
        return "reasoning" in json.dumps(shapes)  # the bare shapes never name one

    def _continued(self, request: FakeRequest) -> list[FakePosition]:
        """Digit positions of the model's distribution, after the digits the prompt ends with."""
        assert self.numbers_for is not None
        numbers = self.numbers_for(request)
        prompt = request.user if request.api == "completions" else ""
        tail = prompt.rsplit("Answer:", 1)[-1] if "Answer:" in prompt else ""
        prefix = tail.strip()
        if prefix and not prefix.isdigit():
            prefix = ""
        start: list[FakePosition] = []
        if not prefix and self.token_style == "gemma":
            start = [(" ", math.log(0.9), [(" ", math.log(0.9)), (" The", math.log(0.1))])]
        return start + digit_positions(numbers, 0.1, self.token_style, prefix)

    def _cut_off(self, request: FakeRequest, index: int) -> bool:
        return bool(self.cut_off and self.cut_off(request, index))

    def _fault(self, handler: BaseHTTPRequestHandler, request: FakeRequest, fault: str) -> None:
        if fault == "timeout":
            time.sleep(self.timeout_sleep)
            return self._send(handler, 200, {"error": "too late"})
        if fault == "garbage":
            return self._send(handler, 200, b"<html>upstream proxy error</html>", content_type="text/html")
        if fault == "badjson":
            return self._send(handler, 200, {"unexpected": "shape"})
        status, kind, message, headers = {
            "429": (429, "rate_limit_error", "Rate limit reached for requests", {"retry-after": self.retry_after}),
            "quota": (429, "insufficient_quota", "You exceeded your current quota (insufficient_quota)", {}),
            "500": (500, "server_error", "The server had an error", {}),
            "overloaded": (529, "overloaded_error", "Overloaded", {}),
            "auth": (401, "authentication_error", "Incorrect API key provided", {}),
            "badrequest": (400, "invalid_request_error", "This prompt was refused by the content filter", {}),
        }[fault]
        body = ({"error": {"message": message, "type": kind, "code": kind}} if request.api == "openai"
                else {"type": "error", "error": {"type": kind, "message": message}})
        return self._send(handler, status, self.mangled(f"{request.api}-error", body),
                          headers={k: v for k, v in headers.items() if v is not None})

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, body: Any, content_type: str = "application/json",
              headers: dict[str, str] | None = None) -> None:
        try:
            handler.send_response(status)
            handler.send_header("content-type", content_type)
            for name, value in (headers or {}).items():
                handler.send_header(name, value)
            if isinstance(body, Streamed):
                for name, value in body.headers:
                    handler.send_header(name, value)
                handler.send_header("transfer-encoding", "chunked")
                handler.end_headers()
                for chunk in body.chunks:
                    if body.delay:
                        time.sleep(body.delay)
                    if chunk:
                        handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        handler.wfile.flush()
                handler.wfile.write(b"0\r\n\r\n")
                return
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            handler.send_header("content-length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test, a reply too large to read)
