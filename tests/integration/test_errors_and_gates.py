"""Bad input gets one clear sentence and a non-zero exit; gate outcomes end to end."""

from __future__ import annotations

import pytest

from conftest import pair_suite

SPY_CONFTEST = """
    import pathlib
    import pytest

    def spy(prompt):
        pathlib.Path("model-was-called").write_text("yes")
        return "60"

    @pytest.fixture(scope="session")
    def optbench_model():
        return spy
"""


def test_format_error_is_one_sentence_collection_error(optbench):
    optbench.write("suites/good.yaml", pair_suite(n=2, conditions=NARRATIVE_ARMS))
    optbench.write("suites/bad.yaml", """
        optbench: 1
        suite: bad
        items:
          - id: broken-01
            scenario: A person plans a trip.
            positive: What is the probability that the trip happens?
    """)
    run = optbench.run("--model", "sim:calibrated")
    assert run.ret == 2  # pytest stops at collection errors (xdist runs the rest: test_xdist.py)
    assert "ERROR collecting suites/bad.yaml" in run.text
    assert ("suites/bad.yaml, item 'broken-01' (line 4), key 'negative': "
            "is required for items of kind inverted_pair.") in run.text
    assert "Traceback" not in run.text


def test_malformed_yaml_names_file_and_line(optbench):
    optbench.write("suites/bad.yaml", "optbench: 1\nitems:\n  - id: x\n    scenario: [unclosed\n")
    run = optbench.run("--model", "sim:calibrated")
    assert run.ret == 2
    assert "suites/bad.yaml, line 5, column 1: malformed YAML" in run.text
    assert "Traceback" not in run.text


def test_yaml_without_optbench_key_is_ignored(optbench):
    optbench.write("config/other.yaml", "name: something else\nitems: [1, 2]\n")
    optbench.write("suites/pairs.yaml", pair_suite(n=2))
    run = optbench.run("--model", "sim:calibrated")
    assert run.ret == 0
    run.result.assert_outcomes(passed=2)


def test_duplicate_suite_ids_across_files(optbench):
    optbench.write("suites/a.yaml", pair_suite(suite="same", n=1))
    optbench.write("suites/b.yaml", pair_suite(suite="same", n=1))
    run = optbench.run("--model", "sim:calibrated")
    assert run.ret == 2
    assert "suites/b.yaml, key 'suite': suite id 'same' is already used by suites/a.yaml." in run.text


def test_broken_thresholds_is_a_usage_error_before_any_model_call(optbench):
    optbench.write("suites/pairs.yaml", pair_suite(n=2))
    optbench.write("conftest.py", SPY_CONFTEST)
    optbench.write("thresholds.yaml", """
        optbench: 1
        gates:
          - metric: skew
            max_abs: 5
          - metric: skewness
            max: 3
    """)
    run = optbench.run()
    assert run.ret == 4  # usage error
    assert "thresholds.yaml, gate 2 (line 5), key 'metric': unknown metric 'skewness'" in run.text
    assert "Traceback" not in run.text
    assert not (optbench.path / "model-was-called").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--samples", "0"], "argument --samples: must be at least 1, got 0"),
        (["--temperature", "hot"], "argument --temperature: must be a number, got 'hot'"),
        (["--model", "nope:model"], "--model 'nope:model': unknown provider 'nope'"),
        (["--model", "sim:giddy"], "unknown simulated profile 'giddy'"),
        (["--model", "gpt-4"], "--model 'gpt-4' must look like provider:model"),
        (["--thresholds", "missing.yaml"], "--thresholds missing.yaml: no such file."),
        (["--system-prompt", "missing.txt"], "--system-prompt missing.txt: cannot read the file"),
    ],
)
def test_bad_command_line_values(optbench, args, message):
    optbench.write("suites/pairs.yaml", pair_suite(n=1))
    run = optbench.run(*args)
    assert run.ret == 4
    assert message in run.text
    assert "Traceback" not in run.text


