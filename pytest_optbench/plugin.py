"""pytest entry point: hooks of a few lines each and the model fixture.

The work happens elsewhere: ``options`` reads the command line, ``collect`` builds items
from suites, ``state.OptbenchRun`` holds the run (model, engine, records) and decides the
outcome, ``report`` formats it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from .collect import OptbenchItem, SuiteFile, looks_like_suite
from .gates import ThresholdsError, load_thresholds
from .lint import ERROR, lint_paths, summary_line
from .options import add_options, read_options
from .providers import ProviderError
from .report.json_report import ReportError, build_report, write_report, write_text
from .report.markdown import build_markdown
from .report.progress import Progress, progress_wanted
from .report.summary import run_metadata, write_summary
from .state import NO_MODEL_REASON, RUN_KEY, OptbenchRun, get_run, is_controller
from .store import StoreError


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """``pytest --optbench-lint PATHS``: lint the suites and exit, calling no model."""
    if not config.getoption("optbench_lint"):
        return None
    findings = lint_paths([Path(a.split("::")[0]) for a in config.args], root=config.rootpath)
    for finding in findings:
        print(finding.line())
    print(summary_line(findings))
    return 1 if any(f.severity == ERROR for f in findings) else 0


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "optbench: an item collected from a pytest-optbench suite file")
    options = read_options(config)
    gates, display = [], None
    if options.thresholds_path:
        display = _display(config, options.thresholds_path)
        try:
            gates = load_thresholds(options.thresholds_path, display)
        except ThresholdsError as exc:
            raise pytest.UsageError(str(exc)) from None
    worker_input = getattr(config, "workerinput", {})
    run_id = worker_input.get("optbench_run_id") or uuid.uuid4().hex
    run = OptbenchRun(options, gates, display, run_id=run_id, worker=_worker_shard(worker_input))
    try:  # fail fast on a bad --model, store or baseline, before anything is called
        run.build_model()
        if is_controller(config):
            run.load_baseline(config.rootpath)
    except (ProviderError, StoreError, ReportError) as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[RUN_KEY] = run
    if is_controller(config):
        config.pluginmanager.register(ControllerPlugin(run), "optbench-controller")
        if config.pluginmanager.hasplugin("xdist"):
            config.pluginmanager.register(XdistControllerHooks(run), "optbench-xdist")


def pytest_unconfigure(config: pytest.Config) -> None:
    run = config.stash.get(RUN_KEY, None)
    if run is not None:
        run.close()


def _display(config: pytest.Config, path: Path) -> str:
    try:
        return str(path.resolve().relative_to(config.rootpath))
    except ValueError:
        return str(path)


def _worker_shard(worker_input: dict[str, Any]) -> tuple[int, int]:
    """(index, count) of this xdist worker; (0, 1) in a serial run."""
    if not worker_input:
        return 0, 1
    count = int(worker_input["workercount"])
    # A worker that replaces a crashed one gets a new id (gw2 of 2): fold it into range.
    return int(str(worker_input["workerid"]).removeprefix("gw")) % count, count


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if looks_like_suite(file_path):
        return SuiteFile.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    run = get_run(config)
    if not run.options.languages:
        return
    keep = [i for i in items if not isinstance(i, OptbenchItem) or run.wants_language(i.suite.language)]
    if len(keep) < len(items):
        kept = set(keep)
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = keep


def pytest_collection_finish(session: pytest.Session) -> None:
    # Every worker collects every item: the engine shards their prompts by a stable hash.
    get_run(session.config).items = [i for i in session.items if isinstance(i, OptbenchItem)]


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, Any, Any]:
    """On every process that runs items (serial run, each xdist worker): prefetch first."""
    run = get_run(session.config)
    # The xdist controller collects nothing, so only processes that run items get here.
    if run.items and not session.config.option.collectonly:
        run.prefetch(model_fixture_overridden(run.items[0]))
    return (yield)


def model_fixture_overridden(item: pytest.Item) -> bool:
    """True when a conftest.py (or another plugin) defines its own ``optbench_model``
    (pytest has no public API for the winning definition: the fixture manager is asked)."""
    definitions = item.session._fixturemanager.getfixturedefs("optbench_model", item) or ()
    return bool(definitions) and getattr(definitions[-1].func, "__module__", "") != __name__


@pytest.fixture(scope="session")
def optbench_model(pytestconfig: pytest.Config) -> Any:
    """The model under test. Override it in conftest.py to audit your own prompt or pipeline:
    return a callable ``f(prompt) -> str | number`` or an object with ``complete(prompt)``
    (sync or async). ``prompt`` is a ``pytest_optbench.Prompt``."""
    model = get_run(pytestconfig).model
    if model is None:
        pytest.skip(NO_MODEL_REASON)
    return model


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    record = getattr(item, "optbench_record", None)
    if call.when == "call" and record is not None:
        report.optbench_record = record.to_dict()  # travels to the xdist controller
    return report


class ControllerPlugin:
    """Hooks that only the controller (or a serial run) needs: gather, decide, report."""

    def __init__(self, run: OptbenchRun) -> None:
        self.run = run

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.run.add_report(report)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.run.elicitor is not None and progress_wanted(session.config.get_verbosity()):
            self.run.progress = Progress()

    def pytest_sessionfinish(self) -> None:
        if isinstance(self.run.progress, Progress):
            self.run.progress.close()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, Any, Any]:
        result = yield
        outcome = self.run.finish()
        if outcome.failed_gates or (outcome.missing and outcome.records):
            session.testsfailed += 1  # fail the session the way pytest-cov does
        write_outputs(self.run, outcome)
        log_gates_to_junit(session.config, outcome.verdicts, self.run.thresholds_display or "thresholds.yaml")
        return result

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        write_summary(terminalreporter, self.run)


def write_outputs(run: OptbenchRun, outcome: Any) -> None:
    """The report files asked for; the Markdown also goes to GitHub's job summary."""
    options = run.options
    if not (options.report_path or options.markdown_path or options.html_path
            or os.environ.get("GITHUB_STEP_SUMMARY")) or not (outcome.records or outcome.missing):
        if options.report_path:  # an empty run still leaves its report for CI artifacts
            write_report(options.report_path, build_report(outcome, run_metadata(run)))
        return
    metadata = run_metadata(run)
    if options.report_path:
        write_report(options.report_path, build_report(outcome, metadata))
    markdown = build_markdown(outcome, metadata)
    if options.markdown_path:
        write_text(options.markdown_path, markdown)
    if step_summary := os.environ.get("GITHUB_STEP_SUMMARY"):
        with open(step_summary, "a", encoding="utf-8") as handle:
            handle.write(markdown)
    if options.html_path:
        from .report.html import build_html, write_html  # matplotlib is imported only when asked

        write_html(options.html_path, build_html(outcome, metadata))


