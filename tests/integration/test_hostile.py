"""Hostile input, full disks and dead servers, end to end (issue 15): every case ends as one
sentence and a non-zero exit, with the summary and every report that can be written, nothing
paid for lost, and nothing running away.

In-process (``pytester.runpytest``) where that is enough; a subprocess only where the test
needs a signal or a resource limit on the run itself.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path

# pytester's in-process runs drop the modules they import, and C extensions (numpy,
# pydantic-core) cannot load twice: they are loaded once here, before any run.
import anthropic  # noqa: F401
import matplotlib
import openai  # noqa: F401
import pytest
import scipy.stats  # noqa: F401
import yaml
from _limits import child_env, limited_command
from _waiting import stop_within, wait_until

from pytest_optbench.testing import FakeAPI

matplotlib.use("Agg")

KEY = "sk-test-HOSTILE-abcdef0123456789"


def pair_suite(n: int = 4, suite: str = "demo", scenario: str = "A team has planned a launch for months.",
               positive: str = "What is the probability that launch {i} succeeds?") -> str:
    items = [{"id": f"item-{i:02d}", "domain": "business", "scenario": scenario,
              "positive": positive.format(i=i), "negative": f"What is the probability that launch {i} fails?"}
             for i in range(n)]
    return yaml.safe_dump({"optbench": 1, "suite": suite, "defaults": {"samples": 2}, "items": items},
                          sort_keys=False, allow_unicode=True)


MODEL_CONFTEST = """
import pytest

@pytest.fixture(scope="session")
def optbench_model():
    def model(prompt):
        {body}
    return model
"""


def model_conftest(body: str) -> str:
    return MODEL_CONFTEST.replace("{body}", body)


@pytest.fixture
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    """Run pytest in-process in the pytester directory; returns (exit status, all output)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)

    def go(*args: str) -> tuple[int, str]:
        result = pytester.runpytest("-p", "no:cacheprovider", "--optbench-bootstrap", "100", "--color=no", *args)
        return int(result.ret), result.stdout.str() + result.stderr.str()

    return go


def no_crash(text: str) -> None:
    assert "INTERNALERROR" not in text and "Traceback" not in text, text[-3000:]


# --------------------------------------------------------------------------- hostile suites


def test_an_alias_bomb_is_a_collection_error_of_one_short_line(pytester, run):
    parts = ['&l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    parts += [f"&l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 7)]
    pytester.makefile(".yaml", bomb="optbench: [" + ", ".join(parts) + "]\nitems: []\n")
    status, text = run("--model", "sim:calibrated")
    assert status == 2
    assert "bomb.yaml: malformed YAML (its aliases expand to" in text
    assert max(len(line) for line in text.splitlines()) < 400
    no_crash(text)


def test_suites_written_by_safe_dump_and_in_utf16_are_collected(pytester, run):
    long = yaml.safe_dump({"optbench": 1, "suite": "sorted", "items": [
        {"id": f"i{i:03d}", "scenario": "A plan. " + "x" * 300, "positive": f"Will plan {i} work?",
         "negative": f"Will plan {i} fail?"} for i in range(300)]})  # keys sorted: optbench after items
    pytester.path.joinpath("sorted.yaml").write_text(long)
    pytester.path.joinpath("wide.yaml").write_bytes(pair_suite(3, suite="wide").encode("utf-16"))
    status, text = run("--model", "sim:calibrated", "--samples", "1")
    assert status == 0, text
    # Items whose one sample is a simulated prose refusal are xfail (no usable answer).
    passed, xfailed = (int(n) for n in re.search(r"(\d+) passed, (\d+) xfailed", text).groups())
    assert passed + xfailed == 303 and passed > 250


def test_a_suite_inside_a_top_level_list_is_an_error_not_silence(pytester, run):
    pytester.makefile(".yaml", listed="- " + pair_suite(1).replace("\n", "\n  ").rstrip() + "\n")
    status, text = run("--model", "sim:calibrated")
    assert status == 2
    assert "listed.yaml: the suite is inside a list" in text


# --------------------------------------------------------------------------- reports that cannot be written


# Something else takes the reports' places while the run goes on (a checked-out directory,
# a file written by another job): only writing can find out.
OBSTACLES = """
import pathlib

def pytest_collection_finish(session):
    pathlib.Path("report.json").mkdir()
    pathlib.Path("afile").write_text("x")
"""


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--optbench-report", "report.json", "--optbench-report report.json: is a directory; give the path of a file."),
    ("--optbench-markdown", "afile/summary.md", "--optbench-markdown afile/summary.md: afile is a file, not a directory."),
    ("--optbench-html", "afile/deeper/page.html", "--optbench-html afile/deeper/page.html: afile is a file, not a"),
    ("--junitxml", "afile/junit.xml", "--junitxml afile/junit.xml: afile is a file, not a directory."),
])
def test_a_report_that_can_never_be_written_is_refused_before_any_call(pytester, run, option, value, message):
    pytester.makefile(".yaml", suite=pair_suite())
    pytester.makeconftest(model_conftest('open("called", "w").write("yes"); return "50"'))
    (pytester.path / "report.json").mkdir()
    (pytester.path / "afile").write_text("x")
    status, text = run(option, value)
    assert status == 4
    assert message in text
    assert not (pytester.path / "called").exists()
    no_crash(text)


