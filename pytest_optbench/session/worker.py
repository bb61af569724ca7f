"""The worker side of a run: what a process that collects and runs items needs.

A serial run has one worker session (beside its controller); under pytest-xdist each worker
process has one and the controller has none. It owns the model under test, the response
store and the elicitation engine, the suite ids collected, and the items' prompts. Heavy
modules (providers, engine, store) are imported only when a model is chosen.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pytest

from ..options import RunOptions
from ..records.facts import RunFacts
from ..records.item import NOT_ASKED

if TYPE_CHECKING:
    from ..elicit.ahead import AnswersAhead
    from ..elicit.counters import EngineStats
    from ..elicit.engine import ApiElicitor, ModelCalls
    from ..prompts.build import PromptSpec
    from ..records.item import PromptRecord
    from ..suite.load import Suite

NO_MODEL_REASON = (
    "no model selected: pass --model (e.g. --model=sim:calibrated, --model=openai:gpt-4.1-mini) "
    "or override the optbench_model fixture in conftest.py"
)
NO_CLI_MODEL_REASON = (
    "no model selected: the optbench_model fixture of this conftest wraps the --model model "
    "(it takes optbench_cli_model): pass --model"
)
PLUGIN_MODULE = "pytest_optbench.plugin"
CLI_FIXTURE = "optbench_cli_model"


@dataclass(frozen=True)
class AnswerSource:
    """Who answers an item, and why (see ``WorkerSession.answer_source``).

    The rule: ``--model`` names who answers. A conftest that overrides ``optbench_model``
    answers instead when no ``--model`` is given, or when it wraps the ``--model`` model
    (it takes the ``optbench_cli_model`` fixture, or its parent ``optbench_model``);
    otherwise ``--model`` wins and the fixture is not used (and not set up).
    """

    cli: bool  # the --model model answers directly (through the engine and its store)
    fixture: str | None = None  # "conftest.py" when an overriding fixture exists
    wraps_cli: bool = False

    def describe(self, spec: str | None, name: str) -> str:
        if self.cli:
            unused = (f"; the optbench_model fixture of {self.fixture} is not used: it does not take "
                      f"{CLI_FIXTURE}, so --model answers") if self.fixture else ""
            return f"{name} (from --model{unused})" if name == spec else f"{name} (--model {spec}{unused})"
        if self.fixture is None:
            return name
        wrapping = f", wrapping --model {spec}" if self.wraps_cli and spec else ""
        return f"{name} (the optbench_model fixture of {self.fixture}{wrapping})"


class WorkerSession:
    def __init__(self, options: RunOptions, run_id: str, shard: tuple[int, int] = (0, 1),
                 asks: bool | None = None) -> None:
        self.options = options
        self.run_id = run_id  # the same on the controller and every xdist worker
        self.shard = shard  # (index, count): this process's share of the prompts
        # None: the shard decides who asks (engine.is_asker); True on the xdist controller that
        # asks (session/asker.py), False on its workers, which hand it their prompts instead.
        self.asks = asks
        self.suite_paths: dict[str, str] = {}
        self.items: list[Any] = []  # the collected OptbenchItems, for prefetching
        self.model: Any = None  # built from --model; None means "skip items"
        self.elicitor: ApiElicitor | None = None
        self.ahead: AnswersAhead | None = None  # the simulated model's answers from a second process
        self.progress: Callable[[EngineStats], None] | None = None
        self.facts = RunFacts(processes=1)
        self._sources: dict[int, AnswerSource] = {}
        self.calls: ModelCalls | None = None  # the limits on a conftest model's calls
        self.stop_reported = False  # an item already failed because the session stopped asking
        self.status: Callable[[str], None] | None = None  # batch mode: a status line now and then
        self.close_progress: Callable[[], None] | None = None  # ends the progress display (session/progress.py)

    def build_model(self) -> None:
        """The --model, and for an API provider its response store (opened now, so a corrupt
        store is a usage error before any call)."""
        spec = self.options.model_spec
        if not spec:
            return
        from ..elicit.engine import ApiElicitor
        from ..elicit.store import ResponseStore
        from ..providers import build_model
        from ..providers.remote import ApiProvider

        self.model = build_model(spec, provider_options(self.options))
        if isinstance(self.model, ApiProvider):
            store = ResponseStore(self.options.cache_dir / "responses.sqlite", read_only=self.options.engine.offline)
            settings = replace(self.options.engine, run_id=self.run_id, concurrency=self.concurrency_share())
            if self.options.batch:
                self.elicitor = batch_elicitor(self.model, store, settings, self.options, self.shard,
                                               lambda stats: self.progress and self.progress(stats),
                                               lambda text: self.status and self.status(text))
                return
            # An xdist worker stops asking when its controller has gone (killed, crashed).
            parent = os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else None
            self.elicitor = ApiElicitor(self.model, store, settings, shard=self.shard, parent_pid=parent,
                                        on_progress=lambda stats: self.progress and self.progress(stats),
                                        asks=self.asks)
            # A first run asks for every answer: the SDK loads while items are collected (in the
            # one xdist worker that asks; another imports it only if it must ask itself).
            if store.empty() and self.elicitor.asks_for_all:
                self.elicitor.preload()

    def concurrency_share(self) -> int:
        """This process's part of --concurrency, which is for the whole run (a rate limit is
        too). Asking in real time, all of it goes to the process that asks for every prompt
        (engine.ASKER); another xdist worker asks only for what that one left missing (it died,
        or its store did not take an answer: engine._wait_for_peer), one request at a time. In
        batch mode each worker submits its own share of the prompts, and the parts add up to
        --concurrency, each at least one."""
        from ..elicit.engine import is_asker

        index, count = self.shard
        total = self.options.engine.concurrency
        if not self.options.batch:
            asks = is_asker(self.shard) if self.asks is None else self.asks
            return total if asks else 1
        return max(1, total // count + (1 if index < total % count else 0))

    def wants_language(self, language: str) -> bool:
        """``zh`` selects ``zh`` and ``zh-Hans``; tags compare case-insensitively."""
        if not self.options.languages:
            return True
        tag = language.lower()
        return any(tag == want.lower() or tag.startswith(want.lower() + "-") for want in self.options.languages)

    def language_problem(self) -> str | None:
        """A usage error when no collected suite is in a --language asked for (every item
        deselected, exit 5, and no word on why, otherwise)."""
        if not self.options.languages or any(self.wants_language(lang) for lang in self.facts.languages):
            return None
        from ..text.didyoumean import hint

        asked = ", ".join(self.options.languages)
        present = sorted(self.facts.languages)
        if not present:
            return f"--language {asked}: no suite was collected at all, so no suite is in that language."
        close = hint(self.options.languages[0], present)
        return (f"--language {asked}: no collected suite is in that language{close}; the suites collected are "
                f"in: {', '.join(present)}.")

    def note_suite(self, suite: Suite, items: int) -> None:
        """Count a collected suite's items and its language (before any deselection)."""
        self.facts.suite_items += items
        if suite.language not in self.facts.languages:
            self.facts.languages.append(suite.language)

    def register_suite(self, suite: Suite) -> None:
        """Suite ids are unique per session: the id keys every metric and gate."""
        from ..suite.load import SuiteError

        first = self.suite_paths.setdefault(suite.id, suite.path)
        if first != suite.path:
            raise SuiteError(f"{suite.path}, key 'suite': suite id '{suite.id}' is already used by {first}.")

    def answer_source(self, item: Any) -> AnswerSource:
        """Who answers ``item``: the rule of ``AnswerSource``, decided once per fixture."""
        manager = item.session._fixturemanager  # pytest has no public API for the winning definition
        definitions = list(manager.getfixturedefs("optbench_model", item) or ())
        key = id(definitions[-1]) if definitions else 0
        if key not in self._sources:
            override = definitions and _module(definitions[-1]) != PLUGIN_MODULE
            if not override:
                self._sources[key] = AnswerSource(cli=True)
            else:
                where = _fixture_file(definitions[-1], item.config.rootpath)
                wraps = _wraps_cli(manager, item, definitions, len(definitions) - 1, set())
                cli = bool(self.options.model_spec) and not wraps
                self._sources[key] = AnswerSource(cli=cli, fixture=where, wraps_cli=wraps)
        return self._sources[key]

    def note_source(self, source: AnswerSource, name: str) -> None:
        text = source.describe(self.options.model_spec, name)
        if text not in self.facts.sources:
            self.facts.sources.append(text)

    def prefetch(self, model_overridden: bool, pool: Executor | None = None) -> None:
        """Elicit this process's share of every selected prompt before the items run.

        Every process does it at the start of its test loop, whether or not it will be
        given items, so that no xdist worker waits for a share nobody fetches. Nothing is
        asked when a conftest overrides the model fixture: the items use that model. With a
        ``pool`` (session/spare.py), the built-in simulated model's answers are computed
        there ahead of the items (elicit/ahead.py).
        """
        if pool is not None and self.items and not model_overridden and self._simulated():
            from ..elicit.ahead import AnswersAhead

            self.ahead = AnswersAhead(pool, self.model, [item.specs for item in self.items])
        if self.asks is False and self.elicitor is not None and self._handed_over(model_overridden):
            return
        if self.elicitor is not None and self.items and not model_overridden:
            # A serial session scores in this process: it loads the scoring modules while it waits
            # for the answers (an xdist worker does not score).
            meanwhile = None if os.environ.get("PYTEST_XDIST_WORKER") else warm_scoring
            self.elicitor.prefetch([s for item in self.items for s in item.specs], meanwhile)

    def _handed_over(self, model_overridden: bool) -> bool:
        """The controller asks (session/asker.py): hand it the prompts, or word that there
        are none. False when they could not be handed over: the workers ask, as without it."""
        from .handover import hand_over

        if self.elicitor is None:
            return False
        specs = [s for item in self.items for s in item.specs] if not model_overridden else []
        if hand_over(self.options.cache_dir, self.run_id, specs):
            self.elicitor.note_prefetch(specs)
            return True
        self.elicitor.ask_here()
        return False

    def elicit(self, model: Any, specs: Sequence[PromptSpec]) -> list[PromptRecord]:
        """Answers for one item: from the engine for the --model provider, directly otherwise
        (a conftest model within --optbench-timeout per call and --optbench-deadline).

        Once the session has stopped asking (a bad key, the deadline, a dead server), the
        first item it leaves without answers fails with the reason and the others are skipped:
        one FAILED line, not one per item."""
        from ..elicit.engine import ModelCalls, elicit, not_asked
        from ..providers.base import as_model

        stopped: str | None = None
        if self.elicitor is not None and model is self.model:
            records = [self.elicitor.record(spec) for spec in specs]
            stopped = self.elicitor.stop_reason
        elif model is self.model:  # a simulated model: no limits needed
            ahead = self.ahead.take(specs) if self.ahead is not None else None
            records = ahead if ahead is not None else elicit(as_model(model), specs)
        else:
            if self.calls is None:
                self.calls = ModelCalls(self.options.timeout, self.options.engine.deadline,
                                        max_reply=self.options.max_reply)
            records = elicit(as_model(model), specs, self.calls)
            stopped = self.calls.stop_reason
        if stopped and any(a.error for r in records for a in r.answers):
            # The refusal that stopped the session may land on any item's prompt (requests
            # race): once one item has failed with the reason, an item that holds only the
            # refusal and what it left unasked is skipped like the rest.
            if self.stop_reported and all(a.error and (a.error.startswith(NOT_ASKED) or a.error == stopped)
                                          for r in records for a in r.answers):
                pytest.skip(not_asked(records) or NOT_ASKED + stopped)
            self.stop_reported = True
        return records

    def _simulated(self) -> bool:
        from ..providers.sim import SimulatedModel

        return type(self.model) is SimulatedModel  # a subclass may answer from state of its own

    def items_done(self) -> None:
        """The items have run: the second process, if any, is no longer needed."""
        if self.ahead is not None:
            self.ahead.close()
            self.ahead = None

    def faults(self) -> list[str]:
        """Problems that leave every answer right but must fail the session (a store that
        cannot be written)."""
        return self.elicitor.faults() if self.elicitor is not None else []

    def pending_note(self, batch_ids: Sequence[str]) -> str:
        """The sentence an item whose answers are still in open batches is reported with."""
        note = getattr(self.elicitor, "pending_note", None)
        if callable(note):
            return str(note(batch_ids))
        from ..elicit.batch import pending_sentence

        return pending_sentence(batch_ids, {})

    def batch_info(self) -> dict[str, Any]:
        """--optbench-batch: the open batches this process's prompts wait for (report metadata)."""
        info = getattr(self.elicitor, "open_info", None)
        return {"open": info()} if callable(info) else {}

    def request_counts(self) -> dict[str, int]:
        """Requests, retries, time-outs and parameter changes of this process (API models)."""
        return self.elicitor.request_counts() if self.elicitor is not None else {}

    def close(self) -> None:
        self.items_done()
        if self.elicitor is not None:
            self.elicitor.close()
            self.elicitor.store.close()


