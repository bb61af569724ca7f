"""Which progress display a process that elicits gets, and where it writes.

A serial run on a terminal redraws one line (tqdm). Without a terminal (CI, output to a
file), a serial run writes a plain line through pytest's terminal reporter at a steady
interval, and each xdist worker with answers to ask for (engine.ASKER; in batch mode each has
its share) writes its own, labelled with its id, to the stderr it was started with (pytest
captures the worker's own file descriptors, so the original one is kept before capturing
starts: ``keep_stderr``). ``-q`` and ``--optbench-progress-interval 0``
turn the plain line off; a batch run keeps its batch status line instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

import pytest

if TYPE_CHECKING:
    from .worker import WorkerSession

STDERR_KEY = pytest.StashKey[TextIO]()


def keep_stderr(config: pytest.Config) -> None:
    """On an xdist worker, before pytest captures it: a copy of the stderr it inherited."""
    if os.environ.get("PYTEST_XDIST_WORKER") and STDERR_KEY not in config.stash:
        try:
            config.stash[STDERR_KEY] = os.fdopen(os.dup(2), "w", buffering=1, encoding="utf-8", errors="replace")
        except OSError:  # no stderr at all: no progress lines
            pass


def attach_progress(config: pytest.Config, worker: WorkerSession, serial: bool,
                    label: str | None = None) -> Callable[[], None] | None:
    """Give ``worker`` its progress display; returns what closes it (None: no display).
    ``label``: the xdist controller that asks (session/asker.py), whose lines go through its
    terminal reporter between the workers' reports, never as a redrawn bar."""
    from ..report.progress import Progress, ProgressLines, plain_wanted, progress_wanted

    verbosity = config.get_verbosity()
    options = worker.options
    reporter = config.pluginmanager.get_plugin("terminalreporter") if serial else None
    if serial and label is None and progress_wanted(verbosity):
        bar = Progress()
        worker.progress = bar
        return bar.close
    if options.batch:  # no redrawn line (CI, -q): a batch wait shows its status line now and then
        if reporter is not None and verbosity >= 0:
            worker.status = reporter.write_line
        return None
    if not plain_wanted(verbosity, options.progress_interval):
        return None
    write: Callable[[str], None]
    if serial:
        if reporter is None:
            return None
        write = reporter.write_line if label is None else _between_reports(reporter)
        label = label or "optbench"
    else:
        stream = config.stash.get(STDERR_KEY, None)
        if stream is None:
            return None
        write, label = (lambda line: _write(stream, line)), f"optbench [{os.environ.get('PYTEST_XDIST_WORKER')}]"
    lines = ProgressLines(write, options.progress_interval, label=label)
    worker.progress = lines
    lines.start_ticker()
    return lines.close


def _write(stream: TextIO, line: str) -> None:
    try:
        stream.write(line + "\n")
    except (OSError, ValueError):  # a closed or broken stderr: progress is not worth a failure
        pass


def _between_reports(reporter: Any) -> Callable[[str], None]:
    """write_line that first ends a line of the workers' progress dots (pytest's reporter
    starts a new line only after a file name it printed itself)."""
    def write(line: str) -> None:
        if getattr(getattr(reporter, "_tw", None), "width_of_current_line", 0):  # no public API for it
            reporter.write("\n")
        reporter.write_line(line)
    return write
