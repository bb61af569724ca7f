"""``optbench lint`` on thresholds files: every key, every glob against the suites present.

Pure (reads files only). A thresholds file is linted for every error it has, not only the
first a session would stop at: unknown keys (with a did-you-mean), bad values, and gates that
could never be judged because their ``suites`` glob matches no suite present, their metric is
computed from item kinds none of those suites has, or their ``conditions`` match no arm of
them. The suites present are those linted with it, else those under the file's own folder,
and always the bundled bank (``pytest --optbench-bank`` runs it).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ...suite.bundled import bundled
from ...suite.lint import ERROR, Finding, lint_suites, load_suites, suite_files
from ...suite.load import Suite
from ...text.didyoumean import suggest_glob
from ...text.yaml_input import YamlError, read_yaml
from ..aggregate import METRIC_KINDS
from .reasons import names
from .spec import EFFECT_METRICS, thresholds_problems

_GATE = re.compile(r"(gate \d+(?: \(line \d+\))?)(?:, |: )(.*)", re.DOTALL)

__all__ = ["KnownSuites", "lint_project", "lint_thresholds", "looks_like_thresholds"]


@dataclass(frozen=True)
class KnownSuites:
    """The suites a thresholds file's globs are checked against: id -> item kinds, arms."""

    kinds: Mapping[str, frozenset[str]]
    conditions: Mapping[str, frozenset[str]]

    @classmethod
    def of(cls, suites: Sequence[Suite]) -> KnownSuites:
        return cls({s.id: frozenset(i.kind for i in s.items) for s in suites},
                   {s.id: frozenset(c.name for c in s.conditions) for s in suites})


def looks_like_thresholds(data: Any) -> bool:
    """A mapping with ``gates`` and no ``items``: a thresholds file (marker or not)."""
    return isinstance(data, Mapping) and "gates" in data and "items" not in data


def _where(display: str, index: int, raw: Any) -> str:
    line = getattr(raw, "line", None)
    return f"gate {index + 1}" + (f" (line {line})" if line else "")


def _globs(raw: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = raw.get(key)
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    return ()  # absent, or malformed (the parse reports that)


def _gate_reach(display: str, index: int, raw: Any, known: KnownSuites) -> list[Finding]:
    """Why a gate could judge no suite present, one finding per cause."""
    if not isinstance(raw, Mapping) or not known.kinds:
        return []
    where = _where(display, index, raw)
    present = sorted(known.kinds)
    suites = _globs(raw, "suites")
    matched = [s for s in present if not suites or any(fnmatch.fnmatchcase(s, g) for g in suites)]
    out = []
    if suites and not matched:
        fixes = [f"'{fix}' (for '{g}')" for g in suites if (fix := suggest_glob(g, present))]
        near = f"; did you mean {' or '.join(fixes)}?" if fixes else ""
        out.append(Finding(display, where, ERROR, f"key 'suites': {list(suites)} match none of the {len(present)} "
                           f"suites present ({names(present)}){near}"))
        return out
    metric = raw.get("metric")
    wanted = METRIC_KINDS.get(metric) if isinstance(metric, str) else None
    if wanted is not None and not any(k in wanted for s in matched for k in known.kinds[s]):
        out.append(Finding(display, where, ERROR, f"key 'metric': {metric} is computed from {' or '.join(wanted)} "
                           f"items, and none of the suites it covers has them ({names(matched)})"))
        return out
    conditions = _globs(raw, "conditions")
    if conditions and metric not in EFFECT_METRICS:
        arms = sorted({c for s in matched for c in known.conditions[s]})
        if not any(fnmatch.fnmatchcase(c, g) for c in arms for g in conditions):
            fixes = [f"'{fix}' (for '{g}')" for g in conditions if (fix := suggest_glob(g, arms))]
            near = f"; did you mean {' or '.join(fixes)}?" if fixes else ""
            out.append(Finding(display, where, ERROR, f"key 'conditions': {list(conditions)} match no condition of "
                               f"the suites it covers ({names(arms)}){near}"))
    return out


def lint_thresholds(data: Any, display: str, known: KnownSuites) -> list[Finding]:
    """Every error of one parsed thresholds file."""
    _gates, problems = thresholds_problems(data, display)
    out = []
    for problem in problems:
        text = str(problem).removeprefix(f"{display}, ").removeprefix(f"{display}: ").rstrip(".")
        gate = _GATE.match(text)
        out.append(Finding(display, gate.group(1), ERROR, gate.group(2)) if gate else Finding(display, None, ERROR, text))
    if isinstance(data, Mapping) and isinstance(data.get("gates"), list):
        for index, raw in enumerate(data["gates"]):
            out.extend(_gate_reach(display, index, raw, known))
    return out


def _thresholds_documents(files: Sequence[Path], display: Mapping[Path, str]) -> list[tuple[Path, Any]]:
    """The files that are thresholds files, parsed (a cheap look first: ``gates`` must occur)."""
    found = []
    for path in files:
        try:
            head = path.read_bytes()[:65536]
        except OSError:
            continue
        if b"gates" not in head:
            continue
        try:
            data = read_yaml(path, display[path])
        except YamlError:
            continue  # the suite loader reports malformed YAML
        if looks_like_thresholds(data):
            found.append((path, data))
    return found


def _known_suites(suites: Sequence[Suite], thresholds: Sequence[Path]) -> KnownSuites:
    """The linted suites, else those under each thresholds file's folder; and the bank."""
    pool = list(suites)
    if not suites:
        files = suite_files([p.parent for p in thresholds])
        pool, _problems = load_suites(files, {f: str(f) for f in files})
    known = KnownSuites.of(pool)
    found = bundled()
    if found is None:
        return known
    bank = _bank(found.suites)
    return KnownSuites({**bank.kinds, **known.kinds}, {**bank.conditions, **known.conditions})


@cache
def _bank(root: Path) -> KnownSuites:
    """The bundled bank's suites, loaded once per process."""
    files = suite_files([root])
    return KnownSuites.of(load_suites(files, {f: str(f) for f in files})[0])


def lint_project(paths: Sequence[Path], root: Path | None = None) -> list[Finding]:
    """``optbench lint PATHS``: the suites under the paths (construction rules) and the
    thresholds files among them (every key, every glob)."""
    files = suite_files(paths)
    display = {f: _relative(f, root) for f in files}
    suites, findings = load_suites(files, display)
    findings += lint_suites(suites)
    documents = _thresholds_documents(files, display)
    if documents:
        known = _known_suites(suites, [p for p, _ in documents])
        for path, data in documents:
            findings += lint_thresholds(data, display[path], known)
    return sorted(set(findings), key=Finding.sort_key)


def _relative(path: Path, root: Path | None) -> str:
    try:
        return str(path.resolve().relative_to((root or Path.cwd()).resolve()))
    except ValueError:
        return str(path)

