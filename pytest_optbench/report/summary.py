"""The end-of-session output: the terminal summary and the report's run metadata.

Writes through pytest's terminal reporter (duck-typed), so nothing here imports pytest.
"""

from __future__ import annotations

from typing import Any

from ..scoring.crosslingual import spread
from ..scoring.outcome import Outcome
from ..text import printable
from .terminal import (
    binary_table,
    change_table,
    coherence_table,
    effects_table,
    failure_sentences,
    gate_table,
    language_table,
    not_evaluated_sentences,
    skew_table,
)


class GateFailureStat:
    """An entry in the terminal reporter's stats, so the final line counts failed gates."""

    count_towards_summary = True

    def __init__(self, message: str) -> None:
        self.message = message


MAX_GATE_ROWS = 30


def write_summary(tr: Any, outcome: Outcome | None, metadata: dict[str, Any], has_gates: bool) -> None:
    """``metadata`` is the report's ``run`` section (seed, prompt hash, thresholds, baseline)."""
    if outcome is None or not (outcome.records or outcome.missing):
        return
    tr.write_sep("=", "optbench summary", bold=True)
    models = sorted({r.model for r in outcome.records})
    tr.write_line(f"model {printable(', '.join(models)) or '?'} | seed {metadata['seed']} | prompt {metadata['prompt_hash']} | "
                  f"{len(outcome.records)} item x condition results")
    usage = outcome.usage()
    if usage["from_store"] or usage["paid_this_run"]:
        tr.write_line(f"answers {usage['answers']:,}: {usage['paid_this_run']:,} paid for in this run "
                      f"({usage['input_tokens']:,} input + {usage['output_tokens']:,} output tokens), "
                      f"{usage['from_store']:,} read from the response store")
    if usage["failed_calls"]:
        tr.write_line(f"{usage['failed_calls']:,} answer(s) failed (after the retries that could help); they count "
                      "in error_rate and their items failed", red=True)
    for note in outcome.notes():
        tr.write_line(f"note: {note}", yellow=True)
    verbose = tr.config.getoption("verbose") > 0
    sections = [
        ("Skew of inverted pairs (pp)", skew_table(outcome.aggregates, with_domains=verbose)),
        ("known-answer items", binary_table(outcome.aggregates)),
        ("axiom violations (n = checks)", coherence_table(outcome.aggregates, every_tolerance=verbose)),
        ("condition effects against base (pp)", effects_table(outcome.aggregates)),
        (f"changes against the baseline {metadata['baseline']} (paired by item)",
         change_table(outcome.comparison) if outcome.comparison else []),
        (f"Track B Skew by language (base; inter-language SD {spread([s.skew for s in outcome.languages]):.1f} pp)",
         language_table(outcome.languages)),
    ]
    for title, lines in sections:
        if lines:
            tr.write_line("")
            tr.write_line(f"{title}:", bold=True)
            for line in lines:
                tr.write_line(line)
    comparison = outcome.comparison
    if comparison is not None:
        for difference in comparison.setting_differences:
            tr.write_line(f"baseline differs: {difference}", yellow=True)
        if comparison.changed_prompts:
            tr.write_line(f"baseline differs: {len(comparison.changed_prompts)} item(s) were asked with a different "
                          "prompt", yellow=True)
        for label, items in (("only in this run", comparison.only_current),
                             ("only in the baseline", comparison.only_baseline)):
            if items:
                listed = ", ".join(items[:5]) + (f" and {len(items) - 5} more" if len(items) > 5 else "")
                tr.write_line(f"{len(items)} item(s) {label}, not compared: {listed}", yellow=True)
    if outcome.missing:
        tr.write_line(f"{len(outcome.missing)} item(s) failed without sending answers (crashed worker or "
                      f"fixture error); aggregates cover only the items that reported:", red=True)
        for nodeid in outcome.missing[:10]:
            tr.write_line(f"  {nodeid}", red=True)
    if has_gates:
        tr.write_line("")
        tr.write_line(f"gates from {metadata['thresholds']}:", bold=True)
        shown = outcome.verdicts
        if len(shown) > MAX_GATE_ROWS and not verbose:  # long tables hide what failed
            shown = [v for v in outcome.verdicts if v.verdict != "pass"]
        for text, style in gate_table(shown):
            tr.write_line(text, **({style: True} if style else {}))
        if len(shown) < len(outcome.verdicts):
            tr.write_line(f"({len(outcome.verdicts) - len(shown)} passing gate rows not shown; -v lists them)")
        for sentence in not_evaluated_sentences(outcome.verdicts):
            tr.write_line(sentence, yellow=True)
        failures = failure_sentences(outcome.verdicts)
        for sentence in failures:
            tr.write_line(sentence, red=True)
        passed = sum(v.verdict == "pass" for v in outcome.verdicts)
        summary = f"optbench gates: {len(failures)} failed, {passed} passed, " \
                  f"{len(outcome.verdicts) - len(failures) - passed} not evaluated"
        tr.write_line(summary, red=bool(failures), green=not failures, bold=True)
        if failures:  # so pytest's last line says it too, not just "N passed"
            tr.stats.setdefault("optbench gate(s) failed", []).extend(GateFailureStat(f) for f in failures)
