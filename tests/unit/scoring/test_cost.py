"""scoring/cost.py: the prices a user supplies, and what answers cost at them."""

from __future__ import annotations

import math

import pytest

from pytest_optbench.records.item import Answer, ItemRecord, PromptRecord
from pytest_optbench.scoring.cost import (
    Price,
    Prices,
    PricesError,
    cost_line,
    cost_per_answer,
    money,
    parse_prices,
    prices_of_report,
    read_prices,
    run_cost,
)

PRICES = Prices("prices.yaml", "USD", 1_000_000, (
    ("openai:gpt-4.1-mini*", Price(0.40, 1.60)),
    ("claude-*", Price(3.0, 15.0, batch=0.5)),
))


def record(model: str, *answers: Answer, item: str = "i1") -> ItemRecord:
    return ItemRecord(suite="s", item=item, condition="base", kind="binary", file="s.yaml", model=model,
                      prompts=[PromptRecord("yes", "Q?", list(answers))])


def answer(tokens_in: int = 0, tokens_out: int = 0, **extra: object) -> Answer:
    return Answer(raw="60", value=60.0, input_tokens=tokens_in, output_tokens=tokens_out, **extra)  # type: ignore[arg-type]


def test_a_prices_file_is_read_with_its_defaults(tmp_path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text('prices:\n  "openai:gpt-4.1-mini": {input: 0.4, output: 1.6}\n'
                    '  "anthropic:claude-*": {input: 3, output: 15, batch: 0.5}\n')
    prices = read_prices(path, "prices.yaml")
    assert (prices.currency, prices.per) == ("USD", 1_000_000)
    assert prices.entries == (("openai:gpt-4.1-mini", Price(0.4, 1.6, 0.5)), ("anthropic:claude-*", Price(3, 15, 0.5)))


@pytest.mark.parametrize(("data", "message"), [
    ({"prices": {"m": {"input": 1, "ouput": 2}}},
     "prices.yaml, model 'm', key 'ouput': is not a price key, did you mean 'output'?"),
    ({"prices": {"m": {"input": 1}}}, "prices.yaml, model 'm', key 'output': is required"),
    ({"prices": {"m": {"input": -1, "output": 2}}}, "prices.yaml, model 'm', key 'input': must be at least 0"),
    ({"prices": {"m": {"input": "cheap", "output": 2}}}, "key 'input': must be a number, got 'cheap'"),
    ({"prices": {"m": {"input": 1, "output": 2, "batch": 0}}}, "key 'batch': must be above 0 and at most 1"),
    ({"prices": {"m": [1, 2]}}, "prices.yaml, model 'm': must be a mapping with input and output prices"),
    ({"price": {"m": {"input": 1, "output": 2}}}, "prices.yaml, key 'prices': must be a mapping of model globs"),
    ({"prices": {}, "curency": "EUR"}, ("prices.yaml, key 'curency': is not a key of a prices file, did you mean "
                                       "'currency'?")),
    ({"prices": {}, "per": 0.5}, "prices.yaml, key 'per': must be at least 1"),
    ({"prices": {}, "optbench": 2}, "prices.yaml, key 'optbench': must be 1"),
])
def test_a_bad_prices_file_is_one_sentence_naming_the_model_and_key(data, message) -> None:
    with pytest.raises(PricesError) as info:
        parse_prices(data, "prices.yaml")
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_missing_or_hostile_file_is_one_sentence(tmp_path) -> None:
    with pytest.raises(PricesError, match=r"^nope.yaml: no such prices file\.$"):
        read_prices(tmp_path / "nope.yaml", "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("prices: [unclosed\n")
    with pytest.raises(PricesError, match="bad.yaml"):
        read_prices(bad)


def test_the_first_matching_glob_wins_over_the_served_id_and_the_name_without_provider() -> None:
    assert PRICES.find(["openai:gpt-4.1-mini"])[0] == "openai:gpt-4.1-mini*"  # type: ignore[index]
    assert PRICES.find(["claude-sonnet-4-5-20250929", "anthropic:claude-sonnet"])[0] == "claude-*"  # type: ignore[index]
    assert PRICES.find(["anthropic:claude-x"])[0] == "claude-*"  # type: ignore[index]  # provider part dropped
    assert PRICES.find(["openai:gpt-5"]) is None


def test_a_run_costs_its_fresh_tokens_apart_from_what_the_store_gave_and_batches_cost_half() -> None:
    records = [
        record("openai:gpt-4.1-mini", answer(1_000_000, 500_000, cached=False), answer(cached=False)),
        record("openai:gpt-4.1-mini", answer(2_000_000, 0, cached=True), item="i2"),
        record("anthropic:claude-x", answer(1_000_000, 1_000_000, cached=False, batch="b1"), item="i3"),
        record("openai:gpt-5", answer(10, 10, cached=False), answer(10, 10, cached=False), item="i4"),
    ]
    cost = run_cost(records, PRICES)
    assert math.isclose(cost.input, 0.40 + 1.5) and math.isclose(cost.output, 0.80 + 7.5)
    assert math.isclose(cost.from_store, 0.80)
    assert cost.unpriced == {"openai:gpt-5": 2}
    assert cost.by_model == pytest.approx({"openai:gpt-4.1-mini*": 1.2, "claude-*": 9.0})
    assert cost.to_dict()["paid_this_run"] == pytest.approx(10.2)
    line = cost_line(cost, 1)
    assert line == ("cost at the prices of prices.yaml: USD 10.20 paid in this run (USD 1.90 input + USD 8.30 output); "
                    "the 1 answers read from the store had cost USD 0.8; answers of a model with no price in "
                    "prices.yaml, not counted: openai:gpt-5 (2)")


def test_cost_per_answer_spreads_a_requests_tokens_over_its_samples() -> None:
    # one request, n = 2: the tokens sit on its first sample
    records = [record("openai:gpt-4.1-mini", answer(1000, 20), answer())]
    assert cost_per_answer(records, PRICES) == pytest.approx((1000 * 0.4 + 20 * 1.6) / 1e6 / 2)
    assert cost_per_answer([record("sim:calibrated", answer(), answer())], PRICES) is None  # no tokens
    assert cost_per_answer([record("openai:gpt-5", answer(5, 5))], PRICES) is None  # no price


def test_money_is_short_and_keeps_small_amounts_readable() -> None:
    assert [money(x, "EUR") for x in (0, 0.000412, 0.5, 1234.567)] == ["EUR 0", "EUR 0.000412", "EUR 0.5",
                                                                         "EUR 1,234.57"]


def test_a_reports_prices_are_read_back_and_an_edited_one_gives_none() -> None:
    run = {"usage": {"cost": {"prices": PRICES.to_dict()}}}
    assert prices_of_report(run) == PRICES
    assert prices_of_report({"usage": {}}) is None
    assert prices_of_report({"usage": {"cost": {"prices": {"models": {"m": {"input": "x"}}}}}}) is None
