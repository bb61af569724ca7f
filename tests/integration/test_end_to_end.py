"""The plugin end to end, through real pytest sessions run in this process."""

from __future__ import annotations

from pathlib import Path

import pytest

import pytest_optbench.plugin
from conftest import CONDITIONS, SKEW_GATE, pair_suite


class ConfigSpy:
    """A plugin handed to the in-process run: keeps the run's config."""

    def __init__(self) -> None:
        self.configs: list[pytest.Config] = []

    def pytest_configure(self, config: pytest.Config) -> None:
        self.configs.append(config)


def test_in_process_runs_load_this_checkout_and_share_no_state(optbench):
    """The entry point resolves to the module under test here; two runs in one process keep
    their sessions apart (each config has its own; the second sees only its own items)."""
    from pytest_optbench.session.controller import CONTROLLER_KEY
    from pytest_optbench.session.worker import WORKER_KEY

    spy = ConfigSpy()
    optbench.write("suites/pairs.yaml", pair_suite(n=2))
    first = optbench.run("--model", "sim:calibrated", plugins=(spy,))
    optbench.write("suites/pairs.yaml", pair_suite(n=3))
    second = optbench.run("--model", "sim:optimist", plugins=(spy,))
    first.result.assert_outcomes(passed=2)
    second.result.assert_outcomes(passed=3)
    one, two = spy.configs
    plugin = one.pluginmanager.get_plugin("optbench")
    assert plugin is pytest_optbench.plugin
    assert Path(plugin.__file__).resolve().is_relative_to(Path(__file__).resolve().parents[2])
    assert one.stash[WORKER_KEY] is not two.stash[WORKER_KEY]
    assert one.stash[CONTROLLER_KEY] is not two.stash[CONTROLLER_KEY]
    assert len(first.report["items"]) == 2 and len(second.report["items"]) == 3
    assert {i["model"] for i in second.report["items"]} == {"sim:optimist"}


def test_no_model_skips_items_with_a_reason(optbench):
    optbench.write("suites/pairs.yaml", pair_suite())
    run = optbench.run("-rs")
    assert run.ret == 0
    run.result.assert_outcomes(skipped=12)
    assert "no model selected: pass --model" in run.text
    # Skipped, never silent: a headline says no model answered (strict mode fails on it).
    assert "warning: no model answered: 12 suite item(s) were skipped" in run.text


def test_calibrated_model_passes_the_skew_gate(optbench):
    optbench.write("suites/pairs.yaml", pair_suite(n=16))
    optbench.write("thresholds.yaml", SKEW_GATE)
    run = optbench.run("--model", "sim:calibrated")
    assert run.ret == 0, run.text
    run.result.assert_outcomes(passed=16)
    assert "optbench gates: 0 failed, 0 inconclusive, 1 passed" in run.text
    [gate] = run.report["gates"]
    assert gate["verdict"] == "pass" and gate["metric"] == "skew" and gate["suite"] == "track-b-demo"


def test_biased_model_fails_the_session_with_a_readable_summary(optbench):
    optbench.write("suites/pairs.yaml", pair_suite(n=16))
    optbench.write("thresholds.yaml", SKEW_GATE)
    run = optbench.run("--model", "sim:overclaim")
    assert run.ret == 1, run.text
    run.result.assert_outcomes(passed=16)  # items pass; the gate fails the session
    assert "gate skew |x| <= 5 (point) failed on track-b-demo/base" in run.text
    assert "16 passed, 1 optbench gate(s) failed" in run.text
    # Planted d+ = +7, d- = +6; with 16 items only the signs the CIs back are named.
    assert run.aggregate("skew")["quadrant"] in ("compound overclaim", "good-side optimism (d- not distinguishable from 0)")
    assert run.aggregate("skew")["quadrant"] in run.text
    assert "Traceback" not in run.text
    skew = run.aggregate("skew")
    assert skew["ci_low"] <= 13 <= skew["ci_high"]


