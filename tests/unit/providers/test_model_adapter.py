"""The model protocol adapter: what the optbench_model fixture may return."""

from __future__ import annotations

import pytest

from pytest_optbench.providers.base import ModelError, Prompt, as_model


def make_prompt(role: str = "positive") -> Prompt:
    return Prompt("System text.", "Will it work?", 0.7, 2, {"role": role, "item": "x-01"})


def test_prompt_is_the_user_text_and_carries_the_rest():
    prompt = make_prompt()
    assert prompt == "Will it work?" and isinstance(prompt, str)
    assert prompt.user == "Will it work?" and str(prompt) == "Will it work?"
    assert prompt.system == "System text." and prompt.sample == 2 and prompt.temperature == 0.7
    assert prompt.messages == [
        {"role": "system", "content": "System text."},
        {"role": "user", "content": "Will it work?"},
    ]
    with pytest.raises(TypeError):
        prompt.meta["role"] = "negative"  # read-only: a model cannot change what is recorded


def test_plain_function_returning_text_or_number():
    assert as_model(lambda p: "About 60%").complete(make_prompt()) == "About 60%"
    assert as_model(lambda p: 61).complete(make_prompt()) == "61"
    assert as_model(lambda p: 0.5).complete(make_prompt()) == "0.5"


def test_async_function_and_async_method():
    async def answer(prompt):
        return "70"

    class Model:
        async def complete(self, prompt):
            return 30

    assert as_model(answer).complete(make_prompt()) == "70"
    assert as_model(Model()).complete(make_prompt()) == "30"


def test_object_method_fallbacks_and_name():
    class Predictor:
        name = "my-predictor"

        def predict(self, prompt):
            return "42"

    model = as_model(Predictor())
    assert model.complete(make_prompt()) == "42"
    assert model.name == "my-predictor"


def test_mapping_answers_become_json_text():
    assert as_model(lambda p: {"probability": 65}).complete(make_prompt()) == '{"probability": 65}'


def test_unusable_fixture_values_are_clear_errors():
    with pytest.raises(TypeError, match="must return a callable taking a Prompt"):
        as_model(42)
    with pytest.raises(ModelError, match="returned NoneType, expected text or a number"):
        as_model(lambda p: None).complete(make_prompt())
