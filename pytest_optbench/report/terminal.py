"""The end-of-session summary as plain lines; the plugin only writes them out.

Each line is (text, style) with style one of "", "bold", "red", "green", "yellow", so the
module stays free of pytest and is easy to test.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..scoring.aggregate import Aggregate
from ..scoring.gates import FAIL, NOT_EVALUATED, PASS, Verdict
from ..text import one_line

Line = tuple[str, str]
VERDICT_STYLE = {PASS: "green", FAIL: "red", NOT_EVALUATED: "yellow"}


def signed(value: float | None, digits: int = 1) -> str:
    if value is None or not math.isfinite(value):
        return "n/a"
    text = f"{value:+.{digits}f}"
    return "+" + text[1:] if float(text) == 0 else text  # no "-0.0"


def plain(value: float | None, digits: int = 3) -> str:
    if value is None or not math.isfinite(value):
        return "n/a"
    return f"{value:.{digits}f}"


def interval(low: float | None, high: float | None, fmt=signed) -> str:  # type: ignore[no-untyped-def]
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return "n/a"
    return f"[{fmt(low)}, {fmt(high)}]"


def p_text(p: float | None) -> str:
    if p is None or not math.isfinite(p):
        return "n/a"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    header, rows = [one_line(c) for c in header], [[one_line(c) for c in row] for row in rows]  # no ESC, no CR
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*header).rstrip()] + [fmt.format(*row).rstrip() for row in rows]


def _index(aggregates: Sequence[Aggregate]) -> dict[tuple[str, str, str, str | None], Aggregate]:
    return {(a.suite, a.condition, a.metric, a.domain): a for a in aggregates}


# Signed percentage points; unsigned pp; everything else is a rate or score in [0, 1]-ish.
SIGNED_PP = {"skew", "delta_plus", "delta_minus", "condition_effect", "skew_effect", "narrative_susceptibility"}
UNSIGNED_PP = {"calibration_error", "complement_violation", "item_sd"}


def formatter(metric: str):  # type: ignore[no-untyped-def]
    if metric in SIGNED_PP:
        return signed
    if metric in UNSIGNED_PP:
        return lambda v: plain(v, 1)
    return lambda v: plain(v, 3)


def metric_value_text(metric: str, value: float | None, low: float | None = None, high: float | None = None) -> str:
    fmt = formatter(metric)
    text = str(fmt(value))
    if low is not None or high is not None:
        text += " " + interval(low, high, fmt)
    return text


def _metric_table(aggregates: Sequence[Aggregate], key_metric: str, columns: Sequence[tuple[str, str, bool]],
                  with_n: bool = True) -> list[str]:
    """One row per (suite, condition) that has ``key_metric``; columns are
    (header, metric, with CI). Missing metrics show as blank."""
    index = _index(aggregates)
    rows = []
    for suite, condition in sorted({(a.suite, a.condition) for a in aggregates if a.metric == key_metric and a.domain is None}):
        key = index[(suite, condition, key_metric, None)]
        row = [suite, condition] + ([str(key.n)] if with_n else [])
        for _header, metric, with_ci in columns:
            agg = index.get((suite, condition, metric, None))
            row.append("" if agg is None else metric_value_text(metric, agg.value, *((agg.ci_low, agg.ci_high) if with_ci else ())))
        rows.append(row)
    if not rows:
        return []
    return table(["suite", "condition"] + (["n"] if with_n else []) + [c[0] for c in columns], rows)


def skew_table(aggregates: Sequence[Aggregate], with_domains: bool = False) -> list[str]:
    index = _index(aggregates)
    groups = sorted({(a.suite, a.condition) for a in aggregates if a.metric == "skew"})
    rows = []
    for suite, condition in groups:
        skew = index[(suite, condition, "skew", None)]
        dp = index[(suite, condition, "delta_plus", None)]
        dm = index[(suite, condition, "delta_minus", None)]
        refusal = index.get((suite, condition, "refusal_rate", None))
        parse = index.get((suite, condition, "parse_rate", None))
        complement = index.get((suite, condition, "complement_violation", None))
        calibration = index.get((suite, condition, "calibration_error", None))
        rows.append([
            suite, condition, str(skew.n), signed(skew.value), interval(skew.ci_low, skew.ci_high),
            p_text(skew.p_value), signed(dp.value), signed(dm.value), str(skew.detail.get("quadrant", "")),
            plain(complement.value, 1) if complement else "", plain(calibration.value, 1) if calibration else "",
            plain(refusal.value, 2) if refusal else "n/a", plain(parse.value, 2) if parse else "n/a",
        ])
        if with_domains:
            for a in sorted((a for a in aggregates if a.suite == suite and a.condition == condition
                             and a.metric == "skew" and a.domain), key=lambda a: a.domain or ""):
                rows.append([f"  {a.domain}", "", str(a.n), signed(a.value), interval(a.ci_low, a.ci_high),
                             p_text(a.p_value), "", "", "", "", "", "", ""])
    if not rows:
        return []
    header = ["suite", "condition", "n", "skew", "95% CI", "p", "d+", "d-", "quadrant", "|sum-100|", "vs stated",
              "refusal", "parse"]
    return table(header, rows)


def binary_table(aggregates: Sequence[Aggregate]) -> list[str]:
    """Known-answer items: the calibration paper's headline numbers."""
    return _metric_table(aggregates, "brier", [
        ("brier [95% CI]", "brier", True), ("climatology", "climatology_brier", False),
        ("skill", "brier_skill", False), ("overconf. [95% CI]", "overconfidence", True),
        ("ece", "ece", False), ("auc [95% CI]", "auc", True), ("shrink a", "shrinkage_a", False),
        ("recal. brier", "brier_recalibrated", False),
    ])


