"""The shapes every renderer draws: a table of cells, and a line of text with a tone.

A ``Cell`` carries its text (already formatted by ``fmt``), the number behind it (for sorting
or plots) and a style; a ``Column`` says in which views it appears. The terminal and Markdown
draw the compact view, the HTML page the full one: a column that only one of them shows is
decided here, not in the renderer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .fmt import number_or_none

COMPACT, FULL = "compact", "full"
BOTH = (COMPACT, FULL)
# Tones: verdicts, a change whose CI excludes 0, a warning, an error.
PASS, FAIL, NOT_EVALUATED, STRONG, WARN = "pass", "fail", "ne", "strong", "warn"


@dataclass(frozen=True)
class Cell:
    text: str
    value: float | None = None  # the number behind the text; None for labels
    numeric: bool = False  # aligned as a number
    tone: str = ""


@dataclass(frozen=True)
class Column:
    name: str
    views: tuple[str, ...] = BOTH


@dataclass(frozen=True)
class Row:
    cells: tuple[Cell, ...]
    tone: str = ""  # the whole row's, e.g. a gate's verdict


@dataclass(frozen=True)
class Table:
    key: str  # a stable name (the HTML anchor)
    title: str
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    notes: tuple[str, ...] = ()  # sentences that explain the table, for renderers with room

    @property
    def empty(self) -> bool:
        return not self.rows

    def _shown(self, view: str) -> list[int]:
        return [i for i, c in enumerate(self.columns) if view in c.views]

    def header(self, view: str = FULL) -> list[str]:
        return [self.columns[i].name for i in self._shown(view)]

    def cells(self, view: str = FULL, rows: Sequence[Row] | None = None) -> list[list[Cell]]:
        shown = self._shown(view)
        return [[row.cells[i] for i in shown] for row in (self.rows if rows is None else rows)]

    def texts(self, view: str = FULL, rows: Sequence[Row] | None = None) -> list[list[str]]:
        return [[cell.text for cell in row] for row in self.cells(view, rows)]

    def column(self, name: str) -> list[Cell]:
        """Every cell of one column (tests and renderers that pick one value)."""
        index = [c.name for c in self.columns].index(name)
        return [row.cells[index] for row in self.rows]


@dataclass(frozen=True)
class Line:
    text: str
    tone: str = ""


def make_table(key: str, title: str, columns: Iterable[Column | str], rows: Iterable[Sequence[Cell] | Row],
               notes: Iterable[str] = ()) -> Table:
    cols = tuple(c if isinstance(c, Column) else Column(c) for c in columns)
    out = tuple(r if isinstance(r, Row) else Row(tuple(r)) for r in rows)
    for row in out:
        if len(row.cells) != len(cols):  # a programming error, never a user's
            raise ValueError(f"table {key}: a row has {len(row.cells)} cells for {len(cols)} columns")
    return Table(key, title, cols, out, tuple(notes))


def text(value: object) -> Cell:
    """A label cell."""
    return Cell("" if value is None else str(value))


def number(text: str, value: Any = None, tone: str = "") -> Cell:
    """A number cell: its text, and the value it shows."""
    return Cell(text, number_or_none(value), True, tone)


def count(n: int) -> Cell:
    return Cell(str(n), float(n), True)
