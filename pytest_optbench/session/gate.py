"""``optbench gate REPORT``: score and gate a JSON report's records offline, as a session does.

The same ``ControllerSession`` a pytest run uses gets the report's records (a merged report
of CI shards, or any run's report), the run's settings (seed, bootstrap resamples,
keep-fifty, base rate, overrides) and the thresholds and baseline given now; ``finish()``
scores and gates them and ``write_outputs()`` writes the JSON, Markdown (also to
``$GITHUB_STEP_SUMMARY``) and HTML reports; a JUnit XML has the items and the gate verdicts.
The exit code is the session's: 0 all good, 1 a gate failed the session (FAIL, or INCONCLUSIVE
under a fail policy), an item failed, a report was not written, or strict mode found a problem
(an item still pending, a gate not evaluated or inconclusive, no gate at all), 4 a usage error,
5 no item results. Strict mode is the report's own (``run.strict``) unless --strict or
--no-strict says otherwise, so a strict CI run cannot turn lax on the way to the gate.
"""

from __future__ import annotations

import math
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..options import EngineSettings, RunOptions, Settings
from ..records.item import ItemRecord
from ..report.reading import ReportError, load_report, report_records
from .controller import ControllerSession, display_path

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NO_RESULTS = 0, 1, 4, 5
THRESHOLDS_FILE = "thresholds.yaml"
SET = "(set in the run)"  # stands for a value the report only says was given (a URL, a prompt)


@dataclass(frozen=True)
class GateArgs:
    report: Path
    thresholds: Path | Sequence[Path] | None = None  # one file, or several whose gates add up
    baseline: Path | None = None
    output: Path | None = None  # the scored JSON report
    markdown: Path | None = None
    html: Path | None = None
    junitxml: Path | None = None
    strict: bool | None = None  # --strict / --no-strict; None: as the report's run was (run.strict)
    verbose: int = 0
    root: Path = Path(".")
    multiplicity: str | None = None  # --multiplicity; None: the thresholds file's, else holm
    on_inconclusive: str | None = None  # --on-inconclusive; None: each gate's, the file's, else pass
    prices: Path | None = None  # --prices: the run's cost in money


class _Config:
    def __init__(self, verbose: int) -> None:
        self.verbose = verbose

    def getoption(self, name: str, default: Any = None) -> Any:
        return self.verbose if name == "verbose" else default


class TextReporter:
    """What the summary writers use of pytest's terminal reporter, printing plain lines."""

    def __init__(self, write: Callable[[str], None], verbose: int = 0) -> None:
        self.write = write
        self.config = _Config(verbose)
        self.stats: dict[str, list[Any]] = {}

    def write_sep(self, sep: str, title: str, **style: Any) -> None:
        self.write(f" {title} ".center(80, sep))

    def write_line(self, text: str, **style: Any) -> None:
        self.write(text)


def run_gate(args: GateArgs, write: Callable[[str], None]) -> int:
    """Score and gate; usage errors (unreadable report, thresholds or baseline) raise ReportError,
    ThresholdsError or ValueError with one sentence."""
    from ..report.summary import write_summary

    data = load_report(args.report)
    records = report_records(data, args.report)
    pending = pending_records(data, args.report)
    run = data["run"]
    strict = args.strict if args.strict is not None else run.get("strict") is True
    given = args.thresholds
    thresholds = [given] if isinstance(given, Path) else list(given or [])
    if not thresholds and (args.root / THRESHOLDS_FILE).is_file():
        thresholds = [args.root / THRESHOLDS_FILE]
    for path in thresholds:
        if not path.is_file():
            raise ValueError(f"--thresholds {path}: no such file.")
    controller = _controller(args, run, tuple(thresholds), strict)
    controller.load_baseline(args.root.resolve())
    if args.prices is not None:
        from ..scoring.cost import read_prices

        controller.prices = read_prices(args.prices, display_path(args.prices, args.root.resolve()))
    controller.records = {r.key: r for r in records}
    controller.pending = {r.key: r for r in pending}
    controller.missing = [str(m) for m in data.get("items_without_results") or []]
    controller.add_request_counts({k: int(v) for k, v in (run.get("requests") or {}).items()
                                   if isinstance(v, (int, float)) and not isinstance(v, bool)})
    # What the run recorded of itself, kept: who answered and why, how it was configured.
    controller.facts.sources = [str(s) for s in run.get("answered_by") or []]
    controller.extra = {k: run[k] for k in ("shard", "merge", "merged_from", "batch", "engine") if k in run}
    outcome = controller.finish()
    controller.write_outputs(outcome)
    if args.junitxml:
        write_junit(args.junitxml, outcome, controller.thresholds_display or THRESHOLDS_FILE)
    reporter = TextReporter(write, args.verbose)
    write_summary(reporter, outcome, controller.metadata(), bool(controller.gates))
    for problem in controller.faults() + controller.output_errors:
        write(f"optbench: {problem}")
    code = exit_code(outcome, strict, bool(controller.output_errors))
    write(f"optbench gate: {gate_line(outcome, strict, bool(controller.gates))}; exit code {code}")
    return code


