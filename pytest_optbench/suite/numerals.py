"""Numbers written in a text, in any script's digits, for the translation linter. Pure.

A translation must keep every number of its English source (a Track A rate, a ladder's
dose), but writes it the way its language does: Arabic-Indic (٠-٩) or Extended
Arabic-Indic (۰-۹) digits, Devanagari (०-९), full-width (０-９); thousands grouped with
``,``, ``.``, a space, a no-break or narrow no-break space, ``'`` or the Arabic ``٬``; a
decimal comma or the Arabic ``٫``. A written number can be read two ways ("1.200" is 1200
in German, 1.2 in English), so each number found carries every value it can mean, and two
numbers match when their readings share a value.

Chinese and Japanese numerals (三十, 两千) and Roman numerals ("siglo XIV" for "14th
century") are read too, but only as a way to write a number the English has: they are never
an extra number, since 一 is also "a" or "one" before a counter (一名学生, "a student")
where the English has no digit at all. English number words ("two years", "Ninety-five
Theses", "both", "half an hour"), month names ("July": 7月) and Roman numerals ("Henry
VIII": 헨리 8세) are read on the English side for the same reason: a translation may write
them as digits; and 1 is never extra ("a year" is 1年).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import NamedTuple

# Digit runs joined by separators; a space joins only before a group of exactly three digits.
_SEPARATORS = ".,'\u2019\u066b\u066c"
_NUMBER = re.compile(rf"\d+(?:(?:[{_SEPARATORS}]|[ \u00a0\u202f](?=\d{{3}}(?!\d)))\d+)*")
_DECIMAL_MARKS = ".,\u066b"
_CJK_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6,
               "七": 7, "八": 8, "九": 9}
_CJK_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10_000, "萬": 10_000, "亿": 100_000_000, "億": 100_000_000}
_CJK_NUMBER = re.compile(f"[{''.join(_CJK_DIGITS)}{''.join(_CJK_UNITS)}]+")
_ENGLISH_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
    "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
    "million": 1_000_000, "dozen": 12, "half": 50, "twice": 2, "second": 2, "third": 3, "fourth": 4,
    "fifth": 5, "tenth": 10, "double": 2, "triple": 3, "quarter": 25, "both": 2, "pair": 2, "couple": 2,
}
_ENGLISH_PHRASES = {"half an hour": 30, "quarter of an hour": 15, "quarter hour": 15}
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_UNITS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")
# Roman numerals (centuries, regnal numbers: "siglo XIV", "Henry VIII"), upper case, whole
# words, with a French ordinal ending ("XIVe siècle").
_ROMAN = re.compile(r"(?<![^\W\d_])(?=[IVXLCDM])M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})(?=(?:e|er|re|ère|ème)?(?![^\W\d_]))")
_ROMAN_VALUES = {"M": 1000, "D": 500, "C": 100, "L": 50, "X": 10, "V": 5, "I": 1}
# 1 is never an extra number: Japanese and Korean write "a year", "that month" with a
# counter (1年, 1か月) where English has only an article.
ALWAYS_ALLOWED = frozenset({1.0})


@dataclass(frozen=True)
class Number:
    text: str  # as written
    values: frozenset[float]  # every value it can mean


def _ascii_digits(text: str) -> str:
    return "".join(str(unicodedata.decimal(c)) if c.isdigit() else c for c in text)


def _readings(token: str) -> frozenset[float]:
    """Every value a digit run with separators can mean."""
    digits = _ascii_digits(token)
    groups = re.split(rf"[{_SEPARATORS} \u00a0\u202f]", digits)
    marks = re.findall(rf"[{_SEPARATORS} \u00a0\u202f]", digits)
    out = set()
    if not marks:
        return frozenset({float(digits)})
    # Every separator groups thousands: "1,200", "1 200 000".
    if all(len(g) == 3 for g in groups[1:]):
        out.add(float("".join(groups)))
    # The last separator is a decimal mark, the others group thousands: "3.5", "1.234,5".
    if marks[-1] in _DECIMAL_MARKS and all(len(g) == 3 for g in groups[1:-1]):
        out.add(float("".join(groups[:-1]) + "." + groups[-1]))
    return frozenset(out)


def numbers(text: str) -> list[Number]:
    """The numbers written in digits (any script's) in ``text``."""
    return [Number(m.group(), _readings(m.group())) for m in _NUMBER.finditer(text)]


def cjk_value(numeral: str) -> float | None:
    """三十 -> 30, 两千五百 -> 2500, 一二 -> 12 (digit by digit); None when malformed."""
    if all(c in _CJK_DIGITS for c in numeral):
        return float("".join(str(_CJK_DIGITS[c]) for c in numeral))
    total = section = digit = 0
    for c in numeral:
        if c in _CJK_DIGITS:
            digit = _CJK_DIGITS[c]
        elif _CJK_UNITS[c] >= 10_000:
            total += (section + digit or 1) * _CJK_UNITS[c]
            section = digit = 0
        else:
            section += (digit or 1) * _CJK_UNITS[c]
            digit = 0
    return float(total + section + digit)


def cjk_numbers(text: str) -> list[Number]:
    """The numbers written in Chinese or Japanese numerals."""
    out = []
    for m in _CJK_NUMBER.finditer(text):
        value = cjk_value(m.group())
        if value is not None:
            out.append(Number(m.group(), frozenset({value})))
    return out


def roman_numbers(text: str) -> list[Number]:
    """Numbers in upper-case Roman numerals ("XIV", "VIII")."""
    out = []
    for m in _ROMAN.finditer(text):
        digits = [_ROMAN_VALUES[c] for c in m.group()]
        value = sum(-d if i + 1 < len(digits) and d < digits[i + 1] else d for i, d in enumerate(digits))
        out.append(Number(m.group(), frozenset({float(value)})))
    return out


def _english_word_value(word: str) -> float | None:
    if word in _ENGLISH_WORDS:
        return float(_ENGLISH_WORDS[word])
    if word in _MONTHS:  # July: 7月, 7월
        return float(_MONTHS.index(word) + 1)
    tens, _, unit = word.partition("-")  # ninety-five
    if tens in _TENS and unit in _UNITS:
        return float(10 * (_TENS.index(tens) + 2) + _UNITS.index(unit) + 1)
    return None


def english_word_values(text: str) -> frozenset[float]:
    """Values a translation may write in digits where the English has words: number words
    ("two", "ninety-five", "a dozen", "half an hour"), month names ("July": 7月) and Roman
    numerals ("Henry VIII")."""
    lower = text.lower()
    words = [part for w in _WORD.findall(lower) for part in (w, *w.split("-")[: w.count("-") + 1 if "-" in w else 0])]
    found = {v for w in words if (v := _english_word_value(w)) is not None}
    found |= {w for n in roman_numbers(text) for w in n.values}
    return frozenset(found | {float(v) for phrase, v in _ENGLISH_PHRASES.items() if phrase in lower})


class NumberCheck(NamedTuple):
    missing: list[str]  # numbers of the source the translation does not have (as the source writes them)
    extra: list[str]  # numbers of the translation the source does not have (as the translation writes them)


def compare_numbers(source: str, translation: str) -> NumberCheck:
    """Does ``translation`` write the same numbers as ``source`` (English)?"""
    theirs = numbers(source)
    ours = numbers(translation)
    written = [v for n in ours for v in n.values]
    spelled = [v for n in cjk_numbers(translation) + roman_numbers(translation) for v in n.values]
    have = set(written) | set(spelled)
    missing = [n.text for n in theirs if not n.values & have]
    allowed = {v for n in theirs for v in n.values} | english_word_values(source) | ALWAYS_ALLOWED
    extra = [n.text for n in ours if not n.values & allowed]
    return NumberCheck(missing, extra)
