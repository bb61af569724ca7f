"""Waiting in a test for something another process or thread does, with an explicit failure
when it never comes: a loop that gives up silently lets the test go on and fail later in a way
that cannot say why."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

import pytest


def wait_until(condition: Callable[[], bool], timeout: float, what: str,
               process: subprocess.Popen[str] | None = None, every: float = 0.05) -> None:
    """Poll ``condition`` until it holds; fail naming ``what`` after ``timeout`` seconds, or at
    once if ``process`` (what should bring it about) has ended, with that process's output."""
    ends = time.monotonic() + timeout
    while not condition():
        if process is not None and process.poll() is not None:
            output = process.communicate()[0] if process.stdout else ""
            pytest.fail(f"{what} never came: the process ended first (exit {process.returncode})\n{output}")
        if time.monotonic() > ends:
            pytest.fail(f"{what} never came within {timeout:g} s")
        time.sleep(every)


def stop_within(process: subprocess.Popen[str], timeout: float, what: str) -> str:
    """The process's output once it has exited; if it is still running after ``timeout``
    seconds, kill it and fail: ``what`` (a signal it was sent) was lost."""
    try:
        return process.communicate(timeout=timeout)[0] or ""
    except subprocess.TimeoutExpired:
        process.kill()
        output = process.communicate()[0] or ""
        pytest.fail(f"{what} was lost: the process was still running {timeout:g} s later\n{output[-3000:]}")
