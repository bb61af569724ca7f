"""report/progress.py: when the progress line shows, what it says, how often it redraws.

The clock is a fake one: the module's ``time`` is replaced, so nothing here waits or reads
the wall clock.
"""

from __future__ import annotations

import io
from types import SimpleNamespace

import pytest

from pytest_optbench.elicit.engine import EngineStats
from pytest_optbench.report import progress
from pytest_optbench.report.progress import Progress, progress_wanted


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(progress, "time", SimpleNamespace(monotonic=fake.monotonic))
    return fake


@pytest.mark.parametrize(("verbosity", "ci", "stream", "wanted"), [
    (0, None, Terminal(), True),
    (2, None, Terminal(), True),
    (-1, None, Terminal(), False),  # -q
    (0, "true", Terminal(), False),  # CI
    (0, None, io.StringIO(), False),  # output captured to a file or pipe
    (0, None, object(), False),  # a stream without isatty
])
def test_progress_shows_only_on_an_interactive_terminal(monkeypatch, verbosity, ci, stream, wanted) -> None:
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    assert progress_wanted(verbosity, stream) is wanted


def stats(clock: Clock, **counts: int) -> EngineStats:
    return EngineStats(started=clock.now - 2.0, **counts)


def test_the_line_counts_answers_and_the_rate_of_fresh_ones(clock: Clock) -> None:
    stream = Terminal()
    bar = Progress(stream)
    bar(stats(clock, total=20, done=10, cached=4, in_flight=3, retries=1, rate_limited=2, failed=0))
    text = stream.getvalue()
    assert "optbench" in text and "10/20" in text
    # (done - cached) / elapsed = 6 answers in 2 s
    assert "in flight 3, retries 1, 429s 2, cached 4, failed 0, 3.0/s" in text
    bar.close()


def test_redraws_at_most_ten_times_a_second_but_always_at_the_end(clock: Clock) -> None:
    stream = Terminal()
    bar = Progress(stream)
    bar(stats(clock, total=4, done=1))
    drawn = stream.getvalue()
    clock.now += 0.05
    bar(stats(clock, total=4, done=2, in_flight=7))
    assert stream.getvalue() == drawn  # too soon: skipped
    clock.now += 0.02
    bar(stats(clock, total=4, done=4))  # done: drawn however soon
    assert stream.getvalue() != drawn and "4/4" in stream.getvalue()
    clock.now += 0.2
    bar(stats(clock, total=4, done=4, in_flight=5))
    assert "in flight 5" in stream.getvalue()
    assert "in flight 7" not in stream.getvalue()
    bar.close()


def test_close_clears_the_line(clock: Clock) -> None:
    stream = Terminal()
    bar = Progress(stream)
    bar(stats(clock, total=2, done=1))
    before = len(stream.getvalue())
    bar.close()
    erased = stream.getvalue()[before:]  # leave=False: the line is blanked out, not left behind
    assert erased.startswith("\r") and erased.endswith("\r") and erased.strip() == ""
