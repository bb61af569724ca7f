"""Near misses: the length shortcut never changes an answer of the edit-distance rule."""

from __future__ import annotations

from functools import cache

from hypothesis import given
from hypothesis import strategies as st

from pytest_optbench.text.didyoumean import MAX_EDITS, is_near_miss

WORDS = st.text(alphabet="abAB-_c", max_size=9)


def reference_distance(a: str, b: str) -> int:
    """Optimal string alignment distance, written as its recursive definition."""

    @cache
    def d(i: int, j: int) -> int:
        if min(i, j) == 0:
            return max(i, j)
        best = min(d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (a[i - 1] != b[j - 1]))
        if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
            best = min(best, d(i - 2, j - 2) + 1)
        return best

    return d(len(a), len(b))


def reference_near_miss(word: str, known: str) -> bool:
    def folded(w: str) -> str:
        return w.lower().replace("-", "").replace("_", "")

    if word == known:
        return False
    if folded(word) == folded(known):
        return True
    if len(known) < 4:
        return False
    return reference_distance(word.lower(), known.lower()) <= min(MAX_EDITS, max(1, (len(known) - 1) // 3))


@given(WORDS, WORDS)
def test_near_miss_follows_the_edit_distance_rule(word: str, known: str) -> None:
    assert is_near_miss(word, known) == reference_near_miss(word, known)


def test_a_huge_value_is_no_near_miss_of_a_short_name() -> None:
    assert not is_near_miss("k" * 200_000, "binary")
    assert is_near_miss("binnary", "binary") and is_near_miss("Binary", "binary")
