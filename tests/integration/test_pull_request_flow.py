"""The pull-request workflow that ``optbench init`` writes, run step by step against the fake API.

The ``run:`` scripts of the workflow's jobs are executed as GitHub runs them (bash -eo
pipefail, the workflow's, job's and step's environment, the secret in the one step that
needs it), in a project made by ``optbench init``; what GitHub's own actions do between them
is done by hand: the main job's report becomes the baseline artifact the pull-request job
downloads, the response store stays where the cache would restore it.

The change is made inside the conftest pipeline (its preamble) and, in a second pull
request, in the suite's own prompt. A pipeline has no way yet to declare a fingerprint, so
the baseline comparison cannot name a change inside it: that pull request fails on the change
gate alone; the suite's prompt change is also named by its prompt hash ("the prompts of
example changed").
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from pytest_optbench.scaffold import WORKFLOW, write_scaffold
from pytest_optbench.testing import FakeAPI
from pytest_optbench.testing.requests import FakeRequest

WORKFLOW_DATA: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
KEY = "sk-test-pull-request-flow"
# The project's own gates: its suite only (AUDIT below leaves the bank out, to keep this fast).
THRESHOLDS = """\
optbench: 1
on_inconclusive: pass  # as optbench init's file (the bundled defaults): six pairs cannot show |Skew| <= 10
gates:
  - {metric: skew, max_abs: 10, suites: ["example"], conditions: [base], evidence: ci}
  - {metric: parse_rate, min: 0.95, conditions: [base], evidence: ci}
