"""Batch elicitation against the FakeAPI's batch protocols, through the real openai and
anthropic SDKs: submit, poll, results, failures, expiry, resubmission once, pending answers,
a later run (or ``optbench collect``) picking results up without submitting again."""

from __future__ import annotations

import sqlite3
from collections import Counter

import pytest

from pytest_optbench.elicit.batch import BatchElicitor, BatchSettings, BatchUnsupported, collect_batches
from pytest_optbench.elicit.batch_store import BatchLedger
from pytest_optbench.elicit.store import ResponseStore
from pytest_optbench.options import EngineSettings
from pytest_optbench.prompts.build import PromptSpec
from pytest_optbench.providers import batch_client
from pytest_optbench.providers.anthropic_provider import AnthropicProvider
from pytest_optbench.providers.batch_api import BatchLine, LineResult, chunks
from pytest_optbench.providers.openai_provider import OpenAIProvider
from pytest_optbench.providers.remote import ApiProvider, ApiRequest
from pytest_optbench.records.item import BATCH_PRICE, ItemRecord
from pytest_optbench.scoring.outcome import Outcome
from pytest_optbench.testing import FakeAPI
from pytest_optbench.testing.batches import FakeBatches

OPENAI_KEY = "sk-test-SECRET-abc123XYZ"
ANTHROPIC_KEY = "sk-ant-test-SECRET-def456UVW"
ENV = {"OPENAI_API_KEY": OPENAI_KEY, "ANTHROPIC_API_KEY": ANTHROPIC_KEY}
SYSTEM = "You estimate probabilities. Reply with a single integer from 0 to 100 and nothing else."
FAST = BatchSettings(wait=20.0, poll_first=0.01, poll_max=0.05)
ENGINE = EngineSettings(backoff_base=0.001, backoff_cap=0.01, run_id="run-1")


def spec(i: int, samples: int = 3, temperature: float = 0.7) -> PromptSpec:
    return PromptSpec("positive", SYSTEM, f"What is the probability that plan {i} succeeds?", samples, temperature,
                      {"item": f"item-{i:02d}"})


SPECS = [spec(i) for i in range(6)]


@pytest.fixture
def fake(shared_server):
    """``fake(**FakeBatches fields)``: the shared server with fresh batch state."""

    def configure(**changes) -> FakeAPI:
        return shared_server.reconfigure(batches=FakeBatches(**changes))

    return configure


@pytest.fixture
def make(elicitors):
    """Batch elicitors on one store file (each with its own connections, like runs or processes)."""

    def factory(server: FakeAPI, *, provider: str = "openai", batch: BatchSettings = FAST, run_id: str = "run-1",
                shard=(0, 1), **engine) -> BatchElicitor:
        if provider == "openai":
            model = OpenAIProvider("fake-model", base_url=server.openai_url, env=ENV, timeout=5)
        else:
            model = AnthropicProvider("claude-fake", base_url=server.anthropic_url, env=ENV, timeout=5)
        settings = EngineSettings(**{**ENGINE.__dict__, "run_id": run_id, **engine})
        return elicitors(model, settings, kind=BatchElicitor, batch=batch, shard=shard)

    return factory


def run_all(elicitor: BatchElicitor, specs=SPECS) -> list:
    elicitor.prefetch(specs)
    return [elicitor.record(s) for s in specs]


def stored_rows(tmp_path) -> list[tuple[str, int]]:
    with sqlite3.connect(tmp_path / "responses.sqlite") as db:
        return db.execute("SELECT key, sample FROM answers").fetchall()


def answers(records) -> list:
    return [a for r in records for a in r.answers]


def line_samples(server: FakeAPI) -> Counter:
    """(user text, sample index range) of every line the fake ran."""
    return Counter(r.user for r in server.batches.lines_run for _ in range(r.n if r.api == "openai" else 1))


# --------------------------------------------------------------------------- the happy path


