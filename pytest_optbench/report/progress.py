"""Progress while answers arrive. On a terminal, one line redrawn in place (tqdm): done, in
flight, retries, cached, rate. Without one (CI, output to a file), a plain line at a steady
interval, so that a long run never looks hung: done of total, answers per second, retries,
ETA. The clock is injected, so tests never read the wall clock."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

from ..elicit.counters import EngineStats

PLAIN_INTERVAL = 30.0  # seconds between two plain lines (--optbench-progress-interval)


def progress_wanted(verbosity: int, stream: TextIO = sys.stderr) -> bool:
    """The redrawn line: on a terminal only; quiet under CI, -q, or output captured to a file."""
    return verbosity >= 0 and not os.environ.get("CI") and hasattr(stream, "isatty") and stream.isatty()


def plain_wanted(verbosity: int, interval: float) -> bool:
    """The plain line: wherever the redrawn one is not shown, except under -q or interval 0."""
    return verbosity >= 0 and interval > 0


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


def duration(seconds: float) -> str:
    """``42 s``, ``7 min 5 s``, ``2 h 3 min``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def plain_line(stats: EngineStats, elapsed: float, label: str = "optbench") -> str:
    """One line of progress: done of total, the rate of answers received in this run (those
    read from the store arrive at once and would make the rate a lie), retries, the ETA."""
    fresh = stats.done - stats.cached
    rate = fresh / elapsed if elapsed > 0 else 0.0
    share = f" ({stats.done / stats.total:.0%})" if stats.total else ""
    parts = [f"{stats.done:,} of {stats.total:,} answers{share}"]
    if stats.cached:
        parts.append(f"{stats.cached:,} from the store")
    parts.append(f"{rate:.1f} answers/s")
    parts.append(f"{stats.retries:,} retries ({stats.rate_limited:,} after a 429)")
    if stats.failed:
        parts.append(f"{stats.failed:,} failed")
    left = stats.total - stats.done - stats.failed
    if left <= 0:
        parts.append(f"done in {duration(elapsed)}")
    elif rate > 0:
        parts.append(f"ETA {duration(left / rate)}")
    else:
        parts.append("ETA unknown (no answer received yet)")
    return f"{label}: " + ", ".join(parts)


class ProgressLines:
    """Callable the engine reports to, for output that is not a terminal: a plain line when
    elicitation starts, then at most one per ``interval`` seconds, and one when everything
    asked for has an answer (or failed). ``start_ticker`` adds a line every ``interval``
    while nothing arrives (a server slow to answer, retries backing off); the engine's own
    reports stay the only source of counts."""

    def __init__(self, write: Callable[[str], None], interval: float = PLAIN_INTERVAL,
                 clock: Callable[[], float] = time.monotonic, label: str = "optbench") -> None:
        self.write, self.interval, self.clock, self.label = write, interval, clock, label
        self._started: float | None = None
        self._last: float | None = None
        self._stats: EngineStats | None = None
        self._finished = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __call__(self, stats: EngineStats) -> None:
        self._stats = stats
        self.tick()

    def tick(self) -> None:
        """Write a line when one is due (the first, the last, or ``interval`` since the last)."""
        stats = self._stats
        if stats is None or stats.total == 0:
            return
        with self._lock:
            now = self.clock()
            if self._started is None:
                self._started = now
            finished = stats.done + stats.failed >= stats.total and stats.in_flight == 0
            due = self._last is None or now - self._last >= self.interval
            if self._finished or not (due or finished):
                return
            self._last, self._finished = now, finished
            line = plain_line(stats, now - self._started, self.label)
        self.write(line)

    def start_ticker(self) -> None:
        """A daemon thread that calls ``tick`` every ``interval`` seconds until ``close``."""
        if self._ticker is None:
            self._ticker = threading.Thread(target=self._run, name="optbench-progress", daemon=True)
            self._ticker.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            if self._finished:
                return
            self.tick()

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=1.0)
