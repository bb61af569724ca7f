"""Hostile and careless YAML: every file ends as a suite or as one short sentence naming the
file, within bounded time and memory (issue 15, bugs 1-5 and the YAML details)."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest
import yaml
from _limits import run_limited

from pytest_optbench.scoring.gates.spec import ThresholdsError, load_thresholds
from pytest_optbench.session.collect import looks_like_suite
from pytest_optbench.suite.load import SuiteError, load_suite, template_fields
from pytest_optbench.text.yaml_input import YamlError, read_yaml

ITEM = {
    "id": "plan-01",
    "scenario": "A team has planned a product launch for months.",
    "positive": "What is the probability that the launch succeeds?",
    "negative": "What is the probability that the launch does not succeed?",
}


def suite_text(**extra: object) -> str:
    return yaml.safe_dump({"optbench": 1, "suite": "demo", "items": [ITEM], **extra}, sort_keys=False)


def write(tmp_path: Path, text: str | bytes, name: str = "suite.yaml") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path) -> str:
    with pytest.raises(SuiteError) as info:
        load_suite(path, "suites/x.yaml")
    message = str(info.value)
    assert message.startswith("suites/x.yaml")
    assert "\n" not in message and message.endswith(".")
    return message


def laughs(levels: int) -> str:
    """A 'billion laughs' document: each level is nine aliases of the one before."""
    parts = ['&l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    parts += [f"&l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "optbench: [" + ", ".join(parts) + "]\nitems: []\n"


# --------------------------------------------------------------------------- bug 1: alias bombs


def test_small_alias_bomb_is_one_short_sentence(tmp_path):
    message = error_of(write(tmp_path, laughs(6)))  # 9^6 "lol"s: a 3 MB error line before
    assert len(message) < 300
    assert "aliases expand to" in message


def test_billion_laughs_ends_in_a_sentence_under_a_memory_limit(tmp_path):
    path = write(tmp_path, laughs(9))
    assert len(path.read_bytes()) < 700  # the 639-byte case of the issue: 3 GB and MemoryError
    status, message, stderr = run_limited(f"""
        import json
        from pathlib import Path
        from pytest_optbench.suite.load import SuiteError, load_suite
        try:
            load_suite(Path({str(path)!r}), "bomb.yaml")
        except SuiteError as exc:
            print(json.dumps(str(exc)))
    """, cpu_seconds=20, memory_mb=1000)
    assert status == 0, stderr
    assert message.startswith("bomb.yaml: malformed YAML (its aliases expand to")
    assert len(message) < 300


def test_an_alias_inside_itself_is_refused(tmp_path):
    assert "an alias refers to a node that contains it" in error_of(write(tmp_path, "optbench: &a [1, *a]\n"))


def test_modest_aliases_still_work(tmp_path):
    text = suite_text().replace("optbench: 1", "optbench: &v 1") + "description: &d plain text\n"
    suite = load_suite(write(tmp_path, text))
    assert suite is not None and suite.description == "plain text"


# --------------------------------------------------------------------------- bug 2: depth


@pytest.mark.parametrize("depth", [300, 998])
@pytest.mark.parametrize("shape", ["list", "mapping"])
def test_deep_nesting_is_one_sentence(tmp_path, depth, shape):
    value = "[" * depth + "]" * depth if shape == "list" else "{a: " * depth + "1" + "}" * depth
    message = error_of(write(tmp_path, f"optbench: 1\nitems: {value}\n"))
    assert "nested more than 50 levels deep" in message


def test_nesting_beyond_libyaml_limit_is_one_sentence(tmp_path):
    message = error_of(write(tmp_path, "optbench: 1\nitems: " + "[" * 100_000 + "]" * 100_000 + "\n"))
    assert "malformed YAML" in message


# --------------------------------------------------------------------------- bug 3: huge numbers


def test_integer_of_5000_digits_in_a_suite(tmp_path):
    message = error_of(write(tmp_path, suite_text(defaults={"samples": 1}).replace("samples: 1", "samples: " + "9" * 5000)))
    assert "a number of 5,000 digits is out of range" in message
    assert len(message) < 300


def test_integer_of_5000_digits_in_thresholds(tmp_path):
    path = write(tmp_path, "optbench: 1\ngates:\n  - metric: skew\n    max: " + "9" * 5000 + "\n", "thresholds.yaml")
    with pytest.raises(ThresholdsError, match="a number of 5,000 digits is out of range"):
        load_thresholds(path, "thresholds.yaml")


def test_integer_beyond_float_range_in_thresholds(tmp_path):
    path = write(tmp_path, "optbench: 1\ngates:\n  - metric: skew\n    max: " + "9" * 400 + "\n", "thresholds.yaml")
    with pytest.raises(ThresholdsError) as info:
        load_thresholds(path, "thresholds.yaml")
    assert "gate 1 (line 3), key 'max': must be a finite number" in str(info.value)
    assert len(str(info.value)) < 300


def test_hex_integer_too_long_to_print_is_still_named(tmp_path):
    message = error_of(write(tmp_path, suite_text().replace("optbench: 1", "optbench: 0x" + "f" * 990)))
    assert "unsupported format version" in message and len(message) < 1200


def test_impossible_date_is_one_sentence(tmp_path):
    message = error_of(write(tmp_path, suite_text(description="x").replace("description: x", "description: 2024-13-45")))
    assert "cannot read this value (month must be in 1..12)" in message


def test_huge_string_value_gives_a_short_error(tmp_path):
    message = error_of(write(tmp_path, suite_text(kind="k" * 200_000)))
    assert "unknown kind" in message and len(message) < 1500


# --------------------------------------------------------------------------- bug 4: key order and encodings


def test_safe_dump_suite_with_optbench_after_64_kib_is_collected(tmp_path):
    items = [dict(ITEM, id=f"plan-{i:04d}", scenario=ITEM["scenario"] + " " + "x" * 200) for i in range(400)]
    path = write(tmp_path, yaml.safe_dump({"optbench": 1, "suite": "sorted", "items": items}))  # sorted keys
    assert path.read_text().index("optbench:") > 65536
    assert looks_like_suite(path)
    assert len(load_suite(path).items) == 400


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig"])
def test_suite_in_any_yaml_encoding_is_collected_and_read(tmp_path, codec):
    path = write(tmp_path, suite_text().encode(codec))
    assert looks_like_suite(path)
    assert load_suite(path).id == "demo"


def test_unrelated_yaml_is_still_not_collected(tmp_path):
    assert not looks_like_suite(write(tmp_path, "name: build\nsteps: [a, b]\n" * 50_000, "ci.yaml"))
    assert not looks_like_suite(write(tmp_path, "name: x\n".encode("utf-16"), "other.yaml"))


def test_invalid_utf16_is_one_sentence(tmp_path):
    message = error_of(write(tmp_path, codecs.BOM_UTF16_LE + "optbench: 1\n".encode("utf-16-le") + b"\x00\xd8"))
    assert "not UTF-16 text" in message


# --------------------------------------------------------------------------- bug 5: format specs


def test_format_spec_that_renders_gigabytes_is_refused(tmp_path):
    text = suite_text(prompt={"template": "{scenario!r:x>300000000}\n\n{question}"})
    message = error_of(write(tmp_path, text))
    assert "key 'prompt.template': malformed template (placeholder {scenario} has the format spec" in message


def test_format_spec_in_a_condition_is_refused(tmp_path):
    message = error_of(write(tmp_path, suite_text(conditions={"wide": {"scenario": "{scenario:>99999}"}})))
    assert "key 'conditions.wide.scenario': malformed template" in message


def test_short_format_specs_are_still_allowed():
    assert template_fields("{scenario:>20} {question!s:.50} {id:*^9}") == ["scenario", "question", "id"]


# --------------------------------------------------------------------------- merge keys, lists, ids


def test_merge_key_with_an_override_is_accepted(tmp_path):
    text = """
