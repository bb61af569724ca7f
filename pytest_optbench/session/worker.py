"""The worker side of a run: what a process that collects and runs items needs.

A serial run has one worker session (beside its controller); under pytest-xdist each worker
process has one and the controller has none. It owns the model under test, the response
store and the elicitation engine, the suite ids collected, and the items' prompts. Heavy
modules (providers, engine, store) are imported only when a model is chosen.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pytest

from ..facts import RunFacts
from ..options import RunOptions

if TYPE_CHECKING:
    from ..elicit.engine import ApiElicitor, EngineStats
    from ..prompts import PromptSpec
    from ..records import PromptRecord
    from ..suites import Suite

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
    def __init__(self, options: RunOptions, run_id: str, shard: tuple[int, int] = (0, 1)) -> None:
        self.options = options
        self.run_id = run_id  # the same on the controller and every xdist worker
        self.shard = shard  # (index, count): this process's share of the prompts
        self.suite_paths: dict[str, str] = {}
        self.items: list[Any] = []  # the collected OptbenchItems, for prefetching
        self.model: Any = None  # built from --model; None means "skip items"
        self.elicitor: ApiElicitor | None = None
        self.progress: Callable[[EngineStats], None] | None = None
        self.facts = RunFacts(processes=1)
        self._sources: dict[int, AnswerSource] = {}

    def build_model(self) -> None:
        """The --model, and for an API provider its response store (opened now, so a corrupt
        store is a usage error before any call)."""
        spec = self.options.model_spec
        if not spec:
            return
        from ..elicit.engine import ApiElicitor
        from ..elicit.store import ResponseStore
        from ..providers import build_model
        from ..providers.api import ApiProvider

        self.model = build_model(spec, provider_options(self.options))
        if isinstance(self.model, ApiProvider):
            store = ResponseStore(self.options.cache_dir / "responses.sqlite")
            settings = replace(self.options.engine, run_id=self.run_id, concurrency=self.concurrency_share())
            self.elicitor = ApiElicitor(self.model, store, settings, shard=self.shard,
                                        on_progress=lambda stats: self.progress and self.progress(stats))

    def concurrency_share(self) -> int:
        """This worker's part of --concurrency, which is for the whole run (a rate limit is
        too): the parts add up to it, and each worker keeps at least one request in flight."""
        index, count = self.shard
        total = self.options.engine.concurrency
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
        from ..didyoumean import hint

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
        from ..suites import SuiteError

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

    def prefetch(self, model_overridden: bool) -> None:
        """Elicit this process's share of every selected prompt before the items run.

        Every process does it at the start of its test loop, whether or not it will be
        given items, so that no xdist worker waits for a share nobody fetches. Nothing is
        asked when a conftest overrides the model fixture: the items use that model.
        """
        if self.elicitor is not None and self.items and not model_overridden:
            self.elicitor.prefetch([s for item in self.items for s in item.specs])

    def elicit(self, model: Any, specs: Sequence[PromptSpec]) -> list[PromptRecord]:
        """Answers for one item: from the engine for the --model provider, directly otherwise."""
        from ..elicit.engine import elicit
        from ..providers.base import as_model

        if self.elicitor is not None and model is self.model:
            return [self.elicitor.record(spec) for spec in specs]
        return elicit(as_model(model), specs)

    def request_counts(self) -> dict[str, int]:
        """Requests, retries, time-outs and parameter changes of this process (API models)."""
        return self.elicitor.request_counts() if self.elicitor is not None else {}

    def close(self) -> None:
        if self.elicitor is not None:
            self.elicitor.close()
            self.elicitor.store.close()


WORKER_KEY = pytest.StashKey[WorkerSession]()


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
    from ..providers.api import ProviderOptions

    return ProviderOptions(options.base_url, options.timeout, options.seed, elicit_fallback=options.elicit_fallback)


def check_model_spec(options: RunOptions) -> None:
    """Build the --model and open its store once, then close both, so a bad spec or a
    corrupt store is a usage error on the xdist controller too (which runs no item, so
    keeps no model, client or store)."""
    if not options.model_spec:
        return
    from ..elicit.store import ResponseStore
    from ..providers import build_model
    from ..providers.api import ApiProvider

    model = build_model(options.model_spec, provider_options(options))
    try:
        if isinstance(model, ApiProvider):
            ResponseStore(options.cache_dir / "responses.sqlite").close()
    finally:
        close = getattr(model, "close", None)
        if callable(close):
            close()
