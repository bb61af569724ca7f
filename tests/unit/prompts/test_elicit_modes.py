"""Elicitation modes through the real openai and anthropic SDKs against the local FakeAPI:
JSON-schema output, forced tools, log-probabilities on chat and completions, a server that
ignores or rejects either, and the base-model scaffold. Also the store keys and settings."""

from __future__ import annotations

import json
import math
import re

import pytest

from pytest_optbench.answers import distribution as D
from pytest_optbench.elicit.engine import ApiElicitor, read_answer
from pytest_optbench.elicit.store import ResponseStore, answer_key
from pytest_optbench.options import ELICIT_MODES, EngineSettings, Settings
from pytest_optbench.prompts import modes
from pytest_optbench.prompts.build import PromptSpec, render_prompts
from pytest_optbench.providers.anthropic_provider import AnthropicProvider
from pytest_optbench.providers.completions import CUE, JSON_STOP, CompletionsProvider, scaffold
from pytest_optbench.providers.openai_provider import LLAMA_CPP_CHATML_FALLBACK, OpenAIProvider
from pytest_optbench.providers.remote import ApiProvider
from pytest_optbench.suite.load import ELICIT_MODES as SUITE_MODES
from pytest_optbench.suite.load import SuiteError, parse_suite
from pytest_optbench.testing import FakeAPI
from pytest_optbench.testing.server import fake_positions

ENV = {"OPENAI_API_KEY": "sk-test-abcdef123456", "ANTHROPIC_API_KEY": "sk-ant-test-abcdef123456"}
SYSTEM = "You estimate probabilities. Reply with a single integer from 0 to 100 and nothing else."
FAST = EngineSettings(concurrency=4, max_retries=1, backoff_base=0.005, backoff_cap=0.05, run_id="run-1")


def spec(mode: str, i: int = 0, yes_no: bool = False) -> PromptSpec:
    samples, temperature = (1, 0.0) if mode == modes.LOGPROBS else (2, 0.7)
    return PromptSpec("positive", SYSTEM, f"What is the probability that plan {i} succeeds?", samples, temperature,
                      {"item": f"item-{i}"}, mode, yes_no)


@pytest.fixture
def fake(shared_server):
    def configure(**changes) -> FakeAPI:
        return shared_server.reconfigure(**{"answer": lambda request, index: "65", **changes})
    return configure


@pytest.fixture
def make(elicitors):
    def factory(server: FakeAPI, provider: str = "openai", fallback: str = "text") -> ApiElicitor:
        model: ApiProvider
        if provider == "openai":
            model = OpenAIProvider("fake", base_url=server.openai_url, env=ENV, timeout=5)
        elif provider == "completions":
            model = CompletionsProvider("fake-base", base_url=server.openai_url, env=ENV, timeout=5)
        else:
            model = AnthropicProvider("fake", base_url=server.anthropic_url, env=ENV, timeout=5)
        model.elicit_fallback = fallback
        return elicitors(model, FAST)

    return factory


def run(elicitor: ApiElicitor, specs: list[PromptSpec]):
    elicitor.prefetch(specs)
    return [elicitor.record(s) for s in specs]


# --------------------------------------------------------------------------- settings and keys


def test_text_keys_are_the_keys_of_stores_written_before_modes() -> None:
    identity = {"provider": "openai", "model": "m", "base_url": None}
    before = answer_key(identity, "s", "u", 0.7, 256)  # the signature older releases called
    assert answer_key(identity, "s", "u", 0.7, 256, modes.STORE_MODES["text"]) == before
    assert len({answer_key(identity, "s", "u", 0.7, 256, modes.STORE_MODES[m]) for m in modes.MODES}) == 3
    text = spec("text")
    assert text.key == PromptSpec(text.role, text.system, text.user, text.samples, text.temperature).key
    assert spec("json").key != PromptSpec(text.role, SYSTEM, text.user, 2, 0.7, mode="text").key


def test_the_mode_lists_agree() -> None:
    assert ELICIT_MODES == SUITE_MODES == modes.MODES


