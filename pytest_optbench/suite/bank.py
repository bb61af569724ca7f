"""The item bank in numbers: items per bank and language, counted from the suite files. Pure.

``optbench bank`` prints it as the Markdown table docs/suites.md shows (a test keeps the two
equal). A row is a bank: an English suite and its translations, tied by the id rule of
translations.py; a cell is the suite's items, times its arms when it has several.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..text.display import one_line
from .lint import load_suites, suite_files
from .load import Suite
from .translations import is_english, source_suite_id


def _cell(text: str) -> str:
    """A suite id or language as a Markdown cell: one line, no column break."""
    return one_line(text, 80).replace("\\", "\\\\").replace("|", "\\|")


@dataclass(frozen=True)
class BankCell:
    items: int
    arms: int

    @property
    def text(self) -> str:
        return f"{self.items}" if self.arms == 1 else f"{self.items} x {self.arms}"


def bank_counts(suites: Sequence[Suite]) -> tuple[list[str], dict[str, dict[str, BankCell]]]:
    """(languages, English first; bank -> language -> cell). A bank is named by its English
    suite id (a translation's id without ``-<language>``)."""
    english = {s.id for s in suites if is_english(s.language)}
    banks: dict[str, dict[str, BankCell]] = {}
    for suite in suites:
        source = source_suite_id(suite.id, suite.language)
        bank = source if source in english else suite.id
        cell = BankCell(len(suite.items), len(suite.conditions))
        old = banks.setdefault(bank, {}).get(suite.language)
        if old is not None:  # two suites of one bank in one language: add them up
            cell = BankCell(old.items + cell.items, max(old.arms, cell.arms))
        banks[bank][suite.language] = cell
    languages = sorted({s.language for s in suites}, key=lambda lang: (not is_english(lang), lang))
    return languages, dict(sorted(banks.items()))


def bank_markdown(suites: Sequence[Suite]) -> list[str]:
    """The Markdown table: a row per bank, a column per language, then the totals of items
    and of item x arm results (the tests an audit runs)."""
    languages, banks = bank_counts(suites)
    lines = ["| suite | " + " | ".join(map(_cell, languages)) + " | all |", "|---|" + "---:|" * (len(languages) + 1)]
    for bank, cells in banks.items():
        row = [cells[lang].text if lang in cells else "" for lang in languages]
        total = sum(c.items for c in cells.values())
        lines.append(f"| {_cell(bank)} | " + " | ".join(row) + f" | {total:,} |")
    for label, with_arms in (("items", False), ("item x arm results", True)):
        per = [sum(c.items * (c.arms if with_arms else 1) for cells in banks.values() if (c := cells.get(lang)))
               for lang in languages]
        lines.append(f"| **{label}** | " + " | ".join(f"{n:,}" for n in per) + f" | **{sum(per):,}** |")
    return lines


def bank_table(paths: Sequence[Path]) -> list[str]:
    """The table for the suites under ``paths`` (files that do not load are left out: the
    linter reports them)."""
    files = suite_files(paths)
    suites, _problems = load_suites(files, {f: str(f) for f in files})
    return bank_markdown(suites)
