"""What is about pytest-xdist itself, with ``-n 2``: records travel from the workers to the
controller, workers split the prompts and the concurrency, a crashed worker is reported and its
replacement gets a shard in range, the numbers are those of a serial run.

Every other end-to-end test runs serially in this process (a controller under ``-n`` is in
this process too; its workers are new interpreters, so keep this module small).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from conftest import CONDITIONS, SKEW_GATE, pair_suite
from pytest_optbench.testing import FakeAPI

# A conftest.py for the runs below: each xdist worker writes what its worker session was
# given (its id, shard, engine concurrency) and, at the end, how many requests it made.
WORKER_PROBE = """
    import json
    import pytest
    import pytest_optbench
    from pytest_optbench.session.worker import WORKER_KEY

    def _probe(config, **extra):
        worker_id = getattr(config, "workerinput", {}).get("workerid")
        worker = config.stash.get(WORKER_KEY, None)
        if worker_id is None or worker is None:
            return
        path = config.rootpath / f"probe-{worker_id}.json"
        data = json.loads(path.read_text()) if path.exists() else {}
        data.update(shard=list(worker.shard), module=pytest_optbench.__file__, **extra)
        if worker.elicitor is not None:
            data.update(concurrency=worker.elicitor.settings.concurrency, requests=worker.elicitor.stats.requests)
        path.write_text(json.dumps(data))

    RAN = []

    @pytest.hookimpl(trylast=True)
    def pytest_configure(config):
        _probe(config)

    def pytest_runtest_logfinish(nodeid):
        RAN.append(nodeid)

    def pytest_sessionfinish(session):
        _probe(session.config, items=len(RAN))
