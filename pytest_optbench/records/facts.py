"""Facts about collection and answering that the controller needs from every worker.

Pure and light (no numpy): the worker session keeps one from the start of a run. Under
pytest-xdist each worker sends its own through ``workeroutput`` (plain JSON-like data) and
the controller merges them; in a serial run the controller reads the worker's directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class RunFacts:
    """What the processes that collected and ran items saw; merged over xdist workers (each
    sends its own through ``workeroutput``), so it travels as plain JSON-like data."""

    processes: int = 0  # how many processes reported (0: nothing is known)
    suite_items: int = 0  # suite items collected, before -k, -m and --language
    selected: int = 0  # suite items left to run
    languages: list[str] = field(default_factory=list)  # languages of the suites collected
    near_misses: list[str] = field(default_factory=list)  # sentences
    unused_fields: list[str] = field(default_factory=list)  # sentences
    sources: list[str] = field(default_factory=list)  # who answered, and why
    language_error: str | None = None  # --language matched no suite (a usage error)

    def merge(self, other: Mapping[str, Any]) -> None:
        """Fold in another process's facts: every worker collects the same items, so counts
        are the largest seen and sentences are deduplicated."""
        self.processes += int(other.get("processes", 1) or 1)
        self.suite_items = max(self.suite_items, int(other.get("suite_items", 0)))
        self.selected = max(self.selected, int(other.get("selected", 0)))
        for name in ("languages", "near_misses", "unused_fields", "sources"):
            mine = getattr(self, name)
            mine.extend(x for x in other.get(name) or () if x not in mine)
        self.language_error = self.language_error or other.get("language_error")

    def to_dict(self) -> dict[str, Any]:
        return {"processes": max(1, self.processes), "suite_items": self.suite_items, "selected": self.selected,
                "languages": sorted(self.languages), "near_misses": list(self.near_misses),
                "unused_fields": list(self.unused_fields), "sources": list(self.sources),
                "language_error": self.language_error}
