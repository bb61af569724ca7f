"""Suites scored in a process pool (session/spare.py) give the aggregates one process gives.

``aggregate(records, options, pool)`` lets the pool score suites from the last backwards and
takes back what it has not started; ``SuitesAhead`` hands a suite to the pool as soon as its
last record is in. The records here are the simulated model's answers to three bundled
suites (pairs, known answers with their base-rate and clustered-rate confidences, axioms).
"""

from __future__ import annotations

import multiprocessing
import pickle
from collections.abc import Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

import pytest

from pytest_optbench.elicit.engine import elicit
from pytest_optbench.options import Settings
from pytest_optbench.prompts.build import render_prompts
from pytest_optbench.providers.base import as_model
from pytest_optbench.providers.sim import SimulatedModel
from pytest_optbench.records.item import ItemRecord
from pytest_optbench.scoring.aggregate import AggregateOptions, SuitesAhead, _by_condition, aggregate
from pytest_optbench.suite.load import load_suite

SUITES = Path(__file__).resolve().parents[3] / "suites" / "en"
OPTIONS = AggregateOptions(n_resamples=300, base_rate=0.4)


def bank_records(names: tuple[str, ...] = ("track_b.yaml", "known_answers.yaml", "conjunction.yaml"),
                 items: int = 24) -> list[ItemRecord]:
    """What the items of a serial run would report, answered by sim:overconfident."""
    model = as_model(SimulatedModel("overconfident"))
    records = []
    for name in names:
        suite = load_suite(SUITES / name)
        assert suite is not None
        for item in suite.items[:items]:
            for condition in suite.conditions:
                specs = render_prompts(suite, item, condition, Settings(samples=2))
                records.append(ItemRecord(
                    suite=suite.id, item=item.id, condition=condition.name, kind=item.kind, file=name,
                    model="sim:overconfident", prompts=elicit(model, specs), domain=item.domain,
                    track=suite.track if item.kind == "inverted_pair" else None, language=suite.language,
                    expected=item.fields.get("expected"), outcome=item.fields.get("outcome"),
                    direction=item.fields.get("direction")))
    return sorted(records, key=lambda r: r.key)


@pytest.fixture(scope="module")
def pool() -> Iterator[ProcessPoolExecutor]:
    executor = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    yield executor
    executor.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module")
def records() -> list[ItemRecord]:
    return bank_records()


@pytest.fixture(scope="module")
def alone(records: list[ItemRecord]) -> list[Any]:
    return aggregate(records, OPTIONS)


def same(left: list[Any], right: list[Any]) -> None:
    """The same aggregates, in the same order, with the same confidence at other levels."""
    assert [a.to_dict() for a in left] == [a.to_dict() for a in right]
    for one, two in zip(left, right, strict=True):
        if one.confidence is not None and one.confidence.reason is None:
            assert one.confidence.interval(0.8) == two.confidence.interval(0.8), one.metric


def test_the_pool_and_this_process_share_the_suites(records, alone, pool) -> None:
    same(aggregate(records, OPTIONS, pool), alone)


def test_suites_given_ahead_are_taken_from_the_pool(records, alone, pool) -> None:
    ahead = SuitesAhead(pool, {s: sum(r.suite == s for r in records) for s in {r.suite for r in records}}, OPTIONS)
    table: dict[tuple[str, str, str], ItemRecord] = {}
    for record in records:
        table[record.key] = record
        ahead.add(record, table)
    given = list(ahead._given.values())
    assert len(given) == 3  # each suite went to the pool when its last record came in
    wait([future for _, future in given])
    same(aggregate(records, OPTIONS, pool, ahead), alone)
    assert all(not future.cancelled() and future.exception() is None for _, future in given)


def test_a_suite_whose_records_changed_is_scored_again(records, alone, pool) -> None:
    ahead = SuitesAhead(pool, {records[0].suite: sum(r.suite == records[0].suite for r in records)}, OPTIONS)
    table = {r.key: r for r in records}
    for record in records:
        ahead.add(record, table)
    replaced = [pickle.loads(pickle.dumps(r)) if r is records[0] else r for r in records]  # a rerun item
    assert ahead.ready(records[0].suite, _by_condition(r for r in replaced if r.suite == records[0].suite)) is None
    same(aggregate(replaced, OPTIONS, pool, ahead), alone)


class BrokenPool(Executor):
    """Every task fails, as in a pool whose process was killed."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_running_or_notify_cancel()
        future.set_exception(RuntimeError("A process in the process pool was terminated abruptly"))
        return future


def test_a_broken_pool_leaves_the_scoring_to_this_process(records, alone) -> None:
    same(aggregate(records, OPTIONS, BrokenPool()), alone)


def test_aggregates_travel_between_processes_whole(alone) -> None:
    """Every confidence pickles (no closures): its intervals and p values at any bound survive."""
    back = pickle.loads(pickle.dumps(alone))
    for one, two in zip(alone, back, strict=True):
        assert one.to_dict() == two.to_dict()
        if one.confidence is not None and one.confidence.reason is None:
            assert one.confidence.interval(0.9) == two.confidence.interval(0.9)
            assert one.confidence.p_greater(one.value) == two.confidence.p_greater(one.value)


class ShutPool(Executor):
    """Takes no work at all, as a pool after a child died (BrokenProcessPool) or shutdown."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        raise RuntimeError("cannot schedule new futures after shutdown")


def test_a_pool_that_takes_no_work_leaves_the_scoring_here(records, alone) -> None:
    ahead = SuitesAhead(ShutPool(), {r.suite: sum(x.suite == r.suite for x in records) for r in records}, OPTIONS)
    table = {}
    for record in records:
        table[record.key] = record
        ahead.add(record, table)  # no error reaches the item that completed its suite
    same(aggregate(records, OPTIONS, ShutPool(), ahead), alone)