def _controller(args: GateArgs, run: Mapping[str, Any], thresholds: tuple[Path, ...],
                strict: bool) -> ControllerSession:
    from ..scoring.gates.spec import DEFAULT_MULTIPLICITY, read_thresholds_files

    options = options_from_run(run, args, thresholds, strict)
    gates: list[Any] = []
    display: str | None = None
    multiplicity = on_inconclusive = None
    if thresholds:
        files = [(path, display_path(path, args.root.resolve())) for path in thresholds]
        read = read_thresholds_files(files)
        gates, multiplicity, on_inconclusive = read.gates, read.multiplicity, read.on_inconclusive
        display = " + ".join(shown for _, shown in files)
    return ControllerSession(options, gates, display, f"gate-{uuid.uuid4().hex}",
                             multiplicity=args.multiplicity or multiplicity or DEFAULT_MULTIPLICITY,
                             on_inconclusive=on_inconclusive)


def exit_code(outcome: Any, strict: bool, output_failed: bool = False) -> int:
    """The session's exit code for an offline gate: 5 without item results, 1 when a gate
    fails the session (FAIL, or INCONCLUSIVE under a fail policy or strict mode), an item
    failed or crashed, a report was not written, or strict mode finds a problem (pending
    items, a gate not evaluated, no gate at all); else 0."""
    if not (outcome.records or outcome.pending or outcome.missing):
        return EXIT_NO_RESULTS
    failed_items = any(r.errors for r in outcome.records)
    if outcome.failed_gates or outcome.missing or failed_items or output_failed or outcome.strict_failures \
            or (strict and outcome.pending):
        return EXIT_FAILED
    return EXIT_OK


def gate_line(outcome: Any, strict: bool, has_gates: bool) -> str:
    """The last line of ``optbench gate``: what was scored and what failed."""
    failed_items = sum(1 for r in outcome.records if r.errors)
    parts = [f"{len(outcome.records):,} item results scored"]
    if failed_items or outcome.missing:
        parts.append(f"{failed_items + len(outcome.missing):,} failed")
    if outcome.pending:
        parts.append(f"{len(outcome.pending):,} pending" + (" (failed: strict)" if strict else ""))
    if has_gates:
        inconclusive = sum(v.verdict == "inconclusive" for v in outcome.verdicts)
        parts.append(f"{len(outcome.failed_gates)} gate(s) failed the session ({inconclusive} inconclusive)")
    if outcome.strict_failures:
        parts.append(f"{len(outcome.strict_failures)} strict problem(s)")
    return ", ".join(parts)


def pending_records(data: Mapping[str, Any], path: Path) -> list[ItemRecord]:
    entries = data.get("items_pending") or []
    if not isinstance(entries, list):
        raise ReportError(f"{path}: key 'items_pending' is not a list.")
    try:
        return [ItemRecord.from_dict(e) for e in entries]
    except (KeyError, TypeError, ValueError) as exc:
        raise ReportError(f"{path}: an entry of 'items_pending' is malformed ({type(exc).__name__}: {exc}).") from None


