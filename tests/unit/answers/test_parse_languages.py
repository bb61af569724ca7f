"""Answers in the ten bundled languages: native digits, percent signs and words."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_optbench.answers.parse import parse_answer

NATIVE_ZERO = {"arabic-indic": 0x0660, "persian": 0x06F0, "devanagari": 0x0966, "full-width": 0xFF10,
               "bengali": 0x09E6}


def native(value: int, zero: int) -> str:
    return "".join(chr(zero + int(d)) for d in str(value))


@pytest.mark.parametrize("text", [
    "65 por ciento", "La probabilidad es 65 por ciento, en 3 meses.",
    "La probabilité est de 65 %.", "65 pour cent, sur 3 mois",
    "Wahrscheinlichkeit: 65 Prozent bei 3 Monaten", "Вероятность: 65% за 3 месяца", "65 процентов",
    "확률은 65퍼센트입니다", "65퍼센트 (3개월)", "確率は65パーセントです", "3か月で65%",
    "概率为65％", "百分之65，3个月内", "约65%。", "संभावना ६५ प्रतिशत है", "٦٥ في المائة", "الاحتمال ٦٥٪ خلال ٣ أشهر",
    "۶۵٪", "６５",
])
def test_answers_in_the_bundled_languages(text):
    assert parse_answer(text).value == 65


@given(st.integers(0, 100), st.sampled_from(sorted(NATIVE_ZERO)), st.sampled_from(["{}", "{}%", "{}٪", "{}％"]))
def test_native_digit_systems_with_percent_signs(value, system, style):
    assert parse_answer(style.format(native(value, NATIVE_ZERO[system]))).value == value