def test_test_ids_name_item_and_condition(optbench):
    optbench.write("suites/pairs.yaml", pair_suite(n=2, conditions=CONDITIONS))
    run = optbench.run("--collect-only", "-q", report=False)
    assert "suites/pairs.yaml::item-00" in run.text
    assert "suites/pairs.yaml::item-00[narrative_up]" in run.text
    assert "item-00[base]" not in run.text


def test_keyword_selection_by_domain_and_condition(optbench):
    optbench.write("suites/pairs.yaml", pair_suite(n=4, conditions=CONDITIONS))
    run = optbench.run("--model", "sim:calibrated", "-k", "academic and not narrative_up")
    run.result.assert_outcomes(passed=2)


def test_user_conftest_overrides_the_model_fixture(optbench):
    """A user audits their own pipeline: a plain function sees the prompt and its metadata."""
    optbench.write("suites/pairs.yaml", pair_suite(n=6))
    optbench.write("conftest.py", """
        import pytest

        def pipeline(prompt):
            assert "probability" in prompt.system.lower()
            assert str(prompt) == prompt.user
            # Always 10 points too high on good outcomes, coherent otherwise.
            return "70%" if prompt.meta["role"] == "positive" else "40"

        @pytest.fixture(scope="session")
        def optbench_model():
            return pipeline
    """)
    run = optbench.run()
    assert run.ret == 0, run.text
    run.result.assert_outcomes(passed=6)
    assert run.aggregate("skew")["value"] == 10.0
    assert run.aggregate("delta_plus")["value"] == 20.0
    assert run.aggregate("delta_minus")["value"] == -10.0
    assert run.report["items"][0]["model"] == "pipeline"


def test_async_model_object_with_complete(optbench):
    optbench.write("suites/pairs.yaml", pair_suite(n=3))
    optbench.write("conftest.py", """
        import pytest

        class AsyncModel:
            name = "my-async-model"

            async def complete(self, prompt):
                return 55 if prompt.meta["role"] == "positive" else 45

        @pytest.fixture(scope="session")
        def optbench_model():
            return AsyncModel()
    """)
    run = optbench.run()
    assert run.ret == 0, run.text
    assert run.aggregate("skew")["value"] == 0.0
    assert "my-async-model" in run.text


def test_model_errors_fail_the_item_and_count_in_error_rate(optbench):
    optbench.write("suites/pairs.yaml", pair_suite(n=4))
    optbench.write("conftest.py", """
        import pytest

        def flaky(prompt):
            if prompt.meta["item"] == "item-01" and prompt.meta["role"] == "negative":
                raise RuntimeError("upstream said no")
            return "60"

        @pytest.fixture(scope="session")
        def optbench_model():
            return flaky
    """)
    run = optbench.run()
    assert run.ret == 1
    run.result.assert_outcomes(passed=3, failed=1)
    assert "3 of 6 model calls failed; first: RuntimeError: upstream said no" in run.text
    assert "Traceback" not in run.text
    assert run.aggregate("error_rate")["value"] == 3 / 24


def test_system_prompt_file_overrides_and_changes_the_prompt_hash(optbench):
    optbench.write("suites/pairs.yaml", pair_suite(n=2))
    optbench.write("prompt.txt", "You are a careful forecaster. Reply with one integer from 0 to 100.\n")
    optbench.write("conftest.py", """
        import pytest

        def check(prompt):
            assert prompt.system == "You are a careful forecaster. Reply with one integer from 0 to 100."
            return "50.5"

        @pytest.fixture(scope="session")
        def optbench_model():
            return check
    """)
    custom = optbench.run("--system-prompt", "prompt.txt")
    assert custom.ret == 0, custom.text
    (optbench.path / "conftest.py").unlink()
    default = optbench.run("--model", "sim:calibrated")
    assert custom.report["run"]["prompt_hash"] != default.report["run"]["prompt_hash"]


