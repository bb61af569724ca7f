"""report/progress.py: when the progress line shows, what it says, how often it redraws;
without a terminal, the plain line at a steady interval.

The clock is a fake one (the module's ``time`` replaced, or the clock ProgressLines is given),
so nothing here waits on or reads the wall clock.
"""

from __future__ import annotations

import io
import threading
from types import SimpleNamespace

import pytest

from pytest_optbench.elicit.counters import EngineStats
from pytest_optbench.report import progress
from pytest_optbench.report.progress import Progress, ProgressLines, duration, plain_wanted, progress_wanted


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


# --------------------------------------------------------------------------- without a terminal


class Lines:
    """A ProgressLines on a fake clock, writing into a list."""

    def __init__(self, interval: float = 30.0) -> None:
        self.now = 500.0
        self.out: list[str] = []
        self.lines = ProgressLines(self.out.append, interval, clock=lambda: self.now)


@pytest.mark.parametrize(("verbosity", "interval", "wanted"), [
    (0, 30.0, True), (1, 5.0, True), (-1, 30.0, False), (0, 0.0, False)])
def test_plain_lines_are_off_under_q_and_at_interval_zero(verbosity, interval, wanted) -> None:
    assert plain_wanted(verbosity, interval) is wanted


def test_a_plain_line_at_the_start_then_at_most_one_per_interval_and_one_at_the_end() -> None:
    fake = Lines(interval=30.0)
    stats = EngineStats(total=1000, done=100, cached=100)  # 100 read back from the store at once
    fake.lines(stats)
    assert fake.out == [("optbench: 100 of 1,000 answers (10%), 100 from the store, 0.0 answers/s, "
                        "0 retries (0 after a 429), ETA unknown (no answer received yet)")]
    fake.now += 10.0
    stats.done, stats.retries, stats.rate_limited = 300, 3, 2
    fake.lines(stats)
    assert len(fake.out) == 1  # 10 s after the last line: not yet
    fake.now += 20.0
    stats.done = 400
    fake.lines(stats)
    # 300 answers received in 30 s: 10 a second; 600 left: 60 s
    assert fake.out[-1] == ("optbench: 400 of 1,000 answers (40%), 100 from the store, 10.0 answers/s, "
                            "3 retries (2 after a 429), ETA 1 min 0 s")
    fake.now += 5.0
    stats.done, stats.failed = 990, 10
    fake.lines(stats)  # everything answered or failed: the last line, however soon
    assert fake.out[-1] == ("optbench: 990 of 1,000 answers (99%), 100 from the store, 25.4 answers/s, "
                            "3 retries (2 after a 429), 10 failed, done in 35 s")
    fake.now += 100.0
    fake.lines(stats)
    assert len(fake.out) == 3  # nothing after the last line


def test_tick_writes_while_nothing_arrives_so_a_slow_run_never_looks_hung() -> None:
    fake = Lines(interval=30.0)
    stats = EngineStats(total=50, done=10, in_flight=16)
    fake.lines(stats)
    for _ in range(3):  # the server answers nothing for 90 s: the ticker still writes
        fake.now += 30.0
        fake.lines.tick()
    assert len(fake.out) == 4 and all("10 of 50 answers" in line for line in fake.out)
    assert fake.out[-1].endswith("ETA 6 min 0 s")  # 10 answers in 90 s, 40 left


def test_nothing_is_written_before_the_engine_knows_what_it_will_ask() -> None:
    fake = Lines()
    fake.lines.tick()
    fake.lines(EngineStats(total=0))
    assert fake.out == []


def test_the_ticker_thread_writes_and_stops_when_closed() -> None:
    written = threading.Event()
    out: list[str] = []

    def write(line: str) -> None:
        out.append(line)
        written.set()

    lines = ProgressLines(write, interval=0.01, label="optbench [gw1]")
    lines(EngineStats(total=5, done=1))
    lines.start_ticker()
    assert written.wait(10)  # the first line (no timing is asserted, only that it comes)
    lines.close()
    assert lines._ticker is not None and not lines._ticker.is_alive()
    assert out[0].startswith("optbench [gw1]: 1 of 5 answers (20%)")


@pytest.mark.parametrize(("seconds", "text"), [(0.4, "0 s"), (59, "59 s"), (61, "1 min 1 s"), (7260, "2 h 1 min")])
def test_durations(seconds, text) -> None:
    assert duration(seconds) == text
