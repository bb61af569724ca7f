"""The fuzz layer over server replies (issue 24): whatever a server sends on any endpoint and
in any mode (chat, completions, Anthropic Messages; text, json, logprobs; both batch APIs'
objects and result lines), the only outcomes are checked answers or one line saying which
field was wrong, within bounded CPU time and memory.

Two levels: the wire readers alone (many examples, no network), and whole elicitations
against the FakeAPI made hostile with the same mutations (a few examples per endpoint and
mode, through the real SDKs).
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hostile_strategies import VALID_REPLIES, mutate, mutations
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fuzz_hostile import FEW, bounded

from pytest_optbench.elicit.batch import BatchElicitor, BatchSettings
from pytest_optbench.elicit.engine import ApiElicitor
from pytest_optbench.elicit.store import ResponseStore
from pytest_optbench.options import EngineSettings
from pytest_optbench.prompts import modes
from pytest_optbench.prompts.build import PromptSpec
from pytest_optbench.providers import wire, wire_anthropic, wire_openai
from pytest_optbench.providers.anthropic_provider import AnthropicProvider
from pytest_optbench.providers.batch_api import BatchState, LineResult
from pytest_optbench.providers.completions import CompletionsProvider
from pytest_optbench.providers.openai_provider import OpenAIProvider
from pytest_optbench.testing import FakeAPI
from pytest_optbench.testing.batches import FakeBatches
from pytest_optbench.text.display import printable

KEY = "sk-test-FUZZ-REPLY-0123456789abcdef"


def a_line(text: str) -> None:
    assert isinstance(text, str) and text, text
    assert "\n" not in text and printable(text) == text, text
    assert len(text) <= 600, len(text)


def a_text(text: Any) -> None:
    assert isinstance(text, str)
    text.encode("utf-8")  # no lone surrogate left for the store or a report


def check_reply(reply: wire.Reply) -> None:
    assert reply.choices
    assert isinstance(reply.input_tokens, int) and reply.input_tokens >= 0
    assert isinstance(reply.output_tokens, int) and reply.output_tokens >= 0
    if reply.usage_problem is not None:
        a_line(reply.usage_problem)
    for choice in reply.choices:
        if choice.problem is not None:
            a_line(choice.problem)
            continue
        a_text(choice.text)
        assert choice.finish_reason is None or isinstance(choice.finish_reason, str)
        for position in choice.positions or ():
            a_text(position.token)
            assert math.isfinite(position.logprob) or position.logprob == -math.inf
            assert position.logprob <= 0
            for token, logprob in position.top:
                a_text(token)
                assert math.isfinite(logprob) and logprob <= 0


def check_state(state: BatchState, problem: str | None) -> None:
    assert wire.IDENTIFIER.match(state.id)
    assert all(isinstance(n, int) and n >= 0 for n in (state.total, state.done, state.errored))
    assert state.expires_at is None or math.isfinite(state.expires_at)
    assert isinstance(state.status, str) and isinstance(state.ended, bool)
    if problem is not None:
        a_line(problem)


def check_line(result: LineResult) -> None:
    assert isinstance(result.custom_id, str)
    if result.error is not None:
        a_line(result.error)
    for text in result.texts:
        a_text(text)
    assert result.input_tokens >= 0 and result.output_tokens >= 0


def read(what: str, raw: bytes, mode: str) -> None:
    if what == "openai-batch-line":
        return check_line(wire_openai.batch_line(raw))
    if what == "anthropic-batch-line":
        return check_line(wire_anthropic.batch_line(raw))
    try:
        data = wire.load(raw)
        if what == "openai-batch":
            return check_state(*wire_openai.batch_state(data))
        if what == "anthropic-batch":
            return check_state(*wire_anthropic.batch_state(data))
        reader = {"chat": wire_openai.chat_reply, "completions": wire_openai.completion_reply}.get(what)
        check_reply(reader(data, mode) if reader else wire_anthropic.message_reply(data))
    except wire.BadReply as exc:
        a_line(str(exc))
    return None


def encoded(body: Any) -> bytes:
    return body if isinstance(body, bytes) else json.dumps(body).encode()


@given(what=st.sampled_from(sorted(VALID_REPLIES)), mutation=mutations, mode=st.sampled_from(modes.MODES),
       twice=st.booleans(), other=mutations)
def test_every_reply_field_is_checked_by_its_wire_reader(what: str, mutation, mode: str, twice: bool, other) -> None:
    body = mutate(VALID_REPLIES[what], mutation)
    if twice and not isinstance(body, bytes):
        body = mutate(body, other)
    with bounded():
        read(what, encoded(body), mode)


def test_the_valid_replies_read_as_answers() -> None:
    """The fuzz starts from replies that are read in full (so a mutation is what fails)."""
    for what, body in VALID_REPLIES.items():
        read(what, encoded(body), modes.LOGPROBS)
    reply = wire_openai.chat_reply(VALID_REPLIES["chat"], modes.LOGPROBS)
    assert [c.text for c in reply.choices] == ["65", '{"probability": 40}'] and reply.choices[0].positions
    assert wire_openai.batch_line(encoded(VALID_REPLIES["openai-batch-line"])).texts == ["65"]
    assert wire_anthropic.batch_line(encoded(VALID_REPLIES["anthropic-batch-line"])).texts == ["65"]


# --------------------------------------------------------------------------- whole elicitations


ENDPOINTS = [("openai", modes.TEXT), ("openai", modes.JSON), ("openai", modes.LOGPROBS),
             ("completions", modes.TEXT), ("completions", modes.LOGPROBS),
             ("anthropic", modes.TEXT), ("anthropic", modes.JSON)]


def provider(kind: str, server: FakeAPI) -> Any:
    env = {"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY}
    if kind == "anthropic":
        return AnthropicProvider("claude-fuzz", base_url=server.anthropic_url, env=env, timeout=2.0)
    cls = CompletionsProvider if kind == "completions" else OpenAIProvider
    return cls("fuzz", base_url=server.openai_url, env=env, timeout=2.0)


def check_answers(answers: list[Any]) -> None:
    for answer in answers:
        if answer.error is not None:
            a_line(answer.error)
            assert KEY not in answer.error
        elif answer.raw is not None:
            a_text(answer.raw)
            assert KEY not in answer.raw
            assert answer.value is None or (math.isfinite(answer.value) and 0 <= answer.value <= 100)


FUZZ_SETTINGS = settings(max_examples=FEW, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])


@pytest.mark.parametrize(("kind", "mode"), ENDPOINTS)
@FUZZ_SETTINGS
@given(mutation=mutations)
def test_a_hostile_server_on_every_endpoint_and_mode_gives_answers_or_one_line(shared_server: FakeAPI, kind: str,
                                                                              mode: str, mutation) -> None:
    server = shared_server.reconfigure(answer=lambda request, index: "65",
                                       mangle=lambda what, body: mutate(body, mutation))
    spec = PromptSpec("positive", "system", "Is it so?", 2, 0.7, {}, mode=mode)
    with tempfile.TemporaryDirectory(prefix="optbench-fuzz-") as name:
        engine = ApiElicitor(provider(kind, server), ResponseStore(Path(name) / "responses.sqlite"),
                             EngineSettings(concurrency=2, max_retries=1, backoff_base=0.001, backoff_cap=0.01,
                                            run_id="fuzz"))
        try:
            engine.prefetch([spec])
            record = engine.record(spec)
        finally:
            engine.close()
            engine.store.close()
    assert len(record.answers) == 2
    check_answers(record.answers)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@FUZZ_SETTINGS
@given(mutation=mutations, where=st.sampled_from(["batch", "batch-line"]))
def test_a_hostile_batch_api_gives_answers_pending_or_one_line(shared_server: FakeAPI, kind: str, mutation,
                                                              where: str) -> None:
    target = f"{kind}-{where}"
    server = shared_server.reconfigure(batches=FakeBatches(), answer=lambda request, index: "65",
                                       mangle=lambda what, body: mutate(body, mutation) if what == target else body)
    specs = [PromptSpec("positive", "system", f"Is {i} so?", 1, 0.7, {}) for i in range(2)]
    with tempfile.TemporaryDirectory(prefix="optbench-fuzz-") as name:
        engine = BatchElicitor(provider(kind, server), ResponseStore(Path(name) / "responses.sqlite"),
                               EngineSettings(backoff_base=0.001, backoff_cap=0.01, run_id="fuzz"),
                               BatchSettings(wait=0.3, poll_first=0.01, poll_max=0.05, submit_retries=1))
        try:
            engine.prefetch(specs)
            answers = [a for s in specs for a in engine.record(s).answers]
        finally:
            engine.close()
            engine.store.close()
    check_answers(answers)