WORKER_KEY = pytest.StashKey[WorkerSession]()


# What scoring and the reports import after the items, loaded beforehand while a session waits
# for its answers (worker.prefetch).
SCORING_MODULES = ("scipy.special", "scipy.stats", "pytest_optbench.scoring.aggregate",
                   "pytest_optbench.scoring.baseline", "pytest_optbench.scoring.crosslingual",
                   "pytest_optbench.scoring.gates.enforcement", "pytest_optbench.scoring.gates.evaluate",
                   "pytest_optbench.scoring.minimum_data", "pytest_optbench.scoring.outcome",
                   "pytest_optbench.report.json_report", "pytest_optbench.report.summary")


def warm_scoring(modules: Sequence[str] = SCORING_MODULES, *, idle: bool = False) -> None:
    """Import ``modules`` now. One that fails to import is left for its first use after the
    items, which raises the same error where it belongs. ``idle``: on a thread of its own, at
    the lowest CPU priority (Linux schedules each thread), so that work which cannot wait
    (xdist workers starting, their first requests) goes first."""
    if idle and sys.platform.startswith("linux"):  # elsewhere the id of a thread is no process id
        with contextlib.suppress(AttributeError, OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    for name in modules:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def _module(definition: Any) -> str:
    return str(getattr(definition.func, "__module__", ""))


def _fixture_file(definition: Any, root: Any) -> str:
    """Where an overriding fixture is defined, relative to the rootdir when inside it."""
    import inspect
    from pathlib import Path

    try:
        path = Path(inspect.getsourcefile(definition.func) or "")
        return str(path.resolve().relative_to(root))
    except (TypeError, ValueError, OSError):
        return _module(definition) or "a plugin"


def _wraps_cli(manager: Any, item: Any, definitions: list[Any], index: int, seen: set[str]) -> bool:
    """Whether fixture ``definitions[index]`` of ``optbench_model`` uses the --model model:
    it (or a fixture it requests) takes ``optbench_cli_model``, or takes its parent
    ``optbench_model`` and that is the plugin's."""
    for name in definitions[index].argnames:
        if name == CLI_FIXTURE:
            return True
        if name == "optbench_model":
            if index > 0 and (_module(definitions[index - 1]) == PLUGIN_MODULE
                              or _wraps_cli(manager, item, definitions, index - 1, seen)):
                return True
            continue
        if name in seen:
            continue
        seen.add(name)
        others = list(manager.getfixturedefs(name, item) or ())
        if others and _wraps_cli(manager, item, others, len(others) - 1, seen):
            return True
    return False


def get_worker(config: pytest.Config) -> WorkerSession:
    return config.stash[WORKER_KEY]


def provider_options(options: RunOptions) -> Any:
    from ..providers.remote import ProviderOptions

    return ProviderOptions(options.base_url, options.timeout, options.seed, elicit_fallback=options.elicit_fallback,
                           max_reply=options.max_reply)


def batch_elicitor(model: Any, store: Any, settings: Any, options: RunOptions, shard: tuple[int, int],
                   on_progress: Callable[[Any], Any], on_status: Callable[[str], Any]) -> Any:
    """The engine of --optbench-batch; a provider without a batch API is a usage error."""
    from ..elicit.batch import BatchElicitor, BatchSettings, BatchUnsupported
    from ..providers import ProviderError

    try:
        return BatchElicitor(model, store, settings, BatchSettings(options.batch_wait, options.batch_size),
                             shard=shard, on_progress=on_progress, on_status=on_status)
    except BatchUnsupported as exc:
        store.close()
        raise ProviderError(str(exc)) from None


def check_model_spec(options: RunOptions) -> None:
    """Build the --model once and close it, and open its response store once and close it,
    so that a bad spec or a corrupt, read-only or foreign store is a usage error on the xdist
    controller too (which runs no item, so keeps no model, client or store); in the workers
    it would crash each of them with a traceback."""
    if not options.model_spec:
        return
    from ..elicit.store import ResponseStore
    from ..providers import build_model
    from ..providers.remote import ApiProvider

    model = build_model(options.model_spec, provider_options(options))
    try:
        if isinstance(model, ApiProvider):
            ResponseStore(options.cache_dir / "responses.sqlite", read_only=options.engine.offline).close()
            if options.batch:
                from ..providers import ProviderError, batch_client

                if batch_client(model) is None:
                    raise ProviderError(f"--optbench-batch: provider {model.provider!r} has no batch API (openai "
                                        "and anthropic have one); leave the option out to ask in real time.")
    finally:
        close = getattr(model, "close", None)
        if callable(close):
            close()