def test_every_report_is_written_even_when_one_cannot_be(pytester, run, monkeypatch):
    pytester.makefile(".yaml", suite=pair_suite())
    pytester.makeconftest(OBSTACLES)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(pytester.path))  # a directory
    status, text = run("--model", "sim:optimist", "--optbench-report", "report.json",
                       "--optbench-markdown", "afile/summary.md", "--optbench-html", "page.html",
                       "--junitxml", "junit.xml")
    assert status == 1
    no_crash(text)
    assert "optbench summary" in text  # the summary is never lost
    assert "optbench: --optbench-report report.json: not written (Is a directory)." in text
    assert "optbench: --optbench-markdown afile/summary.md: not written (Not a directory)." in text
    assert f"optbench: $GITHUB_STEP_SUMMARY {pytester.path}: not written (Is a directory)." in text
    assert "3 optbench problem(s)" in text.splitlines()[-1]
    assert (pytester.path / "page.html").read_text().startswith("<!DOCTYPE html>")
    assert "optbench_answers" in (pytester.path / "junit.xml").read_text()


def test_a_full_disk_for_the_job_summary_is_named(pytester, run, monkeypatch):
    pytester.makefile(".yaml", suite=pair_suite())
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", "/dev/full")  # writes fail with ENOSPC
    status, text = run("--model", "sim:calibrated", "--optbench-report", "report.json")
    assert status == 1
    assert "optbench: $GITHUB_STEP_SUMMARY /dev/full: not written (No space left on device)." in text
    assert json.loads((pytester.path / "report.json").read_text())["format"] == "pytest-optbench-report"


def test_an_empty_run_whose_report_cannot_be_written_says_so(pytester, run):
    pytester.makeconftest(OBSTACLES)
    status, text = run("--optbench-report", "report.json")
    assert status == 1  # nothing ran, and the report asked for is not there
    assert "--optbench-report report.json: not written (Is a directory)." in text
    no_crash(text)


# --------------------------------------------------------------------------- hostile answers


def test_a_lone_surrogate_in_an_answer_reaches_every_report(pytester, run):
    pytester.makefile(".yaml", suite=pair_suite())
    pytester.makeconftest(model_conftest('return "Probability: 55 \\ud800"'))
    status, text = run("--optbench-report", "r.json", "--optbench-markdown", "r.md", "--optbench-html", "r.html",
                       "--junitxml", "j.xml")
    assert status == 0, text
    report = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))
    answers = [a for i in report["items"] for p in i["prompts"] for a in p["answers"]]
    assert {a["raw"] for a in answers} == {"Probability: 55 \ufffd"} and {a["value"] for a in answers} == {55}
    for name in ("r.md", "r.html", "j.xml"):
        (pytester.path / name).read_text(encoding="utf-8")


