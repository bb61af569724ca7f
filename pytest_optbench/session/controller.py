"""The controller side of a run: gather every item's record, score, gate, write the outputs.

A serial run has one controller session beside its worker session; under pytest-xdist only
the controller process has one. It never builds a model, a client or a store: records come
to it on the test reports. Scoring and report modules are imported when the run ends.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .. import __version__
from ..options import RunOptions
from ..records.facts import RunFacts
from ..text.display import one_line, printable

if TYPE_CHECKING:
    from ..records.item import ItemRecord
    from ..scoring.aggregate import AggregateOptions, SuitesAhead
    from ..scoring.cost import Prices
    from ..scoring.gates.enforcement import Policy, RunWarning
    from ..scoring.gates.evaluate import Verdict
    from ..scoring.gates.spec import Gate
    from ..scoring.outcome import Outcome


class ControllerSession:
    def __init__(self, options: RunOptions, gates: list[Gate], thresholds_display: str | None,
                 run_id: str, multiplicity: str = "holm", on_inconclusive: str | None = None,
                 deferred_gates: list[Gate] | None = None) -> None:
        self.options = options
        self.gates = gates
        self.multiplicity = multiplicity  # error control over the CI gates (scoring/gates/)
        self.file_on_inconclusive = on_inconclusive  # the thresholds file's top-level on_inconclusive
        # A CI shard judges no gate (the merged run does): the thresholds file's gates, kept for
        # what a shard can check without the other shards' answers (session/shard.py).
        self.deferred_gates = deferred_gates
        self.thresholds_display = thresholds_display
        self.run_id = run_id
        self.records: dict[tuple[str, str, str], ItemRecord] = {}
        self._held: dict[pytest.TestReport, ItemRecord] = {}  # a report -> its item's record (serial runs, see hold)
        self.missing: list[str] = []  # items that failed without sending answers
        self.outcome: Outcome | None = None
        self._metadata: tuple[Outcome, dict[str, Any]] | None = None  # metadata() of self.outcome
        self.baseline: tuple[dict[str, Any], list[ItemRecord]] | None = None
        self.baseline_display: str | None = None
        self.requests: dict[str, int] = {}  # summed over the processes that elicited
        # Where the xdist controller asked (session/asker.py): its provider's notes and its store's faults.
        self.asker_notes: list[str] = []
        self.asker_faults: list[str] = []
        self.facts = RunFacts()  # merged from the worker(s) when the items have run
        self.no_model_skips = 0  # suite items skipped because no model was chosen
        self.unusable: list[str] = []  # items marked xfail: some prompt got no usable answer
        self.output_errors: list[str] = []  # one sentence per report not written (or baseline not compared)
        self.pending: dict[tuple[str, str, str], ItemRecord] = {}  # answers still in open provider batches
        self.extra: dict[str, Any] = {}  # more sections of the report's run metadata (shard, merge)
        self.prices: Prices | None = None  # --optbench-prices: the run's cost in money
        self.suites_ahead: SuitesAhead | None = None  # suites scored by a pool while items run

    def score_ahead(self, pool: Executor, items_per_suite: Mapping[str, int]) -> None:
        """A serial run with a pool (session/spare.py): each suite goes to the pool to be
        scored as soon as all its items have reported."""
        from ..scoring.aggregate import SuitesAhead

        self.suites_ahead = SuitesAhead(pool, items_per_suite, self.aggregate_options())

    def aggregate_options(self) -> AggregateOptions:
        from ..scoring.aggregate import AggregateOptions

        tolerances: dict[str, tuple[float, ...]] = {}
        for gate in self.gates:
            if gate.tolerance is not None:
                tolerances[gate.metric] = (*tolerances.get(gate.metric, ()), gate.tolerance)
        return AggregateOptions(self.options.keep_fifty, self.options.seed, self.options.n_resamples,
                                self.options.base_rate, tolerances)

    def add_request_counts(self, counts: dict[str, int]) -> None:
        for name, count in counts.items():
            self.requests[name] = self.requests.get(name, 0) + int(count)

    def add_batch_info(self, info: dict[str, Any]) -> None:
        """--optbench-batch: the open batches a process's prompts wait for (ids, expiry)."""
        if info.get("open"):
            self.extra.setdefault("batch", {}).setdefault("open", {}).update(info["open"])

    def load_baseline(self, root: Path) -> None:
        """Read --optbench-baseline now, so a bad file is a usage error before any call."""
        path = self.options.baseline_path
        if path is None:
            return
        from ..report.reading import load_report, report_records

        data = load_report(path)
        self.baseline = (data, report_records(data, path))
        self.baseline_display = display_path(path, root)

    def hold(self, report: pytest.TestReport, record: ItemRecord) -> None:
        """A serial run: ``report``'s item record, for ``add_report`` (an xdist worker's comes as
        a dict on its report). The report does not carry it: pytest keeps every report to the
        end, and a second copy of each record cost time and memory."""
        self._held[report] = record

    def add_report(self, report: pytest.TestReport) -> bool:
        """Take what ``report`` says; True when it brought an item record."""
        record = self._held.pop(report, None)
        if record is None and (data := getattr(report, "optbench_record", None)) is not None:
            from ..records.item import ItemRecord  # an xdist worker's, sent as a dict

            record = ItemRecord.from_dict(data)
        suite_item = report.nodeid.split("::")[0].endswith((".yaml", ".yml"))
        if record is not None:
            if record.pending_batches:  # not scored until its batch has delivered every answer
                self.pending[record.key] = record
            else:
                self.records[record.key] = record
                if self.suites_ahead is not None:
                    self.suites_ahead.add(record, self.records)
            if report.skipped and getattr(report, "wasxfail", None) is not None:
                self.unusable.append(record.label)
        elif report.skipped and suite_item and "no model selected" in str(report.longrepr):
            self.no_model_skips += 1
        elif report.failed and suite_item:
            # A crashed worker or a failing fixture: the item sent no answers.
            self.missing.append(report.nodeid)
        return record is not None

    def suite_prompt_hashes(self) -> dict[str, str]:
        """Each suite that reported -> the hash of all its prompts (selected or not)."""
        from ..prompts.build import suite_prompt_hashes

        return suite_prompt_hashes(list(self.records.values()))

    def prompt_hash(self) -> str:
        """One hash over the prompts of the suites that reported (older records: the items')."""
        from ..prompts.build import run_prompt_hash

        return run_prompt_hash(list(self.records.values()))

    def settings_snapshot(self) -> dict[str, Any]:
        """The settings that change answers, as the report records and a baseline compares them."""
        models = sorted({r.model for r in self.records.values()})
        versions = sorted({r.model_version for r in self.records.values() if r.model_version})
        served = sorted({a.served_model for r in self.records.values() for a in r.answers() if a.served_model})
        fingerprints = sorted({a.system_fingerprint for r in self.records.values() for a in r.answers()
                               if a.system_fingerprint})
        settings = self.options.settings
        return {
            # Who answered (a conftest fixture may answer instead of --model, see AnswerSource).
            "model": (models[0] if len(models) == 1 else models) if models else self.options.model_spec,
            # What it declared it is (a version or fingerprint), and who the API said served it.
            "model_version": (versions[0] if len(versions) == 1 else versions) if versions else None,
            "served_models": served,
            "system_fingerprints": fingerprints,
            "base_url_set": self.options.base_url is not None,
            "keep_fifty": self.options.keep_fifty,
            "samples_override": settings.samples,
            "temperature_override": settings.temperature,
            "system_prompt_override": settings.system_prompt is not None,
            # How answers were asked for (each mode is a different elicitation); several
            # joined by "+" when suites or items chose different modes.
            "elicit": "+".join(sorted({r.elicit for r in self.records.values()})) or (settings.elicit or "text"),
            "prompt_hash": self.prompt_hash(),
            "suite_prompt_hashes": self.suite_prompt_hashes(),
        }

    def metadata(self) -> dict[str, Any]:
        """The report's ``run`` section: built once for a finished run, which the reports and
        the summary show (it counts every answer)."""
        if self.outcome is not None and self._metadata is not None and self._metadata[0] is self.outcome:
            return self._metadata[1]
        options = self.options
        metadata = {
            "plugin_version": __version__,
            **self.settings_snapshot(),
            "seed": options.seed,
            "bootstrap_resamples": options.n_resamples,
            "base_rate_oos": options.base_rate,
            "thresholds": self.thresholds_display,
            "multiplicity": self.multiplicity,
            "on_inconclusive": self.policy().for_gate(None),  # for a judged gate without its own
            "baseline": self.baseline_display,
            "answered_by": list(self.facts.sources),
            "strict": options.strict,
            "usage": self.outcome.usage_report() if self.outcome else {},
            "requests": dict(self.requests),
            "provider_notes": self.outcome.notes() if self.outcome else [],
            "engine": {"concurrency": options.engine.concurrency, "max_retries": options.engine.max_retries,
                       "max_tokens": options.engine.max_tokens, "offline": options.engine.offline},
            **self.extra,
        }
        if self.outcome is not None:
            self._metadata = (self.outcome, metadata)
        return metadata

    def is_idle(self) -> bool:
        """A session of a repository's other tests: no suite, no --model, no item result and no
        report asked for. It scores nothing, so it need not load the scoring stack (numpy, SciPy)."""
        options, facts = self.options, self.facts
        return not (self.records or self.pending or self.missing or self.no_model_skips or facts.suite_items
                    or facts.near_misses or facts.unused_fields or options.model_spec or options.report_path
                    or options.markdown_path or options.html_path)

    def policy(self) -> Policy:
        """Whether INCONCLUSIVE gates fail this session (scoring/gates/enforcement.py)."""
        from ..scoring.gates.enforcement import Policy

        return Policy(self.options.strict, self.options.on_inconclusive, self.file_on_inconclusive)

    def gate_count(self) -> int:
        """Gates in the thresholds file (a shard's deferred ones included)."""
        return len(self.gates) + len(self.deferred_gates or [])

    def finish(self, pool: Executor | None = None) -> Outcome:
        """Score the records, gate and warn. ``pool``: processes that score whole suites
        beside this one (session/spare.py)."""
        from ..scoring.aggregate import aggregate
        from ..scoring.baseline import compare
        from ..scoring.crosslingual import language_skews
        from ..scoring.gates.enforcement import apply_policy, run_warnings
        from ..scoring.gates.evaluate import evaluate
        from ..scoring.minimum_data import possible_n
        from ..scoring.outcome import Outcome

        records = [self.records[k] for k in sorted(self.records)]
        options = self.aggregate_options()
        aggregates = aggregate(records, options, pool, self.suites_ahead)
        self.suites_ahead = None
        suite_kinds: dict[str, set[str]] = {}
        for record in records:
            suite_kinds.setdefault(record.suite, set()).add(record.kind)
        comparison = None
        if self.baseline is not None:
            data, baseline_records = self.baseline
            try:
                comparison = compare(records, baseline_records, options, self.settings_snapshot(), data["run"])
            except Exception as exc:  # noqa: BLE001 - the answers are paid for: report them anyway
                self.output_errors.append(f"--optbench-baseline {self.baseline_display}: could not be compared "
                                          f"({type(exc).__name__}: {one_line(exc, 200)}).")
        policy = self.policy()
        verdicts = apply_policy(evaluate(self.gates, aggregates, {s: sorted(k) for s, k in suite_kinds.items()},
                                         comparison, possible_n(records), self.multiplicity), policy)
        warnings = run_warnings(verdicts, records, self.facts, no_model_skips=self.no_model_skips,
                                unusable=self.unusable, model_given=bool(self.options.model_spec),
                                strict=self.options.strict, thresholds=self.thresholds_display,
                                gates=self.gate_count())
        warnings += self.shard_warnings()
        self.outcome = Outcome(aggregates, verdicts, records, sorted(set(self.missing)),
                               language_skews(aggregates, records, options), comparison, warnings,
                               self.options.strict, pending=[self.pending[k] for k in sorted(self.pending)],
                               policy=policy, prices=self.prices, asker_notes=self.asker_notes)
        return self.outcome

    def shard_warnings(self) -> list[RunWarning]:
        """A CI shard's gates, checked against the whole selection (every shard's suites and
        conditions): a gate that no suite of the run can ever match is known now."""
        shard = self.extra.get("shard")
        if not self.deferred_gates or not isinstance(shard, dict) or not isinstance(shard.get("suites"), dict):
            return []
        from ..scoring.gates.selection import unmatchable_warnings

        return unmatchable_warnings(self.deferred_gates, shard["suites"], self.thresholds_display)

    def write_outputs(self, outcome: Outcome) -> list[str]:
        """The report files asked for; the Markdown also goes to GitHub's job summary.

        Each is built and written on its own: one that fails (a directory in the way, a full
        disk, a read-only directory, a bug in one renderer) is named in ``output_errors`` and
        the others are still written. Returns ``output_errors``.
        """
        from ..report.json_report import build_report, write_report, write_text

        options = self.options
        step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
        metadata = self.metadata()
        if options.report_path:  # an empty run still leaves its report for CI artifacts
            path = options.report_path
            self._attempt("--optbench-report", path, lambda: write_report(path, build_report(outcome, metadata)))
        if not (outcome.records or outcome.missing or outcome.warnings or outcome.pending):
            return self.output_errors
        if options.markdown_path or step_summary:
            from ..report.markdown import build_markdown

            markdown: list[str] = []
            self._attempt("--optbench-markdown" if options.markdown_path else "$GITHUB_STEP_SUMMARY",
                          options.markdown_path or step_summary, lambda: markdown.append(build_markdown(outcome, metadata)))
            if markdown and options.markdown_path:
                path = options.markdown_path
                self._attempt("--optbench-markdown", path, lambda: write_text(path, markdown[0]))
            if markdown and step_summary:
                self._attempt("$GITHUB_STEP_SUMMARY", step_summary, lambda: _append(Path(step_summary), markdown[0]))
        if options.html_path:
            path = options.html_path
            self._attempt("--optbench-html", path, lambda: _write_html(path, outcome, metadata))
        return self.output_errors

    def _attempt(self, option: str, path: Any, write: Callable[[], None]) -> None:
        try:
            write()
        except Exception as exc:  # noqa: BLE001 - one report's failure must not cost the others
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else f"{type(exc).__name__}: {exc}"
            self.output_errors.append(f"{option} {path}: not written ({one_line(reason, 300).rstrip('.')}).")

    def faults(self) -> list[str]:
        """Problems the workers met that leave every answer right (a store that could not be
        written), once each."""
        return sorted({fault for record in self.records.values() for fault in record.faults} | set(self.asker_faults))

    def failed(self) -> bool:
        """A report not written or a store not written fails the session."""
        return bool(self.output_errors or self.faults())

    def write_problems(self, tr: Any) -> None:
        """After the summary, in red: what was not written, and where the answers are."""
        problems = self.faults() + self.output_errors
        for problem in problems:
            tr.write_line(f"optbench: {printable(problem)}", red=True)
        if problems:  # so that pytest's last line counts them too
            tr.stats.setdefault("optbench problem(s)", []).extend(_Problem(p) for p in problems)

    def log_gates_to_junit(self, config: pytest.Config, verdicts: list[Verdict]) -> None:
        """With --junitxml, each gate verdict becomes a test case next to the items, so CI
        systems show gates with tests. Only the JUnit writer sees these reports."""
        from _pytest.junitxml import xml_key  # pytest's own writer, kept on the stash

        xml = config.stash.get(xml_key, None)
        if xml is None:
            return
        # The message rounds every number the way the terminal shows it.
        from ..report.model.tables import gate_junit

        for verdict in verdicts:
            source = verdict.gate.source or self.thresholds_display or "thresholds.yaml"
            name, outcome, message = gate_junit(verdict)
            nodeid = f"{source}::{name}"
            longrepr: Any = None
            if outcome == "failed":
                longrepr = message
            elif outcome == "skipped":
                longrepr = (source, verdict.gate.line, message)
            for when in ("call", "teardown"):
                xml.pytest_runtest_logreport(pytest.TestReport(
                    nodeid, (source, verdict.gate.line, nodeid), {}, outcome if when == "call" else "passed",
                    longrepr if when == "call" else None, when, user_properties=[("optbench_gate", message)],
                ))