def test_openai_batch_answers_every_prompt_once_at_batch_price(fake, make, tmp_path):
    server = fake(polls=1)
    elicitor = make(server)
    records = run_all(elicitor)
    assert len(server.batches.created("openai")) == 1
    batch = server.batches.created()[0]
    assert len(batch.lines) == len(SPECS)  # n = 3 samples in one line per prompt
    assert all(line["body"]["n"] == 3 and line["url"] == "/v1/chat/completions" for line in batch.lines)
    assert server.requests == []  # nothing asked in real time
    every = answers(records)
    assert len(every) == 18 and all(a.value is not None and a.batch == batch.id and a.cached is False for a in every)
    assert len(stored_rows(tmp_path)) == 18
    counts = elicitor.request_counts()
    assert counts["batches_submitted"] == 1 and counts["batch_lines"] == 6 and counts["batches_collected"] == 1
    assert counts["batch_lines_resubmitted"] == 0 and counts["batch_answers"] == 18
    item = ItemRecord("s", "i", "base", "inverted_pair", "f", "m", records)
    usage = Outcome([], [], [item]).usage
    assert usage["paid_in_batches"] == 18 and usage["batch_price"] == BATCH_PRICE
    assert usage["input_tokens_at_list_price"] == usage["input_tokens"] * BATCH_PRICE


def test_batch_answers_equal_the_real_time_answers(fake, make, tmp_path):
    """The fake answers a batch line as it answers the same request in real time."""
    server = fake(polls=0)
    batch_texts = [a.raw for a in answers(run_all(make(server)))]
    from pytest_optbench.elicit.engine import ApiElicitor

    model = OpenAIProvider("fake-model", base_url=server.openai_url, env=ENV, timeout=5)
    realtime = ApiElicitor(model, ResponseStore(tmp_path / "other.sqlite"), ENGINE)
    try:
        realtime.prefetch(SPECS)
        assert [a.raw for s in SPECS for a in realtime.record(s).answers] == batch_texts
    finally:
        realtime.close()
        realtime.store.close()


def test_anthropic_message_batches_one_line_per_sample(fake, make):
    server = fake(polls=1)
    elicitor = make(server, provider="anthropic")
    records = run_all(elicitor, SPECS[:2])
    (batch,) = server.batches.created("anthropic")
    assert len(batch.lines) == 6  # no n in the Messages API
    assert all(set(line) == {"custom_id", "params"} and line["params"]["temperature"] == 0.7
               and line["params"]["max_tokens"] > 0 for line in batch.lines)
    assert all(a.value is not None and a.batch == batch.id for a in answers(records))


def test_a_second_run_submits_nothing(fake, make):
    server = fake(polls=0)
    run_all(make(server, run_id="run-1"))
    records = run_all(make(server, run_id="run-2"))
    assert len(server.batches.created()) == 1
    assert all(a.cached is True and a.batch for a in answers(records))


def test_only_missing_samples_are_submitted(fake, make):
    server = fake(polls=0)
    run_all(make(server, run_id="run-1"), [spec(0, samples=2)])
    run_all(make(server, run_id="run-2"), [spec(0, samples=5)])
    second = server.batches.created()[1]
    assert [(line["body"]["n"], line["custom_id"].split("-")[1:]) for line in second.lines] == [(3, ["2", "3"])]


# --------------------------------------------------------------------------- failures and expiry


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_expired_lines_are_resubmitted_once_and_every_answer_is_stored_once(fake, make, tmp_path, provider):
    server = fake(polls=1, faults=["expire"])
    elicitor = make(server, provider=provider)
    records = run_all(elicitor)
    created = server.batches.created()
    assert len(created) == 2
    first, second = created
    assert len(second.lines) == len(first.lines) - len(first.lines) // 2  # the expired half, once
    assert all(a.value is not None for a in answers(records))
    rows = stored_rows(tmp_path)
    assert len(rows) == len(set(rows)) == 18
    counts = elicitor.request_counts()
    assert counts["batch_lines_expired"] == len(second.lines) == counts["batch_lines_resubmitted"]
    assert {a.batch for a in answers(records)} == {first.id, second.id}


