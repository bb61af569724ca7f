"""Unit tests for pytest_optbench.suites (suite format v1, spec/suite-format.md section 1)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_optbench.suite.load import (
    BASE_CONDITION,
    KIND_FIELDS,
    Condition,
    Suite,
    SuiteError,
    load_suite,
    parse_suite,
)

DISPLAY = "suites/my-suite.yaml"


def _write(tmp_path: Path, text: str, name: str = "my-suite.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def _load(tmp_path: Path, text: str, name: str = "my-suite.yaml") -> Suite | None:
    return load_suite(_write(tmp_path, text, name), display=DISPLAY)


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(SuiteError) as info:
        _load(tmp_path, text)
    message = str(info.value)
    # The contract for every format error: one sentence, on one line, naming the file.
    assert "\n" not in message and "\r" not in message
    assert message.endswith(".")
    assert message.startswith(DISPLAY)
    assert "Traceback" not in message
    assert info.value.__cause__ is None
    return message


# --------------------------------------------------------------------------- valid suites

SPEC_EXAMPLE = """
optbench: 1
suite: track-b-probability
kind: inverted_pair
track: B
language: en
description: Naturalistic scenarios without stated base rates.
defaults:
  samples: 5
  temperature: 0.7
prompt:
  system: You estimate probabilities. Reply with one integer from 0 to 100.
  template: "{scenario}\\n\\n{question}"
conditions:
  base: {}
  narrative_up:   {scenario: "{scenario} {narrative_up}"}
  narrative_down: {scenario: "{scenario} {narrative_down}"}
  debiased:       {system_prefix: "Language models often overstate good outcomes. Correct for this."}
items:
  - id: academic-01
    domain: academic
    scenario: A graduate student has prepared for a professional certification exam for three months.
    positive: What is the probability that the student passes the exam?
    negative: What is the probability that the student does not pass the exam?
    narrative_up: The student scored well on every practice test.
    narrative_down: The student failed the same exam last year.
"""


def test_the_spec_example_loads(tmp_path: Path) -> None:
    suite = _load(tmp_path, SPEC_EXAMPLE)
    assert suite is not None
    assert suite.id == "track-b-probability"
    assert suite.path == DISPLAY
    assert (suite.kind, suite.track, suite.language) == ("inverted_pair", "B", "en")
    assert suite.description.startswith("Naturalistic")
    assert (suite.samples, suite.temperature) == (5, 0.7)
    assert suite.system_prompt.startswith("You estimate probabilities.")
    assert suite.template == "{scenario}\n\n{question}"
    assert [c.name for c in suite.conditions] == ["base", "narrative_up", "narrative_down", "debiased"]
    assert suite.conditions[0] == BASE_CONDITION
    assert suite.conditions[1].transforms == {"scenario": "{scenario} {narrative_up}"}
    assert suite.conditions[3].system_prefix.startswith("Language models")
    assert suite.conditions[3].transforms == {}
    assert suite.has_explicit_conditions
    (item,) = suite.items
    assert item.id == "academic-01" and item.kind == "inverted_pair" and item.domain == "academic"
    assert item.line == 19  # the line of "- id: academic-01"
    assert item.fields["positive"].startswith("What is the probability that the student passes")
    assert "id" not in item.fields and "domain" not in item.fields


MINIMAL_PAIR = """
optbench: 1
items:
  - id: a1
    scenario: S
    positive: P?
    negative: N?