def suite_doc(**extra):
    item = {"id": "a", "scenario": "S.", "positive": "P?", "negative": "N?", **extra.pop("item", {})}
    return {"optbench": 1, "suite": "s", "items": [item], **extra}


def test_mode_precedence_command_line_item_suite() -> None:
    suite = parse_suite(suite_doc(defaults={"elicit": "json"}, item={"elicit": "logprobs"}), "s.yaml", "s")
    item = suite.items[0]
    assert render_prompts(suite, item, suite.conditions[0], Settings())[0].mode == "logprobs"
    assert render_prompts(suite, item, suite.conditions[0], Settings(elicit="text"))[0].mode == "text"
    plain = parse_suite(suite_doc(defaults={"elicit": "json"}), "s.yaml", "s")
    assert render_prompts(plain, plain.items[0], plain.conditions[0], Settings())[0].mode == "json"


def test_a_bad_mode_names_file_item_and_key() -> None:
    with pytest.raises(SuiteError, match=r"s\.yaml.*defaults\.elicit.*text, json, logprobs"):
        parse_suite(suite_doc(defaults={"elicit": "grammar"}), "s.yaml", "s")
    with pytest.raises(SuiteError, match=r"item 'a'.*elicit"):
        parse_suite(suite_doc(item={"elicit": 3}), "s.yaml", "s")


@pytest.mark.parametrize(("reply", "value", "mode"), [
    ('{"probability": 65}', 65, "json"), ('```json\n{"probability": 7}\n```', 7, "json"),
    # The schema's scale: a decimal below 1 is a fraction, exactly 1 is ambiguous (1% or certain?).
    ('{"probability": 0.35}', 35, "json"), ('{"probability": 0.9999}', 99.99, "json"), ('{"probability": 0}', 0, "json"),
    ('{"probability": 0.0000}', 0, "json"), ('{"probability": 1}', None, "json"), ('{"probability": 1.0}', None, "json"),
    ('{"probability": 1.5}', 1.5, "json"), ('{"probability": 100}', 100, "json"), ('{"probability": "65"}', None, "json"),
    # The grammar's fraction, which JSON cannot hold (SmolLM2 wrote it; forbidden, "1/2" became 100).
    (' {"probability": 1/2}', 50, "json"), ('{"probability": 1/100}', 1, "json"), ('{"probability": 3/2}', None, "json"),
    # The grammar's percentage: the sign states the scale, so 1% is no longer ambiguous.
    (' {"probability": 100%}', 100, "json"), ('{"probability": 1%}', 1, "json"), ('{"probability": 0.5%}', 0.5, "json"),
    # The reasoned object of the chat endpoints, as SmolLM2 wrote it (issue 26).
    ('{"reasoning": "The probability of passing the exam is 100%.", "probability": 100%}', 100, "json"),
    (('{"reasoning": "The probability of the person not practicing with the app every week three months from now '
     'is 1 - (1 - 3) = 1 - 2 = 1/2", "probability": 1/2}'), 50, "json"),
    ('{"reasoning": "The answer is no, the answer is 273.15.", "probability": 273/100}', None, "json"),
    ('{"reasoning": "Rain is likely.", "probability": 0.7}', 70, "json"),
    # An object that says two things is no answer: Gemma through a chat template, SmolLM2's
    # arithmetic, and the "100/1000" after "100%" that the percent sign now prevents.
    ('{"reasoning": "100", "probability": 0.0100}', None, "json"),
    ('{"reasoning": "The probability of rain is 1 - (1 - 0.1) = 0.999999999999999", "probability": 1.1111}', None, "json"),
    ('{"reasoning": "The probability that it rains is 100%.", "probability": 100/1000}', None, "json"),
    ('{"reasoning": "The probability that it rains is 100%.", "probability": 100}', 100, "json"),
    # A reasoning that answers yes or no, then a number on the other side: P(yes), or a
    # confidence in the "no"? (SmolLM2 on known answers; Gemma's bare "yes", then 0.)
    ('{"reasoning": "No, mercury is not a liquid at room temperature. It is a solid.", "probability": 100}', None,
     "json"),
    ('{"reasoning": "The answer is no, helium does not have a higher boiling point.", "probability": 100%}', None,
     "json"),
    ('{"reasoning": "yes", "probability": 0.0000}', None, "json"),
    ('{"reasoning": "Yes, it usually rains in April.", "probability": 80}', 80, "json"),
    ('{"reasoning": "N/A without more data; about even.", "probability": 60}', 60, "json"),
    ('{"reasoning": "No doubt it rains in April.", "probability": 90}', 90, "json"),
    ('{"probability": 250}', None, "json"), ('{"answer": 65}', 65, "text"), ('{"p": true}', None, "text"),
    ("I think about 65%.", 65, "text"),  # prose: the server ignored the schema; the extractor reads it
    ("Born in 1990, aged 34.", None, "text"),
])
def test_json_replies_are_read_strictly(reply: str, value: float | None, mode: str) -> None:
    answer = read_answer(reply, "json", "What is the probability that it rains?")
    assert (answer.value, answer.mode) == (value, mode)
    if value is None:
        assert answer.reason


