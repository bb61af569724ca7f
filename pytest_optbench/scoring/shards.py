"""Sharding a run across CI jobs, and merging the shards' reports back into one (pure).

``assign`` deals whole items (every condition and sample of a suite item in one shard, so
paired metrics stay paired) to N shards: largest first, each to the least loaded shard,
ties broken by a stable hash, so every job computes the same split of the same selection
and the shards carry about the same number of answers. Each shard's report records its
part (``run.shard``): its number, the shard count, a fingerprint of the whole selection
(every item result's id and prompts) and the item results it was assigned.

``merge_reports`` checks that reports belong to one run (same model and settings; for
sharded runs the same selection, every shard once, each holding exactly its items) and
joins their records; ``optbench gate`` then scores the merged records exactly as a session
would, so the merged result equals a single-machine run of the same answers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..prompts.build import run_prompt_hash, suite_prompt_hashes
from ..records.item import ItemRecord
from .outcome import Outcome

# What must agree between the reports of one run (they change answers or scores).
SETTINGS = ("model", "base_url_set", "keep_fifty", "samples_override", "temperature_override",
            "system_prompt_override", "seed", "bootstrap_resamples", "base_rate_oos", "plugin_version")


class MergeError(ValueError):
    """Reports that cannot be merged; one sentence naming what differs or is missing."""


@dataclass(frozen=True)
class Unit:
    """One item result (item x condition) as collection sees it."""

    suite: str
    item: str
    condition: str
    nodeid: str
    prompts: str  # fingerprint of its prompts (system, user, samples, temperature)
    answers: int  # samples over its prompts: the work it is


def stable_hash(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def assign(units: Sequence[Unit], count: int) -> dict[tuple[str, str], int]:
    """(suite, item) -> shard index (0-based): whole items, balanced by answers, stable."""
    work: dict[tuple[str, str], int] = {}
    for unit in units:
        work[(unit.suite, unit.item)] = work.get((unit.suite, unit.item), 0) + max(1, unit.answers)
    order = sorted(work, key=lambda g: (-work[g], stable_hash(*g)))
    load = [0] * count
    out: dict[tuple[str, str], int] = {}
    for group in order:
        shard = min(range(count), key=lambda s: (load[s], s))
        out[group] = shard
        load[shard] += work[group]
    return out


def selection_fingerprint(units: Sequence[Unit]) -> str:
    return stable_hash(*sorted(f"{u.suite}\x1e{u.item}\x1e{u.condition}\x1e{u.prompts}" for u in units))


def shard_info(units: Sequence[Unit], index: int, count: int,
               suites: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The report's ``run.shard`` section for shard ``index`` (0-based) of ``count``;
    ``suites``: every selected suite's kinds and conditions (``gates.selection``), so that
    strict mode can check the gates against the whole selection."""
    shards = assign(units, count)
    mine = sorted((u for u in units if shards[(u.suite, u.item)] == index),
                  key=lambda u: (u.suite, u.item, u.condition))
    return {
        "index": index + 1, "count": count, "selection": selection_fingerprint(units),
        "results_total": len(units), "answers": sum(u.answers for u in mine),
        "assigned": [[u.suite, u.item, u.condition, u.nodeid] for u in mine],
        **({"suites": dict(suites)} if suites is not None else {}),
    }


def _label(key: Sequence[str]) -> str:
    suite, item, condition = key[0], key[1], key[2]
    return f"{suite}::{item}" + ("" if condition == "base" else f"[{condition}]")


def _key(entry: Mapping[str, Any]) -> tuple[str, str, str]:
    return (str(entry.get("suite")), str(entry.get("item")), str(entry.get("condition")))


def _shard_name(info: Mapping[str, Any]) -> str:
    return f"{info.get('index')}/{info.get('count')}"


def merge_reports(reports: Sequence[tuple[str, dict[str, Any]]]) -> tuple[dict[str, Any], list[str]]:
    """One report from the reports of one run's shards (or of disjoint parts of one run);
    returns it and notes to show. Raises ``MergeError`` naming what differs or is missing."""
    if not reports:
        raise MergeError("no reports to merge.")
    first_name, first = reports[0]
    notes: list[str] = []
    for name, data in reports[1:]:
        for setting in SETTINGS:
            if data["run"].get(setting) != first["run"].get(setting):
                raise MergeError(f"{name} differs from {first_name} in {setting} ({data['run'].get(setting)!r} vs "
                                 f"{first['run'].get(setting)!r}): the reports are not of one run.")
        mine, theirs = (data["run"].get("engine") or {}).get("max_tokens"), \
            (first["run"].get("engine") or {}).get("max_tokens")
        if mine != theirs:
            raise MergeError(f"{name} differs from {first_name} in max_tokens ({mine!r} vs {theirs!r}): the reports "
                             "are not of one run.")
    infos = [(name, data["run"].get("shard")) for name, data in reports]
    sharded = [name for name, info in infos if info]
    if sharded and len(sharded) < len(reports):
        plain = next(name for name, info in infos if not info)
        raise MergeError(f"{sharded[0]} was written with --optbench-shard but {plain} without: merge the shards "
                         "of one sharded run.")
    if sharded:  # every shard once, of one selection, each holding exactly its items
        _check_shards(reports)
    seen: dict[tuple[str, str, str], str] = {}
    for name, data in reports:
        for entry in [*data["items"], *(data.get("items_pending") or [])]:
            key = _key(entry)
            if key in seen:
                raise MergeError(f"{_label(key)} is in both {seen[key]} and {name}: the reports overlap.")
            seen[key] = name
    complete: bool | None = None
    if sharded:
        complete = True
    else:
        notes.append("the reports were not written with --optbench-shard, so only their settings and disjointness "
                     "were checked, not that together they cover the whole selection")
    return _merged(reports, complete), notes


