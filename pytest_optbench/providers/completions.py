"""``openai-completions:<model>``: base (pretrained) models through the completions endpoint.

A base model has no chat template (Gemma 3 270M's GGUF has none, and a chat endpoint then
wraps the prompt in a template the model never saw). It continues text, so the prompt is a
scaffold (``scaffold``): the suite's instruction, a few solved examples in the answer's
format, the item, and an answer cue ("Answer:") after which the next tokens are the answer.
Generation stops at the end of the answer line (at the next question in json mode).

Modes: ``text``; ``json`` asks as the chat endpoint does (llama.cpp's ``grammar``, vLLM's
regular expression, the JSON-schema ``response_format`` elsewhere; Ollama's completions
endpoint takes none, so json mode is declined there with one note), the reply read strictly
as JSON; ``logprobs`` sends ``logprobs`` = ``top_logprobs`` alternatives per
token, read in OpenAI's legacy shape (``tokens``/``top_logprobs`` maps) or llama.cpp's (the
chat shape). The scaffold's fixed words and examples are English for every suite language
(docs/local-models.md says why).
"""

from __future__ import annotations

from typing import Any

from ..answers import distribution
from ..prompts import modes
from . import http_limit, wire, wire_openai
from .openai_provider import OLLAMA, OpenAIProvider
from .remote import ApiRequest, ApiResult

CUE = "Answer:"
# The answer is one line; a base model goes on with more made-up "Answer:" lines. JSON may
# span lines, and its grammar ends it anyway.
STOP = ["\n"]
JSON_STOP = ["\nQuestion:", "\nAnswer:", "\n\n"]
# Solved examples. Their answers avoid 50 (which counts as a refusal) and span the scale;
# the events are textbook chances, so the examples teach the format, not an opinion.
NUMBER_EXAMPLES = (
    ("A fair coin is tossed twice. What is the probability that it lands heads both times?", "25"),
    ("A card is drawn from a shuffled standard deck. What is the probability that it is not a heart?", "75"),
    ("A fair six-sided die is rolled once. What is the probability that it shows a six?", "17"),
)
YES_NO_EXAMPLES = (
    ("Is Paris the capital of France?", "yes"),
    ("Is the Moon larger than the Earth?", "no"),
)


def scaffold(system: str, user: str, *, mode: str = modes.TEXT, yes_no: bool = False) -> str:
    """The completion prompt: instruction, solved examples, the item, the answer cue."""
    examples: tuple[tuple[str, str], ...]
    if yes_no:
        examples = YES_NO_EXAMPLES
    elif mode == modes.JSON:
        examples = tuple((q, f'{{"{modes.ANSWER_FIELD}": {a}}}') for q, a in NUMBER_EXAMPLES)
    else:
        examples = NUMBER_EXAMPLES
    parts = [system.strip(), ""] if system.strip() else []
    for question, answer in examples:
        parts += [f"Question: {question}", f"{CUE} {answer}", ""]
    parts += [f"Question: {user.strip()}", CUE]
    return "\n".join(parts)


class CompletionsProvider(OpenAIProvider):
    provider = "openai-completions"
    json_reasoned = False  # the bare object of the scaffold's examples (modes.ANSWER_SCHEMA)
    checks_template = False  # no chat template: the scaffold is the prompt

    def _common(self, params: dict[str, Any], request: ApiRequest, mode: str) -> None:
        params.pop("messages", None)
        params["prompt"] = scaffold(request.system, request.user, mode=mode, yes_no=request.yes_no)
        params["stop"] = JSON_STOP if mode == modes.JSON else STOP
        super()._common(params, request, mode)
        if mode == modes.JSON and "response_format" in params:
            # The SDK's completions method does not know response_format: it goes in the body.
            params["extra_body"] = {**params.get("extra_body", {}), "response_format": params.pop("response_format")}
        elif mode == modes.LOGPROBS:
            params.pop("top_logprobs", None)
            params["logprobs"] = self.top_logprobs

    async def _create(self, params: dict[str, Any]) -> Any:
        return await self.client.completions.with_raw_response.create(**params)

    def after_dialect(self, dialect: str) -> None:
        if dialect == OLLAMA:
            # Its /v1/completions has no format and ignores response_format: the schema would
            # be dropped without a word.
            self.reject_mode(modes.JSON, "Ollama's OpenAI-compatible /v1/completions takes no JSON schema "
                                         "(its format works on /v1/chat/completions: use --model=openai:...)")

    async def finish(self, result: ApiResult, request: ApiRequest) -> ApiResult:
        """A numeric logprobs reply from a digit tokenizer is followed position by position:
        the prompt extended by each likely prefix ("1", "10", "2", ...) after the reply's own
        lead (" "), one greedy token with its alternatives, most likely prefix first, at
        most ``distribution.MAX_PROBES`` requests (counted as ``probes``). The probes are
        stored with the reply, and the reading (distribution.walk) is the distribution over
        0-100 they give."""
        if result.mode != modes.LOGPROBS or request.yes_no or not result.logprobs_of(0):
            return result
        positions = distribution.from_json(result.logprobs_of(0))
        if not distribution.needs_follow(positions):
            return result
        lead = distribution.number_lead(positions)
        base = self.params(ApiRequest(request.system, request.user, request.temperature, 1, 1, modes.LOGPROBS),
                           modes.LOGPROBS)
        base.pop("stop", None)  # the next token may be the newline that ends the number
        probes: dict[str, list[tuple[str, float]]] = {}
        while len(probes) < distribution.MAX_PROBES:
            prefix = distribution.next_probe(positions, probes)
            if prefix is None:
                break
            try:
                body = await http_limit.body(await self._create({**base, "prompt": base["prompt"] + lead + prefix}))
            except Exception as exc:  # noqa: BLE001 - classified, never swallowed
                raise self._failure(exc) from None
            self.probes += 1
            probed = self.read_reply(body, modes.LOGPROBS)
            result.input_tokens += probed.input_tokens
            result.output_tokens += probed.output_tokens
            found = distribution.from_json(probed.logprobs_of(0) or [])
            probes[prefix] = [(found[0].token, found[0].logprob), *found[0].top] if found else []
        result.logprobs[0] = distribution.stored(result.logprobs[0], probes, lead)
        reason = distribution.read(positions, probes=probes).reason or ""
        if reason.startswith(distribution.SPREAD):  # said once for the model, not per answer
            self.note(f"{self.model}: its numbers, followed digit by digit, spread over the scale (sd above "
                      f"{distribution.MAX_SPREAD:g} pp): such prompts get no numeric log-probability answer")
        return result

    def _reply(self, data: Any, mode: str) -> wire.Reply:
        return wire_openai.completion_reply(data, mode)
