"""``--optbench-shard I/N``: keep this CI job's share of the selected items (pytest side).

Runs after every other selection (-k, -m, --language), on every process that collects
(a serial run, each xdist worker: they all collect the same items, so they all keep the
same share). The split itself is ``scoring.shards.assign``. The shard's part of the run
goes into the report's ``run.shard``: in a serial run directly, under xdist from a worker
to the controller through ``workeroutput``. Items that are not optbench items are left
alone: they run in every shard.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from .controller import ControllerSession

WORKEROUTPUT_KEY = "optbench_shard"


def units_of(items: list[Any]) -> list[Any]:
    """A ``scoring.shards.Unit`` per optbench item (item x condition)."""
    from ..scoring.shards import Unit

    units = []
    for item in items:
        specs = getattr(item, "specs", None)
        suite, case, condition = getattr(item, "suite", None), getattr(item, "case", None), \
            getattr(item, "condition", None)
        if specs is None or suite is None or case is None or condition is None:
            continue
        prompts = hashlib.sha256("\x1e".join(
            f"{s.role}\x1f{s.system}\x1f{s.user}\x1f{s.samples}\x1f{s.temperature!r}" for s in specs).encode())
        units.append(Unit(suite.id, case.id, condition.name, item.nodeid, prompts.hexdigest(),
                          sum(s.samples for s in specs)))
    return units


class ShardHooks:
    """On every process that collects: deselect the other shards' items."""

    def __init__(self, shard: tuple[int, int], controller: ControllerSession | None) -> None:
        self.index, self.count = shard
        self.controller = controller
        self.info: dict[str, Any] | None = None

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        from ..scoring.gates.selection import selection_suites
        from ..scoring.shards import assign, shard_info

        units = units_of(items)
        shards = assign(units, self.count)
        selected: list[Any] = [i for i in items if hasattr(i, "specs") and getattr(i, "case", None) is not None
                               and getattr(i, "suite", None) is not None and getattr(i, "condition", None) is not None]
        suites = selection_suites([(i.suite.id, i.case.kind, i.condition.name) for i in selected])
        self.info = shard_info(units, self.index, self.count, suites)
        keep, drop = [], []
        for item in items:
            suite, case = getattr(item, "suite", None), getattr(item, "case", None)
            if suite is None or case is None or not hasattr(item, "specs") or shards[(suite.id, case.id)] == self.index:
                keep.append(item)
            else:
                drop.append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep
        if self.controller is not None:
            self.controller.extra["shard"] = self.info

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        output = getattr(session.config, "workeroutput", None)
        if output is not None and self.info is not None:
            output[WORKEROUTPUT_KEY] = self.info
        info = self.info or (self.controller.extra.get("shard") if self.controller is not None else None)
        if session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and info and not info["assigned"] \
                and info["results_total"]:
            session.exitstatus = pytest.ExitCode.OK  # more shards than items: an empty shard is no error


class XdistShardHooks:
    """On the xdist controller (which collects nothing): the shard's part comes from a worker."""

    def __init__(self, controller: ControllerSession) -> None:
        self.controller = controller

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        info = getattr(node, "workeroutput", {}).get(WORKEROUTPUT_KEY)
        if info and "shard" not in self.controller.extra:
            self.controller.extra["shard"] = info


def register(config: pytest.Config, shard: tuple[int, int], controller: ControllerSession | None,
             distributed: bool) -> None:
    config.pluginmanager.register(ShardHooks(shard, controller), "optbench-shard")
    if distributed and controller is not None:
        config.pluginmanager.register(XdistShardHooks(controller), "optbench-shard-xdist")
