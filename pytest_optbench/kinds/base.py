"""What an item kind knows, behind one Protocol: the rest of the code asks the kind.

A kind declares its fields (and checks their types), builds the question of each prompt role,
names the aggregate families that apply to it, counts and explains its axiom violations,
aims the simulated model's answer for each role, and lints its items. Pure: imports nothing
from pytest, and numpy only inside the functions that compute (loading suites needs none).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ..records.item import ItemRecord

if TYPE_CHECKING:
    import numpy as np

# Field types. TEXT: prose the model reads (a condition may rewrite it, a translation must
# translate it). WORD: a string from a fixed set, checked as text first, then by the kind.
# DATA: a number, boolean or list, checked by the kind alone. WORD and DATA fields are data,
# not text: conditions may not transform them.
TEXT, WORD, DATA = "text", "word", "data"

# Aggregate families (scoring/aggregate.py computes them; a kind lists those that apply).
# SKEW reads roles ``positive`` and ``negative``; BINARY reads role ``yes`` and the record's
# ``outcome``; VIOLATION calls the kind's ``violations`` and reports ``<kind>_violation_rate``.
# The answer rates and the condition effects apply to every kind.
SKEW, BINARY, VIOLATION = "skew", "binary", "violation"

# Lint severities; an info finding lists something a reviewer should see (an adapted item).
ERROR, WARNING, INFO = "error", "warning", "info"

ANSWER_RULE = "Reply with a single integer from 0 to 100 and nothing else."
# Short on purpose: the seed paper's ~1,000-token prompt multiplies the bill by every request.
PROBABILITY_PROMPT = (
    "You estimate probabilities of outcomes in short scenarios. Judge each question on its "
    "own, as a careful forecaster would. The answer is the probability in percent. " + ANSWER_RULE
)


@dataclass(frozen=True)
class FieldSpec:
    """One field of an item kind."""

    name: str
    required: bool = True
    type: str = TEXT
    # Passed to the model under test (``Prompt.meta``) as labelled data when an item has it.
    label: bool = False
    # No other kind may use this name: a Track A ``expected`` on a binary item is a mistake
    # worth naming, not a free text field.
    reserved: bool = False


class FieldError(ValueError):
    """A kind rejects a field; suites.py adds the file, item and line to ``message``."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key, self.message = key, message


@dataclass(frozen=True)
class Question:
    """One prompt role of an item: its scenario and its question text."""

    role: str
    scenario: str
    question: Any  # the field as written (a YAML number stays a number in the template)


class Violations(NamedTuple):
    """Violations of one battery at one tolerance: hits among checks, and the items."""

    hits: int
    checks: int
    items: list[str]


@dataclass(frozen=True)
class Violation:
    """How far one item breaks its kind's rule (pp), and a sentence that says so."""

    size: float
    text: str


class Lint(NamedTuple):
    """One lint finding of a kind's rules (``item`` None: the whole suite)."""

    item: str | None
    severity: str
    message: str


class ItemLike(Protocol):
    """What lint rules read of a validated item (``suites.Item``)."""

    @property
    def id(self) -> str: ...

    @property
    def fields(self) -> Mapping[str, Any]: ...


class Simulator(Protocol):
    """What a kind's simulated-answer hook may ask the simulated model (providers/sim.py)."""

    def parameter(self, name: str, default: float = 0.0) -> float:
        """A profile parameter (``delta_plus``, ``conjunction_violation_rate`` ...)."""
        ...

    def rng(self, *parts: object) -> np.random.Generator:
        """A generator seeded from the model's seed and ``parts``."""
        ...

    def item_tilt(self, meta: Mapping[str, Any]) -> float:
        """A per-item extra optimism (the ``skewed`` profile's heavy tail; 0 by default)."""
        ...


