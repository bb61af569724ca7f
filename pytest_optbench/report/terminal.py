"""The end-of-session summary as plain lines; the plugin only writes them out.

Each line is (text, style) with style one of "", "bold", "red", "green", "yellow", so the
module stays free of pytest and is easy to test.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..aggregate import Aggregate
from ..gates import FAIL, NOT_EVALUATED, PASS, Verdict

Line = tuple[str, str]
VERDICT_STYLE = {PASS: "green", FAIL: "red", NOT_EVALUATED: "yellow"}


def signed(value: float | None, digits: int = 1) -> str:
    if value is None or not math.isfinite(value):
        return "n/a"
    return f"{value:+.{digits}f}"


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
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*header).rstrip()] + [fmt.format(*row).rstrip() for row in rows]


def _index(aggregates: Sequence[Aggregate]) -> dict[tuple[str, str, str, str | None], Aggregate]:
    return {(a.suite, a.condition, a.metric, a.domain): a for a in aggregates}


def metric_value_text(metric: str, value: float | None, low: float | None = None, high: float | None = None) -> str:
    """Skew-like metrics are signed percentage points; rates and the rest are plain."""
    pp = metric in ("skew", "delta_plus", "delta_minus", "condition_effect")
    fmt = signed if pp else (lambda v: plain(v, 2 if metric in ("calibration_error", "item_sd") else 3))
    text = fmt(value)
    if low is not None or high is not None:
        text += " " + interval(low, high, fmt)
    return text


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
        rows.append([
            suite, condition, str(skew.n), signed(skew.value), interval(skew.ci_low, skew.ci_high),
            p_text(skew.p_value), signed(dp.value), signed(dm.value), str(skew.detail.get("quadrant", "")),
            plain(refusal.value, 2) if refusal else "n/a", plain(parse.value, 2) if parse else "n/a",
        ])
        if with_domains:
            for a in sorted((a for a in aggregates if a.suite == suite and a.condition == condition
                             and a.metric == "skew" and a.domain), key=lambda a: a.domain or ""):
                rows.append([f"  {a.domain}", "", str(a.n), signed(a.value), interval(a.ci_low, a.ci_high),
                             p_text(a.p_value), "", "", "", "", ""])
    if not rows:
        return []
    header = ["suite", "condition", "n", "skew", "95% CI", "p", "d+", "d-", "quadrant", "refusal", "parse"]
    return table(header, rows)


def gate_table(verdicts: Sequence[Verdict]) -> list[Line]:
    rows, styles = [], []
    for v in verdicts:
        rows.append([
            v.suite or "-", v.condition or "-", v.gate.metric,
            metric_value_text(v.gate.metric, v.value),
            interval(v.ci_low, v.ci_high, signed if v.gate.metric in ("skew", "delta_plus", "delta_minus") else plain),
            v.gate.bound_text, v.gate.evidence, v.verdict.upper() if v.verdict != NOT_EVALUATED else v.verdict,
        ])
        styles.append(VERDICT_STYLE[v.verdict])
    header = ["suite", "condition", "metric", "estimate", "95% CI", "bound", "evidence", "verdict"]
    lines = table(header, rows)
    return [(lines[0], "bold")] + list(zip(lines[1:], styles))


def failure_sentences(verdicts: Sequence[Verdict]) -> list[str]:
    out = []
    for v in verdicts:
        if v.verdict != FAIL:
            continue
        ci = interval(v.ci_low, v.ci_high, signed if v.gate.metric in ("skew", "delta_plus", "delta_minus") else plain)
        out.append(
            f"gate {v.gate.metric} {v.gate.bound_text} ({v.gate.evidence}) failed on {v.suite}/{v.condition}: "
            f"estimate {metric_value_text(v.gate.metric, v.value)}, 95% CI {ci} ({v.reason})"
        )
    return out


def not_evaluated_sentences(verdicts: Sequence[Verdict]) -> list[str]:
    return [
        f"gate {v.gate.metric} {v.gate.bound_text}"
        + (f" on {v.suite}/{v.condition}" if v.suite else "") + f" not evaluated: {v.reason}"
        for v in verdicts if v.verdict == NOT_EVALUATED
    ]
