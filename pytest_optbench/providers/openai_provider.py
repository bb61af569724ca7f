"""``openai:<model>``: the official OpenAI SDK (async client), also for OpenAI-compatible
servers (Ollama, vLLM, llama.cpp's server) through ``--base-url`` or ``OPENAI_BASE_URL``.

Several samples come back from one request (``n``) where the server allows it. Reasoning
models reject ``temperature`` and ``max_tokens``: known families get ``max_completion_tokens``
and no temperature from the start, and any server that rejects either parameter gets the
request again without it; every such change is noted for the summary.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .api import ApiProvider, ApiRequest, ApiResult, CallFailed

REASONING_FAMILY = re.compile(r"^(o\d|gpt-5(?!-chat))", re.IGNORECASE)
MAX_N = 16  # samples per request: a 10-sample audit pays for each prompt once


class OpenAIProvider(ApiProvider):
    provider = "openai"

    def __init__(self, model: str, *, base_url: str | None, env: Mapping[str, str], timeout: float) -> None:
        import openai  # the SDK is imported only when this provider is chosen

        base_url = base_url or env.get("OPENAI_BASE_URL") or None
        api_key = env.get("OPENAI_API_KEY")
        if not api_key:
            if base_url is None:
                raise ValueError("openai: OPENAI_API_KEY is not set (for a local OpenAI-compatible server, "
                                 "pass --base-url instead)")
            api_key = "not-needed"  # local servers ignore it, the SDK insists on one
        super().__init__(model, base_url, api_key, timeout)
        self._openai = openai
        self.client = openai.AsyncOpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout)
        self.reasoning = bool(REASONING_FAMILY.match(model))
        self.send_temperature = not self.reasoning
        self.token_parameter = "max_completion_tokens" if self.reasoning else "max_tokens"
        self.max_n = MAX_N
        if self.reasoning:
            self.note(f"{model} is a reasoning model: temperature is not sent and max_tokens is sent "
                      "as max_completion_tokens")

    async def generate(self, request: ApiRequest) -> ApiResult:
        for _ in range(4):  # each pass may drop one parameter the server rejected
            params: dict[str, Any] = {
                "model": self.model,
                "messages": [{"role": "system", "content": request.system},
                             {"role": "user", "content": request.user}],
            }
            if min(request.n, self.max_n) > 1:
                params["n"] = min(request.n, self.max_n)
            if self.send_temperature:
                params["temperature"] = request.temperature
            if request.max_tokens:
                params[self.token_parameter] = request.max_tokens
            try:
                response = await self.client.chat.completions.create(**params)
            except self._openai.BadRequestError as exc:
                if not self._adapt(exc, request):
                    raise self._failure(exc) from None
                continue
            except Exception as exc:  # noqa: BLE001 - classified, never swallowed
                raise self._failure(exc) from None
            return self._result(response)
        raise CallFailed("openai: the server rejected the request after parameter changes", retryable=False)

    def _adapt(self, exc: Any, request: ApiRequest) -> bool:
        """Change the request to suit the server; False when nothing is left to change."""
        text = f"{getattr(exc, 'param', '')} {getattr(exc, 'message', exc)}".lower()
        if self.send_temperature and "temperature" in text:
            self.send_temperature = False
            self.note(f"{self.model}: the server rejected temperature, so it is no longer sent")
            return True
        if self.token_parameter == "max_tokens" and "max_tokens" in text and request.max_tokens:
            self.token_parameter = "max_completion_tokens"
            self.note(f"{self.model}: the server rejected max_tokens, so max_completion_tokens is sent")
            return True
        if request.n > 1 and re.search(r"\bn\b", text):
            self.max_n = 1
            self.note(f"{self.model}: the server rejected n > 1, so each sample is its own request")
            return True  # asked again at once with n = 1; the engine requests the rest
        return False

    def _failure(self, exc: BaseException) -> CallFailed:
        return self.sdk_failure(exc, self._openai)

    def _result(self, response: Any) -> ApiResult:
        choices = getattr(response, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise CallFailed("openai: the response has no choices", retryable=True)
        texts = [(getattr(c.message, "content", None) or "") for c in choices]
        usage = getattr(response, "usage", None)
        return ApiResult(texts, int(getattr(usage, "prompt_tokens", 0) or 0),
                         int(getattr(usage, "completion_tokens", 0) or 0))
