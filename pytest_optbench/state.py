"""The run's state, kept on ``config.stash`` (never in globals, so xdist workers stay apart).

``OptbenchRun`` knows the options, the gates and the suites collected; on the controller it
receives every item's record from the test reports and, at the end, turns them into
aggregates, verdicts and the exit status.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from .aggregate import AggregateOptions, aggregate
from .gates import Gate, evaluate
from .outcome import Outcome
from .baseline import compare
from .crosslingual import language_skews
from .report.json_report import load_report, report_records
from .engine import ApiElicitor, EngineSettings, EngineStats, elicit
from .prompts import PromptSpec, Settings, prompt_fingerprint
from .providers import build_model
from .providers.api import ApiProvider, ProviderOptions
from .providers.base import as_model
from .records import ItemRecord, PromptRecord
from .store import ResponseStore
from .suites import Suite, SuiteError

NO_MODEL_REASON = (
    "no model selected: pass --model (e.g. --model=sim:calibrated, --model=openai:gpt-4.1-mini) "
    "or override the optbench_model fixture in conftest.py"
)


@dataclass(frozen=True)
class RunOptions:
    model_spec: str | None = None
    base_url: str | None = None
    seed: int = 0
    keep_fifty: bool = False
    n_resamples: int = 10_000
    base_rate: float | None = None
    settings: Settings = Settings()
    thresholds_path: Path | None = None
    report_path: Path | None = None
    engine: EngineSettings = EngineSettings()
    languages: tuple[str, ...] = ()  # --language filters; empty: every language
    baseline_path: Path | None = None
    markdown_path: Path | None = None
    html_path: Path | None = None
    timeout: float = 60.0
    cache_dir: Path = Path(".optbench")


class OptbenchRun:
    def __init__(self, options: RunOptions, gates: list[Gate], thresholds_display: str | None,
                 run_id: str = "", worker: tuple[int, int] = (0, 1)) -> None:
        self.options = options
        self.gates = gates
        self.thresholds_display = thresholds_display
        self.run_id = run_id  # the same on the controller and every xdist worker
        self.worker = worker  # (index, count): this process's shard of the prompts
        self.suite_paths: dict[str, str] = {}
        self.items: list[Any] = []  # the collected OptbenchItems, for prefetching
        self.records: dict[tuple[str, str, str], ItemRecord] = {}
        self.missing: list[str] = []
        self.outcome: Outcome | None = None
        self.model: Any = None  # built from --model; None means "skip items"
        self.elicitor: ApiElicitor | None = None
        self.progress: Callable[[EngineStats], None] | None = None

    def wants_language(self, language: str) -> bool:
        """``zh`` selects ``zh`` and ``zh-Hans``; tags compare case-insensitively."""
        if not self.options.languages:
            return True
        tag = language.lower()
        return any(tag == want.lower() or tag.startswith(want.lower() + "-") for want in self.options.languages)

    def build_model(self) -> None:
        """The --model, and for an API provider its response store (opened now, so a corrupt
        store is a usage error before any call)."""
        spec = self.options.model_spec
        if not spec:
            return
        self.model = build_model(spec, ProviderOptions(self.options.base_url, self.options.timeout,
                                                       self.options.seed))
        if isinstance(self.model, ApiProvider):
            store = ResponseStore(self.options.cache_dir / "responses.sqlite")
            # --concurrency is for the whole run: xdist workers share it (a rate limit is too).
            per_worker = max(1, -(-self.options.engine.concurrency // self.worker[1]))
            settings = replace(self.options.engine, run_id=self.run_id, concurrency=per_worker)
            self.elicitor = ApiElicitor(self.model, store, settings, shard=self.worker,
                                        on_progress=lambda stats: self.progress and self.progress(stats))

    def prefetch(self, model_overridden: bool) -> None:
        """Elicit this process's share of every selected prompt before the items run.

        Every process does it at the start of its test loop, whether or not it will be
        given items, so that no xdist worker waits for a share nobody fetches. Nothing is
        asked when a conftest overrides the model fixture: the items use that model.
        """
        if self.elicitor is not None and self.items and not model_overridden:
            self.elicitor.prefetch([s for item in self.items for s in item.specs])

    def elicit(self, model: Any, specs: list[PromptSpec]) -> list[PromptRecord]:
        """Answers for one item: from the engine for the --model provider, directly otherwise."""
        if self.elicitor is not None and model is self.model:
            return [self.elicitor.record(spec) for spec in specs]
        return elicit(as_model(model), specs)

    def close(self) -> None:
        if self.elicitor is not None:
            self.elicitor.close()
            self.elicitor.store.close()

    @property
    def settings(self) -> Settings:
        return self.options.settings

    def register_suite(self, suite: Suite) -> None:
        """Suite ids are unique per session: the id keys every metric and gate."""
        first = self.suite_paths.setdefault(suite.id, suite.path)
        if first != suite.path:
            raise SuiteError(f"{suite.path}, key 'suite': suite id '{suite.id}' is already used by {first}.")

    def add_report(self, report: pytest.TestReport) -> None:
        data = getattr(report, "optbench_record", None)
        if data is not None:
            record = ItemRecord.from_dict(data)
            self.records[record.key] = record
        elif report.failed and report.nodeid.split("::")[0].endswith((".yaml", ".yml")):
            # A crashed worker or a failing fixture: the item sent no answers.
            self.missing.append(report.nodeid)

    def settings_snapshot(self) -> dict[str, Any]:
        """The settings that change answers, as the report records and a baseline compares them."""
        models = sorted({r.model for r in self.records.values()})
        settings = self.settings
        return {
            "model": self.options.model_spec or (models[0] if len(models) == 1 else models),
            "base_url_set": self.options.base_url is not None,
            "keep_fifty": self.options.keep_fifty,
            "samples_override": settings.samples,
            "temperature_override": settings.temperature,
            "system_prompt_override": settings.system_prompt is not None,
            "prompt_hash": self.prompt_hash(),
        }

    def load_baseline(self, root: Path) -> None:
        """Read --optbench-baseline now, so a bad file is a usage error before any call."""
        path = self.options.baseline_path
        if path is None:
            return
        data = load_report(path)
        self.baseline = (data, report_records(data, path))
        try:
            self.baseline_display = str(path.resolve().relative_to(root))
        except ValueError:
            self.baseline_display = str(path)

    baseline: tuple[dict[str, Any], list[ItemRecord]] | None = None
    baseline_display: str | None = None

    def prompt_hash(self) -> str:
        """One hash over the system prompts and templates of every item that reported."""
        return prompt_fingerprint([r.prompt_hash for r in self.records.values()])

    def finish(self) -> Outcome:
        records = [self.records[k] for k in sorted(self.records)]
        tolerances: dict[str, tuple[float, ...]] = {}
        for gate in self.gates:
            if gate.tolerance is not None:
                tolerances[gate.metric] = (*tolerances.get(gate.metric, ()), gate.tolerance)
        options = AggregateOptions(self.options.keep_fifty, self.options.seed, self.options.n_resamples,
                                   self.options.base_rate, tolerances)
        aggregates = aggregate(records, options)
        suite_kinds: dict[str, set[str]] = {}
        for record in records:
            suite_kinds.setdefault(record.suite, set()).add(record.kind)
        comparison = None
        if self.baseline is not None:
            data, baseline_records = self.baseline
            comparison = compare(records, baseline_records, options, self.settings_snapshot(), data["run"])
        verdicts = evaluate(self.gates, aggregates, {s: sorted(k) for s, k in suite_kinds.items()}, comparison)
        self.outcome = Outcome(aggregates, verdicts, records, sorted(set(self.missing)),
                               language_skews(records, options), comparison)
        return self.outcome


RUN_KEY = pytest.StashKey[OptbenchRun]()


def get_run(config: pytest.Config) -> OptbenchRun:
    return config.stash[RUN_KEY]


def is_controller(config: Any) -> bool:
    """True in a serial run and on the xdist controller; False on xdist workers."""
    return not hasattr(config, "workerinput")
