"""A process pool for the cores a serial run would leave idle.

A serial session runs its items and scores them in one process, on one core. Where the
machine has more, and the run has items enough to pay for starting interpreters (about a
second each, while the items run), a pool of processes takes work whose result depends on
its inputs alone: the built-in simulated model's answers (``elicit/ahead.py``) and whole
suites' aggregates (``scoring/aggregate.py``). This process takes back whatever the pool
has not started, so every record and aggregate is the one this process would have
computed, to the bit, whatever the timing; a pool that breaks leaves its work here.

No pool in an xdist worker (its siblings have the cores) or on the xdist controller (its
workers score nothing, and it gathers far fewer records than it waits for).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from multiprocessing import spawn

import pytest

from .worker import SCORING_MODULES, warm_scoring

MIN_ITEMS = 1000  # fewer: starting the pool's interpreters costs more than it saves
MAX_PROCESSES = 8
# What the pool's work needs, loaded as it starts: the simulated model's answers
# (elicit/ahead.py), then scoring (about 1.3 s, most of it scipy.stats). Loaded later, after
# the answers, it took 4 s of a run, the main process using both cores by then.
POOL_MODULES = ("pytest_optbench.elicit.ahead", "pytest_optbench.elicit.engine", "pytest_optbench.providers.sim",
                *SCORING_MODULES)

SPARE_KEY = pytest.StashKey[Executor]()
_EXPECTED_KEY = pytest.StashKey[int]()  # items collected so far, in the languages asked for


def _processes() -> int:
    """The pool's size: a process per spare core, at most MAX_PROCESSES."""
    return min(MAX_PROCESSES, spare_cores())


def spare_cores() -> int:
    """CPUs this process may run on, beyond its own."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return cores - 1


def expect_items(config: pytest.Config, items: int) -> None:
    """Collection found ``items`` more items to run: once there are enough, the pool starts
    now, so that its interpreters start while the rest is collected."""
    config.stash[_EXPECTED_KEY] = expected = config.stash.get(_EXPECTED_KEY, 0) + items
    if expected >= MIN_ITEMS:
        start_pool(config, expected)


def start_pool(config: pytest.Config, items: int) -> Executor | None:
    """The session's pool (started now, loading what it answers and scores with while the
    rest is collected, when it would otherwise wait), or None when the
    run is too small, is part of an xdist run, only collects, or the machine has no core to
    spare."""
    if SPARE_KEY in config.stash:
        return config.stash[SPARE_KEY]
    processes = _processes()
    if (items < MIN_ITEMS or processes < 1 or os.environ.get("PYTEST_XDIST_WORKER")
            or config.option.collectonly):
        return None
    # "spawn": a fresh interpreter everywhere; forking a process with threads (numpy's, the
    # store's, a user's) can deadlock the child.
    try:
        pool = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_quiet_child)
        with _without_main():  # the processes start on the first submit
            for _ in range(processes):
                pool.submit(warm_scoring, POOL_MODULES)
    except Exception:  # noqa: BLE001 - no pool: everything is done in this process, as before
        return None
    config.stash[SPARE_KEY] = pool
    return pool


@contextlib.contextmanager
def _without_main() -> Iterator[None]:
    """Start pool processes that do not import this process's ``__main__``.

    multiprocessing's spawn runs the parent's main script again in each child, which is
    harmless behind ``if __name__ == "__main__"`` but runs the whole session again in a
    script that calls ``pytest.main()`` unguarded (the child then dies, and the pool with
    it). The pool's tasks are functions of this package, so the children need no main.
    """
    prepare = spawn.get_preparation_data

    def without_main(name: str) -> dict[str, object]:
        data = prepare(name)
        data.pop("init_main_from_name", None)
        data.pop("init_main_from_path", None)
        return data

    spawn.get_preparation_data = without_main
    try:
        yield
    finally:
        spawn.get_preparation_data = prepare


def _quiet_child() -> None:
    """In a pool process: Ctrl-C is for the session, which shuts the pool down (without
    this, each child prints a KeyboardInterrupt traceback)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def session_pool(config: pytest.Config) -> Executor | None:
    return config.stash.get(SPARE_KEY, None)


def stop_pool(config: pytest.Config, wait: bool = True) -> None:
    """Shut the pool down, dropping work nobody took. ``wait=False`` once scoring is done:
    the processes exit (0.4 s) while this one writes the reports and the summary."""
    pool = config.stash.get(SPARE_KEY, None)
    if pool is not None:
        del config.stash[SPARE_KEY]
        with contextlib.suppress(Exception):
            pool.shutdown(wait=wait, cancel_futures=True)
