"""A translated suite against its English source: what a translation must keep so that it
measures what the English measures. Pure; the linter (lint.py) runs it.

The source of a translation is found by its id: a suite in language ``<lang>`` whose id is
``<english id>-<lang>`` translates the English suite ``<english id>`` (``track-b-probability-ko``
translates ``track-b-probability``); a suite whose id does not follow the rule is compared
with the one English suite in a file of the same name, if there is exactly one.

Checked against the source (docs/suite-format.md, "Translated suites", lists the severities):
the track, the condition arms and their texts, the system prompt, the ids (missing, extra,
order), and per item the kind, domain, typed fields (``expected``, ``outcome``,
``direction``, the ladder's length), every text field being there and translated, and the
numbers of every text field (numerals.py). An item marked ``adapted: "<why>"`` replaces an
English question that cannot stay true in the language (letter counts, word facts): its
text may differ in content (numbers are not compared) but its id, kind, domain and outcome
still match, and the linter lists it as info for review.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from .. import kinds
from ..kinds.base import ERROR, INFO, WARNING
from ..kinds.wording import words
from ..text.display import one_line, shown
from .load import ANNOTATION_KEYS, Item, Suite
from .numerals import compare_numbers

ADAPTED = "adapted"
# Fields that must be equal in a translation (data, not text), and what they are.
KEPT_FIELDS = {"expected": "stated rate", "outcome": "outcome", "direction": "ladder direction"}
# Words that mark English text; none of them is a word of Spanish, French or German.
ENGLISH_MARKERS = frozenset(
    ["the", "what", "that", "probability", "which", "will", "does", "not", "person", "this", "with", "their", "would"]
)
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


class Problem(NamedTuple):
    path: str
    item: str | None
    severity: str
    message: str


def is_english(language: str) -> bool:
    return language.lower() == "en" or language.lower().startswith("en-")


def source_suite_id(suite_id: str, language: str) -> str | None:
    """The English suite id a translated suite's id names: the id without ``-<language>``
    (the whole tag, or its primary subtag); None when the id has no such suffix."""
    for tag in dict.fromkeys((language.lower(), language.split("-")[0].lower())):
        suffix = f"-{tag}"
        if suite_id.lower().endswith(suffix) and len(suite_id) > len(suffix):
            return suite_id[: -len(suffix)]
    return None


def english_counterpart(suite: Suite, english: Mapping[str, Suite]) -> Suite | None:
    """The English suite ``suite`` translates (``english``: English suites by id)."""
    source = source_suite_id(suite.id, suite.language)
    if source is not None and source in english:
        return english[source]
    same_file = [s for s in english.values() if Path(s.path).name == Path(suite.path).name]
    return same_file[0] if len(same_file) == 1 else None


def non_latin_script(texts: Iterable[str]) -> bool:
    """Are most letters of these texts outside the Latin script (ASCII and Latin-1/Extended)?"""
    latin = other = 0
    for text in texts:
        for c in text:
            if c.isalpha():
                if c <= "\u024f":
                    latin += 1
                else:
                    other += 1
    return other > latin


def _named(word: str) -> bool:
    """A proper name or an abbreviation (capitalised or all capitals), or a number."""
    return word[:1].isupper() or word.isdigit()


def looks_english(text: str, non_latin: bool) -> bool:
    """Does a text meant to be in the suite's language read as English?

    In a language of another script: most letters, outside names and numbers, are ASCII. In
    a Latin-script language: three or more English marker words.
    """
    if non_latin:
        tokens = [w for w in re.findall(r"[^\W\d_]+", text) if not (w.isascii() and _named(w))]
        letters = [c for w in tokens for c in w]
        return bool(letters) and sum(c.isascii() for c in letters) * 2 > len(letters)
    return len(ENGLISH_MARKERS.intersection(words(text))) >= 3


def same_text(text: str, source: str) -> bool:
    """The same text as the English, and more than names and numbers."""
    if " ".join(text.split()) != " ".join(source.split()):
        return False
    return not all(_named(w) for w in re.findall(r"\w+", _PLACEHOLDER.sub("", text)))


def _untranslated(text: str, source: str | None, non_latin: bool) -> bool:
    prose = _PLACEHOLDER.sub("", text)
    return (source is not None and same_text(prose, _PLACEHOLDER.sub("", source))) or looks_english(prose, non_latin)


class _Check:
    """The problems of one translated suite against its source."""

    def __init__(self, suite: Suite, source: Suite) -> None:
        self.suite, self.source = suite, source
        self.problems: list[Problem] = []
        self.non_latin = non_latin_script(v for i in suite.items for v in i.fields.values() if isinstance(v, str))

    def add(self, item: str | None, severity: str, message: str) -> None:
        self.problems.append(Problem(self.suite.path, item, severity, message))

    def run(self) -> list[Problem]:
        self.suite_level()
        self.ids()
        theirs = {i.id: i for i in self.source.items}
        for item in self.suite.items:
            if item.id in theirs:
                self.item(item.id, item.kind, item.domain, item.fields, theirs[item.id])
        return self.problems

    def suite_level(self) -> None:
        suite, source = self.suite, self.source
        if suite.track != source.track:
            self.add(None, ERROR, f"track {suite.track} differs from track {source.track} of {source.path}")
        ours = {c.name: c for c in suite.conditions}
        theirs = {c.name: c for c in source.conditions}
        if missing := [name for name in theirs if name not in ours]:
            # The bundled bank has every arm in every language; a translation that drops one
            # makes the cross-language comparison of that arm impossible.
            self.add(None, ERROR, f"condition(s) {', '.join(missing)} of {source.path} are missing from this "
                                  "translation, so its audit has fewer arms than the English one")
        for name in sorted(ours.keys() - theirs.keys()):
            self.add(None, ERROR, f"condition '{name}' is not in {source.path}, so no arm compares it with English")
        for name in sorted(ours.keys() & theirs.keys()):
            mine, english = ours[name], theirs[name]
            texts: list[tuple[str, str, str | None]] = [
                (f"conditions.{name}.{k}", v, english.transforms.get(k)) for k, v in mine.transforms.items()]
            texts += [(f"conditions.{name}.{k}", v, getattr(english, k)) for k in ("system", "system_prefix")
                      if (v := getattr(mine, k)) is not None]
            for key, text, english_text in texts:
                if _untranslated(text, english_text, self.non_latin):
                    self.add(None, ERROR, f"'{key}' looks untranslated English text")
        if suite.system_prompt is None:
            self.add(None, WARNING, "no 'prompt.system': the model gets the built-in English system prompt; give "
                                    "the suite one in its language")
        elif _untranslated(suite.system_prompt, source.system_prompt, self.non_latin):
            self.add(None, ERROR, "'prompt.system' looks untranslated English text")
        if suite.template is not None and _untranslated(suite.template, source.template, self.non_latin):
            self.add(None, ERROR, "'prompt.template' looks untranslated English text")

    def ids(self) -> None:
        ours = [i.id for i in self.suite.items]
        theirs = [i.id for i in self.source.items]
        for missing in sorted(set(theirs) - set(ours)):
            self.add(missing, ERROR, f"id of {self.source.path} is missing from this translation")
        for extra in sorted(set(ours) - set(theirs)):
            self.add(extra, ERROR, f"id is not in {self.source.path}")
        shared = set(ours) & set(theirs)
        order = [i for i in ours if i in shared]
        expected = [i for i in theirs if i in shared]
        if order != expected:
            first = next(a for a, b in zip(order, expected, strict=True) if a != b)
            self.add(first, WARNING, f"items are in another order than in {self.source.path} (first out of place "
                                     "here); keep the English order so the files can be read side by side")

    def item(self, item_id: str, kind: str, domain: str | None, fields: Mapping[str, Any], source: Item) -> None:
        path = self.source.path
        if kind != source.kind:
            self.add(item_id, ERROR, f"kind {kind} differs from {source.kind} in {path}")
            return
        if domain != source.domain:
            self.add(item_id, ERROR, f"domain {one_line(domain, 80)} differs from {one_line(source.domain, 80)} in {path}")
        adapted = fields.get(ADAPTED)
        if adapted is not None:
            self.add(item_id, INFO, f"adapted: {one_line(adapted, 300)}")
        for key, label in KEPT_FIELDS.items():
            if key in source.fields and fields.get(key) != source.fields[key] and (adapted is None or key == "outcome"):
                self.add(item_id, ERROR, f"'{key}' ({label}) is {shown(fields.get(key))}, {shown(source.fields[key])} in "
                                         f"{path}")
        for key, english in source.fields.items():
            if key in ANNOTATION_KEYS:
                continue
            # A field the translation lacks is either needed (the suite does not load) or
            # read only by an arm it lacks (the warning on its conditions).
            text = fields.get(key)
            if isinstance(english, str) and isinstance(text, str) and key not in kinds.typed_fields():
                self.text(item_id, key, text, english, adapted is not None)
        ladder, english_ladder = fields.get("ladder"), source.fields.get("ladder")
        if isinstance(ladder, Sequence) and isinstance(english_ladder, Sequence):
            if len(ladder) != len(english_ladder):
                self.add(item_id, ERROR, f"the ladder has {len(ladder)} rungs, {len(english_ladder)} in {path}")
            # A ladder of another length is the error above; its shared rungs are still compared.
            for rung, (text, english) in enumerate(zip(ladder, english_ladder, strict=False), start=1):
                self.text(item_id, f"ladder rung {rung}", str(text), str(english), adapted is not None)

    def text(self, item_id: str, key: str, text: str, english: str, adapted: bool) -> None:
        name = key if key.startswith("ladder") else f"'{key}'"
        if _untranslated(text, english, self.non_latin):
            self.add(item_id, ERROR, f"{name} looks untranslated English text")
            return
        if adapted:
            return  # a replaced question has numbers of its own
        check = compare_numbers(english, text)
        if check.missing:
            self.add(item_id, ERROR, f"{name} lacks the number(s) {one_line(', '.join(check.missing), 120)} of the "
                                     "English text")
        if check.extra:
            self.add(item_id, WARNING, f"{name} has number(s) {one_line(', '.join(check.extra), 120)} that the English "
                                       "text has not")


def check_translations(suites: Sequence[Suite]) -> list[Problem]:
    """Every translated suite (a non-English suite with an English source among ``suites``)
    against its source; suites without one are not translations of these."""
    english = {s.id: s for s in suites if is_english(s.language)}
    out: list[Problem] = []
    for suite in suites:
        if is_english(suite.language):
            continue
        source = english_counterpart(suite, english)
        if source is not None:
            out.extend(_Check(suite, source).run())
    return out
