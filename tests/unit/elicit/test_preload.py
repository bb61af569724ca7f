"""What a cold session does ahead of its first request, and while it waits for the answers:
the SDK imported and the client built on the loop's thread (preload), the caller's own work
done once every request slot holds a request (prefetch's ``meanwhile``). No wall-clock
assertions: the order of events is checked through events and the requests the server saw."""

from __future__ import annotations

import asyncio
import os
import sys
import threading

import pytest

from pytest_optbench.elicit.store import ResponseStore
from pytest_optbench.options import EngineSettings
from pytest_optbench.prompts.build import PromptSpec
from pytest_optbench.providers.loop import LoopThread
from pytest_optbench.providers.openai_provider import OpenAIProvider
from pytest_optbench.providers.remote import ApiProvider, ApiRequest, ApiResult
from pytest_optbench.session import worker as worker_module

ENV = {"OPENAI_API_KEY": "sk-test-SECRET-preload"}
SYSTEM = "You estimate probabilities. Reply with a single integer from 0 to 100 and nothing else."
FAST = EngineSettings(concurrency=4, max_retries=1, backoff_base=0.005, backoff_cap=0.05, run_id="run-1")


def spec(i: int, samples: int = 1) -> PromptSpec:
    return PromptSpec("positive", SYSTEM, f"What is the probability that plan {i} succeeds?", samples, 0.7,
                      {"item": f"item-{i:02d}", "role": "positive"})


class Built(ApiProvider):
    """A provider whose client is a plain object: records the thread that built it."""

    provider = "built"
    sdk_module = "json"  # any importable module

    def __init__(self, fail: BaseException | None = None) -> None:
        super().__init__("m", None, None, 5.0)
        self.fail, self.builds, self.threads = fail, 0, []

    def make_client(self) -> object:
        self.builds += 1
        self.threads.append(threading.current_thread())
        if self.fail is not None:
            raise self.fail
        return object()


def test_preload_builds_the_client_on_the_loop_thread_once():
    provider = Built()
    try:
        provider.preload()
        provider.preload()  # a second call changes nothing
        client = provider.client  # waits for the preload
        assert client is provider.client
        assert provider.builds == 1
        assert provider.threads == [provider.runner().thread]
    finally:
        provider.close()


def test_a_failed_preload_is_raised_where_the_client_is_first_used():
    provider = Built(fail=ImportError("the SDK is broken: no module named 'openai._client'"))
    try:
        provider.preload()
        with pytest.raises(ImportError, match="the SDK is broken"):
            _ = provider.client
        with pytest.raises(ImportError, match="the SDK is broken"):
            _ = provider.sdk  # the SDK's use raises the same failure, it is not imported again
        assert provider.builds == 1
    finally:
        provider.close()


def test_a_failed_preload_fails_the_answers_with_its_reason(shared_server, elicitors):
    server = shared_server.reconfigure()
    provider = OpenAIProvider("fake-model", base_url=server.openai_url, env=ENV, timeout=5.0)

    def broken() -> object:
        raise ImportError("the SDK is broken: cannot import name 'AsyncOpenAI'")

    provider.make_client = broken  # type: ignore[method-assign]
    elicitor = elicitors(provider, FAST)
    elicitor.preload()
    specs = [spec(i) for i in range(3)]
    elicitor.prefetch(specs)
    records = [elicitor.record(s) for s in specs]
    assert not server.requests
    assert all("cannot import name 'AsyncOpenAI'" in (a.error or "") for r in records for a in r.answers)
    assert all(r.answers for r in records)


def test_preload_with_a_real_sdk_sends_nothing_and_the_requests_use_its_client(shared_server, elicitors):
    server = shared_server.reconfigure()
    provider = OpenAIProvider("fake-model", base_url=server.openai_url, env=ENV, timeout=5.0)
    elicitor = elicitors(provider, FAST)
    elicitor.preload()
    preloaded = provider.client
    assert not server.requests  # building the client asks nothing
    specs = [spec(i, samples=2) for i in range(3)]
    elicitor.prefetch(specs)
    assert provider.client is preloaded
    assert len(server.requests) == 3
    assert all(len(elicitor.record(s).answers) == 2 for s in specs)


