"""A serial run with a core to spare scores and answers in a process pool (session/spare.py):
its report is the one a single process writes, item for item and aggregate for aggregate."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from conftest import CONDITIONS, SKEW_GATE, pair_suite
from pytest_optbench.session import spare


class PoolSpy:
    """Sees whether the run had a pool while its items ran, and whether it still has one when
    the summary is written."""

    def __init__(self) -> None:
        self.pools: list[Any] = []
        self.at_summary: list[Any] = []

    def pytest_runtest_logfinish(self) -> None:
        if not self.pools:
            self.pools.append(spare.session_pool(self.config))

    def pytest_configure(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_terminal_summary(self, config: pytest.Config) -> None:
        self.at_summary.append(spare.session_pool(config))


def run(optbench: Any, monkeypatch: pytest.MonkeyPatch, least: int) -> tuple[Any, list[Any]]:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this suite's own -n 2: a serial run inside
    monkeypatch.setattr(spare, "MIN_ITEMS", least)
    monkeypatch.setattr(spare, "spare_cores", lambda: 1)  # a pool of one, on any machine
    spy = PoolSpy()
    result = optbench.run("--model", "sim:optimist", plugins=(spy,))
    assert spy.at_summary == [None]  # scoring is done: the pool was let go before the summary
    return result, spy.pools


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    return {key: report[key] for key in ("items", "aggregates", "gates", "warnings", "languages")}


def test_a_pool_writes_the_report_one_process_writes(optbench, monkeypatch) -> None:
    optbench.write("suites/pairs.yaml", pair_suite(n=40, conditions=CONDITIONS))
    optbench.write("suites/more.yaml", pair_suite(suite="track-b-more", n=30))
    optbench.write("thresholds.yaml", SKEW_GATE)
    alone, no_pools = run(optbench, monkeypatch, least=10**9)
    shared, pools = run(optbench, monkeypatch, least=10)
    assert no_pools == [None] and pools[0] is not None
    assert shared.ret == alone.ret == 1  # sim:optimist fails the Skew gate either way
    assert comparable(shared.report) == comparable(alone.report)
    assert spare.session_pool(optbench.pytester.parseconfig()) is None  # shut down with its session


def test_no_pool_for_a_small_run_an_xdist_worker_or_collect_only(optbench, monkeypatch) -> None:
    config = optbench.pytester.parseconfig()
    monkeypatch.setattr(spare, "spare_cores", lambda: 1)
    assert spare.start_pool(config, spare.MIN_ITEMS - 1) is None
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    assert spare.start_pool(config, spare.MIN_ITEMS) is None
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    monkeypatch.setattr(spare, "spare_cores", lambda: 0)
    assert spare.start_pool(config, spare.MIN_ITEMS) is None
    collect_only = optbench.pytester.parseconfig("--collect-only")
    monkeypatch.setattr(spare, "spare_cores", lambda: 1)
    assert spare.start_pool(collect_only, spare.MIN_ITEMS) is None


UNGUARDED = """
import sys
import pytest
from pytest_optbench.session import spare

print("main script ran", file=sys.stderr)
spare.MIN_ITEMS, spare.spare_cores = 10, lambda: 1


class Spy:
    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session):
        result = yield
        print("pool:", spare.session_pool(session.config) is not None, file=sys.stderr)
        return result


sys.exit(pytest.main(["suites", "--model=sim:optimist", "-q", "-p", "no:cacheprovider"], plugins=[Spy()]))
"""


def test_a_script_that_calls_pytest_main_unguarded_runs_once(optbench, monkeypatch) -> None:
    """multiprocessing's spawn would run such a script again in each pool process (and the
    pool would break: an INTERNALERROR); the pool's processes import no main."""
    optbench.write("suites/pairs.yaml", pair_suite(n=30, conditions=CONDITIONS))
    optbench.write("thresholds.yaml", SKEW_GATE)
    script = optbench.write("audit.py", UNGUARDED)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    result = optbench.pytester.run(sys.executable, str(script), timeout=120)
    text = result.stdout.str() + result.stderr.str()
    assert text.count("main script ran") == 1, text
    assert "pool: True" in text
    assert "INTERNALERROR" not in text and "Traceback" not in text
    assert result.ret == 1 and "60 passed" in text  # the Skew gate fails sim:optimist
