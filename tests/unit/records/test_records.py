"""Records in JSON: what a report holds, and reports written by earlier versions."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from pytest_optbench.records.item import Answer, ItemRecord, PromptRecord, prompt_means, prompt_sds


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

    from pytest_optbench.records import item as records
    from pytest_optbench.report import reading

    assert set(reading._ITEM_FIELDS) == {f.name for f in fields(records.ItemRecord)}
    assert set(reading._ANSWER_FIELDS) == {f.name for f in fields(records.Answer)}
    assert set(reading._PROMPT_FIELDS) == {f.name for f in fields(records.PromptRecord)}


_VALUE = st.one_of(st.none(), st.just(50.0), st.integers(0, 100), st.floats(0, 100, allow_nan=False))


@given(st.lists(st.lists(_VALUE, max_size=12), max_size=30), st.booleans())
def test_prompt_means_and_sds_are_each_prompts_own_to_the_last_bit(samples, keep_fifty) -> None:
    # One numpy call per number of values must give what each prompt alone gives: the mean of
    # PromptRecord.mean and np.std of its values, bit for bit, NaN where there are too few.
    prompts = [PromptRecord("r", "u", [Answer(None if v is None else str(v), v) for v in values]) for values in samples]
    want_means = np.array([p.mean(keep_fifty) for p in prompts], dtype=float)
    want_sds = np.array([float(np.std(v, ddof=1)) if len(v := p.values()) >= 2 else np.nan for p in prompts], dtype=float)
    assert np.array_equal(prompt_means(prompts, keep_fifty), want_means, equal_nan=True)
    assert np.array_equal(prompt_sds(prompts), want_sds, equal_nan=True)


def test_first_error_names_the_refusal_not_the_prompts_left_unasked_after_it() -> None:
    """Which prompt's request is refused first is a race; the failure line names the cause."""
    from pytest_optbench.records.item import NOT_ASKED

    refusal = "openai: HTTP 401: Incorrect API key provided"
    answers = [Answer(None, error=NOT_ASKED + refusal)] * 2 + [Answer(None, error=refusal), Answer("30", 30.0)]
    assert record(*answers).first_error == refusal
    assert record(Answer(None, error=NOT_ASKED + refusal)).first_error == NOT_ASKED + refusal
    assert record(Answer("30", 30.0)).first_error is None


@given(st.lists(st.floats(min_value=0, max_value=100, allow_nan=False), min_size=1, max_size=12))
def test_mean_of_a_few_samples_is_numpys_to_the_bit(values) -> None:
    """Fewer than 8 samples are averaged without numpy (a serial audit takes ~15,000 means):
    numpy adds so few numbers one after another, so the result is its own, bit for bit."""
    record = PromptRecord("p", "q", [Answer(str(v), v) for v in values])
    assert record.mean() == float(np.mean(values))
