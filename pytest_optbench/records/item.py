"""Per-item results: what was asked, what came back, what it parsed to.

Pure and JSON-round-trippable: records travel from xdist workers to the controller on the
test report and are written verbatim into the JSON report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

REFUSAL_VALUE = 50.0
BATCH_PRICE = 0.5  # both providers bill an answer from a batch at half the real-time price
# An answer the session stopped asking for (a bad key, the deadline, a dead server) carries
# an error that starts with this; the worker fails one such item and skips the rest.
NOT_ASKED = "not asked: "


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
    # Who served it, where the API said (API models): the model id the response named and
    # OpenAI's system_fingerprint; a baseline comparison names a change of either.
    served_model: str | None = None
    system_fingerprint: str | None = None
    # The extractor's rule that decided the reading of a text answer (answers/extract/rules.py,
    # e.g. "present.label", "decide.conflict"); None: not read from text, or a report written
    # before rules were kept.
    rule: str | None = None

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
        if 0 < len(values) < 8:
            # A few samples (most prompts), without numpy's per-call cost: numpy adds fewer
            # than 8 numbers one after another, as sum() does, so the mean is the same bit for bit.
            return float(sum(values)) / len(values)
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
    # What the model declared it is (``version``: a release, a fingerprint of its own
    # prompt); "" when it declared nothing (a --model model, a report from before).
    model_version: str = ""
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
    def first_error(self) -> str | None:
        """The error to name first: a call's own failure before "not asked" (the session
        stopped after another prompt of this item was refused, and which prompt's request
        the server answered first is a race)."""
        errors = self.errors
        return next((e for e in errors if not e.startswith(NOT_ASKED)), errors[0] if errors else None)

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
    for name in OPTIONAL_ANSWER_FIELDS:  # absent when unknown: the report stays as it was
        if data[name] is None:
            del data[name]
    return data


# Answer fields a report holds only where they have a value (real-time answers have no batch;
# a simulated or conftest model says nothing of who served it; an answer not read from text has
# no extraction rule).
OPTIONAL_ANSWER_FIELDS = ("batch", "served_model", "system_fingerprint", "rule")