def test_gate_outcomes_pass_fail_and_not_evaluated(optbench):
    optbench.write("suites/pairs.yaml", pair_suite(n=16))
    optbench.write("thresholds.yaml", """
        optbench: 1
        gates:
          - metric: skew          # fails: planted Skew is +8
            max: 5
          - metric: skew          # passes on ci evidence: CI lies below 20
            max_abs: 20
            evidence: ci
          - metric: parse_rate
            min: 0.5
          - metric: skew          # matches no suite that ran
            max_abs: 5
            suites: ["track-z-*"]
          - metric: brier         # binary-only metric, no binary suite ran
            max: 0.25
          - metric: skew          # the named suite has no such condition
            max_abs: 5
            conditions: [narrative_up]
    """)
    run = optbench.run("--model", "sim:optimist")
    assert run.ret == 1
    verdicts = [(g["metric"], g["verdict"]) for g in run.report["gates"]]
    assert verdicts == [
        ("skew", "fail"), ("skew", "pass"), ("parse_rate", "pass"),
        ("skew", "inconclusive"), ("brier", "inconclusive"), ("skew", "inconclusive"),
    ]
    assert [g["evaluated"] for g in run.report["gates"]] == [True] * 3 + [False] * 3
    assert "optbench gates: 1 failed, 3 inconclusive, 2 passed; inconclusive gates pass" in run.text
    assert ("warning: gate skew |x| <= 5 (thresholds.yaml, line 10) was not evaluated: its suites ['track-z-*'] "
            "match none of the suites that ran (track-b-demo)") in run.text
    assert ("gate brier <= 0.25 (thresholds.yaml, line 13) was not evaluated: brier is computed from binary items, "
            "and no suite that ran has them") in run.text


def test_ci_evidence_fails_only_when_whole_ci_is_beyond(optbench):
    optbench.write("suites/pairs.yaml", pair_suite(n=16))
    optbench.write("thresholds.yaml", """
        optbench: 1
        gates:
          - metric: skew
            max: 4
            evidence: ci
    """)
    run = optbench.run("--model", "sim:overclaim")  # Skew about +13: whole CI above 4
    assert run.ret == 1
    assert run.report["gates"][0]["verdict"] == "fail"
    assert "the whole 95% interval lies beyond the bound" in run.text


def test_no_thresholds_file_means_no_gates(optbench):
    optbench.write("suites/pairs.yaml", pair_suite(n=4))
    run = optbench.run("--model", "sim:overclaim")
    assert run.ret == 0
    assert run.report["gates"] == []
    assert "optbench summary" in run.text and "gates from" not in run.text
    # ... which is said: nothing was gated (and strict mode fails it).
    assert "no-gates" in [w["code"] for w in run.report["warnings"]]
    assert "warning: no gate checked this run: 4 item result(s) were scored but no thresholds file was given" \
        in run.text


# --------------------------------------------------------------------------- pytest --optbench-lint

BAD_PAIRS = """
    optbench: 1
    suite: bad-pairs
    kind: inverted_pair
    track: B
    items:
      - id: same-01
        domain: academic
        scenario: A student prepares for an exam.
        positive: What is the probability that the student passes?
        negative: What is the probability that the student passes?
      - id: nodomain-01
        scenario: A team plans a launch.
        positive: What is the probability that the launch happens on time?
        negative: What is the probability that the launch does not happen on time?
"""


# Conditions that use the narrative fields pair_suite writes (an unused field is a warning).
NARRATIVE_ARMS = """conditions:
  base: {}
  narrative_up: {scenario: '{scenario} {narrative_up}'}
  narrative_down: {scenario: '{scenario} {narrative_down}'}
"""


def test_optbench_lint_reports_findings_runs_nothing_and_exits_1(optbench):
    optbench.write("suites/good.yaml", pair_suite(n=2, conditions=NARRATIVE_ARMS))
    optbench.write("suites/bad.yaml", BAD_PAIRS)
    optbench.write("conftest.py", SPY_CONFTEST)
    run = optbench.run("--optbench-lint", "suites", "--model", "sim:calibrated", report=False)
    assert run.ret == 1
    *findings, summary = run.result.stdout.lines
    assert "suites/bad.yaml::same-01: error: the positive and negative questions are the same" in findings
    assert ("suites/bad.yaml::nodomain-01: warning: no 'domain' label: it is left out of per-domain breakdowns"
            in findings)
    assert all(line.startswith("suites/bad.yaml::") for line in findings)  # nothing about good.yaml
    errors = sum(": error: " in line for line in findings)
    assert summary == f"optbench lint: {errors} error(s), 1 warning(s)"
    assert "passed" not in run.text and "optbench summary" not in run.text  # no session ran
    assert not (optbench.path / "model-was-called").exists()
    # The same findings as `optbench lint suites`, from the rootdir.
    assert run.result.stdout.lines == cli_lint(optbench, "suites")


def test_optbench_lint_on_clean_suites_exits_0(optbench):
    optbench.write("suites/good.yaml", pair_suite(n=2, conditions=NARRATIVE_ARMS))
    run = optbench.run("--optbench-lint", "suites/good.yaml", report=False)
    assert run.ret == 0
    assert run.result.stdout.lines == ["optbench lint: 0 error(s), 0 warning(s)"]


def cli_lint(optbench, *paths: str) -> list[str]:
    import contextlib
    import io

    from pytest_optbench.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["lint", *paths]) == 1
    return out.getvalue().splitlines()