# --------------------------------------------------------------------------- json mode


def test_json_mode_sends_the_schema_and_reads_the_field(fake, make) -> None:
    server = fake()
    [record] = run(make(server), [spec("json")])
    assert [a.value for a in record.answers] == [65, 65] and {a.mode for a in record.answers} == {"json"}
    body = server.requests[0].body
    assert body["response_format"]["json_schema"]["schema"] == modes.REASONED_SCHEMA
    assert list(modes.REASONED_SCHEMA["properties"]) == ["reasoning", "probability"]  # the reasoning first
    assert json.loads(record.answers[0].raw)["reasoning"]


SHAPES = {  # server -> (kind, vLLM version, the body fields that carry the answer's shape)
    "openai": ("openai", "0.12.0", {"response_format"}),
    "llama.cpp": ("llama.cpp", "0.12.0", {"grammar"}),
    "vllm": ("vllm", "0.12.0", {"structured_outputs"}),
    "vllm-0.11": ("vllm", "0.11.2", {"guided_regex"}),
    "ollama": ("ollama", "0.12.0", {"response_format"}),
}
SHAPE_FIELDS = {"response_format", "grammar", "json_schema", "structured_outputs", "guided_regex", "guided_json"}


@pytest.mark.parametrize("server_name", list(SHAPES))
@pytest.mark.parametrize("provider", ["openai", "completions"])
def test_json_mode_asks_each_server_in_its_own_words(fake, make, server_name: str, provider: str) -> None:
    # A model that thinks in fractions: "0.25" is 25 on the scale the schema states.
    kind, version, fields = SHAPES[server_name]
    server = fake(server_kind=kind, vllm_version=version, answer=lambda request, index: "0.25")
    elicitor = make(server, provider)
    records = run(elicitor, [spec("json", i) for i in range(3)])
    answers = [a for r in records for a in r.answers]
    bodies = [r.body for r in server.requests]
    assert server.gets.count("/v1/models") == 1  # asked once, before the first json request
    if kind == "ollama" and provider == "completions":
        # Ollama's /v1/completions has no format: declined with one note, asked in text.
        assert {a.mode for a in answers} == {"text"} and not any(SHAPE_FIELDS & set(b) for b in bodies)
        assert sum("Ollama's OpenAI-compatible /v1/completions" in n for n in elicitor.provider.notes) == 1
        return
    assert {(a.value, a.mode) for a in answers} == {(25, "json")}
    assert all(SHAPE_FIELDS & set(b) == fields for b in bodies)
    body = bodies[0]
    # Chat: the reasoning, then the number; the completions scaffold: the bare object of its examples.
    chat = provider == "openai"
    if chat:
        assert body["messages"][-1]["role"] == "user"  # nothing prefilled
    if "grammar" in fields:
        assert body["grammar"] == (modes.REASONED_GRAMMAR if chat else modes.ANSWER_GRAMMAR)
        assert chat or body["prompt"].endswith(CUE)
    elif "structured_outputs" in fields:
        assert body["structured_outputs"] == {"regex": modes.REASONED_REGEX if chat else modes.ANSWER_REGEX}
    elif "guided_regex" in fields:
        assert body["guided_regex"] == (modes.REASONED_REGEX if chat else modes.ANSWER_REGEX)
    else:
        assert body["response_format"]["json_schema"]["schema"] == (
            modes.REASONED_SCHEMA if chat else modes.ANSWER_SCHEMA)
    if kind != "openai":
        assert len([n for n in elicitor.provider.notes if "json answers are constrained" in n]) == 1


