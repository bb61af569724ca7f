"""Suite problems that would otherwise pass silently: a misspelt marker, an unused field.

Pure. A YAML file whose top-level marker is ``optbnch: 1`` is not a suite, so pytest drops
it without a word; an item field that no template, condition or item kind reads
(``domian: garden``) is accepted and changes nothing. The plugin (a warning, or a
collection error under ``--optbench-strict``) and the linter report both from here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..text.didyoumean import is_near_miss, suggest
from .load import ANNOTATION_KEYS, ITEM_SETTING_KEYS, KIND_FIELDS, TEMPLATE_BUILTINS, Suite, template_fields

MARKER = "optbench"
DEFAULT_TEMPLATE_FIELDS = ("scenario", "question")
# A key at the start of a line (the top level of a block mapping), optionally quoted.
_TOP_KEY = re.compile(r"""^(?:"([^"\n]+)"|'([^'\n]+)'|([^\s#'"{}\[\]:,&*!|>%@`-][^:#\n]*?))[ \t]*:(?:[ \t]|$)""",
                      re.MULTILINE)


def top_level_keys(text: str) -> list[str]:
    """The keys that start a line in ``text`` (the top level of a YAML block mapping)."""
    return [next(g for g in m.groups() if g is not None).strip() for m in _TOP_KEY.finditer(text)]


def marker_near_miss(text: str) -> str | None:
    """The top-level key that looks like a misspelt ``optbench`` marker, if the text has no
    real marker; None otherwise."""
    keys = top_level_keys(text)
    if MARKER in keys:
        return None
    # A typo of the marker, or the marker with something added (optbench_version: 1).
    return next((k for k in keys if is_near_miss(k, MARKER) or k.lower().startswith(MARKER)), None)


def near_miss_sentence(display: str, key: str) -> str:
    return (f"{display}, key '{key}': looks like a misspelt 'optbench' marker, so the file is not collected as a "
            "suite; rename the key to 'optbench' (or rename it away if the file is not a suite)")


@dataclass(frozen=True)
class UnusedField:
    path: str
    item: str
    line: int
    key: str
    suggestion: str | None  # the known field it is probably a misspelling of

    @property
    def typo_text(self) -> str:
        return f" (a misspelt '{self.suggestion}'?)" if self.suggestion else ""

    def sentence(self, others: int = 0) -> str:
        where = f"item '{self.item}'" + (f" (line {self.line})" if self.line else "")
        more = f" and {others} more item(s)" if others else ""
        return (f"{self.path}, {where}{more}, key '{self.key}': no template, condition or item kind uses this "
                f"field{self.typo_text}; remove it or correct its name")


def unused_sentences(unused: list[UnusedField]) -> list[str]:
    """One sentence per file and field (a typo copied to 60 items is one problem)."""
    groups: dict[tuple[str, str], list[UnusedField]] = {}
    for u in unused:
        groups.setdefault((u.path, u.key), []).append(u)
    return [found[0].sentence(len(found) - 1) for found in groups.values()]


def unused_fields(suite: Suite) -> list[UnusedField]:
    """Item fields that nothing reads: not the kind's fields, not in the template, not set
    or read by a condition."""
    template = template_fields(suite.template) if suite.template else list(DEFAULT_TEMPLATE_FIELDS)
    by_conditions: set[str] = set()
    for condition in suite.conditions:
        by_conditions.update(condition.transforms)
        for text in condition.transforms.values():
            by_conditions.update(template_fields(text))
    out = []
    for item in suite.items:
        required, optional = KIND_FIELDS[item.kind]
        used = {*required, *optional, *template, *by_conditions, *ANNOTATION_KEYS}
        known = sorted(used | set(ITEM_SETTING_KEYS) | set(TEMPLATE_BUILTINS))
        for key in item.fields:
            if key not in used:
                out.append(UnusedField(suite.path, item.id, item.line, key, suggest(key, known)))
    return out
