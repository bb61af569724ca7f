"""Numbers in every script's digits, as the translation linter reads them."""

from __future__ import annotations

import pytest

from pytest_optbench.suite.numerals import cjk_value, compare_numbers, numbers


@pytest.mark.parametrize(("text", "value"), [
    ("25%", 25), ("٢٥٪", 25), ("۲۵ درصد", 25), ("२५ प्रतिशत", 25), ("２５％", 25),
    ("1,200 people", 1200), ("1.200 Personen", 1200), ("1 200 personnes", 1200), ("1\u202f200 personnes", 1200),
    ("1\u00a0200", 1200), ("3,5 %", 3.5), ("3.5%", 3.5), ("1.234,5", 1234.5), ("1,234.5", 1234.5),
    ("٣٫٥", 3.5), ("١٬٢٠٠", 1200), ("1'200", 1200),
])
def test_each_script_and_separator_reads_its_value(text, value):
    [found] = numbers(text)
    assert float(value) in found.values


def test_a_space_joins_only_a_group_of_three_digits():
    assert [n.text for n in numbers("in 2 30 days, 10 200-metre runs")] == ["2", "30", "10 200"]


@pytest.mark.parametrize(("numeral", "value"), [
    ("三十", 30), ("十", 10), ("三十五", 35), ("两千五百", 2500), ("一万二千", 12000), ("二〇二四", 2024), ("百", 100),
])
def test_cjk_numerals(numeral, value):
    assert cjk_value(numeral) == value


def test_compare_finds_missing_and_extra_numbers():
    assert compare_numbers("About 30% pass.", "Environ 30 % réussissent.") == ([], [])
    assert compare_numbers("About 30% pass.", "约三十%的人通过。").missing == []  # a CJK numeral may write it
    check = compare_numbers("About 30% pass.", "Environ 40 % réussissent.")
    assert check.missing == ["30"] and check.extra == ["40"]


def test_words_for_numbers_and_counters_are_not_extra():
    # English words a translation writes in digits, and a counter's 1 ("a year" -> 1年).
    assert compare_numbers("over the next two years", "今後2年間").extra == []
    assert compare_numbers("for half an hour", "30분 동안").extra == []
    assert compare_numbers("both technicians left", "技術者は2人とも辞めた").extra == []
    assert compare_numbers("over the following year", "その後の1年間").extra == []
    # A CJK numeral is never extra (一名学生: "a student").
    assert compare_numbers("A student applies.", "一名学生申请了三所学校。").extra == []


def test_roman_numerals_months_and_compound_words():
    # Found in the translated known answers: a century, a regnal number, a month, a compound.
    assert compare_numbers("in the 14th century", "en el siglo XIV") == ([], [])
    assert compare_numbers("in the 14th century", "au XIVe siècle") == ([], [])
    assert compare_numbers("a daughter of King Henry VIII", "헨리 8세의 딸").extra == []
    assert compare_numbers("Is Earth closest to the Sun during July?", "地球が太陽に最も近づくのは7月ですか？").extra == []
    assert compare_numbers("his Ninety-five Theses in 1517", "seine 95 Thesen im Jahr 1517") == ([], [])
    assert compare_numbers("a four-day week", "주 4일 근무").extra == []
    assert compare_numbers("in the 14th century", "au XVe siècle").missing == ["14"]
