"""Word counting for lint rules, shared by the linter and the kinds' own rules. Pure."""

from __future__ import annotations

import difflib
import math
import re
import unicodedata

# Han ideographs, kana, and the Thai, Lao, Khmer and Myanmar scripts are written without
# spaces between words: each character is a token, so the pair check still sees a Chinese or
# Thai sentence change by one negation.
_UNSPACED = re.compile(r"[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
                       r"\uf900-\ufaff]")
# The largest edit between the two questions of an inverted pair, per unit: measured on the
# bundled banks (pytest-optbench 0.1), whose largest are 3 words (English "passes" / "does
# not pass"; Spanish, French, Korean, Russian) and 6 characters (Japanese "もまだ…いる" /
# "にはもう…いない"; Chinese 3); one word or two characters spare.
MAX_PAIR_EDIT = {"words": 4, "characters": 8}


def _raw_words(text: str) -> list[str]:
    """Runs of letters, digits and combining marks (Devanagari and Arabic vowel signs are
    marks: they belong to their word)."""
    out: list[str] = []
    current: list[str] = []
    for ch in text:
        if unicodedata.category(ch)[0] in "LNM" or (ch in "'’" and current):
            current.append(ch)
        elif current:
            out.append("".join(current))
            current = []
    if current:
        out.append("".join(current))
    return out


def words(text: str) -> list[str]:
    tokens: list[str] = []
    for word in _raw_words(text):
        if _UNSPACED.search(word):
            tokens.extend(word)
        else:
            tokens.append(word.lower())
    return tokens


def edit_words(a: str, b: str) -> int:
    """How many words differ between two questions (the larger side of every change); in
    unspaced scripts two characters count as one word ("いる" / "いない" is one)."""
    left, right = words(a), words(b)
    matcher = difflib.SequenceMatcher(a=left, b=right, autojunk=False)

    def size(tokens: list[str]) -> float:
        return sum(0.5 if _UNSPACED.fullmatch(t) else 1.0 for t in tokens)

    return math.ceil(sum(max(size(left[i1:i2]), size(right[j1:j2]))
                         for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"))


def unspaced(text: str) -> bool:
    """Is the text mostly in a script written without spaces between words?"""
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(bool(_UNSPACED.match(c)) for c in letters) * 2 > len(letters)


def pair_edit(a: str, b: str) -> tuple[int, str]:
    """How large the edit between two questions is, and its unit: characters in scripts
    without spaces (Chinese, Japanese, Thai), words otherwise."""
    if not unspaced(a + b):
        return edit_words(a, b), "words"
    left, right = words(a), words(b)
    matcher = difflib.SequenceMatcher(a=left, b=right, autojunk=False)

    def size(tokens: list[str]) -> int:
        return sum(len(t) for t in tokens)  # a Latin word inside counts its letters

    return sum(max(size(left[i1:i2]), size(right[j1:j2]))
               for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"), "characters"
