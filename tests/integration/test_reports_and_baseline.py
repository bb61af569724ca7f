"""Reports people read and gates on change against a baseline, end to end."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET

from conftest import pair_suite
from pytest_optbench.cli import main as optbench_main

CHANGE_GATES = """
optbench: 1
gates:
  - metric: skew
    max_increase: 2
    evidence: ci
  - metric: parse_rate
    max_decrease: 0.2
"""


def _baseline(opt, model: str = "sim:calibrated", name: str = "base.json") -> str:
    opt.write("suites/pairs.yaml", pair_suite(n=20))
    run = opt.run("--model", model)
    shutil.copy(opt.pytester.path / "report.json", opt.pytester.path / name)
    assert run.ret == 0, run.text
    return name


def test_identical_answers_show_no_change_and_gates_pass(optbench):
    baseline = _baseline(optbench)
    optbench.write("thresholds.yaml", CHANGE_GATES)
    run = optbench.run("--model", "sim:calibrated", "--optbench-baseline", baseline)
    assert run.ret == 0, run.text
    skew = next(c for c in run.report["baseline"]["changes"] if c["metric"] == "skew")
    # No item differs, but whole-number answers cannot show a spread below their rounding:
    # Student's interval at that floor (issue 27, D5), not the certainty of [0, 0].
    assert skew["delta"] == 0 and skew["n"] == 20
    assert -0.5 < skew["ci_low"] < 0 < skew["ci_high"] < 0.5
    assert run.report["baseline"]["setting_differences"] == []
    # The Skew change's interval lies within +2: shown to hold. The parse-rate change is exactly 0,
    # but its exact bound at 20 items cannot detect a 0.2 drop: the point gate cannot tell.
    assert [(g["metric"], g["verdict"]) for g in run.report["gates"]] == [("skew", "pass"),
                                                                          ("parse_rate", "inconclusive")]
    assert "too few items for this bound" in run.report["gates"][1]["reason"]


def test_planted_shift_is_detected_and_fails_the_gate(optbench):
    baseline = _baseline(optbench)
    optbench.write("thresholds.yaml", CHANGE_GATES)
    run = optbench.run("--model", "sim:overclaim", "--optbench-baseline", baseline)
    assert run.ret == 1
    skew = next(c for c in run.report["baseline"]["changes"] if c["metric"] == "skew")
    assert skew["ci_low"] > 2 and skew["p_value"] < 0.01  # planted +13 pp
    assert run.report["gates"][0]["verdict"] == "fail"
    assert "gate skew increase <= 2 (ci) failed on track-b-demo/base" in run.text
    assert "baseline differs: model: baseline 'sim:calibrated', now 'sim:overclaim'" in run.text


def test_partially_overlapping_items_are_listed(optbench):
    baseline = _baseline(optbench)
    optbench.write("suites/pairs.yaml", pair_suite(n=25).replace("item-00", "item-new"))
    run = optbench.run("--model", "sim:calibrated", "--optbench-baseline", baseline)
    comparison = run.report["baseline"]
    assert comparison["only_in_current"] == [f"track-b-demo::item-{i:02d}" for i in range(20, 25)] + \
        ["track-b-demo::item-new"]
    assert comparison["only_in_baseline"] == ["track-b-demo::item-00"]
    assert next(c for c in comparison["changes"] if c["metric"] == "skew")["n"] == 19
    assert "6 item(s) only in this run, not compared" in run.text
    assert "1 item(s) only in the baseline, not compared: track-b-demo::item-00" in run.text


def test_changed_settings_are_stated(optbench):
    baseline = _baseline(optbench)
    optbench.write("prompt.txt", "Reply with a number from 0 to 100.")
    run = optbench.run("--model", "sim:calibrated", "--samples", "2", "--system-prompt", "prompt.txt",
                              "--optbench-baseline", baseline)
    differences = run.report["baseline"]["setting_differences"]
    assert any(d.startswith("samples_override: baseline None, now 2") for d in differences)
    assert not any(d.startswith("prompt_hash:") for d in differences)  # prompts are compared per suite
    assert run.report["baseline"]["suites_with_changed_prompts"] == ["track-b-demo"]
    assert "baseline differs: the prompts of track-b-demo changed" in run.text
    assert len(run.report["baseline"]["items_with_changed_prompts"]) == 20
    assert "baseline differs: samples_override" in run.text


def test_malformed_baseline_is_a_clear_usage_error(optbench):
    optbench.write("suites/pairs.yaml", pair_suite(n=2))
    optbench.write("broken.json", "{not json")
    optbench.write("other.json", json.dumps({"hello": "world"}))
    run = optbench.run("--model", "sim:calibrated", "--optbench-baseline", "broken.json")
    assert run.ret == 4 and "broken.json: not valid JSON" in run.text and "Traceback" not in run.text
    run = optbench.run("--model", "sim:calibrated", "--optbench-baseline", "other.json")
    assert run.ret == 4 and "other.json: not a pytest-optbench JSON report" in run.text
    run = optbench.run("--model", "sim:calibrated", "--optbench-baseline", "missing.json")
    assert run.ret == 4 and "missing.json: cannot read the report" in run.text


def test_change_gate_without_baseline_is_not_evaluated(optbench):
    optbench.write("suites/pairs.yaml", pair_suite(n=4))
    optbench.write("thresholds.yaml", CHANGE_GATES)
    run = optbench.run("--model", "sim:calibrated")
    assert run.ret == 0
    assert {g["verdict"] for g in run.report["gates"]} == {"inconclusive"}
    assert "no baseline run was given: pass --optbench-baseline REPORT.json" in json.dumps(run.report["gates"])


def test_markdown_and_github_step_summary(optbench, monkeypatch):
    optbench.write("suites/pairs.yaml", pair_suite(n=8).replace("plan 3 succeeds", "plan 3 | <b>succeeds</b>"))
    optbench.write("thresholds.yaml", "optbench: 1\ngates:\n  - metric: skew\n    max_abs: 5\n")
    summary = optbench.path / "step-summary.md"
    summary.write_text("# earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    run = optbench.run("--model", "sim:overclaim", "--optbench-markdown", "out.md")
    assert run.ret == 1
    markdown = (optbench.path / "out.md").read_text()
    assert markdown.startswith("## pytest-optbench: sim:overclaim")
    assert re.search(r"\| track-b-demo \| base \| skew \| .* \| FAIL \|", markdown)  # the verdict is the last column
    assert "### Worst items" in markdown and "<b>" not in markdown
    assert summary.read_text() == "# earlier step\n" + markdown


def test_junit_has_item_properties_and_gate_test_cases(optbench):
    optbench.write("suites/pairs.yaml", pair_suite(n=6))
    optbench.write("thresholds.yaml", "optbench: 1\ngates:\n  - metric: skew\n    max_abs: 5\n"
                                      "  - metric: brier\n    max: 0.2\n")
    run = optbench.run("--model", "sim:overclaim", "--junitxml", "junit.xml")
    assert run.ret == 1
    suite = ET.parse(optbench.path / "junit.xml").getroot().find("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    item = cases["item-00"]
    properties = {p.get("name"): p.get("value") for p in item.iter("property")}
    values = json.loads(properties["optbench_values"])
    assert set(values) == {"positive", "negative", "skew"}
    assert len(json.loads(properties["optbench_answers"])["positive"]) == 3
    gate = cases["skew |x| <= 5[track-b-demo/base]"]
    assert gate.find("failure") is not None
    skipped = cases["brier <= 0.2[no matching suite]"]
    assert skipped.find("skipped") is not None


def test_language_selection(optbench):
    optbench.write("suites/en.yaml", pair_suite(suite="demo-en", n=3))
    optbench.write("suites/fr.yaml", pair_suite(suite="demo-fr", n=4).replace("optbench: 1\n", "optbench: 1\nlanguage: fr\n"))
    run = optbench.run("--model", "sim:calibrated", "--language", "fr")
    run.result.assert_outcomes(passed=4, deselected=3)
    both = optbench.run("--model", "sim:calibrated", "--language", "fr", "--language", "en", "-v")
    both.result.assert_outcomes(passed=7)
    languages = both.report["languages"]["track_b_skew"]
    assert [entry["language"] for entry in languages] == ["en", "fr"]
    assert both.report["languages"]["inter_language_sd"] is not None
    assert "by language (Track B Skew under base: inter-language SD" in both.text


def test_compare_and_baseline_commands(optbench, capsys):
    first = _baseline(optbench, "sim:calibrated", "a.json")
    second = _baseline(optbench, "sim:optimist", "b.json")
    root = optbench.path
    capsys.readouterr()  # the in-process runs' own output
    assert optbench_main(["compare", str(root / first), str(root / second)]) == 0
    out = capsys.readouterr().out
    assert "sim:calibrated" in out and "sim:optimist" in out and "type-II SS" in out
    assert optbench_main(["baseline", str(root / second), "--output", str(root / "kept" / "baseline.json")]) == 0
    assert json.loads((root / "kept" / "baseline.json").read_text())["run"]["model"] == "sim:optimist"
    (root / "bad.json").write_text("[]")
    assert optbench_main(["baseline", str(root / "bad.json")]) == 2
    assert "not a pytest-optbench JSON report" in capsys.readouterr().err


# --------------------------------------------------------------------------- provenance


ACME_CONFTEST = """
    import pytest
    from pytest_optbench.api import declare_model, fingerprint

    @pytest.fixture(scope="session")
    def optbench_model(pytestconfig):
        system = (pytestconfig.rootpath / "acme_prompt.txt").read_text()
        upbeat = "upbeat" in system

        @declare_model(name="acme-pipeline", version=fingerprint(system))
        def acme_pipeline(prompt):   # the app's own prompt decides its answers
            if prompt.meta["role"] == "positive":
                return "75" if upbeat else "60"
            return "40"

        return acme_pipeline
