"""docs/extending.md, run as written: every file it shows is written, every command it shows is
run, in the order of the page, and each command's exit status is the one the page states.

The page uses only ``pytest_optbench.api``; a kind registered through it must run, and its
report must be accepted by ``--optbench-baseline``, ``optbench compare`` and ``optbench gate``.
"""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

import pytest

from pytest_optbench import kinds
from pytest_optbench.cli import main as optbench_main
from pytest_optbench.testing import FakeAPI

DOC = Path(__file__).resolve().parents[2] / "docs" / "extending.md"
# ```python acme_kinds.py  (a file to write)  |  ```bash  (commands, each ending in "# exit N")
BLOCK = re.compile(r"^```(\w+)(?: ([^\n`]+))?\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks() -> list[tuple[str, str | None, str]]:
    return [(lang, name, body) for lang, name, body in BLOCK.findall(DOC.read_text(encoding="utf-8"))]


def commands(body: str) -> list[tuple[list[str], int]]:
    found = []
    for line in body.splitlines():
        command, _, status = line.partition("# exit ")
        assert status.strip().isdigit(), f"docs/extending.md: every command states its exit status: {line!r}"
        found.append((shlex.split(command), int(status)))
    return found


def test_the_page_uses_only_the_public_module() -> None:
    for lang, name, body in blocks():
        if lang != "python":
            continue
        for node in ast.walk(ast.parse(body)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pytest_optbench"):
                assert node.module == "pytest_optbench.api", f"{name}: imports {node.module}"


@pytest.mark.usefixtures("preloaded", "openai_sdk")
def test_the_page_runs_as_written(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.syspath_prepend(pytester.path)  # what `python -m pytest` and --plugin see: the project
    ran = []
    try:
        with FakeAPI() as server:
            monkeypatch.setenv("ACME_URL", server.openai_url)
            for lang, name, body in blocks():
                if name:  # a file of the project
                    target = pytester.path / name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(body, encoding="utf-8")
                elif lang == "bash":
                    for argv, expected in commands(body):
                        status = _run(pytester, argv)
                        output = capsys.readouterr()
                        assert status == expected, f"{shlex.join(argv)}: exit {status}\n{output.out}\n{output.err}"
                        ran.append(argv[0])
    finally:
        if "complement_pair" in kinds.KINDS:
            kinds.unregister("complement_pair")
    assert ran.count("pytest") >= 3 and ran.count("optbench") >= 2


def _run(pytester: pytest.Pytester, argv: list[str]) -> int:
    if argv[0] == "pytest":
        return int(pytester.runpytest_inprocess(*argv[1:]).ret)
    assert argv[0] == "optbench", argv
    return optbench_main(argv[1:])
