"""What a finished run produced: records, aggregates, verdicts (pure data)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..records import ItemRecord
from .aggregate import Aggregate
from .baseline import Comparison
from .crosslingual import LanguageSkew
from .enforcement import RunWarning
from .gates import FAIL, Verdict


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

    @property
    def failed_gates(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.verdict == FAIL]

    @property
    def strict_failures(self) -> list[RunWarning]:
        """The warnings that fail this session (none without strict mode)."""
        return [w for w in self.warnings if w.strict] if self.strict else []

    def usage(self) -> dict[str, int]:
        """Answers and tokens: how many were paid for in this run, how many read back."""
        answers = [a for r in self.records for a in r.answers()]
        fresh = [a for a in answers if a.cached is False]
        return {
            "answers": len(answers),
            "failed_calls": sum(1 for a in answers if a.error),
            "unparsed": sum(1 for a in answers if a.error is None and a.value is None),
            "from_store": sum(1 for a in answers if a.cached),
            "paid_this_run": len(fresh),
            "input_tokens": sum(a.input_tokens for a in fresh),
            "output_tokens": sum(a.output_tokens for a in fresh),
        }

    def notes(self) -> list[str]:
        return sorted({note for r in self.records for note in r.notes})