"""


def test_a_wrapper_that_changes_its_own_prompt_is_named_by_the_baseline_and_fails_the_change_gate(optbench):
    """The pull-request flow with a conftest pipeline: its system prompt is its own, so the
    suite's prompt hash cannot see it change; the fingerprint it declares does."""
    optbench.write("suites/pairs.yaml", pair_suite(n=20))
    optbench.write("conftest.py", ACME_CONFTEST)
    optbench.write("acme_prompt.txt", "Be careful.")
    main = optbench.run()  # on main: the baseline
    assert main.ret == 0, main.text
    assert main.report["run"]["model"] == "acme-pipeline"
    version = main.report["run"]["model_version"]
    assert version.startswith("sha256:") and {i["model_version"] for i in main.report["items"]} == {version}
    assert "model acme-pipeline (the optbench_model fixture of conftest.py)" in main.text
    shutil.copy(optbench.path / "report.json", optbench.path / "base.json")

    optbench.write("thresholds.yaml", CHANGE_GATES)
    optbench.write("acme_prompt.txt", "Be upbeat.")  # the pull request: the app's prompt changed
    pull = optbench.run("--optbench-baseline", "base.json")
    assert pull.ret == 1
    changed = pull.report["run"]["model_version"]
    assert changed != version
    assert pull.report["baseline"]["suites_with_changed_prompts"] == []  # the suite's prompts did not change
    named = f"model_version: baseline {version!r}, now {changed!r}"
    assert any(d.startswith(named) for d in pull.report["baseline"]["setting_differences"])
    assert f"baseline differs: {named} (the version or fingerprint the model declares" in pull.text
    failure = next(line for line in pull.text.splitlines() if line.startswith("gate skew increase <= 2 (ci) failed"))
    assert failure.endswith(f"; against the baseline, {named}")


