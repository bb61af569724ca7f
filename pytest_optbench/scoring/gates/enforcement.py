"""What a run did not enforce, said out loud: the warnings, and what strict mode fails on.

Pure. A CI job must not go green while enforcing nothing. Every way to that is a
``RunWarning`` here: a gate that was not evaluated (no suite matched, no baseline, metric not
computed, too little data), no model although suite items were collected, no suite item
selected, a misspelt ``optbench`` marker, an item field nothing reads. Each is one sentence
that says what to do. Without strict mode they are warning lines in the summary and every
report; under ``--optbench-strict`` those marked ``strict`` fail the session. A low parse
rate is a headline in both modes, never a failure by itself (gate ``parse_rate`` for that).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ...records.facts import RunFacts
from ...records.item import ItemRecord
from .evaluate import Verdict
from .spec import DEFAULT_ON_INCONCLUSIVE, FAIL, INCONCLUSIVE, ON_INCONCLUSIVE, PASS

# Below this share of answers read as a number, a tenth of a suite's answers is lost and every
# other figure rests on a self-selected subset. Lower than the bundled parse_rate gate (0.95),
# so that the sampling noise of a healthy run (a simulated model refuses 2-4% in prose) never
# makes a headline; the gate is what fails a run.
LOW_PARSE_RATE = 0.90
SHOWN = 5  # names listed in one warning


@dataclass(frozen=True)
class RunWarning:
    code: str  # gate-not-evaluated, no-gates, no-model, nothing-selected, marker-near-miss,
    #            unused-field, low-parse-rate, no-usable-answer
    text: str  # one sentence that says what to do
    strict: bool = True  # fails the session under strict mode
    headline: bool = False  # shown at the top of the summary and of every report

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "text": self.text, "fails_strict": self.strict, "headline": self.headline}


def _listed(values: Sequence[str]) -> str:
    shown = ", ".join(values[:SHOWN])
    return shown + (f" and {len(values) - SHOWN} more" if len(values) > SHOWN else "")


def gate_warnings(verdicts: Iterable[Verdict], thresholds: str | None) -> list[RunWarning]:
    """One sentence per gate row that was not evaluated."""
    out = []
    for v in verdicts:
        if v.evaluated:
            continue
        where = f" ({v.gate.source or thresholds or 'thresholds'}, line {v.gate.line})" if v.gate.line else ""
        on = f" on {v.suite}/{v.condition}" if v.suite is not None else ""
        # Its row is INCONCLUSIVE: strict mode fails it as a gate (enforcement by policy), so the
        # warning says why without counting twice.
        out.append(RunWarning("gate-not-evaluated", f"gate {v.gate.metric} {v.gate.bound_text}{where}{on} was not "
                              f"evaluated: {v.reason}", strict=False))
    return out


def no_gate_warning(records: Sequence[ItemRecord], gates: int, thresholds: str | None) -> list[RunWarning]:
    """Item results scored while no gate exists (no thresholds file, or ``gates: []``)."""
    if not records or gates:
        return []
    where = f"{thresholds} has no gates" if thresholds else "no thresholds file was given (nor a thresholds.yaml found)"
    return [RunWarning("no-gates", f"no gate checked this run: {len(records):,} item result(s) were scored but "
                       f"{where}; pass --thresholds PATH with at least one gate (the bundled thresholds.yaml is a "
                       "start)")]


def parse_rate_warnings(records: Iterable[ItemRecord], threshold: float = LOW_PARSE_RATE) -> list[RunWarning]:
    """A headline per suite whose answers were read as numbers less often than ``threshold``."""
    received: dict[str, int] = defaultdict(int)
    parsed: dict[str, int] = defaultdict(int)
    for record in records:
        for answer in record.answers():
            if answer.error is None:
                received[record.suite] += 1
                parsed[record.suite] += answer.value is not None
    out = []
    for suite in sorted(received):
        total, ok = received[suite], parsed[suite]
        if total and ok / total < threshold:
            out.append(RunWarning(
                "low-parse-rate", f"low parse rate: {suite} has {total - ok:,} of {total:,} answers without a readable "
                f"number (parse rate {ok / total:.2f}); its figures rest on the {ok:,} that parsed: read the raw "
                "answers in the report and fix the prompt or the answer format", strict=False, headline=True))
    return out


def unusable_warning(labels: Sequence[str]) -> list[RunWarning]:
    """Items marked xfail because some prompt of theirs got no usable answer."""
    if not labels:
        return []
    return [RunWarning("no-usable-answer", f"{len(labels)} item(s) got no usable answer to some prompt and were "
                       f"marked xfail ({_listed(sorted(labels))}); they count in no metric", strict=False)]


def run_warnings(verdicts: Sequence[Verdict], records: Sequence[ItemRecord], facts: RunFacts, *,
                 no_model_skips: int = 0, unusable: Sequence[str] = (), model_given: bool = False,
                 strict: bool = False, thresholds: str | None = None,
                 gates: int | None = None) -> list[RunWarning]:
    """Every warning of a finished run, headlines first. ``gates``: how many gates the
    thresholds file holds (None: not known, no "no gate" warning)."""
    out = parse_rate_warnings(records)
    if no_model_skips:
        out.append(RunWarning("no-model", f"no model answered: {no_model_skips} suite item(s) were skipped; pass "
                              "--model (e.g. --model=sim:calibrated or --model=openai:gpt-4.1-mini) or override the "
                              "optbench_model fixture in conftest.py", headline=True))
    if facts.processes and not facts.selected and not records and is_optbench_run(facts, model_given, strict):
        if facts.suite_items:
            out.append(RunWarning("nothing-selected", f"no suite item was selected: all {facts.suite_items} collected "
                                  "were deselected; check -k, -m and --language", headline=True))
        else:
            out.append(RunWarning("nothing-selected", "no suite item was collected: give pytest the path of your "
                                  "suites (e.g. pytest suites); a suite is a YAML file with 'optbench: 1' at its "
                                  "top level", headline=True))
    out += [RunWarning("marker-near-miss", s) for s in facts.near_misses]
    out += [RunWarning("unused-field", s) for s in facts.unused_fields]
    if is_optbench_run(facts, model_given, strict) or records:
        out += gate_warnings(verdicts, thresholds)
    if gates is not None:
        out += no_gate_warning(records, gates, thresholds)
    out += unusable_warning(unusable)
    return out


def is_optbench_run(facts: RunFacts, model_given: bool, strict: bool) -> bool:
    """Whether gates and "nothing selected" are worth a word: a suite was collected (or one
    with a misspelt marker was found), or a model was named. Strict mode alone (say, from
    the ini) does not make a run of a repository's other tests an audit."""
    return bool(facts.suite_items or facts.near_misses or model_given)


