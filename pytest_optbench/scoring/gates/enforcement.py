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
from dataclasses import dataclass
from typing import Any

from ...records.facts import RunFacts
from ...records.item import ItemRecord
from .evaluate import Verdict
from .spec import NOT_EVALUATED

# Below this share of answers read as a number, a tenth of a suite's answers is lost and every
# other figure rests on a self-selected subset. Lower than the bundled parse_rate gate (0.95),
# so that the sampling noise of a healthy run (a simulated model refuses 2-4% in prose) never
# makes a headline; the gate is what fails a run.
LOW_PARSE_RATE = 0.90
SHOWN = 5  # names listed in one warning


@dataclass(frozen=True)
class RunWarning:
    code: str  # gate-not-evaluated, no-model, nothing-selected, marker-near-miss, unused-field,
    #            low-parse-rate, no-usable-answer
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
        if v.verdict != NOT_EVALUATED:
            continue
        where = f" ({v.gate.source or thresholds or 'thresholds'}, line {v.gate.line})" if v.gate.line else ""
        on = f" on {v.suite}/{v.condition}" if v.suite is not None else ""
        out.append(RunWarning("gate-not-evaluated", f"gate {v.gate.metric} {v.gate.bound_text}{where}{on} was not "
                              f"evaluated: {v.reason}"))
    return out


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
                 strict: bool = False, thresholds: str | None = None) -> list[RunWarning]:
    """Every warning of a finished run, headlines first."""
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
    out += unusable_warning(unusable)
    return out


def is_optbench_run(facts: RunFacts, model_given: bool, strict: bool) -> bool:
    """Whether gates and "nothing selected" are worth a word: a suite was collected (or one
    with a misspelt marker was found), or a model was named. Strict mode alone (say, from
    the ini) does not make a run of a repository's other tests an audit."""
    return bool(facts.suite_items or facts.near_misses or model_given)
