"""Free text -> a number on the 0-100 scale, or the reason it could not be read.

Pure. The prompt asks for one integer from 0 to 100; we read exactly that, in the forms
models actually use ("65", "about 65%", '{"probability": 65}', "65/100", "60-70%"),
and never guess between two different numbers.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass

# Keys a JSON answer may carry its number under, most specific first.
JSON_KEYS = ("probability", "probability_percent", "percent", "percentage", "answer",
             "estimate", "value", "confidence", "score", "rating", "p")
_NUMBER = r"\d+(?:[.,]\d+)?"
_SIGNED = r"[-+]?\d+(?:[.,]\d+)?"
_PERCENT_SIGNS = "%\uff05\u066a\u2030"  # ASCII, full-width, Arabic percent; per-mille rejected below
_RANGE_RE = re.compile(
    rf"between\s+({_NUMBER})\s*%?\s*and\s+({_NUMBER})|({_NUMBER})\s*%?\s*(?:-|–|—|to)\s*({_NUMBER})",
    re.IGNORECASE,
)
_FRACTION_RE = re.compile(rf"({_NUMBER})\s*(?:/|out of)\s*({_NUMBER})", re.IGNORECASE)
# "percent" in the ten bundled languages (after a number), and the Chinese prefix form.
_PERCENT_WORDS = (r"percent|per cent|por ciento|pour cent|prozent|процент\w*|퍼센트|パーセント|प्रतिशत"
                  r"|في المائة|في المئة|بالمئة")
_PERCENT_AFTER = re.compile(rf"({_NUMBER})\s*(?:%|(?:{_PERCENT_WORDS})(?!\w))", re.IGNORECASE)
_PERCENT_BEFORE = re.compile(rf"百分之\s*({_NUMBER})")
# Words that introduce the answer, in the ten bundled languages.
_KEYWORDS = (r"probability|answer|estimate|likelihood|chance|rating|score|probabilidad|probabilité"
             r"|wahrscheinlichkeit|вероятность|확률|概率|可能性|確率|संभावना|प्रायिकता|احتمال")
_KEYWORD_RE = re.compile(rf"(?:{_KEYWORDS})[^0-9+-]{{0,40}}?({_NUMBER})", re.IGNORECASE)
_NUMBER_RE = re.compile(_NUMBER)


@dataclass(frozen=True)
class Parsed:
    """``value`` is on 0-100 when parsing succeeded; otherwise ``reason`` says why not."""

    value: float | None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.value is not None


def _normalise(text: str) -> str:
    """Native digits (Arabic-Indic, Devanagari, full-width ...) to ASCII; NFKC folds widths."""
    # CJK punctuation separates, it never makes a decimal ("65，3个月" is 65 then 3).
    text = text.replace("\uff0c", ", ").replace("\u3001", ", ").replace("\u3002", ". ")
    text = unicodedata.normalize("NFKC", text)
    out = []
    for ch in text:
        if ch.isdigit() and not ch.isascii():
            digit = unicodedata.decimal(ch, None)
            out.append(str(digit) if digit is not None else ch)
        elif ch in "\u066b":  # Arabic decimal separator
            out.append(".")
        elif ch in _PERCENT_SIGNS[1:3]:
            out.append("%")
        else:
            out.append(ch)
    return "".join(out)


def _to_float(token: str) -> float:
    return float(token.replace(",", "."))


def _checked(value: float | int, how: str) -> Parsed:
    try:
        value = float(value)
    except OverflowError:
        return Parsed(None, f"{how} is a number far outside 0-100")
    if value != value or not 0 <= value <= 100:
        return Parsed(None, f"{how} {value:g} is outside 0-100")
    return Parsed(value)


def _from_json(text: str) -> Parsed | None:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(text[start:end + 1])
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    lowered = {str(k).lower(): v for k, v in data.items()}
    for key in JSON_KEYS:
        if key in lowered:
            value = lowered[key]
            if isinstance(value, bool):
                return Parsed(None, f"JSON key '{key}' holds a boolean, not a number")
            if isinstance(value, (int, float)):
                return _checked(value, f"JSON '{key}'")
            if isinstance(value, str):
                inner = parse_answer(value)
                return inner if inner.ok else Parsed(None, f"JSON key '{key}': {inner.reason}")
            return Parsed(None, f"JSON key '{key}' holds {type(value).__name__}, not a number")
    return Parsed(None, "JSON answer has none of the keys " + ", ".join(JSON_KEYS[:4]) + " ...")


def parse_answer(text: str) -> Parsed:
    """Read one probability (0-100) from a model's reply."""
    if text is None or not str(text).strip():
        return Parsed(None, "empty answer")
    text = _normalise(str(text)).strip()
    if "\u2030" in text:
        return Parsed(None, "per-mille answers are not on the 0-100 scale")

    if "{" in text:
        from_json = _from_json(text)
        if from_json is not None:
            return from_json

    bare = text.rstrip(".").strip()
    if re.fullmatch(rf"{_SIGNED}\s*(%|{_PERCENT_WORDS})?", bare, re.IGNORECASE):
        return _checked(_to_float(re.match(_SIGNED, bare).group()), "answer")  # type: ignore[union-attr]

    fraction = _FRACTION_RE.search(text)
    if fraction:
        numerator, denominator = _to_float(fraction.group(1)), _to_float(fraction.group(2))
        if denominator <= 0:
            return Parsed(None, f"fraction {fraction.group(0)!r} has a zero denominator")
        if numerator > denominator:
            return Parsed(None, f"fraction {fraction.group(0)!r} is above 1")
        return _checked(100 * numerator / denominator, "fraction")

    numbers = [_to_float(m) for m in _NUMBER_RE.findall(text)]
    if not numbers:
        return Parsed(None, "no number in the answer (a refusal or prose)")

    span = _RANGE_RE.search(text)
    if span and len(numbers) == 2:
        ends = [g for g in span.groups() if g is not None]
        low, high = sorted(_to_float(g) for g in ends)
        if 0 <= low <= high <= 100:
            return Parsed((low + high) / 2)

    percents = {_to_float(m) for m in _PERCENT_AFTER.findall(text) + _PERCENT_BEFORE.findall(text)}
    if len(percents) == 1:
        return _checked(percents.pop(), "percentage")
    keyword = {_to_float(m) for m in _KEYWORD_RE.findall(text)}
    if len(keyword) == 1:
        return _checked(keyword.pop(), "answer")
    distinct = sorted(set(numbers))
    if len(distinct) == 1:
        return _checked(distinct[0], "answer")
    shown = ", ".join(f"{n:g}" for n in distinct[:5])
    return Parsed(None, f"several different numbers ({shown}) and no way to tell which is the answer")
