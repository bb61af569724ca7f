"""pytest entry point: hooks of a few lines each and the model fixture.

Two sessions do the work, one per role, kept on ``config.stash``: ``session.worker`` (every
process that collects and runs items: the model, the engine, the prompts) and
``session.controller`` (the serial run or the xdist controller: records -> scores -> gates ->
outputs). Nothing heavy is imported here, so a repository without suites pays for the
plugin only its options.
"""

from __future__ import annotations

import gc
import threading
import uuid
from collections import Counter
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from .options import add_options, read_options
from .session.asker import ASKER_INPUT, ASKER_KEY, start_asker
from .session.controller import CONTROLLER_KEY, ControllerSession, is_controller
from .session.spare import session_pool, start_pool, stop_pool
from .session.worker import (
    NO_CLI_MODEL_REASON,
    NO_MODEL_REASON,
    WORKER_KEY,
    WorkerSession,
    check_model_spec,
    get_worker,
)

SUITE_SUFFIXES = (".yaml", ".yml")


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> Generator[None, Any, Any]:
    """Before pytest captures output: an xdist worker keeps its stderr for progress lines."""
    from .session.progress import keep_stderr

    keep_stderr(early_config)
    return (yield)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """``pytest --optbench-lint PATHS``: lint the suites and exit, calling no model."""
    if not config.getoption("optbench_lint"):
        return None
    from .scoring.gates.lint import lint_project
    from .suite.lint import ERROR, summary_line

    findings = lint_project([Path(a.split("::")[0]) for a in config.args], root=config.rootpath)
    for finding in findings:
        print(finding.line())
    print(summary_line(findings))
    return 1 if any(f.severity == ERROR for f in findings) else 0


def pytest_configure(config: pytest.Config) -> None:
    global _SESSIONS
    _SESSIONS += 1
    config.addinivalue_line("markers", "optbench: an item collected from a pytest-optbench suite file")
    options = read_options(config)
    if options.bank:  # --optbench-bank: the bundled bank joins what pytest collects
        from .session.bank import add_bank

        add_bank(config)
    worker_input = getattr(config, "workerinput", {})
    run_id = worker_input.get("optbench_run_id") or uuid.uuid4().hex
    try:  # fail fast on a bad --model, store, thresholds or baseline, before anything is called
        _load_kind_plugins()
        controller = None
        if is_controller(config):
            controller = _controller(config, options, run_id)
            config.stash[CONTROLLER_KEY] = controller
            config.pluginmanager.register(ControllerHooks(controller), "optbench-controller")
            if config.pluginmanager.hasplugin("xdist"):
                config.pluginmanager.register(XdistControllerHooks(controller, config), "optbench-xdist")
            if options.batch:
                controller.extra["batch"] = {"wait_seconds": options.batch_wait, "max_lines": options.batch_size,
                                             "open": {}}
        if options.shard is not None:  # --optbench-shard I/N: this job's share of the items
            from .session.shard import register

            register(config, options.shard, controller, is_controller(config) and _distributed(config))
        if not (is_controller(config) and _distributed(config)):
            asks = False if worker_input.get(ASKER_INPUT) else None  # False: the controller asks
            worker = WorkerSession(options, run_id, shard=_worker_shard(worker_input), asks=asks)
            config.stash[WORKER_KEY] = worker
            worker.build_model()
        elif (asker := start_asker(options, run_id)) is not None:
            config.stash[ASKER_KEY] = asker
        else:
            check_model_spec(options)
    except _usage_errors() as exc:
        raise pytest.UsageError(str(exc)) from None


def _load_kind_plugins() -> None:
    """Item kinds of installed packages (entry points); a conftest registers its own on import."""
    from .kinds import load_entry_points

    try:
        load_entry_points()
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def _controller(config: pytest.Config, options: Any, run_id: str) -> ControllerSession:
    from .session.bank import session_thresholds

    gates, display, multiplicity = session_thresholds(options, config.rootpath)
    # Each gate carries its file's on_inconclusive; one shared by every gate is the file's.
    policies = {g.on_inconclusive for g in gates}
    on_inconclusive = policies.pop() if len(policies) == 1 else None
    deferred = None
    if options.shard is not None:  # a CI shard: gates and baseline are judged on the merged run
        gates, deferred = [], gates
    controller = ControllerSession(options, gates, display, run_id,
                                   multiplicity=options.multiplicity or multiplicity or "holm",
                                   on_inconclusive=on_inconclusive, deferred_gates=deferred)
    if options.prices_path is not None:  # a bad prices file is a usage error before any call
        from .scoring.cost import read_prices
        from .session.controller import display_path

        controller.prices = read_prices(options.prices_path, display_path(options.prices_path, config.rootpath))
    if options.shard is None:
        controller.load_baseline(config.rootpath)
    return controller


def _usage_errors() -> tuple[type[Exception], ...]:
    """Errors that mean a bad command line or input file (imported only now: heavy)."""
    from .elicit.store import StoreError
    from .providers import ProviderError
    from .report.reading import ReportError
    from .scoring.cost import PricesError
    from .scoring.gates.spec import ThresholdsError

    return ProviderError, StoreError, ReportError, ThresholdsError, PricesError


