"""pytest plugin for the benchmarks (``-p _phases``, bench/ on the path): the wall-clock time
at which each phase of a session ended, written as JSON to $OPTBENCH_BENCH_PHASES at exit."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Generator
from typing import Any

import pytest

MARKS: dict[str, float] = {}


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    MARKS["configured"] = time.time()


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    MARKS["collected"] = time.time()


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    MARKS["last_item"] = time.time()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, Any, Any]:
    # The outermost wrapper: its end comes after every plugin's end-of-loop work.
    MARKS["last_item"] = time.time()
    try:
        return (yield)
    finally:
        MARKS["loop_end"] = time.time()


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    path = os.environ.get("OPTBENCH_BENCH_PHASES")
    if path:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(MARKS, handle)
