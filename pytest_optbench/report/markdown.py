"""A Markdown summary for pull requests and CI pages ($GITHUB_STEP_SUMMARY): the report model
drawn as GitHub tables. Nothing here computes or formats a number."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..scoring.outcome import Outcome
from ..text.display import one_line
from .model import COMPACT, RunModel, Table, build_run_model

WORST_SHOWN = 5  # rows per kind in "Worst items"
QUESTION_CHARS = 160  # per question: a pair's second question stays visible


def cell(text: object) -> str:
    """Safe inside a Markdown table cell: no pipes, no line breaks, no raw HTML."""
    return (one_line(text).replace("\\", "\\\\").replace("|", "\\|")
            .replace("<", "&lt;").replace(">", "&gt;"))


def md_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines


def heading(title: str) -> str:
    return title[:1].upper() + title[1:]


def table_section(table: Table | None) -> list[str]:
    if table is None or table.empty:
        return []
    return ["", f"### {cell(heading(table.title))}", ""] + md_table(table.header(COMPACT), table.texts(COMPACT))


def shorten(text: str) -> str:
    return text if len(text) <= QUESTION_CHARS else text[:QUESTION_CHARS - 3] + "..."


def worst_rows(model: RunModel) -> list[list[str]]:
    worst = model.worst
    rows = [["largest Skew", w.label, w.skew_text, " / ".join(f"{q.role}: {shorten(q.text)}" for q in w.questions)]
            for w in worst.pairs[:WORST_SHOWN]]
    rows += [["confidently wrong", w.label, f"P(yes) {w.p_yes_text}",
              f"{' / '.join(shorten(q.text) for q in w.questions)} (answer: {w.truth})"]
             for w in worst.wrong[:WORST_SHOWN]]
    rows += [["axiom violation", v.label, f"{v.size_text} pp", v.explanation]
             for v in worst.largest_violations(WORST_SHOWN)]
    return rows


def build_markdown(outcome: Outcome, metadata: dict[str, Any]) -> str:
    model = build_run_model(outcome, metadata)
    head = model.headline
    lines = [f"## pytest-optbench: {cell(head.model)}", ""]
    icon = "❌" if head.failed else "⚠️" if head.gates.inconclusive else "✅"
    lines.append(f"{icon} **{head.gates.text}** · {head.results} item results · elicit `{head.elicit}` · "
                 f"prompt `{head.prompt_hash}`")
    if model.scale:
        lines += [""] + [f"- {'⚠️ ' if line.tone else ''}{cell(line.text.strip())}" for line in model.scale]
    if head.missing:
        lines.append(f"\n**{len(head.missing)} item(s) sent no answers** (crashed worker or fixture error).")
    if head.gates.total:
        lines += table_section(model.gates)
        lines += ["", cell(model.gate_family), "", cell(model.gate_policy)]
        lines += [f"- ⚠️ {cell(s)}" for s in model.gate_power]
    lines += table_section(model.key_metrics)
    if model.changes is not None:
        lines += ["", f"### {cell(heading(model.changes.title))}", ""]
        lines += [f"- ⚠️ {cell(note)}" for note in model.baseline_notes]
        lines += [""] + md_table(model.changes.header(COMPACT), model.changes.texts(COMPACT))
    lines += table_section(model.languages)
    rows = worst_rows(model)
    if rows:
        lines += ["", "### Worst items", ""] + md_table(["what", "item", "value", "question"], rows)
    return "\n".join(lines) + "\n"