def test_an_offline_session_preloads_nothing(shared_server, elicitors):
    server = shared_server.reconfigure()
    provider = OpenAIProvider("fake-model", base_url=server.openai_url, env=ENV, timeout=5.0)
    elicitor = elicitors(provider, EngineSettings(**{**FAST.__dict__, "offline": True}))
    elicitor.preload()
    assert provider._preload is None and provider._client is None


def test_the_store_says_when_it_holds_no_answer(tmp_path):
    store = ResponseStore(tmp_path / "responses.sqlite")
    try:
        assert store.empty()
        store.put("k" * 64, 0, ["42"])
        assert not store.empty()
    finally:
        store.close()


class Gated(ApiProvider):
    """Answers only once ``meanwhile`` has run: a prefetch that did not run it while the
    requests were in flight would fail every answer (after a bounded wait)."""

    provider = "gated"

    def __init__(self) -> None:
        super().__init__("m", None, None, 5.0)
        self.released = threading.Event()
        self.seen_in_flight: list[int] = []

    async def generate(self, request: ApiRequest) -> ApiResult:
        released = await asyncio.get_running_loop().run_in_executor(None, self.released.wait, 10)
        return ApiResult(["55" if released else ""] * request.n, 1, 1)


def test_prefetch_runs_meanwhile_while_every_slot_holds_a_request(elicitors):
    provider = Gated()
    elicitor = elicitors(provider, FAST)
    calls: list[str] = []

    def meanwhile() -> None:
        calls.append(threading.current_thread().name)
        provider.seen_in_flight.append(elicitor.stats.in_flight)
        provider.released.set()

    specs = [spec(i) for i in range(6)]
    elicitor.prefetch(specs, meanwhile)
    assert calls == [threading.current_thread().name]  # once, on the caller's thread
    assert provider.seen_in_flight == [4]  # every slot of --concurrency 4 held a request
    assert all(elicitor.record(s).answers[0].raw == "55" for s in specs)


def test_prefetch_with_nothing_to_ask_still_runs_meanwhile(elicitors):
    elicitor = elicitors(Gated(), FAST)
    calls: list[int] = []
    elicitor.prefetch([], lambda: calls.append(1))
    assert calls == [1]


def test_loop_thread_runs_meanwhile_when_the_coroutine_ends_first():
    loop = LoopThread()
    try:
        never = threading.Event()  # nobody sets it: the coroutine's end lets meanwhile run
        order: list[str] = []

        async def work() -> int:
            order.append("coroutine")
            return 7

        assert loop.run(work(), lambda: order.append("meanwhile"), never) == 7
        assert order == ["coroutine", "meanwhile"]
    finally:
        loop.close()


def test_warm_scoring_imports_the_modules_and_leaves_a_broken_one_for_later():
    worker_module.warm_scoring(("json", "pytest_optbench.no_such_module_here"))  # no error raised
    import sys

    assert "json" in sys.modules and "pytest_optbench.no_such_module_here" not in sys.modules
    assert all(name.startswith(("scipy", "pytest_optbench")) for name in worker_module.SCORING_MODULES)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own priority is Linux's")
def test_idle_warming_lowers_only_its_own_thread():
    seen = {}

    def warm() -> None:
        worker_module.warm_scoring((), idle=True)
        seen["warming"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    before = os.getpriority(os.PRIO_PROCESS, 0)
    thread = threading.Thread(target=warm)
    thread.start()
    thread.join()
    assert seen["warming"] == 19
    assert os.getpriority(os.PRIO_PROCESS, 0) == before  # the process and its main thread are untouched
