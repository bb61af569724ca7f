"""The item-kind registry: every part of the code that depends on an item's kind asks here.

``KINDS`` maps each kind name (the suite format's ``kind:``) to its ``Kind`` (kinds/base.py),
in the order of the spec's table. A new kind is one module in this package, listed below,
plus its tests. ``register`` adds a kind at run time (a plugin's own, or a test's); the
tables derived from the registry (``DerivedTable``) follow it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, TypeVar

from . import binary, conditional, conjunction, disjunction, dose_response, inverted_pair
from .base import DATA, TEXT, Kind, violation_metric

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

# Installed packages add kinds through this entry-point group (each entry a ``Kind``).
ENTRY_POINT_GROUP = "pytest_optbench.kinds"

_REGISTRY: dict[str, Kind] = {}
KINDS: Mapping[str, Kind] = MappingProxyType(_REGISTRY)
_generation = 0  # bumped on every change, so derived tables know to rebuild


def register(kind: Kind) -> Kind:
    """Add a kind; its name must be new (a kind is never replaced behind a suite's back), except
    by the same class when its module is imported again."""
    global _generation
    if not kind.name.isidentifier():
        raise ValueError(f"a kind's name must be a plain identifier, got {kind.name!r}")
    known = _REGISTRY.get(kind.name)
    if known is not None and not _same_definition(known, kind):
        raise ValueError(f"item kind {kind.name!r} is already registered")
    _REGISTRY[kind.name] = kind
    _generation += 1
    return kind


def _same_definition(known: Kind, kind: Kind) -> bool:
    """The same class of the same module: its module imported again (pytester, importlib.reload),
    which may replace it; another kind of that name may not."""
    return (type(known).__module__, type(known).__qualname__) == (type(kind).__module__, type(kind).__qualname__)


@functools.lru_cache(maxsize=8)
def _declared(path: tuple[str, ...]) -> tuple[EntryPoint, ...]:
    """The group's entry points on this import path: scanning every installed distribution
    takes milliseconds, and a process that runs ``optbench`` commands in a loop (a wrapper,
    the tests) would pay them each time. A new path (a package added to it) scans again."""
    from importlib.metadata import entry_points

    del path  # the cache key
    return tuple(entry_points(group=ENTRY_POINT_GROUP))


def load_entry_points() -> list[str]:
    """Register the kinds installed packages declare (entry-point group ``pytest_optbench.kinds``),
    once each; the names of the ones added. An entry that is not a kind is a ``ValueError``
    naming it, so a broken plugin is one sentence, not a traceback."""
    import sys

    added = []
    for entry in _declared(tuple(sys.path)):
        try:
            kind = entry.load()
        except Exception as exc:  # noqa: BLE001 (a plugin's own import error, whatever it is, is one sentence)
            raise ValueError(f"the item kind {entry.name!r} of entry point {entry.value!r} cannot be loaded "
                             f"({type(exc).__name__}: {exc})") from None
        kind = kind() if isinstance(kind, type) else kind
        if not isinstance(getattr(kind, "name", None), str):
            raise ValueError(f"entry point {entry.value!r} (group {ENTRY_POINT_GROUP}) is not an item kind")  # noqa: TRY004 (a usage error like the others)
        known = _REGISTRY.get(kind.name)
        if known is None or not _same_definition(known, kind):
            register(kind)
            added.append(kind.name)
    return added


def unregister(name: str) -> None:
    """Remove a kind added with ``register`` (tests)."""
    global _generation
    del _REGISTRY[name]
    _generation += 1


def kind_of(name: str) -> Kind:
    """The kind called ``name``; ``KeyError`` naming the known kinds otherwise."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise KeyError(f"unknown item kind {name!r} (one of: {', '.join(_REGISTRY)})") from None


def uses(kind_name: str, family: str) -> bool:
    """Does the aggregate ``family`` apply to items of this kind (False for unknown kinds)?"""
    kind = _REGISTRY.get(kind_name)
    return kind is not None and family in kind.families


def field_names(kind: Kind) -> tuple[str, ...]:
    return tuple(f.name for f in kind.fields)


def required_fields(kind: Kind) -> tuple[str, ...]:
    return tuple(f.name for f in kind.fields if f.required)


def optional_fields(kind: Kind) -> tuple[str, ...]:
    return tuple(f.name for f in kind.fields if not f.required)


def self_checked_fields(kind: Kind) -> tuple[str, ...]:
    """Fields the kind checks alone (not first as "a non-empty string")."""
    return tuple(f.name for f in kind.fields if f.type == DATA)


T = TypeVar("T")


def _per_generation(build: Callable[[], T]) -> Callable[[], T]:
    """``build()``, computed once per state of the registry (prompts ask for every item)."""
    seen, value = -1, None

    @functools.wraps(build)
    def current() -> T:
        nonlocal seen, value
        if seen != _generation:
            value, seen = build(), _generation
        return value  # type: ignore[return-value]  # set on the first call

    return current


def _unique(names: Iterator[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


@_per_generation
def typed_fields() -> tuple[str, ...]:
    """Field names some kind treats as data, not text: conditions may not transform them."""
    return _unique(f.name for k in _REGISTRY.values() for f in k.fields if f.type != TEXT)


@_per_generation
def text_fields() -> tuple[str, ...]:
    """Field names some kind treats as prose (what a translation must translate)."""
    return _unique(f.name for k in _REGISTRY.values() for f in k.fields if f.type == TEXT)


@_per_generation
def label_fields() -> tuple[str, ...]:
    """Field names passed to the model as labelled data (``Prompt.meta``) when an item has them."""
    return _unique(f.name for k in _REGISTRY.values() for f in k.fields if f.label)


@_per_generation
def _reserved() -> dict[str, str]:
    return {f.name: k.name for k in _REGISTRY.values() for f in k.fields if f.reserved}


def reserving_kind(field: str) -> str | None:
    """The kind that reserves this field name for itself, if any."""
    return _reserved().get(field)


def tracked_kinds() -> tuple[str, ...]:
    """Kinds whose suites may set ``track``."""
    return tuple(k.name for k in _REGISTRY.values() if k.tracks)


K = TypeVar("K")
V = TypeVar("V")


class DerivedTable(Mapping[K, V]):
    """A read-only table computed from the registry, rebuilt when the registry changes."""

    def __init__(self, build: Callable[[], Mapping[K, V]]) -> None:
        self._build, self._seen, self._table = build, -1, dict[K, V]()

    def _current(self) -> Mapping[K, V]:
        if self._seen != _generation:
            self._table, self._seen = dict(self._build()), _generation
        return self._table

    def __getitem__(self, key: K) -> V:
        return self._current()[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._current())

    def __len__(self) -> int:
        return len(self._current())

    def __repr__(self) -> str:
        return repr(self._current())


# The prompt roles each kind's scoring reads (a report read back must carry them).
SCORED_ROLES: Mapping[str, tuple[str, ...]] = DerivedTable(lambda: {n: k.scored_roles for n, k in _REGISTRY.items()})

for _module in (inverted_pair, binary, conjunction, disjunction, conditional, dose_response):
    register(_module.KIND)

__all__ = [
    "ENTRY_POINT_GROUP",
    "KINDS",
    "SCORED_ROLES",
    "DerivedTable",
    "Kind",
    "field_names",
    "kind_of",
    "label_fields",
    "load_entry_points",
    "optional_fields",
    "register",
    "required_fields",
    "reserving_kind",
    "self_checked_fields",
    "text_fields",
    "tracked_kinds",
    "typed_fields",
    "unregister",
    "uses",
    "violation_metric",
]
