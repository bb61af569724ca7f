"""The worker side of a run: its xdist shard, its share of --concurrency, what it builds.

End to end under ``-n 2`` (a crashed worker's replacement, both workers' shares):
tests/integration/test_xdist.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_optbench.options import EngineSettings, RunOptions
from pytest_optbench.plugin import _worker_shard
from pytest_optbench.session.worker import WorkerSession


@pytest.mark.parametrize(("worker_input", "shard"), [
    ({}, (0, 1)),  # a serial run
    ({"workerid": "gw0", "workercount": 2}, (0, 2)),
    ({"workerid": "gw1", "workercount": 2}, (1, 2)),
    ({"workerid": "gw2", "workercount": 2}, (0, 2)),  # replaces a crashed worker: folded into range
    ({"workerid": "gw3", "workercount": 2}, (1, 2)),
    ({"workerid": "gw7", "workercount": 4}, (3, 4)),
    ({"workerid": "gw0", "workercount": 1}, (0, 1)),
])
def test_worker_shard(worker_input, shard) -> None:
    assert _worker_shard(worker_input) == shard


@pytest.fixture
def openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-worker-session")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def worker(tmp_path: Path, concurrency: int, shard: tuple[int, int], model: str = "openai:fake-model",
           batch: bool = False) -> WorkerSession:
    options = RunOptions(model_spec=model, base_url="http://127.0.0.1:9/v1", cache_dir=tmp_path / "store",
                         engine=EngineSettings(concurrency=concurrency), batch=batch)
    session = WorkerSession(options, run_id="run-1", shard=shard)
    session.build_model()
    return session


def worker_limits(tmp_path: Path, concurrency: int, count: int, batch: bool = False) -> list[int]:
    limits = []
    for index in range(count):
        session = worker(tmp_path, concurrency, (index, count), batch=batch)
        try:
            assert session.elicitor is not None
            assert (session.elicitor.shard_index, session.elicitor.shard_count) == (index, count)
            assert session.elicitor.settings.run_id == "run-1"
            limits.append(session.elicitor.settings.concurrency)
        finally:
            session.close()
    return limits


@pytest.mark.parametrize(("concurrency", "count", "limits"), [
    (16, 1, [16]),
    (16, 2, [16, 1]),  # worker 0 asks for every prompt; the other only if it died, one at a time
    (4, 3, [4, 1, 1]),
    (1, 2, [1, 1]),
])
def test_one_worker_asks_with_all_of_concurrency(tmp_path, openai_env, concurrency, count, limits) -> None:
    assert worker_limits(tmp_path, concurrency, count) == limits


@pytest.mark.parametrize(("concurrency", "count", "limits"), [
    (16, 2, [8, 8]),
    (5, 2, [3, 2]),
    (16, 3, [6, 5, 5]),
    (1, 2, [1, 1]),  # every worker needs one request in flight, whatever --concurrency says
])
def test_batch_workers_share_concurrency(tmp_path, openai_env, concurrency, count, limits) -> None:
    """In batch mode each worker submits its own share of the prompts (and asks its json and
    logprobs prompts in real time): the parts add up to --concurrency."""
    assert worker_limits(tmp_path, concurrency, count, batch=True) == limits


def test_only_the_asking_worker_loads_the_sdk_ahead(tmp_path, openai_env) -> None:
    """A first run's asker imports the SDK while items are collected; another worker would only
    slow it down (two imports at once on a small machine)."""
    sessions = [worker(tmp_path, 8, (index, 2)) for index in range(2)]
    try:
        loading = [session.model._preload is not None for session in sessions]
        assert loading == [True, False]
    finally:
        for session in sessions:
            session.close()


def test_a_plain_model_gets_no_engine_and_no_store(tmp_path) -> None:
    session = worker(tmp_path, 16, (0, 2), model="sim:calibrated")
    assert session.model is not None and session.elicitor is None
    assert not (tmp_path / "store").exists()
    session.close()


def test_no_model_means_nothing_is_built(tmp_path) -> None:
    session = WorkerSession(RunOptions(cache_dir=tmp_path / "store"), run_id="run-1")
    session.build_model()
    assert session.model is None and session.elicitor is None
    session.prefetch(model_overridden=False)  # nothing to prefetch with, and no error
    session.close()


def test_an_overridden_model_fixture_means_no_prefetch(tmp_path, openai_env) -> None:
    """The prefetch asks the --model provider only when the items will use it."""
    session = worker(tmp_path, 4, (0, 1))

    class Item:  # what prefetch reads of a collected item
        specs = ("a prompt spec that must never be planned",)

    session.items = [Item()]
    try:
        session.prefetch(model_overridden=True)
        assert session.elicitor is not None and session.elicitor.stats.total == 0
    finally:
        session.close()


def test_where_the_controller_asks_a_worker_waits_and_hands_over(tmp_path, openai_env) -> None:
    """asks=False (the controller asks, session/asker.py): no SDK ahead, one request at a time
    if it must ask at all, and its prompts go to the controller; a hand-over that cannot be
    written leaves xdist's ASKER to ask them, as without the controller."""
    from pytest_optbench.prompts.build import PromptSpec
    from pytest_optbench.session.handover import plan_path, take_over

    spec = PromptSpec("positive", "S", "U", 1, 0.0)

    class Item:
        specs = (spec,)

    sessions = []
    for index, blocked in ((0, False), (0, True)):
        options = RunOptions(model_spec="openai:fake-model", base_url="http://127.0.0.1:9/v1",
                             cache_dir=tmp_path / f"store-{blocked}", engine=EngineSettings(concurrency=8))
        session = WorkerSession(options, run_id="run-1", shard=(index, 2), asks=False)
        session.build_model()
        sessions.append(session)
        if blocked:
            (options.cache_dir / "plans").write_text("in the way")
            session.elicitor.settings = EngineSettings(concurrency=8, offline=True)  # so that nothing is sent
        session.items = [Item()]
    try:
        handed, blocked_session = sessions
        assert handed.elicitor.settings.concurrency == 1 and handed.model._preload is None
        assert not handed.elicitor.asks_for_all
        handed.prefetch(model_overridden=False)
        assert [s.user for s in take_over(plan_path(handed.options.cache_dir, "run-1")) or []] == ["U"]
        assert not handed.elicitor.owns(handed.elicitor.key(spec))  # the controller asks for it
        blocked_session.prefetch(model_overridden=False)
        assert blocked_session.elicitor.asks_for_all  # gw0 asks after all
    finally:
        for session in sessions:
            session.close()
