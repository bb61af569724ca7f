"""Suite linter: checks the construction rules of the item banks without calling a model.

Pure. Errors are problems that make a metric wrong or misleading (a duplicated item counts
twice; a pair whose questions differ by more than a small edit measures wording, not
valence; a Track A item whose stated rate is not in its scenario is not a control).
Warnings are problems of coverage and style.
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .suite_checks import marker_near_miss, unused_fields
from .suites import Item, Suite, SuiteError, load_suite

ERROR, WARNING = "error", "warning"
# A pair's two questions may differ in at most this many words ("passes" / "does not pass"
# is 2; "opportunities" / "risks" is 1).
MAX_PAIR_EDIT_WORDS = 4
# Share of the minority outcome in a known-answer set below which accuracy and overconfidence
# mostly measure the base rate.
BALANCE_WARNING, BALANCE_ERROR = 0.45, 0.30
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


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


def suite_files(paths: Iterable[Path]) -> list[Path]:
    """Every .yaml/.yml file under the paths, sorted (directories are searched recursively)."""
    files: set[Path] = set()
    for path in paths:
        if path.is_dir():
            files.update(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
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


# Han ideographs and kana are written without spaces: each character counts as a word, so
# the pair check still sees a Chinese or Japanese sentence change by one negation.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def _raw_words(text: str) -> list[str]:
    """Runs of letters, digits and combining marks (Devanagari and Arabic vowel signs are
    marks: they belong to their word)."""
    out, current = [], []
    for ch in text:
        if unicodedata.category(ch)[0] in "LNM" or (ch in "'’" and current):
            current.append(ch)
        elif current:
            out.append("".join(current))
            current = []
    if current:
        out.append("".join(current))
    return out


def words(text: str) -> list[str]:
    tokens = []
    for word in _raw_words(text):
        if _UNSPACED.search(word):
            tokens.extend(word)
        else:
            tokens.append(word.lower())
    return tokens


def edit_words(a: str, b: str) -> int:
    """How many words differ between two questions (the larger side of every change); in
    unspaced scripts two characters count as one word ("いる" / "いない" is one)."""
    left, right = words(a), words(b)
    matcher = difflib.SequenceMatcher(a=left, b=right, autojunk=False)

    def size(tokens: list[str]) -> float:
        return sum(0.5 if _UNSPACED.fullmatch(t) else 1.0 for t in tokens)

    return math.ceil(sum(max(size(left[i1:i2]), size(right[j1:j2]))
                         for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"))


def _texts(item: Item) -> list[tuple[str, str]]:
    """(field, text) of the question texts that identify an item."""
    keys = {"inverted_pair": ("positive", "negative"), "binary": ("question",),
            "conjunction": ("both",), "disjunction": ("either",), "conditional": ("both",),
            "dose_response": ("question",)}[item.kind]
    scenario = str(item.fields.get("scenario", item.fields.get("context", "")))
    return [(k, f"{scenario}\n{item.fields[k]}".strip()) for k in keys]


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
    outcomes: Counter[bool] = Counter()
    for item in suite.items:
        if item.domain is None:
            out.append(Finding(suite.path, item.id, WARNING, "no 'domain' label: it is left out of per-domain breakdowns"))
        if item.kind == "inverted_pair":
            changed = edit_words(item.fields["positive"], item.fields["negative"])
            if changed > MAX_PAIR_EDIT_WORDS:
                out.append(Finding(suite.path, item.id, ERROR,
                                   f"the positive and negative questions differ by {changed} words; an inverted pair "
                                   f"must differ by a small edit (at most {MAX_PAIR_EDIT_WORDS} words)"))
            elif changed == 0:
                out.append(Finding(suite.path, item.id, ERROR, "the positive and negative questions are the same"))
            numbers = {float(n) for n in _NUMBER.findall(item.fields["scenario"])}
            if "expected" in item.fields:
                if float(item.fields["expected"]) not in numbers:
                    out.append(Finding(suite.path, item.id, ERROR,
                                       f"expected {item.fields['expected']:g} does not appear in the scenario; a Track A "
                                       "item must state its base rate"))
            elif suite.track == "B" and any(
                    m for m in re.findall(r"\d+(?:\.\d+)?\s*(?:%|percent)", item.fields["scenario"])):
                out.append(Finding(suite.path, item.id, WARNING,
                                   "the scenario states a percentage: outside Track A the answer must not be computable"))
        if item.kind == "binary":
            outcomes[bool(item.fields["outcome"])] += 1
        if item.kind == "dose_response" and len(set(item.fields["ladder"])) < len(item.fields["ladder"]):
            out.append(Finding(suite.path, item.id, ERROR, "the ladder repeats a rung"))
    total = sum(outcomes.values())
    if total:
        minority = min(outcomes[True], outcomes[False]) / total
        if minority < BALANCE_WARNING:
            severity = ERROR if minority < BALANCE_ERROR else WARNING
            out.append(Finding(suite.path, None, severity,
                               f"known-answer set is unbalanced: {outcomes[True]} yes, {outcomes[False]} no "
                               f"(minority share {minority:.0%}; keep it near 50%)"))
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
    return f"optbench lint: {errors} error(s), {warnings} warning(s)"


# --------------------------------------------------------------------------- translations

# Words that mark English text; none of them is a word of Spanish, French or German.
ENGLISH_MARKERS = frozenset(
    "the what that probability which will does not person this with their would".split()
)
TEXT_KEYS = ("scenario", "positive", "negative", "question", "context", "a", "b", "both", "either", "b_given_a")


def english_counterpart(suite: Suite, english: dict[str, Suite]) -> Suite | None:
    """The English suite a translation mirrors: its id without the ``-<lang>`` suffix, or
    the English suite in a file of the same name."""
    suffix = f"-{suite.language.lower()}"
    if suite.id.lower().endswith(suffix) and suite.id[: -len(suffix)] in english:
        return english[suite.id[: -len(suffix)]]
    stem = Path(suite.path).name
    return next((s for s in english.values() if Path(s.path).name == stem), None)


def looks_english(text: str, language: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return False
    if language.split("-")[0].lower() in ("ko", "zh", "ja", "ar", "ru", "hi", "he", "el", "th", "uk", "fa"):
        # A non-Latin script: mostly ASCII letters means the text was not translated.
        return sum(c.isascii() for c in letters) / len(letters) > 0.5
    return len(ENGLISH_MARKERS.intersection(words(text))) >= 3


def lint_translations(suites: Sequence[Suite]) -> list[Finding]:
    english = {s.id: s for s in suites if s.language.lower().startswith("en")}
    out: list[Finding] = []
    for suite in suites:
        if suite.language.lower().startswith("en"):
            continue
        original = english_counterpart(suite, english)
        if original is None:
            continue  # not a translation of a bundled English suite
        theirs = {i.id: i for i in original.items}
        ours = {i.id: i for i in suite.items}
        for missing in sorted(set(theirs) - set(ours)):
            out.append(Finding(suite.path, missing, ERROR, f"id of {original.path} is missing from this translation"))
        for extra in sorted(set(ours) - set(theirs)):
            out.append(Finding(suite.path, extra, ERROR, f"id is not in {original.path}"))
        for item_id in sorted(set(ours) & set(theirs)):
            item, source = ours[item_id], theirs[item_id]
            if item.kind != source.kind:
                out.append(Finding(suite.path, item_id, ERROR, f"kind {item.kind} differs from {source.kind} in {original.path}"))
                continue
            for key in TEXT_KEYS:
                text = item.fields.get(key)
                if not isinstance(text, str):
                    continue
                if text.strip() == str(source.fields.get(key, "")).strip() or looks_english(text, suite.language):
                    out.append(Finding(suite.path, item_id, ERROR, f"'{key}' looks untranslated English text"))
            for rung, text in enumerate(item.fields.get("ladder", ()), start=1):
                if looks_english(text, suite.language):
                    out.append(Finding(suite.path, item_id, ERROR, f"ladder rung {rung} looks untranslated English text"))
    return out
