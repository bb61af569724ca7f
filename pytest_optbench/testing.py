"""A local fake of the OpenAI and Anthropic HTTP APIs, for tests that never touch the internet.

It speaks the real wire protocol (``POST /v1/chat/completions``, ``POST /v1/completions`` and
``POST /v1/messages``), so the official SDKs talk to it unchanged, and it injects the faults
real servers produce: 429 with Retry-After, 500, slow answers (timeouts), garbage bodies, auth
errors, rejected parameters, replies cut off at the token limit (``cut_off``). Loopback only.

Elicitation modes: a JSON-schema ``response_format`` (or llama.cpp's ``json_schema``) makes
the reply ``{"probability": N}`` (``structured=False``: ignored, prose as a server without it);
a forced Anthropic tool gets a ``tool_use`` block; ``logprobs`` returns the answer's tokens
with ``top_logprobs`` in OpenAI's chat shape (also llama.cpp's, on both endpoints) or the
legacy completions shape, tokenized as ``token_style`` says: ``whole`` (one token per
number, OpenAI), ``digits`` (one per digit, SmolLM2), ``gemma`` (a blank token, then
digits), ``bpe`` ("Ġ65", no bytes), ``sentencepiece`` ("▁65"), ``bytes`` (byte-fallback
tokens, the text only in ``bytes``), or ``none`` (the server ignores ``logprobs``).

    with FakeAPI(answer=lambda req: "60") as api:
        ... --model openai:fake --base-url {api.openai_url}
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

FAULTS = ("429", "500", "timeout", "garbage", "auth", "quota", "overloaded", "badjson")
TOKEN_STYLES = ("whole", "digits", "gemma", "bpe", "sentencepiece", "bytes", "none")
# (token, logprob, [(alternative, logprob), ...]) per generated position
FakePosition = tuple[str, float, list[tuple[str, float]]]


@dataclass
class FakeRequest:
    api: str  # "openai", "completions" or "anthropic"
    model: str
    system: str
    user: str
    body: dict[str, Any]
    authorization: str  # the credential header as sent, to check keys are sent, not stored

    @property
    def n(self) -> int:
        return int(self.body.get("n", 1) or 1)

    @property
    def structured(self) -> bool:
        """Asked for JSON fitting a schema (response_format, json_schema or a forced tool)."""
        fmt = self.body.get("response_format")
        return bool((isinstance(fmt, dict) and fmt.get("type") in ("json_schema", "json_object"))
                    or self.body.get("json_schema") or self.body.get("tool_choice"))

    @property
    def top_logprobs(self) -> int:
        """Alternatives asked per token (0: no logprobs asked)."""
        if self.api == "completions":
            value = self.body.get("logprobs")
            return int(value) if isinstance(value, int) and not isinstance(value, bool) else 0
        return int(self.body.get("top_logprobs") or 0) if self.body.get("logprobs") else 0


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
    port_number: int = 0  # 0: any free port
    requests: list[FakeRequest] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- lifecycle ------------------------------------------------------------------------

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

        class QuietServer(ThreadingHTTPServer):
            request_queue_size = 128  # a burst of concurrent connections must not overflow
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # clients that time out and hang up are part of the tests

        self._server = QuietServer(("127.0.0.1", self.port_number), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
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
        if request.api != "anthropic" and self.max_n is not None and request.n > self.max_n:
            return self._send(handler, 400, {"error": {
                "code": 400, "type": "invalid_request_error",
                "message": f"Field 'n': Value must be between 1 <= value <= {self.max_n}, but got {request.n}"}})
        if request.api in ("openai", "completions"):
            count = request.n if self.support_n else 1
            choices = [self._choice(request, i) for i in range(count)]
            return self._send(handler, 200, {
                "id": "chatcmpl-fake", "object": "chat.completion" if request.api == "openai" else "text_completion",
                "created": int(time.time()), "model": request.model, "choices": choices,
                "usage": {"prompt_tokens": _tokens(request.system + request.user),
                          "completion_tokens": 2 * count,
                          "total_tokens": _tokens(request.system + request.user) + 2 * count},
            })
        text = self.answer(request, 0)
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        stop = "max_tokens" if self._cut_off(request, 0) else "end_turn"
        tool = request.body.get("tool_choice")
        if isinstance(tool, dict) and tool.get("type") == "tool" and self.structured:
            content = [{"type": "tool_use", "id": "toolu_fake", "name": tool.get("name", "answer"),
                        "input": _as_json(text)}]
            stop = "tool_use"
        return self._send(handler, 200, {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": request.model,
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": _tokens(request.system + request.user), "output_tokens": 2},
        })

    def _choice(self, request: FakeRequest, index: int) -> dict[str, Any]:
        reason = "length" if self._cut_off(request, index) else "stop"
        positions: list[FakePosition] | None = None
        top = request.top_logprobs
        if self.logprobs_for is not None and top:
            positions = self.logprobs_for(request, index)
            text = "".join(_display(p[0]) for p in positions)
        else:
            text = self.answer(request, index)
            if request.structured and self.structured:
                text = json.dumps(_as_json(text))
            elif top and self.token_style != "none":
                positions = fake_positions(text, self.token_style)
                text = "".join(_display(p[0]) for p in positions)
        choice: dict[str, Any] = {"index": index, "finish_reason": reason}
        if request.api == "openai":
            choice["message"] = {"role": "assistant", "content": text}
        else:
            choice["text"] = text
        if positions is not None and self.token_style != "none":
            limited = [(t, lp, alts[:top]) for t, lp, alts in positions]
            if request.api == "completions" and self.completions_shape == "openai":
                choice["logprobs"] = _legacy_logprobs(limited)
            else:
                choice["logprobs"] = {"content": [_chat_entry(t, lp, alts, self.token_style) for t, lp, alts in limited],
                                      "refusal": None}
        else:
            choice["logprobs"] = None
        return choice

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
        }[fault]
        body = ({"error": {"message": message, "type": kind, "code": kind}} if request.api == "openai"
                else {"type": "error", "error": {"type": kind, "message": message}})
        return self._send(handler, status, body, headers={k: v for k, v in headers.items() if v is not None})

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, body: Any, content_type: str = "application/json",
              headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            handler.send_response(status)
            handler.send_header("content-type", content_type)
            handler.send_header("content-length", str(len(data)))
            for name, value in (headers or {}).items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)


def _as_json(text: str) -> dict[str, Any]:
    """The answer a schema-following server would send: the number of a bare-number reply."""
    stripped = text.strip().rstrip("%")
    try:
        return {"probability": int(float(stripped))}
    except ValueError:
        return {"probability": 50} if not stripped.startswith("{") else json.loads(text)


def fake_positions(text: str, style: str = "whole") -> list[FakePosition]:
    """Token log-probabilities a server would return for ``text``: a bare number v gets
    P(v) = 0.6, P(v +- 5) = 0.15 each (where in 0-100) and 0.1 on "The"; "yes"/"no" get 0.8
    on that word, 0.15 on the other; anything else 0.9 on its first word. Tokenized by
    ``style`` (TOKEN_STYLES)."""
    import math

    bare = text.strip()
    if bare.lower() in ("yes", "no"):
        word, other = ("Yes", "No") if bare.lower() == "yes" else ("No", "Yes")
        return [(word, math.log(0.8), [(word, math.log(0.8)), (other, math.log(0.15)), ("I", math.log(0.05))])]
    if not (bare.isdigit() and int(bare) <= 100):
        first = bare.split()[0] if bare.split() else "I"
        return [(first, math.log(0.9), [(first, math.log(0.9)), ("5", math.log(0.05))])]
    value = int(bare)
    numbers = {value: 0.6}
    for other_value in (value + 5, value - 5):
        if 0 <= other_value <= 100:
            numbers[other_value] = 0.15
    if style in ("digits", "gemma", "bytes"):
        positions: list[FakePosition] = []
        if style == "gemma":  # a blank token first, then the digits
            positions.append((" ", math.log(0.9), [(" ", math.log(0.9)), (" The", math.log(0.1))]))
        positions += _digit_positions(numbers, 0.1, style)
        return positions
    mark = {"bpe": "Ġ", "sentencepiece": "▁"}.get(style, "")
    alts = [(mark + str(v), math.log(p)) for v, p in sorted(numbers.items(), key=lambda kv: -kv[1])]
    alts.append((mark + "The", math.log(0.1)))
    return [(mark + str(value), math.log(0.6), alts)]


def _digit_positions(numbers: dict[int, float], other: float, style: str) -> list[FakePosition]:
    """One digit per token along the most likely number; each position's alternatives are
    the next digit (or the end, a newline) of the numbers that share the prefix so far."""
    import math

    best = str(max(numbers, key=lambda v: numbers[v]))
    positions: list[FakePosition] = []
    for k in range(len(best) + 1):
        prefix = best[:k]
        nexts: dict[str, float] = {}
        for v, p in numbers.items():
            s = str(v)
            if s.startswith(prefix):
                key = s[k] if k < len(s) else "\n"
                nexts[key] = nexts.get(key, 0.0) + p
        total = sum(nexts.values()) + (other if k == 0 else 0.0)
        alts = [(t, math.log(p / total)) for t, p in sorted(nexts.items(), key=lambda kv: -kv[1])]
        if k == 0:
            alts.append(("The", math.log(other / total)))
        if style == "bytes":
            alts = [(f"<0x{ord(t):02X}>" if len(t) == 1 else t, lp) for t, lp in alts]
        if k == len(best):
            positions.append(("\n", dict(alts).get("\n", math.log(1.0)), alts))
            break
        token = f"<0x{ord(best[k]):02X}>" if style == "bytes" else best[k]
        positions.append((token, dict(alts)[token], alts))
    return positions


def _display(token: str) -> str:
    if token.startswith("<0x") and token.endswith(">") and len(token) == 6:
        return chr(int(token[3:5], 16))
    return token.replace("Ġ", " ").replace("▁", " ")


def _chat_entry(token: str, logprob: float, alts: list[tuple[str, float]], style: str) -> dict[str, Any]:
    def entry(text: str, lp: float) -> dict[str, Any]:
        raw = None if style in ("bpe", "sentencepiece") else list(_display(text).encode())
        return {"token": text, "logprob": lp, "bytes": raw}
    return {**entry(token, logprob), "top_logprobs": [entry(t, lp) for t, lp in alts]}


def _legacy_logprobs(positions: list[tuple[str, float, list[tuple[str, float]]]]) -> dict[str, Any]:
    offsets, at = [], 0
    for token, _lp, _alts in positions:
        offsets.append(at)
        at += len(_display(token))
    return {"tokens": [t for t, _, _ in positions], "token_logprobs": [lp for _, lp, _ in positions],
            "top_logprobs": [dict(alts) for _, _, alts in positions], "text_offset": offsets}


def _tokens(text: str) -> int:
    """A stand-in tokenizer: about four characters a token."""
    return max(1, len(text) // 4)
