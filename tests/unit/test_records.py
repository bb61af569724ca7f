"""Records in JSON: what a report holds, and reports written by earlier versions."""

from __future__ import annotations

import json

from pytest_optbench.records import Answer, ItemRecord, PromptRecord


def record(*answers: Answer) -> ItemRecord:
    return ItemRecord("s", "item-01", "base", "binary", "s.yaml", "openai:m",
                      [PromptRecord("yes", "Is it so?", list(answers))])


def test_truncated_round_trips_through_json() -> None:
    answers = (Answer("I'd say 3", None, "truncated", truncated=True), Answer("30", 30.0, truncated=False),
               Answer("30", 30.0))
    data = json.loads(json.dumps(record(*answers).to_dict()))
    assert [a["truncated"] for a in data["prompts"][0]["answers"]] == [True, False, None]
    assert ItemRecord.from_dict(data).answers() == list(answers)


def test_answers_of_reports_written_before_truncated_load_as_unknown() -> None:
    data = record(Answer("30", 30.0)).to_dict()
    for answer in data["prompts"][0]["answers"]:
        del answer["truncated"]  # as earlier versions wrote them
    [answer] = ItemRecord.from_dict(json.loads(json.dumps(data))).answers()
    assert answer == Answer("30", 30.0) and answer.truncated is None


def test_report_checks_know_every_field_of_a_record() -> None:
    """A report is read back with closed field lists; a field added to a record must be added
    there too, or every report written since is refused as a baseline."""
    from dataclasses import fields

    from pytest_optbench import records

    assert set(records._ITEM_FIELDS) == {f.name for f in fields(records.ItemRecord)}
    assert set(records._ANSWER_FIELDS) == {f.name for f in fields(records.Answer)}
    assert set(records._PROMPT_FIELDS) == {f.name for f in fields(records.PromptRecord)}
