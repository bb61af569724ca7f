"""Per-item results: what was asked, what came back, what it parsed to.

Pure and JSON-round-trippable: records travel from xdist workers to the controller on the
test report and are written verbatim into the JSON report.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .text import one_line, shown

if TYPE_CHECKING:
    import numpy as np

REFUSAL_VALUE = 50.0
BATCH_PRICE = 0.5  # both providers bill an answer from a batch at half the real-time price


@dataclass
class Answer:
    """One sample: the raw text, its parsed value, or why there is none."""

    raw: str | None
    value: float | None = None
    reason: str | None = None  # why parsing failed
    error: str | None = None  # why the call failed (no text at all)
    cached: bool | None = None  # API answers: read from the store, not paid for in this run
    input_tokens: int = 0  # billed with this sample (a request's tokens go on its first sample)
    output_tokens: int = 0
    truncated: bool | None = None  # cut off at the token limit; None: unknown (a plain model, an old store)
    # How the answer was read (elicit/modes.py): "text", "json" (the schema's field) or
    # "logprobs" (the answer token's distribution); None: text, before modes existed. A json
    # or logprobs run whose server fell back, or ignored the request, has "text" answers.
    mode: str | None = None
    mass: float | None = None  # logprobs: share of the answer position's probability read
    distribution: dict[str, float] | None = None  # logprobs: value (or yes/no) -> probability
    batch: str | None = None  # the provider batch that delivered it (batch price) or will (pending)

    @property
    def pending(self) -> bool:
        """Still in an open provider batch: no text, no error yet."""
        return self.batch is not None and self.raw is None and self.error is None


@dataclass
class PromptRecord:
    role: str
    user: str
    answers: list[Answer] = field(default_factory=list)

    def values(self, keep_fifty: bool = True) -> list[float]:
        """Parsed values, without refusals (exact 50s) unless ``keep_fifty``."""
        return [
            a.value for a in self.answers
            if a.value is not None and (keep_fifty or a.value != REFUSAL_VALUE)
        ]

    def mean(self, keep_fifty: bool = True) -> float:
        """Mean parsed answer; NaN when no sample is usable."""
        values = self.values(keep_fifty)
        if len(values) == 1:  # one sample (often): its value, without numpy's per-call cost
            return float(values[0])
        import numpy as np  # at scoring time only: a run that scores nothing never loads numpy

        return float(np.mean(values)) if values else float("nan")


def prompt_means(prompts: Sequence[PromptRecord], keep_fifty: bool = True) -> np.ndarray:
    """``PromptRecord.mean`` of every prompt, to the last bit, with one numpy call per number
    of values instead of one per prompt (scoring takes the means of thousands)."""
    import numpy as np

    return _rowwise([p.values(keep_fifty) for p in prompts], lambda rows: np.mean(rows, axis=1), 1)


def prompt_sds(prompts: Sequence[PromptRecord]) -> np.ndarray:
    """The sample SD (ddof 1) of each prompt's parsed values, 50s included, as ``np.std`` of
    each alone gives it; NaN for a prompt with fewer than two values."""
    import numpy as np

    return _rowwise([p.values(keep_fifty=True) for p in prompts], lambda rows: np.std(rows, axis=1, ddof=1), 2)


def _rowwise(values: list[list[float]], reduce: Callable[[np.ndarray], np.ndarray], least: int) -> np.ndarray:
    """``reduce`` over each list of at least ``least`` values (NaN for the others), applied to
    the lists of each length stacked as rows: a row reduces exactly as the list alone would."""
    import numpy as np

    out = np.full(len(values), np.nan)
    by_length: dict[int, list[int]] = {}
    for i, row in enumerate(values):
        if len(row) >= least:
            by_length.setdefault(len(row), []).append(i)
    for rows in by_length.values():
        out[rows] = reduce(np.array([values[i] for i in rows], dtype=float))
    return out


@dataclass
class ItemRecord:
    """One item under one condition."""

    suite: str
    item: str
    condition: str
    kind: str
    file: str
    model: str
    prompts: list[PromptRecord]
    track: str | None = None
    domain: str | None = None
    language: str = "en"
    expected: float | None = None
    outcome: bool | None = None
    direction: str | None = None
    prompt_hash: str = ""  # system prompts + template used, to tell prompt changes apart
    suite_prompt_hash: str = ""  # every prompt of the suite, selected or not (collect.suite_prompt_hash)
    notes: list[str] = field(default_factory=list)  # parameter changes the provider made
    elicit: str = "text"  # how its answers were asked for: text | json | logprobs (a report before modes: text)
    # Problems that leave the answers right but must fail the session (a store that could not
    # be written); in the report only when there are some.
    faults: list[str] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.suite, self.item, self.condition)

    @property
    def label(self) -> str:
        """``suite::item``, with ``[condition]`` unless it is ``base`` (as in test ids)."""
        return f"{self.suite}::{self.item}" + ("" if self.condition == "base" else f"[{self.condition}]")

    def prompt(self, role: str) -> PromptRecord:
        for prompt in self.prompts:
            if prompt.role == role:
                return prompt
        raise KeyError(f"item {self.item} has no prompt with role {role!r}")

    def answers(self) -> list[Answer]:
        return [a for p in self.prompts for a in p.answers]

    @property
    def errors(self) -> list[str]:
        return [a.error for a in self.answers() if a.error]

    @property
    def pending_batches(self) -> list[str]:
        """Ids of the open batches that still owe this item answers (empty when none do)."""
        return sorted({a.batch for a in self.answers() if a.pending and a.batch})

    def to_dict(self) -> dict[str, Any]:
        """Like ``dataclasses.asdict``, several times faster (it runs once per item)."""
        data = dict(self.__dict__)
        data["notes"] = list(self.notes)
        if self.faults:
            data["faults"] = list(self.faults)
        else:
            del data["faults"]
        data["prompts"] = [{"role": p.role, "user": p.user, "answers": [_answer_dict(a) for a in p.answers]}
                           for p in self.prompts]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ItemRecord:
        prompts = [
            PromptRecord(p["role"], p["user"], [Answer(**a) for a in p["answers"]])
            for p in data["prompts"]
        ]
        return cls(**{**data, "prompts": prompts})


def _answer_dict(answer: Answer) -> dict[str, Any]:
    data = dict(answer.__dict__)
    if data["batch"] is None:  # real-time answers keep the report as it was
        del data["batch"]
    return data


class ReportError(ValueError):
    """A JSON report cannot be read; one sentence naming the file."""


# What a report may hold where this package reads it: a baseline, ``optbench compare`` and
# its --html page score and print these fields, so a wrong type is refused when the file is
# read (before any answer is paid for), never met halfway through scoring.
MAX_REPORT_DEPTH = 64  # a report nests about 8 levels; Python's own encoder stops near 300
MAX_RUN_TEXT = 1000  # characters of a run setting: they are printed when runs differ
MAX_RESAMPLES = 100_000  # as --optbench-bootstrap: a report must not make compare run for days
# The prompts each kind's scoring reads by role.
REQUIRED_ROLES = {
    "inverted_pair": ("positive", "negative"), "binary": ("yes",), "conjunction": ("a", "b", "both"),
    "disjunction": ("a", "b", "either"), "conditional": ("a", "b_given_a", "both"), "dose_response": (),
}
_RUN_FIELDS = {"model": "model", "keep_fifty": "bool?", "seed": "int?", "bootstrap_resamples": "resamples?",
               "samples_override": "int?", "temperature_override": "num?", "system_prompt_override": "bool?",
               "base_url_set": "bool?", "prompt_hash": "text?", "plugin_version": "text?", "elicit": "text?"}
_ITEM_FIELDS = {"suite": "str", "item": "str", "condition": "str", "kind": "kind", "file": "str", "model": "str",
                "prompts": "list", "track": "str?", "domain": "str?", "language": "str", "expected": "finite?",
                "outcome": "bool?", "direction": "str?", "prompt_hash": "str", "suite_prompt_hash": "str",
                "notes": "strs", "faults": "strs", "elicit": "mode"}
_ITEM_REQUIRED = ("suite", "item", "condition", "kind", "file", "model", "prompts")
_PROMPT_FIELDS = {"role": "str", "user": "str", "answers": "list"}
_ANSWER_FIELDS = {"raw": "str?", "value": "finite?", "reason": "str?", "error": "str?", "cached": "bool?",
                  "input_tokens": "count", "output_tokens": "count", "truncated": "bool?",
                  "batch": "str?", "mode": "mode?", "mass": "share?", "distribution": "distribution?"}
_MODES = ("text", "json", "logprobs")  # elicit/modes.py (a report is read without importing it)
_MAX_DISTRIBUTION = 102  # values 0-100, or yes and no
_AGGREGATE_FIELDS = {"suite": "str", "condition": "str", "metric": "str", "domain": "str?", "value": "num?",
                     "ci_low": "num?", "ci_high": "num?", "n": "int?", "p_value": "num?", "tolerance": "num?"}
_GATE_FIELDS = {"metric": "str?", "suite": "str?", "condition": "str?", "bound_text": "str?", "verdict": "str?",
                "value": "num?", "ci_low": "num?", "ci_high": "num?"}
_LANGUAGE_FIELDS = {"language": "str", "skew": "num?", "ci_low": "num?", "ci_high": "num?", "n": "int?"}


def _is_number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        float(value)  # an integer beyond 1e308 is not one
    except OverflowError:
        return False
    return True


def _fits(kind: str, value: Any) -> bool:
    """Does ``value`` have the type ``kind`` names (a trailing ? allows null)?"""
    if kind.endswith("?"):
        if value is None:
            return True
        kind = kind[:-1]
    if kind == "str":
        return isinstance(value, str)
    if kind == "text":
        return isinstance(value, str) and len(value) <= MAX_RUN_TEXT
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2 ** 63
    if kind == "count":
        return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2 ** 63
    if kind == "resamples":
        return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_RESAMPLES
    if kind == "num":
        return _is_number(value)
    if kind == "finite":
        return _is_number(value) and math.isfinite(value)
    if kind == "kind":
        return isinstance(value, str) and value in REQUIRED_ROLES
    if kind == "mode":
        return isinstance(value, str) and value in _MODES
    if kind == "share":
        return _is_number(value) and 0 <= value <= 1
    if kind == "distribution":
        return (isinstance(value, dict) and len(value) <= _MAX_DISTRIBUTION
                and all(isinstance(k, str) and len(k) <= 3 and _is_number(v) and 0 <= v <= 1 for k, v in value.items()))
    if kind == "list":
        return isinstance(value, list)
    if kind == "strs":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if kind == "model":
        return value is None or (isinstance(value, str) and len(value) <= MAX_RUN_TEXT) or (
            isinstance(value, list) and all(isinstance(v, str) and len(v) <= MAX_RUN_TEXT for v in value))
    raise AssertionError(kind)


_WHAT = {"str": "a string", "text": f"a string of at most {MAX_RUN_TEXT:,} characters", "bool": "true or false",
         "int": "a whole number", "count": "a whole number of at least 0", "num": "a number", "finite": "a finite number",
         "resamples": f"a whole number from 1 to {MAX_RESAMPLES:,}", "kind": f"one of {', '.join(REQUIRED_ROLES)}",
         "list": "a list", "strs": "a list of strings", "model": "a model name or a list of them",
         "mode": f"one of {', '.join(_MODES)}", "share": "a number from 0 to 1",
         "distribution": f"an object of at most {_MAX_DISTRIBUTION} values (0-100, yes, no) to numbers from 0 to 1"}


def _check_fields(path: Path, where: str, entry: Any, fields: dict[str, str], required: Sequence[str] = (),
                  closed: bool = False) -> None:
    if not isinstance(entry, dict):
        raise ReportError(f"{path}: {where} is not an object.")
    for key in required:
        if key not in entry:
            raise ReportError(f"{path}: {where}, key '{key}': is missing.")
    for key, value in entry.items():
        kind = fields.get(key)
        if kind is None:
            if closed:
                raise ReportError(f"{path}: {where}, key '{one_line(key, 60)}': is not a key of this entry.")
            continue
        if not _fits(kind, value):
            what = _WHAT[kind.rstrip("?")] + (" or null" if kind.endswith("?") else "")
            raise ReportError(f"{path}: {where}, key '{key}': must be {what}, got {shown(value, 60)}.")


def _depth(data: Any) -> int:
    """How deep ``data`` nests (iteratively: the point is to refuse what recursion cannot take)."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_REPORT_DEPTH:
            break
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    return deepest


