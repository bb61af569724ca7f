"""Elicitation modes through the real openai and anthropic SDKs against the local FakeAPI:
JSON-schema output, forced tools, log-probabilities on chat and completions, a server that
ignores or rejects either, and the base-model scaffold. Also the store keys and settings."""

from __future__ import annotations

import json
import math

import pytest

from pytest_optbench.elicit.engine import ApiElicitor, read_answer
from pytest_optbench.elicit.store import ResponseStore, answer_key
from pytest_optbench.options import ELICIT_MODES, EngineSettings, Settings
from pytest_optbench.prompts import modes
from pytest_optbench.prompts.build import PromptSpec, render_prompts
from pytest_optbench.providers.anthropic_provider import AnthropicProvider
from pytest_optbench.providers.completions import CUE, CompletionsProvider, scaffold
from pytest_optbench.providers.openai_provider import OpenAIProvider
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
def make(tmp_path):
    created: list[ApiElicitor] = []

    def factory(server: FakeAPI, provider: str = "openai", fallback: str = "text") -> ApiElicitor:
        model: ApiProvider
        if provider == "openai":
            model = OpenAIProvider("fake", base_url=server.openai_url, env=ENV, timeout=5)
        elif provider == "completions":
            model = CompletionsProvider("fake-base", base_url=server.openai_url, env=ENV, timeout=5)
        else:
            model = AnthropicProvider("fake", base_url=server.anthropic_url, env=ENV, timeout=5)
        model.elicit_fallback = fallback
        elicitor = ApiElicitor(model, ResponseStore(tmp_path / "responses.sqlite"), FAST)
        created.append(elicitor)
        return elicitor

    yield factory
    for elicitor in created:
        elicitor.close()
        elicitor.store.close()


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
    ('{"probability": 0.35}', None, "json"), ('{"probability": "65"}', None, "json"),
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
    assert body["response_format"]["json_schema"]["schema"] == modes.ANSWER_SCHEMA


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
    assert body["tools"][0]["input_schema"] == modes.ANSWER_SCHEMA


def test_anthropic_logprobs_mode_falls_back_without_asking(fake, make) -> None:
    server = fake()
    elicitor = make(server, "anthropic")
    [record] = run(elicitor, [spec("logprobs")])
    assert (record.answers[0].value, record.answers[0].mode) == (65, "text")
    assert "logprobs" not in server.requests[0].body
    assert any("no log-probabilities" in n for n in elicitor.provider.notes)


# --------------------------------------------------------------------------- logprobs mode


@pytest.mark.parametrize("style", ["whole", "digits", "gemma", "bpe", "sentencepiece", "bytes"])
def test_logprobs_mode_reads_every_tokenizer_alike(fake, make, style: str) -> None:
    server = fake(token_style=style)
    elicitor = make(server)
    [record] = run(elicitor, [spec("logprobs")])
    [answer] = record.answers
    assert answer.mode == "logprobs" and answer.mass == pytest.approx(0.9 * (0.9 if style == "gemma" else 1))
    assert answer.value == pytest.approx(65, abs=1.0)  # 60/65/70 at 15/60/15 (digits share the "5")
    body = server.requests[0].body
    assert body["logprobs"] is True and body["top_logprobs"] == modes.TOP_LOGPROBS
    assert body["temperature"] == 0 and body["max_tokens"] == modes.LOGPROBS_MAX_TOKENS
    # Read back from the store: the same reading, no new request.
    again = make(server)
    assert again.record(spec("logprobs")).answers[0].value == answer.value and len(server.requests) == 1


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
    server = fake(token_style="gemma", completions_shape=shape)
    elicitor = make(server, "completions")
    records = run(elicitor, [spec("text"), spec("json", 1), spec("logprobs", 2)])
    assert [a.value for a in records[0].answers] == [65, 65]
    assert [(a.value, a.mode) for a in records[1].answers] == [(65, "json"), (65, "json")]
    [answer] = records[2].answers
    assert answer.mode == "logprobs" and answer.value == pytest.approx(65, abs=1.0)
    bodies = [r.body for r in server.requests]
    assert all(b["prompt"].endswith(CUE) and "messages" not in b for b in bodies)
    [json_body] = [b for b in bodies if "json_schema" in b]  # concurrent: in any order
    assert json_body["json_schema"] == modes.ANSWER_SCHEMA and "response_format" in json_body
    assert [b["logprobs"] for b in bodies if "logprobs" in b] == [modes.TOP_LOGPROBS]


def test_completions_json_rejected_falls_back(fake, make) -> None:
    server = fake(reject_params=("json_schema",))
    elicitor = make(server, "completions")
    [record] = run(elicitor, [spec("json")])
    assert {(a.value, a.mode) for a in record.answers} == {(65, "text")}


def test_completions_stored_logprobs_shape_is_json() -> None:
    assert json.loads(json.dumps(fake_positions("65", "digits")))
    assert math.isfinite(fake_positions("7")[0][1])
