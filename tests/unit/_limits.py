"""Run hostile reproductions in a child process under CPU-time and memory limits, so that a
regression ends that child, never the machine (and no test measures wall-clock time)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def run_limited(code: str, cpu_seconds: int = 20, memory_mb: int = 1500) -> tuple[int, Any, str]:
    """Run ``code`` in a fresh interpreter; it prints one JSON value as its last line.

    Returns (exit status, that value or None, stderr). A child that runs out of CPU time is
    killed by SIGXCPU, one that runs out of memory raises MemoryError: either is a failure
    the caller sees, not a hung or swapping machine.
    """
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))

    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], preexec_fn=limit, env=env,
                          capture_output=True, text=True, check=False)
    lines = proc.stdout.strip().splitlines()
    value = json.loads(lines[-1]) if proc.returncode == 0 and lines else None
    return proc.returncode, value, proc.stderr[-2000:]