def check_report(data: dict[str, Any], path: Path) -> None:
    """Every field this package reads from a report has the type it expects."""
    _check_fields(path, "'run'", data["run"], _RUN_FIELDS)
    for i, item in enumerate(data["items"]):
        where = f"items[{i}]"
        _check_fields(path, where, item, _ITEM_FIELDS, _ITEM_REQUIRED, closed=True)
        roles = set()
        for j, prompt in enumerate(item["prompts"]):
            _check_fields(path, f"{where}.prompts[{j}]", prompt, _PROMPT_FIELDS, tuple(_PROMPT_FIELDS), closed=True)
            roles.add(prompt["role"])
            for k, answer in enumerate(prompt["answers"]):
                _check_fields(path, f"{where}.prompts[{j}].answers[{k}]", answer, _ANSWER_FIELDS, ("raw",), closed=True)
        missing = [role for role in REQUIRED_ROLES[item["kind"]] if role not in roles]
        if missing:
            raise ReportError(f"{path}: {where}: an item of kind {item['kind']} needs a prompt with role "
                              f"'{missing[0]}'.")
    for i, aggregate in enumerate(data["aggregates"]):
        _check_fields(path, f"aggregates[{i}]", aggregate, _AGGREGATE_FIELDS,
                      ("suite", "condition", "metric", "value", "ci_low", "ci_high"))
    for i, gate in enumerate(data["gates"]):
        _check_fields(path, f"gates[{i}]", gate, _GATE_FIELDS)
    languages = data.get("languages")
    if languages is not None:
        _check_fields(path, "'languages'", languages, {"track_b_skew": "list?"})
        for i, row in enumerate(languages.get("track_b_skew") or []):
            _check_fields(path, f"languages.track_b_skew[{i}]", row, _LANGUAGE_FIELDS, ("language",))


