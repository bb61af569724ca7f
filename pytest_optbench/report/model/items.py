"""The items behind the numbers: the most tilted pairs, the most confident wrong answers, and
the items that break an axiom, each ranked by one rule that every renderer shows.

Rules:

- **Largest |Skew|**: one row per item (suite x item id), at its worst arm (the condition with
  the largest |Skew|), so that one scenario does not fill the list with its eight arms. Skew is
  computed from the answers as the ``skew`` aggregate computes it, honouring ``--keep-fifty``.
  Ties go to the label.
- **Confidently wrong**: known-answer items answered on the wrong side of 50 (50 counts as
  "yes"), most confident first, then by label.
- **Axiom violations**: per battery x suite x condition, the items flagged at the loosest
  tolerance computed (a gate's tolerance when one is set), largest violation first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ...kinds import kind_of
from ...metrics.skew import pair_skews
from ...records.item import ItemRecord
from ...scoring.aggregate import Aggregate, pair_answers
from .fmt import plain, signed, tolerance_text
from .tables import loosest_violations

SENTENCE_END = re.compile(r"(?<=[.?!])\s+|(?<=[\u3002\uff1f\uff01\u0964])\s*|\n+")


def sentences(text: str) -> list[str]:
    """The text cut after each sentence end (Latin, CJK and Devanagari stops) and line break."""
    return [part for part in SENTENCE_END.split(text) if part.strip()]


def differing_part(first: str, text: str) -> str:
    """``text`` without the sentences it shares with ``first`` at its start and end; an
    ellipsis marks what was cut."""
    a, b = sentences(first), sentences(text)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    middle = b[head:len(b) - tail]
    if not middle:
        return text
    return ("... " if head else "") + " ".join(middle) + (" ..." if tail else "")


@dataclass(frozen=True)
class Question:
    """One prompt of an item: its role, its text (only where it differs from the first prompt)
    and, where shown, the mean answer."""

    role: str
    text: str
    mean: str = ""

    @property
    def label(self) -> str:
        return f"{self.role} ({self.mean})" if self.mean else self.role


def questions(record: ItemRecord, with_means: bool = False) -> tuple[Question, ...]:
    """The first prompt in full, each other one only where it differs from the first (the
    prompts of an item repeat its scenario)."""
    first = record.prompts[0].user if record.prompts else ""
    return tuple(Question(p.role, p.user if i == 0 else differing_part(first, p.user),
                          plain(p.mean(keep_fifty=True), 1) if with_means else "")
                 for i, p in enumerate(record.prompts))


def short_label(record: ItemRecord) -> str:
    """The item id, with ``[condition]`` unless it is base (the suite has its own column)."""
    return record.item if record.condition == "base" else f"{record.item} [{record.condition}]"


@dataclass(frozen=True)
class WorstPair:
    suite: str
    item: str  # item id [condition]
    label: str  # suite::item[condition]
    domain: str
    plus: float
    minus: float
    skew: float
    questions: tuple[Question, ...]

    @property
    def plus_text(self) -> str:
        return plain(self.plus, 1)

    @property
    def minus_text(self) -> str:
        return plain(self.minus, 1)

    @property
    def skew_text(self) -> str:
        return signed(self.skew)


@dataclass(frozen=True)
class WrongAnswer:
    suite: str
    item: str
    label: str
    domain: str
    p_yes: float  # the mean stated P(yes), 0-100
    truth: str  # yes | no
    answers: tuple[str, ...]  # as given, or the error
    questions: tuple[Question, ...]

    @property
    def confidence(self) -> float:
        """Stated probability of the side chosen, 0-1."""
        return max(self.p_yes, 100 - self.p_yes) / 100

    @property
    def p_yes_text(self) -> str:
        return plain(self.p_yes, 1)


@dataclass(frozen=True)
class Violation:
    item: str
    label: str
    domain: str
    size: float  # pp by which the item breaks its axiom
    explanation: str
    record: ItemRecord = field(repr=False, compare=False)

    @property
    def size_text(self) -> str:
        return plain(self.size, 1)

    @property
    def questions(self) -> tuple[Question, ...]:
        """With mean answers; only for the violations a renderer shows (there may be hundreds)."""
        return questions(self.record, with_means=True)


@dataclass(frozen=True)
class ViolationGroup:
    metric: str
    suite: str
    condition: str
    tolerance: float
    violations: tuple[Violation, ...]  # largest first

    def title(self, shown: int) -> str:
        more = f", {shown} largest shown" if len(self.violations) > shown else ""
        return (f"{self.metric}: {len(self.violations)} violating item(s) in {self.suite} / {self.condition} "
                f"at tolerance {tolerance_text(self.tolerance)} pp{more}")


@dataclass(frozen=True)
class WorstItems:
    pairs: tuple[WorstPair, ...]
    wrong: tuple[WrongAnswer, ...]
    violations: tuple[ViolationGroup, ...]

    @property
    def empty(self) -> bool:
        return not (self.pairs or self.wrong or self.violations)

    def largest_violations(self, limit: int) -> list[Violation]:
        """The largest violations over every battery (for a one-table summary)."""
        every = [v for group in self.violations for v in group.violations]
        return sorted(every, key=lambda v: (-v.size, v.label))[:limit]


def worst_pairs(records: Sequence[ItemRecord], keep_fifty: bool, limit: int) -> list[WorstPair]:
    pairs = [r for r in records if r.kind == "inverted_pair"]
    if not pairs:
        return []
    plus, minus = pair_answers(pairs, keep_fifty)
    worst: dict[tuple[str, str], tuple[ItemRecord, float, float, float]] = {}
    for record, p, m, s in zip(pairs, plus, minus, pair_skews(plus, minus), strict=True):
        key = (record.suite, record.item)
        if np.isfinite(s) and (key not in worst or abs(s) > abs(worst[key][3])):
            worst[key] = (record, float(p), float(m), float(s))
    ranked = sorted(worst.values(), key=lambda row: (-abs(row[3]), row[0].label))[:limit]
    return [WorstPair(r.suite, short_label(r), r.label, r.domain or "", p, m, s, questions(r)) for r, p, m, s in ranked]


def confident_wrong(records: Sequence[ItemRecord], limit: int) -> list[WrongAnswer]:
    out = []
    for r in records:
        if r.kind != "binary" or r.outcome is None:
            continue
        p = r.prompt("yes").mean(keep_fifty=True)
        if np.isfinite(p) and (p >= 50) != bool(r.outcome):
            answers = tuple(a.raw if a.raw is not None else f"(error: {a.error})" for a in r.answers())
            out.append(WrongAnswer(r.suite, short_label(r), r.label, r.domain or "", float(p),
                                   "yes" if r.outcome else "no", answers, questions(r)))
    return sorted(out, key=lambda w: (-w.confidence, w.label))[:limit]


def _means(record: ItemRecord) -> dict[str, float]:
    return {p.role: p.mean(keep_fifty=True) for p in record.prompts}


def violation_size(record: ItemRecord) -> tuple[float, str]:
    """How far an axiom-battery item breaks its axiom (pp) and a sentence that says so (the
    kind explains; mean answers keep the 50s, as the violation rates do)."""
    explained = kind_of(record.kind).explain(record)
    return (float("nan"), "") if explained is None else (explained.size, explained.text)


def violation_groups(aggregates: Iterable[Aggregate], records: Iterable[ItemRecord]) -> list[ViolationGroup]:
    by_key: Mapping[tuple[str, str, str], ItemRecord] = {r.key: r for r in records}
    out = []
    for agg in loosest_violations(aggregates):
        found = [by_key[key] for item in agg.detail.get("violating_items", [])
                 if (key := (agg.suite, item, agg.condition)) in by_key]
        rows = []
        for r in found:
            size, explanation = violation_size(r)
            rows.append(Violation(short_label(r), r.label, r.domain or "", size, explanation, r))
        if rows:
            rows.sort(key=lambda v: (-v.size, v.label))
            out.append(ViolationGroup(agg.metric, agg.suite, agg.condition, agg.tolerance or 0.0, tuple(rows)))
    return out


def worst_items(aggregates: Sequence[Aggregate], records: Sequence[ItemRecord], keep_fifty: bool,
                limit: int = 10) -> WorstItems:
    return WorstItems(tuple(worst_pairs(records, keep_fifty, limit)), tuple(confident_wrong(records, limit)),
                      tuple(violation_groups(aggregates, records)))
