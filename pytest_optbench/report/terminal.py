"""The terminal's way of drawing the report model: aligned plain-text columns.

Each line is (text, style) with style one of "", "bold", "red", "green", "yellow", so the
module stays free of pytest and is easy to test. Nothing here computes or formats a number:
cells arrive as text from ``report.model``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..text.display import one_line
from .model.table import COMPACT, FAIL, NOT_EVALUATED, PASS, WARN, Row, Table

StyledLine = tuple[str, str]
TONE_STYLE = {PASS: "green", FAIL: "red", NOT_EVALUATED: "yellow", WARN: "yellow"}


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Left-aligned columns two spaces apart, trailing blanks trimmed."""
    header, rows = [one_line(c) for c in header], [[one_line(c) for c in row] for row in rows]  # no ESC, no CR
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return [fmt.format(*header).rstrip()] + [fmt.format(*row).rstrip() for row in rows]


def style(tone: str) -> str:
    return TONE_STYLE.get(tone, "")


def render_table(model: Table, rows: Sequence[Row] | None = None, view: str = COMPACT) -> list[StyledLine]:
    """The table's compact view: a bold header, each row in its tone's colour."""
    shown = list(model.rows if rows is None else rows)
    if not shown:
        return []
    lines = table(model.header(view), model.texts(view, shown))
    return [(lines[0], "bold")] + [(line, style(row.tone)) for line, row in zip(lines[1:], shown, strict=True)]
