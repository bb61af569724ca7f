"""Elicitation: prompts -> raw answers -> parsed values, as ``PromptRecord``s.

Sequential for now: one call per sample. A failed call is recorded as an error answer
(never a value), so the aggregate counts it and the item can report it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .parse import parse_answer
from .prompts import PromptSpec
from .providers.base import Model, Prompt
from .records import Answer, PromptRecord


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def elicit(model: Model, specs: Sequence[PromptSpec]) -> list[PromptRecord]:
    """Ask every prompt ``samples`` times and parse each answer."""
    records = []
    for spec in specs:
        record = PromptRecord(spec.role, spec.user)
        for sample in range(spec.samples):
            prompt = Prompt(spec.system, spec.user, spec.temperature, sample, spec.meta)
            try:
                raw = model.complete(prompt)
            except Exception as exc:  # noqa: BLE001 - any provider failure is data, not a crash
                record.answers.append(Answer(raw=None, error=_describe(exc)))
                continue
            parsed = parse_answer(raw)
            record.answers.append(Answer(raw=raw, value=parsed.value, reason=parsed.reason))
        records.append(record)
    return records