@dataclass(frozen=True)
class Policy:
    """Whether INCONCLUSIVE gates fail the session.

    A gate that was not evaluated (nothing to judge, too little data) was not enforced:
    strict mode fails it, whatever is set. A gate whose data were judged but cannot tell
    follows ``cli`` (--optbench-on-inconclusive), then the gate's own ``on_inconclusive:``,
    then the file's; without any, strict mode fails it and a lax session passes it (a build
    goes red when its evidence shows a bound crossed; docs/statistics.md says why)."""

    strict: bool = False
    cli: str | None = None
    file: str | None = None

    def __post_init__(self) -> None:
        for value in (self.cli, self.file):
            if value is not None and value not in ON_INCONCLUSIVE:
                raise ValueError(f"on_inconclusive must be one of {', '.join(ON_INCONCLUSIVE)}, got {value!r}")

    @property
    def default(self) -> str:
        return "fail" if self.strict else DEFAULT_ON_INCONCLUSIVE

    def for_gate(self, gate_policy: str | None, evaluated: bool = True) -> str:
        if self.strict and not evaluated:
            return "fail"
        return self.cli or gate_policy or self.file or self.default

    def short(self) -> str:
        """The global policy in a few words (the gate count line)."""
        chosen = self.cli or self.file or self.default
        return f"inconclusive gates {chosen}" + (": strict mode" if self.strict and not (self.cli or self.file) else "")

    def _source(self) -> str:
        if self.cli:
            return f"--optbench-on-inconclusive {self.cli}"
        if self.file:
            return "the thresholds file's on_inconclusive" + (
                "; strict mode fails the ones not evaluated" if self.strict else "")
        if self.strict:
            return "strict mode"
        return "the default; on_inconclusive: fail or --optbench-strict makes them fail"

    def text(self, verdicts: Sequence[Verdict]) -> str:
        """The policy in one sentence, as the summary states it under the gates."""
        inconclusive = [v for v in verdicts if v.verdict == INCONCLUSIVE]
        failing = sum(v.fails_session for v in inconclusive)
        chosen = self.cli or self.file or self.default
        overridden = 0 if self.cli else sum(v.gate.on_inconclusive not in (None, chosen) for v in verdicts)
        head = f"inconclusive gates {chosen} ({self._source()})" + (
            f", except {overridden} gate row(s) with their own on_inconclusive" if overridden else "")
        return (f"policy: {head}; {len(inconclusive)} inconclusive, {failing} of them failing"
                if inconclusive else f"policy: {head}")


def apply_policy(verdicts: Sequence[Verdict], policy: Policy) -> list[Verdict]:
    """Each verdict with the exit policy that applies to it (``Verdict.fails_session``)."""
    return [replace(v, on_inconclusive=policy.for_gate(v.gate.on_inconclusive, v.evaluated)) for v in verdicts]


def gate_counts(verdicts: Iterable[Verdict]) -> dict[str, int]:
    """How many gate rows have each verdict."""
    counts = {FAIL: 0, INCONCLUSIVE: 0, PASS: 0}
    for v in verdicts:
        counts[v.verdict] = counts.get(v.verdict, 0) + 1
    return counts
