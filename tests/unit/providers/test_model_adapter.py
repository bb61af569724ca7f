"""The model protocol adapter: what the optbench_model fixture may return."""

from __future__ import annotations

import pytest

from pytest_optbench.providers.base import ModelError, Prompt, as_model, declare_model, fingerprint


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


# --------------------------------------------------------------------------- name and version


def test_a_function_is_named_without_the_fixture_scope_it_was_defined_in():
    def optbench_model():
        def acme_pipeline(prompt):
            return "50"
        return acme_pipeline

    model = as_model(optbench_model())
    assert model.name == "acme_pipeline" and model.version == ""  # not "optbench_model.<locals>.acme_pipeline"

    class Pipeline:
        def complete(self, prompt):
            return "50"

    assert as_model(Pipeline()).name == "Pipeline"
    assert as_model(Pipeline().complete).name == "Pipeline.complete"


def test_declare_model_sets_the_name_and_version_a_baseline_checks():
    system = "You are Acme's careful assistant."

    @declare_model(name="acme-pipeline", version=fingerprint(system))
    def acme_pipeline(prompt):
        return "50"

    model = as_model(acme_pipeline)
    assert model.name == "acme-pipeline" and model.version == fingerprint(system)
    assert acme_pipeline(make_prompt()) == "50"  # still the function it was


def test_a_fingerprint_is_short_stable_and_changes_with_any_part():
    first = fingerprint("system prompt", "template")
    assert first == fingerprint("system prompt", "template") and first.startswith("sha256:") and len(first) == 23
    assert len({first, fingerprint("system prompt!", "template"), fingerprint("system prompt", "template", "t=0"),
                fingerprint("system prompttemplate")}) == 4  # parts are kept apart


def test_an_object_declares_its_version_as_an_attribute_and_bad_ones_are_ignored():
    class Release:
        name = "acme"
        version = 3

        def complete(self, prompt):
            return "50"

    assert as_model(Release()).version == "3"
    for odd in (None, True, ["v1"], object()):
        target = Release()
        target.version = odd
        assert as_model(target).version == ""
    hostile = Release()
    hostile.name, hostile.version = "acme\x1b[31m" + "x" * 500, "v\n2"
    model = as_model(hostile)
    assert "\x1b" not in model.name and len(model.name) < 260 and "\n" not in model.version  # escaped, bounded


def test_the_public_names_are_exported():
    import pytest_optbench

    assert pytest_optbench.declare_model is declare_model and pytest_optbench.fingerprint is fingerprint
