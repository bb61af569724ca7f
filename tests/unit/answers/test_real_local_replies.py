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


OPEN = ("Of new restaurants in the city, 30% are still open after five years. A new restaurant opens.\n\n"
        "What is the probability that the restaurant is still open after five years?")
E_OPEN = "the probability of the restaurant still being open after five years"

# The rules the real replies above changed, each with a positive and a negative case of our own:
# (rule, reply where it applies, its reading, reply where it does not, that reading).
RULE_CASES: list[tuple[str, str, float | None, str, float | None]] = [
    ("present.short-sentence: not in a sentence working out arithmetic",
     "The probability of the restaurant closing is 0.8. Multiplying this probability by 100 gives 80%.", None,
     "The probability of the restaurant closing is 0.8. So, about 80%.", 80),
    ("present.short-sentence: a factor after x",
     "Probability = (Probability of staying open) x 100%", None,
     "Staying open is 100% for me.", 100),
    ("context.step: a sentence that starts by multiplying this probability",
     ("The probability of one good year is 1/2. Multiplying this probability by itself gives the chance of two good "
     "years."), None,
     "The probability that the restaurant is still open is 1/2. Multiplying the rent by two is another matter.", 50),
    ("context.step: next, we calculate the probability",
     (f"First, we calculate {E_OPEN}, which is 50%.\n\nNext, we calculate {E_OPEN}, which is 1 - 0.6 = 40%.\n\n"
     f"So, {E_OPEN} is 40%."), 40,
     f"{E_OPEN.capitalize()} is 50%. Next, we relax.", 50),
    ("context.step: but it is not the probability of",
     f"{E_OPEN.capitalize()} is 0. This is a special case, but it is not {E_OPEN}.", None,
     f"{E_OPEN.capitalize()} is 20%. This is not a guess.", 20),
    ("context.step: now, we need to find the probability",
     f"{E_OPEN.capitalize()} is 45%.\n\nNow, we need to find {E_OPEN}.", None,
     f"{E_OPEN.capitalize()} is 45%.\n\nNow, the owner is happy.", 45),
    ("context.other-event: X, which is the probability of E",
     "In this case, P(A) is 50%, which is the probability of the owner retiring.", None,
     f"In this case, P(A) is 50%, which is {E_OPEN}.", 50),
    ("context.other-event: the probability of E (X)",
     "The answer is the ratio of the probability of one trial (1/2) to the probability of another trial (1/2).", None,
     f"So, {E_OPEN} (40%) is what I would go with.", 40),
    ("quantity.restated-later: a fraction's ', which is'",
     "The probability that the restaurant is still open is 3/10, which is 0.35, or 35%.", 35,
     "The probability that the restaurant is still open is 3/10, and 1/4 of them expand.", 30),
    ("quantity.operand: a bracketed operand of ^",
     "The probability is (1/2)^2 = 1/4.", 25,
     "The probability is (1/2) = 50%.", 50),
]


@pytest.mark.parametrize(("rule", "positive", "positive_value", "negative", "negative_value"), RULE_CASES,
                         ids=[c[0] for c in RULE_CASES])
def test_rule_changed_by_a_real_reply(rule: str, positive: str, positive_value: float | None, negative: str,
                                      negative_value: float | None) -> None:
    for reply, expected in ((positive, positive_value), (negative, negative_value)):
        parsed = parse_answer(reply, question=OPEN)
        assert parsed.value == (None if expected is None else pytest.approx(expected)), explain(
            reply, question=OPEN).text()