def test_control_characters_from_a_model_error_never_reach_the_terminal(pytester, run):
    pytester.makefile(".yaml", suite=pair_suite(2))
    pytester.makeconftest(model_conftest('raise RuntimeError("\\x1b[2J\\x1b]0;pwned\\x07boom\\rover")'))
    status, text = run()
    assert status == 1
    assert "\x1b" not in text and "\x07" not in text and "boom\rover" not in text
    assert "RuntimeError: \\x1b[2J\\x1b]0;pwned\\x07boom over" in text


def test_a_carriage_return_in_a_question_keeps_the_markdown_table_whole(pytester, run):
    pytester.makefile(".yaml", suite=pair_suite(6, positive="Will launch {i}\rsucceed?"))
    status, text = run("--model", "sim:optimist", "--optbench-markdown", "r.md")
    assert status == 0, text
    markdown = (pytester.path / "r.md").read_bytes()
    assert b"\r" not in markdown
    rows = [line for line in markdown.decode().splitlines() if line.startswith("| largest Skew")]
    assert rows and all(line.endswith("|") for line in rows)


# --------------------------------------------------------------------------- servers and models that fail


def test_a_bad_key_costs_one_round_and_one_failed_item(pytester, run):
    pytester.makefile(".yaml", suite=pair_suite(40))
    with FakeAPI(fault_for=lambda request: "auth") as api:
        status, text = run("--model", "openai:fake", "--base-url", api.openai_url, "-rs", "--concurrency", "8")
        asked = len(api.requests)
    assert 1 <= asked <= 8  # 80 before any stop: one per prompt; now one refused request per slot at most
    assert status == 1
    assert "1 failed, 39 skipped" in text
    assert "not asked: openai: HTTP 401" in text
    assert KEY not in text
    no_crash(text)


def test_a_foreign_store_under_xdist_is_one_sentence_before_any_call(pytester, run):
    import sqlite3

    pytester.makefile(".yaml", suite=pair_suite(4))
    store = pytester.path / "cache" / "responses.sqlite"
    store.parent.mkdir()
    with sqlite3.connect(store) as db:
        db.execute("CREATE TABLE answers (id INTEGER PRIMARY KEY, body TEXT)")
    with FakeAPI() as api:
        status, text = run("--model", "openai:fake", "--base-url", api.openai_url, "--optbench-cache-dir", "cache",
                           "-n", "2")
        asked = len(api.requests)
    assert status == 4 and asked == 0
    assert "cache/responses.sqlite: its table 'answers' is not a pytest-optbench response store's" in text
    assert "node down" not in text and "Traceback" not in text


def test_a_hung_server_is_bounded_by_the_session_deadline(pytester, run):
    pytester.makefile(".yaml", suite=pair_suite(20))
    with FakeAPI(fault_for=lambda request: "timeout", timeout_sleep=30) as api:
        status, text = run("--model", "openai:fake", "--base-url", api.openai_url, "--optbench-timeout", "5",
                           "--optbench-deadline", "0.5")
    assert status == 1
    assert "the session deadline of 0.5 s (--optbench-deadline) passed" in text
    assert "1 failed, 19 skipped" in text
    no_crash(text)


def _content(value):
    def mangle(what, body):
        if what == "openai":
            for choice in body["choices"]:
                choice["message"]["content"] = value
        return body
    return mangle


@pytest.mark.parametrize(("elicit", "content"), [("text", 65), ("json", [1, 2])])
def test_content_that_is_no_text_fails_its_items_in_one_line_with_every_report(pytester, run, elicit, content):
    pytester.makefile(".yaml", suite=pair_suite(2))
    with FakeAPI(mangle=_content(content)) as api:
        status, text = run("--model", "openai:fake", "--base-url", api.openai_url, "--optbench-elicit", elicit,
                           "--optbench-retries", "0", "--optbench-report", "r.json", "--junitxml", "j.xml")
    assert status == 1
    no_crash(text)
    said = "content is a number, not text" if content == 65 else "content[0] is a number, not an object"
    assert f"choices[0].message.{said}" in text
    report = json.loads((pytester.path / "r.json").read_text())
    errors = {a["error"] for i in report["items"] for p in i["prompts"] for a in p["answers"]}
    assert all("unusable answer" in e for e in errors)


