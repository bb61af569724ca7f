"""``openai:<model>``: the official OpenAI SDK (async client), also for OpenAI-compatible
servers (Ollama, vLLM, llama.cpp's server) through ``--base-url`` or ``OPENAI_BASE_URL``.

Several samples come back from one request (``n``) where the server allows it. ``json``
mode asks each server in its own words (``dialect``, found out once from ``GET /models``):
llama.cpp gets ``modes.REASONED_GRAMMAR`` as its ``grammar``, vLLM ``modes.REASONED_REGEX`` as
``structured_outputs.regex`` (``guided_regex`` before v0.12, from ``GET /version``), both
without room for free whitespace; OpenAI, Ollama (which maps it to its ``format``) and any
other server the JSON-schema ``response_format`` (the reasoning first, then the number; the
completions endpoint asks for the bare object its examples show). ``logprobs`` mode sends ``logprobs`` and ``top_logprobs`` (at most 20, or the server's stated
cap). A server that rejects either gets the user's fallback, found out once per run. Reasoning
models reject ``temperature`` and ``max_tokens``: known families get ``max_completion_tokens``
and no temperature from the start, and any server that rejects either parameter gets the
request again without it; every such change is noted for the summary.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..answers import distribution
from ..prompts import modes
from . import http_limit, wire, wire_openai
from .remote import REASONING_MAX_TOKENS, ApiProvider, ApiRequest, ApiResult, CallFailed

REASONING_FAMILY = re.compile(r"^(o\d|gpt-5(?!-chat))", re.IGNORECASE)
LOOK_WAIT = 5.0  # seconds an answer waits for the server's GET /models and /props (_looked)
MAX_N = 16  # samples per request: a 10-sample audit pays for each prompt once
# The pseudo-mode a model's numeric log-probabilities are declined under (finish).
NUMERIC_LOGPROBS = "numeric logprobs"
# How a server is asked for a JSON answer (json mode): see the module doc.
OPENAI, LLAMA_CPP, VLLM, VLLM_LEGACY, OLLAMA = "openai", "llama.cpp", "vllm", "vllm-legacy", "ollama"
DIALECT_NOTES = {
    LLAMA_CPP: "llama.cpp: json answers are constrained by a grammar with no free whitespace (grammar)",
    VLLM: "vLLM: json answers are constrained by a regular expression with no free whitespace "
          "(structured_outputs.regex)",
    VLLM_LEGACY: "vLLM before v0.12: json answers are constrained by a regular expression with no free "
                 "whitespace (guided_regex)",
    OLLAMA: "Ollama: json answers are constrained by the JSON schema (response_format, Ollama's format)",
}
# llama.cpp's own ChatML template (common/chat.cpp, CHATML_TEMPLATE_SRC), which its server
# uses for a model file without a chat template of its own (Gemma 3 270M, a base model) and
# reports as such in GET /props: the chat endpoint then wraps every prompt in markers the
# model may never have seen, and what it answers measures the wrapping.
LLAMA_CPP_CHATML_FALLBACK = (
    "{%- for message in messages -%}\n"
    "  {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}\n"
    "  {{- '<|im_start|>assistant\n' -}}\n"
    "{%- endif -%}"
)


def version_below(text: Any, bound: tuple[int, ...]) -> bool:
    """"0.11.2" < (0, 12); an unreadable version is taken to be current (not below)."""
    numbers = re.findall(r"\d+", str(text or ""))[: len(bound)]
    return bool(numbers) and tuple(int(n) for n in numbers) < bound


def server_root(base_url: str) -> str:
    """http://host:8000/v1 -> http://host:8000 (vLLM's /version and Ollama's /api/version)."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    path = path.removesuffix("/v1")
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))



_CAP_PATTERNS = (
    re.compile(r"<=\s*(\d+)"),  # llama.cpp: "Value must be between 1 <= value <= 4"; OpenAI: "a value <= 128"
    re.compile(r"(?:at most|maximum(?: value)?(?: of| is)?|less than or equal to|up to|not exceed)\s+(\d+)"),
    re.compile(r"between\s+\d+\s+and\s+(\d+)"),
    re.compile(r"maximum allowed value\s*\(?(\d+)"),  # vLLM: "exceeds maximum allowed value (5)"
)


def stated_cap(message: str) -> int | None:
    """The largest ``n`` a server's rejection says it accepts, when it says one."""
    for pattern in _CAP_PATTERNS:
        match = pattern.search(message)
        if match:
            return int(match.group(1))
    return None