@pytest.mark.parametrize(("provider_class", "least"), [(OpenAIProvider, modes.REASONED_MIN_TOKENS),
                                                      (CompletionsProvider, modes.JSON_MIN_TOKENS)])
def test_json_mode_gets_enough_tokens_for_the_object(fake, tmp_path, provider_class, least: int) -> None:
    server = fake(server_kind="llama.cpp")
    model = provider_class("fake", base_url=server.openai_url, env=ENV, timeout=5)
    settings = EngineSettings(concurrency=1, max_retries=0, run_id="r", max_tokens=8)
    elicitor = ApiElicitor(model, ResponseStore(tmp_path / "tokens.sqlite"), settings)
    try:
        run(elicitor, [spec("json"), spec("text", 1)])
    finally:
        elicitor.close()
        elicitor.store.close()
    limits = sorted(r.body["max_tokens"] for r in server.requests)
    assert limits == [8, least]  # two samples a request


@pytest.mark.parametrize(("provider", "asked_again"), [("openai", True), ("completions", False)])
def test_a_reasoned_answer_has_a_store_key_of_its_own(fake, make, provider, asked_again) -> None:
    """A bare json answer stored by an earlier release is another elicitation where json mode
    now asks for a reasoning first (chat endpoints): not reused there; through the completions
    scaffold json mode is still the bare object, and the stored answer is read back."""
    server = fake(answer=lambda request, index: '{"probability": 40}' if request.body.get("prompt") is not None
                  else '{"reasoning": "About 40.", "probability": 40}')
    elicitor = make(server, provider)
    asked = spec("json")
    bare_key = answer_key(elicitor.provider.identity(), asked.system, asked.user, asked.temperature,
                          elicitor.tokens_for(asked), modes.STORE_MODES["json"])
    elicitor.store.put(bare_key, 0, ['{"probability": 40}'] * asked.samples, run_id="an-earlier-release")
    [record] = run(elicitor, [asked])
    assert [a.value for a in record.answers] == [40, 40]
    assert bool(server.requests) is asked_again
    assert (elicitor.key(asked) == bare_key) is not asked_again


def test_the_reasoned_grammar_holds_one_line_of_reasoning_then_the_number() -> None:
    # SmolLM2's replies under the reasoned grammar (issue 26); the regex (vLLM) is the
    # grammar's twin (llama.cpp).
    pattern = re.compile(modes.REASONED_REGEX)
    for reply in ('{"reasoning": "The probability of passing the exam is 100%.", "probability": 100%}',
                  '{"reasoning": "", "probability": 0.0000}', '{"reasoning": "Egypt", "probability": 0.0000%}',
                  '{"reasoning": "1 - (1 - 3) = 1/2", "probability": 1/2}', '{"reasoning": "x", "probability": 37.5}',
                  '{"reasoning": "' + "0" * modes.REASONING_CHARS + '", "probability": 0}'):
        assert pattern.fullmatch(reply), reply
    for reply in ('{"reasoning": "a\nb", "probability": 5}', '{"reasoning": "say \\"hi\\"", "probability": 5}',
                  '{"reasoning": "x",\n "probability": 5}', '{"probability": 5}', '{"reasoning": "x", "probability": 101}',
                  '{"reasoning": "' + "0" * (modes.REASONING_CHARS + 1) + '", "probability": 0}'):
        assert not pattern.fullmatch(reply), reply
    grammar = modes.REASONED_GRAMMAR
    assert grammar.startswith('root ::= "{\\"reasoning\\": \\"" reasoning "\\", \\"probability\\": " number "}"')
    assert f"{{0,{modes.REASONING_CHARS}}}" in grammar and "space" not in grammar