"""


ROOT = Path(__file__).resolve().parents[2]


def probes(optbench) -> dict[str, dict]:
    return {p.stem.removeprefix("probe-"): json.loads(p.read_text()) for p in sorted(optbench.path.glob("probe-*.json"))}


def test_serial_and_xdist_give_identical_aggregates_items_and_gates(optbench):
    optbench.write("suites/pairs.yaml", pair_suite(n=20, conditions=CONDITIONS))
    optbench.write("suites/other.yaml", pair_suite(suite="track-b-other", n=7))
    optbench.write("thresholds.yaml", SKEW_GATE)
    serial = optbench.run("--model", "sim:optimist")
    parallel = optbench.run("--model", "sim:optimist", "--junitxml", "junit.xml", xdist=True)
    parallel.result.assert_outcomes(passed=47)
    assert "2 workers" in parallel.text
    # Planted Skew +8 against |x| <= 5: the gate fails the session on the controller, once.
    assert serial.ret == parallel.ret == 1
    assert "optbench gates: 3 failed, 0 inconclusive, 0 passed" in parallel.text
    assert serial.report["aggregates"] == parallel.report["aggregates"]
    assert serial.report["items"] == parallel.report["items"]
    assert serial.report["gates"] == parallel.report["gates"]
    assert len(parallel.report["items"]) == 47 and len(serial.report["aggregates"]) > 20
    # JUnit: the items' properties came from the workers, the gate cases from the controller.
    cases = {c.get("name"): c for c in ET.parse(optbench.path / "junit.xml").getroot().iter("testcase")}
    properties = {p.get("name"): p.get("value") for p in cases["item-00[narrative_up]"].iter("property")}
    assert set(json.loads(properties["optbench_values"])) == {"positive", "negative", "skew"}
    gates = [name for name, case in cases.items() if name.startswith("skew |x| <= 5[")]
    assert sorted(gates) == ["skew |x| <= 5[track-b-demo/base]", "skew |x| <= 5[track-b-demo/narrative_up]",
                             "skew |x| <= 5[track-b-other/base]"]
    assert all(cases[name].find("failure") is not None for name in gates)


def test_crashed_worker_is_reported_and_its_replacement_gets_a_shard_in_range(optbench):
    """gw0 dies in its first item; xdist starts gw2 in its place, which must fold into the
    two shards (0 or 1 of 2), not take a third that nobody else knows about."""
    optbench.write("suites/pairs.yaml", pair_suite(n=20))
    optbench.write("conftest.py", WORKER_PROBE + """
    import os

    def pytest_runtest_call(item):
        marker = item.config.rootpath / "crashed-in"
        if item.config.workerinput["workerid"] == "gw0" and not marker.exists():
            marker.write_text(item.nodeid)
            os._exit(3)
    """)
    run = optbench.run("--model", "sim:calibrated", xdist=True)
    crashed = (optbench.path / "crashed-in").read_text()
    assert run.ret == 1
    run.result.assert_outcomes(passed=19, failed=1)
    assert "replacing crashed worker gw0" in run.text
    assert f"worker 'gw0' crashed while running '{crashed}'" in run.text
    assert "1 item(s) failed without sending answers" in run.text
    assert run.report["items_without_results"] == [crashed]
    assert len(run.report["items"]) == 19  # every other item's answers reached the controller
    assert {worker: tuple(p["shard"]) for worker, p in probes(optbench).items()} == {
        "gw0": (0, 2), "gw1": (1, 2), "gw2": (0, 2)}


ITEMS = 12
PROMPTS = 2 * ITEMS


def test_the_controller_asks_for_every_prompt_with_all_of_the_concurrency(optbench, monkeypatch, openai_sdk):
    """Each prompt is asked once, by the controller, with all of ``--concurrency 4``: it
    imports the SDK while its workers start, and they hand it their prompts (session/asker.py)
    and read its answers from the store; a worker would ask, one request at a time, only if
    the controller stopped storing. A second run reads everything back. The controller writes
    its progress lines through its terminal reporter (no terminal here: plain lines)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-xdist")
    optbench.write("suites/pairs.yaml", pair_suite(n=ITEMS))
    optbench.write("conftest.py", WORKER_PROBE)
    with FakeAPI() as api:
        args = ("--model", "openai:fake-model", "--base-url", api.openai_url, "--concurrency", "4",
                "--optbench-cache-dir", str(optbench.path / "store"))
        first = optbench.run(*args, xdist=True)
        asked = [r.user for r in api.requests]
        workers = probes(optbench)
        for path in optbench.path.glob("probe-*.json"):
            path.unlink()
        second = optbench.run(*args, xdist=True)
        asked_again = len(api.requests) - len(asked)
    assert first.ret == second.ret == 0, first.text
    first.result.assert_outcomes(passed=ITEMS)
    assert len(asked) == len(set(asked)) == PROMPTS
    finals = [line for line in first.text.splitlines() if "(100%)" in line and "done in" in line]
    assert [line.split(":")[0] for line in finals] == ["optbench [controller]"], first.text
    assert f"{PROMPTS * 3} of {PROMPTS * 3} answers" in finals[0]
    assert {w: (tuple(p["shard"]), p["concurrency"]) for w, p in workers.items()} == {
        "gw0": ((0, 2), 1), "gw1": ((1, 2), 1)}
    assert {w: p["requests"] for w, p in workers.items()} == {"gw0": 0, "gw1": 0}
    assert first.report["run"]["requests"]["requests"] == PROMPTS  # counted where they were made
    assert all(p["items"] > 0 for p in workers.values())  # both workers ran items
    # The workers are new interpreters: they too run the code of this checkout.
    assert all(Path(p["module"]).resolve().is_relative_to(ROOT) for p in workers.values())
    assert asked_again == 0 and [p["requests"] for p in probes(optbench).values()] == [0, 0]
    assert second.report["run"]["requests"]["requests"] == 0
    usage = second.report["run"]["usage"]
    assert usage["from_store"] == usage["answers"] == PROMPTS * 3 and usage["paid_this_run"] == 0
    assert second.report["aggregates"] == first.report["aggregates"]
    assert not list((optbench.path / "store" / "plans").glob("*"))  # each hand-over is removed once taken


