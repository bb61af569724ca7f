"""Did-you-mean suggestions for misspelt keys, fields, metric names, markers and globs.

Pure and dependency-free, so suites, gates, the linter and the plugin share one rule: a
word is a near miss of a known one when it differs by at most two edits (insertions,
deletions, substitutions or swaps of neighbours) and by less than a third of its length,
or when it matches the known word once case, ``-`` and ``_`` are ignored.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

MAX_EDITS = 2


def edit_distance(a: str, b: str) -> int:
    """Optimal string alignment distance (Damerau-Levenshtein without repeated edits)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[-1]


def _folded(word: str) -> str:
    return word.lower().replace("-", "").replace("_", "")


def is_near_miss(word: str, known: str, prefixes: bool = False) -> bool:
    """True when ``word`` is probably a typo of ``known`` (and not ``known`` itself); with
    ``prefixes``, also when one starts with the other (``skewness`` for ``skew``)."""
    if word == known:
        return False
    if _folded(word) == _folded(known):
        return True
    if len(known) < 4:  # "a" and "b" are fields: one edit apart, yet no typo of each other
        return False
    if prefixes and min(len(word), len(known)) >= 4 and (word.startswith(known) or known.startswith(word)):
        return True
    limit = min(MAX_EDITS, max(1, (len(known) - 1) // 3))
    if abs(len(word) - len(known)) > limit:  # each edit changes the length by one at most
        return False
    return edit_distance(word.lower(), known.lower()) <= limit


def suggest(word: str, candidates: Iterable[str]) -> str | None:
    """The closest candidate ``word`` is a near miss of (prefixes count), or None."""
    near = [c for c in candidates if is_near_miss(word, c, prefixes=True)]
    if not near:
        return None
    return min(near, key=lambda c: (edit_distance(word.lower(), c.lower()), c))


def hint(word: str, candidates: Iterable[str]) -> str:
    """``, did you mean 'x'?`` to append to a message, or the empty string."""
    match = suggest(word, candidates)
    return f", did you mean '{match}'?" if match else ""


def suggest_glob(glob: str, names: Iterable[str]) -> str | None:
    """A corrected glob that matches at least one of ``names``, when ``glob`` looks like a
    typo: its literal part (up to the first wildcard) is one edit from a name's start (two
    for long ones)."""
    cut = min((glob.find(c) for c in "*?[" if c in glob), default=len(glob))
    literal, rest = glob[:cut], glob[cut:]
    if not literal:
        return None
    best: tuple[int, str] | None = None
    limit = 1 if len(literal) < 12 else MAX_EDITS
    for name in sorted(set(names)):
        for size in range(max(1, len(literal) - MAX_EDITS), len(literal) + MAX_EDITS + 1):
            prefix = name[:size] if rest else name
            if not is_near_miss(literal, prefix) or edit_distance(literal.lower(), prefix.lower()) > limit:
                continue
            candidate = prefix + rest
            if fnmatch.fnmatchcase(name, candidate):
                distance = edit_distance(literal.lower(), prefix.lower())
                if best is None or (distance, candidate) < best:
                    best = (distance, candidate)
            if not rest:
                break
    return best[1] if best else None
