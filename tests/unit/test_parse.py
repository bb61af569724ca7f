"""Unit tests for pytest_optbench.parse (free text -> 0-100 value or a reason)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_optbench.elicit.parse import Parsed, parse_answer
from pytest_optbench.providers.sim import _STYLES

# --------------------------------------------------------------------------- fixed tables

GOOD = [
    ("65", 65),
    ("65%", 65),
    ("About 65%.", 65),
    ('{"probability": 65}', 65),
    ('{"answer": "70%"}', 70),
    ("65/100", 65),
    ("7 out of 10", 70),
    ("60-70%", 65),
    ("between 60 and 70 percent", 65),
    ("Probability: 65% given 3 months", 65),
    ("The answer is 42.", 42),
    ("0", 0),
    ("100", 100),
    ("100%", 100),
    ("65 %", 65),
    ("65.5%", 65.5),
    ("65,5", 65.5),  # decimal comma
    ("+5", 5),
    ('  {"Probability": 12}  ', 12),  # JSON keys are case-insensitive
    ('Here you go: {"estimate": 33}', 33),
    ("I'd estimate the probability at 80 percent.", 80),
]

NATIVE = [
    ("\u0666\u0665", 65),  # Arabic-Indic ٦٥
    ("\u0666\u0665\u066a", 65),  # ٦٥٪ with the Arabic percent sign
    ("\u096c\u096b", 65),  # Devanagari ६५
    ("\uff16\uff15\uff05", 65),  # full-width ６５％
    ("\u06f6\u06f5", 65),  # Extended Arabic-Indic (Persian) ۶۵
]

BAD = [
    ("", "empty"),
    ("   ", "empty"),
    ("I can't estimate this.", "no number"),
    ("150", "outside 0-100"),
    ("-5", "outside 0-100"),
    ("3 and 65", "several different numbers"),
    ('{"foo": 1}', "none of the keys"),
    ("0/0", "zero denominator"),
    ("3 out of 2", "above 1"),
    ('{"probability": true}', "boolean"),
    ('{"probability": [65]}', "not a number"),
    ('{"probability": 150}', "outside 0-100"),
    ('{"p": "no idea"}', "no number"),
    ("5\u2030", "per-mille"),
]


@pytest.mark.parametrize(("text", "expected"), GOOD + NATIVE, ids=lambda v: repr(v))
def test_parses_known_forms(text: str, expected: float) -> None:
    result = parse_answer(text)
    assert result.ok
    assert result.value == pytest.approx(expected)
    assert result.reason is None


@pytest.mark.parametrize(("text", "why"), BAD, ids=lambda v: repr(v))
def test_rejects_with_a_reason(text: str, why: str) -> None:
    result = parse_answer(text)
    assert result.value is None
    assert not result.ok
    assert isinstance(result.reason, str) and result.reason.strip()
    assert why in result.reason


def test_none_is_an_empty_answer() -> None:
    result = parse_answer(None)  # type: ignore[arg-type]
    assert result.value is None and result.reason == "empty answer"


def test_ambiguous_reason_lists_the_numbers() -> None:
    reason = parse_answer("3 and 65").reason
    assert reason is not None and "3" in reason and "65" in reason


# --------------------------------------------------------------------------- regressions


def test_huge_json_integer_is_a_reason_not_a_crash() -> None:
    result = parse_answer('{"probability": 1' + "0" * 400 + "}")
    assert result.value is None and result.reason


def test_deeply_nested_json_is_a_reason_not_a_crash() -> None:
    depth = 100_000
    result = parse_answer('{"p": ' + "[" * depth + "]" * depth + "}")
    assert result.value is None and result.reason


# --------------------------------------------------------------------------- properties

SIM_STYLES = list(_STYLES)


def test_sim_styles_are_the_ones_listed_in_the_brief() -> None:
    # If the simulator grows a style, the property below covers it automatically; this guards
    # against the list silently shrinking.
    assert {
        "{v}", "About {v}%.", '{{"probability": {v}}}', "{v}/100",
        "I'd estimate the probability at {v} percent.", "Probability: {v}%",
    } <= set(SIM_STYLES)


@given(v=st.integers(0, 100), style=st.sampled_from(SIM_STYLES))
def test_every_sim_style_round_trips(v: int, style: str) -> None:
    assert parse_answer(style.format(v=v)) == Parsed(float(v), None)


@given(text=st.text())
def test_never_raises_and_is_either_a_value_or_a_reason(text: str) -> None:
    result = parse_answer(text)
    _check_shape(result)


# Text built from the parser's own vocabulary finds more branches than st.text() alone.
_TOKENS = st.sampled_from([
    " ", "%", "percent", "/", " out of ", "-", " to ", "between ", " and ", "{", "}", '"', ":",
    "probability", "answer", "estimate", ".", ",", "\u066a", "\uff05", "\u0665", "\u096b",
    "\uff15", "\u2030", "[", "]", "true", "null",
])
_PIECES = st.one_of(_TOKENS, st.integers(-200, 300).map(str), st.floats(0, 200).map(lambda f: f"{f:.2f}"))


@given(st.lists(_PIECES, max_size=12).map("".join))
def test_never_raises_on_answer_like_text(text: str) -> None:
    _check_shape(parse_answer(text))


@given(key=st.sampled_from(["probability", "answer", "percent", "p"]),
       value=st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=True), st.booleans(),
                       st.none(), st.text(max_size=10), st.lists(st.integers(), max_size=2)))
def test_json_answers_never_raise(key: str, value: object) -> None:
    result = parse_answer(json.dumps({key: value}))
    _check_shape(result)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 100:
        assert result.value == value


def _check_shape(result: Parsed) -> None:
    assert isinstance(result, Parsed)
    if result.value is not None:
        assert 0 <= result.value <= 100
        assert result.reason is None
    else:
        assert isinstance(result.reason, str) and result.reason.strip()


NATIVE_ZEROS = {"arabic-indic": 0x0660, "devanagari": 0x0966, "full-width": 0xFF10,
                "extended-arabic-indic": 0x06F0}


def _native(v: int, zero: int) -> str:
    return "".join(chr(zero + int(d)) for d in str(v))


@given(v=st.integers(0, 100), script=st.sampled_from(sorted(NATIVE_ZEROS)),
       suffix=st.sampled_from(["", "%", "\u066a", "\uff05", " percent"]))
def test_native_digits(v: int, script: str, suffix: str) -> None:
    assert parse_answer(_native(v, NATIVE_ZEROS[script]) + suffix) == Parsed(float(v), None)


@given(v=st.integers(0, 100), script=st.sampled_from(sorted(NATIVE_ZEROS)),
       style=st.sampled_from(SIM_STYLES))
def test_native_digits_in_every_sim_style(v: int, script: str, style: str) -> None:
    assert parse_answer(style.format(v=_native(v, NATIVE_ZEROS[script]))).value == v