"""


def uncommented(template: str) -> str:
    """The code of the commented conftest.py, as a user uncomments it."""
    lines = template.splitlines()
    start = lines.index("# import pytest")
    return "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in lines[start:]) + "\n"


def answer(request: FakeRequest, index: int) -> str:
    """Stable answers; an encouraging pipeline or suite prompt tilts every answer up 15 pp."""
    value = 20 + sum(map(ord, f"{request.user}|{index}")) % 60 + (15 if "encouraging" in request.system else 0)
    return str(51 if value == 50 else value)  # an answer of 50 counts as a refusal


def step(job: str, step_id: str) -> dict[str, Any]:
    return next(s for s in WORKFLOW_DATA["jobs"][job]["steps"] if s.get("id") == step_id)


def run_step(job: str, step_id: str, project: Path, summary: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """One ``run:`` step, with the environment GitHub would give it."""
    found = step(job, step_id)
    secrets = {"${{ secrets.OPENAI_API_KEY }}": env.pop("secret", KEY)}
    step_env = {k: secrets.get(str(v), str(v)) for k, v in (found.get("env") or {}).items()}
    base = {k: v for k, v in os.environ.items() if k in ("HOME", "LANG", "TMPDIR", "SYSTEMROOT")}
    full = {**base, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "GITHUB_STEP_SUMMARY": str(summary), "CI": "true",
            "PYTEST_ADDOPTS": "-p no:hypothesispytest",  # a user's CI has no Hypothesis (0.4 s a session)
            **{k: str(v) for k, v in WORKFLOW_DATA["env"].items()}, **step_env, **env}
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", found["run"]], cwd=project,
                          env=full, capture_output=True, text=True, timeout=300, check=False)


def test_a_main_run_writes_the_baseline_and_a_pipeline_change_fails_the_change_gate(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_scaffold(project)
    (project / "thresholds.yaml").write_text(THRESHOLDS, encoding="utf-8")
    conftest = project / "conftest.py"
    conftest.write_text(uncommented(conftest.read_text(encoding="utf-8")), encoding="utf-8")
    suite = project / "suites" / "example.yaml"
    suite.write_text(suite.read_text(encoding="utf-8").replace(
        "defaults: {samples: 5, temperature: 0.7}",
        "defaults: {samples: 1, temperature: 0.7}\nprompt:\n  system: Reply with one number from 0 to 100."),
        encoding="utf-8")
    with FakeAPI(answer=answer) as api:
        env = {"AUDIT": "suites --optbench-bootstrap 2000", "MODEL": "openai:fake-model", "OPENAI_BASE_URL": api.openai_url}

        # main: the full audit (here: the project's suite), strict; its report is the baseline.
        main = run_step("main", "audit", project, tmp_path / "main.md", **env)
        assert main.returncode == 0, main.stdout[-3000:] + main.stderr[-2000:]
        assert "wrapping --model openai:fake-model" in main.stdout  # the conftest pipeline answered
        assert {KEY} <= {r.authorization.removeprefix("Bearer ") for r in api.requests}
        (project / "baseline").mkdir()
        shutil.copy(project / "optbench.json", project / "baseline" / "optbench.json")  # upload + download
        assert KEY not in (project / "optbench.json").read_text(encoding="utf-8")

        # A pull request that changes nothing passes its change gates.
        same = run_step("pull-request", "audit", project, tmp_path / "same.md", **env)
        assert same.returncode == 0, same.stdout[-3000:]
        assert re.search(r"optbench gates: 0 failed, \d+ inconclusive, \d+ passed", same.stdout)

        # A pull request whose pipeline gets an encouraging preamble: the change gate fails.
        conftest.write_text(conftest.read_text(encoding="utf-8").replace(
            "You are Acme's planning assistant.", "You are Acme's planning assistant. Be encouraging."),
            encoding="utf-8")
        pipeline = run_step("pull-request", "audit", project, tmp_path / "pipeline.md", **env)
        assert pipeline.returncode == 1, pipeline.stdout[-3000:]
        failure = re.search(r"gate skew \|change\| <= 3 \(ci\) failed on example/base: [^\n]*", pipeline.stdout)
        assert failure is not None, pipeline.stdout[-3000:]
        assert "estimate +30" in failure.group(0)  # the change, in pp
        # The pipeline declares a version that follows its preamble (declare_model + fingerprint
        # in the conftest optbench init wrote): the failure names what changed.
        assert "model_version" in failure.group(0), failure.group(0)
        job_summary = (tmp_path / "pipeline.md").read_text(encoding="utf-8")  # $GITHUB_STEP_SUMMARY
        assert re.search(r"\| example \| base \| skew \|.*\\\|change\\\| &lt;= 3 \|.*\| FAIL \|", job_summary)

        # A pull request that changes the suite's prompt: named by the prompt hash, and gated.
        conftest.write_text(conftest.read_text(encoding="utf-8").replace(" Be encouraging.", ""), encoding="utf-8")
        suite.write_text(suite.read_text(encoding="utf-8").replace(
            "Reply with one number", "Be encouraging. Reply with one number"), encoding="utf-8")
        prompt = run_step("pull-request", "audit", project, tmp_path / "prompt.md", **env)
        assert prompt.returncode == 1, prompt.stdout[-3000:]
        assert "baseline differs: the prompts of example changed" in prompt.stdout
        assert "gate skew |change| <= 3 (ci) failed on example/base" in prompt.stdout

        # Without the secret (a repository that has not set it) the step says so and fails.
        asked = len(api.requests)
        nokey = run_step("pull-request", "audit", project, tmp_path / "nokey.md", secret="", **env)
        assert nokey.returncode == 1 and "::error title=no API key::" in nokey.stdout
        assert len(api.requests) == asked


def test_a_fork_pull_request_skips_with_a_notice(tmp_path: Path) -> None:
    fork = WORKFLOW_DATA["jobs"]["fork"]
    assert "head.repo.full_name != github.repository" in fork["if"]
    assert "head.repo.full_name == github.repository" in WORKFLOW_DATA["jobs"]["pull-request"]["if"]
    assert "secrets." not in yaml.safe_dump(fork)  # no step of it sees a secret
    script = fork["steps"][0]["run"]
    summary = tmp_path / "summary.md"
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=tmp_path,
                          env={"PATH": os.environ["PATH"], "GITHUB_STEP_SUMMARY": str(summary)},
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0
    assert done.stdout.startswith("::notice title=optbench audit skipped::Pull requests from forks get no secrets")
    assert "### optbench audit skipped" in summary.read_text(encoding="utf-8")
