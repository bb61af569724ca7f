"""Word counting for lint rules, shared by the linter and the kinds' own rules. Pure."""

from __future__ import annotations

import difflib
import math
import re
import unicodedata

# Han ideographs and kana are written without spaces: each character counts as a word, so
# the pair check still sees a Chinese or Japanese sentence change by one negation.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


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