def test_an_undeclared_pipeline_is_labelled_by_its_function_name(optbench):
    optbench.write("suites/pairs.yaml", pair_suite(n=2))
    optbench.write("conftest.py", """
        import pytest

        @pytest.fixture(scope="session")
        def optbench_model():
            def acme_pipeline(prompt):
                return "55"
            return acme_pipeline
    """)
    run = optbench.run()
    assert run.ret == 0, run.text
    assert run.report["run"]["model"] == "acme_pipeline" and run.report["run"]["model_version"] is None
    assert "<locals>" not in run.text


class SummarySpy:
    """The controller's run section and usage as the summary sees them."""

    def __init__(self) -> None:
        self.seen: list[tuple[object, object, object, object]] = []

    def pytest_terminal_summary(self, config) -> None:
        from pytest_optbench.session.controller import CONTROLLER_KEY

        controller = config.stash[CONTROLLER_KEY]
        outcome = controller.outcome
        self.seen.append((controller.metadata(), controller.metadata(), outcome.usage, outcome.usage))


def test_the_run_section_and_usage_are_counted_once_for_the_reports_and_the_summary(optbench):
    optbench.write("suites/pairs.yaml", pair_suite(n=20))
    spy = SummarySpy()
    run = optbench.run("--model", "sim:calibrated", plugins=(spy,))
    assert run.ret == 0, run.text
    [(first, second, usage, again)] = spy.seen
    assert first is second and usage is again  # built once, shown many times
    assert first["usage"] == run.report["run"]["usage"] and usage["answers"] == run.report["run"]["usage"]["answers"]
