"""``optbench init``: what it writes, that it never writes over a file, and the workflow's checks.

The workflow is checked with actionlint and zizmor (the test extra installs both, binaries
included); each check is also shown failing on a workflow with an unpinned, outdated action,
so a broken tool cannot pass by finding nothing.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pytest_optbench.cli import main
from pytest_optbench.scaffold import FILES, WORKFLOW, thresholds_text, write_scaffold
from pytest_optbench.scoring.gates.lint import lint_project
from pytest_optbench.scoring.gates.spec import parse_thresholds, read_thresholds
from pytest_optbench.suite.bundled import bundled
from pytest_optbench.suite.load import load_suite

ROOT = Path(__file__).resolve().parents[3]
WRITTEN = [name for name, _ in FILES]


def tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    assert found, f"{name} is not installed: pip install -e '.[test]' (the test extra brings it)"
    return found


def test_init_writes_each_file_once_and_says_what_it_left_alone(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", str(tmp_path)]) == 0
    first = capsys.readouterr().out
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == sorted(WRITTEN)
    assert all(f"wrote {tmp_path / name}" in first for name in WRITTEN)
    before = {name: (tmp_path / name).read_bytes() for name in WRITTEN}
    (tmp_path / "thresholds.yaml").write_text("optbench: 1\ngates: []\n# mine\n", encoding="utf-8")
    assert main(["init", str(tmp_path)]) == 0
    second = capsys.readouterr().out
    assert all(f"left {tmp_path / name} alone" in second for name in WRITTEN)
    assert f"nothing written: all {len(WRITTEN)} files are in {tmp_path} already" in second
    assert (tmp_path / "thresholds.yaml").read_text(encoding="utf-8").endswith("# mine\n")
    assert all((tmp_path / n).read_bytes() == before[n] for n in WRITTEN if n != "thresholds.yaml")


def test_init_writes_what_is_missing_beside_a_users_files(tmp_path: Path) -> None:
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "example.yaml").write_text("optbench: 1\nitems: []\n", encoding="utf-8")
    written = {w.path: w.written for w in write_scaffold(tmp_path)}
    assert written.pop("suites/example.yaml") is False and all(written.values())
    assert (tmp_path / "suites" / "example.yaml").read_text(encoding="utf-8") == "optbench: 1\nitems: []\n"


def test_init_into_a_file_is_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "f").write_text("x", encoding="utf-8")
    assert main(["init", str(tmp_path / "f")]) == 2
    assert capsys.readouterr().err.strip() == f"optbench init: {tmp_path / 'f'}: is a file, not a directory."


def test_what_init_writes_lints_clean(tmp_path: Path) -> None:
    write_scaffold(tmp_path)
    findings = lint_project([tmp_path], root=tmp_path)
    assert [f.line() for f in findings if f.severity != "info"] == []
    suite = load_suite(tmp_path / "suites" / "example.yaml")
    assert suite is not None
    assert {i.kind for i in suite.items} == {"inverted_pair", "binary", "conjunction", "disjunction",
                                             "conditional", "dose_response"}


def test_init_thresholds_are_the_bundled_gates_and_the_example_gate(tmp_path: Path) -> None:
    found = bundled()
    assert found is not None
    shipped = read_thresholds(found.thresholds).gates
    written = parse_thresholds(yaml.safe_load(thresholds_text()), "thresholds.yaml")
    strip = [(g.metric, g.bound_kind, g.bound, g.suites, g.conditions, g.evidence, g.tolerance) for g in written]
    assert strip[:len(shipped)] == [(g.metric, g.bound_kind, g.bound, g.suites, g.conditions, g.evidence,
                                     g.tolerance) for g in shipped]
    assert strip[len(shipped):] == [("skew", "max_abs", 10.0, ("example",), ("base",), "ci", None)]
    change = read_thresholds(ROOT / "pytest_optbench" / "scaffold" / "thresholds-change.yaml")
    assert change.gates and all(g.is_change for g in change.gates)


def test_the_workflow_passes_actionlint(tmp_path: Path) -> None:
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    target = tmp_path / ".github" / "workflows" / "optbench.yml"
    shutil.copy(WORKFLOW, target)
    done = subprocess.run([tool("actionlint"), "-no-color", str(target)], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    target.write_text(WORKFLOW.read_text(encoding="utf-8").replace(
        "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1", "actions/checkout@v4"), encoding="utf-8")
    done = subprocess.run([tool("actionlint"), "-no-color", str(target)], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 1 and 'runtime "node20" is deprecated' in done.stdout


def zizmor(path: Path) -> list[tuple[str, str]]:
    done = subprocess.run([tool("zizmor"), "--offline", "--format=json", str(path)], capture_output=True,
                          text=True, check=False, timeout=120)
    assert done.stdout.strip(), done.stderr
    return [(f["ident"], f["determinations"]["severity"]) for f in json.loads(done.stdout)]


def test_the_workflow_has_no_zizmor_finding_of_medium_or_high_severity(tmp_path: Path) -> None:
    findings = zizmor(WORKFLOW)
    assert [f for f in findings if f[1] in ("Medium", "High")] == []
    loose = tmp_path / "optbench.yml"
    loose.write_text(WORKFLOW.read_text(encoding="utf-8").replace(
        "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1", "actions/checkout@v4"), encoding="utf-8")
    assert "unpinned-uses" in {ident for ident, severity in zizmor(loose) if severity in ("Medium", "High")}


def test_the_workflow_keeps_the_key_to_the_steps_that_ask_the_model() -> None:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert data["permissions"] == {}
    for name, job in data["jobs"].items():
        for step in job["steps"]:
            uses = step.get("uses", "")
            if uses:
                assert re.fullmatch(r"actions/[a-z/-]+@[0-9a-f]{40}", uses), uses  # pinned by commit
            text = yaml.safe_dump(step)
            assert ("secrets." in text) == (step.get("id") == "audit"), (name, step.get("name") or uses)
            if uses.startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False
            if uses.startswith("actions/cache/save@"):
                assert step["if"] == "always()"  # red runs keep their answers
    assert data["jobs"]["pull-request"]["permissions"] == {"contents": "read", "actions": "read"}
    assert data["jobs"]["main"]["permissions"] == {"contents": "read"}


def fenced_workflows(text: str) -> list[str]:
    """Every fenced YAML block that presents itself as .github/workflows/optbench.yml."""
    blocks = re.findall(r"```yaml\n(.*?)```", text, flags=re.DOTALL)
    return [b for b in blocks if b.startswith("# .github/workflows/optbench.yml")]


def test_the_docs_show_the_workflow_init_writes() -> None:
    shown = WORKFLOW.read_text(encoding="utf-8")
    ci = fenced_workflows((ROOT / "docs" / "ci.md").read_text(encoding="utf-8"))
    assert ci == [shown], "docs/ci.md must show pytest_optbench/scaffold/optbench.yml verbatim"
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in fenced_workflows(page.read_text(encoding="utf-8")):
            assert block == shown, f"{page.name} shows another .github/workflows/optbench.yml than optbench init writes"


def test_every_workflow_the_ci_page_shows_passes_actionlint_and_zizmor(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", text, flags=re.DOTALL) if b.startswith("# .github/workflows/")]
    assert len(blocks) == 2
    for number, block in enumerate(blocks):
        path = tmp_path / f"w{number}.yml"
        path.write_text(block, encoding="utf-8")
        done = subprocess.run([tool("actionlint"), "-no-color", str(path)], capture_output=True, text=True,
                              check=False, timeout=120)
        assert done.returncode == 0, done.stdout
        assert [f for f in zizmor(path) if f[1] in ("Medium", "High")] == []