def test_the_answer_grammar_leaves_no_room_for_whitespace() -> None:
    # The replies the models wrote under llama.cpp's JSON-schema grammar (issue 26): Gemma's
    # whitespace until the token limit, SmolLM2's newlines; and the fractions an integer
    # schema cut to their "0". The regex (vLLM) is the grammar's twin (llama.cpp).
    pattern = re.compile(modes.ANSWER_REGEX)
    for reply in ('{"probability": 0.25}', '{"probability": 0.9999}', '{"probability": 0.5000}',
                  '{"probability": 100}', '{"probability": 7}', '{"probability": 37.5}', '{"probability": 0}',
                  # SmolLM2 through the scaffold, unconstrained: " {" after "Answer:", and fractions
                  ' {"probability": 100}', ' {"probability": 1/2}', ' {"probability": 1/100}', ' {"probability": 25%}'):
        assert pattern.fullmatch(reply), reply
    for reply in ('{\n  "probability": 0\n}', '{\n \t \t \t \t', '{"probability": 101}', '{"probability": 0.12345}',
                  '{"probability":0.25}', '{"probability": 05}'):
        assert not pattern.fullmatch(reply), reply
    grammar = modes.ANSWER_GRAMMAR
    assert '"{\\"probability\\": "' in grammar and "space" not in grammar and "\\n" not in grammar.split("\n", 1)[0]
    assert modes.ANSWER_SCHEMA["properties"]["probability"]["type"] == "number"


def test_a_server_that_ignores_the_schema_is_read_as_text(fake, make) -> None:
    server = fake(structured=False, answer=lambda request, index: "The probability is 30%. In 1990 ...")
    [record] = run(make(server), [spec("json")])
    assert [(a.value, a.mode) for a in record.answers] == [(30, "text"), (30, "text")]


@pytest.mark.parametrize("fallback", ["text", "fail"])
def test_a_rejected_schema_is_noted_once_and_gets_the_fallback(fake, make, fallback: str) -> None:
    server = fake(reject_params=("response_format",))
    elicitor = make(server, fallback=fallback)
    records = run(elicitor, [spec("json", i) for i in range(6)])
    with_schema = [r for r in server.requests if "response_format" in r.body]
    assert len(with_schema) <= FAST.concurrency  # found out once (concurrent requests may meet it too)
    assert sum("json elicitation is not available" in n for n in elicitor.provider.notes) == 1
    answers = [a for r in records for a in r.answers]
    if fallback == "text":
        assert {(a.value, a.mode) for a in answers} == {(65, "text")}
        assert elicitor.request_counts()["parameter_changes"] == 1
    else:
        assert all(a.error and "does not support json" in a.error for a in answers)


def test_anthropic_json_mode_forces_a_tool(fake, make) -> None:
    server = fake(answer=lambda request, index: "42")
    [record] = run(make(server, "anthropic"), [spec("json")])
    assert {(a.value, a.mode) for a in record.answers} == {(42, "json")}
    body = server.requests[0].body
    assert body["tool_choice"] == {"type": "tool", "name": "answer"}
    assert body["tools"][0]["input_schema"] == modes.REASONED_SCHEMA
    fraction = fake(answer=lambda request, index: "0.25")  # a model that thinks in fractions
    [record] = run(make(fraction, "anthropic"), [spec("json", 1)])
    assert {(a.value, a.mode) for a in record.answers} == {(25, "json")}