def test_a_server_that_stops_answering_ends_the_session_without_a_deadline(pytester, run):
    pytester.makefile(".yaml", suite=pair_suite(20))
    answered: set[str] = set()

    def fault(request):
        if len(answered) < 4 or request.user in answered:
            answered.add(request.user)
            return None
        return "timeout"

    with FakeAPI(fault_for=fault, timeout_sleep=5) as api:
        status, text = run("--model", "openai:fake", "--base-url", api.openai_url, "--optbench-timeout", "0.2",
                           "--concurrency", "2", "--optbench-report", "r.json", "-rs")
        asked = len(api.requests)
    assert status == 1
    no_crash(text)
    assert "the server stopped answering: 6 requests in a row timed out (0.2 s each, --optbench-timeout)" in text
    assert asked <= 4 + 6 + 2  # the answered prompts' requests, the six, and those in flight: not 36 x 7
    report = json.loads((pytester.path / "r.json").read_text())
    kept = [a for i in report["items"] for p in i["prompts"] for a in p["answers"] if a.get("raw") is not None]
    assert len(kept) == 2 * len(answered)  # every answer received is stored and reported


def test_a_hung_conftest_model_times_out_then_is_left_alone(pytester, run):
    pytester.makefile(".yaml", suite=pair_suite(30))
    pytester.makeconftest(model_conftest("import time; time.sleep(60)"))
    status, text = run("--optbench-timeout", "0.05", "-rs")
    assert status == 1
    assert "timed out after 0.05 s (--optbench-timeout)" in text
    assert "the model timed out 3 times in a row" in text
    assert "1 failed, 29 skipped" in text


def test_a_hostile_baseline_is_refused_before_any_call(pytester, run):
    pytester.makefile(".yaml", suite=pair_suite())
    pytester.makeconftest(model_conftest('open("called", "w").write("yes"); return "50"'))
    bad = {"format": "pytest-optbench-report", "format_version": 1, "run": {}, "items": [],
           "aggregates": [{"suite": "demo", "condition": "base", "metric": "skew", "value": "abc", "ci_low": None,
                           "ci_high": None}], "gates": []}
    (pytester.path / "base.json").write_text(json.dumps(bad))
    status, text = run("--optbench-baseline", "base.json")
    assert status == 4
    assert "base.json: aggregates[0], key 'value': must be a number or null, got 'abc'." in text
    assert not (pytester.path / "called").exists()


def test_a_baseline_of_another_kind_is_compared_without_a_crash(pytester, run):
    """Every call is paid for before the baseline is compared: whatever it holds, the run's
    answers and reports survive."""
    pytester.makefile(".yaml", suite=pair_suite())
    status, text = run("--model", "sim:optimist", "--optbench-report", "first.json")
    assert status == 0, text
    first = json.loads((pytester.path / "first.json").read_text())
    for item in first["items"]:  # the same items, now claimed to be known-answer items
        item.update(kind="binary", prompts=[{"role": "yes", "user": "q", "answers": [{"raw": "70", "value": 70}]}])
    (pytester.path / "base.json").write_text(json.dumps(first))
    status, text = run("--model", "sim:optimist", "--optbench-baseline", "base.json", "--optbench-report", "r.json")
    no_crash(text)
    assert json.loads((pytester.path / "r.json").read_text())["baseline"] is not None


# --------------------------------------------------------------------------- subprocesses: limits and signals