def _check_shards(reports: Sequence[tuple[str, dict[str, Any]]]) -> None:
    for name, data in reports:
        info = data["run"]["shard"]
        count_, index_ = info.get("count") if isinstance(info, dict) else None, \
            info.get("index") if isinstance(info, dict) else None
        if not (isinstance(count_, int) and isinstance(index_, int) and 1 <= index_ <= count_
                and isinstance(info.get("assigned"), list) and isinstance(info.get("results_total"), int)
                and all(isinstance(a, list) and len(a) == 4 for a in info["assigned"])):
            raise MergeError(f"{name}: its run.shard section is malformed (not written by --optbench-shard?).")
    first_name, first = reports[0]
    head = first["run"]["shard"]
    count, selection = head.get("count"), head.get("selection")
    by_index: dict[Any, str] = {}
    for name, data in reports:
        info = data["run"]["shard"]
        if info.get("count") != count:
            raise MergeError(f"{name} is shard {_shard_name(info)} but {first_name} is shard {_shard_name(head)}: "
                             "the shard counts differ.")
        if info.get("selection") != selection:
            raise MergeError(f"{name} ran another selection than {first_name} (other suites, items, -k or "
                             "--language selection, samples, temperature or prompts): not shards of one run.")
        if info.get("index") in by_index:
            raise MergeError(f"shard {_shard_name(info)} is given twice ({by_index[info.get('index')]} and {name}).")
        by_index[info.get("index")] = name
    absent = [i for i in range(1, int(count) + 1) if i not in by_index]
    if absent:
        shown = ", ".join(f"{i}/{count}" for i in absent)
        raise MergeError(f"shard{'s' if len(absent) > 1 else ''} {shown} {'are' if len(absent) > 1 else 'is'} "
                         f"missing: merge all {count} shards of the run.")
    total = 0
    for name, data in reports:
        info = data["run"]["shard"]
        assigned = {(str(a[0]), str(a[1]), str(a[2])): str(a[3]) for a in info.get("assigned") or []}
        total += len(assigned)
        held = {_key(e) for e in [*data["items"], *(data.get("items_pending") or [])]}
        stray = sorted(held - set(assigned))
        if stray:
            raise MergeError(f"{name} holds {_label(stray[0])}, which shard {_shard_name(info)} was not assigned.")
        crashed = set(data.get("items_without_results") or [])
        not_run = sorted(k for k in set(assigned) - held if assigned[k] not in crashed)
        if not_run:
            raise MergeError(f"{name} (shard {_shard_name(info)}) has no result for {len(not_run)} of its "
                             f"{len(assigned)} item results (e.g. {_label(not_run[0])}) and does not list them as "
                             "failed: rerun that shard.")
    if total != head.get("results_total"):
        raise MergeError(f"the shards were assigned {total} item results but the run selected "
                         f"{head.get('results_total')}: the reports are inconsistent.")


def _merged(reports: Sequence[tuple[str, dict[str, Any]]], complete: bool | None) -> dict[str, Any]:
    items = sorted((e for _, d in reports for e in d["items"]), key=_key)
    pending = sorted((e for _, d in reports for e in d.get("items_pending") or []), key=_key)
    records = [ItemRecord.from_dict(e) for e in items]
    requests: dict[str, int] = {}
    for _, data in reports:
        for name, value in (data["run"].get("requests") or {}).items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                requests[name] = requests.get(name, 0) + int(value)
    first = reports[0][1]["run"]
    shard = first.get("shard") or {}
    run = {k: v for k, v in first.items() if k not in ("shard", "usage", "requests", "provider_notes")}
    run.update({
        "prompt_hash": run_prompt_hash(records),
        "suite_prompt_hashes": suite_prompt_hashes(records),
        # Strict if any shard ran strict; who answered, over every shard.
        "strict": any(d["run"].get("strict") is True for _, d in reports),
        "answered_by": list(dict.fromkeys(str(s) for _, d in reports for s in d["run"].get("answered_by") or [])),
        "usage": Outcome([], [], records).usage,
        "requests": requests,
        "provider_notes": sorted({n for _, d in reports for n in d["run"].get("provider_notes") or []}),
        "merge": {"reports": len(reports), "shards": shard.get("count"), "selection": shard.get("selection"),
                  "complete": complete, "results": len(items), "pending": len(pending)},
        "batch": _batches(reports),
        "merged_from": [{"report": name, "shard": _shard_name(d["run"]["shard"]) if d["run"].get("shard") else None,
                         "results": len(d["items"]), "pending": len(d.get("items_pending") or []),
                         "without_results": len(d.get("items_without_results") or [])} for name, d in reports],
    })
    if run["batch"] is None:
        del run["batch"]
    return {
        "format": "pytest-optbench-report", "format_version": 1, "run": run, "items": items,
        "items_without_results": sorted({m for _, d in reports for m in d.get("items_without_results") or []}),
        "items_pending": pending, "aggregates": [], "gates": [], "baseline": None,
        "languages": {"track_b_skew": [], "inter_language_sd": None},
    }


def _batches(reports: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, Any] | None:
    """The shards' batch sections, their open batches joined."""
    sections = [d["run"]["batch"] for _, d in reports if isinstance(d["run"].get("batch"), dict)]
    if not sections:
        return None
    merged = dict(sections[0])
    merged["open"] = {k: v for section in sections for k, v in (section.get("open") or {}).items()}
    return merged
