"""The fuzz layer of issue 15: whatever a suite file, a thresholds file, a JSON report or a
model reply holds, the only outcomes are a result or one clean sentence (which the plugin
turns into a non-zero exit), within bounded CPU time and memory.

The default Hypothesis profile keeps this quick; ``--hypothesis-profile fuzz-long`` (see the
root conftest.py) draws thousands of examples of each.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import scipy.stats  # noqa: F401 - imported now, so that no example pays for it inside its CPU bound
from hostile_strategies import replies, report_files, suite_files, thresholds_files
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_optbench import cli
from pytest_optbench.elicit.engine import ApiElicitor, parsed_answer
from pytest_optbench.elicit.store import ResponseStore
from pytest_optbench.options import EngineSettings, Settings
from pytest_optbench.prompts.build import PromptSpec, render_prompts
from pytest_optbench.providers.openai_provider import OpenAIProvider
from pytest_optbench.records.item import ItemRecord, PromptRecord
from pytest_optbench.report.json_report import write_report
from pytest_optbench.report.markdown import cell
from pytest_optbench.report.reading import ReportError, load_report, report_records
from pytest_optbench.scoring.aggregate import AggregateOptions, aggregate
from pytest_optbench.scoring.baseline import compare
from pytest_optbench.scoring.gates.evaluate import evaluate
from pytest_optbench.scoring.gates.spec import ThresholdsError, load_thresholds
from pytest_optbench.suite.lint import lint_paths
from pytest_optbench.suite.load import SuiteError, load_suite
from pytest_optbench.testing import FakeAPI
from pytest_optbench.testing.server import FAULTS
from pytest_optbench.text.display import printable

CPU_SECONDS = 5.0  # per example, measured as process CPU time (not the wall clock)
MEMORY_MB = 200  # per example, peak of Python allocations (tracemalloc)
FEW = max(3, settings().max_examples // 25)  # for examples that draw plots or call a server


@contextlib.contextmanager
def bounded() -> Iterator[None]:
    """The block must finish within CPU_SECONDS of CPU and MEMORY_MB of allocations."""
    tracemalloc.start()
    start = time.process_time()
    try:
        yield
    finally:
        used = time.process_time() - start
        _current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert used < CPU_SECONDS, f"{used:.1f} s of CPU"
    assert peak < MEMORY_MB << 20, f"{peak >> 20} MB"


def one_sentence(message: str, starts: str) -> None:
    """What a user sees: one printable line that names the file and ends a sentence."""
    assert message.startswith(starts), message
    assert "\n" not in message and "\r" not in message, message
    assert printable(message) == message, message
    assert message.endswith("."), message
    assert len(message) < 2500, len(message)


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="optbench-fuzz-") as name:
        yield Path(name)


# --------------------------------------------------------------------------- suites


@given(content=suite_files())
def test_a_suite_file_is_a_suite_or_one_sentence(content: bytes) -> None:
    with scratch() as directory:
        path = directory / "suite.yaml"
        path.write_bytes(content)
        with bounded():
            try:
                suite = load_suite(path, "suites/fuzz.yaml")
            except SuiteError as exc:
                one_sentence(str(exc), "suites/fuzz.yaml")
                return
            if suite is None:
                return
            for item in suite.items:
                for condition in suite.conditions:
                    try:  # collect.py turns exactly these into a one-sentence collection error
                        specs = render_prompts(suite, item, condition, Settings())
                    except (KeyError, IndexError, ValueError, AttributeError):
                        continue
                    assert all(len(s.user) < 100_000 for s in specs)
            findings = lint_paths([path])
            assert all("\n" not in f.line() for f in findings)


@given(content=thresholds_files())
def test_a_thresholds_file_is_gates_or_one_sentence(content: bytes) -> None:
    with scratch() as directory:
        path = directory / "thresholds.yaml"
        path.write_bytes(content)
        with bounded():
            try:
                gates = load_thresholds(path, "thresholds.yaml")
            except ThresholdsError as exc:
                one_sentence(str(exc), "thresholds.yaml")
                return
            verdicts = evaluate(gates, [], {})
            assert len(verdicts) == len(gates)


# --------------------------------------------------------------------------- reports


def _outputs(paths: list[Path]) -> list[tuple[int, str]]:
    """Run the optbench commands that read reports; (exit status, stderr) of each."""
    out = []
    for command in (["compare", *map(str, paths)], ["variance", *map(str, paths)],
                    ["crosslingual", *map(str, paths)]):
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            status = cli.main(command)
        out.append((status, stderr.getvalue()))
    return out


@given(content=report_files(), other=report_files())
def test_a_report_is_scored_or_one_sentence(content: bytes, other: bytes) -> None:
    with scratch() as directory:
        path, second = directory / "a.json", directory / "b.json"
        path.write_bytes(content)
        second.write_bytes(other)
        with bounded():
            try:
                data = load_report(path)
            except ReportError as exc:
                one_sentence(str(exc), str(path))
            else:
                records = report_records(data, path)
                options = AggregateOptions(n_resamples=50)
                aggregate(records, options)
                compare(records, records, options, data["run"], data["run"])  # a baseline of itself
            for status, stderr in _outputs([path, second]):
                assert status in (0, 2)
                if stderr:
                    assert stderr.count("\n") == 1 and printable(stderr[:-1]) == stderr[:-1], stderr


@settings(max_examples=FEW, suppress_health_check=[HealthCheck.too_slow])
@given(content=report_files(), other=report_files())
def test_compare_html_is_written_or_one_sentence(content: bytes, other: bytes) -> None:
    with scratch() as directory:
        paths = [directory / "a.json", directory / "b.json"]
        paths[0].write_bytes(content)
        paths[1].write_bytes(other)
        stderr = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(stderr):
            status = cli.main(["compare", *map(str, paths), "--html", str(directory / "out.html")])
        assert status in (0, 2)
        assert (status == 0) == (directory / "out.html").exists()
        if status == 2:
            assert stderr.getvalue().count("\n") == 1


# --------------------------------------------------------------------------- replies


@given(reply=replies())
def test_a_reply_is_a_number_or_a_reason_and_every_writer_takes_it(reply: str) -> None:
    with bounded():
        answer = parsed_answer(reply)
        assert answer.raw is not None
        answer.raw.encode("utf-8")  # no lone surrogate is left for a writer to choke on
        if answer.value is None:
            assert answer.reason
        else:
            assert math.isfinite(answer.value) and 0 <= answer.value <= 100
        shown = cell(answer.raw)
        assert "\r" not in shown and "\n" not in shown and "\x1b" not in printable(answer.raw)
    with scratch() as directory:
        store = ResponseStore(directory / "responses.sqlite")
        try:
            assert store.put("key", 0, [answer.raw]) == [0]
            assert store.get("key")[0].text == answer.raw
        finally:
            store.close()
        record = ItemRecord("s", "i", "base", "binary", "f.yaml", "m", [PromptRecord("yes", "q?", [answer])],
                            outcome=True)
        write_report(directory / "r.json", {"items": [record.to_dict()]})
        assert json.loads((directory / "r.json").read_text(encoding="utf-8"))["items"][0]["prompts"][0]["answers"][0][
            "raw"] == answer.raw


KEY = "sk-test-FUZZ-0123456789abcdef"


@settings(max_examples=FEW, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(reply=replies(), faults=st.lists(st.sampled_from(FAULTS), max_size=4))
def test_a_server_reply_or_fault_is_an_answer_or_one_line(shared_server: FakeAPI, reply: str,
                                                          faults: list[str]) -> None:
    server = shared_server.reconfigure(answer=lambda request, index: reply, faults=list(faults), timeout_sleep=0.3)
    with scratch() as directory:
        provider = OpenAIProvider("fuzz", base_url=server.openai_url, env={"OPENAI_API_KEY": KEY}, timeout=0.1)
        engine = ApiElicitor(provider, ResponseStore(directory / "responses.sqlite"),
                             EngineSettings(concurrency=2, max_retries=2, backoff_base=0.001, backoff_cap=0.01,
                                            run_id="fuzz"))
        try:
            spec = PromptSpec("yes", "system", "Is it so?", 2, 0.7, {})
            engine.prefetch([spec])
            record = engine.record(spec)
        finally:
            engine.close()
            engine.store.close()
    for answer in record.answers:
        if answer.error is not None:
            assert "\n" not in answer.error and printable(answer.error) == answer.error
            assert KEY not in answer.error
        else:
            assert answer.raw is not None and KEY not in answer.raw
            answer.raw.encode("utf-8")

