"""Gates checked against a run's whole selection, before any answer: what a CI shard can know. Pure.

A shard judges no gate (its aggregates cover a part of the run), but it sees every selected
item while collecting. A gate that no suite of the selection can ever match (a suites or
conditions glob that matches nothing, a metric none of the selected items has) will be
INCONCLUSIVE in the merged run whatever the answers; strict mode need not wait for the merge
to say so. The check is conservative: a gate that might match is never reported (an effect
metric's labels, a metric computed only from some items of a suite are left to the merge).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from typing import Any

from ..aggregate import metric_applies
from .enforcement import RunWarning
from .reasons import unmatched_reason
from .spec import EFFECT_METRICS, Gate


def selection_suites(units: Sequence[tuple[str, str, str]]) -> dict[str, dict[str, list[str]]]:
    """(suite, kind, condition) of every selected item -> each suite's kinds and conditions."""
    out: dict[str, dict[str, set[str]]] = {}
    for suite, kind, condition in units:
        entry = out.setdefault(suite, {"kinds": set(), "conditions": set()})
        entry["kinds"].add(kind)
        entry["conditions"].add(condition)
    return {s: {k: sorted(v) for k, v in e.items()} for s, e in sorted(out.items())}


def _could_match(gate: Gate, suite: str, kinds: Sequence[str], conditions: Sequence[str]) -> bool:
    if gate.suites:
        if not any(fnmatch.fnmatchcase(suite, g) for g in gate.suites):
            return False
    elif not metric_applies(gate.metric, kinds):
        return False
    if not gate.conditions or gate.metric in EFFECT_METRICS:
        return True  # effect labels (e.g. narrative_up-narrative_down) are not conditions
    return any(fnmatch.fnmatchcase(c, g) for c in conditions for g in gate.conditions)


def unmatchable_warnings(gates: Sequence[Gate], suites: Mapping[str, Any], thresholds: str | None) -> list[RunWarning]:
    """One strict warning per level gate that no suite of the selection can match.

    ``suites``: suite -> {"kinds": [...], "conditions": [...]} (``selection_suites``, as a
    shard's report keeps it); malformed entries count as matching nothing in particular and
    are skipped."""
    clean: dict[str, tuple[list[str], list[str]]] = {}
    for suite, entry in suites.items():
        if isinstance(entry, Mapping):
            kinds = [str(k) for k in entry.get("kinds") or [] if isinstance(k, str)]
            conditions = [str(c) for c in entry.get("conditions") or [] if isinstance(c, str)]
            clean[str(suite)] = (kinds, conditions)
    if not clean:
        return []
    out = []
    for gate in gates:
        if gate.is_change or any(_could_match(gate, s, k, c) for s, (k, c) in clean.items()):
            continue
        reason = unmatched_reason(gate, {s: k for s, (k, _c) in clean.items()},
                                  {s: set(c) for s, (_k, c) in clean.items()})
        where = f" ({thresholds or 'thresholds'}, line {gate.line})" if gate.line else ""
        out.append(RunWarning("gate-not-evaluated", f"gate {gate.metric} {gate.bound_text}{where} can match nothing "
                              f"in this run's selection (every shard's items), so the merged run cannot evaluate "
                              f"it: {reason}"))
    return out
