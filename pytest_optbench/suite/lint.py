"""Suite linter: checks the construction rules of the item banks without calling a model.

Pure. Errors are problems that make a metric wrong or misleading (a duplicated item counts
twice; a pair whose questions differ by more than a small edit measures wording, not
valence; a Track A item whose stated rate is not in its scenario is not a control).
Warnings are problems of coverage and style. The rules of one item kind live with the kind
(``Kind.lint`` in kinds/); this module runs them and the rules across items and suites.
"""

from __future__ import annotations

import fnmatch
import os
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import kinds
from ..kinds.base import ERROR, INFO, WARNING, ItemLike
from ..kinds.wording import edit_words, words
from .checks import marker_near_miss, unused_fields
from .load import Item, Suite, SuiteError, load_suite
from .translations import check_translations, english_counterpart, looks_english

__all__ = [
    "ERROR", "INFO", "WARNING", "Finding", "edit_words", "english_counterpart", "lint_paths", "lint_suites",
    "lint_translations", "load_suites", "looks_english", "suite_files", "summary_line", "words",
]


@dataclass(frozen=True)
class Finding:
    path: str
    item: str | None
    severity: str
    message: str

    def sort_key(self) -> tuple[str, str, str, str]:
        return (self.path, self.item or "", self.severity, self.message)

    def line(self) -> str:
        where = f"{self.path}::{self.item}" if self.item else self.path
        return f"{where}: {self.severity}: {self.message}"


# Folders a directory search skips, as pytest's default ``norecursedirs`` does (and any
# virtualenv): ``optbench lint .`` checks a project, not its .venv or .git.
SKIPPED_DIRS = ("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}", "__pycache__")


def _skipped(directory: Path) -> bool:
    return any(fnmatch.fnmatchcase(directory.name, p) for p in SKIPPED_DIRS) or (directory / "pyvenv.cfg").is_file()


def suite_files(paths: Iterable[Path]) -> list[Path]:
    """Every .yaml/.yml file under the paths, sorted (directories are searched recursively,
    without the folders pytest skips; a path given is searched whatever its name)."""
    files: set[Path] = set()
    for path in paths:
        if path.is_dir():
            for folder, dirs, names in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not _skipped(Path(folder, d)))
                files.update(Path(folder, n) for n in names if n.endswith((".yaml", ".yml"))
                             and Path(folder, n).is_file())
        elif path.is_file():
            files.add(path)
    return sorted(files)


def load_suites(files: Sequence[Path], display: dict[Path, str]) -> tuple[list[Suite], list[Finding]]:
    suites, findings = [], []
    for path in files:
        try:
            suite = load_suite(path, display[path])
        except SuiteError as exc:
            findings.append(Finding(display[path], None, ERROR, str(exc)))
            continue
        if suite is not None:
            suites.append(suite)
        elif (finding := _marker_finding(path, display[path])) is not None:
            findings.append(finding)
    return suites, findings


def _marker_finding(path: Path, display: str) -> Finding | None:
    """A YAML file that is no suite because its marker looks misspelt (``optbnch: 1``)."""
    try:
        key = marker_near_miss(path.read_text(encoding="utf-8", errors="replace")[:65536])
    except OSError:
        return None
    if key is None:
        return None
    return Finding(display, None, ERROR, f"top-level key '{key}' looks like a misspelt 'optbench' marker, so the "
                   "file is not collected as a suite; rename the key to 'optbench'")


def _texts(item: Item) -> list[tuple[str, str]]:
    """(field, text) of the question texts that identify an item (the kind names them)."""
    scenario = str(item.fields.get("scenario", item.fields.get("context", "")))
    return [(k, f"{scenario}\n{item.fields[k]}".strip()) for k in kinds.kind_of(item.kind).distinct]


def lint_suites(suites: Sequence[Suite]) -> list[Finding]:
    findings: list[Finding] = []
    ids_by_language: dict[tuple[str, str], list[str]] = defaultdict(list)
    texts: dict[str, tuple[str, str]] = {}
    for suite in suites:
        findings.extend(_lint_suite(suite))
        findings.extend(Finding(u.path, u.item, WARNING, f"field '{u.key}' is used by no template, condition or "
                                f"item kind{u.typo_text}") for u in unused_fields(suite))
        for item in suite.items:
            ids_by_language[(suite.language, item.id)].append(suite.path)
            for key, text in _texts(item):
                normalised = " ".join(words(text))
                if normalised in texts:
                    first_path, first_item = texts[normalised]
                    findings.append(Finding(suite.path, item.id, ERROR,
                                            f"'{key}' with its scenario repeats {first_path}::{first_item}"))
                else:
                    texts[normalised] = (suite.path, item.id)
    findings.extend(lint_translations(suites))
    for (language, item_id), paths in sorted(ids_by_language.items()):
        if len(paths) > 1:
            findings.append(Finding(paths[1], item_id, WARNING,
                                    f"id '{item_id}' is also used in {paths[0]} ({language}); reports name items by suite and id, so keep ids distinct within a language"))
    return sorted(set(findings), key=Finding.sort_key)


def _lint_suite(suite: Suite) -> list[Finding]:
    out = []
    by_kind: dict[str, list[ItemLike]] = defaultdict(list)
    for item in suite.items:
        if item.domain is None:
            out.append(Finding(suite.path, item.id, WARNING, "no 'domain' label: it is left out of per-domain breakdowns"))
        by_kind[item.kind].append(item)
    for kind, items in by_kind.items():
        out.extend(Finding(suite.path, f.item, f.severity, f.message)
                   for f in kinds.kind_of(kind).lint(items, suite.track))
    return out


def lint_paths(paths: Sequence[Path], root: Path | None = None) -> list[Finding]:
    """Load every suite under the paths and lint them together."""
    files = suite_files(paths)
    display = {f: _relative(f, root) for f in files}
    suites, findings = load_suites(files, display)
    return sorted(findings + lint_suites(suites), key=Finding.sort_key)


def _relative(path: Path, root: Path | None) -> str:
    try:
        return str(path.resolve().relative_to((root or Path.cwd()).resolve()))
    except ValueError:
        return str(path)


def summary_line(findings: Sequence[Finding]) -> str:
    errors = sum(f.severity == ERROR for f in findings)
    warnings = sum(f.severity == WARNING for f in findings)
    infos = sum(f.severity == INFO for f in findings)
    listed = f", {infos} item(s) listed for review" if infos else ""
    return f"optbench lint: {errors} error(s), {warnings} warning(s){listed}"


# --------------------------------------------------------------------------- translations


def lint_translations(suites: Sequence[Suite]) -> list[Finding]:
    """Each translated suite against its English source (translations.py)."""
    return [Finding(p.path, p.item, p.severity, p.message) for p in check_translations(suites)]
