"""``optbench init [DIR]``: a starting point a user edits, never written over.

Writes a commented ``thresholds.yaml`` (the bundled default gates, as the package ships them,
and one gate on the example suite), ``thresholds-change.yaml`` (the change gates of pull
requests), ``suites/example.yaml`` (items of every kind), a commented ``conftest.py`` (a
pipeline override) and ``.github/workflows/optbench.yml``. The templates are files beside this
module; the workflow is the one docs/ci.md shows (a test keeps them equal).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..suite.bundled import bundled

HERE = Path(__file__).resolve().parent
WORKFLOW = HERE / "optbench.yml"


class ScaffoldError(Exception):
    """Init cannot write its files (one sentence)."""


@dataclass(frozen=True)
class Written:
    path: str  # relative to the target directory
    written: bool  # False: the file was there already and is left as it was


def thresholds_text() -> str:
    """The header, the bundled default gates as the package ships them (one source), and the
    example suite's gate appended to their list."""
    found = bundled()
    if found is None:
        raise ScaffoldError("this installation of pytest-optbench carries no default thresholds file; "
                            "reinstall it from a wheel or sdist of the project.")
    defaults = found.thresholds.read_text(encoding="utf-8").rstrip("\n") + "\n"
    head = (HERE / "thresholds-head.txt").read_text(encoding="utf-8")
    tail = (HERE / "thresholds-tail.yaml").read_text(encoding="utf-8")
    return head + defaults + tail


def _template(name: str) -> Callable[[], str]:
    return lambda: (HERE / name).read_text(encoding="utf-8")


FILES: tuple[tuple[str, Callable[[], str]], ...] = (
    ("thresholds.yaml", thresholds_text),
    ("thresholds-change.yaml", _template("thresholds-change.yaml")),
    ("suites/example.yaml", _template("example.yaml")),
    ("conftest.py", _template("conftest.py.txt")),
    (".github/workflows/optbench.yml", _template("optbench.yml")),
)


def write_scaffold(target: Path) -> list[Written]:
    """Write every file that is not there yet; one that is there is left alone."""
    if target.exists() and not target.is_dir():
        raise ScaffoldError(f"{target}: is a file, not a directory.")
    out = []
    for name, text in FILES:
        path = target / name
        if path.exists() or path.is_symlink():
            out.append(Written(name, False))
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("x", encoding="utf-8", newline="\n") as handle:  # "x": never over a file
                handle.write(text())
        except OSError as exc:
            raise ScaffoldError(f"{path}: not written ({exc.strerror}).") from None
        out.append(Written(name, True))
    return out
