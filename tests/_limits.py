"""Run hostile reproductions (unit and integration tests alike) in a child process under
CPU-time, memory and file-size limits, so that a regression ends that child, never the
machine (and no test measures wall-clock time).

The limits are set by a small prelude that then execs the real command: no ``preexec_fn``,
which is unsafe in a process with threads (the FakeAPI server is one).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

PRELUDE = """
import os, resource, signal, sys
cpu, memory, files = (int(x) for x in sys.argv[1:4])
if cpu:
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
if memory:
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
if files:  # a full disk: writes past this size fail with EFBIG instead of killing the process
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (files, files))
# A run started as a background job (nohup, "cmd &" in a script: how CI may start) has SIGINT
# ignored, and an ignored signal stays ignored across exec: the child would then never see a
# Ctrl-C a test sends it. Restore the default, so Python installs its KeyboardInterrupt.
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.executable, [sys.executable, *sys.argv[4:]])
"""


def limited_command(args: list[str], cpu_seconds: int = 0, memory_mb: int = 0, file_bytes: int = 0) -> list[str]:
    """``python ARGS`` under the given limits (0: no limit)."""
    return [sys.executable, "-c", PRELUDE, str(cpu_seconds), str(memory_mb << 20), str(file_bytes), *args]


def child_env(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def run_limited(code: str, cpu_seconds: int = 20, memory_mb: int = 1500) -> tuple[int, Any, str]:
    """Run ``code`` in a fresh interpreter; it prints one JSON value as its last line.

    Returns (exit status, that value or None, stderr). A child that runs out of CPU time is
    killed by SIGXCPU, one that runs out of memory raises MemoryError: either is a failure
    the caller sees, not a hung or swapping machine.
    """
    proc = subprocess.run(limited_command(["-c", textwrap.dedent(code)], cpu_seconds, memory_mb), env=child_env(),
                          capture_output=True, text=True, check=False)
    lines = proc.stdout.strip().splitlines()
    value = json.loads(lines[-1]) if proc.returncode == 0 and lines else None
    return proc.returncode, value, proc.stderr[-2000:]
