"""Issue 24, items 1-3 as a user meets them: strict means strict on every path (a session, a CI
shard, ``optbench merge``, ``optbench gate``), the three verdicts in every output, and the
interval beside a verdict is the one that decided it. Each case failed before the fix."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import Optbench
from conftest import pair_suite as _pair_suite
from pytest_optbench.cli import main as optbench_main
from pytest_optbench.report.model import build_compare_model
from pytest_optbench.report.reading import load_report

GLOB_NOTHING = """
optbench: 1
gates:
  - metric: skew
    max_abs: 50
    suites: ["nothing-*"]
    evidence: ci
"""
MIN_N_UNMET = """
optbench: 1
gates:
  - metric: skew
    max_abs: 50
    min_n: 1000
    evidence: ci
"""
NO_GATES = "optbench: 1\ngates: []\n"
# Under strict mode an item field no template reads is an error: every field used.
BOTH_ARMS = """
conditions:
  base: {}
  narrative_up: {scenario: "{scenario} {narrative_up}"}
  narrative_down: {scenario: "{scenario} {narrative_down}"}
"""


def pair_suite(suite: str = "track-b-demo", n: int = 6) -> str:
    return _pair_suite(suite, n, BOTH_ARMS)


def gate(opt: Optbench, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = optbench_main(["gate", *args])
    out = capsys.readouterr()
    return code, out.out + out.err


def _report(opt: Optbench, *args: str, name: str = "run.json") -> Path:
    run = opt.run("--model", "sim:optimist", *args)
    target = opt.path / name
    (opt.path / "report.json").replace(target)
    assert "Traceback" not in run.text
    return target


@pytest.mark.parametrize("thresholds", [None, NO_GATES])
def test_strict_session_with_items_answered_and_no_gate_fails(optbench: Optbench, thresholds: str | None) -> None:
    optbench.write("suites/pairs.yaml", pair_suite(n=6))
    if thresholds is not None:
        optbench.write("thresholds.yaml", thresholds)
    run = optbench.run("--model", "sim:optimist", "--optbench-strict")
    assert run.ret == 1, run.text
    assert "strict: no gate checked this run: 18 item result(s) were scored but" in run.text
    assert run.report is not None and [w["code"] for w in run.report["warnings"]] == ["no-gates"]
    lax = optbench.run("--model", "sim:optimist")  # not strict: a warning, and exit 0
    assert lax.ret == 0 and "warning: no gate checked this run" in lax.text


@pytest.mark.parametrize("thresholds", [GLOB_NOTHING, MIN_N_UNMET, NO_GATES, None])
def test_optbench_gate_strict_exits_1_whenever_the_session_would(optbench: Optbench, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str],
                                                                 thresholds: str | None) -> None:
    optbench.write("suites/pairs.yaml", pair_suite(n=8))
    report = _report(optbench)
    monkeypatch.chdir(optbench.path)
    args = [str(report), "--strict"]
    if thresholds is not None:
        optbench.write("gates.yaml", thresholds)
        args += ["--thresholds", "gates.yaml"]
    session = optbench.run("--model", "sim:optimist", "--optbench-strict",
                           *(["--thresholds", "gates.yaml"] if thresholds else []))
    code, text = gate(optbench, capsys, *args)
    assert session.ret == 1 and code == 1, text
    assert "Traceback" not in text and text.splitlines()[-1].endswith("exit code 1")
    code, _ = gate(optbench, capsys, str(report), "--no-strict", *args[2:])
    assert code == 0  # the same report, not strict: warnings only


def test_offline_gating_keeps_the_runs_provenance(optbench: Optbench, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    optbench.write("suites/pairs.yaml", pair_suite(n=8))
    report = _report(optbench, "--optbench-elicit", "json")
    monkeypatch.chdir(optbench.path)
    code, text = gate(optbench, capsys, str(report), "--output", "gated.json")
    assert code == 0, text
    before, after = json.loads(report.read_text())["run"], json.loads((optbench.path / "gated.json").read_text())["run"]
    assert before["answered_by"] == ["sim:optimist (from --model)"]
    for key in ("model", "answered_by", "elicit", "prompt_hash", "suite_prompt_hashes", "engine", "base_url_set",
                "system_prompt_override", "seed", "bootstrap_resamples", "requests"):
        assert after[key] == before[key], key
    assert "model sim:optimist (from --model) | elicit json" in text


def test_shards_under_strict_merge_and_gate_cannot_turn_green(optbench: Optbench, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    optbench.write("suites/pairs.yaml", pair_suite(n=6))
    optbench.write("thresholds.yaml", GLOB_NOTHING)
    for i in (1, 2):
        run = optbench.run("--model", "sim:optimist", "--optbench-strict", "--optbench-shard", f"{i}/2")
        # A gate no suite of the whole selection can match is known in each shard already.
        assert run.ret == 1, run.text
        assert "can match nothing in this run's selection" in run.text
        (optbench.path / "report.json").replace(optbench.path / f"shard-{i}.json")
    monkeypatch.chdir(optbench.path)
    capsys.readouterr()
    assert optbench_main(["merge", "shard-1.json", "shard-2.json", "--output", "all.json"]) == 0
    merged = json.loads((optbench.path / "all.json").read_text())
    assert merged["run"]["strict"] is True and merged["run"]["answered_by"] == ["sim:optimist (from --model)"]
    code, text = gate(optbench, capsys, "all.json")  # strict, as the shards were
    assert code == 1 and "inconclusive gates fail: strict mode" in text, text
    assert "model sim:optimist (from --model)" in text


def test_a_shard_with_a_good_gate_passes_under_strict(optbench: Optbench) -> None:
    optbench.write("suites/pairs.yaml", pair_suite(n=6))
    optbench.write("thresholds.yaml", "optbench: 1\ngates:\n  - metric: skew\n    max_abs: 50\n    evidence: ci\n")
    run = optbench.run("--model", "sim:optimist", "--optbench-strict", "--optbench-shard", "1/2")
    assert run.ret == 0, run.text


def test_merge_of_unsharded_reports_fails_under_strict(optbench: Optbench, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    optbench.write("suites/a.yaml", pair_suite("track-b-a", n=3))
    optbench.write("suites/b.yaml", pair_suite("track-b-b", n=3))
    _report(optbench, "suites/a.yaml", name="a.json")
    _report(optbench, "suites/b.yaml", name="b.json")
    monkeypatch.chdir(optbench.path)
    assert optbench_main(["merge", "a.json", "b.json", "--output", "all.json"]) == 0
    capsys.readouterr()
    assert optbench_main(["merge", "a.json", "b.json", "--output", "all.json", "--strict"]) == 1
    out = capsys.readouterr()
    assert "optbench merge: strict: the reports were not written with --optbench-shard" in out.out
    assert (optbench.path / "all.json").is_file()  # written all the same, for the gate and the artifacts


def test_merge_output_a_directory_is_one_sentence(optbench: Optbench, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    optbench.write("suites/pairs.yaml", pair_suite(n=3))
    _report(optbench)
    monkeypatch.chdir(optbench.path)
    (optbench.path / "out").mkdir()
    capsys.readouterr()
    assert optbench_main(["merge", "run.json", "--output", "out"]) == 2
    err = capsys.readouterr().err
    assert err == "optbench merge: --output out: not written (Is a directory).\n"


HOSTILE = [[1], "x", -1, {"a": [1]}, 2 ** 70]
RUN_KEYS = ("engine", "shard", "batch", "merge", "merged_from", "requests", "answered_by", "provider_notes",
            "strict", "usage", "suite_prompt_hashes", "thresholds", "multiplicity", "base_rate_oos", "model", "seed",
            "elicit", "prompt_hash")
NESTED = [("engine", "max_tokens"), ("engine", "offline"), ("shard", "index"), ("shard", "count"),
          ("shard", "assigned"), ("shard", "results_total"), ("shard", "suites"), ("batch", "open"),
          ("merge", "results")]


def test_hostile_run_sections_are_one_sentence_on_every_command(optbench: Optbench, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Every run field a command reads, replaced by values of the wrong type: merge, gate and
    compare answer with one sentence or work, never a traceback."""
    optbench.write("suites/pairs.yaml", pair_suite(n=3))
    optbench.run("--model", "sim:optimist", "--optbench-shard", "1/1")
    good = json.loads((optbench.path / "report.json").read_text())
    monkeypatch.chdir(optbench.path)
    cases = [((key,), value) for key in RUN_KEYS for value in HOSTILE]
    cases += [(path, value) for path in NESTED for value in HOSTILE]
    cases += [(("batch", "open"), {"b1": {"expires": "tomorrow"}}), (("batch", "open"), {"b1": 5}),
              (("shard", "assigned"), [[1, 2, 3, 4]]), (("merged_from",), [5])]
    for path, value in cases:
        data = json.loads(json.dumps(good))
        if len(path) == 1:
            data["run"][path[0]] = value
        else:
            section = data["run"].get(path[0])
            data["run"][path[0]] = {**(section if isinstance(section, dict) else {}), path[1]: value}
        (optbench.path / "hostile.json").write_text(json.dumps(data))
        for argv in (["merge", "hostile.json", "--output", "m.json"], ["gate", "hostile.json"],
                     ["compare", "hostile.json"]):
            capsys.readouterr()
            code = optbench_main(argv)  # an exception here is the bug
            out = capsys.readouterr()
            assert isinstance(code, int) and "Traceback" not in out.err, (path, value, argv)
            if code not in (0, 1):
                lines = out.err.strip().splitlines()
                assert len(lines) == 1 and lines[0].startswith(f"optbench {argv[0]}: "), (path, value, argv, out.err)


