"""The JSON report: metadata, every item's raw answers, every aggregate and gate verdict."""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from ..outcome import Outcome


def _clean(value: Any) -> Any:
    """JSON has no NaN: non-finite floats become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def build_report(outcome: Outcome, metadata: dict[str, Any]) -> dict[str, Any]:
    return _clean({
        "format": "pytest-optbench-report",
        "format_version": 1,
        "run": metadata,
        "items": [r.to_dict() for r in outcome.records],
        "items_without_results": outcome.missing,
        "aggregates": [a.to_dict() for a in outcome.aggregates],
        "gates": [v.to_dict() for v in outcome.verdicts],
    })


def write_report(path: Path, report: dict[str, Any]) -> None:
    """Write atomically, so a crash never leaves half a report where a good one was."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=2, ensure_ascii=False, allow_nan=False)
        handle.write("\n")
    os.replace(tmp, path)
