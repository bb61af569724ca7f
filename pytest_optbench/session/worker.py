"""The worker side of a run: what a process that collects and runs items needs.

A serial run has one worker session (beside its controller); under pytest-xdist each worker
process has one and the controller has none. It owns the model under test, the response
store and the elicitation engine, the suite ids collected, and the items' prompts. Heavy
modules (providers, engine, store) are imported only when a model is chosen.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest

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
        self.status: Callable[[str], None] | None = None  # batch mode: a status line now and then

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
            # --concurrency is for the whole run: xdist workers share it (a rate limit is too).
            per_worker = max(1, -(-self.options.engine.concurrency // self.shard[1]))
            settings = replace(self.options.engine, run_id=self.run_id, concurrency=per_worker)
            if self.options.batch:
                self.elicitor = batch_elicitor(self.model, store, settings, self.options, self.shard,
                                               lambda stats: self.progress and self.progress(stats),
                                               lambda text: self.status and self.status(text))
                return
            self.elicitor = ApiElicitor(self.model, store, settings, shard=self.shard,
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
        """Answers for one item: from the engine for the --model provider, directly otherwise."""
        from ..elicit.engine import elicit
        from ..providers.base import as_model

        if self.elicitor is not None and model is self.model:
            return [self.elicitor.record(spec) for spec in specs]
        return elicit(as_model(model), specs)

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
        if self.elicitor is not None:
            self.elicitor.close()
            self.elicitor.store.close()


WORKER_KEY = pytest.StashKey[WorkerSession]()


def get_worker(config: pytest.Config) -> WorkerSession:
    return config.stash[WORKER_KEY]


def provider_options(options: RunOptions) -> Any:
    from ..providers.api import ProviderOptions

    return ProviderOptions(options.base_url, options.timeout, options.seed)


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
            if options.batch:
                from ..providers import ProviderError
                from ..providers.batch_api import batch_client

                if batch_client(model) is None:
                    raise ProviderError(f"--optbench-batch: provider {model.provider!r} has no batch API (openai "
                                        "and anthropic have one); leave the option out to ask in real time.")
    finally:
        close = getattr(model, "close", None)
        if callable(close):
            close()
