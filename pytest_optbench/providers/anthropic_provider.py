"""``anthropic:<model>``: the official Anthropic SDK (async client); ``--base-url`` too.

The Messages API has no ``n``: every sample is its own request. ``max_tokens`` is required
by the API: without --max-tokens the provider default (``default_max_tokens``) is sent. ``temperature`` goes in the body
(recent SDK releases no longer take it as a keyword); a model that rejects it gets the
request again without it.

``json`` mode forces a tool whose input schema is the answer's (``tool_choice`` naming it):
the tool call's input is the answer. The Messages API returns no log-probabilities, so
``logprobs`` mode gets the user's fallback at once, without a request.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..prompts import modes
from .remote import ApiProvider, ApiRequest, ApiResult, CallFailed, served


class AnthropicProvider(ApiProvider):
    provider = "anthropic"
    sdk_module = "anthropic"
    max_n = 1

    def __init__(self, model: str, *, base_url: str | None, env: Mapping[str, str], timeout: float) -> None:
        base_url = base_url or env.get("ANTHROPIC_BASE_URL") or None
        api_key = env.get("ANTHROPIC_API_KEY")
        if not api_key:
            if base_url is None:
                raise ValueError("anthropic: ANTHROPIC_API_KEY is not set")
            api_key = "not-needed"
        super().__init__(model, base_url, api_key, timeout)
        self.require_sdk()
        self._api_key = api_key
        self.send_temperature = True

    def make_client(self) -> Any:
        return self.sdk.AsyncAnthropic(api_key=self._api_key, base_url=self.base_url, max_retries=0,
                                       timeout=self.timeout)

    async def generate(self, request: ApiRequest) -> ApiResult:
        if request.mode == modes.LOGPROBS:
            self.reject_mode(modes.LOGPROBS, "the Anthropic Messages API returns no log-probabilities")
        for _ in range(3):
            mode = self.served_mode(request.mode)
            params: dict[str, Any] = {
                "model": self.model, "system": request.system,
                "messages": [{"role": "user", "content": request.user}],
                "max_tokens": request.max_tokens or self.default_max_tokens,
            }
            if self.send_temperature:
                # Through extra_body: recent SDK releases dropped the keyword, the API takes it.
                params["extra_body"] = {"temperature": request.temperature}
            if mode == modes.JSON:
                params["tools"] = [{"name": modes.SCHEMA_NAME, "description": "Record the answer.",
                                    "input_schema": modes.ANSWER_SCHEMA}]
                params["tool_choice"] = {"type": "tool", "name": modes.SCHEMA_NAME}
            try:
                response = await self.client.messages.create(**params)
            except self.sdk.BadRequestError as exc:
                message = str(getattr(exc, "message", exc)).lower()
                if self.send_temperature and "temperature" in message:
                    self.send_temperature = False
                    self.adapted(f"{self.model}: the server rejected temperature, so it is no longer sent")
                    self.resent += 1
                    continue
                if mode == modes.JSON and ("tool" in message or "input_schema" in message):
                    self.reject_mode(mode, "the server rejected a forced tool call")
                    self.served_mode(mode)  # raises under --optbench-elicit-fallback fail
                    self.resent += 1
                    continue
                raise self._failure(exc) from None
            except Exception as exc:  # noqa: BLE001 - classified, never swallowed
                raise self._failure(exc) from None
            result = self._result(response)
            result.mode = mode
            return result
        raise CallFailed("anthropic: the server rejected the request after parameter changes", retryable=False)

    def _failure(self, exc: BaseException) -> CallFailed:
        return self.sdk_failure(exc, self.sdk)

    def _result(self, response: Any) -> ApiResult:
        blocks = getattr(response, "content", None)
        if not isinstance(blocks, list):
            raise CallFailed("anthropic: the response has no content", retryable=True)
        text = "".join(getattr(b, "text", "") for b in blocks if getattr(b, "type", "") == "text")
        tool = next((b for b in blocks if getattr(b, "type", "") == "tool_use"), None)
        if tool is not None and isinstance(getattr(tool, "input", None), dict):
            text = json.dumps(tool.input)  # the forced tool's input is the answer (json mode)
        usage = getattr(response, "usage", None)
        reason = getattr(response, "stop_reason", None)  # "max_tokens": cut off
        return ApiResult([text], int(getattr(usage, "input_tokens", 0) or 0),
                         int(getattr(usage, "output_tokens", 0) or 0),
                         [reason if isinstance(reason, str) and reason else None],
                         served_model=served(getattr(response, "model", None)))