def test_anthropic_logprobs_mode_falls_back_without_asking(fake, make) -> None:
    server = fake()
    elicitor = make(server, "anthropic")
    [record] = run(elicitor, [spec("logprobs")])
    assert (record.answers[0].value, record.answers[0].mode) == (65, "text")
    assert "logprobs" not in server.requests[0].body
    assert any("no log-probabilities" in n for n in elicitor.provider.notes)


# --------------------------------------------------------------------------- logprobs mode


@pytest.mark.parametrize("style", ["whole", "bpe", "sentencepiece"])
def test_logprobs_mode_reads_whole_number_tokenizers_alike(fake, make, style: str) -> None:
    server = fake(token_style=style)
    elicitor = make(server)
    [record] = run(elicitor, [spec("logprobs")])
    [answer] = record.answers
    assert answer.mode == "logprobs" and answer.mass == pytest.approx(0.9)
    assert answer.value == pytest.approx(65)  # 60/65/70 at 15/60/15
    body = server.requests[0].body
    assert body["logprobs"] is True and body["top_logprobs"] == modes.TOP_LOGPROBS
    assert body["temperature"] == 0 and body["max_tokens"] == modes.LOGPROBS_MAX_TOKENS
    # Read back from the store: the same reading, no new request.
    again = make(server)
    assert again.record(spec("logprobs")).answers[0].value == answer.value and len(server.requests) == 1


@pytest.mark.parametrize("style", ["digits", "gemma", "bytes"])
@pytest.mark.parametrize("fallback", ["text", "fail"])
def test_digit_tokenizers_on_the_chat_endpoint_decline_numbers_once(fake, make, style: str, fallback: str) -> None:
    # The chat endpoint cannot be asked to go on from "6": the first digit's alternatives are
    # all there is, and they are no distribution over 0-100. Numbers are declined with one
    # note (the fallback), yes/no keeps its log-probabilities.
    server = fake(token_style=style, answer=lambda request, index: "yes" if "Is" in request.user else "65")
    elicitor = make(server, fallback=fallback)
    yes_no = PromptSpec("yes", SYSTEM, "Is it raining?", 1, 0.0, {"item": "ka"}, modes.LOGPROBS, True)
    records = run(elicitor, [spec("logprobs", i) for i in range(3)] + [yes_no])
    numeric = [a for r in records[:3] for a in r.answers]
    if fallback == "text":
        assert {(a.value, a.mode) for a in numeric} == {(65, "text")}
    else:
        assert all(a.error and "does not support numeric logprobs" in a.error for a in numeric)
    assert records[3].answers[0].mode == "logprobs" and records[3].answers[0].value == pytest.approx(100 * 0.8 / 0.95)
    assert sum("digit by digit" in n for n in elicitor.provider.notes) == 1
    later = run(elicitor, [spec("logprobs", 7)])  # asked in the fallback from the start
    if fallback == "text":
        assert "logprobs" not in server.requests[-1].body and later[0].answers[0].mode == "text"


@pytest.mark.parametrize("style", ["digits", "gemma"])
@pytest.mark.parametrize("shape", ["openai", "llama.cpp"])
def test_digit_tokenizers_are_followed_on_the_completions_endpoint(fake, make, style: str, shape: str) -> None:
    # 60/65/70 at 15/60/15: the reply says "6", "5"; what follows "7" takes one more request
    # with the prompt extended by the reply's lead and "7".
    server = fake(token_style=style, completions_shape=shape, numbers_for=lambda request: {65: 0.6, 70: 0.15, 60: 0.15})
    elicitor = make(server, "completions")
    [record] = run(elicitor, [spec("logprobs")])
    [answer] = record.answers
    assert answer.mode == "logprobs" and answer.value == pytest.approx(65)
    assert answer.distribution == {"60": pytest.approx(1 / 6, abs=1e-4), "65": pytest.approx(2 / 3, abs=1e-4),
                                   "70": pytest.approx(1 / 6, abs=1e-4)}
    assert answer.mass == pytest.approx(0.9 * (0.9 if style == "gemma" else 1))
    first, probe = (r.body for r in server.requests)
    assert probe["prompt"] == first["prompt"] + (" " if style == "gemma" else "") + "7"
    assert probe["max_tokens"] == 1 and "stop" not in probe and probe["logprobs"] == modes.TOP_LOGPROBS
    assert elicitor.request_counts()["requests"] == 2 and elicitor.request_counts()["probe_requests"] == 1
    # The probes are stored with the reply: read again without a request.
    again = make(server, "completions")
    assert again.record(spec("logprobs")).answers[0].value == pytest.approx(65) and len(server.requests) == 2