class OpenAIProvider(ApiProvider):
    provider = "openai"
    sdk_module = "openai"
    json_reasoned = True  # chat: the reasoning, then the number (modes.REASONED_SCHEMA)
    checks_template = True  # chat: does the server wrap prompts in a template of the model's own?

    def __init__(self, model: str, *, base_url: str | None, env: Mapping[str, str], timeout: float) -> None:
        base_url = base_url or env.get("OPENAI_BASE_URL") or None
        api_key = env.get("OPENAI_API_KEY")
        if not api_key:
            if base_url is None:
                raise ValueError("openai: OPENAI_API_KEY is not set (for a local OpenAI-compatible server, "
                                 "pass --base-url instead)")
            api_key = "not-needed"  # local servers ignore it, the SDK insists on one
        super().__init__(model, base_url, api_key, timeout)
        self.require_sdk()
        self._api_key = api_key
        self.reasoning = bool(REASONING_FAMILY.match(model))
        self.send_temperature = not self.reasoning
        self.token_parameter = "max_completion_tokens" if self.reasoning else "max_tokens"
        self.max_n = MAX_N
        self.top_logprobs = modes.TOP_LOGPROBS
        self._ignored_logprobs = False
        self.dialect: str | None = OPENAI if base_url is None else None  # found out on the first request
        self._dialect_lock: asyncio.Lock | None = None
        self._looking: asyncio.Future[str | None] | None = None  # a dialect look beside text or logprobs requests
        if self.reasoning:
            self.default_max_tokens = REASONING_MAX_TOKENS
            self.note(f"{model} is a reasoning model: temperature is not sent and max_tokens is sent "
                      "as max_completion_tokens")

    def make_client(self) -> Any:
        return self.sdk.AsyncOpenAI(api_key=self._api_key, base_url=self.base_url, max_retries=0,
                                    timeout=self.timeout,
                                    http_client=http_limit.capped_client(self.sdk, self.max_reply, self.timeout))

    async def generate(self, request: ApiRequest) -> ApiResult:
        for _ in range(6):  # each pass may drop one parameter the server rejected
            mode = self.served_mode(request.mode)
            if mode == modes.JSON and self.dialect is None:
                await self.find_dialect()
                mode = self.served_mode(request.mode)
            if mode == modes.JSON and self.dialect in DIALECT_NOTES:
                self.note(f"{self.model}: {DIALECT_NOTES[self.dialect]}")
            elif self.dialect is None and self.checks_template and self._looking is None:
                # Only the template check needs the server here: it runs beside the requests.
                self._looking = asyncio.ensure_future(self._look())
            if mode == modes.LOGPROBS and not request.yes_no and self.served_mode(NUMERIC_LOGPROBS) != NUMERIC_LOGPROBS:
                mode = modes.TEXT  # numbers declined on this model (finish): the fallback
            params = self.params(request, mode)
            try:
                body = await http_limit.body(await self._create(params))
            except self.sdk.BadRequestError as exc:
                if not (self._adapt_mode(exc, params, mode) or self._adapt(exc, params)):
                    raise self._failure(exc) from None
                self.resent += 1
                continue
            except Exception as exc:  # noqa: BLE001 - classified, never swallowed
                raise self._failure(exc) from None
            await self._looked()
            return await self.finish(self._with_mode(self.read_reply(body, mode), mode), request)
        raise CallFailed(f"{self.provider}: the server rejected the request after parameter changes", retryable=False)

    async def _looked(self) -> None:
        """The look beside the requests ends before their answers are taken (a GET is quicker
        than a generation), so that every item's record carries its note; a server slow to
        answer it holds an answer back LOOK_WAIT seconds at most."""
        if self._looking is not None and not self._looking.done():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._looking), LOOK_WAIT)

    def params(self, request: ApiRequest, mode: str) -> dict[str, Any]:
        """The request body as the provider stands now (parameters the server rejected are
        gone); batch lines send the same body."""
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": request.system}, {"role": "user", "content": request.user}],
        }
        self._common(params, request, mode)
        return params


    async def _create(self, params: dict[str, Any]) -> Any:
        """The raw response (its body is read and checked here, not by the SDK)."""
        return await self.client.chat.completions.with_raw_response.create(**params)

    def _reply(self, data: Any, mode: str) -> wire.Reply:
        return wire_openai.chat_reply(data, mode)

    async def find_dialect(self) -> str:
        """Which server this is, for json mode: asked once (``GET /models``; vLLM's
        ``/version``, Ollama's ``/api/version``), noted once. Anything unknown, or a server
        that answers none of these, gets OpenAI's ``response_format``."""
        if self._dialect_lock is None:
            self._dialect_lock = asyncio.Lock()
        async with self._dialect_lock:
            if self.dialect is None:
                dialect = await self._detect_dialect()
                if dialect == LLAMA_CPP and self.checks_template:
                    await self._check_template()
                self.dialect = dialect
                self.after_dialect(self.dialect)
        return self.dialect

    async def _look(self) -> str | None:
        """find_dialect beside the requests: what fails there only leaves the note unsaid."""
        try:
            return await self.find_dialect()
        except Exception:  # noqa: BLE001 - the requests meet and report any real fault
            return None

    async def _check_template(self) -> None:
        """llama.cpp's ChatML fallback (LLAMA_CPP_CHATML_FALLBACK) in its GET /props: said once."""
        props = await self._get_json(f"{server_root(str(self.base_url))}/props")
        if props.get("chat_template") == LLAMA_CPP_CHATML_FALLBACK:
            self.note(f"{self.model}: llama.cpp wraps every chat prompt in its built-in ChatML template, which it "
                      "uses when the model file has no chat template of its own (a base model) or when told to "
                      "(--chat-template chatml); answers through a template the model never saw measure the "
                      "template more than the model: ask a base model through the completions scaffold "
                      f"(--model=openai-completions:{self.model})")

    def after_dialect(self, dialect: str) -> None:
        """What a dialect rules out on this endpoint (the completions endpoint: Ollama)."""

    async def _detect_dialect(self) -> str:
        owners: set[str] = set()
        try:
            page = await self.client.models.list()
            owners = {str(getattr(m, "owned_by", "") or "").lower() for m in getattr(page, "data", None) or ()}
        except Exception:  # noqa: BLE001 - a server without /models is asked the standard way
            owners = set()
        if "llamacpp" in owners:
            return LLAMA_CPP
        root = server_root(str(self.base_url))
        if "vllm" in owners:
            version = await self._get_json(f"{root}/version")
            return VLLM_LEGACY if version_below(version.get("version"), (0, 12)) else VLLM
        if "version" in await self._get_json(f"{root}/api/version"):
            return OLLAMA
        return OPENAI

    async def _get_json(self, url: str) -> dict[str, Any]:
        """A GET through the SDK's client (absolute URL); {} when it fails or is no object."""
        try:
            data = await self.client.get(url, cast_to=object)
        except Exception:  # noqa: BLE001 - the answer only decides the dialect
            return {}
        return data if isinstance(data, dict) else {}

    def json_params(self) -> dict[str, Any]:
        """The body fields that ask this server for the answer object (module doc): the
        reasoned one on the chat endpoint, the bare one through the completions scaffold."""
        dialect = self.dialect or OPENAI
        if dialect == LLAMA_CPP:
            return {"grammar": modes.REASONED_GRAMMAR if self.json_reasoned else modes.ANSWER_GRAMMAR}
        regex = modes.REASONED_REGEX if self.json_reasoned else modes.ANSWER_REGEX
        if dialect == VLLM:
            return {"structured_outputs": {"regex": regex}}
        if dialect == VLLM_LEGACY:
            return {"guided_regex": regex}
        # OpenAI, Ollama and the rest: the JSON schema, on either endpoint.
        return {"response_format": {"type": "json_schema", "json_schema": {
            "name": modes.SCHEMA_NAME, "schema": modes.REASONED_SCHEMA if self.json_reasoned else modes.ANSWER_SCHEMA,
            "strict": True}}}

    def read_reply(self, body: bytes, mode: str) -> ApiResult:
        """A reply body, checked field by field (wire_openai): a reply that is none is a
        retryable failure; answers that fail their checks are the result's ``problems``."""
        try:
            reply = self._reply(wire.load(body), mode)
        except wire.BadReply as exc:
            raise CallFailed(f"{self.provider}: unusable response ({exc})", retryable=True) from None
        self.usage_note(reply.usage_problem)
        good = reply.good()
        result = ApiResult([c.text or "" for c in good], reply.input_tokens, reply.output_tokens,
                           [c.finish_reason for c in good],
                           problems=[f"{self.provider}: unusable answer ({p})" for p in reply.problems()],
                           served_model=reply.served_model, system_fingerprint=reply.system_fingerprint)
        if mode == modes.LOGPROBS:
            result.logprobs = [distribution.to_json(c.positions) if c.positions else None for c in good]
        return result

    def _common(self, params: dict[str, Any], request: ApiRequest, mode: str) -> None:
        """Sampling, limits and the mode's parameters, shared with the completions endpoint."""
        if min(request.n, self.max_n) > 1:
            params["n"] = min(request.n, self.max_n)
        if self.send_temperature:
            params["temperature"] = request.temperature
        if request.max_tokens:
            params[self.token_parameter] = request.max_tokens
        if mode == modes.JSON:
            fields = self.json_params()
            if "response_format" in fields:
                params["response_format"] = fields.pop("response_format")
            if fields:  # not OpenAI's own parameters: the SDK sends them in the body
                params["extra_body"] = {**params.get("extra_body", {}), **fields}
        elif mode == modes.LOGPROBS:
            params["logprobs"] = True
            params["top_logprobs"] = self.top_logprobs

    def _adapt_mode(self, exc: Any, params: Mapping[str, Any], mode: str) -> bool:
        """A 400 that names the mode's parameter: a smaller stated ``top_logprobs`` cap is
        used; otherwise the mode is rejected (noted once) and the request goes again in the
        fallback (or fails, with --optbench-elicit-fallback fail)."""
        text = f"{getattr(exc, 'param', '')} {getattr(exc, 'message', exc)}".lower()
        if mode == modes.JSON and any(w in text for w in ("response_format", "json_schema", "json schema",
                                                          "structured output", "structured_output", "grammar",
                                                          "guided", "regex")):
            asked = "a grammar" if "grammar" in params.get("extra_body", {}) else (
                "a regular expression" if "regex" in str(params.get("extra_body", {})) else
                "response_format with a JSON schema")
            self.reject_mode(mode, f"the server rejected {asked}")
            self.served_mode(mode)  # raises at once under --optbench-elicit-fallback fail
            return True
        if mode == modes.LOGPROBS and "logprob" in text:
            # Chat sends top_logprobs (logprobs is a flag); completions send the count as logprobs.
            count = params.get("top_logprobs", params.get("logprobs"))
            sent = count if isinstance(count, int) and not isinstance(count, bool) else 0
            cap = stated_cap(text)
            if cap is not None and 1 <= cap < sent:
                if cap < self.top_logprobs:
                    self.top_logprobs = cap
                    self.adapted(f"{self.model}: the server accepts at most top_logprobs = {cap} "
                                 f"(it rejected {sent}), so {cap} alternatives are read per token")
                return True
            self.reject_mode(mode, "the server rejected logprobs")
            self.served_mode(mode)
            return True
        return False

    def _adapt(self, exc: Any, params: Mapping[str, Any]) -> bool:
        """Change the request to suit the server; False when nothing is left to change.

        Decided on what this request sent, since concurrent requests meet the same rejection
        and only the first of them changes (and notes) anything."""
        text = f"{getattr(exc, 'param', '')} {getattr(exc, 'message', exc)}".lower()
        if "temperature" in params and "temperature" in text:
            if self.send_temperature:
                self.send_temperature = False
                self.adapted(f"{self.model}: the server rejected temperature, so it is no longer sent")
            return True
        if "max_tokens" in params and "max_tokens" in text:
            if self.token_parameter == "max_tokens":
                self.token_parameter = "max_completion_tokens"
                self.adapted(f"{self.model}: the server rejected max_tokens, so max_completion_tokens is sent")
            return True
        sent = int(params.get("n", 1))
        if sent > 1 and re.search(r"\bn\b", text):
            cap = stated_cap(text)
            allowed = cap if cap is not None and 1 <= cap < sent else 1
            if allowed < self.max_n:
                self.max_n = allowed
                if allowed > 1:
                    self.adapted(f"{self.model}: the server accepts at most n = {allowed} (it rejected n = {sent}), "
                                 f"so up to {allowed} samples come from one request")
                else:
                    self.adapted(f"{self.model}: the server rejected n = {sent} and stated no cap, so each sample "
                                 "is its own request")
            return True  # asked again at once with the smaller n; the engine requests the rest
        return False

    def _failure(self, exc: BaseException) -> CallFailed:
        return self.sdk_failure(exc, self.sdk)

    async def finish(self, result: ApiResult, request: ApiRequest) -> ApiResult:
        """A numeric logprobs reply from a tokenizer that writes numbers digit by digit: the
        chat endpoint cannot be asked to go on from a digit, so numeric log-probability
        elicitation is declined for this model, once and with one note; this reply and the
        later numeric prompts get the fallback (yes/no items keep their log-probabilities)."""
        if result.mode != modes.LOGPROBS or request.yes_no or not result.logprobs_of(0):
            return result
        positions = distribution.from_json(result.logprobs_of(0))
        if distribution.needs_follow(positions):
            shown = "', '".join(p.token for p in positions[:4])
            self.reject_mode(NUMERIC_LOGPROBS, f"its tokenizer writes numbers digit by digit (its reply began "
                                               f"'{shown}') and the chat endpoint cannot extend a reply to read the "
                                               "digits after the first (the completions endpoint can: "
                                               "--model=openai-completions:...)")
            self.served_mode(NUMERIC_LOGPROBS)  # raises under --optbench-elicit-fallback fail
            result.mode, result.logprobs = modes.TEXT, []
        return result

    def _with_mode(self, result: ApiResult, mode: str) -> ApiResult:
        """The mode served; in logprobs mode, a note when the server sent no tokens."""
        result.mode = mode
        if mode == modes.LOGPROBS and result.texts and not any(result.logprobs) and not self._ignored_logprobs:
            self._ignored_logprobs = True  # the answers are then read as text (engine)
            self.note(f"{self.model}: the server accepted logprobs but returned none, so its replies "
                      "are read as text")
        return result
