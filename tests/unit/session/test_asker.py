"""The controller that asks under xdist (session/asker.py) and the prompts its workers hand it
(session/handover.py). End to end under ``-n 2``: tests/integration/test_xdist.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_optbench.elicit.store import answer_key
from pytest_optbench.options import EngineSettings, RunOptions
from pytest_optbench.prompts import modes
from pytest_optbench.prompts.build import PromptSpec
from pytest_optbench.session.asker import ControllerAsker, start_asker
from pytest_optbench.session.handover import hand_over, plan_path, take_over
from pytest_optbench.testing import FakeAPI

SPECS = [
    PromptSpec("positive", "You estimate.", "What is the probability that it rains?", 4, 0.7, {"item": "a"}),
    PromptSpec("yes", "Answer yes or no.", "Is Lima west of Miami? \u00e9\u6f22", 1, 0.0, {"item": "b"},
               modes.LOGPROBS, True),
    PromptSpec("negative", "S", "U", 2, 1.0, {}, modes.JSON),
]
KEY_FIELDS = ("system", "user", "samples", "temperature", "mode", "yes_no")


def test_the_prompts_handed_over_keep_every_field_of_the_request_and_key(tmp_path: Path) -> None:
    assert take_over(plan_path(tmp_path, "run-1")) is None  # nothing handed over yet
    assert hand_over(tmp_path, "run-1", SPECS)
    taken = take_over(plan_path(tmp_path, "run-1"))
    assert taken is not None
    assert [[getattr(s, f) for f in KEY_FIELDS] for s in taken] == [[getattr(s, f) for f in KEY_FIELDS] for s in SPECS]
    identity = {"provider": "openai", "model": "m", "base_url": None}
    assert [answer_key(identity, s.system, s.user, s.temperature, 256, s.mode) for s in taken] == [
        answer_key(identity, s.system, s.user, s.temperature, 256, s.mode) for s in SPECS]
    assert not plan_path(tmp_path, "run-1").exists()  # taken once
    assert not list(plan_path(tmp_path, "run-1").parent.iterdir())  # no temporary file left


def test_no_prompts_is_word_too(tmp_path: Path) -> None:
    """A conftest model answers: the workers hand over nothing, which is not 'not yet'."""
    assert hand_over(tmp_path, "run-1", [])
    assert take_over(plan_path(tmp_path, "run-1")) == []


def test_a_folder_that_cannot_be_written_is_said(tmp_path: Path) -> None:
    (tmp_path / "plans").write_text("a file where the folder should be")
    assert not hand_over(tmp_path, "run-1", SPECS)


def options(tmp_path: Path, model: str, **changes) -> RunOptions:
    return RunOptions(**{"model_spec": model, "cache_dir": tmp_path / "store", "engine": EngineSettings(concurrency=4),
                         **changes})


@pytest.mark.parametrize(("model", "changes"), [
    (None, {}),
    ("sim:calibrated", {}),  # answered in the workers' own processes
    ("openai:fake", {"batch": True}),  # each worker submits its own share
    ("openai:fake", {"engine": EngineSettings(offline=True)}),  # nothing is asked at all
])
def test_the_controller_asks_only_for_an_api_model_in_real_time(tmp_path, monkeypatch, model, changes) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-asker")
    asker = start_asker(options(tmp_path, model, base_url="http://127.0.0.1:9/v1", **changes), "run-1")
    assert asker is None


def test_the_controller_asks_what_it_is_handed_with_all_of_the_concurrency(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-asker")
    with FakeAPI(answer=lambda request, index: "40") as api:
        run_options = options(tmp_path, "openai:fake", base_url=api.openai_url)
        asker = start_asker(run_options, "run-1")
        assert isinstance(asker, ControllerAsker)
        try:
            assert asker.session.elicitor is not None and asker.session.elicitor.settings.concurrency == 4
            assert hand_over(run_options.cache_dir, "run-1", SPECS[:1])
            asker._thread.join(timeout=30)  # it asks, and is done
            counts = asker.finish()
            stored = asker.session.elicitor.stored(asker.session.elicitor.key(SPECS[0]))
        finally:
            asker.close()
    assert counts is not None and counts["requests"] == len(api.requests) == 1
    assert sorted(stored) == [0, 1, 2, 3]


def test_finish_stops_a_controller_that_was_never_handed_anything(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-asker")
    asker = start_asker(options(tmp_path, "openai:fake", base_url="http://127.0.0.1:9/v1"), "run-1")
    assert asker is not None
    try:
        assert asker.finish()["requests"] == 0
        assert not asker._thread.is_alive()
    finally:
        asker.close()