def test_a_line_that_fails_twice_is_not_asked_a_third_time(fake, make, tmp_path):
    bad = SPECS[1].user
    server = fake(polls=0, line_fault=lambda request: "500" if request.user == bad else None)
    elicitor = make(server)
    records = run_all(elicitor)
    assert sum(1 for r in server.batches.lines_run if r.user == bad) == 2  # asked, then once again
    failed = records[1]
    assert all(a.raw is None and "HTTP 500" in a.error and "asked again once" in a.error for a in failed.answers)
    assert all(a.value is not None for r in records if r is not failed for a in r.answers)
    assert elicitor.request_counts()["batch_lines_failed"] == 2
    assert len(stored_rows(tmp_path)) == 15


def test_a_refused_line_is_not_resubmitted(fake, make):
    bad = SPECS[0].user
    server = fake(polls=0, line_fault=lambda request: "400" if request.user == bad else None)
    records = run_all(make(server))
    assert sum(1 for r in server.batches.lines_run if r.user == bad) == 1
    assert all("HTTP 400" in a.error for a in records[0].answers)


def test_a_rejected_parameter_is_dropped_and_the_line_asked_again(fake, make):
    server = fake(polls=0)
    server.reject_params = ("temperature",)
    elicitor = make(server)
    records = run_all(elicitor)
    first, second = server.batches.created()
    assert all("temperature" in line["body"] for line in first.lines)
    assert all("temperature" not in line["body"] for line in second.lines)
    assert all(a.value is not None for a in answers(records))
    assert any("no longer sent" in note for note in elicitor.provider.notes)


def test_a_batch_that_fails_as_a_whole_is_resubmitted_once(fake, make):
    server = fake(polls=0, faults=["fail", "fail"])
    elicitor = make(server)
    records = run_all(elicitor)
    assert len(server.batches.created()) == 2
    assert all(a.raw is None and "failed" in a.error for a in answers(records))


def test_a_server_that_ignores_n_is_asked_for_the_rest(fake, make):
    server = fake(polls=0)
    server.support_n = False
    records = run_all(make(server), SPECS[:2])
    assert all(a.value is not None for a in answers(records))
    assert len(server.batches.created()) == 3  # 1 sample per line each time: n=3, then 2, then 1


def test_the_server_size_limits_split_batches(fake, make, tmp_path):
    server = fake(polls=0, max_lines=2)
    elicitor = make(server)
    records = run_all(elicitor)
    assert all(len(b.lines) <= 2 for b in server.batches.created())
    assert sum(len(b.lines) for b in server.batches.created()) == len(SPECS)
    assert all(a.value is not None for a in answers(records))
    assert len(stored_rows(tmp_path)) == 18


def test_a_byte_limit_refusal_splits_the_batch(fake, make):
    server = fake(polls=0, max_bytes=900)
    records = run_all(make(server, provider="anthropic"), SPECS[:2])
    assert all(a.value is not None for a in answers(records))
    assert len(server.batches.created()) > 1


def test_batch_size_option_caps_lines_per_batch(fake, make):
    server = fake(polls=0)
    run_all(make(server, batch=BatchSettings(wait=5, max_lines=4, poll_first=0.01)))
    assert [len(b.lines) for b in server.batches.created()] == [4, 2]


def test_chunks_respect_the_provider_limits():
    model = OpenAIProvider("m", base_url="http://127.0.0.1:9/v1", env=ENV, timeout=1)
    client = batch_client(model)
    client.max_lines, client.max_bytes = 3, 10_000
    lines = [BatchLine(f"id{i}", ApiRequest("s", "u" * 1000, 0.7, 10, 1)) for i in range(10)]
    parts = chunks(client, lines)
    assert [len(p) for p in parts] == [3, 3, 3, 1]
    client.max_bytes = 2500
    assert all(sum(len(client.encode(x)) + 1 for x in p) <= 2500 * 0.95 for p in chunks(client, lines))
    model.close()


def test_transient_batch_api_errors_are_retried(fake, make):
    server = fake(polls=0, call_faults=["500", "429"])
    elicitor = make(server)
    records = run_all(elicitor)
    assert all(a.value is not None for a in answers(records))
    assert elicitor.request_counts()["batch_calls_retried"] == 2


