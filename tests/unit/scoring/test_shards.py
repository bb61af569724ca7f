"""Sharding (pure): whole items, balanced, stable; merging shard reports and its checks."""

from __future__ import annotations

import argparse
import copy
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_optbench.options import _shard
from pytest_optbench.scoring.shards import MergeError, Unit, assign, merge_reports, shard_info


def units(spec: dict[tuple[str, str], list[str]], answers: int = 10) -> list[Unit]:
    return [Unit(suite, item, condition, f"{suite}.yaml::{item}[{condition}]", f"p-{suite}-{item}-{condition}",
                 answers) for (suite, item), conditions in spec.items() for condition in conditions]


MIXED = units({("track-b", f"i{n}"): ["base", "up", "down"] for n in range(20)}) + \
    units({("known", f"k{n}"): ["base"] for n in range(37)}, answers=3)


def test_whole_items_go_to_one_shard_with_every_condition():
    shards = assign(MIXED, 4)
    assert set(shards) == {(u.suite, u.item) for u in MIXED}
    infos = [shard_info(MIXED, i, 4) for i in range(4)]
    owners: dict[tuple[str, str], int] = {}
    for index, info in enumerate(infos):
        for suite, item, _condition, _nodeid in info["assigned"]:
            assert owners.setdefault((suite, item), index) == index
    assert sum(len(i["assigned"]) for i in infos) == len(MIXED)
    assert {i["selection"] for i in infos} == {infos[0]["selection"]}


def test_the_split_is_balanced_by_answers():
    loads = [shard_info(MIXED, i, 4)["answers"] for i in range(4)]
    assert sum(loads) == sum(u.answers for u in MIXED)
    assert max(loads) - min(loads) <= 30  # at most the largest item


def test_the_split_does_not_depend_on_collection_order():
    shuffled = MIXED[:]
    random.Random(3).shuffle(shuffled)
    assert assign(shuffled, 3) == assign(MIXED, 3)
    assert shard_info(shuffled, 1, 3) == shard_info(MIXED, 1, 3)


def test_a_different_prompt_changes_the_selection_fingerprint():
    changed = [*MIXED[:-1], Unit(*[getattr(MIXED[-1], f) for f in ("suite", "item", "condition", "nodeid")],
                                 "another prompt", 3)]
    assert shard_info(changed, 0, 2)["selection"] != shard_info(MIXED, 0, 2)["selection"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=1, max_size=60), st.integers(1, 7))
def test_lpt_keeps_every_shard_within_one_item_of_the_others(costs, count):
    items = [Unit("s", f"i{n}", "base", f"n{n}", "p", c) for n, c in enumerate(costs)]
    loads = [shard_info(items, i, count)["answers"] for i in range(count)]
    assert sum(loads) == sum(costs)
    if len(costs) >= count:
        assert max(loads) - min(loads) <= max(costs)


@pytest.mark.parametrize(("text", "parsed"), [("1/4", (0, 4)), ("4/4", (3, 4)), ("1/1", (0, 1))])
def test_shard_option_parses(text, parsed):
    assert _shard(text) == parsed


@pytest.mark.parametrize("text", ["0/4", "5/4", "2", "a/b", "1/0", "-1/3"])
def test_shard_option_refuses_with_one_sentence(text):
    with pytest.raises(argparse.ArgumentTypeError, match="I/N"):
        _shard(text)


# --------------------------------------------------------------------------- merging


def report(info: dict | None, items: list[dict], **run) -> dict:
    return {"format": "pytest-optbench-report", "format_version": 1,
            "run": {"model": "sim:x", "seed": 0, "bootstrap_resamples": 100, "keep_fifty": False, "shard": info,
                    "requests": {"requests": 2}, "engine": {"max_tokens": None}, **run},
            "items": items, "items_without_results": [], "items_pending": [], "aggregates": [], "gates": []}


def item(suite: str, name: str, condition: str = "base") -> dict:
    return {"suite": suite, "item": name, "condition": condition, "kind": "inverted_pair", "file": f"{suite}.yaml",
            "model": "sim:x", "prompt_hash": f"h-{suite}", "prompts": [
                {"role": "positive", "user": "u", "answers": [{"raw": "60", "value": 60.0}]},
                {"role": "negative", "user": "v", "answers": [{"raw": "30", "value": 30.0}]}]}


def sharded(count: int = 3) -> list[tuple[str, dict]]:
    out = []
    for index in range(count):
        info = shard_info(MIXED, index, count)
        items = [item(s, i, c) for s, i, c, _ in info["assigned"]]
        out.append((f"s{index + 1}.json", report(info, items)))
    return out


def test_merge_joins_every_item_and_sums_requests():
    merged, notes = merge_reports(sharded())
    assert notes == []
    assert len(merged["items"]) == len(MIXED)
    keys = [(i["suite"], i["item"], i["condition"]) for i in merged["items"]]
    assert keys == sorted(keys)
    assert merged["run"]["requests"] == {"requests": 6}
    assert merged["run"]["merge"]["complete"] is True and "shard" not in merged["run"]
    assert merged["run"]["usage"]["answers"] == 2 * len(MIXED)


def test_merge_refuses_a_missing_shard():
    with pytest.raises(MergeError, match=r"^shard 2/3 is missing: merge all 3 shards of the run\.$"):
        merge_reports([r for r in sharded() if r[0] != "s2.json"])


def test_merge_refuses_an_incomplete_shard_but_carries_crashed_items():
    reports = sharded()
    _name, data = reports[1]
    lost = data["items"].pop()
    with pytest.raises(MergeError, match="s2.json .shard 2/3. has no result for 1 of its .* rerun that shard"):
        merge_reports(reports)
    nodeid = next(a[3] for a in data["run"]["shard"]["assigned"] if a[1] == lost["item"] and a[2] == lost["condition"])
    data["items_without_results"] = [nodeid]
    merged, _ = merge_reports(reports)
    assert merged["items_without_results"] == [nodeid]


def test_merge_refuses_different_settings_and_mixed_reports():
    reports = sharded()
    reports[2][1]["run"]["keep_fifty"] = True
    with pytest.raises(MergeError, match=r"s3.json differs from s1.json in keep_fifty \(True vs False\)"):
        merge_reports(reports)
    reports = sharded()
    reports[1][1]["run"]["shard"] = None
    with pytest.raises(MergeError, match="written with --optbench-shard but s2.json without"):
        merge_reports(reports)


def test_merge_refuses_a_stray_item_and_a_malformed_section():
    reports = sharded()
    reports[0][1]["items"].append(item("elsewhere", "x"))
    with pytest.raises(MergeError, match="s1.json holds elsewhere::x, which shard 1/3 was not assigned"):
        merge_reports(reports)
    reports = sharded()
    reports[0][1]["run"]["shard"] = {"index": "one"}
    with pytest.raises(MergeError, match="run.shard section is malformed"):
        merge_reports(reports)


def test_unsharded_reports_merge_when_disjoint_with_a_note():
    first = report(None, [item("a", "1")])
    second = report(None, [item("b", "1")])
    merged, notes = merge_reports([("a.json", first), ("b.json", second)])
    assert len(merged["items"]) == 2 and merged["run"]["merge"]["complete"] is None
    assert notes and "not written with --optbench-shard" in notes[0]
    with pytest.raises(MergeError, match="a::1 is in both a.json and c.json: the reports overlap"):
        merge_reports([("a.json", first), ("c.json", copy.deepcopy(first))])
