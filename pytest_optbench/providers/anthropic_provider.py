"""``anthropic:<model>``: the official Anthropic SDK (async client); ``--base-url`` too.

The Messages API has no ``n``: every sample is its own request. ``max_tokens`` is required
by the API: without --max-tokens the provider default (``default_max_tokens``) is sent. ``temperature`` goes in the body
(recent SDK releases no longer take it as a keyword); a model that rejects it gets the
request again without it.

``json`` mode forces a tool whose input schema is the reasoned answer's (``tool_choice``
naming it): the tool call's input is the answer. The Messages API returns no log-probabilities, so
``logprobs`` mode gets the user's fallback at once, without a request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..prompts import modes
from . import http_limit, wire, wire_anthropic
from .remote import ApiProvider, ApiRequest, ApiResult, CallFailed


class AnthropicProvider(ApiProvider):
    provider = "anthropic"
    sdk_module = "anthropic"
    max_n = 1
    json_reasoned = True  # the tool's input: the reasoning, then the number (modes.REASONED_SCHEMA)

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
                                       timeout=self.timeout,
                                       http_client=http_limit.capped_client(self.sdk, self.max_reply, self.timeout))

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
                                    "input_schema": modes.REASONED_SCHEMA}]
                params["tool_choice"] = {"type": "tool", "name": modes.SCHEMA_NAME}
            try:
                body = await http_limit.body(await self.client.messages.with_raw_response.create(**params))
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
            result = self.read_reply(body)
            result.mode = mode
            return result
        raise CallFailed("anthropic: the server rejected the request after parameter changes", retryable=False)

    def _failure(self, exc: BaseException) -> CallFailed:
        return self.sdk_failure(exc, self.sdk)

    def read_reply(self, body: bytes) -> ApiResult:
        """A reply body, checked field by field (wire_anthropic)."""
        try:
            reply = wire_anthropic.message_reply(wire.load(body))
        except wire.BadReply as exc:
            raise CallFailed(f"anthropic: unusable response ({exc})", retryable=True) from None
        self.usage_note(reply.usage_problem)
        good = reply.good()
        return ApiResult([c.text or "" for c in good], reply.input_tokens, reply.output_tokens,
                         [c.finish_reason for c in good],
                         problems=[f"anthropic: unusable answer ({p})" for p in reply.problems()],
                         served_model=reply.served_model)