def log_gates_to_junit(config: pytest.Config, verdicts: list[Any], source: str) -> None:
    """With --junitxml, each gate verdict becomes a test case next to the items, so CI
    systems show gates with tests. Only the JUnit writer sees these reports."""
    from _pytest.junitxml import xml_key  # pytest's own writer, kept on the stash

    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    for verdict in verdicts:
        where = f"{verdict.suite}/{verdict.condition}" if verdict.suite else "no matching suite"
        nodeid = f"{source}::{verdict.gate.metric} {verdict.gate.bound_text}[{where}]"
        message = (f"{verdict.gate.metric} {verdict.gate.bound_text} ({verdict.gate.evidence}): estimate "
                   f"{verdict.value}, 95% CI [{verdict.ci_low}, {verdict.ci_high}]; {verdict.reason}")
        outcome = {"pass": "passed", "fail": "failed"}.get(verdict.verdict, "skipped")
        longrepr: Any = None
        if outcome == "failed":
            longrepr = message
        elif outcome == "skipped":
            longrepr = (source, verdict.gate.line, f"not evaluated: {verdict.reason}")
        for when in ("call", "teardown"):
            xml.pytest_runtest_logreport(pytest.TestReport(
                nodeid, (source, verdict.gate.line, nodeid), {}, outcome if when == "call" else "passed",
                longrepr if when == "call" else None, when, user_properties=[("optbench_gate", message)],
            ))


class XdistControllerHooks:
    """Registered only when pytest-xdist is present: one run id for all workers, so the
    store can tell answers paid for in this session from answers read back."""

    def __init__(self, run: OptbenchRun) -> None:
        self.run = run

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["optbench_run_id"] = self.run.run_id
