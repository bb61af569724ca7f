"""The engine under faults: a bad key or an empty account stops the session's requests at the
first answer that cannot succeed, a dead or hung server and the session deadline bound the
time, a dead xdist controller stops its workers, and an answer paid for is never dropped
(a store that refuses it, another session's answer first, a lone surrogate, an echoed key).

No wall-clock assertions: limits are checked by the requests the fake server saw, by a fake
clock, and by what the store and the records hold.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from _waiting import wait_until

from pytest_optbench.elicit.engine import (
    STOP_KEY,
    ApiElicitor,
    CallTimeout,
    ModelCalls,
    elicit,
    not_asked,
)
from pytest_optbench.elicit.store import StoreError
from pytest_optbench.options import EngineSettings
from pytest_optbench.prompts.build import PromptSpec
from pytest_optbench.providers.base import as_model
from pytest_optbench.providers.openai_provider import OpenAIProvider
from pytest_optbench.providers.remote import status_failure
from pytest_optbench.records.item import NOT_ASKED
from pytest_optbench.testing import FakeAPI

KEY = "sk-test-HOSTILE-0123456789abcdef"
ENV = {"OPENAI_API_KEY": KEY}
FAST = EngineSettings(concurrency=8, max_retries=3, backoff_base=0.001, backoff_cap=0.01, run_id="run-1")
ROOT = Path(__file__).resolve().parents[3]


def spec(i: int = 0, samples: int = 1) -> PromptSpec:
    return PromptSpec("positive", "Reply with one integer from 0 to 100.",
                      f"What is the probability that plan {i} succeeds?", samples, 0.7,
                      {"item": f"item-{i:02d}", "role": "positive"})


def settings(**changes: object) -> EngineSettings:
    return EngineSettings(**{**FAST.__dict__, **changes})


@pytest.fixture
def fake(shared_server):
    """The shared server, configured afresh, with no requests seen."""
    return shared_server.reconfigure


@pytest.fixture
def make(elicitors):
    def factory(api: FakeAPI, engine: EngineSettings = FAST, store: Path | None = None, **kwargs: object) -> ApiElicitor:
        provider = OpenAIProvider("fake-model", base_url=api.openai_url, env=ENV, timeout=5.0)
        return elicitors(provider, engine, store, **kwargs)

    return factory


def run_all(elicitor: ApiElicitor, specs: list[PromptSpec]):
    elicitor.prefetch(specs)
    return [elicitor.record(s) for s in specs]


# --------------------------------------------------------------------------- auth and quota


@pytest.mark.parametrize("fault", ["auth", "quota"])
def test_a_bad_key_or_an_empty_account_stops_at_the_first_answer(fake, make, fault):
    api = fake(fault_for=lambda request: fault)
    elicitor = make(api)
    # Prompts of this case only: the shared server may still log a request the other case cut
    # short, after it was reconfigured (seen once in CI: 9 requests, one of them not ours).
    specs = [spec(i, samples=3) for i in range(100 * len(fault), 100 * len(fault) + 60)]
    records = run_all(elicitor, specs)
    ours = {s.user for s in specs}
    # 60 before any stop (one per prompt); now at most the first round: one request per slot,
    # each refused and not billed.
    assert 1 <= sum(r.user in ours for r in api.requests) <= FAST.concurrency
    errors = [a.error for r in records for a in r.answers]
    assert all(errors)
    first = next(e for e in errors if not e.startswith(NOT_ASKED))
    assert errors.count(first) == 3  # the prompt whose refusal stopped the session
    assert all(e == NOT_ASKED + first for e in errors if e != first)  # the others: not asked
    assert elicitor.stop_reason == first and KEY not in first


def test_a_fatal_answer_cuts_short_the_requests_in_flight(fake, make):
    """The other slots' requests are not waited for once one is refused: the server holds
    them until the test ends (30 s at most), so an engine that waited would get their 55s."""
    release = threading.Event()

    def held(request, index):
        release.wait(30)
        return "55"

    api = fake(answer=held, fault_for=lambda request: "auth" if "plan 3 " in request.user else None)
    elicitor = make(api, settings(concurrency=8))
    try:
        records = run_all(elicitor, [spec(i) for i in range(8)])
    finally:
        release.set()
    errors = [r.answers[0].error for r in records]
    refused = errors[3]
    assert refused and not refused.startswith(NOT_ASKED) and elicitor.stop_reason == refused
    assert [e for i, e in enumerate(errors) if i != 3] == [NOT_ASKED + refused] * 7
    assert elicitor.stats.requests <= 8


@pytest.mark.parametrize(("status", "fatal"), [(401, True), (403, True), (404, True), (400, False), (500, False)])
def test_which_statuses_stop_the_session(status, fatal):
    assert status_failure(status, "message", {}).fatal is fatal


def test_the_other_xdist_workers_stop_too(fake, make):
    api = fake(fault_for=lambda request: "auth")
    specs = [spec(i) for i in range(40)]
    first, second = make(api, shard=(0, 2)), make(api, shard=(1, 2))
    first.prefetch(specs)
    assert 1 <= first.stats.requests <= FAST.concurrency  # the first round at most
    second.prefetch(specs)  # asks for nothing of the prefetch (worker 0 does)
    record = second.record(spec(99))  # a prompt it would ask for itself: it learns from the store that the session stopped
    assert second.stats.requests == 0
    assert second.stop_reason == first.stop_reason
    assert record.answers[0].error == NOT_ASKED + first.stop_reason
    assert second.store.failure(STOP_KEY, "run-1") == first.stop_reason


def test_every_slot_opens_at_once(fake, make):
    """No probe round-trip: the first round fills every slot (each answer waits until all four
    requests have arrived; one slot at a time would break the barrier)."""
    arrived = threading.Barrier(4, timeout=30)

    def together(request, index):
        arrived.wait()
        return "55"

    elicitor = make(fake(answer=together), settings(concurrency=4))
    records = run_all(elicitor, [spec(i) for i in range(4)])
    assert [r.answers[0].value for r in records] == [55] * 4


# --------------------------------------------------------------------------- dead servers, deadlines


def test_a_server_that_always_fails_is_abandoned(fake, make):
    api = fake(fault_for=lambda request: "500")
    elicitor = make(api, settings(max_retries=6))
    records = run_all(elicitor, [spec(i) for i in range(200)])
    # 1,400 requests before (200 prompts x 7 attempts): now the 32 in a row, and those in flight.
    assert len(api.requests) <= 32 + 8
    assert elicitor.stop_reason.startswith("32 requests in a row failed (the last: openai: HTTP 500")
    assert sum(a.error.startswith(NOT_ASKED) for r in records for a in r.answers) >= 150


def test_429s_do_not_count_as_a_dead_server(fake, make):
    api = fake(faults=["429"] * 40, retry_after="0")
    elicitor = make(api, settings(max_retries=60, concurrency=1))
    [record] = run_all(elicitor, [spec()])
    assert record.answers[0].value is not None
    assert elicitor.stop_reason is None


def test_the_session_deadline_stops_the_requests(fake, make):
    clock = [0.0]

    def answer(request, index):
        clock[0] += 1.0  # each answer takes one (fake) second
        return "60"

    api = fake(answer=answer)
    elicitor = make(api, settings(deadline=10.0, concurrency=1), clock=lambda: clock[0])
    records = run_all(elicitor, [spec(i) for i in range(50)])
    assert len(api.requests) == 10
    assert elicitor.stop_reason == "the session deadline of 10 s (--optbench-deadline) passed"
    assert not_asked(records) == NOT_ASKED + elicitor.stop_reason
    assert sum(r.answers[0].value is not None for r in records) == 10


def test_a_request_in_flight_is_cut_at_the_deadline(fake, make):
    api = fake(fault_for=lambda request: "timeout", timeout_sleep=5.0)
    start = time.monotonic()
    elicitor = make(api, settings(deadline=0.3, max_retries=0), clock=lambda: time.monotonic() - start)
    [record] = run_all(elicitor, [spec()])
    assert record.answers[0].error == NOT_ASKED + "the session deadline of 0.3 s (--optbench-deadline) passed"


def test_a_worker_whose_controller_has_gone_asks_nothing(fake, make):
    api = fake()
    not_my_parent = os.getppid() + 1 if os.getppid() > 1 else 2
    elicitor = make(api, parent_pid=not_my_parent)
    records = run_all(elicitor, [spec(i) for i in range(5)])
    assert api.requests == []
    assert all(a.error == NOT_ASKED + "the xdist controller has gone" for r in records for a in r.answers)


CHILD = """
    import json, os, sys, time
    from pathlib import Path
    from pytest_optbench.elicit.engine import ApiElicitor
    from pytest_optbench.elicit.store import ResponseStore
    from pytest_optbench.options import EngineSettings
    from pytest_optbench.prompts.build import PromptSpec
    from pytest_optbench.providers.openai_provider import OpenAIProvider

    url, store, done = sys.argv[1:4]
    provider = OpenAIProvider("fake", base_url=url, env={"OPENAI_API_KEY": "sk-x"}, timeout=30)
    engine = ApiElicitor(provider, ResponseStore(Path(store)), EngineSettings(concurrency=2, run_id="r"),
                         parent_pid=os.getppid())
    specs = [PromptSpec("positive", "s", f"question {i}", 1, 0.7, {}) for i in range(400)]
    engine.prefetch(specs)
    Path(done).write_text(json.dumps({"requests": engine.stats.requests, "stop": engine.stop_reason}))