def test_an_auth_error_fails_the_items_with_one_redacted_sentence(fake, make, tmp_path):
    server = fake(polls=0, call_faults=["auth"])
    records = run_all(make(server))
    errors = {a.error for a in answers(records)}
    assert len(errors) == 1 and "401" in errors.pop()
    assert not server.batches.created()
    data = b"".join(p.read_bytes() for p in tmp_path.glob("responses.sqlite*"))
    assert OPENAI_KEY.encode() not in data and b"SECRET" not in data


# --------------------------------------------------------------------------- pending, and picking up later


def test_unfinished_batches_leave_pending_answers_and_a_later_run_collects_them(fake, make, tmp_path):
    server = fake(polls=0, faults=["hold"])
    first = make(server, batch=BatchSettings(wait=0.05, poll_first=0.01), run_id="run-1")
    records = run_all(first)
    (batch,) = server.batches.created()
    assert all(a.pending and a.batch == batch.id for a in answers(records))
    item = ItemRecord("s", "i", "base", "inverted_pair", "f", "m", records)
    assert item.pending_batches == [batch.id]
    note = first.pending_note(item.pending_batches)
    assert batch.id in note and "at the latest" in note and "rerun" in note
    assert first.open_info()[batch.id]["lines"] == 6
    assert len(stored_rows(tmp_path)) == 0

    server.batches.release()
    later = make(server, run_id="run-2")
    records = run_all(later)
    assert len(server.batches.created()) == 1  # not submitted again
    assert all(a.value is not None and a.batch == batch.id and a.cached is False for a in answers(records))
    assert len(stored_rows(tmp_path)) == 18


def test_offline_makes_no_call_and_reports_pending(fake, make):
    server = fake(polls=0, faults=["hold"])
    run_all(make(server, batch=BatchSettings(wait=0, poll_first=0.01), run_id="run-1"))
    calls = len(server.batches.calls)
    records = run_all(make(server, run_id="run-2", offline=True))
    assert len(server.batches.calls) == calls
    assert all(a.pending for a in answers(records))


def test_optbench_collect_picks_up_open_batches_from_the_store(fake, make, tmp_path, monkeypatch):
    server = fake(polls=0, faults=["hold"])
    run_all(make(server, batch=BatchSettings(wait=0, poll_first=0.01), run_id="run-1"))
    server.batches.release()
    env = {**ENV}
    lines: list[str] = []
    code = collect_batches(tmp_path / "responses.sqlite", 5.0, server.openai_url, env, lines.append, poll_first=0.01)
    assert code == 0
    assert "1 batch(es) collected, 18 answers stored" in lines[-1]
    assert len(stored_rows(tmp_path)) == 18
    records = run_all(make(server, run_id="run-3"))
    assert len(server.batches.created()) == 1
    assert all(a.cached is True and a.batch for a in answers(records))
    lines.clear()
    assert collect_batches(tmp_path / "responses.sqlite", 0, None, env, lines.append) == 0
    assert "no open batches" in lines[-1]


def test_optbench_collect_without_a_key_is_one_sentence(tmp_path):
    ResponseStore(tmp_path / "responses.sqlite").close()
    ledger = BatchLedger(tmp_path / "responses.sqlite")
    ledger.add_batch("batch_x", {"provider": "openai", "model": "m", "base_url": None}, None, "run-1", [])
    ledger.close()
    lines: list[str] = []
    assert collect_batches(tmp_path / "responses.sqlite", 0, None, {}, lines.append) == 2
    assert lines == [("optbench collect: openai: OPENAI_API_KEY is not set (for a local OpenAI-compatible server, "
                      "pass --base-url instead)")]


