"""Summary lines for runs past one machine: what batches cost, what they did, what is still
pending; which CI shard this was.

Headline lines of the run model, so the terminal, Markdown and HTML (and ``optbench gate``)
all show them. Nothing here computes beyond formatting.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ...scoring.cost import cost_line
from ...scoring.outcome import Outcome
from .table import FAIL, WARN, Line


def scale_lines(outcome: Outcome, metadata: Mapping[str, Any]) -> list[Line]:
    """Shard, batch cost, batch counts and pending items; under strict mode pending ones fail."""
    strict = outcome.strict
    lines: list[Line] = []
    shard = metadata.get("shard")
    if isinstance(shard, dict) and shard.get("count"):
        lines.append(Line(
            f"optbench shard {shard.get('index')}/{shard.get('count')}: {len(shard.get('assigned') or []):,} of "
            f"{int(shard.get('results_total') or 0):,} item results ({int(shard.get('answers') or 0):,} answers); "
            "aggregates cover this shard only, gates and baseline are judged on the merged run "
            "(optbench merge, then optbench gate)"))
    usage = outcome.usage
    if usage.get("paid_in_batches"):
        price = float(usage.get("batch_price", 0.5))
        lines.append(Line(
            f"batch answers: {int(usage['paid_in_batches']):,} paid for at the batch price ({price:.0%} of the "
            f"real-time price): {int(usage['batch_input_tokens']):,} input + {int(usage['batch_output_tokens']):,} "
            f"output tokens, billed like {usage['batch_input_tokens'] * price:,.0f} + "
            f"{usage['batch_output_tokens'] * price:,.0f} at the real-time price"))
    if outcome.cost is not None:
        lines.append(Line(cost_line(outcome.cost, int(usage["from_store"])), WARN if outcome.cost.unpriced else ""))
    counts = metadata.get("requests") or {}
    if counts.get("batches_submitted") or counts.get("batches_collected"):
        resubmitted = int(counts.get("batch_lines_resubmitted", 0))
        lines.append(Line(
            (f"batches: {int(counts.get('batches_submitted', 0)):,} submitted "
            f"({int(counts.get('batch_lines', 0)):,} lines), {int(counts.get('batches_collected', 0)):,} collected; "
            f"{int(counts.get('batch_lines_expired', 0)):,} line(s) expired and "
            f"{int(counts.get('batch_lines_failed', 0)):,} failed, {resubmitted:,} resubmitted (at most once each "
            "per run)"), WARN if resubmitted else ""))
    if outcome.pending:
        ids = sorted({b for r in outcome.pending for b in r.pending_batches})
        shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        open_ = (metadata.get("batch") or {}).get("open") or {}
        latest = max((float(v.get("expires") or 0) for k, v in open_.items() if k in ids and isinstance(v, dict)),
                     default=0.0)
        when = f" (they end by {_utc(latest)} at the latest; most batches end within an hour)" if latest else ""
        verdict = "they fail under strict mode" if strict else "they are skipped, not passed, and not scored"
        lines.append(Line(
            (f"{len(outcome.pending)} item result(s) wait for answers in batch{'es' if len(ids) > 1 else ''} "
            f"{shown}{when}: rerun the same command (or `optbench collect`) to pick them up without submitting "
            f"again; {verdict}"), FAIL if strict else WARN))
        for record in outcome.pending[:5]:
            lines.append(Line(f"  pending: {record.label}", FAIL if strict else WARN))
        if len(outcome.pending) > 5:
            lines.append(Line(f"  ... and {len(outcome.pending) - 5} more", FAIL if strict else WARN))
    return lines


def _utc(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
