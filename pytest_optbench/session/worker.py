"""The worker side of a run: what a process that collects and runs items needs.

A serial run has one worker session (beside its controller); under pytest-xdist each worker
process has one and the controller has none. It owns the model under test, the response
store and the elicitation engine, the suite ids collected, and the items' prompts. Heavy
modules (providers, engine, store) are imported only when a model is chosen.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest

from ..options import RunOptions

if TYPE_CHECKING:
    from ..elicit.engine import ApiElicitor, EngineStats, ModelCalls
    from ..prompts import PromptSpec
    from ..records import PromptRecord
    from ..suites import Suite

NO_MODEL_REASON = (
    "no model selected: pass --model (e.g. --model=sim:calibrated, --model=openai:gpt-4.1-mini) "
    "or override the optbench_model fixture in conftest.py"
)


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
        self.calls: ModelCalls | None = None  # the limits on a conftest model's calls
        self.stop_reported = False  # an item already failed because the session stopped asking

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
            store = ResponseStore(self.options.cache_dir / "responses.sqlite", read_only=self.options.engine.offline)
            # --concurrency is for the whole run: xdist workers share it (a rate limit is too).
            per_worker = max(1, -(-self.options.engine.concurrency // self.shard[1]))
            settings = replace(self.options.engine, run_id=self.run_id, concurrency=per_worker)
            # An xdist worker stops asking when its controller has gone (killed, crashed).
            parent = os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else None
            self.elicitor = ApiElicitor(self.model, store, settings, shard=self.shard, parent_pid=parent,
                                        on_progress=lambda stats: self.progress and self.progress(stats))

    def wants_language(self, language: str) -> bool:
        """``zh`` selects ``zh`` and ``zh-Hans``; tags compare case-insensitively."""
        if not self.options.languages:
            return True
        tag = language.lower()
        return any(tag == want.lower() or tag.startswith(want.lower() + "-") for want in self.options.languages)

    def register_suite(self, suite: Suite) -> None:
        """Suite ids are unique per session: the id keys every metric and gate."""
        from ..suites import SuiteError

        first = self.suite_paths.setdefault(suite.id, suite.path)
        if first != suite.path:
            raise SuiteError(f"{suite.path}, key 'suite': suite id '{suite.id}' is already used by {first}.")

    def prefetch(self, model_overridden: bool) -> None:
        """Elicit this process's share of every selected prompt before the items run.

        Every process does it at the start of its test loop, whether or not it will be
        given items, so that no xdist worker waits for a share nobody fetches. Nothing is
        asked when a conftest overrides the model fixture: the items use that model.
        """
        if self.elicitor is not None and self.items and not model_overridden:
            self.elicitor.prefetch([s for item in self.items for s in item.specs])

    def elicit(self, model: Any, specs: Sequence[PromptSpec]) -> list[PromptRecord]:
        """Answers for one item: from the engine for the --model provider, directly otherwise
        (a conftest model within --optbench-timeout per call and --optbench-deadline).

        Once the session has stopped asking (a bad key, the deadline, a dead server), the
        first item it leaves without answers fails with the reason and the others are skipped:
        one FAILED line, not one per item."""
        from ..elicit.engine import NOT_ASKED, ModelCalls, elicit, not_asked
        from ..providers.base import as_model

        stopped: str | None = None
        if self.elicitor is not None and model is self.model:
            records = [self.elicitor.record(spec) for spec in specs]
            stopped = self.elicitor.stop_reason
        elif model is self.model:  # a simulated model: no limits needed
            records = elicit(as_model(model), specs)
        else:
            if self.calls is None:
                self.calls = ModelCalls(self.options.timeout, self.options.engine.deadline)
            records = elicit(as_model(model), specs, self.calls)
            stopped = self.calls.stop_reason
        if stopped and any(a.error for r in records for a in r.answers):
            reason = not_asked(records)
            if self.stop_reported and reason and all((a.error or "").startswith(NOT_ASKED)
                                                     for r in records for a in r.answers):
                pytest.skip(reason)
            self.stop_reported = True
        return records

    def faults(self) -> list[str]:
        """Problems that leave every answer right but must fail the session (a store that
        cannot be written)."""
        return self.elicitor.faults() if self.elicitor is not None else []

    def close(self) -> None:
        if self.elicitor is not None:
            self.elicitor.close()
            self.elicitor.store.close()


WORKER_KEY = pytest.StashKey[WorkerSession]()


def get_worker(config: pytest.Config) -> WorkerSession:
    return config.stash[WORKER_KEY]


def provider_options(options: RunOptions) -> Any:
    from ..providers.api import ProviderOptions

    return ProviderOptions(options.base_url, options.timeout, options.seed)


def check_model_spec(options: RunOptions) -> None:
    """Build the --model once and close it, and open its response store once and close it,
    so that a bad spec or a corrupt, read-only or foreign store is a usage error on the xdist
    controller too (which runs no item, so keeps no model, client or store); in the workers
    it would crash each of them with a traceback."""
    if not options.model_spec:
        return
    from ..providers import build_model
    from ..providers.api import ApiProvider

    model = build_model(options.model_spec, provider_options(options))
    close = getattr(model, "close", None)
    if callable(close):
        close()
    if isinstance(model, ApiProvider):
        from ..elicit.store import ResponseStore

        ResponseStore(options.cache_dir / "responses.sqlite", read_only=options.engine.offline).close()