def test_a_bad_key_under_xdist_stops_the_controller_s_requests_at_once(optbench, monkeypatch, openai_sdk):
    """The controller asks: the first 401 stops it (one refused request per slot at most),
    and the workers' items fail with the reason, one FAILED line per process at most."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-revoked-xdist")
    optbench.write("suites/pairs.yaml", pair_suite(n=ITEMS))
    with FakeAPI(fault_for=lambda request: "auth") as api:
        run = optbench.run("--model", "openai:fake-model", "--base-url", api.openai_url, "--concurrency", "4",
                           "--optbench-cache-dir", str(optbench.path / "store"), xdist=True)
        asked = len(api.requests)
    assert run.ret == 1 and 1 <= asked <= 4
    outcomes = run.result.parseoutcomes()
    assert 1 <= outcomes["failed"] <= 2 and outcomes["failed"] + outcomes.get("skipped", 0) == ITEMS
    assert "openai: HTTP 401" in run.text and "Traceback" not in run.text
    assert "sk-revoked-xdist" not in run.text


def test_a_conftest_model_under_xdist_leaves_the_controller_nothing_to_ask(optbench, monkeypatch, openai_sdk):
    """Only the workers see that a conftest fixture answers (here one that wraps --model and
    never calls it): they hand over no prompts, and nothing is asked of the server."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-xdist")
    optbench.write("suites/pairs.yaml", pair_suite(n=4))
    optbench.write("conftest.py", """
        import pytest

        @pytest.fixture(scope="session")
        def optbench_model(optbench_cli_model):
            return lambda prompt: "40"
    """)
    with FakeAPI() as api:
        run = optbench.run("--model", "openai:fake-model", "--base-url", api.openai_url,
                           "--optbench-cache-dir", str(optbench.path / "store"), xdist=True)
        asked = len(api.requests)
    assert run.ret == 0, run.text
    run.result.assert_outcomes(passed=4)
    assert asked == 0
    assert run.report["run"]["requests"].get("requests", 0) == 0


def test_the_controller_s_provider_notes_reach_the_report(optbench, monkeypatch, openai_sdk):
    """json mode against a llama.cpp server: the dialect is found by the process that asks,
    the controller, and its note is in the report as in a serial run."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-xdist")
    optbench.write("suites/pairs.yaml", pair_suite(n=4))
    with FakeAPI(server_kind="llama.cpp",
                 answer=lambda request, index: '{"reasoning": "Likely.", "probability": 70}') as api:
        args = ("--model", "openai:fake-model", "--base-url", api.openai_url, "--optbench-elicit", "json")
        parallel = optbench.run(*args, "--optbench-cache-dir", str(optbench.path / "a"), xdist=True)
        serial = optbench.run(*args, "--optbench-cache-dir", str(optbench.path / "b"))
    assert parallel.ret == serial.ret == 0, parallel.text
    notes = parallel.report["run"]["provider_notes"]
    assert any("json answers are constrained by a grammar" in n for n in notes), notes
    assert notes == serial.report["run"]["provider_notes"]
    assert "json answers are constrained by a grammar" in parallel.text


def test_collection_error_on_the_workers_is_one_sentence(optbench):
    optbench.write("suites/good.yaml", pair_suite(n=2))
    optbench.write("suites/bad.yaml", """
        optbench: 1
        suite: bad
        items:
          - id: broken-01
            scenario: A person plans a trip.
            positive: What is the probability that the trip happens?
    """)
    run = optbench.run("--model", "sim:calibrated", xdist=True)
    assert run.ret == 1  # xdist reports the collection error and runs nothing
    assert ("suites/bad.yaml, item 'broken-01' (line 4), key 'negative': "
            "is required for items of kind inverted_pair.") in run.text
    assert "Traceback" not in run.text



def test_corrupt_store_is_one_usage_error_under_xdist(optbench, monkeypatch, openai_sdk):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-xdist")
    optbench.write("suites/pairs.yaml", pair_suite(n=2))
    path = optbench.path / "store" / "responses.sqlite"
    path.parent.mkdir()
    path.write_bytes(b"\x00\x01garbage, not SQLite\xff" * 100)
    # No restarts: the run fails fast either way (the default would start 8 more workers).
    run = optbench.run("--model", "openai:fake-model", "--base-url", "http://127.0.0.1:9/v1",
                       "--optbench-cache-dir", str(path.parent), "--max-worker-restart", "0", xdist=True)
    assert run.ret == 4
    assert "Traceback" not in run.text
    assert [line for line in run.text.splitlines() if "responses.sqlite" in line] == [
        (f"ERROR: {path}: the response store is not a readable SQLite database (file is not a database); "
         "move it away or choose another --optbench-cache-dir.")]
