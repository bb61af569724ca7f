"""Token log-probabilities -> the answer's distribution (elicit/distribution.py)."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pytest_optbench.answers import distribution as D
from pytest_optbench.answers.distribution import Position


def pos(token: str, p: float, *alts: tuple[str, float]) -> Position:
    return Position(token, math.log(p), tuple((t, math.log(q)) for t, q in ((token, p), *alts)))


END = Position("<|im_end|>", 0.0, (("<|im_end|>", 0.0),))


def test_whole_number_tokens_give_the_expected_value_and_distribution() -> None:
    reading = D.read([pos("65", 0.6, ("70", 0.2), ("The", 0.2)), END])
    assert reading.value == pytest.approx((65 * 0.6 + 70 * 0.2) / 0.8)
    assert reading.mass == pytest.approx(0.8)
    assert reading.distribution == {"65": 0.75, "70": 0.25}


def test_digit_tokens_are_followed_position_by_position() -> None:
    # "6" then "5" (or "0"): the generated path says what follows "6"; what follows the
    # alternative "7" comes from a probe (the prompt extended by "7"), not from "6"'s path.
    positions = [pos("6", 0.8, ("7", 0.2)), pos("5", 0.5, ("0", 0.5)), END]
    assert D.splits_digits(positions) and D.next_probe(positions, {}) == "7"
    reading = D.read(positions, probes={"7": [("0", math.log(0.9)), ("%", math.log(0.1))]})
    assert reading.distribution == {"60": 0.4, "65": 0.4, "7": 0.02, "70": 0.18}
    assert reading.value == pytest.approx(0.4 * 60 + 0.4 * 65 + 0.02 * 7 + 0.18 * 70)
    assert D.next_probe(positions, {"7": [("0", 0.0)]}) is None  # nothing left unknown


def test_a_digit_tokenizer_without_probes_gives_no_numeric_answer() -> None:
    # The first digit's alternatives are not a distribution over 0-100 (issue 26): declined,
    # never read as an expectation of leading digits.
    reading = D.read([pos("6", 0.8, ("7", 0.2)), pos("5", 0.5, ("0", 0.5)), END])
    assert reading.value is None and reading.reason == D.DIGITS_NOT_FOLLOWED


def test_one_hundred_in_digit_tokens() -> None:
    reading = D.read([pos("1", 1.0), pos("0", 1.0), pos("0", 0.9, ("%", 0.1)), END], probes={})
    assert reading.distribution == {"10": 0.1, "100": 0.9}


def test_a_leading_blank_passes_its_probability_on() -> None:
    # Gemma: " " then digits; " 7" among the blank's alternatives is a number too.
    positions = [pos(" ", 0.5, (" 7", 0.2), (" The", 0.3)), pos("8", 1.0), pos("0", 1.0), END]
    assert D.number_lead(positions) == " " and D.next_probe(positions, {}) == "7"
    reading = D.read(positions, probes={"7": [("5", 0.0)]})
    assert reading.mass == pytest.approx(0.7)
    assert reading.value == pytest.approx((75 * 0.2 + 80 * 0.5) / 0.7)


@pytest.mark.parametrize("variant", ["65", " 65", "Ġ65", "▁65", "  65"])
def test_spelling_variants_read_alike(variant: str) -> None:
    assert D.read([Position(variant, math.log(0.9), ((variant, math.log(0.9)),))]).value == 65


def test_bytes_fields_decide_the_text() -> None:
    content = [{"token": "<0x36>", "logprob": -0.1, "bytes": [54],
                "top_logprobs": [{"token": "<0x36>", "logprob": -0.1, "bytes": [54]}]},
               {"token": "x", "logprob": 0.0, "bytes": [53], "top_logprobs": []}]
    positions = D.positions_from_chat(content)
    assert [p.token for p in positions] == ["6", "5"]


def test_too_little_mass_on_numbers_is_no_answer() -> None:
    reading = D.read([pos("To", 0.9, ("5", 0.05)), pos(" calculate", 1.0)])
    assert reading.value is None and reading.reason and reading.reason.startswith(D.LOW_MASS)


@pytest.mark.parametrize(("path", "reason"), [(["0", ".", "25"], D.SCALE_01), ([" 1", "/", "4"], D.FRACTION)])
def test_decimals_on_a_0_1_scale_and_fractions_are_no_answer(path: list[str], reason: str) -> None:
    assert D.read([pos(t, 0.9) for t in path]).reason == reason


def test_yes_no_items_read_p_yes_from_the_answer_token() -> None:
    reading = D.read([pos("Yes", 0.6, (" no", 0.2), ("I", 0.2))], yes_no=True)
    assert reading.value == pytest.approx(75.0) and reading.mass == pytest.approx(0.8)
    assert D.read([pos("▁Ja", 0.9, ("Nein", 0.1))], yes_no=True).value == pytest.approx(90.0)
    # A model that answers with a number although asked yes/no is read as a number.
    assert D.read([pos("80", 0.9), END], yes_no=True).value == 80


def test_legacy_completions_and_llama_cpp_shapes() -> None:
    legacy = {"tokens": [" 40"], "token_logprobs": [-0.1], "top_logprobs": [{" 40": -0.1, " 30": -2.5}]}
    assert D.read(D.positions_from_completion(legacy)).value == pytest.approx(39.2, abs=0.1)
    llama = {"content": [{"token": "7", "logprob": -0.1, "top_logprobs": [{"token": "7", "logprob": -0.1}]}]}
    assert D.read(D.positions_from_completion(llama)).value == 7


def test_store_form_round_trips() -> None:
    positions = [pos("65", 0.8, ("70", 0.2)), Position("5", -math.inf, ())]
    again = D.from_json(D.to_json(positions))
    assert D.read(again).value == pytest.approx(D.read(positions).value)
    assert D.from_json([["bad"], "x", None]) == []
    digits = [pos("6", 0.8, ("7", 0.2)), pos("5", 1.0), END]
    kept, probes = D.from_stored(D.stored(D.to_json(digits), {"7": [("0", -0.1), ("bad", -math.inf)]}, " "))
    assert probes == {"7": [("0", -0.1), ("bad", -math.inf)]} and len(kept) == 3
    assert D.from_stored(D.to_json(digits))[1] is None  # not followed
    assert D.from_stored({"positions": [], "probes": {"x": [], "1": "no"}}) == ([], {})


tokens = st.sampled_from(["0", "1", "5", "7", "10", "25", "65", "99", "100", "250", "The", " ", "I", "%",
                          "\n", ".", "/", "Yes", "no", "Ġ4", "▁9", "3%", "abc"])
position = st.builds(lambda token, lp, alts: Position(token, lp, tuple(alts)), tokens,
                     st.floats(-20, 0), st.lists(st.tuples(tokens, st.floats(-20, 0)), max_size=8))


@settings(max_examples=150, deadline=None)
@given(st.lists(position, min_size=1, max_size=5), st.booleans())
# Found by Hypothesis: all of the mass on "Yes" once read 100.00000000000001.
@example(positions=[Position("0", -7.5, (("1", -1.75), ("5", -2.5), ("Yes", 0.0)))], yes_no=True)
def test_mass_and_value_stay_in_range(positions: list[Position], yes_no: bool) -> None:
    reading = D.read(positions, yes_no=yes_no)
    assert 0.0 <= reading.mass <= 1.0 + 1e-9
    if reading.value is not None:
        assert 0.0 <= reading.value <= 100.0
        assert reading.mass >= D.MIN_MASS - 1e-9
        assert reading.reason is None
    else:
        assert reading.reason
    assert all(0 <= p <= 1 for p in reading.distribution.values())


@settings(max_examples=100, deadline=None)
@given(st.lists(position, min_size=1, max_size=4), st.sampled_from(["Ġ", "▁", " "]))
def test_marker_spellings_do_not_change_the_reading(positions: list[Position], marker: str) -> None:
    def respell(token: str) -> str:
        return token.replace("Ġ", marker).replace("▁", marker)

    other = [Position(respell(p.token), p.logprob, tuple((respell(t), lp) for t, lp in p.top)) for p in positions]
    first, second = D.read(positions), D.read(other)
    assert first.value == pytest.approx(second.value) if first.value is not None else second.value is None
    assert first.mass == pytest.approx(second.mass)


@settings(max_examples=100, deadline=None)
@given(st.floats(0.0, 0.49), st.integers(0, 100))
def test_no_answer_below_the_threshold(share: float, value: int) -> None:
    rest = 1.0 - share
    positions = [Position(str(value), math.log(max(share, 1e-9)),
                          ((str(value), math.log(max(share, 1e-9))), ("The", math.log(rest)))), END]
    reading = D.read(positions)
    assert reading.value is None and reading.mass < D.MIN_MASS


def test_only_a_clear_end_ends_the_number() -> None:
    # After "1": "%" ends it (1), "0" goes on (10), " in" may be "1 in 4": that share is lost.
    reading = D.read([pos("1", 1.0), pos("0", 0.5, ("%", 0.25), (" in", 0.25)), END], probes={})
    assert reading.distribution == {"1": pytest.approx(1 / 3, abs=1e-4), "10": pytest.approx(2 / 3, abs=1e-4)}
    assert reading.mass == pytest.approx(0.75)
    assert D.read([pos("6", 0.9), pos("5", 0.9), pos(" percent", 0.9)], probes={}).value == pytest.approx(65)


def test_a_distribution_spread_over_the_scale_has_no_answer() -> None:
    # Half on 5, half on 95: the mean (50) is no answer the model gives.
    reading = D.read([pos("5", 0.5, ("95", 0.5)), END])
    assert reading.value is None and reading.reason.startswith(D.SPREAD) and "sd 45" in reading.reason
    assert D.read([pos("60", 0.5, ("70", 0.5)), END]).value == 65  # sd 5: an answer


@pytest.mark.parametrize(("tokens", "split"), [
    (["65", "%"], False),  # one token per number
    (["6", "5"], True),  # the number goes on digit by digit
    ([" ", "1", "0", "0"], True),  # Gemma: a blank, then digits
    (["To", " calculate"], False),  # no number
])
def test_the_tokenizer_is_read_from_the_reply(tokens: list[str], split: bool) -> None:
    assert D.splits_digits([pos(t, 0.9) for t in tokens]) is split
    # Single digits only among the alternatives (a one-digit reply) say the same.
    assert D.splits_digits([pos("7", 0.6, ("5", 0.2), ("8", 0.1)), END])
    assert not D.splits_digits([pos("7", 0.6, ("25", 0.2), ("8", 0.1)), END])


@pytest.mark.parametrize("path", [[" 1", " in", " 4"], ["60", "-", "70"]])
def test_a_generated_path_that_goes_on_after_its_digits_is_no_answer(path: list[str]) -> None:
    assert D.read([pos(t, 0.9) for t in path]).reason == D.FRACTION


def test_a_yes_no_reply_with_neither_yes_no_nor_a_number_says_yes_and_no() -> None:
    # Gemma 3 270M through llama.cpp's chat endpoint (a template it does not know) echoes the
    # question: "Does Canada have a border with the United". Its first position (the real top
    # alternatives, shortened) holds no yes, no or number: the reason names yes and no, what
    # the question asked for, not "too little probability on numbers".
    top = (("Does", -1.529456), ("Is", -2.155835), ("Do", -2.469529), ("What", -2.506516), ("Can", -3.19418),
           ("<", -3.527287), ("The", -4.483983), ("Answer", -4.938313))
    positions = [Position("Does", -1.529456, top), Position(" Canada", -0.403082, ((" Canada", -0.403082),))]
    reading = D.read(positions, yes_no=True)
    assert reading.value is None and reading.reason == f"{D.LOW_MASS_YES_NO} (0.00 < 0.5)"
    assert reading.distribution == {}
    # A reply that starts with a number on a yes/no item is still read as a number.
    numeric = D.read([pos("65", 0.9, ("Yes", 0.05)), END], yes_no=True)
    assert numeric.value == pytest.approx((65 * 0.9) / 0.9) and numeric.reason is None
