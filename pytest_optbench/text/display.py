"""Text from suites, models and servers, made safe to show: on a terminal, in a table cell,
in an error message, in a file.

Pure: imports nothing of ours and nothing from pytest. Hostile or careless text is shown,
never obeyed: an ESC from an item id must not recolour the terminal, a CR in a scenario must
not split a Markdown row, a lone surrogate from a model must not stop a UTF-8 writer, and a
huge value must not become a huge error line.
"""

from __future__ import annotations

import re
import reprlib
from typing import Any

# C0 and C1 controls (ESC, CSI, BEL, BS, CR ...), line and paragraph separators, and the
# bidirectional overrides and isolates that reorder what a terminal shows ("Trojan Source").
# Joiners (U+200C/U+200D), marks (U+200E/U+200F) and no-break spaces are real text in Hindi,
# Persian, Arabic and French: they stay.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# Everything str.splitlines() breaks on, and tabs: a cell or a one-line message holds none.
_BREAKS = re.compile("[ \t]*[\t\n\r\v\f\x1c-\x1e\x85\u2028\u2029][\t\n\r\v\f\x1c-\x1e\x85\u2028\u2029 ]*")
_SURROGATE = re.compile("[\ud800-\udfff]")


def well_formed(text: str) -> str:
    """``text`` as valid Unicode: UTF-16 surrogate pairs joined into their character, lone
    surrogates replaced by U+FFFD (no UTF-8 writer, SQLite or terminal accepts them)."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def bounded(text: str, limit: int) -> str:
    """At most about ``limit`` characters: the head, and how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit:,} more characters)"


def printable(text: object, limit: int | None = None) -> str:
    """``text`` with control and bidi characters shown as escapes (``\\x1b``, ``\\u202e``)."""
    out = _UNSAFE.sub(_escape, well_formed(str(text)))
    return bounded(out, limit) if limit is not None else out


def one_line(text: object, limit: int | None = None) -> str:
    """``printable`` on one line: every run of line breaks and tabs becomes one space."""
    return printable(_BREAKS.sub(" ", well_formed(str(text))), limit)


class _Repr(reprlib.Repr):
    """``reprlib`` with integers too long for ``repr`` (Python refuses 4,300+ digits)."""

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 3300:  # about 1,000 decimal digits
            return f"<an integer of about {int(x.bit_length() * 0.30103):,} digits>"
        return super().repr_int(x, level)


_REPR = _Repr()
_REPR.maxlevel = 3
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = 60
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 6


def shown(value: Any, limit: int = 80) -> str:
    """A short, printable ``repr`` of a value for an error message, however large it is."""
    try:
        text = _REPR.repr(value)
    except Exception:  # noqa: BLE001 - an object whose repr fails is still named
        text = f"<{type(value).__name__}>"
    return one_line(text, limit)
