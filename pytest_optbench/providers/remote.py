"""What API providers share: the request/result shapes, failure classification, redaction.

An API provider is async and answers one ``ApiRequest`` (possibly several samples, ``n``)
with an ``ApiResult``, or raises ``CallFailed`` saying whether a retry can help and how long
the server asked us to wait. The engine owns retries, concurrency and the store.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import email.utils
import importlib
import importlib.util
import math
import os
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..text.display import one_line
from .base import Prompt
from .loop import LoopThread

# Error codes of a 429 that no retry can cure: the account is out of money or quota.
NON_RETRYABLE_CODES = ("insufficient_quota", "enforced_spend_limit_reached", "billing_hard_limit_reached",
                       "spend_limit", "credit balance")
_SECRET_PATTERNS = (
    re.compile(r"sk-[A-Za-z0-9_\-]{6,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{6,}"),
    re.compile(r"(?i)(api[_-]?key[\"']?\s*[:=]\s*[\"']?)[A-Za-z0-9._\-]{6,}"),
)


@dataclass(frozen=True)
class ApiRequest:
    system: str
    user: str
    temperature: float
    max_tokens: int | None
    n: int = 1
    mode: str = "text"  # text | json | logprobs (elicit/modes.py)
    yes_no: bool = False  # logprobs on a yes/no item (a base-model scaffold shows yes/no examples)


@dataclass
class ApiResult:
    texts: list[str]
    input_tokens: int = 0
    output_tokens: int = 0
    # Why each text stopped, as the server said it (OpenAI ``finish_reason``, Anthropic
    # ``stop_reason``), one per text; empty or None where the server did not say.
    finish_reasons: list[str | None] = field(default_factory=list)
    # The mode the server actually served: the one asked for, or "text" after a rejection
    # and the user's fallback.
    mode: str = "text"
    # Logprobs mode: per text, the generated tokens with their alternatives (compact JSON,
    # elicit.distribution.to_json), or None where the server sent none.
    logprobs: list[Any] = field(default_factory=list)
    # Who served it, where the response says: the model id (a dated snapshot such as
    # "gpt-4.1-mini-2025-04-14") and OpenAI's system_fingerprint (the backend configuration).
    served_model: str | None = None
    system_fingerprint: str | None = None
    # Answers of the reply that failed their checks (providers/wire.py), one reason each: the
    # texts are the good ones, in order; the engine asks again for the rest.
    problems: list[str] = field(default_factory=list)

    def logprobs_of(self, index: int) -> Any:
        return self.logprobs[index] if index < len(self.logprobs) else None

    def finish_reason(self, index: int) -> str | None:
        return self.finish_reasons[index] if index < len(self.finish_reasons) else None


# Finish reasons that mean the text was cut off before the model ended it: OpenAI "length",
# Anthropic "max_tokens" (and its "model_context_window_exceeded").
CUT_OFF_REASONS = frozenset({"length", "max_tokens", "model_context_window_exceeded"})


MAX_SERVED = 200  # characters of a served model id or system_fingerprint kept


def served(value: Any) -> str | None:
    """A response's model id or system_fingerprint as kept with its answers: text on one line,
    bounded; None where the server sent none (or not a string)."""
    if not isinstance(value, str) or not value.strip():
        return None
    return one_line(value.strip(), MAX_SERVED)


def cut_off(finish_reason: str | None) -> bool | None:
    """Whether a text was cut off at the token limit: None when the server did not say."""
    if not finish_reason:
        return None
    return finish_reason in CUT_OFF_REASONS


# Statuses that no other prompt of the session can escape either: a bad or unauthorised key,
# and a model that does not exist. (A 400 is about one request; a 429 out of quota is fatal
# too, see status_failure.)
FATAL_STATUSES = (401, 403, 404)


class CallFailed(Exception):
    """A failed request. ``retryable`` says whether trying again can help; ``fatal`` that no
    request of the session can succeed (bad key, no quota, no such model), so the engine
    stops asking."""

    def __init__(self, message: str, *, retryable: bool, retry_after: float | None = None,
                 status: int | None = None, rate_limited: bool = False, timed_out: bool = False,
                 fatal: bool = False) -> None:
        super().__init__(message)
        self.retryable, self.retry_after, self.status, self.rate_limited = retryable, retry_after, status, rate_limited
        self.timed_out, self.fatal = timed_out, fatal


DEFAULT_MAX_TOKENS = 256
# The largest reply body read, in bytes (--optbench-max-reply): n = 16 answers of 4,096
# tokens are about 0.3 MB, and a logprobs reply a few kB.
DEFAULT_MAX_REPLY = 8_000_000
REASONING_MAX_TOKENS = 4096


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """Remove API keys from anything that may be shown, logged or stored."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.lastindex else "") + "[redacted]", text)
    return text


