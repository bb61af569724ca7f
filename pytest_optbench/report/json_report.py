"""The JSON report: metadata, every item's raw answers, every aggregate and gate verdict."""

from __future__ import annotations

import errno
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from ..scoring.crosslingual import language_metrics, spread
from ..scoring.outcome import Outcome
from ..text.display import well_formed


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
    report: dict[str, Any] = _clean({
        "format": "pytest-optbench-report",
        "format_version": 1,
        "run": metadata,
        "items": [r.to_dict() for r in outcome.records],
        "items_without_results": outcome.missing,
        "items_pending": [r.to_dict() for r in outcome.pending],  # answers still in open provider batches
        "aggregates": [a.to_dict() for a in outcome.aggregates],
        "gates": [v.to_dict() for v in outcome.verdicts],
        "warnings": [w.to_dict() for w in outcome.warnings],
        "baseline": outcome.comparison.to_dict() if outcome.comparison else None,
        "languages": {
            "track_b_skew": [s.to_dict() for s in outcome.languages],
            "inter_language_sd": spread([s.skew for s in outcome.languages]),
            # Every metric per bank, condition and language (the summary's language table).
            "metrics": [m.to_dict() for m in language_metrics(outcome.aggregates, outcome.records)],
        },
    })
    return report


def write_text(path: Path, text: str) -> None:
    """Write atomically, so a crash never leaves half a report where a good one was.

    OSError when it cannot (the caller names the report); text that UTF-8 cannot hold (a
    model's lone surrogate) is repaired, not refused."""
    text = well_formed(text)
    if path.parent.exists() and not path.parent.is_dir():  # mkdir would say "File exists"
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path.parent))
    path.parent.mkdir(parents=True, exist_ok=True)
    umask = os.umask(0)
    os.umask(umask)
    # mkstemp makes the file private; a report is an ordinary file (or keeps the old one's mode)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())  # on disk before it replaces the old report
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_report(path: Path, report: dict[str, Any]) -> None:
    write_text(path, json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
