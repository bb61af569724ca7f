"""A Markdown summary for pull requests and CI pages ($GITHUB_STEP_SUMMARY)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..scoring.outcome import Outcome
from ..text import one_line
from .terminal import (
    KEY_CHANGE_METRICS,
    formatter,
    interval,
    metric_value_text,
    p_text,
    signed,
)
from .worst import violating_items, worst_items


def cell(text: object) -> str:
    """Safe inside a Markdown table cell: no pipes, no line breaks, no raw HTML."""
    return (one_line(text).replace("\\", "\\\\").replace("|", "\\|")
            .replace("<", "&lt;").replace(">", "&gt;"))


def md_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines


def build_markdown(outcome: Outcome, metadata: dict[str, Any]) -> str:
    failed = len(outcome.failed_gates)
    passed = sum(v.verdict == "pass" for v in outcome.verdicts)
    lines = [f"## pytest-optbench: {cell(metadata.get('model'))}", ""]
    icon = "❌" if failed or outcome.missing else "✅"
    lines.append(f"{icon} **gates: {failed} failed, {passed} passed, {len(outcome.verdicts) - failed - passed} "
                 f"not evaluated** · {len(outcome.records)} item results · prompt `{metadata.get('prompt_hash')}`")
    if outcome.missing:
        lines.append(f"\n**{len(outcome.missing)} item(s) sent no answers** (crashed worker or fixture error).")
    if outcome.verdicts:
        lines += ["", "### Gates", ""] + md_table(
            ["verdict", "suite", "condition", "metric", "estimate", "95% CI", "bound", "evidence"],
            [[v.verdict.upper() if v.verdict != "not evaluated" else v.verdict, v.suite or "-", v.condition or "-",
              v.gate.metric, metric_value_text(v.gate.metric, v.value),
              interval(v.ci_low, v.ci_high, formatter(v.gate.metric)), v.gate.bound_text, v.gate.evidence]
             for v in sorted(outcome.verdicts, key=lambda v: (v.verdict != "fail", v.verdict != "pass"))])
    key = [a for a in outcome.aggregates if a.domain is None and a.condition == "base" and a.metric in
           ("skew", "delta_plus", "delta_minus", "calibration_error", "brier", "overconfidence", "auc", "ece",
            "conjunction_violation_rate", "disjunction_violation_rate", "conditional_violation_rate",
            "dose_response_violation_rate") and not a.tolerance]
    if key:
        lines += ["", "### Key metrics (base condition)", ""] + md_table(
            ["suite", "metric", "n", "estimate [95% CI]", "p"],
            [[a.suite, a.metric, a.n, metric_value_text(a.metric, a.value, a.ci_low, a.ci_high), p_text(a.p_value)]
             for a in key])
    comparison = outcome.comparison
    if comparison is not None:
        lines += ["", f"### Changes against the baseline {cell(metadata.get('baseline') or '')}", ""]
        lines += [f"- ⚠️ {cell(d)}" for d in comparison.setting_differences]
        if comparison.only_current or comparison.only_baseline:
            lines.append(f"- {len(comparison.only_current)} item(s) only in this run, "
                         f"{len(comparison.only_baseline)} only in the baseline (not compared)")
        lines += [""] + md_table(
            ["suite", "condition", "metric", "n", "baseline", "now", "change [95% CI]", "p"],
            [[c.suite, c.condition, c.metric, c.n, formatter(c.metric)(c.baseline), formatter(c.metric)(c.current),
              f"{signed(c.delta, 3)} {interval(c.ci_low, c.ci_high, lambda v: signed(v, 3))}", p_text(c.p_value)]
             for c in comparison.changes if c.metric in KEY_CHANGE_METRICS])
    worst = worst_items(outcome.records, violating_items(outcome.aggregates), limit=5)
    if worst:
        lines += ["", "### Worst items", ""] + md_table(
            ["what", "item", "value", "question"],
            [[{"skew": "largest Skew", "wrong": "confidently wrong", "violation": "axiom violation"}[w.kind],
              w.label, "" if w.value != w.value else f"{w.value:+.1f}" if w.kind == "skew" else f"{w.value:.2f}",
              w.text[:200]] for w in worst])
    return "\n".join(lines) + "\n"
