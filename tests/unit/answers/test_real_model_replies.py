"""The real replies that showed issue 26's faults, each a case of its own.

Recorded from SmolLM2-135M-Instruct and Gemma 3 270M served by llama.cpp
(docs/local-models.md section 8): what the server returned, and what the plugin now reads."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_optbench.answers import distribution as D
from pytest_optbench.elicit.engine import read_answer
from pytest_optbench.prompts import modes

REPLIES = json.loads((Path(__file__).parent / "issue26_logprobs_replies.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(REPLIES))
def test_a_digit_tokenizers_greedy_100_is_not_read_as_its_first_digit(name: str) -> None:
    # Greedy " 100%", digit by digit. The old reader gave the expectation of the leading
    # digit with a shared continuation (39.2 and 42.5); followed position by position, the
    # models' numbers spread over the whole scale (100 holds 4-6 %), so there is no answer.
    case = REPLIES[name]
    positions, probes = D.from_stored(case["stored"])
    assert case["greedy"].strip() == "100%" and D.splits_digits(positions)
    assert D.read(positions).reason == D.DIGITS_NOT_FOLLOWED  # without the probes: declined
    assert probes is not None and 1 <= len(probes) <= D.MAX_PROBES
    reading = D.read(positions, probes=probes)
    assert reading.value is None and reading.reason.startswith(D.SPREAD)
    walked = D.walk(positions, probes).values
    total = sum(walked.values())
    assert max(walked.values()) / total < 0.15 and len(walked) > 40
    assert D.next_probe(positions, probes) is None or len(probes) == D.MAX_PROBES


def test_probes_are_the_position_after_their_prefix() -> None:
    case = REPLIES["gemma3_completions_100"]
    positions, probes = D.from_stored(case["stored"])
    assert D.number_lead(positions) == " "  # Gemma writes a blank token, then the digits
    assert "1" not in probes  # the generated path already says what follows "1"
    assert all(prefix.isdigit() and len(prefix) <= 2 for prefix in probes)


@pytest.mark.parametrize(("reply", "value"), [
    # json mode under the integer schema: the grammar stopped "0.25" after its "0" and 0 was
    # recorded. Under the number schema the models write the decimals, read on its scale.
    ('{"probability": 0.25}', 25.0), ('{"probability": 0.9999}', 99.99), ('{"probability": 0.0000}', 0.0),
    ('{"probability": 100.0000}', 100.0), ('{"probability": 1.5}', 1.5),
    # SmolLM2 through the scaffold writes " {" (as its examples show) and fractions.
    (' {"probability": 1/2}', 50.0), (' {"probability": 1/100}', 1.0),
    # Exactly 1: 1 % or certainty? Declined.
    ('{"probability": 1}', None),
])
def test_json_replies_of_the_real_models(reply: str, value: float | None) -> None:
    assert re.fullmatch(modes.ANSWER_REGEX, reply)
    answer = read_answer(reply, modes.JSON, "What is the probability that the paper is accepted?")
    assert answer.mode == modes.JSON and answer.value == value


def test_gemmas_whitespace_reply_cannot_happen_under_the_grammar() -> None:
    # Gemma through the chat endpoint under llama.cpp's JSON-schema grammar: 48 tokens of
    # whitespace inside the object, cut off; nothing usable. The grammar has no such room.
    reply = '{\n \t \t \t \t \t \t \t \t \t \t \t \t \t \t \t \t \t \t \t \t \t '
    assert not re.fullmatch(modes.ANSWER_REGEX, reply)
    answer = read_answer(reply, modes.JSON, "q", truncated=True)
    assert answer.value is None
