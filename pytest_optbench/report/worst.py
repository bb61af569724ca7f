"""The items behind the numbers: most tilted pairs, most confident wrong answers, violations."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..records import ItemRecord
from ..scoring.aggregate import pair_answers


@dataclass(frozen=True)
class WorstItem:
    kind: str  # "skew", "wrong", "violation"
    label: str  # suite::item[condition]
    value: float
    text: str  # the question(s), for the reader



def worst_items(records: Sequence[ItemRecord], violating: Sequence[tuple[str, str, str]] = (), limit: int = 10,
                keep_fifty: bool = False) -> list[WorstItem]:
    """Largest |Skew| pairs, most confident wrong known answers, and axiom-violating items.

    ``violating`` lists (suite, condition, item) from the aggregates' ``violating_items``.
    """
    out: list[WorstItem] = []
    pairs = [r for r in records if r.kind == "inverted_pair"]
    if pairs:
        plus, minus = pair_answers(pairs, keep_fifty)
        skews = plus - (100 - minus)
        order = [i for i in np.argsort(-np.abs(np.nan_to_num(skews, nan=0.0))) if np.isfinite(skews[i])]
        for i in order[:limit]:
            r = pairs[i]
            out.append(WorstItem("skew", r.label, float(skews[i]),
                                 f"{r.prompt('positive').user} / {(r.prompt('negative').user.splitlines() or [''])[-1]}"))
    binary = [r for r in records if r.kind == "binary"]
    wrong = []
    for r in binary:
        p = r.prompt("yes").mean(keep_fifty=True) / 100
        if np.isfinite(p) and (p >= 0.5) != bool(r.outcome):
            wrong.append((max(p, 1 - p), r))
    for confidence, r in sorted(wrong, key=lambda t: (-t[0], t[1].item))[:limit]:
        out.append(WorstItem("wrong", r.label, confidence,
                             f"{r.prompt('yes').user} (answer: {'yes' if r.outcome else 'no'})"))
    by_key = {(r.suite, r.condition, r.item): r for r in records}
    for suite, condition, item in list(violating)[:limit]:
        r = by_key.get((suite, condition, item))
        if r is not None:
            means = ", ".join(f"{p.role} {p.mean(keep_fifty=True):.0f}" for p in r.prompts)
            out.append(WorstItem("violation", r.label, float("nan"), f"{r.kind}: {means}"))
    return out


def violating_items(aggregates: Sequence[object]) -> list[tuple[str, str, str]]:
    """(suite, condition, item) of every item an axiom battery flagged at tolerance 0."""
    out: list[tuple[str, str, str]] = []
    for a in aggregates:
        detail = getattr(a, "detail", {}) or {}
        if "violating_items" in detail and not getattr(a, "tolerance", None):
            out.extend((a.suite, a.condition, item) for item in detail["violating_items"])  # type: ignore[attr-defined]
    return out
