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
    optbench.write("suites/good.yaml", pair_suite(n=2))
    optbench.write("suites/bad.yaml", """
        optbench: 1
        suite: bad
        items:
          - id: broken-01
            scenario: A person plans a trip.
            positive: What is the probability that the trip happens?
    """)
    run = optbench.run("--model", "sim:calibrated")
    # pytest stops at collection errors (exit 2); xdist runs the rest and exits 1.
    assert run.ret == (2 if optbench.mode == "serial" else 1)
    assert "ERROR collecting suites/bad.yaml" in run.text
    assert ("suites/bad.yaml, item 'broken-01' (line 4), key 'negative': "
            "is required for items of kind inverted_pair.") in run.text
    assert "Traceback" not in run.text


def test_malformed_yaml_names_file_and_line(optbench_serial):
    optbench_serial.write("suites/bad.yaml", "optbench: 1\nitems:\n  - id: x\n    scenario: [unclosed\n")
    run = optbench_serial.run("--model", "sim:calibrated")
    assert run.ret == 2
    assert "suites/bad.yaml, line 5, column 1: malformed YAML" in run.text
    assert "Traceback" not in run.text


def test_yaml_without_optbench_key_is_ignored(optbench_serial):
    optbench_serial.write("config/other.yaml", "name: something else\nitems: [1, 2]\n")
    optbench_serial.write("suites/pairs.yaml", pair_suite(n=2))
    run = optbench_serial.run("--model", "sim:calibrated")
    assert run.ret == 0
    run.result.assert_outcomes(passed=2)


def test_duplicate_suite_ids_across_files(optbench_serial):
    optbench_serial.write("suites/a.yaml", pair_suite(suite="same", n=1))
    optbench_serial.write("suites/b.yaml", pair_suite(suite="same", n=1))
    run = optbench_serial.run("--model", "sim:calibrated")
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
    assert not (optbench.pytester.path / "model-was-called").exists()


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
def test_bad_command_line_values(optbench_serial, args, message):
    optbench_serial.write("suites/pairs.yaml", pair_suite(n=1))
    run = optbench_serial.run(*args)
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
        ("skew", "not evaluated"), ("brier", "not evaluated"), ("skew", "not evaluated"),
    ]
    assert "optbench gates: 1 failed, 2 passed, 3 not evaluated" in run.text
    assert ("warning: gate skew |x| <= 5 (thresholds.yaml, line 10) was not evaluated: its suites ['track-z-*'] "
            "match none of the suites that ran (track-b-demo)") in run.text
    assert ("gate brier <= 0.25 (thresholds.yaml, line 13) was not evaluated: brier is computed from binary items, "
            "and no suite that ran has them") in run.text


def test_ci_evidence_fails_only_when_whole_ci_is_beyond(optbench_serial):
    optbench_serial.write("suites/pairs.yaml", pair_suite(n=16))
    optbench_serial.write("thresholds.yaml", """
        optbench: 1
        gates:
          - metric: skew
            max: 4
            evidence: ci
    """)
    run = optbench_serial.run("--model", "sim:overclaim")  # Skew about +13: whole CI above 4
    assert run.ret == 1
    assert run.report["gates"][0]["verdict"] == "fail"
    assert "the whole 95% CI lies beyond the bound" in run.text


def test_no_thresholds_file_means_no_gates(optbench_serial):
    optbench_serial.write("suites/pairs.yaml", pair_suite(n=4))
    run = optbench_serial.run("--model", "sim:overclaim")
    assert run.ret == 0
    assert run.report["gates"] == []
    assert "optbench summary" in run.text and "gates from" not in run.text