def test_following_a_number_is_bounded(fake, make) -> None:
    # A flat model: every digit leads somewhere; at most MAX_PROBES follow-up requests, and
    # a distribution spread over the whole scale is no answer.
    flat = {v: 1 / 101 for v in range(101)}
    server = fake(token_style="digits", numbers_for=lambda request: flat)
    elicitor = make(server, "completions")
    [record] = run(elicitor, [spec("logprobs")])
    assert elicitor.provider.probes <= D.MAX_PROBES and len(server.requests) == 1 + elicitor.provider.probes
    assert record.answers[0].value is None and record.answers[0].reason.startswith(D.SPREAD)
    run(elicitor, [spec("logprobs", 1)])
    assert sum("spread over the scale" in n for n in elicitor.provider.notes) == 1  # said once


def test_prose_in_logprobs_mode_is_no_answer(fake, make) -> None:
    server = fake(answer=lambda request, index: "To calculate the probability we need 5 facts")
    [record] = run(make(server), [spec("logprobs")])
    assert record.answers[0].value is None and "too little probability" in record.answers[0].reason


def test_yes_no_items_read_p_yes(fake, make) -> None:
    server = fake(answer=lambda request, index: "yes")
    [record] = run(make(server), [spec("logprobs", yes_no=True)])
    assert record.answers[0].value == pytest.approx(100 * 0.8 / 0.95)


def test_a_server_that_ignores_logprobs_is_read_as_text(fake, make) -> None:
    server = fake(token_style="none")
    elicitor = make(server)
    [record] = run(elicitor, [spec("logprobs")])
    assert (record.answers[0].value, record.answers[0].mode) == (65, "text")
    assert any("returned none" in n for n in elicitor.provider.notes)


def test_rejected_logprobs_get_the_fallback(fake, make) -> None:
    server = fake(reject_params=("logprobs",))
    elicitor = make(server)
    [record] = run(elicitor, [spec("logprobs")])
    assert (record.answers[0].value, record.answers[0].mode) == (65, "text")
    assert "logprobs" not in server.requests[-1].body


@pytest.mark.parametrize("provider", ["openai", "completions"])
def test_a_stated_top_logprobs_cap_is_used(fake, make, provider: str) -> None:
    server = fake(max_top_logprobs=5)
    elicitor = make(server, provider)
    [record] = run(elicitor, [spec("logprobs")])
    assert record.answers[0].value == pytest.approx(65, abs=1.0) and record.answers[0].mode == "logprobs"
    assert elicitor.provider.top_logprobs == 5
    assert any("at most top_logprobs = 5" in n for n in elicitor.provider.notes)


# --------------------------------------------------------------------------- completions (base models)


def test_the_scaffold_has_examples_and_an_answer_cue() -> None:
    prompt = scaffold(SYSTEM, "Will it rain?")
    assert prompt.startswith(SYSTEM) and prompt.endswith(f"Question: Will it rain?\n{CUE}")
    assert prompt.count("Question:") == 4 and " 50\n" not in prompt  # 50 is a refusal: no example shows it
    assert '{"probability": 25}' in scaffold(SYSTEM, "q", mode="json")
    assert f"{CUE} yes" in scaffold(SYSTEM, "q", yes_no=True)


