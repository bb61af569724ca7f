"""optbench gate: a report's records scored and gated offline through ControllerSession,
with a session's exit codes and outputs."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_optbench.cli import main as optbench_main
from pytest_optbench.records.item import Answer, ItemRecord, PromptRecord
from pytest_optbench.report.reading import ReportError
from pytest_optbench.session.gate import EXIT_FAILED, EXIT_NO_RESULTS, EXIT_OK, GateArgs, run_gate

GATE = "optbench: 1\ngates:\n  - metric: skew\n    max_abs: 5\n"


def pair(i: int, plus: float, minus: float, **answer) -> ItemRecord:
    def prompt(role: str, value: float) -> PromptRecord:
        return PromptRecord(role, f"{role} {i}", [Answer(raw=str(value), value=value, cached=False, **answer)
                                                  for _ in range(2)])

    return ItemRecord("track-b", f"item-{i:02d}", "base", "inverted_pair", "suites/b.yaml", "sim:x",
                      [prompt("positive", plus), prompt("negative", minus)], track="B", domain="academic",
                      prompt_hash="h")


def write_report(path: Path, records: list[ItemRecord], pending: list[ItemRecord] = (), **run) -> Path:
    data = {"format": "pytest-optbench-report", "format_version": 1,
            "run": {"model": "sim:x", "seed": 0, "bootstrap_resamples": 200, "keep_fifty": False,
                    "requests": {"batches_submitted": 2}, **run},
            "items": [r.to_dict() for r in records], "items_pending": [r.to_dict() for r in pending],
            "items_without_results": [], "aggregates": [], "gates": []}
    path.write_text(json.dumps(data))
    return path


def gate(tmp_path: Path, report: Path, **args) -> tuple[int, list[str]]:
    lines: list[str] = []
    thresholds = tmp_path / "thresholds.yaml"
    thresholds.write_text(GATE)
    code = run_gate(GateArgs(report, thresholds=thresholds, root=tmp_path, **args), lines.append)
    return code, lines


TILTED = [pair(i, 70 + i % 3, 40) for i in range(12)]  # Skew ~ +10: fails |x| <= 5
COHERENT = [pair(i, 60 + i % 3, 40 - i % 3) for i in range(12)]


def test_a_failing_gate_is_exit_code_1_with_the_summary(tmp_path):
    code, lines = gate(tmp_path, write_report(tmp_path / "r.json", TILTED), junitxml=tmp_path / "j.xml")
    assert code == EXIT_FAILED
    text = "\n".join(lines)
    assert "optbench summary" in text and "gate skew |x| <= 5 (point) failed on track-b/base" in text
    assert lines[-1] == "optbench gate: 12 item results scored, 1 gate(s) failed; exit code 1"
    suite = ET.parse(tmp_path / "j.xml").getroot().find("testsuite")
    assert suite.get("tests") == "13" and suite.get("failures") == "1"
    assert suite.findall("testcase")[0].get("classname") == "suites.b.yaml"


def test_passing_gates_are_exit_code_0_and_the_report_is_written(tmp_path):
    code, _ = gate(tmp_path, write_report(tmp_path / "r.json", COHERENT), output=tmp_path / "out.json")
    assert code == EXIT_OK
    out = json.loads((tmp_path / "out.json").read_text())
    assert [g["verdict"] for g in out["gates"]] == ["pass"]
    assert out["run"]["requests"] == {"batches_submitted": 2} and out["run"]["bootstrap_resamples"] == 200


def test_no_results_is_exit_code_5(tmp_path):
    code, lines = gate(tmp_path, write_report(tmp_path / "r.json", []))
    assert code == EXIT_NO_RESULTS and lines[-1].endswith("exit code 5")


def test_a_failed_item_fails_the_gate_run(tmp_path):
    broken = pair(99, 60, 40)
    broken.prompts[0].answers[0] = Answer(raw=None, error="HTTP 500")
    code, _ = gate(tmp_path, write_report(tmp_path / "r.json", [*COHERENT, broken]))
    assert code == EXIT_FAILED


def test_pending_items_are_not_scored_and_fail_only_under_strict(tmp_path):
    waiting = pair(50, 60, 40)
    waiting.prompts[1].answers = [Answer(raw=None, batch="batch_7"), Answer(raw=None, batch="batch_7")]
    report = write_report(tmp_path / "r.json", COHERENT, [waiting],
                          batch={"open": {"batch_7": {"expires": 1.9e9}}})
    code, lines = gate(tmp_path, report)
    assert code == EXIT_OK
    text = "\n".join(lines)
    assert "1 item result(s) wait for answers in batch batch_7" in text and "skipped, not passed" in text
    assert "2030" in text  # when the batch ends at the latest
    code, lines = gate(tmp_path, report, strict=True)
    assert code == EXIT_FAILED and "fail under strict mode" in "\n".join(lines)


@pytest.mark.parametrize(("field", "value", "words"), [
    # Types are checked when the report is read (records.check_report); ranges when it is scored.
    ("seed", "zero", "'run', key 'seed': must be a whole number"),
    ("bootstrap_resamples", 0, "'run', key 'bootstrap_resamples': must be a whole number from 1 to"),
    ("keep_fifty", "yes", "'run', key 'keep_fifty': must be true or false"),
    ("base_rate_oos", 2, "run.base_rate_oos is .*null or a number from 0 to 1")])
def test_a_hand_edited_run_section_is_one_sentence(tmp_path, field, value, words):
    report = write_report(tmp_path / "r.json", COHERENT, **{field: value})
    with pytest.raises(ReportError, match=words):
        gate(tmp_path, report)


def test_the_cli_gate_maps_usage_errors_to_4(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_report(tmp_path / "r.json", COHERENT, seed="x")
    assert optbench_main(["gate", "r.json"]) == 4
    err = capsys.readouterr().err
    assert err.startswith("optbench gate: ") and err.count("\n") == 1 and "Traceback" not in err
    write_report(tmp_path / "r.json", COHERENT)
    assert optbench_main(["gate", "r.json", "--thresholds", "nope.yaml"]) == 4
    assert "nope.yaml: no such file" in capsys.readouterr().err


def test_the_multiplicity_comes_from_the_command_line_then_the_thresholds_file(tmp_path):
    report = write_report(tmp_path / "r.json", COHERENT)
    (tmp_path / "t.yaml").write_text("optbench: 1\nmultiplicity: bh\ngates:\n  - metric: skew\n    max_abs: 5\n"
                                     "    evidence: ci\n")
    for given, used in ((None, "bh"), ("none", "none")):
        out = tmp_path / f"{used}.json"
        lines: list[str] = []
        code = run_gate(GateArgs(report, thresholds=tmp_path / "t.yaml", root=tmp_path, output=out,
                                 multiplicity=given), lines.append)
        assert code == EXIT_OK
        data = json.loads(out.read_text())
        assert data["run"]["multiplicity"] == used and data["gates"][0]["family_size"] == 1
        assert any(line.startswith("multiplicity: ") for line in lines)
