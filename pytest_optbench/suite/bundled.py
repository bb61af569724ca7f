"""Where the bundled item bank and default gates are: in the installed package, or in the checkout.

Pure (reads files only). A wheel carries them as ``pytest_optbench/bundled/`` (setup.py copies
the repository's top-level ``suites/`` and ``thresholds.yaml`` there when it builds); an
editable install of a checkout has no copy, and finds the checkout's own files, the one copy
the repository keeps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent
SUITES, THRESHOLDS = "suites", "thresholds.yaml"
_SUITE_LINE = re.compile(r"^suite:[ \t]*([^\s#]+)", re.MULTILINE)


@dataclass(frozen=True)
class Bundled:
    """The bank's directory and the default thresholds file, and where they were found."""

    root: Path  # the directory holding suites/ and thresholds.yaml
    packaged: bool  # True: in the installed package; False: in the checkout (editable install)

    @property
    def suites(self) -> Path:
        return self.root / SUITES

    @property
    def thresholds(self) -> Path:
        return self.root / THRESHOLDS

    @property
    def origin(self) -> str:
        """How a summary names it: "pytest-optbench 0.1.0" or "this checkout"."""
        from .. import __version__

        return f"pytest-optbench {__version__}" if self.packaged else "the pytest-optbench checkout"


def _complete(root: Path) -> bool:
    return (root / SUITES).is_dir() and (root / THRESHOLDS).is_file()


@cache
def bundled() -> Bundled | None:
    """The bank that ships with this installation; None when neither copy is there (a
    wheel built without setup.py's hook, or a checkout with its suites removed)."""
    inside = PACKAGE / "bundled"
    if _complete(inside):
        return Bundled(inside, packaged=True)
    checkout = PACKAGE.parent
    if _complete(checkout) and (checkout / "pyproject.toml").is_file() and (checkout / "setup.py").is_file():
        return Bundled(checkout, packaged=False)
    return None


def bank_files(root: Path) -> list[Path]:
    """The bank's suite files, sorted."""
    return sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())


@cache
def bank_suite_ids(root: Path) -> frozenset[str]:
    """The suite ids of the bank under ``root``, read off each file's top-level ``suite:``
    line (the file stem without one) without parsing the YAML: the bundled default gates
    are scoped to them. A test keeps the shortcut equal to what loading the suites gives."""
    ids = set()
    for path in bank_files(root):
        head = path.read_text(encoding="utf-8", errors="replace")[:4096]
        match = _SUITE_LINE.search(head)
        ids.add(match.group(1).strip("'\"") if match else path.stem)
    return frozenset(ids)