def coherence_table(aggregates: Sequence[Aggregate], every_tolerance: bool = False) -> list[str]:
    """Axiom violation rates; at the largest tolerance computed (a gate's), or at each."""
    violations = [a for a in aggregates if a.domain is None and a.metric.endswith("_violation_rate")]
    if not every_tolerance:
        widest: dict[tuple[str, str, str], Aggregate] = {}
        for a in violations:
            key = (a.suite, a.condition, a.metric)
            if key not in widest or (a.tolerance or 0) > (widest[key].tolerance or 0):
                widest[key] = a
        violations = list(widest.values())
    rows = [[a.suite, a.condition, a.metric, f"{a.tolerance or 0:g}", str(a.n),
             metric_value_text(a.metric, a.value, a.ci_low, a.ci_high)]
            for a in sorted(violations, key=lambda a: (a.suite, a.condition, a.metric, a.tolerance or 0))]
    return table(["suite", "condition", "metric", "tol. pp", "n", "estimate [95% CI]"], rows) if rows else []


def effects_table(aggregates: Sequence[Aggregate]) -> list[str]:
    """Paired effects of each arm against base (pp), with permutation p."""
    rows = []
    for a in sorted(aggregates, key=lambda a: (a.suite, a.condition, a.metric)):
        if a.metric in ("condition_effect", "skew_effect", "narrative_susceptibility"):
            rows.append([a.suite, a.condition, a.metric, str(a.n),
                         metric_value_text(a.metric, a.value, a.ci_low, a.ci_high), p_text(a.p_value)])
    return table(["suite", "arm", "metric", "n", "effect [95% CI]", "p"], rows) if rows else []


def gate_table(verdicts: Sequence[Verdict]) -> list[Line]:
    rows, styles = [], []
    for v in verdicts:
        if v.suite is None:
            continue  # gates that matched nothing are listed in one line below the table
        rows.append([
            v.suite or "-", v.condition or "-", v.gate.metric,
            metric_value_text(v.gate.metric, v.value),
            interval(v.ci_low, v.ci_high, formatter(v.gate.metric)),
            v.gate.bound_text, v.gate.evidence, v.verdict.upper() if v.verdict != NOT_EVALUATED else v.verdict,
        ])
        styles.append(VERDICT_STYLE[v.verdict])
    if not rows:
        return []
    header = ["suite", "condition", "metric", "estimate", "95% CI", "bound", "evidence", "verdict"]
    lines = table(header, rows)
    return [(lines[0], "bold")] + list(zip(lines[1:], styles))


def failure_sentences(verdicts: Sequence[Verdict]) -> list[str]:
    out = []
    for v in verdicts:
        if v.verdict != FAIL:
            continue
        ci = interval(v.ci_low, v.ci_high, formatter(v.gate.metric))
        out.append(
            f"gate {v.gate.metric} {v.gate.bound_text} ({v.gate.evidence}) failed on {v.suite}/{v.condition}: "
            f"estimate {metric_value_text(v.gate.metric, v.value)}, 95% CI {ci} ({v.reason})"
        )
    return out


def not_evaluated_sentences(verdicts: Sequence[Verdict]) -> list[str]:
    unmatched = [f"{v.gate.metric} {v.gate.bound_text}" for v in verdicts
                 if v.verdict == NOT_EVALUATED and v.suite is None]
    out = [f"gate {v.gate.metric} {v.gate.bound_text} on {v.suite}/{v.condition} not evaluated: {v.reason}"
           for v in verdicts if v.verdict == NOT_EVALUATED and v.suite is not None]
    if unmatched:
        out.append(f"not evaluated, no suite that ran matches: {'; '.join(unmatched)}")
    return out


def language_table(languages: Sequence[Any]) -> list[str]:
    """Track B Skew per language, when more than one language ran."""
    if len(languages) < 2:
        return []
    rows = [[s.language, str(s.n), signed(s.skew), interval(s.ci_low, s.ci_high)] for s in languages]
    return table(["language", "n", "skew", "95% CI"], rows)


# Metrics shown in the change table; the JSON report has every one.
KEY_CHANGE_METRICS = ("skew", "delta_plus", "delta_minus", "calibration_error", "brier", "overconfidence", "auc",
                      "ece", "conjunction_violation_rate", "disjunction_violation_rate",
                      "conditional_violation_rate", "dose_response_violation_rate", "parse_rate")


def change_table(comparison: Any) -> list[str]:
    """Key metrics: baseline, now, change with its paired 95% CI and p."""
    rows = []
    for c in comparison.changes:
        if c.metric not in KEY_CHANGE_METRICS:
            continue
        fmt = formatter(c.metric)
        digits = 1 if c.metric in SIGNED_PP | UNSIGNED_PP else 3
        rows.append([c.suite, c.condition, c.metric, str(c.n), fmt(c.baseline), fmt(c.current),
                     signed(c.delta, digits) + " " + interval(c.ci_low, c.ci_high, lambda v, d=digits: signed(v, d)),
                     p_text(c.p_value)])
    return table(["suite", "condition", "metric", "n", "baseline", "now", "change [95% CI]", "p"], rows) if rows else []