def public_url(url: str | None) -> str | None:
    """A base URL without credentials or query string (both can carry secrets)."""
    if not url:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Seconds the server asked us to wait (retry-after-ms, retry-after as seconds or a date);
    None when it said nothing usable ("soon", NaN, infinity, a date that is none)."""
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    if (ms := _seconds(lowered.get("retry-after-ms"))) is not None:
        return ms / 1000
    value = lowered.get("retry-after")
    if value is None:
        return None
    if (seconds := _seconds(value)) is not None:
        return seconds
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (ValueError, TypeError, IndexError, OverflowError):
        return None
    return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def _seconds(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        number = float(text)
    except (ValueError, OverflowError):
        return None
    return max(0.0, number) if math.isfinite(number) else None


def status_failure(status: int, message: str, headers: Mapping[str, str] | None, body: Any = None) -> CallFailed:
    """Classify an HTTP error: 408, 409, 429 (unless out of quota) and 5xx are worth a retry."""
    text = f"{message} {body or ''}".lower()
    if status == 429:
        if any(code in text for code in NON_RETRYABLE_CODES):
            return CallFailed(f"HTTP 429 (quota or spend limit, not retried): {message}", retryable=False,
                              status=status, fatal=True)
        return CallFailed(f"HTTP 429 rate limited: {message}", retryable=True, status=status, rate_limited=True,
                          retry_after=retry_after_seconds(headers))
    retryable = status in (408, 409) or status >= 500
    return CallFailed(f"HTTP {status}: {message}", retryable=retryable, status=status,
                      retry_after=retry_after_seconds(headers) if retryable else None,
                      fatal=status in FATAL_STATUSES)


class ApiProvider:
    """Base of the real providers: identity for the store, and the sync ``complete``."""

    provider = "api"
    max_n = 1  # samples one request may return
    json_reasoned = False  # json mode asks for the reasoning before the number (modes.REASONED_SCHEMA)

    def __init__(self, model: str, base_url: str | None, api_key: str | None, timeout: float) -> None:
        self.model, self.base_url, self.timeout = model, base_url, timeout
        self._secrets = tuple(s for s in (api_key,) if s)
        self.notes: list[str] = []  # parameter changes made to suit the model or server
        # Without --max-tokens: enough for "65" or a short JSON answer with a reason, and a
        # bound on what a rambling model costs; reasoning models spend tokens thinking first.
        self.default_max_tokens = DEFAULT_MAX_TOKENS
        self.parameter_changes = 0
        self.resent = 0  # requests sent again at once after such a change
        self.probes = 0  # follow-up requests reading a number digit by digit (completions, logprobs)
        self.name = f"{self.provider}:{model}"
        # Modes the server rejected (found out once, then never asked again), and what a
        # rejected mode gets instead: "text" (asked in text) or "fail" (the answer fails).
        self.rejected_modes: set[str] = set()
        self.elicit_fallback = "text"
        self.max_reply = DEFAULT_MAX_REPLY  # bytes of one reply body at most (--optbench-max-reply)

    def identity(self) -> dict[str, Any]:
        """Fields that change an answer; never the key, the timeout or the concurrency."""
        return {"provider": self.provider, "model": self.model, "base_url": public_url(self.base_url)}

    def redact(self, text: str) -> str:
        return redact(text, self._secrets)

    def adapted(self, text: str) -> None:
        """The request was changed to suit the server (a rejected parameter): note and count it."""
        self.parameter_changes += 1
        self.note(text)

    def redact_result(self, result: ApiResult) -> ApiResult:
        """The answers without the key: a server may echo the credential it got inside an
        answer, and answers are stored and reported."""
        result.texts = [self.redact(text) for text in result.texts]
        return result

    def usage_note(self, problem: str | None) -> None:
        """A reply whose usage counts were no counts: its answers are kept, its tokens not counted."""
        if problem:
            self.note(f"{self.model}: the server sent usage counts that are not whole numbers ({problem}); "
                      "those replies' tokens are counted as 0")

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def served_mode(self, mode: str) -> str:
        """The mode a request is sent in: a rejected mode gets the user's fallback."""
        if mode == "text" or mode not in self.rejected_modes:
            return mode
        if self.elicit_fallback == "fail":
            raise CallFailed(f"{self.provider}: the server does not support {mode} elicitation "
                             "(--optbench-elicit-fallback fail)", retryable=False)
        return "text"

    def reject_mode(self, mode: str, why: str) -> None:
        """The server rejected ``mode`` (a 400 naming its parameter, or no such feature):
        note it once; later requests get the fallback without asking again."""
        if mode in self.rejected_modes:
            return
        self.rejected_modes.add(mode)
        then = ("its answers fail (--optbench-elicit-fallback fail)" if self.elicit_fallback == "fail"
                else "its prompts are asked in text mode instead (--optbench-elicit-fallback text)")
        self.adapted(f"{self.model}: {why}, so {mode} elicitation is not available: {then}")

    async def generate(self, request: ApiRequest) -> ApiResult:
        raise NotImplementedError

    def sdk_failure(self, exc: BaseException, sdk: Any) -> CallFailed:
        """Classify an exception of the official SDKs (both share these classes)."""
        inner: BaseException | None = exc
        for _ in range(8):  # an SDK may wrap ours (a reply too large) in its connection error
            if inner is None or isinstance(inner, CallFailed):
                break
            inner = inner.__cause__ or inner.__context__
        if isinstance(inner, CallFailed):
            return inner
        name = self.provider
        if isinstance(exc, sdk.APIStatusError):
            body = exc.body if isinstance(exc.body, (str, dict)) else None
            failure = status_failure(exc.status_code, self.redact(str(exc.message)), exc.response.headers, body)
            if exc.status_code == 529:  # Anthropic's "overloaded": wait like a 429
                failure.rate_limited = True
            failure.args = (f"{name}: {failure.args[0]}",)
            return failure
        # A failure while the body is read (after the SDK handed the response over) comes as
        # the HTTP library's own exception (httpx or httpx2: the same class names).
        names = {cls.__name__ for cls in type(exc).__mro__}
        if isinstance(exc, sdk.APITimeoutError) or "TimeoutException" in names:
            return CallFailed(f"{name}: request timed out after {self.timeout:g} s (long replies take long: "
                              "lower --max-tokens, or raise --optbench-timeout)", retryable=True, timed_out=True)
        if isinstance(exc, sdk.APIConnectionError) or "TransportError" in names:
            return CallFailed(f"{name}: connection failed ({self.redact(str(exc))})", retryable=True)
        # Malformed responses (garbage instead of JSON) may be a glitch: retry a few times.
        return CallFailed(f"{name}: unusable response ({type(exc).__name__}: {self.redact(str(exc))[:200]})",
                          retryable=True)

    def runner(self) -> LoopThread:
        """The provider's one event loop (on a background thread): the SDK's async HTTP
        client keeps connections bound to the loop that opened them."""
        if self._loop is None:
            self._loop = LoopThread()
        return self._loop

    # The official SDKs take 0.5 to 1.5 s to import: a provider names its SDK module and
    # builds its client on first use, so a session answered from the store imports neither.
    # A session that knows it will ask (preload) imports it and builds the client on the
    # loop's thread while it collects its items instead.
    sdk_module = ""
    _client: Any = None
    _preload: concurrent.futures.Future[None] | None = None
    _preload_error: BaseException | None = None

    def preload(self) -> None:
        """Import the SDK and build its client now, on the provider's loop thread, while the
        caller goes on (collecting items): the first request then finds both ready. Sends
        nothing. A failure is kept and raised where the SDK or the client is first used, as
        it would have been raised there without the preload."""
        if not self.sdk_module or self._client is not None or self._preload is not None:
            return
        self._preload = asyncio.run_coroutine_threadsafe(self._build_client(), self.runner().loop)

    async def _build_client(self) -> None:
        # No await inside: the loop runs nothing else until the SDK is imported and the client built.
        try:
            if self._client is None:
                self._client = self.make_client()
        except Exception as exc:  # noqa: BLE001 - kept, and raised at the first use (_preloaded)
            self._preload_error = exc

    def _preloaded(self) -> None:
        """Wait for a preload in flight (on another thread than the loop's) and raise its
        failure, if it had one."""
        preload = self._preload
        if preload is None:
            return
        if not preload.done():
            if self._loop is not None and threading.current_thread() is self._loop.thread:
                return  # inside the preload itself (the loop runs nothing else meanwhile)
            preload.result()
        if self._preload_error is not None:
            raise self._preload_error

    def require_sdk(self) -> None:
        """Fail at once (a usage error) when the SDK is not installed, without importing it."""
        if self.sdk_module and importlib.util.find_spec(self.sdk_module) is None:
            raise ModuleNotFoundError(f"No module named '{self.sdk_module}'", name=self.sdk_module)

    @property
    def sdk(self) -> Any:
        """The SDK module, imported on first use (or by the preload)."""
        self._preloaded()
        return importlib.import_module(self.sdk_module)

    @property
    def client(self) -> Any:
        """The SDK's async client, built on first use (``make_client``) or by the preload."""
        if self._client is None:
            self._preloaded()
        if self._client is None:
            self._client = self.make_client()
        return self._client

    @client.setter
    def client(self, value: Any) -> None:
        self._client = value

    def make_client(self) -> Any:
        raise NotImplementedError

    def close(self) -> None:
        """Close the SDK's HTTP client on the loop that opened it, then the loop."""
        if self._loop is not None:
            if self._preload is not None:  # a client still being built is closed too
                with contextlib.suppress(Exception):
                    self._preload.result(timeout=30)
            client = self._client  # never built: nothing to close
            if client is not None and hasattr(client, "close"):
                with contextlib.suppress(Exception):  # closing must never fail a finished run
                    self._loop.run(client.close())
            self._loop.close()
            self._loop = None

    def complete(self, prompt: Prompt) -> str:
        """One sample, synchronously: lets the provider serve as a plain model too (no
        retries, no store)."""
        result = self.runner().run(self.generate(ApiRequest(prompt.system, prompt.user, prompt.temperature, None, 1)))
        result = self.redact_result(result)
        return result.texts[0] if result.texts else ""

    _loop: LoopThread | None = None


@dataclass
class ProviderOptions:
    """What a provider factory gets besides the model name."""

    base_url: str | None = None
    timeout: float = 60.0
    seed: int = 0
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    elicit_fallback: str = "text"  # what a server that rejects json or logprobs gets
    max_reply: int = DEFAULT_MAX_REPLY  # bytes of one reply body at most (--optbench-max-reply)