"""


def test_defaults_of_a_minimal_suite(tmp_path: Path) -> None:
    suite = _load(tmp_path, MINIMAL_PAIR, name="stem-is-the-id.yaml")
    assert suite is not None
    assert suite.id == "stem-is-the-id"
    assert suite.kind == "inverted_pair"
    assert suite.track == "B"
    assert suite.language == "en"
    assert suite.description == ""
    assert suite.conditions == (BASE_CONDITION,) == (Condition("base"),)
    assert not suite.has_explicit_conditions
    assert suite.samples is suite.temperature is suite.system_prompt is suite.template is None
    assert suite.items[0].samples is None and suite.items[0].temperature is None


def test_default_id_is_taken_from_the_path_not_the_display_name(tmp_path: Path) -> None:
    path = _write(tmp_path, MINIMAL_PAIR, name="from-path.yml")
    suite = load_suite(path, display="anything/else.yaml")
    assert suite is not None and suite.id == "from-path" and suite.path == "anything/else.yaml"
    assert load_suite(path).path == str(path)  # display defaults to the path


VALID_ITEMS = {
    "inverted_pair": {"scenario": "S", "positive": "Good?", "negative": "Bad?"},
    "binary": {"question": "Is it?", "outcome": True, "context": "Some context."},
    "conjunction": {"scenario": "S", "a": "A?", "b": "B?", "both": "A and B?"},
    "disjunction": {"scenario": "S", "a": "A?", "b": "B?", "either": "A or B?"},
    "conditional": {"scenario": "S", "a": "A?", "b_given_a": "B given A?", "both": "A and B?"},
    "dose_response": {"scenario": "S", "question": "Q?", "direction": "decreasing",
                      "ladder": ["weak", "medium", "strong"]},
}


def _yaml_item(item_id: str, fields: dict, indent: str = "    ") -> str:
    lines = [f"  - id: {item_id}"]
    for key, value in fields.items():
        if isinstance(value, list):
            lines.append(f"{indent}{key}: [{', '.join(value)}]")
        elif isinstance(value, bool):
            lines.append(f"{indent}{key}: {'true' if value else 'false'}")
        else:
            lines.append(f"{indent}{key}: {value}")
    return "\n".join(lines) + "\n"


def _suite_text(kind: str, fields: dict | None = None, header: str = "", item_id: str = "it-1") -> str:
    fields = VALID_ITEMS[kind] if fields is None else fields
    return f"optbench: 1\nkind: {kind}\n{header}items:\n" + _yaml_item(item_id, fields)


@pytest.mark.parametrize("kind", sorted(KIND_FIELDS))
def test_a_valid_suite_of_each_kind_loads(tmp_path: Path, kind: str) -> None:
    suite = _load(tmp_path, _suite_text(kind))
    assert suite is not None
    assert suite.kind == kind
    assert suite.track == ("B" if kind == "inverted_pair" else None)
    (item,) = suite.items
    assert item.id == "it-1" and item.kind == kind and item.line == 4
    required, _optional = KIND_FIELDS[kind]
    for key in required:
        assert key in item.fields
    if kind == "binary":
        assert item.fields["outcome"] is True
        assert item.fields["context"] == "Some context."
    if kind == "dose_response":
        assert item.fields["ladder"] == ("weak", "medium", "strong")
        assert item.fields["direction"] == "decreasing"


def test_items_may_mix_kinds_and_set_their_own_settings(tmp_path: Path) -> None:
    suite = _load(tmp_path, """
        optbench: 1
        track: A
        defaults: {samples: 3}
        items:
          - id: pair
            scenario: The base rate is 30%.
            positive: P?
            negative: N?
            expected: 30
            samples: 7
            temperature: 0
          - id: 42
            kind: binary
            domain: trivia
            question: Is water wet?
            outcome: false
    """)
    assert suite is not None
    pair, binary = suite.items
    assert (pair.samples, pair.temperature, pair.fields["expected"]) == (7, 0.0, 30)
    assert "samples" not in pair.fields and "temperature" not in pair.fields
    assert binary.id == "42" and binary.kind == "binary" and binary.domain == "trivia"
    assert binary.fields["outcome"] is False
    assert suite.samples == 3 and suite.track == "A"


@pytest.mark.parametrize("track", ["A", "B", "C", "D"])
def test_every_track_is_accepted(tmp_path: Path, track: str) -> None:
    fields = {**VALID_ITEMS["inverted_pair"], "expected": 40}
    suite = _load(tmp_path, _suite_text("inverted_pair", fields, header=f"track: {track}\n"))
    assert suite is not None and suite.track == track


@pytest.mark.parametrize("language", ["en", "pt-BR", "zh-Hant-TW", "ar"])
def test_bcp47_languages(tmp_path: Path, language: str) -> None:
    suite = _load(tmp_path, "language: " + language + "\n" + MINIMAL_PAIR.lstrip("\n"))
    assert suite is not None and suite.language == language


@pytest.mark.parametrize("expected", [0, 100, 37.5])
def test_expected_bounds_are_inclusive(tmp_path: Path, expected: float) -> None:
    fields = {**VALID_ITEMS["inverted_pair"], "expected": expected}
    suite = _load(tmp_path, _suite_text("inverted_pair", fields, header="track: A\n"))
    assert suite is not None and suite.items[0].fields["expected"] == expected


def test_template_may_use_builtins_and_item_fields(tmp_path: Path) -> None:
    suite = _load(tmp_path, """
        optbench: 1
        prompt:
          template: "[{id}/{domain}] {scenario} {extra}\\n\\n{question}"
        items:
          - id: a
            scenario: S
            positive: P?
            negative: N?
            extra: More text.
    """)
    assert suite is not None and suite.template.startswith("[{id}/{domain}]")


# --------------------------------------------------------------------------- not a suite


@pytest.mark.parametrize(
    "text",
    [
        "",
        "# only a comment\n",
        "- a\n- b\n",
        "name: some other tool's config\nitems: [1, 2]\n",
        "optbench: 1\ngates:\n  - metric: skew\n    max_abs: 5\n",  # a thresholds file
    ],
    ids=["empty", "comment", "list", "no-optbench", "thresholds"],
)
def test_documents_that_are_not_suites_return_none(tmp_path: Path, text: str) -> None:
    assert _load(tmp_path, text) is None


def test_optbench_with_gates_and_items_is_still_a_suite(tmp_path: Path) -> None:
    message = _error(tmp_path, "optbench: 1\ngates: []\n" + MINIMAL_PAIR.split("\n", 2)[2])
    assert "key 'gates'" in message


def test_not_utf8_is_a_suite_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("optbench: 1\nitems: caf\xe9\n".encode("latin-1"))
    with pytest.raises(SuiteError, match=r"^suites/x\.yaml: not UTF-8 text .*\.$"):
        load_suite(path, display="suites/x.yaml")


# --------------------------------------------------------------------------- format errors

PAIR_ITEM = "items:\n  - id: it-1\n    scenario: S\n    positive: P?\n    negative: N?\n"

# (id, text, fragments the message must contain). The file (display) is checked by _error.
ERRORS = [
    ("malformed-yaml", "optbench: 1\nitems:\n  - id: x\n    scenario: [unclosed\n",
     ["line 5", "malformed YAML"]),
    ("malformed-yaml-tab", "optbench: 1\nitems:\n\t- id: x\n", ["line 3", "malformed YAML"]),
    ("duplicate-top-key", "optbench: 1\nkind: binary\nkind: binary\n" + PAIR_ITEM,
     ["line 3", "duplicate key 'kind'"]),
    ("duplicate-item-key", "optbench: 1\nitems:\n  - id: a\n    id: b\n    scenario: S\n",
     ["line 4", "duplicate key 'id'"]),
    ("wrong-version", "optbench: 2\n" + PAIR_ITEM, ["key 'optbench'", "2"]),
    ("version-true", "optbench: true\n" + PAIR_ITEM, ["key 'optbench'", "True"]),
    ("version-string", "optbench: '1'\n" + PAIR_ITEM, ["key 'optbench'"]),
    ("unknown-top-level", "optbench: 1\ncolour: red\n" + PAIR_ITEM, ["key 'colour'", "unknown top-level key"]),
    ("bad-kind", "optbench: 1\nkind: pair\n" + PAIR_ITEM, ["key 'kind'", "'pair'", "inverted_pair"]),
    ("bad-item-kind", "optbench: 1\n" + PAIR_ITEM + "    kind: pairs\n",
     ["item 'it-1'", "key 'kind'", "'pairs'"]),
    ("track-on-non-pair", ("optbench: 1\nkind: binary\ntrack: A\n"
     "items:\n  - id: b\n    question: Q?\n    outcome: true\n"), ["key 'track'", "inverted_pair"]),
    ("bad-track", "optbench: 1\ntrack: E\n" + PAIR_ITEM, ["key 'track'", "'E'"]),
    ("lowercase-track", "optbench: 1\ntrack: b\n" + PAIR_ITEM, ["key 'track'", "'b'"]),
    ("bad-language", "optbench: 1\nlanguage: english language\n" + PAIR_ITEM,
     ["key 'language'", "'english language'"]),
    ("language-not-string", "optbench: 1\nlanguage: 7\n" + PAIR_ITEM, ["key 'language'"]),
    ("bad-suite-id", "optbench: 1\nsuite: my::suite\n" + PAIR_ITEM, ["key 'suite'", "'my::suite'"]),
    ("suite-id-with-slash", "optbench: 1\nsuite: a/b\n" + PAIR_ITEM, ["key 'suite'", "'a/b'"]),
    ("suite-id-not-string", "optbench: 1\nsuite: [a]\n" + PAIR_ITEM, ["key 'suite'"]),
    ("description-not-string", "optbench: 1\ndescription: [a]\n" + PAIR_ITEM, ["key 'description'"]),
    ("defaults-samples-0", "optbench: 1\ndefaults:\n  samples: 0\n" + PAIR_ITEM,
     ["key 'defaults.samples'", "got 0"]),
    ("defaults-samples-float", "optbench: 1\ndefaults:\n  samples: 2.5\n" + PAIR_ITEM,
     ["key 'defaults.samples'", "2.5"]),
    ("defaults-samples-bool", "optbench: 1\ndefaults:\n  samples: true\n" + PAIR_ITEM,
     ["key 'defaults.samples'"]),
    ("defaults-temperature-3", "optbench: 1\ndefaults:\n  temperature: 3\n" + PAIR_ITEM,
     ["key 'defaults.temperature'", "got 3"]),
    ("defaults-temperature-negative", "optbench: 1\ndefaults:\n  temperature: -0.1\n" + PAIR_ITEM,
     ["key 'defaults.temperature'"]),
    ("defaults-unknown", "optbench: 1\ndefaults:\n  seed: 3\n" + PAIR_ITEM, ["key 'seed'", "defaults"]),
    ("defaults-not-mapping", "optbench: 1\ndefaults: 5\n" + PAIR_ITEM, ["key 'defaults'"]),
    ("prompt-unknown", "optbench: 1\nprompt:\n  user: hi\n" + PAIR_ITEM, ["key 'user'", "prompt"]),
    ("prompt-system-empty", "optbench: 1\nprompt:\n  system: ''\n" + PAIR_ITEM, ["key 'prompt.system'"]),
    ("items-missing", "optbench: 1\n", ["key 'items'"]),
    ("items-empty", "optbench: 1\nitems: []\n", ["key 'items'"]),
    ("items-not-list", "optbench: 1\nitems: {id: a}\n", ["key 'items'"]),
    ("item-not-mapping", "optbench: 1\n" + PAIR_ITEM + "  - just text\n", ["item '#2'", "'items'", "mapping"]),
    ("missing-id", "optbench: 1\nitems:\n  - scenario: S\n    positive: P?\n    negative: N?\n",
     ["item '#1' (line 3)", "key 'id'", "required"]),
    ("bad-id", "optbench: 1\nitems:\n  - id: a/b\n    scenario: S\n    positive: P?\n    negative: N?\n",
     ["item 'a/b' (line 3)", "key 'id'", "test id"]),
    ("id-with-brackets", "optbench: 1\nitems:\n  - id: 'x[1]'\n    scenario: S\n    positive: P?\n    negative: N?\n",
     ["item 'x[1]' (line 3)", "key 'id'"]),
    ("id-bool", "optbench: 1\nitems:\n  - id: true\n    scenario: S\n    positive: P?\n    negative: N?\n",
     ["item '#1' (line 3)", "key 'id'"]),
    ("duplicate-id", "optbench: 1\n" + PAIR_ITEM + PAIR_ITEM.split("\n", 1)[1],
     ["item 'it-1' (line 7)", "key 'id'", "duplicate", "line 3"]),
    ("duplicate-id-int-and-str", ("optbench: 1\nitems:\n  - id: 7\n    scenario: S\n    positive: P\n    negative: N\n"
     "  - id: '7'\n    scenario: S\n    positive: P\n    negative: N\n"), ["item '7' (line 7)", "key 'id'", "duplicate"]),
    ("empty-field", "optbench: 1\n" + PAIR_ITEM.replace("positive: P?", "positive: '  '"),
     ["item 'it-1'", "key 'positive'", "non-empty"]),
    ("list-field", "optbench: 1\n" + PAIR_ITEM.replace("positive: P?", "positive: [a, b]"),
     ["item 'it-1'", "key 'positive'"]),
    ("null-required-field", "optbench: 1\n" + PAIR_ITEM.replace("positive: P?", "positive:"),
     ["item 'it-1'", "key 'positive'", "required"]),
    ("item-samples", "optbench: 1\n" + PAIR_ITEM + "    samples: 1001\n", ["item 'it-1'", "key 'samples'", "1001"]),
    ("item-temperature", "optbench: 1\n" + PAIR_ITEM + "    temperature: hot\n",
     ["item 'it-1'", "key 'temperature'", "'hot'"]),
    ("item-domain-empty", "optbench: 1\n" + PAIR_ITEM + "    domain: ''\n", ["item 'it-1'", "key 'domain'"]),
    ("binary-outcome-not-bool", "optbench: 1\nkind: binary\nitems:\n  - id: b\n    question: Q?\n    outcome: 'yes please'\n",
     ["item 'b' (line 4)", "key 'outcome'", "true or false", "'yes please'"]),
    ("binary-outcome-int", "optbench: 1\nkind: binary\nitems:\n  - id: b\n    question: Q?\n    outcome: 1\n",
     ["item 'b'", "key 'outcome'"]),
    ("dose-direction", ("optbench: 1\nkind: dose_response\nitems:\n  - id: d\n    scenario: S\n    question: Q?\n"
     "    direction: up\n    ladder: [a, b, c]\n"), ["item 'd'", "key 'direction'", "'up'"]),
    ("ladder-two-rungs", ("optbench: 1\nkind: dose_response\nitems:\n  - id: d\n    scenario: S\n    question: Q?\n"
     "    direction: increasing\n    ladder: [a, b]\n"), ["item 'd'", "key 'ladder'", "3"]),
    ("ladder-not-list", ("optbench: 1\nkind: dose_response\nitems:\n  - id: d\n    scenario: S\n    question: Q?\n"
     "    direction: increasing\n    ladder: a b c\n"), ["item 'd'", "key 'ladder'"]),
    ("ladder-empty-rung", ("optbench: 1\nkind: dose_response\nitems:\n  - id: d\n    scenario: S\n    question: Q?\n"
     "    direction: increasing\n    ladder: [a, '', c]\n"), ["item 'd'", "key 'ladder'", "rung 2"]),
    ("track-a-without-expected", "optbench: 1\ntrack: A\n" + PAIR_ITEM, ["item 'it-1'", "key 'expected'", "Track A"]),
    ("expected-out-of-range", "optbench: 1\n" + PAIR_ITEM + "    expected: 120\n",
     ["item 'it-1'", "key 'expected'", "120"]),
    ("expected-negative", "optbench: 1\ntrack: A\n" + PAIR_ITEM + "    expected: -1\n", ["item 'it-1'", "key 'expected'"]),
    ("expected-nan", "optbench: 1\ntrack: A\n" + PAIR_ITEM + "    expected: .nan\n", ["item 'it-1'", "key 'expected'"]),
    ("expected-string", "optbench: 1\n" + PAIR_ITEM + "    expected: '30%'\n", ["item 'it-1'", "key 'expected'"]),
    ("expected-on-binary", ("optbench: 1\nkind: binary\nitems:\n  - id: b\n    question: Q?\n    outcome: true\n"
     "    expected: 30\n"), ["item 'b'", "key 'expected'", "inverted_pair"]),
    ("condition-missing-field",
     "optbench: 1\nconditions:\n  base: {}\n  narrative_up: {scenario: '{scenario} {narrative_up}'}\n" + PAIR_ITEM,
     ["item 'it-1'", "key 'conditions.narrative_up.scenario'", "condition 'narrative_up'", "'narrative_up'",
      "has no field"]),
    ("condition-sets-foreign-field", "optbench: 1\nconditions:\n  up: {question: 'x'}\n" + PAIR_ITEM,
     ["item 'it-1'", "key 'conditions.up.question'", "condition 'up'", "'question'"]),
    ("condition-not-mapping", "optbench: 1\nconditions:\n  up: just text\n" + PAIR_ITEM,
     ["key 'conditions.up'", "mapping"]),
    ("conditions-not-mapping", "optbench: 1\nconditions: [base]\n" + PAIR_ITEM, ["key 'conditions'"]),
    ("conditions-empty", "optbench: 1\nconditions: {}\n" + PAIR_ITEM, ["key 'conditions'"]),
    ("condition-bad-name", "optbench: 1\nconditions:\n  'no[good]': {}\n" + PAIR_ITEM, ["key 'conditions.no[good]'"]),
    ("condition-sets-setting", "optbench: 1\nconditions:\n  hot: {temperature: '2'}\n" + PAIR_ITEM,
     ["key 'conditions.hot.temperature'", "setting"]),
    ("condition-empty-system", "optbench: 1\nconditions:\n  s: {system_prefix: ''}\n" + PAIR_ITEM,
     ["key 'conditions.s.system_prefix'"]),
    ("condition-malformed-template", "optbench: 1\nconditions:\n  s: {scenario: '{scenario'}\n" + PAIR_ITEM,
     ["key 'conditions.s.scenario'", "malformed template"]),
    ("template-unknown-field", "optbench: 1\nprompt:\n  template: '{scenario} {foo}'\n" + PAIR_ITEM,
     ["item 'it-1'", "key 'prompt.template'", "{foo}"]),
    ("template-malformed", "optbench: 1\nprompt:\n  template: '{scenario'\n" + PAIR_ITEM,
     ["key 'prompt.template'", "malformed template"]),
    ("template-positional", "optbench: 1\nprompt:\n  template: '{0} {scenario}'\n" + PAIR_ITEM,
     ["key 'prompt.template'", "{0}"]),
    ("template-attribute", "optbench: 1\nprompt:\n  template: '{scenario.upper}'\n" + PAIR_ITEM,
     ["key 'prompt.template'"]),
    ("prompt-not-mapping", "optbench: 1\nprompt: hello\n" + PAIR_ITEM, ["key 'prompt'"]),
]


@pytest.mark.parametrize(("text", "fragments"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_format_errors_are_one_sentence_naming_file_item_and_key(
    tmp_path: Path, text: str, fragments: list[str]
) -> None:
    message = _error(tmp_path, text)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


def _missing_field_cases() -> list:
    cases = []
    for kind, (required, _optional) in KIND_FIELDS.items():
        for key in required:
            cases.append(pytest.param(kind, key, id=f"{kind}-{key}"))
    return cases


@pytest.mark.parametrize(("kind", "missing"), _missing_field_cases())
def test_each_kind_requires_its_fields(tmp_path: Path, kind: str, missing: str) -> None:
    fields = {k: v for k, v in VALID_ITEMS[kind].items() if k != missing}
    message = _error(tmp_path, _suite_text(kind, fields))
    assert "item 'it-1' (line 4)" in message
    assert f"key '{missing}'" in message
    assert kind in message


def test_the_first_error_wins_and_names_the_right_item(tmp_path: Path) -> None:
    text = "optbench: 1\n" + PAIR_ITEM + "  - id: second\n    scenario: S\n    positive: P?\n"
    message = _error(tmp_path, text)
    assert "item 'second' (line 7)" in message and "key 'negative'" in message


def test_parse_suite_validates_an_already_parsed_mapping() -> None:
    data = {"optbench": 1, "items": [{"id": "x", "scenario": "S", "positive": "P", "negative": "N"}]}
    suite = parse_suite(data, "inline.yaml", default_id="inline")
    assert suite.id == "inline" and suite.items[0].line == 0
    with pytest.raises(SuiteError, match=r"^inline\.yaml, item 'x', key 'negative': "):
        parse_suite({"optbench": 1, "items": [{"id": "x", "scenario": "S", "positive": "P"}]},
                    "inline.yaml", default_id="inline")


# --------------------------------------------------------------------------- regressions


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('optbench: 1\nitems:\n  - id: "it-1\\n"\n    scenario: S\n    positive: P?\n    negative: N?\n', "id"),
        ('optbench: 1\nsuite: "my-suite\\n"\n' + PAIR_ITEM, "suite"),
        ('optbench: 1\nlanguage: "en\\n"\n' + PAIR_ITEM, "language"),
    ],
    ids=["item-id", "suite-id", "language"],
)
def test_trailing_newline_in_ids_is_rejected(tmp_path: Path, text: str, key: str) -> None:
    message = _error(tmp_path, text)
    assert f"key '{key}'" in message


def test_condition_cannot_replace_a_ladder_with_text(tmp_path: Path) -> None:
    text = _suite_text("dose_response", header="conditions:\n  strong: {ladder: '{scenario} indeed'}\n")
    message = _error(tmp_path, text)
    assert "key 'conditions.strong.ladder'" in message


def test_template_field_nested_in_a_format_spec_is_checked(tmp_path: Path) -> None:
    message = _error(tmp_path, "optbench: 1\nprompt:\n  template: '{scenario:{width}}'\n" + PAIR_ITEM)
    assert "key 'prompt.template'" in message


@pytest.mark.parametrize("text", ["optbench: 1\n? [a, b]\n: 1\n", "optbench: 1\n{a: 1}: x\n"],
                         ids=["sequence-key", "mapping-key"])
def test_unhashable_yaml_key_is_a_suite_error(tmp_path: Path, text: str) -> None:
    message = _error(tmp_path, text)
    assert "line 2" in message and "malformed YAML" in message
