"""Real replies of the two local models (docs/local-models.md: SmolLM2-135M-Instruct and
Gemma 3 270M served by llama.cpp), each read as a careful reader reads it.

``real_local_replies.json``: verbatim replies recorded on 2026-12-02 in text mode
(bench/bench_real_model.py) and as the greedy unconstrained replies of bench/bench_real_check.py,
with the question sent and whether the server cut the reply off (``finish_reason: length``).
``label`` follows the shared corpus's labelling standard (the probability the reply states as
its answer to the question asked, or None); ``rule``, where given, is the rule that must decide;
``why`` is the hand check's note; ``finished_label``, where given, is the reading had the model
stopped there itself (the negative case of a truncation rule)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_optbench.answers.explain import explain
from pytest_optbench.answers.parse import parse_answer

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "real_local_replies.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_real_local_model_reply(case: dict[str, Any]) -> None:
    parsed = parse_answer(case["reply"], question=case["question"], truncated=case["truncated"])
    shown = explain(case["reply"], question=case["question"], truncated=case["truncated"]).text()
    expected = case["label"]
    assert parsed.value == (None if expected is None else pytest.approx(expected)), shown
    if case.get("rule"):
        assert parsed.rule == case["rule"], shown


@pytest.mark.parametrize("case", [c for c in CASES if "finished_label" in c],
                         ids=[c["name"] for c in CASES if "finished_label" in c])
def test_the_same_reply_finished_there(case: dict[str, Any]) -> None:
    parsed = parse_answer(case["reply"], question=case["question"], truncated=False)
    assert parsed.value == pytest.approx(case["finished_label"])


def test_the_set_is_labelled_and_unique() -> None:
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names))
    assert all(c["why"] and c["model"] in ("smollm2", "gemma3") for c in CASES)
