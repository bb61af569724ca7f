"""Numbers written in a text, in any script's digits, for the translation linter. Pure.

A translation must keep every number of its English source (a Track A rate, a ladder's
dose), but writes it the way its language does: Arabic-Indic (٠-٩) or Extended
Arabic-Indic (۰-۹) digits, Devanagari (०-९), full-width (０-９); thousands grouped with
``,``, ``.``, a space, a no-break or narrow no-break space, ``'`` or the Arabic ``٬``; a
decimal comma or the Arabic ``٫``. A written number can be read two ways ("1.200" is 1200
in German, 1.2 in English), so each number found carries every value it can mean, and two
numbers match when their readings share a value.

Chinese and Japanese numerals (三十, 两千) are read too, but only as a way to write a number
the English has: they are never an extra number, since 一 is also "a" or "one" before a
counter (一名学生, "a student") where the English has no digit at all. English number words
("two years", "a dozen", "both", "half an hour") are read on the English side for the same
reason: a translation may write them as digits; and 1 is never extra ("a year" is 1年).
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
_WORD = re.compile(r"[a-z]+")
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


def english_word_values(text: str) -> frozenset[float]:
    """Values of English number words ("two", "a dozen", "half"), which a translation may write as digits."""
    lower = text.lower()
    found = {float(_ENGLISH_WORDS[w]) for w in _WORD.findall(lower) if w in _ENGLISH_WORDS}
    return frozenset(found | {float(v) for phrase, v in _ENGLISH_PHRASES.items() if phrase in lower})


class NumberCheck(NamedTuple):
    missing: list[str]  # numbers of the source the translation does not have (as the source writes them)
    extra: list[str]  # numbers of the translation the source does not have (as the translation writes them)


def compare_numbers(source: str, translation: str) -> NumberCheck:
    """Does ``translation`` write the same numbers as ``source`` (English)?"""
    theirs = numbers(source)
    ours = numbers(translation)
    written = [v for n in ours for v in n.values]
    spelled = [v for n in cjk_numbers(translation) for v in n.values]
    have = set(written) | set(spelled)
    missing = [n.text for n in theirs if not n.values & have]
    allowed = {v for n in theirs for v in n.values} | english_word_values(source) | ALWAYS_ALLOWED
    extra = [n.text for n in ours if not n.values & allowed]
    return NumberCheck(missing, extra)