def test_two_workers_split_the_prompts_and_wait_for_each_other(fake, make, tmp_path):
    server = fake(polls=1)
    a = make(server, shard=(0, 2), run_id="run-x")
    b = make(server, shard=(1, 2), run_id="run-x")
    # Keys hash the server's (random) port, so 6 prompts all fall in one share 1 time in 32: 24 do not.
    specs = [spec(i) for i in range(24)]
    assert {a.owns(a.key(s)) for s in specs} == {True, False}
    a.prefetch(specs)
    b.prefetch(specs)
    records = [a.record(s) for s in specs]  # half of them b's: settled, so read from the store
    assert all(x.value is not None for x in answers(records))
    assert len(server.batches.created()) == 2
    assert line_samples(server) == Counter({s.user: 3 for s in specs})
    assert len(stored_rows(tmp_path)) == 72


def test_the_ledger_never_holds_a_key(fake, make, tmp_path):
    server = fake(polls=0, faults=["expire"])
    run_all(make(server))
    ledger = BatchLedger(tmp_path / "responses.sqlite")
    assert ledger.open_batches() == []
    ledger.close()
    data = b"".join(p.read_bytes() for p in tmp_path.glob("responses.sqlite*"))
    assert OPENAI_KEY.encode() not in data and b"SECRET" not in data


def test_a_provider_without_a_batch_api_is_refused(tmp_path):
    class Local(ApiProvider):
        provider = "local"

    with pytest.raises(BatchUnsupported, match="no batch API"):
        BatchElicitor(Local("m", None, None, 1.0), ResponseStore(tmp_path / "r.sqlite"), ENGINE)


def test_openai_result_lines_are_read_defensively():
    model = OpenAIProvider("m", base_url="http://127.0.0.1:9/v1", env=ENV, timeout=1)
    client = batch_client(model)
    assert client._line("not json").error and client._line("not json").retryable
    assert client._line('{"custom_id": "a", "response": null, "error": {"code": "batch_expired"}}').expired
    refused = client._line('{"custom_id": "a", "response": {"status_code": 429, "body": {"error": {"message": '
                           '"You exceeded your current quota", "code": "insufficient_quota"}}}}')
    assert refused.error and not refused.retryable
    empty = client._line('{"custom_id": "a", "response": {"status_code": 200, "body": {"choices": []}}}')
    assert empty.retryable and not empty.ok
    assert LineResult("x", ["1"]).ok
    model.close()


def test_a_batch_the_provider_does_not_know_is_asked_again(fake, make, tmp_path):
    from pytest_optbench.elicit.batch_store import LineRow

    server = fake(polls=0)
    elicitor = make(server)
    key = elicitor.key(SPECS[0])
    elicitor.ledger.add_batch("batch_gone", elicitor.provider.identity(), None, "run-0",
                              [LineRow("batch_gone", f"{key[:40]}-0-3", key, 0, 3)])
    records = run_all(elicitor)
    assert all(a.value is not None for a in answers(records))
    assert elicitor.ledger.batch("batch_gone").state == "failed"
    assert len(server.batches.created()) == 1 and len(server.batches.created()[0].lines) == len(SPECS)


def test_a_failing_poll_keeps_the_batch_open_and_says_why(fake, make):
    server = fake(polls=0, faults=["hold"])
    first = make(server, batch=BatchSettings(wait=0, poll_first=0.01), run_id="run-1")
    run_all(first)
    (batch,) = server.batches.created()
    server.batches.call_faults = ["auth"] * 10
    later = make(server, batch=BatchSettings(wait=0, poll_first=0.01), run_id="run-2")
    records = run_all(later)
    assert all(a.pending for a in answers(records))
    note = later.pending_note([batch.id])
    assert batch.id in note and "could not poll" in note and "401" in note
    assert OPENAI_KEY not in note


def test_the_collect_command_names_a_missing_store_and_a_bad_wait(tmp_path, capsys):
    from pytest_optbench.cli import main

    assert main(["collect", "--cache-dir", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert "no response store there" in err and err.count("\n") == 1
    assert not (tmp_path / "nowhere").exists()
    ResponseStore(tmp_path / "responses.sqlite").close()
    assert main(["collect", "--cache-dir", str(tmp_path)]) == 0
    assert "no open batches" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        main(["collect", "--cache-dir", str(tmp_path), "--wait", "-1"])
    assert exit_.value.code == 2 and "must be at least 0" in capsys.readouterr().err