def _distributed(config: pytest.Config) -> bool:
    """True on an xdist controller that hands items to workers (pytest-xdist's own test)."""
    return (config.getoption("dist", "no") != "no" and bool(config.getoption("tx", None))
            and not config.getoption("collectonly"))


def pytest_unconfigure(config: pytest.Config) -> None:
    global _SESSIONS
    for session in (config.stash.get(WORKER_KEY, None), config.stash.get(ASKER_KEY, None)):
        if session is not None:
            session.close()
    stop_pool(config)
    _SESSIONS -= 1
    if _SESSIONS > 0:  # a session run inside another (pytester): the process goes on, so does its collector
        gc.unfreeze()


_SESSIONS = 0  # sessions configured and not yet unconfigured in this process (pytest.main within pytest)


def _worker_shard(worker_input: dict[str, Any]) -> tuple[int, int]:
    """(index, count) of this xdist worker; (0, 1) in a serial run."""
    if not worker_input:
        return 0, 1
    count = int(worker_input["workercount"])
    # A worker that replaces a crashed one gets a new id (gw2 of 2): fold it into range.
    return int(str(worker_input["workerid"]).removeprefix("gw")) % count, count


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix in SUITE_SUFFIXES:
        from .session.collect import SuiteFile, looks_like_suite, near_miss_file

        if looks_like_suite(file_path):
            return SuiteFile.from_parent(parent, path=file_path)
        return near_miss_file(parent, file_path)  # a misspelt marker: a warning, or an error when strict
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    worker = config.stash.get(WORKER_KEY, None)
    if worker is None or not worker.options.languages:
        return
    from .session.collect import OptbenchItem

    keep = [i for i in items if not isinstance(i, OptbenchItem) or worker.wants_language(i.suite.language)]
    if len(keep) < len(items):
        kept = set(keep)
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = keep
    if (problem := worker.language_problem()) is not None:
        if is_controller(config):
            raise pytest.UsageError(problem)
        worker.facts.language_error = problem  # an xdist worker: the controller raises it


def pytest_collection_finish(session: pytest.Session) -> None:
    # Every worker collects every item: the engine knows every prompt, one worker asks for them.
    worker = session.config.stash.get(WORKER_KEY, None)
    if worker is not None:
        worker.items = [i for i in session.items if hasattr(i, "specs") and hasattr(i, "suite")]
        worker.facts.selected = len(worker.items)
        if worker.items and not session.config.option.collectonly:
            keep_from_collector()


# An audit keeps what it collected and every item's record to the end of the session, and the
# garbage collector's full passes walked all of it again and again (4 s of a 40 s audit of the
# whole bank, and the pass pytest forces at exit): what is alive after collection, after every
# FREEZE_EVERY records and after the reports are written is moved out of its reach (gc.freeze).
# What the session drops later is still freed by its reference count; only a reference cycle
# that became garbage before a freeze stays in memory until the process ends.
FREEZE_EVERY = 1000


def keep_from_collector() -> None:
    gc.freeze()


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, Any, Any]:
    """On every process that runs items (serial run, each xdist worker): prefetch first."""
    worker = session.config.stash.get(WORKER_KEY, None)
    if worker is not None and worker.items and not session.config.option.collectonly:
        pool = start_pool(session.config, len(worker.items))
        worker.prefetch(not worker.answer_source(worker.items[0]).cli, pool)
        if pool is not None:
            controller = session.config.stash.get(CONTROLLER_KEY, None)
            if controller is not None:  # a serial run: this process scores too
                controller.score_ahead(pool, Counter(item.suite.id for item in worker.items))
    try:
        return (yield)
    finally:
        if worker is not None:
            worker.items_done()


def pytest_sessionstart(session: pytest.Session) -> None:
    """Every process that asks an API model shows its progress (session/progress.py)."""
    worker = session.config.stash.get(WORKER_KEY, None)
    asker = session.config.stash.get(ASKER_KEY, None)
    if asker is not None:
        worker = asker.session
    if worker is not None and worker.elicitor is not None:
        from .session.progress import attach_progress

        worker.close_progress = attach_progress(session.config, worker, serial=is_controller(session.config),
                                                label="optbench [controller]" if asker is not None else None)


def pytest_sessionfinish(session: pytest.Session) -> None:
    worker = session.config.stash.get(WORKER_KEY, None)
    for shown in (worker, getattr(session.config.stash.get(ASKER_KEY, None), "session", None)):
        if shown is not None and shown.close_progress is not None:
            shown.close_progress()
            shown.close_progress = None
    # An xdist worker sends what it saw to the controller (xdist ships workeroutput after this).
    if worker is not None and hasattr(session.config, "workeroutput"):
        session.config.workeroutput["optbench_facts"] = worker.facts.to_dict()
        session.config.workeroutput["optbench_requests"] = worker.request_counts()
        session.config.workeroutput["optbench_batch"] = worker.batch_info()


