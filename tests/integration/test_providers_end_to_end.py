"""Real providers end to end: pytest sessions in this process against a FakeAPI on loopback,
through the official SDKs and the response store (sharding under -n 2: test_xdist.py)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from conftest import Run, pair_suite
from pytest_optbench.providers.remote import DEFAULT_MAX_TOKENS
from pytest_optbench.testing import FakeAPI

SECRET = "sk-test-SECRET-abc123XYZ"
ANTHROPIC_SECRET = "sk-ant-test-SECRET-def456UVW"
ITEMS = 3
PROMPTS, SAMPLES = 2 * ITEMS, 3  # pair_suite: two prompts per item, three samples each
ANSWERS = PROMPTS * SAMPLES


@pytest.fixture
def secrets(monkeypatch, openai_sdk):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_SECRET)
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def api(secrets):
    with FakeAPI() as server:
        yield server


def run(optbench, server: FakeAPI, *args: str, store: str = "store", model: str = "openai:fake-model",
        **kwargs: Any) -> Run:
    """``optbench.run`` with the provider options and a store directory shared by the runs of
    one test."""
    url = server.anthropic_url if model.startswith("anthropic:") else server.openai_url
    return optbench.run("--model", model, "--base-url", url, "--optbench-cache-dir", str(optbench.path / store),
                        *args, **kwargs)


def input_tokens(requests) -> int:
    """FakeAPI's stand-in tokenizer: a quarter of the characters of system + user."""
    return sum(max(1, len(r.system + r.user) // 4) for r in requests)


def every_answer(report) -> list[dict]:
    return [a for item in report["items"] for p in item["prompts"] for a in p["answers"]]


def assert_no_secret(pytester: pytest.Pytester, runs: list[Run], secret: str) -> None:
    """Neither the key nor a telling piece of it in the output, the report or the store files."""
    fragments = (secret, secret.removeprefix("sk-"), secret[-12:])
    for run_ in runs:
        assert run_.report is not None
        for fragment in fragments:
            assert fragment not in run_.text
            assert fragment not in json.dumps(run_.report)
    store_files = [p for p in pytester.path.rglob("responses.sqlite*") if p.is_file()]
    assert any(p.name == "responses.sqlite" for p in store_files)
    assert sum(p.stat().st_size for p in store_files) > 4096  # answers were written
    for path in store_files:
        data = path.read_bytes()
        for fragment in fragments:
            assert fragment.encode() not in data, path
            assert fragment.encode("utf-16-le") not in data, path


# --------------------------------------------------------------------------- clean runs


def test_clean_run_pays_once_and_the_second_run_reads_the_store(optbench, api):
    """A fresh store: exactly PROMPTS requests, each prompt once with n = samples."""
    optbench.write("suites/pairs.yaml", pair_suite(n=ITEMS))
    first = run(optbench, api)
    assert first.ret == 0, first.text
    first.result.assert_outcomes(passed=ITEMS)
    assert len(api.requests) == PROMPTS  # n=3: one request per prompt
    assert sorted(r.n for r in api.requests) == [SAMPLES] * PROMPTS
    assert len({r.user for r in api.requests}) == PROMPTS  # none asked twice
    assert first.report["run"]["usage"] == {
        "answers": ANSWERS, "failed_calls": 0, "unparsed": 0, "from_store": 0, "paid_this_run": ANSWERS,
        "input_tokens": input_tokens(api.requests), "output_tokens": 2 * ANSWERS}
    assert f"answers {ANSWERS}: {ANSWERS} paid for in this run ({input_tokens(api.requests)} input + " \
           f"{2 * ANSWERS} output tokens), 0 read from the response store" in first.text
    assert all(a["cached"] is False and a["error"] is None and a["value"] is not None
               for a in every_answer(first.report))
    assert first.report["run"]["model"] == "openai:fake-model"
    assert {item["model"] for item in first.report["items"]} == {"openai:fake-model"}

    second = run(optbench, api)
    assert second.ret == 0, second.text
    second.result.assert_outcomes(passed=ITEMS)
    assert len(api.requests) == PROMPTS  # nothing was asked again
    assert second.report["run"]["usage"] == {
        "answers": ANSWERS, "failed_calls": 0, "unparsed": 0, "from_store": ANSWERS, "paid_this_run": 0,
        "input_tokens": 0, "output_tokens": 0}
    assert f"answers {ANSWERS}: 0 paid for in this run (0 input + 0 output tokens), {ANSWERS} read from " \
           "the response store" in second.text
    assert all(a["cached"] is True for a in every_answer(second.report))
    assert second.report["aggregates"] == first.report["aggregates"]


def test_anthropic_run_one_request_per_sample(optbench, api, anthropic_sdk):
    optbench.write("suites/pairs.yaml", pair_suite(n=2))
    result = run(optbench, api, model="anthropic:claude-fake")
    assert result.ret == 0, result.text
    result.result.assert_outcomes(passed=2)
    assert len(api.requests) == 4 * SAMPLES  # the Messages API has no n
    assert all(r.api == "anthropic" and r.body["max_tokens"] == DEFAULT_MAX_TOKENS and r.body["temperature"] == 0.7
               for r in api.requests)
    usage = result.report["run"]["usage"]
    assert usage["paid_this_run"] == usage["answers"] == 4 * SAMPLES
    assert usage["input_tokens"] == input_tokens(api.requests) and usage["output_tokens"] == 2 * 4 * SAMPLES
    assert_no_secret(optbench.pytester, [result], ANTHROPIC_SECRET)


def test_replies_cut_off_at_the_token_limit_do_not_parse_in_the_report_and_on_a_rerun(optbench, secrets):
    """A reply ending on a number gives no answer when the server says it was cut off
    (finish_reason "length"): the number may have gone on. The store keeps the reason."""
    optbench.write("suites/pairs.yaml", pair_suite(n=2))
    cut = {"What is the probability that plan 0 succeeds?"}
    with FakeAPI(answer=lambda request, index: "I'd estimate 30",
                 cut_off=lambda request, index: request.user.endswith(tuple(cut)) and index == 0) as server:
        first = run(optbench, server, "--max-tokens", "8")
        second = run(optbench, server, "--max-tokens", "8")
    assert len(server.requests) == 4  # the second run read the store
    for result in (first, second):
        assert result.ret == 0, result.text
        answers = [(p["user"].splitlines()[-1], a) for item in result.report["items"] for p in item["prompts"]
                   for a in p["answers"]]
        assert [(a["value"], a["reason"], a["truncated"]) for user, a in answers if user in cut] == [
            (None, "truncated", True), (30, None, False), (30, None, False)]
        assert {(a["value"], a["truncated"]) for user, a in answers if user not in cut} == {(30, False)}
        assert result.report["run"]["usage"]["unparsed"] == 1


def test_garbage_answers_lower_parse_rate_and_items_are_not_passes(optbench, secrets):
    optbench.write("suites/pairs.yaml", pair_suite(n=2))
    with FakeAPI(answer=lambda request, index: "no idea") as server:
        result = run(optbench, server)
    assert result.ret == 0, result.text
    # No usable answer: xfail with the reason, never a plain pass; a headline says why.
    result.result.assert_outcomes(xfailed=2)
    assert "warning: low parse rate: track-b-demo has 12 of 12 answers without a readable number" in result.text
    assert result.aggregate("parse_rate")["value"] == 0.0
    assert result.aggregate("error_rate")["value"] == 0.0
    usage = result.report["run"]["usage"]
    assert usage["unparsed"] == usage["paid_this_run"] == 12 and usage["failed_calls"] == 0
    assert all(a["raw"] == "no idea" and a["value"] is None and a["reason"] and a["error"] is None
               for a in every_answer(result.report))


def test_429_storm_with_retry_after_succeeds(optbench, secrets):
    optbench.write("suites/pairs.yaml", pair_suite(n=ITEMS))
    with FakeAPI(faults=["429"] * 5, retry_after="1") as server:
        result = run(optbench, server)
        requests = len(server.requests)
    assert result.ret == 0, result.text
    result.result.assert_outcomes(passed=ITEMS)
    assert requests == PROMPTS + 5  # each 429 was retried once; nothing else was asked twice
    usage = result.report["run"]["usage"]
    assert usage["failed_calls"] == 0 and usage["paid_this_run"] == ANSWERS


# --------------------------------------------------------------------------- failures


def test_offline_on_an_empty_store_names_what_is_missing(optbench, api):
    optbench.write("suites/pairs.yaml", pair_suite(n=2))
    result = run(optbench, api, "--optbench-offline")
    assert api.requests == []
    assert result.ret == 1
    result.result.assert_outcomes(failed=2)
    assert "suites/pairs.yaml::item-01: 6 of 6 model calls failed; first: not in the response store " \
           "(--optbench-offline)" in result.text
    assert "Traceback" not in result.text
    assert result.report["run"]["engine"]["offline"] is True
    assert result.report["run"]["usage"]["failed_calls"] == 12


def test_corrupt_store_is_a_usage_error_in_one_sentence(optbench, api):
    optbench.write("suites/pairs.yaml", pair_suite(n=2))
    path = optbench.path / "store" / "responses.sqlite"
    path.parent.mkdir()
    path.write_bytes(b"\x00\x01garbage, not SQLite\xff" * 100)
    result = run(optbench, api)
    assert result.ret == 4, result.text  # a usage error, before any item runs
    assert api.requests == []
    lines = [line for line in result.text.splitlines() if "responses.sqlite" in line]
    assert lines == [(f"ERROR: {path}: the response store is not a readable SQLite database (file is not a "
                      "database); move it away or choose another --optbench-cache-dir.")]
    assert "Traceback" not in result.text
    assert result.report is None


def test_auth_error_fails_items_is_not_retried_and_the_key_never_leaks(optbench, secrets):
    optbench.write("suites/pairs.yaml", pair_suite(n=ITEMS))
    with FakeAPI() as server:
        good = run(optbench, server)
        assert good.ret == 0, good.text
        assert {r.authorization for r in server.requests} == {f"Bearer {SECRET}"}  # the key was sent
    # The key is revoked; new prompts (another temperature) fail, into the same store.
    with FakeAPI(fault_for=lambda r: "auth") as server:
        bad = run(optbench, server, "--temperature", "0.2")
        asked = [r.user for r in server.requests]
        assert {r.authorization for r in server.requests} == {f"Bearer {SECRET}"}
    # A 401 is never retried, and stops the session's requests: at most the first round, one
    # refused request per slot (--concurrency, 16 by default, is shared by the xdist workers);
    # per process, the first item without answers fails and the others are skipped, with the
    # reason (an item that holds another process's first refusal fails too).
    processes = 2 if optbench.mode == "xdist" else 1
    assert 1 <= len(asked) == len(set(asked)) <= 16
    assert bad.ret == 1
    outcomes = bad.result.parseoutcomes()
    assert 1 <= outcomes["failed"] <= 2 * processes - 1
    assert outcomes["failed"] + outcomes.get("skipped", 0) == ITEMS
    # The failing item names the refusal, whether its own prompt or another's was refused.
    assert re.search(r"6 of 6 model calls failed; first: (not asked: )?openai: HTTP 401", bad.text)
    assert "Traceback" not in bad.text
    assert bad.report["run"]["usage"]["failed_calls"] == 6 * outcomes["failed"]
    assert all((a["error"].startswith("openai: HTTP 401") or a["error"].startswith("not asked: openai: HTTP 401"))
               and a["raw"] is None for a in every_answer(bad.report))
    assert_no_secret(optbench.pytester, [good, bad], SECRET)


def test_requests_retries_and_parameter_changes_are_counted(optbench, api):
    # A server that caps n at 2 (llama.cpp with -np 2) and rate-limits the first request once.
    api.max_n, api.faults = 2, ["429"]
    optbench.write("suite.yaml", pair_suite(n=ITEMS))
    result = run(optbench, api)
    assert result.ret == 0, result.text
    counts = result.report["run"]["requests"]
    assert counts["retries"] == 1 and counts["rate_limited"] == 1 and counts["timeouts"] == 0
    assert counts["requests"] == len(api.requests)
    assert counts["parameter_changes"] >= 1  # each process that met the cap adapted once
    # n = 3 is sent at most once per prompt (plus the rate-limited try), never after the cap
    assert sum(r.n == 3 for r in api.requests) <= PROMPTS + 1
    assert all(a["error"] is None for a in every_answer(result.report))
    assert f"requests {counts['requests']:,}: 1 retried (1 rate-limited, 0 timed out)" in result.text
    assert "the server accepts at most n = 2 (it rejected n = 3)" in result.text


# --------------------------------------------------------------------------- a conftest model wins


PIPELINE_CONFTEST = """
    import pytest

    def pipeline(prompt):
        return "70" if prompt.meta["role"] == "positive" else "40"

    @pytest.fixture(scope="session")
    def optbench_model():
        return pipeline
"""


def test_conftest_model_with_an_api_model_option_makes_no_request(optbench, api):
    """``--model openai:...`` builds a provider, but a conftest.py whose ``optbench_model``
    wraps it (takes ``optbench_cli_model``) decides what the items ask: here a pipeline that
    never calls it, so no prefetch and not one request."""
    optbench.write("suites/pairs.yaml", pair_suite(n=ITEMS))
    optbench.write("conftest.py", PIPELINE_CONFTEST.replace("def optbench_model():",
                                                            "def optbench_model(optbench_cli_model):"))
    result = run(optbench, api)
    assert result.ret == 0, result.text
    result.result.assert_outcomes(passed=ITEMS)
    assert api.requests == []
    assert {item["model"] for item in result.report["items"]} == {"pipeline"}
    assert result.aggregate("skew")["value"] == 10.0  # 70 - (100 - 40)
    usage = result.report["run"]["usage"]
    assert usage["answers"] == ANSWERS and usage["paid_this_run"] == usage["from_store"] == 0
    assert all(a["cached"] is None for a in every_answer(result.report))


def test_report_names_the_model_that_answered(optbench, api):
    """A conftest model that wraps --model answers every item: the summary, every item and the
    JSON report (which a baseline comparison reads) all name it, not the --model spec."""
    optbench.write("suites/pairs.yaml", pair_suite(n=1))
    optbench.write("conftest.py", PIPELINE_CONFTEST.replace("def optbench_model():",
                                                            "def optbench_model(optbench_cli_model):"))
    result = run(optbench, api)
    assert "model pipeline" in result.text, result.text
    assert {item["model"] for item in result.report["items"]} == {"pipeline"}
    assert result.report["run"]["model"] == "pipeline"


def test_elicit_modes_end_to_end_and_a_baseline_in_another_mode_is_flagged(optbench, api):
    """json mode through the plugin: the schema is sent, answers are json answers, the run
    says its mode; a later text run against it as baseline names the different mode; the
    text run's store keys are not the json run's."""
    optbench.write("suites/pairs.yaml", pair_suite(n=ITEMS))
    first = run(optbench, api, "--optbench-elicit", "json")
    assert first.report is not None and first.report["run"]["elicit"] == "json"
    assert "| elicit json |" in first.text
    assert all(r.body.get("response_format", {}).get("type") == "json_schema" for r in api.requests)
    assert {a["mode"] for a in every_answer(first.report)} == {"json"}
    baseline = optbench.path / "json.json"
    baseline.write_text(json.dumps(first.report))
    sent = len(api.requests)
    second = run(optbench, api, "--optbench-baseline", str(baseline))
    assert len(api.requests) > sent  # text keys differ from json keys: asked again
    assert second.report is not None and second.report["run"]["elicit"] == "text"
    differences = second.report["baseline"]["setting_differences"]
    assert any(d.startswith("elicit: baseline 'json', now 'text'") for d in differences)


def test_logprobs_mode_with_a_server_that_rejects_it_falls_back_once(optbench, api):
    api.reject_params = ("logprobs",)
    optbench.write("suites/pairs.yaml", pair_suite(n=ITEMS))
    result = run(optbench, api, "--optbench-elicit", "logprobs")
    assert result.report is not None
    answers = every_answer(result.report)
    assert len(answers) == PROMPTS and {a["mode"] for a in answers} == {"text"}  # one greedy request each
    assert sum("logprobs" in r.body for r in api.requests) <= 16  # found out once, not per prompt
    assert "logprobs elicitation is not available" in result.text
    assert "elicitation: 6 of 6 answers asked in json or logprobs mode were read as text" in result.text


# --------------------------------------------------------------------------- progress without a terminal


def test_without_a_terminal_a_plain_progress_line_says_done_of_total(optbench, api):
    """The run's output is no terminal (captured here, as under CI): no redrawn line, but a
    plain one when asking starts and one when everything is in; -q turns it off."""
    optbench.write("suites/pairs.yaml", pair_suite(n=ITEMS))
    first = run(optbench, api)
    lines = [line for line in first.text.splitlines() if line.startswith("optbench: ")]
    assert lines[0].startswith(f"optbench: 0 of {ANSWERS} answers (0%), 0.0 answers/s, 0 retries (0 after a 429)")
    assert lines[-1].startswith(f"optbench: {ANSWERS} of {ANSWERS} answers (100%), ")
    assert "done in" in lines[-1] and "\r" not in first.text
    second = run(optbench, api)  # everything from the store: one line, at once
    assert [line for line in second.text.splitlines() if line.startswith("optbench: ")] == [
        (f"optbench: {ANSWERS} of {ANSWERS} answers (100%), {ANSWERS} from the store, 0.0 answers/s, "
        "0 retries (0 after a 429), done in 0 s")]
    quiet = run(optbench, api, "-q")
    off = run(optbench, api, "--optbench-progress-interval", "0")
    assert not any(line.startswith("optbench: ") for r in (quiet, off) for line in r.text.splitlines())


# --------------------------------------------------------------------------- who served it


def test_served_model_and_system_fingerprint_are_kept_per_answer_and_a_change_is_named(optbench, api):
    """The API says which snapshot served each answer and (OpenAI) its backend fingerprint: both
    go into the store and every answer of the report, survive a rerun from the store, and a
    baseline served by another snapshot or fingerprint is named."""
    optbench.write("suites/pairs.yaml", pair_suite(n=ITEMS))
    api.served_model, api.system_fingerprint = "fake-model-2025-01-01", "fp_one"
    first = run(optbench, api)
    assert first.ret == 0, first.text
    answers = every_answer(first.report)
    assert {(a["served_model"], a["system_fingerprint"]) for a in answers} == {("fake-model-2025-01-01", "fp_one")}
    assert first.report["run"]["served_models"] == ["fake-model-2025-01-01"]
    assert first.report["run"]["system_fingerprints"] == ["fp_one"]
    again = run(optbench, api)  # read back from the store: the same provenance
    assert {(a["cached"], a["system_fingerprint"]) for a in every_answer(again.report)} == {(True, "fp_one")}
    baseline = optbench.path / "base.json"
    baseline.write_text(json.dumps(first.report))

    api.served_model, api.system_fingerprint = "fake-model-2025-06-01", "fp_two"
    second = run(optbench, api, "--optbench-baseline", str(baseline), store="store-2")  # a fresh store: asked again
    differences = second.report["baseline"]["setting_differences"]
    assert [d.split(" (")[0] for d in differences] == [
        "served model: baseline fake-model-2025-01-01, now fake-model-2025-06-01",
        "system_fingerprint: baseline fp_one, now fp_two"]
    assert "baseline differs: system_fingerprint: baseline fp_one, now fp_two (the provider's backend" in second.text


def test_a_report_without_provenance_is_no_evidence_of_a_change(optbench, api):
    """A baseline from before provenance was kept (no served_models) names no difference."""
    optbench.write("suites/pairs.yaml", pair_suite(n=ITEMS))
    api.system_fingerprint = "fp_one"
    first = run(optbench, api)
    old = dict(first.report)
    old["run"] = {k: v for k, v in first.report["run"].items()
                  if k not in ("served_models", "system_fingerprints", "model_version")}
    old["items"] = [{k: v for k, v in item.items() if k != "model_version"} | {"prompts": [
        {**p, "answers": [{k: v for k, v in a.items() if k not in ("served_model", "system_fingerprint")}
                          for a in p["answers"]]} for p in item["prompts"]]} for item in first.report["items"]]
    (optbench.path / "old.json").write_text(json.dumps(old))
    second = run(optbench, api, "--optbench-baseline", str(optbench.path / "old.json"))
    assert second.ret == 0, second.text
    assert second.report["baseline"]["setting_differences"] == []


# --------------------------------------------------------------------------- cost in money


PRICES = """
currency: EUR
prices:
  "fake-model*": {input: 2.0, output: 8.0}   # per million tokens
"""


def test_with_prices_the_summary_json_step_summary_and_power_show_money(optbench, api, monkeypatch, capsys):
    optbench.write("suites/pairs.yaml", pair_suite(n=ITEMS))
    optbench.write("prices.yaml", PRICES)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(optbench.path / "step.md"))
    first = run(optbench, api, "--optbench-prices", "prices.yaml")
    assert first.ret == 0, first.text
    spent_in, spent_out = input_tokens(api.requests) * 2.0 / 1e6, 2 * ANSWERS * 8.0 / 1e6
    cost = first.report["run"]["usage"]["cost"]
    assert cost["currency"] == "EUR" and cost["unpriced_answers"] == {}
    assert cost["input"] == pytest.approx(spent_in) and cost["output"] == pytest.approx(spent_out)
    assert cost["paid_this_run"] == pytest.approx(spent_in + spent_out) and cost["from_store"] == 0
    line = next(t for t in first.text.splitlines() if t.startswith("cost at the prices of prices.yaml: "))
    assert line.startswith(f"cost at the prices of prices.yaml: EUR {spent_in + spent_out:.3g} paid in this run")
    assert "cost at the prices of prices.yaml: EUR" in (optbench.path / "step.md").read_text()

    second = run(optbench, api, "--optbench-prices", "prices.yaml")  # from the store: nothing paid now
    again = second.report["run"]["usage"]["cost"]
    assert again["paid_this_run"] == 0 and again["from_store"] == pytest.approx(spent_in + spent_out)
    assert f"the {ANSWERS} answers read from the store had cost EUR" in second.text

    # optbench power prices the items an effect needs, with the prices the report kept
    capsys.readouterr()
    from pytest_optbench.cli import main as optbench_main

    assert optbench_main(["power", str(optbench.path / "report.json"), "--effect", "20", "--change"]) == 0
    out = capsys.readouterr().out
    table = out.splitlines()
    header = next(t for t in table if t.startswith("samples per prompt"))
    assert header.split() == ["samples", "per", "prompt", "items", "needed", "cost", "of", "a", "run"]
    per_answer = (spent_in + spent_out) / ANSWERS
    row = next(t for t in table if t.startswith("1 "))
    items = int(row.split()[1].replace(",", ""))
    assert row.split()[2:] == ["EUR", f"{items * 2 * 1 * per_answer:.3g}"]  # items x 2 prompts x 1 sample


def test_a_bad_prices_file_is_a_usage_error_before_any_call(optbench, api):
    optbench.write("suites/pairs.yaml", pair_suite(n=ITEMS))
    optbench.write("prices.yaml", 'prices:\n  "fake-model": {input: 2, ouput: 8}\n')
    result = run(optbench, api, "--optbench-prices", "prices.yaml")
    assert result.ret == 4 and api.requests == []
    assert ("prices.yaml, model 'fake-model', key 'ouput': is not a price key, did you mean 'output'?"
            in result.text)
    assert "Traceback" not in result.text