def _pytest(args: list[str], cwd: Path, env: dict[str, str], limit_files: int = 0) -> subprocess.Popen[str]:
    """pytest in a subprocess; ``limit_files``: every file it writes stops at this size (a full disk)."""
    command = limited_command(["-m", "pytest", "-p", "no:cacheprovider", "--color=no", *args], file_bytes=limit_files)
    return subprocess.Popen(command, cwd=cwd, env=child_env(**env), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def test_a_full_disk_loses_no_answer_and_no_summary(tmp_path):
    (tmp_path / "suite.yaml").write_text(pair_suite(12))
    with FakeAPI(answer=lambda request, index: "61\n\n" + "pad " * 800) as api:
        proc = _pytest(["--model", "openai:fake", "--base-url", api.openai_url, "--optbench-report", "report.json",
                        "--optbench-markdown", "summary.md", "--optbench-bootstrap", "100", "-q"],
                       tmp_path, {"OPENAI_API_KEY": KEY}, limit_files=48 * 1024)
        text, _ = proc.communicate(timeout=300)
        asked = len(api.requests)
    assert proc.returncode == 1, text
    assert "INTERNALERROR" not in text and "Traceback" not in text, text[-3000:]
    assert asked == 24  # every prompt once: nothing asked twice because a write failed
    assert "12 passed" in text  # every item got its answers, from memory
    assert "optbench summary" in text
    assert "responses.sqlite: the response store cannot be written" in text
    assert "kept in memory and in this run's reports only" in text
    assert "--optbench-report report.json: not written (File too large)." in text
    assert (tmp_path / "summary.md").read_text().startswith("## pytest-optbench")


def test_no_matplotlib_warning_when_every_answer_failed(tmp_path):
    # A subprocess: warnings raised after the items ran go to the outer process in-process.
    (tmp_path / "suite.yaml").write_text(pair_suite())
    (tmp_path / "conftest.py").write_text(model_conftest('raise RuntimeError("down")'))
    proc = _pytest(["--optbench-html", "r.html", "-W", "default", "--optbench-bootstrap", "100"], tmp_path, {})
    text, _ = proc.communicate(timeout=300)
    assert proc.returncode == 1, text
    assert "Warning" not in text and "legend" not in text
    assert (tmp_path / "r.html").exists()


def test_ctrl_c_leaves_no_pending_task_behind(tmp_path):
    (tmp_path / "suite.yaml").write_text(pair_suite(40))
    with FakeAPI(latency=1.0) as api:
        proc = _pytest(["--model", "openai:fake", "--base-url", api.openai_url, "--concurrency", "4"],
                       tmp_path, {"OPENAI_API_KEY": KEY})
        # Ctrl-C while requests are in flight (not during start-up, when Python's own
        # KeyboardInterrupt would end the process before pytest runs, with exit 1).
        wait_until(lambda: len(api.requests) >= 2, 60, "two requests in flight", proc)
        proc.send_signal(signal.SIGINT)
        text = stop_within(proc, 60, "the Ctrl-C")
    assert proc.returncode == 2, text
    assert "KeyboardInterrupt" in text
    assert "Task was destroyed but it is pending" not in text
    assert "Exception ignored" not in text


def test_killed_xdist_controller_stops_its_workers(tmp_path):
    """kill -9 of the controller: its workers stop asking within a request or two."""
    (tmp_path / "suite.yaml").write_text(pair_suite(200))
    with FakeAPI(latency=0.1) as api:
        proc = _pytest(["--model", "openai:fake", "--base-url", api.openai_url, "--concurrency", "2", "-n", "2"],
                       tmp_path, {"OPENAI_API_KEY": KEY})
        wait_until(lambda: len(api.requests) >= 6, 60, "six requests from the workers", proc)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        seen, quiet = len(api.requests), 0

        def quiet_for_a_second() -> bool:  # ten latencies
            nonlocal seen, quiet
            quiet = quiet + 1 if len(api.requests) == seen else 0
            seen = len(api.requests)
            return quiet >= 10

        wait_until(quiet_for_a_second, 20, "a second without a request from the orphaned workers", every=0.1)
    assert seen < 60  # 400 prompts: before, the workers went on for about 15 s


def test_billion_laughs_in_a_real_run_stays_within_memory(tmp_path):
    parts = ['&l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    parts += [f"&l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 9)]
    (tmp_path / "bomb.yaml").write_text("optbench: [" + ", ".join(parts) + "]\nitems: []\n")
    command = limited_command(["-m", "pytest", "-p", "no:cacheprovider", "--model", "sim:calibrated"],
                              cpu_seconds=60, memory_mb=1500)
    proc = subprocess.run(command, cwd=tmp_path, env=child_env(), capture_output=True, text=True, check=False)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "bomb.yaml: malformed YAML (its aliases expand to" in proc.stdout
    assert len(proc.stdout) < 5000
