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
    notes: list[str] = field(default_factory=list)  # parameter changes the provider made

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
