"""End-to-end helpers: real pytest sessions with the plugin, run inside this process.

``pytester.runpytest_inprocess`` calls ``pytest.main`` here, so the plugin is loaded the way
users get it (its ``pytest11`` entry point: the module already imported from this checkout)
and a case costs milliseconds instead of a new interpreter. Only ``test_xdist.py`` adds
``-n 2``, for what is about xdist itself; its controller runs here too, its workers are
processes.

In-process runs share the interpreter, so:

- heavy modules are imported once, before the first run (``preloaded``): pytester drops what
  a run imported when it ends, and numpy & co. must not be imported twice;
- every test checks that its runs left no event-loop thread behind (SDK clients closed);
- environment variables are set through ``monkeypatch`` only, and the ones that would reach
  outside (a CI job summary, a real API server) are removed for every test.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

PAIR_SUITE = """
optbench: 1
suite: {suite}
kind: inverted_pair
track: B
defaults: {{samples: 3, temperature: 0.7}}
items:
{items}
"""


def pair_items(n: int, domains: tuple[str, ...] = ("academic", "business")) -> str:
    lines = []
    for i in range(n):
        lines.append(textwrap.indent(textwrap.dedent(f"""\
            - id: item-{i:02d}
              domain: {domains[i % len(domains)]}
              scenario: A person has worked on plan number {i} for several weeks.
              positive: What is the probability that plan {i} succeeds?
              negative: What is the probability that plan {i} does not succeed?
              narrative_up: A mentor praised plan {i}.
              narrative_down: A similar plan failed before.
            """), "  "))
    return "".join(lines)


def pair_suite(suite: str = "track-b-demo", n: int = 12, conditions: str = "") -> str:
    return PAIR_SUITE.format(suite=suite, items=pair_items(n)) + conditions


SKEW_GATE = """
optbench: 1
gates:
  - metric: skew
    max_abs: 5
"""

CONDITIONS = """
conditions:
  base: {}
  narrative_up: {scenario: "{scenario} {narrative_up}"}
"""

# Imported before the first in-process run (see the module docstring): what every scored run
# needs. matplotlib (HTML reports) and the SDKs are left to the tests that use them: an SDK
# imported inside a run is dropped again when the run ends, which is harmless for pure-Python
# packages, and the provider tests keep ``openai`` loaded through ``openai_sdk``.
HEAVY_MODULES = ("numpy", "scipy.stats", "yaml", "sqlite3", "tqdm", "xdist.dsession", "_pytest.junitxml")
DRAWING_MODULES = ("pytest_optbench.report.html", "pytest_optbench.report.plots")


@pytest.fixture(scope="session")
def preloaded() -> None:
    for name in HEAVY_MODULES:
        importlib.import_module(name)
    import pytest_optbench

    for module in pkgutil.walk_packages(pytest_optbench.__path__, "pytest_optbench."):
        if module.name not in DRAWING_MODULES:
            importlib.import_module(module.name)


@pytest.fixture(scope="session")
def openai_sdk() -> None:
    """Session-scoped, so it is set up before pytester takes its snapshot of sys.modules."""
    importlib.import_module("openai")


@pytest.fixture(scope="session")
def anthropic_sdk() -> None:
    importlib.import_module("anthropic")


@dataclass
class Run:
    result: pytest.RunResult
    report: dict[str, Any] | None

    @property
    def ret(self) -> int:
        return int(self.result.ret)

    @property
    def text(self) -> str:
        return self.result.stdout.str() + self.result.stderr.str()

    def aggregate(self, metric: str, suite: str | None = None, condition: str = "base") -> dict[str, Any]:
        assert self.report is not None
        rows = [a for a in self.report["aggregates"]
                if a["metric"] == metric and a["condition"] == condition and a["domain"] is None
                and (suite is None or a["suite"] == suite)]
        assert len(rows) == 1, rows
        return rows[0]


class Optbench:
    """Writes files into a pytester directory and runs pytest there, in this process."""

    def __init__(self, pytester: pytest.Pytester) -> None:
        self.pytester = pytester
        self.path = pytester.path
        self.mode = "serial"  # "xdist": every run adds -n 2 (kept for tests written before test_xdist.py)

    def write(self, name: str, text: str) -> Path:
        path = self.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    def run(self, *args: str, report: bool = True, xdist: bool = False, bootstrap: int = 200,
            plugins: tuple[object, ...] = ()) -> Run:
        """One pytest session; ``xdist=True`` adds ``-n 2`` (for ``test_xdist.py`` only).
        200 bootstrap resamples: enough for CIs the tests read, cheap where they do not."""
        extra = ["-n", "2"] if xdist or self.mode == "xdist" else []
        report_path = self.path / "report.json"
        report_path.unlink(missing_ok=True)
        if report:
            extra += ["--optbench-report", str(report_path)]
        result = self.pytester.runpytest_inprocess(
            # Hypothesis's plugin is for this suite, not the projects it runs: without it an
            # xdist worker starts 0.4 s sooner (it imports all of Hypothesis).
            *args, *extra, "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "--optbench-bootstrap", str(bootstrap),
            "-W", "error::pytest.PytestUnraisableExceptionWarning",  # as pyproject.toml asks of our own runs
            plugins=list(plugins),
        )
        data = json.loads(report_path.read_text()) if report and report_path.exists() else None
        return Run(result, data)


def loop_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "optbench-loop"]


# Set by CI or a developer's shell, they would send a run's Markdown into the real job summary
# or its requests to a real server; tests that want them set them through monkeypatch.
OUTSIDE_ENV = ("GITHUB_STEP_SUMMARY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")


@pytest.fixture
def optbench(pytester: pytest.Pytester, preloaded: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Optbench]:
    for name in OUTSIDE_ENV:
        monkeypatch.delenv(name, raising=False)
    before = set(loop_threads())
    yield Optbench(pytester)
    # A run that opened an SDK client must have closed it and stopped its event loop.
    assert [t for t in loop_threads() if t not in before] == []


@pytest.fixture
def optbench_serial(optbench: Optbench) -> Optbench:
    """The name tests used when ``optbench`` ran each case twice; every run is serial now."""
    return optbench