"""

PARENT = """
    import subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", sys.argv[1], *sys.argv[2:]])
    print(child.pid, flush=True)
    time.sleep(600)  # the test kills this process, as a crash kills an xdist controller
"""


def test_killing_the_controller_stops_its_worker_within_a_request(fake, tmp_path):
    api = fake(latency=0.05)
    done = tmp_path / "done.json"
    parent = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(PARENT), textwrap.dedent(CHILD), api.openai_url,
         str(tmp_path / "store.sqlite"), str(done)],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        parent.stdout.readline()
        wait_until(lambda: len(api.requests) >= 4, 30, "four requests from the worker", parent)
        parent.kill()
        parent.wait()
        # The worker finishes on its own; 60 s is a generous bound.
        wait_until(lambda: done.exists() and bool(done.read_text()), 60, "the orphaned worker's result file")
        result = json.loads(done.read_text())
    finally:
        parent.kill()
    assert result["stop"] == "the xdist controller has gone"
    assert result["requests"] < 40  # 400 before: it went on for the whole run
    assert len(api.requests) < 40


# --------------------------------------------------------------------------- nothing paid for is lost


def test_a_store_that_fills_up_keeps_the_answers_in_memory(fake, make):
    api = fake(answer=lambda request, index: "60\n\n" + "x" * 3000)
    elicitor = make(api, settings(concurrency=1))
    db: sqlite3.Connection = elicitor.store._db
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages + 8}")  # SQLite's own "database or disk is full"
    records = run_all(elicitor, [spec(i, samples=2) for i in range(30)])
    assert len(api.requests) == 30
    assert all(a.value == 60 and a.cached is False for r in records for a in r.answers)
    assert elicitor.kept_in_memory > 0
    [fault] = elicitor.faults()
    assert "database or disk is full" in fault and "kept in memory" in fault
    assert fault.startswith(str(elicitor.store.path))


def test_a_store_that_fails_on_every_write_loses_nothing(fake, make, monkeypatch):
    api = fake()
    elicitor = make(api)

    def refuse(*args: object, **kwargs: object) -> list[int]:
        raise StoreError(f"{elicitor.store.path}: the response store cannot be written (disk I/O error).")

    monkeypatch.setattr(elicitor.store, "put", refuse)
    monkeypatch.setattr(elicitor.store, "put_failure", refuse)
    records = run_all(elicitor, [spec(i, samples=3) for i in range(10)])
    assert all(a.error is None and a.cached is False for r in records for a in r.answers)
    assert sum(a.input_tokens for r in records for a in r.answers) > 0
    assert elicitor.kept_in_memory == 30


def test_two_sessions_on_one_store_each_report_what_they_paid_for(fake, make, tmp_path):
    api = fake()
    specs = [spec(i, samples=2) for i in range(5)]
    first = make(api, settings(run_id="session-a"))
    second = make(api, settings(run_id="session-b"))
    planned = second.plan(specs)  # B finds nothing stored, and starts asking ...
    first.prefetch(specs)  # ... while A stores every answer first
    second._runner().run(second._run(planned))
    assert len(api.requests) == 10  # both paid for every prompt
    mine = [second.record(s) for s in specs]
    assert all(a.cached is False for r in mine for a in r.answers)  # before: all "from the store"
    assert sum(a.output_tokens for r in mine for a in r.answers) == 5 * 2 * 2  # 2 tokens per sample
    theirs = [first.record(s) for s in specs]
    assert all(a.cached is False for r in theirs for a in r.answers)


def test_a_lone_surrogate_in_an_answer_is_stored_and_parsed(fake, make):
    api = fake(answer=lambda request, index: "Probability: 5 \ud800")
    elicitor = make(api)
    [record] = run_all(elicitor, [spec(samples=2)])
    assert [a.raw for a in record.answers] == ["Probability: 5 \ufffd", "Probability: 5 \ufffd"]
    assert [a.value for a in record.answers] == [5, 5]
    assert elicitor.faults() == []


def test_a_key_the_server_echoes_in_an_answer_is_neither_stored_nor_reported(fake, make):
    api = fake(answer=lambda request, index: f"60. You sent {request.authorization}")
    elicitor = make(api)
    [record] = run_all(elicitor, [spec(samples=2)])
    assert all(KEY not in a.raw and "[redacted]" in a.raw for a in record.answers)
    assert record.answers[0].value == 60
    dump = "\n".join(elicitor.store._db.iterdump())
    assert KEY not in dump and "HOSTILE" not in dump


def test_control_characters_in_a_server_error_are_escaped(make):
    class Hostile(FakeAPI):
        def _fault(self, handler, request, fault):
            return self._send(handler, 400, {"error": {"message": "bad\x1b[2J\rrequest\nsecond line",
                                                       "type": "invalid_request_error"}})

    with Hostile(fault_for=lambda request: "x") as api:
        elicitor = make(api)
        [record] = run_all(elicitor, [spec()])
    error = record.answers[0].error
    assert "\x1b" not in error and "\r" not in error and "\n" not in error
    assert "bad\\x1b[2J request second line" in error


# --------------------------------------------------------------------------- plain models


def test_a_lone_surrogate_from_a_plain_model_is_repaired():
    [record] = elicit(as_model(lambda prompt: "Probability: 5 \udcff"), [spec(samples=1)])
    assert record.answers[0].raw == "Probability: 5 \ufffd" and record.answers[0].value == 5


def test_a_model_error_with_control_characters_is_one_escaped_line():
    def broken(prompt):
        raise RuntimeError("\x1b[31mred\x1b[0m\r\nand \ud800 more " + "x" * 5000)

    [record] = elicit(as_model(broken), [spec()])
    error = record.answers[0].error
    assert error.startswith("RuntimeError: \\x1b[31mred\\x1b[0m and \ufffd more")
    assert len(error) < 700


def test_a_hung_conftest_model_times_out_and_then_is_not_called():
    calls = []

    def hung(prompt):
        calls.append(prompt.sample)
        while True:  # a retry loop that swallows every Exception cannot swallow the timeout
            try:
                time.sleep(10)
            except Exception:  # noqa: BLE001, S110 - the point of the test
                pass

    limits = ModelCalls(timeout=0.05, max_timeouts=3)
    records = elicit(as_model(hung), [spec(i, samples=2) for i in range(5)], limits)
    errors = [a.error for r in records for a in r.answers]
    assert errors[:3] == ["timed out after 0.05 s (--optbench-timeout)"] * 3
    assert errors[3:] == [NOT_ASKED + "the model timed out 3 times in a row (--optbench-timeout 0.05 s)"] * 7
    assert len(calls) == 3


def test_a_slow_answer_within_the_timeout_is_kept():
    limits = ModelCalls(timeout=5.0)
    [record] = elicit(as_model(lambda prompt: "42"), [spec(samples=3)], limits)
    assert [a.value for a in record.answers] == [42, 42, 42]


def test_the_deadline_applies_to_a_conftest_model():
    clock = [0.0]

    def model(prompt):
        clock[0] += 1.0
        return "42"

    limits = ModelCalls(timeout=None, deadline=4.0, clock=lambda: clock[0])
    records = elicit(as_model(model), [spec(i, samples=2) for i in range(4)], limits)
    values = [a.value for r in records for a in r.answers]
    assert values[:4] == [42] * 4
    assert all(v is None for v in values[4:])
    assert not_asked(records) == NOT_ASKED + "the session deadline of 4 s (--optbench-deadline) passed"


def test_call_timeout_is_not_an_exception_a_pipeline_can_swallow():
    assert issubclass(CallTimeout, BaseException) and not issubclass(CallTimeout, Exception)