def test_keep_fifty_includes_refusals(optbench):
    optbench.write("suites/pairs.yaml", pair_suite(n=2))
    optbench.write("conftest.py", """
        import pytest

        def answers(prompt):
            if prompt.meta["role"] == "negative":
                return "50" if prompt.sample == 0 else "20"
            return "80"

        @pytest.fixture(scope="session")
        def optbench_model():
            return answers
    """)
    filtered = optbench.run()
    assert filtered.aggregate("skew")["value"] == 0.0
    assert filtered.aggregate("refusal_rate")["value"] == 2 / 12
    kept = optbench.run("--keep-fifty")
    assert kept.aggregate("skew")["value"] == 10.0  # P- = (50 + 20 + 20) / 3 = 30


def test_report_metadata_and_items(optbench):
    optbench.write("suites/pairs.yaml", pair_suite(n=3))
    run = optbench.run("--model", "sim:pessimist", "--optbench-seed", "7", "--samples", "2")
    meta = run.report["run"]
    assert meta["model"] == "sim:pessimist" and meta["seed"] == 7 and meta["samples_override"] == 2
    assert meta["plugin_version"] and len(meta["prompt_hash"]) == 16
    item = run.report["items"][0]
    assert [p["role"] for p in item["prompts"]] == ["positive", "negative"]
    assert all(len(p["answers"]) == 2 for p in item["prompts"])
    answer = item["prompts"][0]["answers"][0]
    assert set(answer) == {"raw", "value", "reason", "error", "cached", "input_tokens", "output_tokens",
                           "truncated", "mode", "mass", "distribution", "rule"}
    assert answer["rule"].startswith(("present.", "decide.", "json."))  # the extractor's rule that read it
    assert answer["cached"] is None  # a simulated model is not an API: nothing is stored
    skew = run.aggregate("skew")
    assert set(skew) >= {"suite", "condition", "metric", "value", "ci_low", "ci_high", "n"}


class FreezeSpy:
    """Records how many objects the garbage collector had set aside (gc.freeze) at points of a run."""

    def __init__(self) -> None:
        self.frozen: dict[str, int] = {}

    def pytest_collection_modifyitems(self) -> None:
        import gc

        self.frozen["before collection ends"] = gc.get_freeze_count()

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self) -> None:
        import gc

        self.frozen["collected"] = gc.get_freeze_count()

    def pytest_sessionfinish(self) -> None:
        import gc

        self.frozen["scored"] = gc.get_freeze_count()


def test_an_audit_keeps_what_it_holds_from_the_collector_and_a_nested_one_gives_it_back(optbench):
    """What an audit holds after collection and after scoring is moved out of the garbage
    collector's full passes (gc.freeze); a session run inside another (as here) hands it back
    when it ends, since the process goes on."""
    import gc

    spy = FreezeSpy()
    optbench.write("suites/pairs.yaml", pair_suite(n=3))
    assert gc.get_freeze_count() == 0
    optbench.run("--model", "sim:calibrated", plugins=(spy,)).result.assert_outcomes(passed=3)
    assert spy.frozen["before collection ends"] == 0
    assert spy.frozen["collected"] > 0
    assert spy.frozen["scored"] >= spy.frozen["collected"]
    assert gc.get_freeze_count() == 0


class ReportSpy:
    """The call reports of a run, as the hooks after ours see them."""

    def __init__(self) -> None:
        self.calls: list[pytest.TestReport] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            self.calls.append(report)


def test_a_serial_run_scores_each_record_without_a_copy_on_its_report(optbench):
    """The controller takes the record itself (ControllerSession.hold); only an xdist worker
    puts its dict on the report, to travel. pytest keeps every report to the end."""
    optbench.write("suites/pairs.yaml", pair_suite(n=6))
    spy = ReportSpy()
    run = optbench.run("--model", "sim:calibrated", plugins=(spy,))
    assert run.ret == 0, run.text
    assert len(spy.calls) == 6 and not any(hasattr(r, "optbench_record") for r in spy.calls)
    assert len(run.report["items"]) == 6 and all(i["prompts"] for i in run.report["items"])
