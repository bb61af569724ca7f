"""Per-item results: what was asked, what came back, what it parsed to.

Pure and JSON-round-trippable: records travel from xdist workers to the controller on the
test report and are written verbatim into the JSON report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REFUSAL_VALUE = 50.0


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
        import numpy as np  # at scoring time only: a run that scores nothing never loads numpy

        values = self.values(keep_fifty)
        return float(np.mean(values)) if values else float("nan")


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

    def to_dict(self) -> dict[str, Any]:
        """Like ``dataclasses.asdict``, several times faster (it runs once per item)."""
        data = dict(self.__dict__)
        data["notes"] = list(self.notes)
        data["prompts"] = [{"role": p.role, "user": p.user, "answers": [dict(a.__dict__) for a in p.answers]}
                           for p in self.prompts]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ItemRecord:
        prompts = [
            PromptRecord(p["role"], p["user"], [Answer(**a) for a in p["answers"]])
            for p in data["prompts"]
        ]
        return cls(**{**data, "prompts": prompts})


class ReportError(ValueError):
    """A JSON report cannot be read; one sentence naming the file."""


def load_report(path: Path) -> dict[str, Any]:
    """Read a report written by ``--optbench-report``, with a clear error when it is not one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReportError(f"{path}: cannot read the report ({exc.strerror}).") from None
    except ValueError as exc:
        raise ReportError(f"{path}: not valid JSON ({exc}).") from None
    if not isinstance(data, dict) or data.get("format") != "pytest-optbench-report":
        raise ReportError(f"{path}: not a pytest-optbench JSON report (no \"format\": \"pytest-optbench-report\").")
    if data.get("format_version") != 1:
        raise ReportError(f"{path}: report format version {data.get('format_version')!r} is not supported (expected 1).")
    for key, kind in (("run", dict), ("items", list), ("aggregates", list), ("gates", list)):
        if not isinstance(data.get(key), kind):
            raise ReportError(f"{path}: key '{key}' is missing or is not a {kind.__name__}.")
    return data


def report_records(data: dict[str, Any], path: Path) -> list[ItemRecord]:
    try:
        return [ItemRecord.from_dict(item) for item in data["items"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ReportError(f"{path}: an entry of 'items' is malformed ({type(exc).__name__}: {exc}).") from None