def load_report(path: Path) -> dict[str, Any]:
    """Read a report written by ``--optbench-report``, with a clear error when it is not one
    (or is one that was edited into something this package cannot score)."""
    try:
        data = json.loads(path.read_bytes().decode("utf-8-sig"))
    except OSError as exc:
        raise ReportError(f"{path}: cannot read the report ({exc.strerror}).") from None
    except UnicodeDecodeError as exc:
        raise ReportError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}).") from None
    except RecursionError:
        raise ReportError(f"{path}: not a pytest-optbench JSON report (nested more than "
                          f"{MAX_REPORT_DEPTH} levels deep).") from None
    except ValueError as exc:
        raise ReportError(f"{path}: not valid JSON ({one_line(exc, 200)}).") from None
    if not isinstance(data, dict) or data.get("format") != "pytest-optbench-report":
        raise ReportError(f"{path}: not a pytest-optbench JSON report (no \"format\": \"pytest-optbench-report\").")
    if data.get("format_version") != 1 or isinstance(data.get("format_version"), bool):
        raise ReportError(f"{path}: report format version {shown(data.get('format_version'), 40)} is not supported "
                          "(expected 1).")
    for key, kind in (("run", dict), ("items", list), ("aggregates", list), ("gates", list)):
        if not isinstance(data.get(key), kind):
            raise ReportError(f"{path}: key '{key}' is missing or is not a {kind.__name__}.")
    if _depth(data) > MAX_REPORT_DEPTH:
        raise ReportError(f"{path}: not a pytest-optbench JSON report (nested more than {MAX_REPORT_DEPTH} "
                          "levels deep).")
    check_report(data, path)
    return data


def report_records(data: dict[str, Any], path: Path) -> list[ItemRecord]:
    try:
        return [ItemRecord.from_dict(item) for item in data["items"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ReportError(f"{path}: an entry of 'items' is malformed ({type(exc).__name__}: {one_line(exc, 200)}).") from None
