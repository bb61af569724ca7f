"""``openai-completions:<model>``: base (pretrained) models through the completions endpoint.

A base model has no chat template (Gemma 3 270M's GGUF has none, and a chat endpoint then
wraps the prompt in a template the model never saw). It continues text, so the prompt is a
scaffold (``scaffold``): the suite's instruction, a few solved examples in the answer's
format, the item, and an answer cue ("Answer:") after which the next tokens are the answer.
Generation stops at the end of the answer line (at the next question in json mode).

Modes: ``text``; ``json`` sends the schema both as ``response_format`` (vLLM) and as
llama.cpp's ``json_schema`` (its completions endpoint ignores ``response_format``), the reply
read strictly as JSON; ``logprobs`` sends ``logprobs`` = ``top_logprobs`` alternatives per
token, read in OpenAI's legacy shape (``tokens``/``top_logprobs`` maps) or llama.cpp's (the
chat shape). The scaffold's fixed words and examples are English for every suite language
(docs/local-models.md says why).
"""

from __future__ import annotations

from typing import Any

from ..prompts import modes
from . import wire, wire_openai
from .openai_provider import OpenAIProvider
from .remote import ApiRequest

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

    def _common(self, params: dict[str, Any], request: ApiRequest, mode: str) -> None:
        params.pop("messages", None)
        params["prompt"] = scaffold(request.system, request.user, mode=mode, yes_no=request.yes_no)
        params["stop"] = JSON_STOP if mode == modes.JSON else STOP
        super()._common(params, request, mode)
        if mode == modes.JSON:
            # llama.cpp's completions take the schema as json_schema; vLLM's as response_format
            # (which the SDK's completions method does not know: both go in the body).
            params["extra_body"] = {"json_schema": modes.ANSWER_SCHEMA,
                                    "response_format": params.pop("response_format")}
        elif mode == modes.LOGPROBS:
            params.pop("top_logprobs", None)
            params["logprobs"] = self.top_logprobs

    async def _create(self, params: dict[str, Any]) -> Any:
        return await self.client.completions.with_raw_response.create(**params)

    def _reply(self, data: Any, mode: str) -> wire.Reply:
        return wire_openai.completion_reply(data, mode)
