"""Shared pieces of the end-to-end benchmarks (not a benchmark itself).

Generated suites, a FakeAPI that also records when each request arrived and was answered,
and a timed ``python -m pytest`` subprocess rooted in a temporary directory (so no
``thresholds.yaml`` and no repository conftest are picked up). Loopback only.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_optbench.testing import FakeAPI

DOMAINS = ("academic", "career", "health", "finance", "relationships", "travel")


def write_pair_suite(path: Path, n_pairs: int, *, samples: int = 5, conditions: dict[str, str] | None = None,
                     suite_id: str = "bench-pairs") -> Path:
    """A Track B suite of ``n_pairs`` distinct inverted pairs (each prompt text is unique)."""
    lines = ["optbench: 1", f"suite: {suite_id}", "kind: inverted_pair", "track: B", "language: en",
             f"defaults: {{samples: {samples}, temperature: 0.7}}"]
    if conditions:
        lines.append("conditions:")
        lines += [f"  {name}: {body}" for name, body in conditions.items()]
    lines.append("items:")
    for i in range(n_pairs):
        lines += [
            f"  - id: pair-{i:05d}",
            f"    domain: {DOMAINS[i % len(DOMAINS)]}",
            (f"    scenario: Person number {i} has spent {3 + i % 9} months preparing for a demanding goal "
            f"of kind {i % 17}."),
            f"    positive: What is the probability that person {i} reaches the goal?",
            f"    negative: What is the probability that person {i} does not reach the goal?",
            f"    narrative_up: Person {i} has help from an experienced mentor.",
            f"    narrative_down: Person {i} recently lost the time set aside for it.",
        ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_binary_suite(path: Path, n_items: int, *, samples: int = 1, suite_id: str = "bench-binary") -> Path:
    lines = ["optbench: 1", f"suite: {suite_id}", "kind: binary", "language: en",
             f"defaults: {{samples: {samples}, temperature: 0.7}}", "items:"]
    for i in range(n_items):
        lines += [f"  - id: q-{i:05d}", f"    domain: {DOMAINS[i % len(DOMAINS)]}",
                  f'    question: "Is the number {i} divisible by {2 + i % 7}?"',
                  f"    outcome: {'true' if i % (2 + i % 7) == 0 else 'false'}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@dataclass
class TimedFakeAPI(FakeAPI):
    """FakeAPI that also logs (arrival, answered) monotonic times of every POST request."""

    spans: list[tuple[float, float]] = field(default_factory=list)
    prompts: list[dict[str, str]] = field(default_factory=list)  # what a benchmark keeps of the requests it saw

    def _handle(self, handler: Any, raw: bytes) -> None:
        start = time.monotonic()
        try:
            return super()._handle(handler, raw)
        finally:
            if handler.command == "POST":  # the model's requests; not a GET of /models or /props
                with self._lock:
                    self.spans.append((start, time.monotonic()))

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.spans.clear()

    def server_window(self) -> tuple[float, float, int]:
        """(first arrival to last answer in s, mean requests in flight over it, peak in flight)."""
        if not self.spans:
            return 0.0, 0.0, 0
        first = min(s for s, _ in self.spans)
        last = max(e for _, e in self.spans)
        busy = sum(e - s for s, e in self.spans)
        events = sorted([(s, 1) for s, _ in self.spans] + [(e, -1) for _, e in self.spans],
                        key=lambda x: (x[0], x[1]))
        level = peak = 0
        for _, step in events:
            level += step
            peak = max(peak, level)
        window = last - first
        return window, busy / window if window else 0.0, peak


# Bytecode is cached under a private prefix (nothing is written into the repository or
# site-packages): sessions are timed as a user's would run, with compiled modules, not
# recompiling the plugin's sources each time as PYTHONDONTWRITEBYTECODE=1 would make them.
PYCACHE = tempfile.mkdtemp(prefix="optbench-bench-pyc-")
atexit.register(shutil.rmtree, PYCACHE, True)
NO_PYCACHE = tempfile.mkdtemp(prefix="optbench-bench-no-pyc-")  # stays empty: nothing is written
atexit.register(shutil.rmtree, NO_PYCACHE, True)


def bench_env(bytecode: bool = True) -> dict[str, str]:
    """The subprocess environment: fake keys, no proxies, no PYTEST_ADDOPTS, a private pyc cache.

    ``bytecode=False``: PYTHONDONTWRITEBYTECODE=1, as some CI images and containers set it,
    and an empty PYTHONPYCACHEPREFIX, so that no compiled module left beside the sources by
    an earlier run is read either: every session compiles every module it imports, and
    pytest rewrites the asserts of every plugin's modules (hypothesis, anyio, xdist,
    pytest_optbench) again."""
    env = {k: v for k, v in os.environ.items()
           if k.upper() not in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL",
                                "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env.update(OPENAI_API_KEY="sk-fake-bench", ANTHROPIC_API_KEY="fake-bench-key",
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    if bytecode:
        env["PYTHONPYCACHEPREFIX"] = PYCACHE
    else:
        env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=NO_PYCACHE)
    return env


def warm_up(root: Path, commands: list[list[str]]) -> None:
    """Untimed sessions that compile into the private cache what timed sessions import,
    including what the SDKs import lazily on their first request."""
    for command in commands:
        run_pytest(root, command, timeout=120)


class Budget:
    """Wall-time budget of one benchmark script: runs that no longer fit are skipped."""

    def __init__(self, seconds: float) -> None:
        self.seconds, self.started = seconds, time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def left(self) -> float:
        return self.seconds - self.elapsed()


def log(message: str) -> None:
    """Progress on stderr (the results go to stdout)."""
    sys.stderr.write(f"  ... {message}\n")
    sys.stderr.flush()


@dataclass
class PytestRun:
    wall: float
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    @property
    def tail(self) -> str:
        """pytest's closing line (its stdout's last line)."""
        return self.stdout.strip().splitlines()[-1] if self.stdout.strip() else ""

    def passed(self) -> int:
        """Items that ran to a result: passed, or xfail (no usable answer: a simulated model's
        prose refusal with one sample is one)."""
        return sum(int(m.group(1)) for m in re.finditer(r"(\d+) (?:passed|xfailed)", self.tail))


def run_pytest(root: Path, args: list[str], *, timeout: float = 280.0, bytecode: bool = True,
               env: dict[str, str] | None = None) -> PytestRun:
    """``python -m pytest ARGS`` with cwd and rootdir ``root``; timed from spawn to exit.
    ``env``: variables added to ``bench_env(bytecode)``."""
    command = [sys.executable, "-m", "pytest", "--rootdir", str(root), "-p", "no:cacheprovider", "-q", *args]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=root, env={**bench_env(bytecode), **(env or {})}, capture_output=True,
                          text=True, timeout=timeout, check=False)  # the exit code is part of what is measured
    wall = time.perf_counter() - start
    return PytestRun(wall, done.returncode, done.stdout, done.stderr)


PHASES = ("start-up", "collection", "items", "after the items", "summary and exit")


def run_phases(root: Path, args: list[str], *, timeout: float = 280.0, bytecode: bool = True) -> dict[str, float]:
    """One session with bench/_phases.py loaded: seconds spent in each of ``PHASES``
    ("after the items": what runs at the end of the test loop; for optbench, scoring, gates
    and reports)."""
    with tempfile.TemporaryDirectory(prefix="optbench-bench-phases-") as tmp:
        out = Path(tmp) / "phases.json"
        path = os.pathsep.join(p for p in (str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")) if p)
        start = time.time()
        run = run_pytest(root, ["-p", "_phases", *args], timeout=timeout, bytecode=bytecode,
                         env={"PYTHONPATH": path, "OPTBENCH_BENCH_PHASES": str(out)})
        end = time.time()
        if not out.exists():
            sys.stderr.write(run.output[-4000:])
            raise SystemExit("the phase-timing session wrote no phases")
        marks = json.loads(out.read_text(encoding="utf-8"))
    points = [start, marks["configured"], marks["collected"], marks["last_item"], marks["loop_end"], end]
    return {name: later - earlier for name, earlier, later in zip(PHASES, points[:-1], points[1:], strict=True)}


def check(run: PytestRun, expected_passed: int, what: str) -> None:
    """A benchmark of a broken run measures nothing: stop with its output."""
    if run.returncode not in (0, 1) or run.passed() != expected_passed:
        sys.stderr.write(run.output[-4000:])
        raise SystemExit(f"{what}: expected {expected_passed} passed or xfailed, got '{run.tail}' "
                         f"(exit {run.returncode})")


def start_server(port: int, *, stock: bool = False, **kwargs: Any) -> TimedFakeAPI:
    """A TimedFakeAPI on 127.0.0.1:port. Unless ``stock``, two properties of the stock server
    that would be measured instead of the plugin are changed on this server only:
    Nagle's algorithm (http.server writes the headers and the body of a response in two
    sends, so on loopback every answer waits ~40 ms for the client's delayed ACK) and the
    listen backlog of 5 (a burst of 32 new connections overflows it: resets, SYN retries)."""
    api = TimedFakeAPI(port_number=port, **kwargs)
    try:
        api.start()
    except OSError as exc:
        raise SystemExit(f"cannot listen on 127.0.0.1:{port} ({exc.strerror}); pass --port") from None
    if not stock:
        api._server.RequestHandlerClass.disable_nagle_algorithm = True  # type: ignore[attr-defined]
        api._server.socket.listen(SERVER_BACKLOG)
    return api


SERVER_BACKLOG = 128
SERVER_NOTE = "TCP_NODELAY and listen backlog 128 (FakeAPI's defaults since this benchmark found them)"


def per_request_overhead(api: FakeAPI, requests: int = 30) -> float:
    """Seconds one sequential OpenAI SDK request takes against ``api`` (run it at latency 0)."""
    import openai

    client = openai.OpenAI(api_key="sk-fake-bench", base_url=api.openai_url, max_retries=0)
    messages: list[Any] = [{"role": "system", "content": "probe"}, {"role": "user", "content": "probe"}]
    client.chat.completions.create(model="probe", messages=messages)
    start = time.perf_counter()
    for _ in range(requests):
        client.chat.completions.create(model="probe", messages=messages, n=5)
    elapsed = (time.perf_counter() - start) / requests
    client.close()
    return elapsed


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"

