"""``--optbench-bank``: the bundled bank from any directory, and which gates judge it.

The sessions here run in a directory without suites, against a small bank laid out as the
wheel lays it out (``bundled/suites`` and ``bundled/thresholds.yaml``: the repository's
English Track B suite and those of its default gates that judge it), so that each case costs
a fraction of the real bank; the real bank is audited from a wheel by .ci/run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import pytest_optbench.session.bank as session_bank
import pytest_optbench.suite.bundled as bundled_module
from conftest import CONDITIONS, Optbench, pair_suite
from pytest_optbench.suite.bundled import Bundled

ROOT = Path(__file__).resolve().parents[2]
# The gates of the repository's thresholds.yaml that a Track B suite can be judged by.
BANK_GATES = """\
optbench: 1
gates:
  - {metric: skew, max_abs: 5, suites: ["track-b-*"], conditions: [base], evidence: ci}
  - {metric: parse_rate, min: 0.95, suites: ["*"], conditions: [base], evidence: ci}
  - {metric: error_rate, max: 0.02, conditions: [base], evidence: ci}
"""


@pytest.fixture
def bank(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Bundled:
    root = tmp_path_factory.mktemp("site-packages") / "pytest_optbench" / "bundled"
    (root / "suites" / "en").mkdir(parents=True)
    shutil.copy(ROOT / "suites" / "en" / "track_b.yaml", root / "suites" / "en" / "track_b.yaml")
    (root / "thresholds.yaml").write_text(BANK_GATES, encoding="utf-8")
    found = Bundled(root, packaged=True)
    monkeypatch.setattr(session_bank, "bundled", lambda: found)
    monkeypatch.setattr(bundled_module, "bundled", lambda: found)
    return found


def test_the_bank_is_audited_from_an_empty_directory_and_its_default_gates_apply(optbench: Optbench,
                                                                                bank: Bundled) -> None:
    run = optbench.run("--optbench-bank", "--model", "sim:optimist", "-k", "base")
    assert run.ret == 1, run.text[-3000:]
    assert run.result.parseoutcomes()["passed"] == 60  # the 60 Track B items, base arm only (-k)
    assert f"gates from the bundled defaults of pytest-optbench {bank.origin.split()[-1]} ({bank.thresholds})" \
        in run.text
    assert "judging the bundled suites only: no thresholds.yaml at" in run.text
    assert "gate skew |x| <= 5 (ci) failed on track-b-probability/base" in run.text
    assert run.report is not None and run.report["run"]["thresholds"].startswith("the bundled defaults")


def test_a_calibrated_model_passes_the_bundled_gates_strictly_on_the_bundled_suites(optbench: Optbench,
                                                                                   bank: Bundled) -> None:
    # The project's own suite runs too (the directory is collected as always), and the bundled
    # gates do not judge it: under strict mode a gate on it would fail for want of data.
    optbench.write("suites/mine.yaml", pair_suite("mine", n=3, conditions=CONDITIONS
                                                  + '  narrative_down: {scenario: "{scenario} {narrative_down}"}\n'))
    run = optbench.run("--optbench-bank", "--model", "sim:calibrated", "--optbench-strict", "--language", "en",
                       "-k", "base")
    assert run.ret == 0, run.text[-3000:]
    assert run.report is not None
    judged = {g["suite"] for g in run.report["gates"] if g.get("suite")}
    assert judged == {"track-b-probability"}
    assert {r["suite"] for r in run.report["items"]} == {"track-b-probability", "mine"}


def test_the_projects_thresholds_file_wins_over_the_bundled_one(optbench: Optbench, bank: Bundled) -> None:
    optbench.write("thresholds.yaml", "optbench: 1\ngates:\n  - {metric: skew, max_abs: 50, conditions: [base]}\n")
    run = optbench.run("--optbench-bank", "--model", "sim:optimist", "-k", "base")
    assert run.ret == 0, run.text[-3000:]
    assert "gates from thresholds.yaml:" in run.text and "bundled defaults" not in run.text


def test_thresholds_files_add_up(optbench: Optbench, bank: Bundled) -> None:
    optbench.write("a.yaml", "optbench: 1\ngates:\n  - {metric: skew, max_abs: 50, conditions: [base]}\n")
    optbench.write("b.yaml", "optbench: 1\nmultiplicity: bh\ngates:\n  - {metric: skew, max: 2, conditions: [base]}\n")
    run = optbench.run("--optbench-bank", "--model", "sim:optimist", "-k", "base",
                       "--thresholds", "a.yaml", "--thresholds", "b.yaml")
    assert run.ret == 1
    assert "gates from a.yaml + b.yaml:" in run.text
    assert run.report is not None and run.report["run"]["multiplicity"] == "bh"
    assert [g["verdict"] for g in run.report["gates"]] == ["pass", "fail"]
    optbench.write("c.yaml", "optbench: 1\nmultiplicity: holm\ngates: []\n")
    clash = optbench.run("--optbench-bank", "-k", "base", "--thresholds", "b.yaml", "--thresholds", "c.yaml",
                         report=False)
    assert clash.ret == 4
    assert "c.yaml, key 'multiplicity': is 'holm', but b.yaml sets 'bh'" in clash.text


def test_a_path_inside_the_bank_narrows_it(optbench: Optbench, bank: Bundled) -> None:
    run = optbench.run("--optbench-bank", str(bank.suites / "en" / "track_b.yaml"), "--collect-only", "-q",
                       report=False)
    assert run.ret == 0
    assert "480 tests collected" in run.text  # once, not twice


def test_an_installation_without_a_bank_says_so(optbench: Optbench, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_bank, "bundled", lambda: None)
    run = optbench.run("--optbench-bank", report=False)
    assert run.ret == 4
    assert "--optbench-bank: this installation of pytest-optbench carries no item bank" in run.text
