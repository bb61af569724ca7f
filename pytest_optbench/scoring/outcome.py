"""What a finished run produced: records, aggregates, verdicts (pure data)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..records.item import BATCH_PRICE, ItemRecord
from .aggregate import Aggregate
from .baseline import Comparison
from .cost import Cost, Prices, run_cost
from .crosslingual import LanguageSkew
from .gates.enforcement import Policy, RunWarning
from .gates.evaluate import Verdict


@dataclass
class Outcome:
    aggregates: list[Aggregate]
    verdicts: list[Verdict]
    records: list[ItemRecord]
    missing: list[str] = field(default_factory=list)  # items that failed without sending answers
    languages: list[LanguageSkew] = field(default_factory=list)  # Track B Skew per language
    comparison: Comparison | None = None  # changes against --optbench-baseline
    warnings: list[RunWarning] = field(default_factory=list)  # what the run did not enforce (enforcement.py)
    strict: bool = False  # --optbench-strict: the warnings marked strict fail the session
    pending: list[ItemRecord] = field(default_factory=list)  # answers still in open provider batches: not scored
    policy: Policy = field(default_factory=Policy)  # whether INCONCLUSIVE gates fail the session
    prices: Prices | None = None  # the user's prices (--optbench-prices): the run's cost in money
    asker_notes: list[str] = field(default_factory=list)  # the provider's notes where the xdist controller asked

    @cached_property
    def cost(self) -> Cost | None:
        """What the answers cost at the user's prices; None without prices (tokens only)."""
        return run_cost([*self.records, *self.pending], self.prices) if self.prices is not None else None

    @property
    def failed_gates(self) -> list[Verdict]:
        """The gate rows that fail the session: FAIL, and INCONCLUSIVE under a fail policy."""
        return [v for v in self.verdicts if v.fails_session]

    @property
    def strict_failures(self) -> list[RunWarning]:
        """The warnings that fail this session (none without strict mode)."""
        return [w for w in self.warnings if w.strict] if self.strict else []

    @cached_property
    def usage(self) -> dict[str, float]:
        """Answers and tokens: how many were paid for in this run, how many read back
        (counted once: the reports and the summary show it)."""
        # Items still waiting on a batch are not scored, but what their batches delivered is paid for.
        answers = [a for r in (*self.records, *self.pending) for a in r.answers() if not a.pending]
        fresh = [a for a in answers if a.cached is False]
        usage: dict[str, float] = {
            "answers": len(answers),
            "failed_calls": sum(1 for a in answers if a.error),
            "unparsed": sum(1 for a in answers if a.error is None and a.value is None),
            "from_store": sum(1 for a in answers if a.cached),
            "paid_this_run": len(fresh),
            "input_tokens": sum(a.input_tokens for a in fresh),
            "output_tokens": sum(a.output_tokens for a in fresh),
        }
        batch = [a for a in fresh if a.batch]
        if batch or any(a.batch for a in answers):
            # Batch answers cost half: tokens "at list price" count them so (comparable to a real-time run).
            batch_in, batch_out = sum(a.input_tokens for a in batch), sum(a.output_tokens for a in batch)
            usage.update({
                "paid_in_batches": len(batch), "batch_input_tokens": batch_in, "batch_output_tokens": batch_out,
                "batch_price": BATCH_PRICE,
                "input_tokens_at_list_price": usage["input_tokens"] - (1 - BATCH_PRICE) * batch_in,
                "output_tokens_at_list_price": usage["output_tokens"] - (1 - BATCH_PRICE) * batch_out,
            })
        return usage

    def usage_report(self) -> dict[str, Any]:
        """``usage`` with the cost in money when prices were given (the JSON report's ``run.usage``)."""
        usage: dict[str, Any] = dict(self.usage)
        if self.cost is not None:
            usage["cost"] = self.cost.to_dict()
        return usage

    def notes(self) -> list[str]:
        return sorted({note for r in self.records for note in r.notes} | set(self.asker_notes))