@pytest.fixture(scope="session")
def optbench_model(pytestconfig: pytest.Config) -> Any:
    """The model under test. Override it in conftest.py to audit your own prompt or pipeline:
    return a callable ``f(prompt) -> str | number`` or an object with ``complete(prompt)``
    (sync or async). ``prompt`` is a ``pytest_optbench.Prompt``. ``--model`` wins over an
    override that does not take ``optbench_cli_model`` (docs/models.md)."""
    model = get_worker(pytestconfig).model
    if model is None:
        pytest.skip(NO_MODEL_REASON)
    return model


@pytest.fixture(scope="session")
def optbench_cli_model(pytestconfig: pytest.Config) -> Any:
    """The ``--model`` model, for an overriding ``optbench_model`` that wraps it (a pipeline
    around the model under test): such a fixture answers, and ``--model`` picks its model."""
    model = get_worker(pytestconfig).model
    if model is None:
        pytest.skip(NO_CLI_MODEL_REASON)
    return model


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    record = getattr(item, "optbench_record", None)
    if call.when == "call" and record is not None:
        controller = item.config.stash.get(CONTROLLER_KEY, None)
        if controller is not None:  # a serial run: this process scores it, as it is
            controller.hold(report, record)
        else:
            report.optbench_record = record.to_dict()  # travels to the xdist controller
        # The controller or the report has it from now on: the item keeps no second copy for
        # the rest of the session (every garbage collection, to the one at exit, walks what is kept).
        item.optbench_record = None  # type: ignore[attr-defined]
    return report


class ControllerHooks:
    """Hooks that only the controller (or a serial run) needs: gather, decide, report."""

    def __init__(self, controller: ControllerSession) -> None:
        self.controller = controller

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.controller.add_report(report):
            self.records += 1
            if self.records % FREEZE_EVERY == 0:
                keep_from_collector()

    records = 0  # item records taken so far

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, Any, Any]:
        result = yield
        if session.config.option.collectonly:
            return result  # nothing ran: nothing to score, and nothing for strict mode to fail
        worker = session.config.stash.get(WORKER_KEY, None)
        if worker is not None:  # a serial run: facts and counts at hand (xdist: pytest_testnodedown)
            self.controller.facts.merge(worker.facts.to_dict())
            self.controller.add_request_counts(worker.request_counts())
            self.controller.add_batch_info(worker.batch_info())
        if (asker := session.config.stash.get(ASKER_KEY, None)) is not None:  # xdist: the controller asked
            self.controller.add_request_counts(asker.finish())
            self.controller.asker_notes, self.controller.asker_faults = asker.notes, asker.faults()
        if self.controller.facts.language_error:
            raise pytest.UsageError(self.controller.facts.language_error)
        if self.controller.is_idle():
            return result  # not an audit: nothing to score, gate or write
        outcome = self.controller.finish(session_pool(session.config))
        stop_pool(session.config, wait=False)  # nothing more for it to do
        if outcome.failed_gates or (outcome.missing and outcome.records) or outcome.strict_failures:
            session.testsfailed += 1  # fail the session the way pytest-cov does
        if self.controller.write_outputs(outcome) or self.controller.failed():
            session.testsfailed += 1  # a report or the store not written: nothing passes silently
        self.controller.log_gates_to_junit(session.config, outcome.verdicts)
        keep_from_collector()  # what is left is the summary and pytest's exit
        return result

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        controller = self.controller
        if controller.outcome is not None:  # None: an idle session, or one stopped before scoring
            from .report.summary import write_summary

            write_summary(terminalreporter, controller.outcome, controller.metadata(), bool(controller.gates))
        controller.write_problems(terminalreporter)


class XdistControllerHooks:
    """Registered only when pytest-xdist is present: one run id for all workers, so the
    store can tell answers paid for in this session from answers read back; and what each
    worker saw while collecting (``RunFacts``), which only workers can see."""

    def __init__(self, controller: ControllerSession, config: pytest.Config) -> None:
        self.controller = controller
        self.run_id = controller.run_id
        self.config = config

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["optbench_run_id"] = self.run_id
        node.workerinput[ASKER_INPUT] = ASKER_KEY in self.config.stash

    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """The workers now ask for their answers and run the items: the controller, idle until
        their reports come, loads what it scores with meanwhile (on a thread of its own, so
        that it keeps taking the workers' reports)."""
        # Where the controller asks, it loads them once its requests are out (session/asker.py).
        if ids and self.controller.options.model_spec and self.warming is None and ASKER_KEY not in self.config.stash:
            from .session.worker import warm_scoring

            self.warming = threading.Thread(target=warm_scoring, kwargs={"idle": True}, name="optbench-warm-scoring",
                                            daemon=True)
            self.warming.start()

    warming: threading.Thread | None = None

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        counts = getattr(node, "workeroutput", {}).get("optbench_requests")
        if counts:
            self.controller.add_request_counts(counts)
        facts = getattr(node, "workeroutput", {}).get("optbench_facts")
        if facts:  # a crashed worker sends none; its items are reported as missing
            self.controller.facts.merge(facts)
        self.controller.add_batch_info(getattr(node, "workeroutput", {}).get("optbench_batch") or {})