def options_from_run(run: Mapping[str, Any], args: GateArgs, thresholds: tuple[Path, ...],
                     strict: bool | None = None) -> RunOptions:
    """The run's scoring settings, checked: a report edited by hand fails with one sentence."""

    def get(key: str, ok: Callable[[Any], bool], what: str, default: Any) -> Any:
        value = run.get(key, default)
        if not ok(value):
            raise ReportError(f"{args.report}: run.{key} is {value!r}, not {what}.")
        return value

    def whole(low: int, high: int) -> Callable[[Any], bool]:
        return lambda v: isinstance(v, int) and not isinstance(v, bool) and low <= v <= high

    def number(low: float, high: float) -> Callable[[Any], bool]:
        return lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) \
            and low <= v <= high

    seed = get("seed", whole(-(2 ** 63), 2 ** 63 - 1), "a whole number", 0)
    resamples = get("bootstrap_resamples", whole(1, 10_000_000), "a whole number from 1 to 10,000,000", 10_000)
    keep_fifty = get("keep_fifty", lambda v: isinstance(v, bool), "true or false", False)
    base_rate = get("base_rate_oos", lambda v: v is None or number(0, 1)(v), "null or a number from 0 to 1", None)
    samples = get("samples_override", lambda v: v is None or whole(1, 1_000_000)(v), "null or a whole number", None)
    temperature = get("temperature_override", lambda v: v is None or number(0, 2)(v), "null or a number from 0 to 2",
                      None)
    model = run.get("model")
    found = run.get("engine")
    engine: dict[str, Any] = found if isinstance(found, dict) else {}
    max_tokens = engine.get("max_tokens")
    return RunOptions(
        model_spec=model if isinstance(model, str) else None,
        base_url=SET if run.get("base_url_set") else None,
        seed=seed, keep_fifty=keep_fifty, n_resamples=resamples, base_rate=base_rate,
        settings=Settings(samples, temperature, SET if run.get("system_prompt_override") else None),
        thresholds_paths=thresholds, report_path=args.output, markdown_path=args.markdown, html_path=args.html,
        baseline_path=args.baseline,
        engine=EngineSettings(max_tokens=max_tokens if isinstance(max_tokens, int) else None,
                              offline=bool(engine.get("offline", False))),
        strict=bool(args.strict) if strict is None else strict, multiplicity=args.multiplicity,
        on_inconclusive=args.on_inconclusive,
    )


def write_junit(path: Path, outcome: Any, source: str) -> None:
    """Items and gate verdicts as JUnit test cases (as ``pytest --junitxml`` writes them)."""
    from ..report.json_report import write_text
    from ..report.model.tables import gate_junit
    from .collect import item_properties

    suite = ET.Element("testsuite", name="optbench")
    counts = {"tests": 0, "failures": 0, "skipped": 0, "errors": 0}

    def case(classname: str, name: str, kind: str | None = None, message: str = "",
             properties: list[tuple[str, str]] | None = None) -> None:
        element = ET.SubElement(suite, "testcase", classname=classname, name=name, time="0")
        counts["tests"] += 1
        if properties:
            props = ET.SubElement(element, "properties")
            for key, value in properties:
                ET.SubElement(props, "property", name=key, value=value)
        if kind is not None:
            ET.SubElement(element, kind, message=message).text = message
            counts["failures" if kind == "failure" else "skipped"] += 1

    def classname(file: str) -> str:
        return file.replace("/", ".").replace("\\", ".")

    def name(record: ItemRecord) -> str:
        return record.item if record.condition == "base" else f"{record.item}[{record.condition}]"

    for record in outcome.records:
        errors = record.errors
        message = f"{len(errors)} of {len(record.answers())} model calls failed; first: {record.first_error}" if errors else ""
        case(classname(record.file), name(record), "failure" if errors else None, message, item_properties(record))
    for record in outcome.pending:
        case(classname(record.file), name(record), "skipped",
             f"answers pending in batch(es) {', '.join(record.pending_batches)}")
    for nodeid in outcome.missing:
        file, _, rest = nodeid.partition("::")
        case(classname(file), rest or nodeid, "failure", "the item failed without sending answers")
    for verdict in outcome.verdicts:
        test, result, message = gate_junit(verdict)
        kind = {"passed": None, "failed": "failure"}.get(result, "skipped")
        case(source, test, kind, message if kind else "", [("optbench_gate", message)])
    for key, value in counts.items():
        suite.set(key, str(value))
    root = ET.Element("testsuites")
    root.append(suite)
    write_text(path, ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n")
