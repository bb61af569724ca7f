"""ApiElicitor against the local FakeAPI, through the real openai and anthropic SDKs.

No wall-clock assertions: retries and waits are checked through the engine's stats, the
delays it chose and the requests the fake server saw.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter

import pytest

from pytest_optbench.elicit import engine as engine_module
from pytest_optbench.elicit.engine import AdaptiveLimit, ApiElicitor, _runs
from pytest_optbench.options import EngineSettings
from pytest_optbench.prompts.build import PromptSpec
from pytest_optbench.providers.anthropic_provider import AnthropicProvider
from pytest_optbench.providers.base import Prompt
from pytest_optbench.providers.openai_provider import MAX_N, OpenAIProvider, stated_cap
from pytest_optbench.providers.remote import DEFAULT_MAX_TOKENS, REASONING_MAX_TOKENS, CallFailed, public_url
from pytest_optbench.testing import FakeAPI

OPENAI_KEY = "sk-test-SECRET-abc123XYZ"
ANTHROPIC_KEY = "sk-ant-test-SECRET-def456UVW"
ENV = {"OPENAI_API_KEY": OPENAI_KEY, "ANTHROPIC_API_KEY": ANTHROPIC_KEY}
SYSTEM = "You estimate probabilities. Reply with a single integer from 0 to 100 and nothing else."
# Tiny back-off so retries without Retry-After cost milliseconds.
FAST = EngineSettings(concurrency=8, max_retries=3, backoff_base=0.005, backoff_cap=0.05, run_id="run-1")


def spec(i: int = 0, samples: int = 3, temperature: float = 0.7, role: str = "positive") -> PromptSpec:
    return PromptSpec(role, SYSTEM, f"What is the probability that plan {i} succeeds?", samples, temperature,
                      {"item": f"item-{i:02d}", "role": role})


def settings(**changes) -> EngineSettings:
    return EngineSettings(**{**FAST.__dict__, **changes})


@pytest.fixture
def fake(shared_server):
    """``fake(**FakeAPI fields)``: the shared server, configured afresh, with no requests seen."""
    return shared_server.reconfigure


@pytest.fixture
def api(fake):
    return fake()


@pytest.fixture
def make(elicitors):
    """Build elicitors on one store file (each with its own connection, like processes)."""

    def factory(server: FakeAPI, *, provider: str = "openai", model: str = "fake-model",
                engine: EngineSettings = FAST, timeout: float = 5.0, shard=(0, 1)) -> ApiElicitor:
        if provider == "openai":
            model_obj = OpenAIProvider(model, base_url=server.openai_url, env=ENV, timeout=timeout)
        else:
            model_obj = AnthropicProvider(model, base_url=server.anthropic_url, env=ENV, timeout=timeout)
        return elicitors(model_obj, engine, shard=shard)

    return factory


def run_all(elicitor: ApiElicitor, specs: list[PromptSpec]):
    elicitor.prefetch(specs)
    return [elicitor.record(s) for s in specs]


def spy_delays(elicitor: ApiElicitor) -> list[float]:
    """The delays the engine chose before each retry."""
    delays: list[float] = []
    original = elicitor._delay

    def recording(failure: CallFailed, attempt: int) -> float:
        delays.append(original(failure, attempt))
        return delays[-1]

    elicitor._delay = recording  # type: ignore[method-assign]
    return delays


def texts(record) -> list[str | None]:
    return [a.raw for a in record.answers]


# --------------------------------------------------------------------------- success, n


def test_openai_success_several_samples_per_request(api, make):
    elicitor = make(api)
    specs = [spec(i, samples=3) for i in range(4)]
    records = run_all(elicitor, specs)
    assert len(api.requests) == 4  # one request per prompt, n=3
    assert [r.n for r in api.requests] == [3, 3, 3, 3]
    assert all(r.authorization == f"Bearer {OPENAI_KEY}" for r in api.requests)  # sent, never stored
    for s, record in zip(specs, records, strict=True):
        assert record.role == "positive" and record.user == s.user
        assert len(record.answers) == 3
        assert all(a.error is None and a.value is not None and a.cached is False for a in record.answers)
    stats = elicitor.stats
    assert (stats.total, stats.done, stats.cached, stats.requests, stats.retries, stats.failed) == (12, 12, 0, 4, 0, 0)
    assert stats.in_flight == 0
    body = next(r.body for r in api.requests if r.user == specs[0].user)  # requests run concurrently
    assert body["model"] == "fake-model" and body["temperature"] == 0.7
    assert body["messages"] == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": specs[0].user}]
    # Without --max-tokens the provider's default limit is sent (a rambling model costs little).
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS and "max_completion_tokens" not in body
    # Tokens are billed once per request: they sit on the first sample.
    answers = records[0].answers
    assert answers[0].input_tokens > 0 and answers[0].output_tokens == 6
    assert [(a.input_tokens, a.output_tokens) for a in answers[1:]] == [(0, 0), (0, 0)]
    assert stats.input_tokens == sum(a.input_tokens for r in records for a in r.answers)
    assert stats.output_tokens == 4 * 6
    assert elicitor.store.count([elicitor.key(s) for s in specs]) == {elicitor.key(s): 3 for s in specs}


def test_openai_answers_follow_the_server_sample_by_sample(fake, make):
    server = fake(answer=lambda request, index: f"{10 + index}")
    elicitor = make(server)
    [record] = run_all(elicitor, [spec(samples=4)])
    assert texts(record) == ["10", "11", "12", "13"]
    assert [a.value for a in record.answers] == [10, 11, 12, 13]


def test_openai_n_is_capped_per_request(api, make):
    elicitor = make(api)
    [record] = run_all(elicitor, [spec(samples=MAX_N + 3)])
    assert [r.n for r in api.requests] == [MAX_N, 3]
    assert len(record.answers) == MAX_N + 3 and all(a.error is None for a in record.answers)
    assert sorted(elicitor.store.get(elicitor.key(spec(samples=MAX_N + 3)))) == list(range(MAX_N + 3))


def test_anthropic_one_sample_per_request(api, make):
    elicitor = make(api, provider="anthropic", model="claude-fake")
    specs = [spec(i, samples=3) for i in range(2)]
    records = run_all(elicitor, specs)
    assert len(api.requests) == 6
    assert all(r.api == "anthropic" and "n" not in r.body for r in api.requests)
    body = next(r.body for r in api.requests if r.user == specs[0].user)
    assert body["system"] == SYSTEM and body["temperature"] == 0.7
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS  # required by the API
    assert body["messages"] == [{"role": "user", "content": specs[0].user}]
    assert all(len(r.answers) == 3 and all(a.value is not None for a in r.answers) for r in records)
    # Each request's tokens on its own sample.
    assert all(a.output_tokens == 2 and a.input_tokens > 0 for r in records for a in r.answers)
    assert elicitor.stats.requests == 6 and elicitor.stats.done == 6


def test_fake_api_records_the_anthropic_credential_as_sent(api, make):
    elicitor = make(api, provider="anthropic")
    run_all(elicitor, [spec(samples=1)])
    assert api.requests[0].authorization in (ANTHROPIC_KEY, f"Bearer {ANTHROPIC_KEY}")  # per SDK release


def test_anthropic_max_tokens_setting_is_sent(api, make):
    elicitor = make(api, provider="anthropic", engine=settings(max_tokens=12))
    run_all(elicitor, [spec(samples=1)])
    assert api.requests[0].body["max_tokens"] == 12


def test_server_without_n_returns_one_choice_and_the_engine_asks_again(fake, make):
    server = fake(support_n=False)
    elicitor = make(server)
    [record] = run_all(elicitor, [spec(samples=3)])
    assert [r.n for r in server.requests] == [3, 2, 1]  # asks for what is still missing
    assert len(record.answers) == 3 and all(a.error is None for a in record.answers)
    assert elicitor.stats.requests == 3 and elicitor.stats.retries == 0 and elicitor.stats.done == 3
    assert sorted(elicitor.store.get(elicitor.key(spec(samples=3)))) == [0, 1, 2]


def test_identical_prompts_are_asked_once(api, make):
    elicitor = make(api)
    small, large = spec(samples=2), spec(samples=5)
    other_role = PromptSpec("negative", small.system, small.user, 2, small.temperature, {})
    elicitor.prefetch([small, large, other_role])
    assert [r.n for r in api.requests] == [5]  # one key, the largest sample count
    records = [elicitor.record(s) for s in (small, large, other_role)]
    assert len(api.requests) == 1
    assert texts(records[0]) == texts(records[1])[:2] == texts(records[2])
    assert records[2].role == "negative"


def test_temperature_is_part_of_the_key(api, make):
    elicitor = make(api)
    run_all(elicitor, [spec(temperature=0.0, samples=1), spec(temperature=1.0, samples=1)])
    assert sorted(r.body["temperature"] for r in api.requests) == [0.0, 1.0]


def test_provider_complete_serves_as_a_plain_model(api, make):
    elicitor = make(api)
    text = elicitor.provider.complete(Prompt(SYSTEM, "Will it work?", 0.3))
    assert text.isdigit()
    assert api.requests[0].body["temperature"] == 0.3 and api.requests[0].n == 1
    assert elicitor.store.count([elicitor.key(spec())]) == {elicitor.key(spec()): 0}  # no store on that path


# --------------------------------------------------------------------------- cut-off replies

# A reply that ends on a number: complete when the model stopped, cut off (the number may
# have gone on: 30, 300, 30.5) when it hit the token limit.
CUT_REPLY = "I'd estimate 30"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_reply_cut_off_at_the_token_limit_reaches_the_parser(fake, make, provider):
    """OpenAI finish_reason "length" / Anthropic stop_reason "max_tokens" -> truncated=True;
    the same text that stopped on its own gives its number."""
    server = fake(answer=lambda request, index: CUT_REPLY)
    # Sample 1: the second choice of OpenAI's one request (n = 3), Anthropic's second request
    # (one per sample, asked one after another).
    server.cut_off = lambda request, index: (index if provider == "openai" else len(server.requests) - 1) == 1
    elicitor = make(server, provider=provider)
    [record] = run_all(elicitor, [spec(samples=3)])
    cut = record.answers[1]
    assert (cut.raw, cut.value, cut.reason, cut.truncated) == (CUT_REPLY, None, "truncated", True)
    for whole in (record.answers[0], record.answers[2]):
        assert (whole.value, whole.reason, whole.truncated) == (30, None, False)
    reasons = {"openai": ["stop", "length", "stop"], "anthropic": ["end_turn", "max_tokens", "end_turn"]}[provider]
    assert [a.finish_reason for a in elicitor.store.get(elicitor.key(spec(samples=3))).values()] == reasons


def test_finish_reasons_are_kept_in_the_store_across_a_rerun(fake, make):
    server = fake(answer=lambda request, index: CUT_REPLY, cut_off=lambda request, index: index == 0)
    run_all(make(server), [spec(samples=2)])
    assert len(server.requests) == 1
    again = make(server, engine=settings(run_id="run-2"))
    [record] = run_all(again, [spec(samples=2)])
    assert len(server.requests) == 1  # read back, not asked again
    assert [(a.cached, a.value, a.reason, a.truncated) for a in record.answers] == [
        (True, None, "truncated", True), (True, 30, None, False)]


def test_a_server_that_gives_no_finish_reason_leaves_truncation_unknown(fake, make):
    def without_reason(what, body):
        for choice in body["choices"]:
            del choice["finish_reason"]
        return body

    server = fake(answer=lambda request, index: CUT_REPLY, mangle=without_reason)
    elicitor = make(server)
    [record] = run_all(elicitor, [spec(samples=1)])
    assert (record.answers[0].value, record.answers[0].truncated) == (30, None)
    assert elicitor.store.get(elicitor.key(spec(samples=1)))[0].finish_reason is None


def test_the_direct_path_knows_no_finish_reason():
    from pytest_optbench.elicit.engine import elicit

    class Plain:
        name = "plain"

        def complete(self, prompt: Prompt) -> str:
            return CUT_REPLY

    [record] = elicit(Plain(), [spec(samples=1)])  # type: ignore[arg-type]
    assert (record.answers[0].value, record.answers[0].truncated) == (30, None)


# --------------------------------------------------------------------------- retries


def test_429_with_retry_after_is_retried_and_the_wait_honoured(fake, make):
    server = fake(faults=["429"], retry_after="1")
    elicitor = make(server, engine=settings(backoff_cap=60.0))
    delays = spy_delays(elicitor)
    [record] = run_all(elicitor, [spec(samples=2)])
    assert len(server.requests) == 2
    assert all(a.error is None and a.value is not None for a in record.answers)
    assert elicitor.stats.retries == 1 and elicitor.stats.rate_limited == 1 and elicitor.stats.failed == 0
    assert delays == [1.0]  # exactly what the server asked for, not a random back-off


def test_retry_after_is_capped(fake, make):
    server = fake(faults=["429"], retry_after="3600")
    elicitor = make(server, engine=settings(backoff_cap=0.05))
    failure = CallFailed("HTTP 429", retryable=True, retry_after=3600.0, rate_limited=True)
    assert elicitor._delay(failure, 0) == pytest.approx(0.1)  # twice the back-off cap at most
    [record] = run_all(elicitor, [spec(samples=1)])
    assert len(server.requests) == 2
    assert record.answers[0].error is None


def test_backoff_without_retry_after_is_bounded_and_grows():
    elicitor = ApiElicitor.__new__(ApiElicitor)
    elicitor.settings = EngineSettings(backoff_base=0.5, backoff_cap=4.0)
    failure = CallFailed("HTTP 500", retryable=True)
    for attempt, bound in ((0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (10, 4.0)):
        delays = [elicitor._delay(failure, attempt) for _ in range(50)]
        assert all(0 <= d <= bound for d in delays)


def test_500_is_retried(fake, make):
    server = fake(faults=["500", "500"])
    elicitor = make(server)
    [record] = run_all(elicitor, [spec(samples=3)])
    assert len(server.requests) == 3
    assert all(a.error is None for a in record.answers)
    assert elicitor.stats.retries == 2 and elicitor.stats.rate_limited == 0


def test_anthropic_overloaded_529_is_retried_like_a_429(fake, make):
    server = fake(faults=["overloaded"])
    elicitor = make(server, provider="anthropic")
    [record] = run_all(elicitor, [spec(samples=1)])
    assert len(server.requests) == 2
    assert record.answers[0].error is None
    assert elicitor.stats.retries == 1 and elicitor.stats.rate_limited == 1


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_timeout_is_retried(fake, make, provider):
    server = fake(faults=["timeout"], timeout_sleep=2)
    elicitor = make(server, provider=provider, timeout=0.5)  # the retry has half a second to answer
    [record] = run_all(elicitor, [spec(samples=1)])
    assert len(server.requests) == 2
    assert record.answers[0].error is None and record.answers[0].value is not None
    assert elicitor.stats.retries == 1 and elicitor.stats.failed == 0


def test_timeout_exhausted_names_the_timeout(fake, make):
    server = fake(fault_for=lambda r: "timeout", timeout_sleep=2)
    elicitor = make(server, timeout=0.3, engine=settings(max_retries=1))
    [record] = run_all(elicitor, [spec(samples=1)])
    assert len(server.requests) == 2
    assert record.answers[0].error == ("openai: request timed out after 0.3 s (long replies take long: lower "
                                       "--max-tokens, or raise --optbench-timeout) (after 1 retries)")
    counts = elicitor.request_counts()
    assert (counts["requests"], counts["retries"], counts["timeouts"]) == (2, 1, 2)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("fault", ["garbage", "badjson"])
def test_garbage_body_is_retried_then_succeeds(fake, make, provider, fault):
    server = fake(faults=[fault])
    elicitor = make(server, provider=provider)
    [record] = run_all(elicitor, [spec(samples=1)])
    assert len(server.requests) == 2
    assert record.answers[0].error is None and record.answers[0].value is not None
    assert elicitor.stats.retries == 1
    assert elicitor.store.count([elicitor.key(spec(samples=1))]) == {elicitor.key(spec(samples=1)): 1}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_auth_error_is_not_retried(fake, make, provider):
    secret = OPENAI_KEY if provider == "openai" else ANTHROPIC_KEY
    server = fake(faults=["auth"])
    elicitor = make(server, provider=provider)
    [record] = run_all(elicitor, [spec(samples=3)])
    assert len(server.requests) == 1  # exactly one request, not per sample and not retried
    assert [a.raw for a in record.answers] == [None, None, None]
    errors = [a.error for a in record.answers]
    assert all(e and e.startswith(f"{provider}: HTTP 401") for e in errors)
    assert "retries" not in errors[0]
    assert all(secret not in e and "SECRET" not in e for e in errors)
    stats = elicitor.stats
    assert stats.retries == 0 and stats.failed == 3 and stats.rate_limited == 0
    assert elicitor.store.count([elicitor.key(spec())]) == {elicitor.key(spec()): 0}  # errors are never stored


class EchoingAPI(FakeAPI):
    """A server whose 401 repeats the credential it got, as some real servers do."""

    def _fault(self, handler, request, fault):
        if fault != "echo-auth":
            return super()._fault(handler, request, fault)
        message = f"Incorrect API key provided: {request.authorization}. api_key={request.authorization}"
        return self._send(handler, 401, {"error": {"message": message, "type": "invalid_request_error",
                                                   "code": "invalid_api_key"}})


def test_an_error_message_that_repeats_the_key_is_redacted(make):
    with EchoingAPI(faults=["echo-auth"]) as server:
        elicitor = make(server)
        [record] = run_all(elicitor, [spec(samples=2)])
        assert len(server.requests) == 1
    error = record.answers[0].error
    assert error.startswith("openai: HTTP 401")
    assert "[redacted]" in error
    assert OPENAI_KEY not in error and "SECRET" not in error and "abc123XYZ" not in error
    assert all(OPENAI_KEY not in message for message in elicitor.failures.values())


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_quota_429_is_not_retried(fake, make, provider):
    server = fake(faults=["quota"])
    elicitor = make(server, provider=provider)
    [record] = run_all(elicitor, [spec(samples=2)])
    assert len(server.requests) == 1
    assert all("HTTP 429 (quota or spend limit, not retried)" in a.error for a in record.answers)
    assert elicitor.stats.retries == 0 and elicitor.stats.rate_limited == 0


def test_max_retries_exhausted_gives_error_answers_and_stores_nothing(fake, make):
    server = fake(fault_for=lambda r: "500")
    elicitor = make(server, engine=settings(max_retries=2))
    elicitor.prefetch([spec(samples=3)])
    assert len(server.requests) == 3  # the first try and two retries
    record = elicitor.record(spec(samples=3))
    assert len(server.requests) == 3  # record() does not ask again for a key that failed
    assert [a.error for a in record.answers] == [("openai: HTTP 500: Error code: 500 - The server had an error "
                                                 "(after 2 retries)")] * 3
    assert elicitor.stats.retries == 2 and elicitor.stats.failed == 3
    key = elicitor.key(spec(samples=3))
    assert elicitor.store.count([key]) == {key: 0}
    # Errors are never cached: the next run asks again and gets answers.
    healthy = fake()
    again = make(healthy, engine=settings(run_id="run-2"))
    [record] = run_all(again, [spec(samples=3)])
    assert len(healthy.requests) == 1
    assert all(a.error is None for a in record.answers)


def test_zero_retries_means_one_request(fake, make):
    server = fake(fault_for=lambda r: "500")
    elicitor = make(server, engine=settings(max_retries=0))
    run_all(elicitor, [spec(samples=1)])
    assert len(server.requests) == 1


def test_one_failing_prompt_does_not_affect_the_others(fake, make):
    # A 400 is about one request (a 401 stops the session: tests/unit/elicit/test_hostile_engine.py).
    server = fake(fault_for=lambda r: "badrequest" if "plan 1 " in r.user else None)
    elicitor = make(server)
    records = run_all(elicitor, [spec(i, samples=2) for i in range(3)])
    assert len(server.requests) == 3
    assert [all(a.error is None for a in r.answers) for r in records] == [True, False, True]
    assert elicitor.stats.failed == 2 and elicitor.stats.done == 4


# --------------------------------------------------------------------------- offline, resume


def test_offline_makes_no_request_and_names_what_is_missing(api, make):
    elicitor = make(api, engine=settings(offline=True))
    records = run_all(elicitor, [spec(i, samples=2) for i in range(3)])
    assert api.requests == []
    assert all(a.error == "not in the response store (--optbench-offline)" for r in records for a in r.answers)
    assert elicitor.stats.total == 6 and elicitor.stats.done == 0


def test_offline_reads_what_the_store_has(api, make):
    online = make(api)
    run_all(online, [spec(0, samples=2)])
    assert len(api.requests) == 1
    offline = make(api, engine=settings(offline=True, run_id="run-2"))
    first, second = run_all(offline, [spec(0, samples=3), spec(1, samples=1)])
    assert len(api.requests) == 1
    assert [a.error for a in first.answers] == [None, None, "not in the response store (--optbench-offline)"]
    assert all(a.cached is True for a in first.answers[:2])
    assert second.answers[0].error == "not in the response store (--optbench-offline)"


def test_resume_requests_only_what_is_missing(api, make):
    specs = [spec(i, samples=3) for i in range(6)]
    first = make(api)
    run_all(first, specs[:3])
    assert len(api.requests) == 3
    second = make(api, engine=settings(run_id="run-2"))
    records = run_all(second, specs)
    assert len(api.requests) == 6
    asked = Counter(r.user for r in api.requests)
    assert set(asked) == {s.user for s in specs} and set(asked.values()) == {1}  # none asked twice
    assert second.stats.cached == 9 and second.stats.total == 18 and second.stats.done == 18
    assert [all(a.cached for a in r.answers) for r in records] == [True] * 3 + [False] * 3
    assert all(a.error is None for r in records for a in r.answers)
    # Tokens of answers read back are not paid again in this run.
    assert second.stats.input_tokens == sum(a.input_tokens for r in records[3:] for a in r.answers)


def test_resume_fills_gaps_inside_a_prompt(api, make):
    elicitor = make(api)
    key = elicitor.key(spec(samples=6))
    elicitor.store.put(key, 0, ["11", "12"], run_id="old")
    elicitor.store.put(key, 3, ["14"], run_id="old")
    [record] = run_all(elicitor, [spec(samples=6)])
    assert sorted(r.n for r in api.requests) == [1, 2]  # samples 2, and 4-5
    assert texts(record)[:2] == ["11", "12"] and texts(record)[3] == "14"
    assert [a.cached for a in record.answers] == [True, True, False, True, False, False]
    assert sorted(elicitor.store.get(key)) == list(range(6))


def test_more_samples_later_asks_only_for_the_new_ones(api, make):
    run_all(make(api), [spec(samples=2)])
    [record] = run_all(make(api, engine=settings(run_id="run-2")), [spec(samples=5)])
    assert [r.n for r in api.requests] == [2, 3]
    assert [a.cached for a in record.answers] == [True, True, False, False, False]


def test_runs_of_missing_samples():
    assert _runs([]) == []
    assert _runs([0, 1, 2, 5, 6]) == [(0, 3), (5, 2)]
    assert _runs([3]) == [(3, 1)]
    assert _runs([0, 2, 4]) == [(0, 1), (2, 1), (4, 1)]


# --------------------------------------------------------------------------- sharding


def test_one_xdist_worker_asks_for_every_prompt_and_the_others_read_the_store(api, make):
    specs = [spec(i, samples=2) for i in range(12)] + [spec(i, samples=2) for i in range(3)]  # 3 asked twice
    workers = [make(api, shard=(w, 2)) for w in range(2)]
    for worker in workers:
        worker.prefetch(specs)
    assert len(api.requests) == 12
    assert (workers[0].stats.requests, workers[1].stats.requests) == (12, 0)
    assert (workers[0].stats.total, workers[1].stats.total) == (24, 0)  # what the progress display adds up
    assert workers[0].asks_for_all and not workers[1].asks_for_all
    for worker in workers:  # every item reads its answers from the store
        records = [worker.record(s) for s in specs]
        assert all(a.error is None for r in records for a in r.answers)
    assert len(api.requests) == 12
    assert Counter(r.user for r in api.requests).most_common(1)[0][1] == 1


def test_a_prompt_outside_the_prefetch_is_asked_by_the_worker_that_needs_it(api, make):
    """Nobody else would ask for it: waiting for a peer would wait for nothing."""
    specs = [spec(i, samples=1) for i in range(4)]
    workers = [make(api, shard=(w, 2)) for w in range(2)]
    for worker in workers:
        worker.note_prefetch(specs)
    keys = [workers[0].key(s) for s in specs]
    assert all(workers[0].owns(k) for k in keys) and not any(workers[1].owns(k) for k in keys)
    unseen = "f" * 64
    assert workers[0].owns(unseen) and workers[1].owns(unseen)
    [record] = [workers[1].record(spec(99, samples=1))]
    assert record.answers[0].error is None and len(api.requests) == 1


def test_a_peer_failure_is_neither_waited_for_nor_retried(fake, make):
    server = fake(fault_for=lambda r: "badrequest")
    specs = [spec(i, samples=1) for i in range(8)]
    engine = settings(peer_stall=5.0)  # a regression would wait this long per prompt, then fail below
    workers = [make(server, shard=(w, 2), engine=engine) for w in range(2)]
    for worker in workers:
        worker.prefetch(specs)
    assert len(server.requests) == 8
    records = [workers[1].record(s) for s in specs]  # the worker that did not ask
    assert all(r.answers[0].error.startswith("openai: HTTP 400") for r in records)
    assert len(server.requests) == 8  # a 400 is never asked again, not even by another worker
    keys = [workers[0].key(s) for s in specs]
    assert all(workers[0].failures[k] == workers[1].failures[k] for k in keys)  # learned from the store


def _late_peer(worker: ApiElicitor, specs: list[PromptSpec], delay: float = 0.3) -> threading.Thread:
    """The other xdist worker, starting its prefetch a little later (a slower start-up)."""

    def later() -> None:
        time.sleep(delay)
        worker.prefetch(specs)

    thread = threading.Thread(target=later)
    thread.start()
    return thread


@pytest.mark.parametrize("fault", [None, "badrequest"])
def test_a_worker_waits_for_a_late_peer_instead_of_asking_twice(fake, make, fault):
    server = fake(fault_for=lambda r: fault)
    specs = [spec(i, samples=2) for i in range(8)]
    engine = settings(peer_stall=10.0)
    late, first = (make(server, shard=(w, 2), engine=engine) for w in range(2))  # the asker starts late
    first.prefetch(specs)
    thread = _late_peer(late, specs)
    try:
        records = [first.record(s) for s in specs]  # waits for the asker's answers
    finally:
        thread.join()
    asked = Counter(r.user for r in server.requests)
    assert set(asked.values()) == {1} and len(asked) == 8
    if fault is None:
        assert all(a.error is None for r in records for a in r.answers)
    else:
        assert all(a.error.startswith("openai: HTTP 400") for r in records for a in r.answers)


def test_a_worker_waits_for_the_asker_as_long_as_it_stores_answers(fake, make):
    """No cap on the wait while the asker is at work: a large prefetch can take longer than
    any fixed wait, and a worker that gave up would pay for prompts the asker pays for too.
    Here the asker stores the other prompts' answers for ~1.2 s, four peer_stall spans, and the
    waited-for prompt last."""
    server = fake()
    specs = [spec(i, samples=1) for i in range(7)]
    engine = settings(peer_stall=0.3, concurrency=1)
    asker, waiter = (make(server, shard=(w, 2), engine=engine) for w in range(2))
    waiter.prefetch(specs)

    def slowly() -> None:
        for s in specs[1:] + specs[:1]:  # the waited-for prompt last
            time.sleep(0.2)
            run_all(asker, [s])

    thread = threading.Thread(target=slowly)
    thread.start()
    try:
        record = waiter.record(specs[0])
    finally:
        thread.join()
    assert record.answers[0].error is None
    assert Counter(r.user for r in server.requests)[specs[0].user] == 1  # asked once, by the asker


def test_a_waiting_worker_reads_the_store_only_when_another_process_wrote_to_it(fake, make, monkeypatch):
    """The wait polls often (an answer of the last round is on the session's critical path),
    so a poll must cost one PRAGMA: the prompt's answers and the failures are read again only
    after another connection committed. Here the asker stores the answer at the 5th poll."""
    server = fake()
    specs = [spec(i, samples=1) for i in range(2)]
    asker, waiter = (make(server, shard=(w, 2), engine=settings(peer_stall=3600.0)) for w in range(2))
    waiter.prefetch(specs)
    reads, polls = Counter(), []
    for name in ("get", "failure"):
        original = getattr(waiter.store, name)
        # should_stop's look for a peer's stop (every 0.5 s of the clock) is not counted.
        monkeypatch.setattr(waiter.store, name, lambda *a, _o=original, _n=name:
                            (reads.update([_n] if a[0] != engine_module.STOP_KEY else []), _o(*a))[1])

    def poll(seconds: float) -> None:
        polls.append(seconds)
        if len(polls) == 5:
            run_all(asker, [specs[0]])

    monkeypatch.setattr(engine_module.time, "sleep", poll)
    record = waiter.record(specs[0])
    assert record.answers[0].error is None and len(polls) == 5
    assert set(polls) == {engine_module.PEER_POLL}
    # The record's first look, the wait's, its first poll and the one after the asker's
    # commit; the failures (the prompt's, "done") at those two polls only.
    assert reads == {"get": 4, "failure": 4}


def test_a_prompt_the_asker_could_not_store_is_asked_once_it_is_done(fake, make, tmp_path):
    """The asker says when it has asked for every prompt: what is still missing then (an
    answer its store did not take, kept in its memory) is asked by the waiting worker at once,
    not after peer_stall."""
    server = fake()
    specs = [spec(i, samples=1) for i in range(3)]
    asker, waiter = (make(server, shard=(w, 2), engine=settings(peer_stall=3600.0)) for w in range(2))
    asker.prefetch(specs)
    asker.store._db.execute("DELETE FROM answers WHERE key = ?", (asker.key(specs[0]),))
    waiter.prefetch(specs)
    done = []
    thread = threading.Thread(target=lambda: done.append(waiter.record(specs[0])), daemon=True)
    thread.start()
    thread.join(timeout=30)
    assert done, "the waiting worker was still waiting for an asker that had said it was done"
    assert done[0].answers[0].error is None
    assert len(server.requests) == 4


def test_a_failure_of_an_earlier_session_is_asked_again(fake, make):
    """Failures are shared within a session only: errors are never cached."""
    server = fake(faults=["auth"])
    failed = make(server, engine=settings(run_id="run-1"))
    [record] = run_all(failed, [spec(samples=1)])
    assert record.answers[0].error.startswith("openai: HTTP 401")
    key = failed.key(spec(samples=1))
    assert failed.store.failure(key, "run-1") == failed.failures[key]
    later = make(server, shard=(0, 1), engine=settings(run_id="run-2"))
    [record] = run_all(later, [spec(samples=1)])
    assert record.answers[0].error is None and len(server.requests) == 2
    assert later.store.failure(key, "run-2") is None


# --------------------------------------------------------------------------- parameter adaptation


def test_rejected_parameters_are_dropped_and_noted(fake, make):
    server = fake(reject_params=("temperature", "max_tokens"))
    elicitor = make(server, engine=settings(max_tokens=16, concurrency=1))
    records = run_all(elicitor, [spec(i, samples=2) for i in range(3)])
    bodies = [r.body for r in server.requests]
    assert all(a.error is None and a.value is not None for r in records for a in r.answers)
    notes = " | ".join(elicitor.provider.notes)
    assert "rejected temperature" in notes and "no longer sent" in notes
    assert "rejected max_tokens" in notes and "max_completion_tokens" in notes
    assert len(elicitor.provider.notes) == 2
    # Two rejected requests for the first prompt, then the adapted request for every prompt.
    assert len(bodies) == 5
    assert "temperature" in bodies[0] and "temperature" not in bodies[1]
    assert bodies[1]["max_tokens"] == 16 and "max_tokens" not in bodies[2]
    assert all("temperature" not in b and b["max_completion_tokens"] == 16 for b in bodies[2:])
    assert elicitor.stats.retries == 0 and elicitor.stats.requests == 3


def test_rejected_n_falls_back_to_one_sample_per_request(fake, make):
    server = fake(reject_params=("n",))
    elicitor = make(server, engine=settings(concurrency=1))
    [record] = run_all(elicitor, [spec(samples=3)])
    ns = [r.n for r in server.requests]
    assert all(a.error is None for a in record.answers)
    assert ns == [3, 1, 1, 1]
    assert any("rejected n = 3 and stated no cap" in note for note in elicitor.provider.notes)
    assert elicitor.provider.max_n == 1
    assert elicitor.request_counts()["parameter_changes"] == 1


def test_rejected_n_uses_the_cap_the_server_states(fake, make):
    # llama.cpp's server started with -np 4 accepts n <= 4 and says so in its 400.
    server = fake(max_n=4)
    elicitor = make(server, engine=settings(concurrency=1))
    [record] = run_all(elicitor, [spec(samples=10)])
    assert [a.error for a in record.answers] == [None] * 10
    assert [r.n for r in server.requests] == [10, 4, 4, 2]
    assert elicitor.provider.max_n == 4
    assert any("at most n = 4 (it rejected n = 10)" in note for note in elicitor.provider.notes)


@pytest.mark.parametrize(("message", "cap"), [
    ("Field 'n': Value must be between 1 <= value <= 4, but got 5", 4),
    ("Invalid 'n': integer above maximum value. Expected a value <= 128, but got 200 instead.", 128),
    ("n must be at most 8", 8),
    ("n: ensure this value is less than or equal to 2", 2),
    ("'n' is not supported with this model.", None),
])
def test_stated_cap_reads_the_servers_words(message, cap):
    assert stated_cap(message.lower()) == cap


def test_reasoning_models_get_a_larger_default_token_limit(api, make):
    elicitor = make(api, model="o3-mini")
    run_all(elicitor, [spec(samples=1)])
    assert api.requests[0].body["max_completion_tokens"] == REASONING_MAX_TOKENS
    assert elicitor.max_tokens == REASONING_MAX_TOKENS


def test_rejected_n_fallback_does_not_use_up_a_retry(fake, make):
    server = fake(reject_params=("n",))
    elicitor = make(server, engine=settings(concurrency=1, max_retries=0))
    [record] = run_all(elicitor, [spec(samples=3)])
    assert [a.error for a in record.answers] == [None, None, None]


def test_anthropic_rejected_temperature_is_dropped_and_noted(fake, make):
    server = fake(reject_params=("temperature",))
    elicitor = make(server, provider="anthropic", engine=settings(concurrency=1))
    records = run_all(elicitor, [spec(i, samples=1) for i in range(2)])
    bodies = [r.body for r in server.requests]
    assert all(r.answers[0].error is None for r in records)
    assert [("temperature" in b) for b in bodies] == [True, False, False]
    assert elicitor.provider.notes == ["fake-model: the server rejected temperature, so it is no longer sent"]


def test_a_rejection_that_cannot_be_adapted_fails_without_retry(fake, make):
    server = fake(reject_params=("model",))
    elicitor = make(server)
    [record] = run_all(elicitor, [spec(samples=2)])
    assert len(server.requests) == 1
    assert record.answers[0].error.startswith("openai: HTTP 400")
    assert elicitor.stats.retries == 0


@pytest.mark.parametrize("model", ["o1", "o3", "o3-mini", "o4-mini-2025-04-16", "gpt-5", "gpt-5-mini", "GPT-5"])
def test_reasoning_families_send_no_temperature_from_the_start(fake, make, model):
    server = fake(reject_params=("temperature", "max_tokens"))
    elicitor = make(server, model=model, engine=settings(max_tokens=32))
    [record] = run_all(elicitor, [spec(samples=2)])
    bodies = [r.body for r in server.requests]
    assert len(bodies) == 1  # no rejected request first
    assert "temperature" not in bodies[0] and "max_tokens" not in bodies[0]
    assert bodies[0]["max_completion_tokens"] == 32 and bodies[0]["n"] == 2
    assert all(a.error is None for a in record.answers)
    assert elicitor.provider.notes == [(f"{model} is a reasoning model: temperature is not sent and max_tokens "
                                       "is sent as max_completion_tokens")]


@pytest.mark.parametrize("model", ["gpt-4.1-mini", "gpt-4o", "gpt-5-chat-latest", "llama3"])
def test_other_models_send_temperature_and_max_tokens(api, make, model):
    elicitor = make(api, model=model, engine=settings(max_tokens=32))
    run_all(elicitor, [spec(samples=1)])
    body = api.requests[0].body
    assert body["temperature"] == 0.7 and body["max_tokens"] == 32 and "max_completion_tokens" not in body
    assert elicitor.provider.notes == []


def test_temperature_stays_in_the_key_when_it_is_not_sent(fake, make):
    server = fake()
    elicitor = make(server, model="o3-mini")
    assert elicitor.key(spec(temperature=0.0)) != elicitor.key(spec(temperature=1.0))


# --------------------------------------------------------------------------- concurrency


class ConcurrencyProbe:
    """An ``answer`` callable that holds each request briefly and records the most at once."""

    def __init__(self, hold: float = 0.05) -> None:
        self.hold, self.now, self.most = hold, 0, 0
        self._lock = threading.Lock()

    def __call__(self, request, index: int) -> str:
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(self.hold)
        with self._lock:
            self.now -= 1
        return "55"


@pytest.mark.parametrize("concurrency", [1, 8])
def test_concurrency_limit_is_never_exceeded(fake, make, concurrency):
    probe = ConcurrencyProbe(hold=0.05)
    server = fake(answer=probe)
    elicitor = make(server, engine=settings(concurrency=concurrency))
    records = run_all(elicitor, [spec(i, samples=1) for i in range(40 if concurrency > 1 else 6)])
    requests = len(server.requests)
    assert all(r.answers[0].value == 55 for r in records)
    assert requests == len(records)
    assert 1 <= probe.most <= concurrency
    if concurrency > 1:
        assert probe.most >= 4  # requests really overlap
    assert elicitor.stats.in_flight == 0


def test_concurrency_limit_holds_through_429s_and_retries(fake, make):
    probe = ConcurrencyProbe(hold=0.02)
    server = fake(answer=probe, faults=["429"] * 6, retry_after="0")
    elicitor = make(server, engine=settings(concurrency=8))
    records = run_all(elicitor, [spec(i, samples=1) for i in range(24)])
    assert len(server.requests) == 30
    assert all(r.answers[0].error is None for r in records)
    assert elicitor.stats.rate_limited == 6 and elicitor.stats.retries == 6
    assert probe.most <= 8


def test_adaptive_limit_halves_on_429_and_grows_back():
    async def scenario():
        limit = AdaptiveLimit(8)
        assert limit.limit == 8
        await limit.acquire()
        await limit.release(rate_limited=True)
        assert limit.limit == 4
        await limit.acquire()
        await limit.release(rate_limited=True)  # within a second of the last cut: no second cut
        assert limit.limit == 4
        for _ in range(100):
            await limit.acquire()
            await limit.release()
        assert limit.limit == 8  # back up to the ceiling, never above
        assert limit.in_flight == 0

        floor = AdaptiveLimit(1)
        await floor.acquire()
        await floor.release(rate_limited=True)
        assert floor.limit == 1  # never below one
        assert AdaptiveLimit(0).ceiling == 1

    asyncio.run(scenario())


def test_adaptive_limit_blocks_the_next_request_until_a_slot_frees():
    async def scenario():
        limit = AdaptiveLimit(2)
        await limit.acquire()
        await limit.acquire()
        waiter = asyncio.create_task(limit.acquire())
        await asyncio.sleep(0.02)
        assert not waiter.done() and limit.in_flight == 2
        await limit.release()
        await asyncio.wait_for(waiter, 1)
        assert limit.in_flight == 2

    asyncio.run(scenario())


def test_retry_after_pauses_every_request():
    async def scenario():
        limit = AdaptiveLimit(4)
        await limit.acquire()
        await limit.release(rate_limited=True, pause=0.8)
        assert limit.resume_at > time.monotonic()
        waiter = asyncio.create_task(limit.acquire())
        await asyncio.sleep(0.05)
        assert not waiter.done()  # paused although slots are free
        await asyncio.wait_for(waiter, 2)
        assert limit.in_flight == 1

    asyncio.run(scenario())


# --------------------------------------------------------------------------- misc


def test_progress_callback_sees_the_counters(api, make):
    seen = []
    elicitor = make(api)
    elicitor.on_progress = lambda stats: seen.append((stats.done, stats.total, stats.in_flight))
    elicitor.prefetch([spec(i, samples=2) for i in range(3)])
    assert seen[0] == (0, 6, 0) and seen[-1] == (6, 6, 0)
    assert max(in_flight for _, _, in_flight in seen) >= 1


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_close_releases_the_http_client_and_the_event_loop(api, make, provider):
    elicitor = make(api, provider=provider)
    run_all(elicitor, [spec(samples=1)])
    loop, client = elicitor.provider.runner().loop, elicitor.provider.client
    elicitor.close()
    assert client.is_closed()
    assert loop.is_closed()


def test_public_url_strips_credentials():
    assert public_url("https://user:pw@example.com:8443/v1/?key=abc#x") == "https://example.com:8443/v1"
    assert public_url(None) is None


def test_openai_provider_needs_a_key_or_a_base_url():
    with pytest.raises(ValueError, match="OPENAI_API_KEY is not set"):
        OpenAIProvider("gpt-4.1-mini", base_url=None, env={}, timeout=1)
    local = OpenAIProvider("llama3", base_url="http://127.0.0.1:9/v1", env={}, timeout=1)
    assert local.identity()["base_url"] == "http://127.0.0.1:9/v1"
    env_url = OpenAIProvider("llama3", base_url=None, env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, timeout=1)
    assert env_url.identity() == local.identity()


def test_request_bodies_carry_no_secret_but_the_header(api, make):
    run_all(make(api), [spec(samples=1)])
    assert OPENAI_KEY not in json.dumps(api.requests[0].body)


def test_a_dead_peer_is_not_waited_for_long(fake, make):
    """The owner of a prompt never stores anything (it crashed): after peer_stall seconds of
    silence in the whole store, the waiting worker asks itself."""
    server = fake()
    specs = [spec(i, samples=1) for i in range(6)]
    worker = make(server, shard=(1, 2), engine=settings(peer_stall=0.25))
    worker.prefetch(specs)
    assert not server.requests  # worker 0 asks for the prefetch
    records = [worker.record(s) for s in specs]
    assert all(a.error is None for r in records for a in r.answers)
    assert len(server.requests) == 6  # the dead asker's prompts were asked once, here
