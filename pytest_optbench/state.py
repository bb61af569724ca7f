"""The run's state, kept on ``config.stash`` (never in globals, so xdist workers stay apart).

``OptbenchRun`` knows the options, the gates and the suites collected; on the controller it
receives every item's record from the test reports and, at the end, turns them into
aggregates, verdicts and the exit status.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .aggregate import AggregateOptions, aggregate
from .gates import Gate, evaluate
from .outcome import Outcome
from .prompts import Settings, prompt_fingerprint
from .providers.base import Model
from .records import ItemRecord
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


class OptbenchRun:
    def __init__(self, options: RunOptions, gates: list[Gate], thresholds_display: str | None) -> None:
        self.options = options
        self.gates = gates
        self.thresholds_display = thresholds_display
        self.suite_paths: dict[str, str] = {}
        self.records: dict[tuple[str, str, str], ItemRecord] = {}
        self.missing: list[str] = []
        self.outcome: Outcome | None = None
        self.model: Model | None = None  # built from --model; None means "skip items"

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
        verdicts = evaluate(self.gates, aggregates, {s: sorted(k) for s, k in suite_kinds.items()})
        self.outcome = Outcome(aggregates, verdicts, records, sorted(set(self.missing)))
        return self.outcome


RUN_KEY = pytest.StashKey[OptbenchRun]()


def get_run(config: pytest.Config) -> OptbenchRun:
    return config.stash[RUN_KEY]


def is_controller(config: Any) -> bool:
    """True in a serial run and on the xdist controller; False on xdist workers."""
    return not hasattr(config, "workerinput")
