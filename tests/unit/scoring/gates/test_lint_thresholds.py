"""``optbench lint`` on thresholds files: every error of a file, globs against the suites present."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_optbench.cli import main
from pytest_optbench.scoring.gates.lint import KnownSuites, lint_project, lint_thresholds
from pytest_optbench.scoring.gates.spec import ThresholdsError, parse_thresholds, thresholds_problems
from pytest_optbench.suite.bundled import bank_files, bank_suite_ids, bundled
from pytest_optbench.suite.lint import load_suites

SUITE = """\
optbench: 1
suite: track-b-mine
track: B
conditions: {base: {}, narrative_up: {scenario: "{scenario} Good news."}}
items:
  - {id: p1, domain: d, scenario: A plan., positive: Does it work?, negative: Does it not work?}
"""


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_a_misspelt_key_fails_lint_and_names_the_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "thresholds.yaml", """\
        optbench: 1
        gates:
          - metric: skew
            max_ab: 5
        """)
    assert main(["lint", str(tmp_path / "thresholds.yaml")]) == 1
    out = capsys.readouterr().out
    assert "key 'max_ab': unknown gate key, did you mean 'max_abs'?" in out
    assert "optbench lint: 2 error(s)" in out  # the key, and the gate left without a bound


def test_every_error_of_a_file_is_reported_not_only_the_first(tmp_path: Path) -> None:
    write(tmp_path / "suite.yaml", SUITE)
    write(tmp_path / "thresholds.yaml", """\
        optbench: 1
        multiplicty: holm
        gates:
          - {metric: skw, max: 3, evidnce: ci}
          - {metric: skew, max_abs: -1}
          - {metric: skew, max_abs: 5, suites: ["trak-b-*"]}
          - {metric: skew, max_abs: 5, conditions: [narative_up]}
          - {metric: auc, min: 0.7, suites: ["track-b-mine"]}
          - {metric: parse_rate, min: 0.9, min_n: 0}
        """)
    lines = [f.line() for f in lint_project([tmp_path], root=tmp_path) if f.path == "thresholds.yaml"]
    expected = [
        "key 'multiplicty': unknown top-level key, did you mean 'multiplicity'?",
        "gate 1 (line 4): error: key 'evidnce': unknown gate key, did you mean 'evidence'?",
        "gate 1 (line 4): error: key 'metric': unknown metric 'skw', did you mean 'skew'?",
        "gate 2 (line 5): error: key 'max_abs': must not be negative",
        "key 'suites': ['trak-b-*'] match none of the",
        "did you mean 'track-b-*' (for 'trak-b-*')?",
        "key 'conditions': ['narative_up'] match no condition of the suites it covers (",
        "did you mean 'narrative_up' (for 'narative_up')?",
        "gate 5 (line 8): error: key 'metric': auc is computed from binary items, and none of the suites it covers",
        "gate 6 (line 9): error: key 'min_n': must be a whole number of at least 1, got 0",
    ]
    for text in expected:
        assert any(text in line for line in lines), (text, lines)
    assert len(lines) == 8


def test_a_session_still_stops_at_the_first_error() -> None:
    data = {"optbench": 1, "gates": [{"metric": "skw", "max": 1, "evidnce": "ci"}]}
    with pytest.raises(ThresholdsError, match="key 'evidnce'"):
        parse_thresholds(data, "t.yaml")
    gates, problems = thresholds_problems(data, "t.yaml")
    assert gates == [] and len(problems) == 2


def test_globs_that_match_a_bundled_suite_pass() -> None:
    data = {"optbench": 1, "gates": [{"metric": "skew", "max_abs": 5, "suites": ["track-b-*"]}]}
    known = KnownSuites({"track-b-probability": frozenset({"inverted_pair"})}, {"track-b-probability": frozenset({"base"})})
    assert lint_thresholds(data, "t.yaml", known) == []


def test_the_repository_thresholds_and_the_bank_lint_clean() -> None:
    found = bundled()
    assert found is not None
    errors = [f for f in lint_project([found.thresholds]) if f.severity == "error"]
    assert errors == []


def test_bank_suite_ids_read_off_the_files_equal_the_loaded_ids() -> None:
    found = bundled()
    assert found is not None
    files = bank_files(found.suites)
    suites, problems = load_suites(files, {f: str(f) for f in files})
    assert not problems
    assert bank_suite_ids(found.suites) == {s.id for s in suites}


def test_lint_of_a_directory_skips_virtualenvs_and_hidden_folders(tmp_path: Path) -> None:
    write(tmp_path / "suite.yaml", SUITE)
    for folder in (".venv", "env", ".git"):
        (tmp_path / folder).mkdir()
        write(tmp_path / folder / "broken.yaml", "optbench: 1\nitems: 3\n")
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr\n")
    assert [f for f in lint_project([tmp_path], root=tmp_path) if f.severity == "error"] == []
