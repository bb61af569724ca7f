"""A JSON report read back: checked field by field, then turned into its records. Pure.

A baseline, ``optbench compare`` and ``optbench gate`` read reports this package wrote (or
someone edited): a wrong type is refused when the file is read, with one sentence naming the
file and the field, before any answer is paid for, never met halfway through scoring.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import kinds
from ..records.item import ItemRecord
from ..text.display import one_line, shown


class ReportError(ValueError):
    """A JSON report cannot be read; one sentence naming the file."""


# What a report may hold where this package reads it: a baseline, ``optbench compare`` and
# its --html page score and print these fields, so a wrong type is refused when the file is
# read (before any answer is paid for), never met halfway through scoring.
MAX_REPORT_DEPTH = 64  # a report nests about 8 levels; Python's own encoder stops near 300
MAX_RUN_TEXT = 1000  # characters of a run setting: they are printed when runs differ
MAX_RUN_LIST = 1000  # entries of a run setting that lists values (served models, fingerprints)
MAX_RESAMPLES = 100_000  # as --optbench-bootstrap: a report must not make compare run for days
_RUN_FIELDS = {"model": "model", "keep_fifty": "bool?", "seed": "int?", "bootstrap_resamples": "resamples?",
               "samples_override": "int?", "temperature_override": "num?", "system_prompt_override": "bool?",
               "base_url_set": "bool?", "prompt_hash": "text?", "plugin_version": "text?", "elicit": "text?",
               "model_version": "model", "served_models": "texts?", "system_fingerprints": "texts?"}
_ITEM_FIELDS = {"suite": "str", "item": "str", "condition": "str", "kind": "kind", "file": "str", "model": "str",
                "prompts": "list", "track": "str?", "domain": "str?", "language": "str", "expected": "finite?",
                "outcome": "bool?", "direction": "str?", "prompt_hash": "str", "suite_prompt_hash": "str",
                "notes": "strs", "faults": "strs", "elicit": "mode", "model_version": "str"}
_ITEM_REQUIRED = ("suite", "item", "condition", "kind", "file", "model", "prompts")
_PROMPT_FIELDS = {"role": "str", "user": "str", "answers": "list"}
_ANSWER_FIELDS = {"raw": "str?", "value": "finite?", "reason": "str?", "error": "str?", "cached": "bool?",
                  "input_tokens": "count", "output_tokens": "count", "truncated": "bool?",
                  "batch": "str?", "mode": "mode?", "mass": "share?", "distribution": "distribution?",
                  "served_model": "str?", "system_fingerprint": "str?", "rule": "str?"}
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
        return isinstance(value, str) and value in kinds.SCORED_ROLES
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
    if kind == "texts":
        return isinstance(value, list) and len(value) <= MAX_RUN_LIST and all(
            isinstance(v, str) and len(v) <= MAX_RUN_TEXT for v in value)
    if kind == "model":
        return value is None or (isinstance(value, str) and len(value) <= MAX_RUN_TEXT) or (
            isinstance(value, list) and all(isinstance(v, str) and len(v) <= MAX_RUN_TEXT for v in value))
    raise AssertionError(kind)


_WHAT = {"str": "a string", "text": f"a string of at most {MAX_RUN_TEXT:,} characters", "bool": "true or false",
         "int": "a whole number", "count": "a whole number of at least 0", "num": "a number", "finite": "a finite number",
         "resamples": f"a whole number from 1 to {MAX_RESAMPLES:,}", 
         "list": "a list", "strs": "a list of strings",
         "texts": f"a list of at most {MAX_RUN_LIST:,} strings of at most {MAX_RUN_TEXT:,} characters", "model": "a model name or a list of them",
         "mode": f"one of {', '.join(_MODES)}", "share": "a number from 0 to 1",
         "distribution": f"an object of at most {_MAX_DISTRIBUTION} values (0-100, yes, no) to numbers from 0 to 1"}


def _what(kind: str) -> str:
    # The kinds are the registry's at the time of reading (a plugin may have added one).
    return f"one of {', '.join(kinds.SCORED_ROLES)}" if kind == "kind" else _WHAT[kind]


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
            what = _what(kind.rstrip("?")) + (" or null" if kind.endswith("?") else "")
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
        missing = [role for role in kinds.SCORED_ROLES[item["kind"]] if role not in roles]
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
