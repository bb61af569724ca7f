"""Hostile replies from a server on 127.0.0.1 (issue 24), through the real openai and anthropic
SDKs: every field is checked before use, a reply that fails a check is that answer's error in
one line, its neighbours are stored, a reply too large is never read whole, and a server that
stops answering ends the session's requests.

The FakeAPI is made hostile with ``mangle`` (what it is about to send -> what it sends). No
wall-clock assertions: what the store, the records and the server's request log hold.
"""

from __future__ import annotations

import json
import math
import tracemalloc
from pathlib import Path

import pytest

from pytest_optbench.answers import distribution
from pytest_optbench.elicit.engine import ApiElicitor, ModelCalls, elicit
from pytest_optbench.elicit.store import ResponseStore
from pytest_optbench.options import EngineSettings
from pytest_optbench.prompts import modes
from pytest_optbench.prompts.build import PromptSpec
from pytest_optbench.providers.anthropic_provider import AnthropicProvider
from pytest_optbench.providers.base import as_model
from pytest_optbench.providers.completions import CompletionsProvider
from pytest_optbench.providers.openai_provider import OpenAIProvider
from pytest_optbench.records.item import NOT_ASKED
from pytest_optbench.testing import FakeAPI
from pytest_optbench.testing.server import Streamed, huge_reply
from pytest_optbench.text.display import printable