def test_an_old_report_with_not_evaluated_gates_still_loads(optbench: Optbench, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    optbench.write("suites/pairs.yaml", pair_suite(n=3))
    optbench.write("thresholds.yaml", GLOB_NOTHING)
    report = _report(optbench)
    data = json.loads(report.read_text())
    for g in data["gates"]:  # as reports were written before the three verdicts
        g["verdict"] = "not evaluated"
        for key in ("evaluated", "level", "interval_low", "interval_high", "on_inconclusive", "fails_session",
                    "family"):
            g.pop(key, None)
    data["run"].pop("on_inconclusive", None)
    report.write_text(json.dumps(data))
    monkeypatch.chdir(optbench.path)
    capsys.readouterr()
    assert optbench_main(["compare", str(report)]) == 0
    model = build_compare_model([("old", load_report(report))])
    assert model.runs_table.texts()[0][-1] == "0 failed, 1 inconclusive, 0 passed"
    assert model.gates.texts()[0][-1] == "INCONCLUSIVE"
    code, text = gate(optbench, capsys, str(report))  # scored again: the new verdicts
    assert code == 0 and "optbench gates: 0 failed, 1 inconclusive, 0 passed" in text


def test_inconclusive_appears_in_every_output_with_the_policy(optbench: Optbench) -> None:
    optbench.write("suites/pairs.yaml", pair_suite(n=6))
    optbench.write("thresholds.yaml", """
        optbench: 1
        gates:
          - metric: skew
            max_abs: 12
            conditions: [base]
            evidence: ci
    """)
    run = optbench.run("--model", "sim:optimist", "--optbench-markdown", "s.md", "--junitxml", "j.xml")
    assert run.report is not None
    (g,) = run.report["gates"]
    assert g["verdict"] == "inconclusive" and g["fails_session"] is False and run.ret == 0, run.text
    policy = "policy: inconclusive gates pass (the default; on_inconclusive: fail or --optbench-strict makes them fail)"
    assert "INCONCLUSIVE" in run.text and policy in run.text
    markdown = (optbench.path / "s.md").read_text()
    assert "INCONCLUSIVE" in markdown and policy in markdown
    (case,) = [c for c in ET.parse(optbench.path / "j.xml").getroot().iter("testcase") if "skew" in c.get("name", "")]
    assert case.find("skipped") is not None and "INCONCLUSIVE" in case.find("skipped").get("message", "")
    failing = optbench.run("--model", "sim:optimist", "--optbench-on-inconclusive", "fail", "--junitxml", "j.xml")
    assert failing.ret == 1 and "is INCONCLUSIVE on track-b-demo/base and fails the session" in failing.text
    (case,) = [c for c in ET.parse(optbench.path / "j.xml").getroot().iter("testcase") if "skew" in c.get("name", "")]
    assert case.find("failure") is not None