class Kind(Protocol):
    """An item kind. Implement it (usually by subclassing ``KindBase``) in one module of
    ``kinds/`` and list it in ``kinds/__init__.py``."""

    name: str
    fields: tuple[FieldSpec, ...]  # required ones first, in the order they are reported
    tracks: tuple[str, ...]  # suite-level ``track`` values this kind understands (none: no track)
    default_track: str | None
    families: tuple[str, ...]  # aggregate families that apply (SKEW, BINARY, VIOLATION)
    fifty_is_refusal: bool  # an answer of exactly 50 is a refusal (the spec's rule for pairs)
    sim_noise: str  # the simulated-model parameter that sets the answer noise (sd, pp)
    distinct: tuple[str, ...]  # question fields that identify an item (lint: no duplicates)
    # VIOLATION family: the tolerance (pp) its rate is computed at unless a gate names another
    # (scoring/tolerances.py says why each default is what it is).
    default_tolerance: float
    # The prompt roles its scoring reads: a record (or a JSON report read back) that lacks one
    # cannot be scored, so a report without them is refused when it is read.
    scored_roles: tuple[str, ...]

    def check_fields(self, fields: Mapping[str, Any], track: str | None) -> dict[str, Any]:
        """Type checks beyond "present and non-empty text"; the fields, normalised.
        Raises ``FieldError``."""
        ...

    def system_prompt(self, track: str | None) -> str:
        """The built-in system prompt for items of this kind."""
        ...

    def questions(self, fields: Mapping[str, Any]) -> list[Question]:
        """The prompt roles of an item (after its condition), in order."""
        ...

    def primary_answer(self, record: ItemRecord, keep_fifty: bool) -> float:
        """The one number condition effects compare, NaN when missing."""
        ...

    def violations(self, records: Sequence[ItemRecord], tolerance: float) -> Violations:
        """Count the violations of this kind's rule (VIOLATION family) at ``tolerance`` pp."""
        ...

    def checks(self, record: ItemRecord) -> int:
        """How many checks of the violation rule one item makes when every answer is usable
        (what "n of N checks usable" counts against)."""
        ...

    def explain(self, record: ItemRecord) -> Violation | None:
        """How far one item breaks the rule at tolerance 0, for reports; None if no rule."""
        ...

    def simulated_answer(self, meta: Mapping[str, Any], sim: Simulator) -> float:
        """The mean answer the simulated model aims at for ``meta['role']`` (0-100)."""
        ...

    def lint(self, items: Sequence[ItemLike], track: str | None) -> list[Lint]:
        """This kind's construction rules over the items of one suite."""
        ...


def violation_metric(kind: Kind) -> str:
    return f"{kind.name}_violation_rate"


def violation_counts(kind: Kind, records: Sequence[ItemRecord],
                     tolerance: float) -> tuple[list[int], list[int], list[str]]:
    """Per item, in the order given: (violations, checks), and the violating item ids, for
    clustered intervals (a dose-response ladder is several checks, its adjacent steps). The
    kind's own check decides, one item at a time. An item without a usable answer set counts
    (0, 0): it adds nothing to a rate, and the lists of two runs stay aligned item by item
    (a baseline comparison pairs them)."""
    found = [kind.violations([record], tolerance) for record in records]
    return [f.hits for f in found], [f.checks for f in found], [item for f in found for item in f.items]


def item_rng(sim: Simulator, meta: Mapping[str, Any]) -> np.random.Generator:
    """One generator per item and condition, shared by its roles and samples."""
    return sim.rng("item", meta.get("suite"), meta.get("item"), meta.get("condition"))


def prompt_means(record: ItemRecord) -> dict[str, float]:
    """Mean answer per role (a 50 counts: outside pairs it is an answer)."""
    return {p.role: p.mean(keep_fifty=True) for p in record.prompts}


class KindBase:
    """Defaults for a kind: no track, no family of its own, no violation rule, no lint rule."""

    name: str = ""
    fields: tuple[FieldSpec, ...] = ()
    tracks: tuple[str, ...] = ()
    default_track: str | None = None
    families: tuple[str, ...] = ()
    fifty_is_refusal: bool = False
    sim_noise: str = "axiom_noise_sd"
    distinct: tuple[str, ...] = ()
    default_tolerance: float = 0.0
    scored_roles: tuple[str, ...] = ()

    def check_fields(self, fields: Mapping[str, Any], track: str | None) -> dict[str, Any]:
        return dict(fields)

    def system_prompt(self, track: str | None) -> str:
        return PROBABILITY_PROMPT

    def questions(self, fields: Mapping[str, Any]) -> list[Question]:
        raise NotImplementedError(f"kind {self.name} builds no questions")

    def primary_answer(self, record: ItemRecord, keep_fifty: bool) -> float:
        import numpy as np

        means = [p.mean(keep_fifty=True) for p in record.prompts]
        return float(np.mean(means)) if not np.isnan(means).any() else float("nan")

    def violations(self, records: Sequence[ItemRecord], tolerance: float) -> Violations:
        raise NotImplementedError(f"kind {self.name} has no violation rule")

    def checks(self, record: ItemRecord) -> int:
        return 1

    def explain(self, record: ItemRecord) -> Violation | None:
        return None

    def simulated_answer(self, meta: Mapping[str, Any], sim: Simulator) -> float:
        raise NotImplementedError(f"kind {self.name} has no simulated answer")

    def lint(self, items: Sequence[ItemLike], track: str | None) -> list[Lint]:
        return []

    def __repr__(self) -> str:
        return f"<kind {self.name}>"