CONTROLLER_KEY = pytest.StashKey[ControllerSession]()


def display_path(path: Path, root: Path) -> str:
    """``path`` relative to the rootdir when it is inside it, as users typed it otherwise."""
    try:
        return str(path.resolve().relative_to(root))
    except ValueError:
        return str(path)


def is_controller(config: Any) -> bool:
    """True in a serial run and on the xdist controller; False on xdist workers."""
    return not hasattr(config, "workerinput")


class _Problem:
    """An entry in the terminal reporter's stats, so that the final line counts it."""

    count_towards_summary = True

    def __init__(self, message: str) -> None:
        self.message = message


def _append(path: Path, text: str) -> None:
    """Append to GitHub's job summary (text it cannot encode was repaired upstream)."""
    with open(path, "a", encoding="utf-8", errors="replace") as handle:
        handle.write(text)


def _write_html(path: Path, outcome: Outcome, metadata: dict[str, Any]) -> None:
    import warnings

    # matplotlib is imported only when an HTML report is asked for
    from ..report.html import build_html, write_html

    with warnings.catch_warnings():
        # Plots of a run whose every answer failed are empty: matplotlib's legend warning
        # and numpy's about NaN means are not the user's concern (the page says what is missing).
        warnings.filterwarnings("ignore", message="No artists with labels found", category=UserWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        text = build_html(outcome, metadata)
    write_html(path, text)
