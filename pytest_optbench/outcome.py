"""What a finished run produced: records, aggregates, verdicts (pure data)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .aggregate import Aggregate
from .gates import FAIL, Verdict
from .records import ItemRecord


@dataclass
class Outcome:
    aggregates: list[Aggregate]
    verdicts: list[Verdict]
    records: list[ItemRecord]
    missing: list[str] = field(default_factory=list)  # items that failed without sending answers

    @property
    def failed_gates(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.verdict == FAIL]