KEY = "sk-test-HOSTILE-REPLY-0123456789"
ENV = {"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY}
FAST = EngineSettings(concurrency=4, max_retries=1, backoff_base=0.001, backoff_cap=0.01, run_id="run-1")


def spec(i: int = 0, samples: int = 2, mode: str = modes.TEXT) -> PromptSpec:
    return PromptSpec("positive", "Reply with one integer from 0 to 100.",
                      f"What is the probability that plan {i} succeeds?", samples, 0.7,
                      {"item": f"item-{i:02d}"}, mode=mode)


@pytest.fixture
def fake(shared_server):
    return shared_server.reconfigure


@pytest.fixture
def make(elicitors):
    def factory(server: FakeAPI, provider: str = "openai", engine: EngineSettings = FAST, timeout: float = 5.0,
                max_reply: int | None = None) -> ApiElicitor:
        if provider == "openai":
            model = OpenAIProvider("fake-model", base_url=server.openai_url, env=ENV, timeout=timeout)
        elif provider == "completions":
            model = CompletionsProvider("fake-base", base_url=server.openai_url, env=ENV, timeout=timeout)
        else:
            model = AnthropicProvider("claude-fake", base_url=server.anthropic_url, env=ENV, timeout=timeout)
        if max_reply is not None:
            model.max_reply = max_reply
        return elicitors(model, engine)

    return factory


def answers(elicitor: ApiElicitor, specs: list[PromptSpec]):
    elicitor.prefetch(specs)
    return [a for s in specs for a in elicitor.record(s).answers]


def one_line(error: str | None) -> str:
    assert error is not None
    assert "\n" not in error and printable(error) == error and "Traceback" not in error, error
    assert KEY not in error
    return error


def first_choice(change):
    """A mangle that changes choice 0 of every chat/completions reply with ``change(choice)``."""
    def mangle(what, body):
        if what in ("openai", "completions"):
            change(body["choices"][0])
        return body
    return mangle


# --------------------------------------------------------------------------- message content


@pytest.mark.parametrize("mode", [modes.TEXT, modes.JSON])
@pytest.mark.parametrize(("content", "words"), [(65, "is a number, not text"), ([1, 2], "is a number, not an object"),
                                                ({"a": 1}, "is an object, not text")])
def test_content_that_is_no_text_is_that_answers_error_and_its_neighbour_is_stored(fake, make, mode, content, words):
    server = fake(mangle=first_choice(lambda choice: choice["message"].update(content=content)))
    elicitor = make(server)
    got = answers(elicitor, [spec(samples=2, mode=mode)])
    assert got[0].error is None and got[0].value is not None  # choice 1 of the first reply, stored
    assert words in one_line(got[1].error) and "choices[0].message.content" in got[1].error
    assert len(elicitor.store.get(elicitor.key(spec(samples=2, mode=mode)))) == 1


def test_content_as_a_list_of_text_parts_is_read(fake, make):
    server = fake(mangle=first_choice(lambda choice: choice["message"].update(
        content=[{"type": "text", "text": "About "}, {"type": "text", "text": "70"}])))
    got = answers(make(server), [spec(samples=1)])
    assert (got[0].raw, got[0].value) == ("About 70", 70)


def test_a_choice_that_is_a_number_is_an_error_not_an_empty_answer(fake, make):
    server = fake(mangle=lambda what, body: {**body, "choices": [5]})
    got = answers(make(server), [spec(samples=1)])
    assert "choices[0] is a number, not an object" in one_line(got[0].error)


def test_a_reply_that_is_a_list_or_has_no_choices_is_retried_then_one_line(fake, make):
    server = fake(mangle=lambda what, body: [body])
    elicitor = make(server)
    got = answers(elicitor, [spec(samples=1)])
    assert "the reply is a list, not an object" in one_line(got[0].error)
    assert len(server.requests) == 2  # retried once (FAST), then the answer's error


# --------------------------------------------------------------------------- usage counts


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_usage_counts_that_are_no_counts_keep_the_answers(fake, make, provider):
    def mangle(what, body):
        body["usage"] = {"prompt_tokens": "many", "completion_tokens": -3, "input_tokens": [1], "output_tokens": 1e300}
        return body

    elicitor = make(fake(mangle=mangle), provider=provider)
    got = answers(elicitor, [spec(samples=2)])
    assert all(a.error is None and a.value is not None for a in got)
    assert elicitor.stats.input_tokens == 0
    assert any("usage counts that are not whole numbers" in note for note in elicitor.provider.notes)


# --------------------------------------------------------------------------- log-probabilities


def _positions(what, body, change):
    for choice in body["choices"]:
        if choice.get("logprobs"):
            change(choice["logprobs"])
    return body


def _entries(logprobs):
    return logprobs.get("content")


@pytest.mark.parametrize("provider", ["openai", "completions"])
@pytest.mark.parametrize("shape", ["openai", "llama.cpp"])
def test_a_lone_surrogate_in_a_logprobs_token_is_stored_and_read(fake, make, provider, shape):
    def change(logprobs):
        if "content" in logprobs:
            logprobs["content"][-1]["token"] += "\ud800"
            logprobs["content"][-1]["bytes"] = None
        else:
            logprobs["tokens"][-1] += "\ud800"

    server = fake(answer=lambda request, index: "65", completions_shape=shape,
                  mangle=lambda what, body: _positions(what, body, change))
    elicitor = make(server, provider=provider)
    got = answers(elicitor, [spec(samples=1, mode=modes.LOGPROBS)])
    assert got[0].error is None and got[0].value == pytest.approx(65, abs=1)
    stored = elicitor.store.get(elicitor.key(spec(samples=1, mode=modes.LOGPROBS)))[0]
    assert "\ufffd" in stored.logprobs
    stored.logprobs.encode("utf-8")


@pytest.mark.parametrize("provider", ["openai", "completions"])
@pytest.mark.parametrize(("value", "words"), [(3.0, "above 0"), ("-1", "is text, not a log-probability"),
                                              (None, "is null"), (float("inf"), "not a finite")])
def test_a_log_probability_that_is_none_fails_the_answer(fake, make, provider, value, words):
    def change(logprobs):
        entries = _entries(logprobs)
        if entries is not None:
            entries[0]["top_logprobs"][-1]["logprob"] = value
        else:
            top = logprobs["top_logprobs"][0]
            top[next(iter(top))] = value

    server = fake(answer=lambda request, index: "65", mangle=lambda what, body: _positions(what, body, change))
    got = answers(make(server, provider=provider), [spec(samples=1, mode=modes.LOGPROBS)])
    assert got[0].value is None
    assert words in one_line(got[0].error) and "logprob" in got[0].error


def test_a_positive_log_probability_cannot_change_the_answer(fake, make):
    """The model generated "65"; a hostile alternative "20" at +3 once made the answer 20."""
    def change(logprobs):
        logprobs["content"][0]["top_logprobs"].append({"token": "20", "logprob": 3.0, "bytes": None})

    server = fake(answer=lambda request, index: "65", mangle=lambda what, body: _positions(what, body, change))
    got = answers(make(server), [spec(samples=1, mode=modes.LOGPROBS)])
    assert got[0].value != 20 and "above 0" in one_line(got[0].error)


def test_a_conftest_models_log_probabilities_are_checked_too():
    class Model:
        name = "plain"

        def complete(self, prompt):
            return "50"

        def logprobs(self, prompt):
            return [distribution.Position("65", -0.1, (("65", -0.1), ("20", 2.0)))]

    [record] = elicit(as_model(Model()), [spec(samples=1, mode=modes.LOGPROBS)], ModelCalls(None))
    assert "above 0" in one_line(record.answers[0].error)


# --------------------------------------------------------------------------- Anthropic


@pytest.mark.parametrize(("content", "words"), [
    (5, "content is a number, not a list"),
    ([{"type": "text", "text": 65}], "content[0].text is a number, not text"),
    ([{"type": "tool_use", "input": "65"}], "content[0].input is text, not an object"),
    ([7], "content[0] is a number, not an object"),
])
def test_an_anthropic_message_that_is_none_is_one_line(fake, make, content, words):
    server = fake(mangle=lambda what, body: {**body, "content": content})
    got = answers(make(server, provider="anthropic"), [spec(samples=1)])
    assert words in one_line(got[0].error)


# --------------------------------------------------------------------------- sizes


@pytest.mark.parametrize("provider", ["openai", "completions", "anthropic"])
def test_a_300_mb_reply_is_never_read_whole(fake, make, provider):
    server = fake(mangle=lambda what, body: huge_reply(300_000_000))
    elicitor = make(server, provider=provider, max_reply=2_000_000)
    tracemalloc.start()
    try:
        got = answers(elicitor, [spec(samples=1)])
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "larger than 2 MB (--optbench-max-reply)" in one_line(got[0].error)
    assert len(server.requests) == 1  # not retried: the next try would bring the same
    assert peak < 100 << 20, f"{peak >> 20} MB"  # the SDK's first import included; the body is 300 MB


def test_a_reply_whose_length_says_it_is_too_large_is_not_read(fake, make):
    big = b'{"choices": [{"message": {"content": "' + b"7" * 3_000_000 + b'"}}]}'
    server = fake(mangle=lambda what, body: big)
    got = answers(make(server, max_reply=1_000_000), [spec(samples=1)])
    assert "it says 3,000,0" in one_line(got[0].error)


def test_json_content_just_within_the_limit_is_kept(fake, make):
    text = '{"probability": 65, "pad": "' + "x" * 500_000 + '"}'
    server = fake(answer=lambda request, index: text, structured=False)
    got = answers(make(server, max_reply=2_000_000), [spec(samples=1, mode=modes.JSON)])
    assert got[0].value == 65 and got[0].error is None


def test_a_conftest_model_that_returns_50_mb_is_one_error_and_no_memory():
    calls = ModelCalls(None, max_reply=8_000_000)
    digits = "7" * 50_000_000
    tracemalloc.start()
    try:
        [record] = elicit(as_model(lambda prompt: digits), [spec(samples=3)], calls)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert all("50,000,000 characters, more than the 8 MB --optbench-max-reply" in one_line(a.error)
               for a in record.answers)
    assert all(a.raw is None for a in record.answers)
    assert peak < 20 << 20, f"{peak >> 20} MB"


# --------------------------------------------------------------------------- a server that stops answering


def test_a_server_that_stops_answering_stops_the_session_and_keeps_what_came(fake, make):
    answered = set()

    def fault(request):
        if len(answered) < 3 or request.user in answered:
            answered.add(request.user)
            return None
        return "timeout"

    server = fake(fault_for=fault, timeout_sleep=3.0)
    engine = EngineSettings(concurrency=1, max_retries=6, backoff_base=0.001, backoff_cap=0.01, run_id="run-1")
    elicitor = make(server, engine=engine, timeout=0.2)
    specs = [spec(i, samples=1) for i in range(40)]
    got = answers(elicitor, specs)
    assert [a.value is not None for a in got[:3]] == [True] * 3
    assert len(elicitor.store.count([elicitor.key(s) for s in specs[:3]])) == 3
    assert elicitor.stop_reason.startswith("the server stopped answering: 6 requests in a row timed out (0.2 s each")
    assert len(server.requests) == 3 + 6  # not 37 prompts x 7 tries
    assert sum(1 for a in got if (a.error or "").startswith(NOT_ASKED)) >= 36


def test_a_reply_that_trickles_in_is_a_timeout(fake, make):
    def trickle(what, body):
        return Streamed([b" "] * 30 + [b'{"choices": []}'], delay=0.05)

    server = fake(mangle=trickle)
    engine = EngineSettings(concurrency=1, max_retries=0, run_id="run-1")
    got = answers(make(server, engine=engine, timeout=0.4), [spec(samples=1)])
    assert "the reply was not complete after 0.8 s (twice --optbench-timeout)" in one_line(got[0].error)


def test_answers_are_finite_and_within_the_scale(fake, make):
    server = fake(mangle=first_choice(lambda choice: choice["message"].update(content="1e309")))
    got = answers(make(server), [spec(samples=2)])
    assert all(a.value is None or (math.isfinite(a.value) and 0 <= a.value <= 100) for a in got)


def test_the_store_of_the_hostile_run_is_small(fake, make, tmp_path):
    """60 MB of JSON content x 6 answers once made a 361 MB store: now each is refused."""
    server = fake(mangle=lambda what, body: huge_reply(60 * 2 ** 20, fill=b"9"))
    got = answers(make(server, max_reply=8_000_000), [spec(i, samples=2, mode=modes.JSON) for i in range(3)])
    assert all("larger than 8 MB" in one_line(a.error) for a in got)
    assert Path(tmp_path / "responses.sqlite").stat().st_size < 1 << 20


@pytest.mark.parametrize("value", ["soon", "nan", "inf", "1e400", "Thu, 99 Foo 2015"])
def test_a_retry_after_that_is_no_time_is_a_rate_limit_without_a_wait(fake, make, value):
    server = fake(faults=["429"], retry_after=value)
    elicitor = make(server)
    got = answers(elicitor, [spec(samples=1)])
    assert got[0].error is None and got[0].value is not None  # retried at once, answered
    assert elicitor.stats.rate_limited == 1


def test_a_third_party_provider_that_returns_no_text_is_one_line(tmp_path):
    from pytest_optbench.providers.remote import ApiProvider, ApiResult

    class Odd(ApiProvider):
        provider = "odd"

        async def generate(self, request):
            return ApiResult([65, None], input_tokens="many")  # type: ignore[list-item, arg-type]

    elicitor = ApiElicitor(Odd("m", None, None, 5.0), ResponseStore(tmp_path / "s.sqlite"), FAST)
    try:
        got = answers(elicitor, [spec(samples=2)])
    finally:
        elicitor.close()
        elicitor.store.close()
    assert all("odd: the provider returned an answer that is int, not text" in one_line(a.error) for a in got)


def gzip_bomb(size: int) -> Streamed:
    """A gzip body that expands to ``size`` bytes of JSON (made while it is sent)."""
    import zlib

    def chunks():
        packer = zlib.compressobj(9, zlib.DEFLATED, 31)
        yield packer.compress(b'{"choices": [{"message": {"content": "')
        block = b"7" * (1 << 20)
        for _ in range(size >> 20):
            yield packer.compress(block)
        yield packer.compress(b'"}}]}') + packer.flush()

    return Streamed(chunks(), headers=(("content-encoding", "gzip"),))


def test_a_gzip_bomb_expands_no_further_than_the_limit(fake, make):
    server = fake(mangle=lambda what, body: gzip_bomb(1 << 30))
    tracemalloc.start()
    try:
        got = answers(make(server, max_reply=2_000_000), [spec(samples=1)])
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "larger than 2 MB (--optbench-max-reply)" in one_line(got[0].error)
    assert peak < 100 << 20, f"{peak >> 20} MB"


def test_a_compressed_reply_within_the_limit_is_read(fake, make):
    import zlib

    def small(what, body):
        packer = zlib.compressobj(6, zlib.DEFLATED, 31)
        return Streamed([packer.compress(json.dumps(body).encode()) + packer.flush()],
                        headers=(("content-encoding", "gzip"),))

    got = answers(make(fake(mangle=small)), [spec(samples=2)])
    assert all(a.error is None and a.value is not None for a in got)


def test_a_reply_in_an_encoding_not_asked_for_is_refused(fake, make):
    server = fake(mangle=lambda what, body: Streamed([b"xx"], headers=(("content-encoding", "br"),)))
    got = answers(make(server), [spec(samples=1)])
    assert "compressed as 'br', which was not asked for" in one_line(got[0].error)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_bad_key_with_a_huge_error_body_still_stops_the_session_at_once(fake, make, provider):
    server = fake(fault_for=lambda request: "auth", mangle=lambda what, body: huge_reply(9_000_000)
                  if what.endswith("-error") else body)
    elicitor = make(server, provider=provider)
    got = answers(elicitor, [spec(i, samples=1) for i in range(5)])
    assert 1 <= len(server.requests) <= min(5, elicitor.settings.concurrency)  # the first round at most
    assert "HTTP 401" in one_line(elicitor.stop_reason)
    assert all(a.error for a in got)


def test_a_429_with_a_huge_body_is_still_a_rate_limit(fake, make):
    server = fake(faults=["429"], mangle=lambda what, body: huge_reply(9_000_000) if what.endswith("-error") else body)
    elicitor = make(server)
    got = answers(elicitor, [spec(samples=1)])
    assert got[0].error is None and elicitor.stats.rate_limited == 1
