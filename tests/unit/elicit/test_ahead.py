"""The simulated model's answers computed ahead by a process pool (elicit/ahead.py).

The pool answers chunks of items from the last backwards; the item's records, when taken
from it, are the ones ``engine.elicit`` gives here, to every field.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor, wait
from pathlib import Path

import pytest

from pytest_optbench.elicit.ahead import CHUNK, AnswersAhead
from pytest_optbench.elicit.engine import elicit
from pytest_optbench.options import Settings
from pytest_optbench.prompts.build import PromptSpec, render_prompts
from pytest_optbench.providers.base import as_model
from pytest_optbench.providers.sim import SimulatedModel
from pytest_optbench.suite.load import load_suite

SUITES = Path(__file__).resolve().parents[3] / "suites"


def bank_specs(count: int) -> list[list[PromptSpec]]:
    """The prompts of ``count`` items x conditions from two bundled suites (two languages)."""
    out = []
    for name in ("en/track_b.yaml", "ja/known_answers.yaml"):
        suite = load_suite(SUITES / name)
        assert suite is not None
        out += [render_prompts(suite, item, condition, Settings(samples=3))
                for item in suite.items for condition in suite.conditions]
    return out[:count]


@pytest.fixture(scope="module")
def pool() -> Iterator[ProcessPoolExecutor]:
    executor = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    yield executor
    executor.shutdown(wait=True, cancel_futures=True)


def test_records_from_the_pool_are_the_records_computed_here(pool) -> None:
    model = SimulatedModel("optimist?noise_sd=4")
    items = bank_specs(3 * CHUNK + 5)
    ahead = AnswersAhead(pool, model, items)
    wait([f for f in ahead._chunks if f is not None])  # the pool has answered every chunk
    here = as_model(SimulatedModel("optimist?noise_sd=4"))
    for specs in items:
        taken = ahead.take(specs)
        assert taken is not None
        assert taken == elicit(here, specs)
    ahead.close()


def test_a_chunk_the_pool_has_not_started_is_answered_here(pool) -> None:
    model = SimulatedModel("calibrated")
    items = bank_specs(2 * CHUNK)
    ahead = AnswersAhead(pool, model, items)
    here = as_model(SimulatedModel("calibrated"))
    # The first chunk is submitted last: while the pool's one process works on the second, it
    # waits, so it is cancelled and all its items are answered here. Had the pool already
    # started it, its records are taken.
    first = ahead.take(items[0])
    if first is None:
        assert ahead._chunks[0] is None
        assert all(ahead.take(specs) is None for specs in items[1:CHUNK])
    else:
        assert first == elicit(here, items[0])
    assert ahead.take([PromptSpec("x", "", "?", 1, 0.0)]) is None  # not an item of the run
    ahead.close()
    assert ahead.take(items[-1]) is None  # closed: everything is answered here


class CountingFuture(Future[list[list[object]]]):
    """A finished chunk that counts how often its result is asked for."""

    def __init__(self, records: list[list[object]]) -> None:
        super().__init__()
        self.set_result(records)
        self.asked = 0

    def result(self, timeout: float | None = None) -> list[list[object]]:
        self.asked += 1
        return super().result(timeout)


class FinishedPool:
    """Answers every chunk at once, with placeholders that name the item."""

    def __init__(self) -> None:
        self.futures: list[CountingFuture] = []

    def submit(self, fn, model, chunk):
        self.futures.append(CountingFuture([[f"records of {specs[0].user}"] for specs in chunk]))
        return self.futures[-1]


def test_a_chunk_is_taken_from_the_pool_once_for_all_its_items() -> None:
    items = bank_specs(CHUNK + 3)
    pool = FinishedPool()
    ahead = AnswersAhead(pool, SimulatedModel("calibrated"), items)  # type: ignore[arg-type]
    assert [ahead.take(specs) for specs in items] == [[f"records of {specs[0].user}"] for specs in items]
    assert [f.asked for f in pool.futures] == [1, 1]  # one wait per chunk, not one per item
    ahead.close()


def test_the_model_travels_without_its_memo() -> None:
    model = SimulatedModel("optimist")
    specs = bank_specs(2)
    elicit(as_model(model), specs[0])
    assert model._memo
    state = model.__getstate__()
    assert state["_memo"] == {} and state["profile"] == model.profile and model._memo


def test_a_broken_pool_leaves_the_answers_to_this_process() -> None:
    executor = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    items = bank_specs(CHUNK + 2)
    ahead = AnswersAhead(executor, SimulatedModel("calibrated"), items)
    for process in list(executor._processes.values()):  # killed, as by the OOM killer
        process.kill()
    wait([f for f in ahead._chunks if f is not None])
    here = as_model(SimulatedModel("calibrated"))
    for specs in items:
        taken = ahead.take(specs)
        assert taken is None or taken == elicit(here, specs)
    assert all(chunk is None for chunk in ahead._chunks)  # each one failed: answered here
    executor.shutdown(wait=True)
