"""--optbench-batch end to end: pytest in a subprocess (serially and with -n 2) against a
FakeAPI started in this process, through the official SDKs' batch APIs and the store.

The first run meets injected expiry, a failing line and a batch that never ends: every
answer that came is stored once, the items still waiting are skipped with their batch ids
and when to rerun. The rerun finishes the job without submitting anything again."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from conftest import Run, pair_suite
from pytest_optbench.testing import FakeAPI
from pytest_optbench.testing.batches import FakeBatch, FakeBatches

SECRET = "sk-test-SECRET-abc123XYZ"
ITEMS, SAMPLES = 4, 3
PROMPTS = 2 * ITEMS


@pytest.fixture
def env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def run(optbench, server: FakeAPI, *args: str, model: str = "openai:fake-model") -> Run:
    url = server.anthropic_url if model.startswith("anthropic:") else server.openai_url
    return optbench.run(
        "--model", model, "--base-url", url, "--optbench-cache-dir", str(optbench.pytester.path / "store"),
        "--optbench-batch", "-p", "no:hypothesispytest", "-p", "no:benchmark", "-rs", *args,
    )


def stored(optbench) -> list[tuple[str, int]]:
    with sqlite3.connect(optbench.pytester.path / "store" / "responses.sqlite") as db:
        return db.execute("SELECT key, sample FROM answers").fetchall()


class Faults:
    """A first submission expires half its lines; whatever is asked again is held (pending)
    until released; one prompt's line fails with a 500 the first time it runs."""

    def __init__(self, failing_user: str) -> None:
        self.seen: set[str] = set()
        self.failing_user, self.failed = failing_user, False
        self.lock = threading.Lock()

    def batch(self, batch: FakeBatch) -> str | None:
        users = [m["content"] for line in batch.lines for m in line["body"]["messages"] if m["role"] == "user"]
        with self.lock:
            again = any(u in self.seen for u in users)
            self.seen.update(users)
        return "hold" if again else "expire"

    def line(self, request) -> str | None:
        with self.lock:
            if request.user == self.failing_user and not self.failed:
                self.failed = True
                return "500"
        return None


def test_batch_run_with_faults_then_a_rerun_finishes_without_resubmitting(optbench, env):
    optbench.write("suites/pairs.yaml", pair_suite(n=ITEMS))
    faults = Faults("A person has worked on plan number 0 for several weeks.\n\n"
                    "What is the probability that plan 0 succeeds?")
    with FakeAPI(batches=FakeBatches(polls=1, fault_for=faults.batch, line_fault=faults.line),
                 served_model="fake-model-2025-01-01", system_fingerprint="fp_batch") as server:
        first = run(optbench, server, "--optbench-batch-wait", "3")  # the held batch keeps it to the end
        assert first.ret == 0, first.text
        report = first.report
        pending = report["items_pending"]
        outcomes = first.result.parseoutcomes()
        assert outcomes.get("skipped", 0) == len(pending) > 0
        assert outcomes.get("passed", 0) == len(report["items"]) == ITEMS - len(pending)
        assert "failed" not in outcomes
        held = {b.id for b in server.batches.created() if b.fault == "hold"}
        assert held and set(report["run"]["batch"]["open"]) == held
        waiting = {a["batch"] for item in pending for p in item["prompts"] for a in p["answers"]
                   if a["raw"] is None}
        assert waiting <= held
        assert "wait for answers in batch" in first.text and "at the latest" in first.text
        assert any(batch_id in first.text for batch_id in held)  # named in the summary and the skip reasons
        requests = report["run"]["requests"]
        assert requests["batch_lines_expired"] > 0 and requests["batch_lines_failed"] == 1
        assert requests["batch_lines_resubmitted"] == requests["batch_lines_expired"] + 1
        assert requests.get("requests", 0) == 0 and server.requests == []  # nothing in real time
        assert len(stored(optbench)) == len(set(stored(optbench))) == SAMPLES * (PROMPTS - sum(
            1 for item in pending for p in item["prompts"] if any(a["raw"] is None for a in p["answers"])))
        usage = report["run"]["usage"]
        assert usage["paid_in_batches"] == usage["paid_this_run"] == usage["answers"]

        created = len(server.batches.created())
        server.batches.release()
        second = run(optbench, server, "--optbench-batch-wait", "10")
        assert second.ret == 0, second.text
        second.result.assert_outcomes(passed=ITEMS)
        assert len(server.batches.created()) == created  # nothing submitted again
        assert second.report["items_pending"] == []
        assert len(stored(optbench)) == len(set(stored(optbench))) == PROMPTS * SAMPLES
        # each prompt's samples ran exactly once successfully, over all batches and both runs
        answered = sum(r.n for r in server.batches.lines_run) - SAMPLES  # the one 500 line answered nothing
        assert answered == PROMPTS * SAMPLES
        assert SECRET not in second.text and SECRET not in first.text
        # Batch answers carry who served them, as real-time ones do.
        assert {(a["served_model"], a["system_fingerprint"]) for item in second.report["items"]
                for p in item["prompts"] for a in p["answers"]} == {("fake-model-2025-01-01", "fp_batch")}


def test_strict_mode_fails_pending_items_and_every_report_says_so(optbench_serial, env):
    """Pending items fail under --optbench-strict; the terminal, Markdown and HTML name them."""
    optbench = optbench_serial
    # Without the narrative fields, which strict mode refuses as unused by this suite.
    optbench.write("suites/pairs.yaml", "\n".join(line for line in pair_suite(n=2).splitlines()
                                                 if "narrative_" not in line))
    with FakeAPI(batches=FakeBatches(polls=0, faults=["hold"])) as server:
        result = run(optbench, server, "--optbench-strict", "--optbench-markdown", "summary.md",
                     "--optbench-html", "report.html")
        assert result.ret == 1, result.text
        result.result.assert_outcomes(failed=2)
        assert "(strict mode)" in result.text and "msgbatch" not in result.text
        assert len(result.report["items_pending"]) == 2
        sentence = "2 item result(s) wait for answers in batch"
        assert sentence in result.text
        markdown = (optbench.pytester.path / "summary.md").read_text(encoding="utf-8")
        assert f"- ⚠️ {sentence}" in markdown and "they fail under strict mode" in markdown
        html = (optbench.pytester.path / "report.html").read_text(encoding="utf-8")
        assert f'<p class="note warn">{sentence}' in html


def test_anthropic_batch_run_and_a_provider_without_batches(optbench_serial, env):
    optbench = optbench_serial
    optbench.write("suites/pairs.yaml", pair_suite(n=2))
    with FakeAPI(batches=FakeBatches(polls=0)) as server:
        result = run(optbench, server, model="anthropic:claude-fake")
        assert result.ret == 0, result.text
        result.result.assert_outcomes(passed=2)
        (batch,) = server.batches.created("anthropic")
        assert len(batch.lines) == 4 * SAMPLES
    sim = optbench.run("--model", "sim:calibrated", "--optbench-batch", "--optbench-batch-wait", "-3")
    assert sim.ret == 4 and "--optbench-batch-wait: must be at least 0" in sim.text
