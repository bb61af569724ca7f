"""Hostile batch objects and result lines (issue 24), both batch APIs through the real SDKs: a
batch's id is in the ledger before anything can fail after its creation (a rerun polls it,
never submits and pays again), a field of no use is unknown and noted, and one malformed
result line costs that line only: the good lines' answers, paid for, are stored."""

from __future__ import annotations

import sqlite3

import pytest

from pytest_optbench.elicit.batch import BatchElicitor, BatchSettings
from pytest_optbench.options import EngineSettings
from pytest_optbench.prompts.build import PromptSpec
from pytest_optbench.providers.anthropic_provider import AnthropicProvider
from pytest_optbench.providers.openai_provider import OpenAIProvider
from pytest_optbench.testing import FakeAPI
from pytest_optbench.testing.batches import FakeBatches

KEY = "sk-test-HOSTILE-BATCH-0123456789"
ENV = {"OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY}
FAST = BatchSettings(wait=20.0, poll_first=0.01, poll_max=0.05)
ENGINE = EngineSettings(backoff_base=0.001, backoff_cap=0.01, run_id="run-1")
SPECS = [PromptSpec("positive", "Reply with one integer.", f"What is the probability that plan {i} succeeds?", 1,
                    0.7, {}) for i in range(4)]


@pytest.fixture
def make(elicitors):
    def factory(server: FakeAPI, provider: str, run_id: str = "run-1", batch: BatchSettings = FAST) -> BatchElicitor:
        if provider == "openai":
            model = OpenAIProvider("fake-model", base_url=server.openai_url, env=ENV, timeout=5)
        else:
            model = AnthropicProvider("claude-fake", base_url=server.anthropic_url, env=ENV, timeout=5)
        settings = EngineSettings(**{**ENGINE.__dict__, "run_id": run_id})
        return elicitors(model, settings, kind=BatchElicitor, batch=batch)

    return factory


def run(elicitor: BatchElicitor):
    elicitor.prefetch(SPECS)
    return [a for s in SPECS for a in elicitor.record(s).answers]


def stored(tmp_path) -> int:
    with sqlite3.connect(tmp_path / "responses.sqlite") as db:
        return int(db.execute("SELECT count(*) FROM answers").fetchone()[0])


def batch_objects(change):
    def mangle(what, body):
        if what.endswith("-batch"):
            change(body)
        return body
    return mangle


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize(("field", "value"), [("expires_at", "tomorrow"), ("request_counts", {"total": "lots", "succeeded": "lots"}),
                                              ("request_counts", "many"), ("expires_at", [1])])
def test_a_batch_object_with_fields_of_no_use_is_recorded_and_collected(shared_server, make, tmp_path, provider,
                                                                        field, value):
    server = shared_server.reconfigure(batches=FakeBatches(), mangle=batch_objects(lambda b: b.update({field: value})))
    elicitor = make(server, provider)
    got = run(elicitor)
    assert all(a.error is None and a.value is not None for a in got), [a.error for a in got]
    assert len(server.batches.created()) == 1 and stored(tmp_path) == 4
    assert any(f"its {field}" in note for note in elicitor.provider.notes)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_batch_id_is_recorded_before_anything_can_fail_so_a_rerun_does_not_pay_again(shared_server, make,
                                                                                      tmp_path, provider):
    """The batch holds, then its object turns hostile; the rerun finds it in the ledger."""
    server = shared_server.reconfigure(batches=FakeBatches(faults=["hold"]), mangle=batch_objects(
        lambda b: b.update(expires_at="tomorrow", request_counts=[None])))
    first = make(server, provider, batch=BatchSettings(wait=0.0))
    pending = run(first)
    assert all(a.batch for a in pending)
    assert len(first.ledger.open_batches()) == 1
    server.batches.release()
    again = make(server, provider, run_id="run-2")
    got = run(again)
    assert len(server.batches.created()) == 1  # polled, not submitted again
    assert all(a.value is not None for a in got) and stored(tmp_path) == 4


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_batch_without_a_usable_id_fails_its_lines_in_one_sentence(shared_server, make, provider):
    server = shared_server.reconfigure(batches=FakeBatches(), mangle=batch_objects(lambda b: b.update(id="../x")))
    elicitor = make(server, provider)
    got = run(elicitor)
    assert all("the batch's id is '../x', not an id" in (a.error or "") for a in got), [a.error for a in got]
    assert "\n" not in got[0].error and KEY not in got[0].error
    assert elicitor.ledger.open_batches() == []


def _break_one_line(kinds):
    broken: set[str] = set()

    def mangle(what, body):
        if what.endswith("-batch-line") and not broken and body.get("custom_id"):
            broken.add(body["custom_id"])
            return kinds(body)
        return body
    return mangle, broken


@pytest.mark.parametrize(("provider", "breaks"), [
    ("openai", lambda line: {**line, "response": {**line["response"], "body": {"choices": [5]}}}),
    ("openai", lambda line: {**line, "response": {"status_code": 200, "body": {"choices": [{"message": {
        "content": 65}}]}}}),
    ("openai", lambda line: b'{"custom_id": "' + line["custom_id"].encode() + b'", "response": {'),
    ("openai", lambda line: {**line, "response": {**line["response"], "body": {
        **line["response"]["body"], "usage": {"prompt_tokens": "many"}}}}),
    ("anthropic", lambda line: {**line, "result": {"type": "succeeded", "message": {"content": [5]}}}),
    ("anthropic", lambda line: {**line, "result": "succeeded"}),
    ("anthropic", lambda line: b"\xff\xfe not json"),
])
def test_one_malformed_result_line_costs_that_line_only(shared_server, make, tmp_path, provider, breaks):
    mangle, broken = _break_one_line(breaks)
    server = shared_server.reconfigure(batches=FakeBatches(), mangle=mangle)
    elicitor = make(server, provider)
    got = run(elicitor)
    assert broken  # one line was broken ...
    assert stored(tmp_path) == 4  # ... the others stored at once, and it was asked again in a second batch
    assert all(a.error is None and a.value is not None for a in got)
    assert len(server.batches.created()) <= 2


def test_a_result_line_beyond_the_limit_is_skipped_and_the_rest_stored(shared_server, make, tmp_path):
    big = {"done": False}

    def mangle(what, body):
        if what == "openai-batch-line" and not big["done"]:
            big["done"] = True
            body["response"]["body"]["choices"][0]["message"]["content"] = "7" * 3_000_000
        return body

    server = shared_server.reconfigure(batches=FakeBatches(), mangle=mangle)
    elicitor = make(server, "openai")
    elicitor.provider.max_reply = 1_000_000
    got = run(elicitor)
    assert stored(tmp_path) == 4 and all(a.value is not None for a in got)
    assert len(server.batches.created()) == 2  # the skipped line asked again, once


def test_a_batch_poll_that_trickles_in_is_bounded(shared_server, make):
    """Every read within the time-out, the whole never: the poll is cut, the batch stays open."""
    from pytest_optbench.testing.server import Streamed

    server = shared_server.reconfigure(batches=FakeBatches(), mangle=lambda what, body: Streamed(
        [b" "] * 40 + [b"{}"], delay=0.05) if what == "openai-batch" else body)
    elicitor = make(server, "openai", batch=BatchSettings(wait=0.0, submit_retries=0))
    elicitor.provider.timeout = 0.1
    got = run(elicitor)
    assert all("the reply was not complete after 1 s (10 x --optbench-timeout)" in (a.error or "") for a in got), \
        [a.error for a in got]
