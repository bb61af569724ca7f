"""One run's report model: the headline, every table, the worst items and the figures' data,
built once from an ``Outcome`` and the report's run metadata."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ...scoring.crosslingual import language_metrics
from ...scoring.gates.enforcement import RunWarning
from ...scoring.gates.spec import FAIL, PASS
from ...scoring.outcome import Outcome
from ...text.display import printable
from .figures import (
    Estimate,
    LadderGroup,
    Reliability,
    ValencePoint,
    change_estimates,
    domain_estimates,
    effect_estimates,
    ladder_groups,
    reliability_data,
    valence_points,
)
from .items import WorstItems, worst_items
from .scale import scale_lines
from .table import FAIL as FAIL_TONE
from .table import PASS as PASS_TONE
from .table import WARN, Line, Table
from .tables import (
    baseline_notes,
    binary_table,
    change_table,
    coherence_table,
    domain_table,
    effects_table,
    failure_sentences,
    gate_family_text,
    gate_table,
    key_metrics_table,
    language_table,
    not_evaluated_sentences,
    power_sentences,
    quality_table,
    readings_table,
    skew_table,
)

WORST_SHOWN = 10  # items per "worst" list the model ranks (renderers may show fewer)


@dataclass(frozen=True)
class GateCounts:
    failed: int
    passed: int
    inconclusive: int
    failing: int = 0  # rows that fail the session (FAIL, and INCONCLUSIVE under a fail policy)
    policy: str = ""  # whether INCONCLUSIVE gates fail the session, in one sentence

    @property
    def total(self) -> int:
        return self.failed + self.passed + self.inconclusive

    @property
    def not_evaluated(self) -> int:  # the name before the three verdicts
        return self.inconclusive

    @property
    def text(self) -> str:
        counts = f"optbench gates: {self.failed} failed, {self.inconclusive} inconclusive, {self.passed} passed"
        return counts + (f"; {self.policy}" if self.policy and self.inconclusive else "")

    @property
    def tone(self) -> str:
        return FAIL_TONE if self.failing else WARN if self.inconclusive else PASS_TONE


@dataclass(frozen=True)
class Headline:
    model: str  # the model(s) that answered, else the --model given
    run_line: str  # "model M | seed S | prompt P | N item x condition results"
    results: int
    prompt_hash: str
    gates: GateCounts
    lines: tuple[Line, ...]  # usage, failed calls, provider notes
    missing: tuple[str, ...]  # items that failed without sending answers
    elicit: str = "text"  # how answers were asked for (text, json, logprobs; "+"-joined if mixed)

    @property
    def failed(self) -> bool:
        """Did the run fail (a gate, or an item that sent nothing)?"""
        return bool(self.gates.failing or self.missing)


def request_line(counts: Mapping[str, int]) -> str | None:
    """Requests sent in this run and what it took: retries, rate limits, time-outs, changes."""
    if not counts.get("requests"):
        return None
    parts = [(f"{counts.get('retries', 0):,} retried ({counts.get('rate_limited', 0):,} rate-limited, "
             f"{counts.get('timeouts', 0):,} timed out)")]
    if counts.get("parameter_changes"):
        parts.append(f"{counts['parameter_changes']:,} request(s) changed to suit the server (see notes)")
    if counts.get("probe_requests"):
        parts.append(f"{counts['probe_requests']:,} of them followed numbers digit by digit (logprobs mode)")
    return f"requests {counts['requests']:,}: " + ", ".join(parts)


def warning_line(outcome: Outcome, warning: RunWarning) -> Line:
    """A warning, or under strict mode a failure, as every report shows it."""
    failing = outcome.strict and warning.strict
    return Line(("strict: " if failing else "warning: ") + warning.text, FAIL_TONE if failing else WARN)


def headline(outcome: Outcome, metadata: Mapping[str, Any]) -> Headline:
    models = sorted({r.model for r in outcome.records})
    given = metadata.get("model")
    # Who answered and why (a conftest model, the --model one, or one wrapping it).
    model = printable("; ".join(metadata.get("answered_by") or []) or ", ".join(models) or (str(given) if given else "none"))
    elicit = printable(str(metadata.get("elicit") or "+".join(sorted({r.elicit for r in outcome.records})) or "text"))
    run_line = (f"model {model} | elicit {elicit} | seed {metadata.get('seed')} | prompt {metadata.get('prompt_hash')} | "
                f"{len(outcome.records)} item x condition results" + (" | strict" if outcome.strict else ""))
    usage = outcome.usage
    # Headlines first: a low parse rate, no model, nothing selected.
    lines = [warning_line(outcome, w) for w in outcome.warnings if w.headline]
    if usage["from_store"] or usage["paid_this_run"]:
        lines.append(Line(f"answers {usage['answers']:,}: {usage['paid_this_run']:,} paid for in this run "
                          f"({usage['input_tokens']:,} input + {usage['output_tokens']:,} output tokens), "
                          f"{usage['from_store']:,} read from the response store"))
    requests = metadata.get("requests") or {}
    if line := request_line(requests):
        lines.append(Line(line, WARN if requests.get("retries") or requests.get("timeouts") else ""))
    if usage["failed_calls"]:
        lines.append(Line(f"{usage['failed_calls']:,} answer(s) failed (after the retries that could help); they "
                          "count in error_rate and their items failed", FAIL_TONE))
    if line := served_line(outcome):
        lines.append(Line(line, WARN))
    lines += [Line(f"note: {note}", WARN) for note in outcome.notes()]
    lines += scale_lines(outcome, metadata)  # shard, batch cost and pending items
    failed = sum(v.verdict == FAIL for v in outcome.verdicts)
    passed = sum(v.verdict == PASS for v in outcome.verdicts)
    counts = GateCounts(failed, passed, len(outcome.verdicts) - failed - passed, len(outcome.failed_gates),
                        outcome.policy.short())
    return Headline(model, run_line, len(outcome.records), str(metadata.get("prompt_hash")), counts, tuple(lines),
                    tuple(outcome.missing), elicit)


def served_line(outcome: Outcome) -> str | None:
    """Answers asked for in json or logprobs mode that were read as text (the server fell
    back or ignored the request), and in logprobs mode the mean mass accounted for."""
    asked = [a for r in outcome.records if r.elicit != "text" for a in r.answers() if a.raw is not None]
    if not asked:
        return None
    as_text = sum(a.mode == "text" for a in asked)
    masses = [a.mass for a in asked if a.mass is not None]
    parts = []
    if as_text:
        parts.append(f"{as_text:,} of {len(asked):,} answers asked in json or logprobs mode were read as text "
                     "(the server fell back or ignored the request; see notes)")
    if masses:
        parts.append(f"logprobs: mean probability mass on the answer {sum(masses) / len(masses):.2f} "
                     f"over {len(masses):,} answers")
    return "elicitation: " + "; ".join(parts) if parts else None


class RunModel:
    """Everything a report of one run shows; ``metadata`` is the report's ``run`` section.

    Each part is decided on first use and then kept, so a renderer pays only for what it
    shows (the terminal needs no worst items and no figure data).
    """

    def __init__(self, outcome: Outcome, metadata: Mapping[str, Any]) -> None:
        self.outcome = outcome
        self.metadata = dict(metadata)
        self.aggregates = outcome.aggregates
        self.comparison = outcome.comparison
        self.keep_fifty = bool(metadata.get("keep_fifty", False))

    @cached_property
    def headline(self) -> Headline:
        return headline(self.outcome, self.metadata)

    @cached_property
    def scale(self) -> tuple[Line, ...]:
        """Shard, batch cost and pending items (also among the headline's lines)."""
        return tuple(scale_lines(self.outcome, self.metadata))

    @cached_property
    def gates(self) -> Table:
        return gate_table(self.outcome.verdicts, self.metadata.get("thresholds"), self.metadata.get("multiplicity"))

    @cached_property
    def gate_family(self) -> str:
        """Which CI gates were corrected together for multiplicity, and how."""
        return gate_family_text(self.outcome.verdicts, self.metadata.get("multiplicity"))

    @cached_property
    def gate_policy(self) -> str:
        """Whether INCONCLUSIVE gates fail this session, and how many there are."""
        return self.outcome.policy.text(self.outcome.verdicts)

    @cached_property
    def gate_power(self) -> tuple[str, ...]:
        """CI gates whose bound is finer than their data can resolve."""
        return tuple(power_sentences(self.outcome.verdicts))

    @cached_property
    def gate_failures(self) -> tuple[str, ...]:
        return tuple(failure_sentences(self.outcome.verdicts, self.outcome.comparison))

    @cached_property
    def gate_not_evaluated(self) -> tuple[str, ...]:
        return tuple(not_evaluated_sentences(self.outcome.verdicts))

    @cached_property
    def skew(self) -> Table:
        return skew_table(self.aggregates)

    @cached_property
    def domains(self) -> Table:
        return domain_table(self.aggregates)

    @cached_property
    def binary(self) -> Table:
        return binary_table(self.aggregates)

    @cached_property
    def coherence(self) -> Table:
        """Violation rates at the loosest tolerance computed."""
        return coherence_table(self.aggregates)

    @cached_property
    def coherence_every(self) -> Table:
        """Violation rates at every tolerance computed."""
        return coherence_table(self.aggregates, every_tolerance=True)

    @cached_property
    def effects(self) -> Table:
        return effects_table(self.aggregates)

    @cached_property
    def quality(self) -> Table:
        return quality_table(self.aggregates)

    @cached_property
    def readings(self) -> Table:
        """Text answers counted by the extraction rule that decided their reading."""
        return readings_table(self.outcome.records)

    @cached_property
    def key_metrics(self) -> Table:
        return key_metrics_table(self.aggregates)

    @cached_property
    def changes(self) -> Table | None:
        """None without a baseline."""
        return None if self.comparison is None else change_table(self.comparison, self.metadata.get("baseline"))

    @cached_property
    def closing_lines(self) -> tuple[Line, ...]:
        """After the gates: the other warnings, then what strict mode fails (or could fail)."""
        outcome = self.outcome
        lines = [warning_line(outcome, w) for w in outcome.warnings if not w.headline]
        if outcome.strict_failures:
            lines.append(Line(f"optbench strict mode: {len(outcome.strict_failures)} problem(s) above fail this "
                              "session", FAIL_TONE))
        elif unenforced := sum(w.strict for w in outcome.warnings):
            lines.append(Line(f"(--optbench-strict, or optbench_strict = true in the ini file, makes the {unenforced} "
                              "warning(s) above that leave a gate unenforced fail the session)", WARN))
        return tuple(lines)

    @cached_property
    def baseline_notes(self) -> tuple[str, ...]:
        return () if self.comparison is None else tuple(baseline_notes(self.comparison))

    @cached_property
    def languages(self) -> Table:
        return language_table(language_metrics(self.aggregates, self.outcome.records), self.outcome.languages)

    @cached_property
    def worst(self) -> WorstItems:
        return worst_items(self.aggregates, self.outcome.records, self.keep_fifty, WORST_SHOWN)

    @cached_property
    def valence(self) -> tuple[ValencePoint, ...]:
        return tuple(valence_points(self.aggregates))

    @cached_property
    def domain_estimates(self) -> tuple[Estimate, ...]:
        return tuple(domain_estimates(self.aggregates))

    @cached_property
    def effect_estimates(self) -> tuple[Estimate, ...]:
        return tuple(effect_estimates(self.aggregates))

    @cached_property
    def change_estimates(self) -> tuple[Estimate, ...]:
        return tuple(change_estimates(self.comparison))

    @cached_property
    def reliability(self) -> tuple[Reliability, ...]:
        return tuple(reliability_data(self.outcome.records))

    @cached_property
    def ladders(self) -> tuple[LadderGroup, ...]:
        return tuple(ladder_groups(self.outcome.records))


def build_run_model(outcome: Outcome, metadata: Mapping[str, Any]) -> RunModel:
    """The report model of one run (its parts are decided on first use)."""
    return RunModel(outcome, metadata)
