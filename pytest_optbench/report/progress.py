"""A progress line while answers arrive: done, in flight, retries, cached, rate (tqdm)."""

from __future__ import annotations

import os
import sys
import time
from typing import Any, TextIO

from ..elicit.counters import EngineStats


def progress_wanted(verbosity: int, stream: TextIO = sys.stderr) -> bool:
    """On a terminal only: quiet under CI, -q, or when output is captured to a file."""
    return verbosity >= 0 and not os.environ.get("CI") and hasattr(stream, "isatty") and stream.isatty()


class Progress:
    """Callable the engine reports to; redraws at most ten times a second."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        from tqdm import tqdm

        self._bar: Any = tqdm(total=0, unit="answer", desc="optbench", file=stream, leave=False,
                              dynamic_ncols=True)
        self._last = 0.0

    def __call__(self, stats: EngineStats) -> None:
        now = time.monotonic()
        if now - self._last < 0.1 and stats.done < stats.total:
            return
        self._last = now
        self._bar.total = stats.total
        self._bar.n = stats.done
        elapsed = max(now - stats.started, 1e-9)
        self._bar.set_postfix_str(
            f"in flight {stats.in_flight}, retries {stats.retries}, 429s {stats.rate_limited}, "
            f"cached {stats.cached}, failed {stats.failed}, {(stats.done - stats.cached) / elapsed:.1f}/s",
            refresh=True,
        )

    def close(self) -> None:
        self._bar.close()
