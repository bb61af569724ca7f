"""The end-of-session output: the report model drawn in the terminal.

Writes through pytest's terminal reporter (duck-typed), so nothing here imports pytest.
"""

from __future__ import annotations

from typing import Any

from ..scoring.outcome import Outcome
from .model import RunModel, build_run_model
from .model.table import FAIL, Table
from .terminal import StyledLine, render_table, style


class GateFailureStat:
    """An entry in the terminal reporter's stats, so the final line counts failed gates."""

    count_towards_summary = True

    def __init__(self, message: str) -> None:
        self.message = message


MAX_GATE_ROWS = 30


def _write(tr: Any, text: str, tone_style: str = "") -> None:
    tr.write_line(text, **({tone_style: True} if tone_style else {}))


def _section(tr: Any, title: str, lines: list[StyledLine]) -> None:
    if lines:
        tr.write_line("")
        tr.write_line(f"{title}:", bold=True)
        for text, line_style in lines:
            _write(tr, text, "" if line_style == "bold" else line_style)


def summary_tables(model: RunModel, verbose: bool) -> list[Table]:
    """The tables the terminal shows, in order (-v adds Skew per domain and every tolerance)."""
    tables = [model.skew, *([model.domains] if verbose else []), model.binary,
              model.coherence_every if verbose else model.coherence, model.effects]
    if model.changes is not None:
        tables.append(model.changes)
    return [*tables, model.languages]


def write_summary(tr: Any, outcome: Outcome | None, metadata: dict[str, Any], has_gates: bool) -> None:
    """``metadata`` is the report's ``run`` section (seed, prompt hash, thresholds, baseline)."""
    if outcome is None or not (outcome.records or outcome.missing or outcome.warnings or outcome.pending):
        return
    model = build_run_model(outcome, metadata)
    head = model.headline
    tr.write_sep("=", "optbench summary", bold=True)
    tr.write_line(head.run_line)
    for line in head.lines:
        _write(tr, line.text, style(line.tone))
    verbose = tr.config.getoption("verbose") > 0
    for table in summary_tables(model, verbose):
        _section(tr, table.title, render_table(table))
    for note in model.baseline_notes:
        tr.write_line(note, yellow=True)
    if head.missing:
        tr.write_line(f"{len(head.missing)} item(s) failed without sending answers (crashed worker or "
                      f"fixture error); aggregates cover only the items that reported:", red=True)
        for nodeid in head.missing[:10]:
            tr.write_line(f"  {nodeid}", red=True)
    if has_gates:
        gates = model.gates
        shown = list(gates.rows)
        if len(shown) > MAX_GATE_ROWS and not verbose:  # long tables hide what failed
            shown = [row for row in shown if row.tone == FAIL]
        tr.write_line("")
        tr.write_line(f"{gates.title}:", bold=True)
        for text, line_style in render_table(gates, shown):
            _write(tr, text, line_style)
        if len(shown) < len(gates.rows):
            hidden = len(gates.rows) - len(shown)
            counts = head.gates
            lax = counts.inconclusive - (counts.failing - counts.failed)
            tr.write_line(f"({hidden} gate rows that do not fail the session not shown: {lax} inconclusive, "
                          f"{counts.passed} passed; -v lists them)")
        tr.write_line(model.gate_family)
        tr.write_line(model.gate_policy, yellow=bool(head.gates.inconclusive))
        for sentence in model.gate_failures:
            tr.write_line(sentence, red=True)
        for sentence in model.gate_power:
            tr.write_line(f"warning: {sentence}", yellow=True)
        counts = head.gates
        tr.write_line(counts.text, red=bool(counts.failing), green=not counts.failing and not counts.inconclusive,
                      yellow=not counts.failing and bool(counts.inconclusive), bold=True)
        if model.gate_failures:  # so pytest's last line says it too, not just "N passed"
            tr.stats.setdefault("optbench gate(s) failed", []).extend(GateFailureStat(f) for f in model.gate_failures)
    closing = model.closing_lines
    if closing:
        tr.write_line("")
    for line in closing:
        _write(tr, line.text, style(line.tone))
    if outcome.strict_failures:  # so pytest's last line says it too
        tr.stats.setdefault("optbench strict failure(s)", []).extend(
            GateFailureStat(w.text) for w in outcome.strict_failures)
