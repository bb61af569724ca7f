"""Helpers for end-to-end tests: each runs pytest in a subprocess, serially and with -n 2."""

from __future__ import annotations

import json
import textwrap
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
    """Writes files into a pytester dir and runs pytest there (serially or with xdist)."""

    def __init__(self, pytester: pytest.Pytester, mode: str) -> None:
        self.pytester, self.mode = pytester, mode

    def write(self, name: str, text: str) -> Path:
        path = self.pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    def run(self, *args: str, report: bool = True) -> Run:
        extra = ["-n", "2"] if self.mode == "xdist" else []
        report_path = self.pytester.path / "report.json"
        if report_path.exists():
            report_path.unlink()
        if report:
            extra += ["--optbench-report", str(report_path)]
        result = self.pytester.runpytest_subprocess(
            *args, *extra, "-p", "no:cacheprovider", "--optbench-bootstrap", "500"
        )
        data = json.loads(report_path.read_text()) if report and report_path.exists() else None
        return Run(result, data)


@pytest.fixture(params=["serial", "xdist"])
def optbench(pytester: pytest.Pytester, request: pytest.FixtureRequest) -> Optbench:
    """Each end-to-end case runs twice: in one process and with ``-n 2``."""
    return Optbench(pytester, request.param)


@pytest.fixture
def optbench_serial(pytester: pytest.Pytester) -> Optbench:
    return Optbench(pytester, "serial")