optbench: 1
suite: merged
items:
  - &first
    id: plan-01
    scenario: A team has planned a launch.
    positive: What is the probability that it succeeds?
    negative: What is the probability that it does not succeed?
  - <<: *first
    id: plan-02
    scenario: A second team has planned a launch.
"""
    suite = load_suite(write(tmp_path, text))
    assert [i.id for i in suite.items] == ["plan-01", "plan-02"]
    assert suite.items[1].fields["scenario"] == "A second team has planned a launch."
    assert suite.items[1].fields["positive"] == "What is the probability that it succeeds?"


def test_explicit_duplicate_keys_are_still_refused(tmp_path):
    assert "duplicate key 'suite'" in error_of(write(tmp_path, "optbench: 1\nsuite: a\nsuite: b\nitems: []\n"))


def test_top_level_list_holding_a_suite_is_an_error(tmp_path):
    text = "- " + suite_text().replace("\n", "\n  ").rstrip() + "\n"
    message = error_of(write(tmp_path, text))
    assert "the suite is inside a list" in message


@pytest.mark.parametrize("bad_id", ["esc\x1bMx", "\x1b7save", "x\u202eevil", "bell\x07"])
def test_control_characters_in_ids_are_refused(tmp_path, bad_id):
    message = error_of(write(tmp_path, suite_text().replace("plan-01", json.dumps(bad_id))))
    assert "key 'id'" in message
    assert "\x1b" not in message and "\u202e" not in message


def test_unreadable_yaml_is_one_sentence(tmp_path):
    with pytest.raises(YamlError, match=r"^dir.yaml: cannot read the file \(Is a directory\)\.$"):
        read_yaml(tmp_path, "dir.yaml")