@pytest.mark.parametrize("shape", ["openai", "llama.cpp"])
def test_completions_in_every_mode(fake, make, shape: str) -> None:
    server = fake(token_style="gemma", completions_shape=shape, server_kind=shape,
                  numbers_for=lambda request: {65: 1.0})
    elicitor = make(server, "completions")
    records = run(elicitor, [spec("text"), spec("json", 1), spec("logprobs", 2)])
    assert [a.value for a in records[0].answers] == [65, 65]
    assert [(a.value, a.mode) for a in records[1].answers] == [(65, "json"), (65, "json")]
    [answer] = records[2].answers
    assert answer.mode == "logprobs" and answer.value == pytest.approx(65)
    bodies = [r.body for r in server.requests]
    assert all(b["prompt"].endswith(CUE) and "messages" not in b for b in bodies)
    [json_body] = [b for b in bodies if b.get("stop") == JSON_STOP]  # concurrent: in any order
    if shape == "llama.cpp":
        assert json_body["grammar"] == modes.ANSWER_GRAMMAR and "response_format" not in json_body
    else:
        assert json_body["response_format"]["json_schema"]["schema"] == modes.ANSWER_SCHEMA
        assert "grammar" not in json_body and "json_schema" not in json_body
    assert [b["logprobs"] for b in bodies if "logprobs" in b] == [modes.TOP_LOGPROBS]


def test_completions_json_rejected_falls_back(fake, make) -> None:
    server = fake(server_kind="llama.cpp", reject_params=("grammar",))
    elicitor = make(server, "completions")
    [record] = run(elicitor, [spec("json")])
    assert {(a.value, a.mode) for a in record.answers} == {(65, "text")}
    assert any("rejected a grammar" in n for n in elicitor.provider.notes)


def test_completions_stored_logprobs_shape_is_json() -> None:
    assert json.loads(json.dumps(fake_positions("65", "digits")))
    assert math.isfinite(fake_positions("7")[0][1])


# --------------------------------------------------------------------------- llama.cpp's chat template

FALLBACK_NOTE = "llama.cpp wraps every chat prompt in its built-in ChatML template"


@pytest.mark.parametrize("mode", [modes.TEXT, modes.JSON, modes.LOGPROBS])
def test_llama_cpp_s_chatml_fallback_is_named_in_every_mode(fake, make, mode) -> None:
    """Gemma 3 270M (a base model whose file has no chat template) through llama.cpp's chat
    endpoint (issue 26): the server wraps each prompt in its own ChatML, as its GET /props
    says, and the answers measure that wrapping: one note, naming the completions scaffold."""
    server = fake(server_kind="llama.cpp", chat_template=LLAMA_CPP_CHATML_FALLBACK,
                  answer=lambda request, index: '{"reasoning": "Unlikely.", "probability": 20}'
                  if mode == modes.JSON else "20")
    elicitor = make(server)
    run(elicitor, [spec(mode, i) for i in range(3)])
    notes = [n for n in elicitor.provider.notes if FALLBACK_NOTE in n]
    assert len(notes) == 1 and "--model=openai-completions:fake" in notes[0]
    assert server.gets.count("/props") == 1
    # The json note belongs to json requests only.
    assert any("json answers are constrained" in n for n in elicitor.provider.notes) is (mode == modes.JSON)


@pytest.mark.parametrize(("template", "provider", "kind"), [
    ("{% for m in messages %}<|im_start|>{{ m.content }}{% endfor %}", "openai", "llama.cpp"),  # the model's own
    (LLAMA_CPP_CHATML_FALLBACK, "completions", "llama.cpp"),  # the scaffold is no chat template
    (LLAMA_CPP_CHATML_FALLBACK, "openai", "vllm"),  # only llama.cpp is asked for /props
])
def test_no_template_note_where_the_model_s_own_prompt_is_used(fake, make, template, provider, kind) -> None:
    server = fake(server_kind=kind, chat_template=template)
    elicitor = make(server, provider)
    run(elicitor, [spec(modes.TEXT, i) for i in range(2)])
    assert not [n for n in elicitor.provider.notes if FALLBACK_NOTE in n]
    assert ("/props" in server.gets) is (provider == "openai" and kind == "llama.cpp")
