"""``explain`` and ``optbench explain``; the deciding rule on each answer of the JSON report,
read back (also from reports written before rules were kept), and counted in the HTML's
answer-quality section."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pytest_optbench import cli
from pytest_optbench.answers.explain import explain, rule_account
from pytest_optbench.answers.extract import rules
from pytest_optbench.answers.parse import parse_answer
from pytest_optbench.elicit.engine import parsed_answer
from pytest_optbench.records.item import Answer, ItemRecord, PromptRecord
from pytest_optbench.report.html import readings_section
from pytest_optbench.report.model import build_run_model
from pytest_optbench.report.model.tables import readings_table
from pytest_optbench.report.reading import ReportError, check_report
from pytest_optbench.scoring.outcome import Outcome

QUESTION = ("A graduate program admits 25% of the people who apply to it. A typical student applies this year.\n\n"
            "What is the probability that the student is not admitted?")


def test_every_number_with_the_rule_that_decided_it() -> None:
    found = explain("In 2019, 1 of the 4 applicants paid $50. I'd put it at 75%.", question=QUESTION)
    assert [(n.text, n.rule) for n in found.numbers] == [
        ("2019", "role.year"), ("1", "role.count-of"), ("4", "role.count"), ("50", "role.money"),
        ("75%", "present.leadin")]
    assert [n.answer for n in found.numbers] == [False, False, False, False, True]
    assert (found.value, found.rule) == (75.0, "present.leadin")
    shown = found.text()
    assert "'$50'" not in shown and "'50' (50): money [role.money]" in shown
    assert "reading: 75 [present.leadin]" in shown


def test_no_reading_names_the_reason_and_the_rule() -> None:
    found = explain("I'd say 70%. Or 80%.")
    assert (found.value, found.reason, found.rule) == (None, "conflicting answers (70, 80)", "decide.conflict")
    assert found.text().splitlines()[-2] == "reading: none, conflicting answers (70, 80) [decide.conflict]"
    assert rule_account("decide.conflict") in found.text()


def test_json_and_the_whole_number_shortcut_are_explained_too() -> None:
    assert explain('{"probability": 65}').rule == "json.key"
    assert "read from a JSON answer key" in explain('{"probability": 65}').text()
    bare = explain("65")
    assert bare.rule == "present.bare" and [(n.text, n.answer) for n in bare.numbers] == [("65", True)]
    assert explain("   ").rule == "decide.empty"


@pytest.mark.parametrize("reply", ["65", "About 65%.", "0.65", "The probability is not 0.9.", '{"answer": "no", "p": 3}',
                                   "I'd say 40%. Actually, on reflection, 55%.", "<|im_end|>", "x" * 30_000 + " 40%"])
def test_explain_reads_as_parse_answer_does(reply: str) -> None:
    parsed = parse_answer(reply, question=QUESTION, truncated=None)
    found = explain(reply, question=QUESTION)
    assert (found.value, found.reason, found.rule) == (parsed.value, parsed.reason, parsed.rule)
    assert parsed.rule in rules.by_name()


def test_every_rule_has_an_account() -> None:
    assert all(rule_account(r.name) for r in rules.all_rules())
    assert rule_account("present.no-such-rule") is None


def test_optbench_explain(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["explain", "Somewhere around 30%... no, I can't decide between 30 and 50.",
                     "--question", QUESTION]) == 0
    out = capsys.readouterr().out
    assert "'30%' (30)" in out and "[decide.undecided]" in out
    assert out.splitlines()[-2].startswith("reading: none, conflicting answers (30, 50)")


def test_optbench_explain_reads_standard_input_and_the_cut_off_flag(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"The probability is 10")))
    assert cli.main(["explain", "-", "--truncated", "yes"]) == 0
    assert "reading: none, truncated [decide.truncated]" in capsys.readouterr().out
    assert cli.main(["explain", "The probability is 10", "--truncated", "no"]) == 0
    assert "reading: 10 [present.head]" in capsys.readouterr().out


def test_optbench_explain_refuses_a_huge_standard_input(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"9" * (cli.MAX_EXPLAIN_BYTES + 5))))
    assert cli.main(["explain", "-"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("optbench explain: the reply on standard input is longer than") and "Traceback" not in err


def test_the_answer_record_keeps_the_rule() -> None:
    answer = parsed_answer("Answer: 25", question=QUESTION)
    assert (answer.value, answer.rule) == (25.0, "present.label")
    record = ItemRecord("s", "i", "base", "binary", "f.yaml", "m", [PromptRecord("yes", QUESTION, [
        answer, Answer(raw=None, error="timed out")])])
    data = json.loads(json.dumps(record.to_dict()))
    answers = data["prompts"][0]["answers"]
    assert answers[0]["rule"] == "present.label" and "rule" not in answers[1]  # no rule: the report as before
    again = ItemRecord.from_dict(data)
    assert [a.rule for a in again.answers()] == ["present.label", None]


def _report(answer: dict[str, object]) -> dict[str, object]:
    item = {"suite": "s", "item": "i", "condition": "base", "kind": "binary", "file": "f.yaml", "model": "m",
            "prompts": [{"role": "yes", "user": "q", "answers": [answer]}]}
    return {"run": {"model": "m"}, "items": [item], "aggregates": [], "gates": []}


def test_the_report_reader_accepts_the_rule_and_reports_without_it() -> None:
    check_report(_report({"raw": "Answer: 25", "value": 25, "rule": "present.label"}), Path("r.json"))
    check_report(_report({"raw": "Answer: 25", "value": 25}), Path("r.json"))  # written before rules were kept
    assert ItemRecord.from_dict(_report({"raw": "25", "value": 25})["items"][0]).answers()[0].rule is None  # type: ignore[index]
    with pytest.raises(ReportError, match=r"answers\[0\], key 'rule': must be a string or null, got 3"):
        check_report(_report({"raw": "25", "value": 25, "rule": 3}), Path("r.json"))


def test_the_html_counts_answers_by_rule_and_links_each_to_its_account() -> None:
    replies = ["Answer: 25", "Answer: 30", "I'd say 70%. Or 80%.", "0.65"]
    answers = [parsed_answer(r) for r in replies] + [Answer(raw="65", value=65.0, mode="logprobs")]
    records = [ItemRecord("s", "i", "base", "binary", "f.yaml", "m", [PromptRecord("yes", "q", answers)])]
    table = readings_table(records)
    assert table.texts() == [["present.label", "2", "2", "0"], ["decide.ambiguous", "1", "0", "1"],
                             ["decide.conflict", "1", "0", "1"]]
    html = readings_section(build_run_model(Outcome([], [], records, []), {}))
    assert '<a href="#rule-present.label"><code>present.label</code></a>' in html
    assert '<dt id="rule-present.label">' in html and str(rule_account("present.label")).split('"')[0] in html
    assert readings_section(build_run_model(Outcome([], [], [], []), {})) == ""
