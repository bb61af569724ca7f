"""Reports under faults and hostile report files: writers that cannot write say so and leave
nothing half-written, text that UTF-8 or a terminal cannot take is repaired or escaped, and a
baseline or compare report that was edited into something else is one sentence (exit 2 for
the ``optbench`` command), never a traceback after the calls were paid for."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from pytest_optbench import cli
from pytest_optbench.records.item import ItemRecord
from pytest_optbench.report.json_report import write_report, write_text
from pytest_optbench.report.markdown import cell, md_table
from pytest_optbench.report.reading import ReportError, load_report, report_records
from pytest_optbench.report.terminal import table
from pytest_optbench.text.display import one_line, printable, shown, well_formed

# --------------------------------------------------------------------------- text.py


def test_printable_escapes_controls_and_bidi_but_keeps_real_text():
    assert printable("a\x1b[2Jb\x07\u202ec") == "a\\x1b[2Jb\\x07\\u202ec"
    kept = "Réponds\u00a0: 50\u202f% \u0928\u094d\u200d\u0937 \u200f\u05e9"
    assert printable(kept) == kept


def test_one_line_joins_every_kind_of_line_break():
    assert one_line("a\r\nb\rc\u2028d\x85e\tf  \n  g") == "a b c d e f g"


def test_well_formed_repairs_surrogates_and_joins_pairs():
    assert well_formed("5 \ud800") == "5 \ufffd"
    assert well_formed("\ud83d\ude00") == "\U0001f600"
    assert well_formed("plain") == "plain"


def test_shown_is_short_whatever_the_value():
    nested: list[object] = []
    for _ in range(200):
        nested = [nested, nested]
    assert len(shown(nested)) <= 120
    assert shown(10 ** 5000).startswith("<an integer of about 5,000 digits")
    assert len(shown("x" * 1_000_000)) < 120
    assert "\n" not in shown("a\nb")


def test_markdown_cell_keeps_a_carriage_return_out_of_the_row():
    lines = md_table(["item", "question"], [["plan-01", "first line\rsecond line\r\nthird"]])
    assert len(lines) == 3 and "\r" not in "".join(lines)
    assert cell("a|b\rc") == "a\\|b c"


def test_terminal_table_escapes_what_a_terminal_would_obey():
    lines = table(["suite", "domain"], [["demo", "\x1b[2Jhealth\rhabits"]])
    assert "\x1b" not in "".join(lines) and "\r" not in "".join(lines)
    assert "\\x1b[2Jhealth habits" in lines[1]


# --------------------------------------------------------------------------- writers


def test_write_text_repairs_a_lone_surrogate(tmp_path):
    path = tmp_path / "report.md"
    write_text(path, "answer 5 \ud800\n")
    assert path.read_text(encoding="utf-8") == "answer 5 \ufffd\n"


def test_write_report_with_a_surrogate_in_an_answer(tmp_path):
    path = tmp_path / "report.json"
    write_report(path, {"items": [{"raw": "5 \ud800"}]})
    assert json.loads(path.read_text(encoding="utf-8")) == {"items": [{"raw": "5 \ufffd"}]}


@pytest.mark.parametrize("where", ["directory", "parent-is-a-file"])
def test_a_report_that_cannot_be_written_raises_and_leaves_nothing_behind(tmp_path, where):
    if where == "directory":
        path = tmp_path / "report.json"
        path.mkdir()
    else:
        (tmp_path / "file").write_text("x")
        path = tmp_path / "file" / "report.json"
    with pytest.raises(OSError):
        write_text(path, "{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == (["report.json"] if where == "directory" else ["file"])


def test_a_failed_write_keeps_the_old_report(tmp_path, monkeypatch):
    path = tmp_path / "report.json"
    path.write_text("the good one")

    def full(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("pytest_optbench.report.json_report.os.replace", full)
    with pytest.raises(OSError, match="No space left"):
        write_text(path, "the new one")
    assert path.read_text() == "the good one"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


# --------------------------------------------------------------------------- hostile report files


def pair(item: str, plus: float, minus: float, model: str = "m") -> dict[str, object]:
    return ItemRecord(
        suite="track-b", item=item, condition="base", kind="inverted_pair", file="s.yaml", model=model,
        prompts=[], track="B", domain="academic",
    ).to_dict() | {"prompts": [
        {"role": "positive", "user": f"{item}+", "answers": [{"raw": str(plus), "value": plus}]},
        {"role": "negative", "user": f"{item}-", "answers": [{"raw": str(minus), "value": minus}]},
    ]}


def report(model: str = "m", shift: float = 0.0) -> dict[str, object]:
    return {
        "format": "pytest-optbench-report", "format_version": 1,
        "run": {"model": model, "keep_fifty": False, "seed": 0, "bootstrap_resamples": 200, "prompt_hash": "abc"},
        "items": [pair(f"i{i}", 60 + i % 7 + shift, 45 - i % 5, model) for i in range(12)],
        "aggregates": [{"suite": "track-b", "condition": "base", "metric": "skew", "domain": None, "value": 5.0,
                        "ci_low": 3.0, "ci_high": 7.0, "n": 12, "p_value": 0.01, "tolerance": None}],
        "gates": [{"metric": "skew", "suite": "track-b", "condition": "base", "verdict": "pass", "value": 5.0,
                   "bound_text": "|x| <= 10"}],
        "languages": {"track_b_skew": [{"language": "en", "skew": 5.0, "ci_low": 3.0, "ci_high": 7.0, "n": 12}]},
    }


def save(tmp_path: Path, data: object, name: str = "run.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_a_valid_report_loads(tmp_path):
    path = save(tmp_path, report())
    assert len(report_records(load_report(path), path)) == 12


def test_provenance_fields_load_and_reports_written_before_them_too(tmp_path):
    """A report of this version carries the model's declared version and, per answer, who the
    API said served it; one written before has none of them and still loads."""
    data = report()
    data["run"] |= {"model_version": "sha256:0123456789abcdef", "served_models": ["m-2025-01-01"],
                    "system_fingerprints": ["fp_1", "fp_2"]}
    for item in data["items"]:  # type: ignore[union-attr]
        item["model_version"] = "sha256:0123456789abcdef"
        item["prompts"][0]["answers"][0] |= {"served_model": "m-2025-01-01", "system_fingerprint": "fp_1"}
    path = save(tmp_path, data)
    records = report_records(load_report(path), path)
    assert records[0].model_version == "sha256:0123456789abcdef"
    answer = records[0].prompts[0].answers[0]
    assert (answer.served_model, answer.system_fingerprint) == ("m-2025-01-01", "fp_1")
    assert records[0].to_dict()["prompts"][1]["answers"][0].keys() >= {"raw", "value"}
    assert "served_model" not in records[0].to_dict()["prompts"][1]["answers"][0]  # absent when unknown

    old = report()
    for item in old["items"]:  # type: ignore[union-attr]
        del item["model_version"]
    path = save(tmp_path, old, "old.json")
    records = report_records(load_report(path), path)
    assert records[0].model_version == "" and records[0].prompts[0].answers[0].served_model is None


# Hostile edits: each is (where, value, the sentence's end). Before, 7 of 20 ended in an
# INTERNALERROR, some after every call of the run had been paid for.
HOSTILE = [
    (("aggregates", 0, "value"), "abc", "aggregates[0], key 'value': must be a number or null, got 'abc'."),
    (("aggregates", 0, "value"), 10 ** 400, "aggregates[0], key 'value': must be a number or null, got 1000000000"),
    (("aggregates", 0, "metric"), ["skew"], "aggregates[0], key 'metric': must be a string, got ['skew']."),
    (("aggregates", 0), "skew", "aggregates[0] is not an object."),
    (("items", 0, "kind"), "sonnet", "items[0], key 'kind': must be one of inverted_pair, binary"),
    (("items", 0, "prompts"), [], "items[0]: an item of kind inverted_pair needs a prompt with role 'positive'."),
    (("items", 0, "prompts", 0, "answers", 0, "value"), "65", "key 'value': must be a finite number or null, got '65'."),
    (("items", 0, "prompts", 0, "answers", 0, "value"), float("nan"), "must be a finite number or null, got nan."),
    (("items", 0, "prompts", 0, "answers", 0, "input_tokens"), -5, "must be a whole number of at least 0"),
    (("items", 0, "prompts", 0, "answers", 0, "surprise"), 1, "key 'surprise': is not a key of this entry."),
    (("items", 0, "expected"), "half", "items[0], key 'expected': must be a finite number or null, got 'half'."),
    (("items", 0, "outcome"), "yes", "items[0], key 'outcome': must be true or false or null, got 'yes'."),
    (("items", 0, "notes"), "a note", "items[0], key 'notes': must be a list of strings, got 'a note'."),
    (("items", 0), None, "items[0] is not an object."),
    (("run", "seed"), "abc", "'run', key 'seed': must be a whole number or null, got 'abc'."),
    (("run", "bootstrap_resamples"), 2_000_000_000, "must be a whole number from 1 to 100,000 or null"),
    (("run", "keep_fifty"), "no", "'run', key 'keep_fifty': must be true or false or null, got 'no'."),
    (("run", "model"), "m" * 100_000, "'run', key 'model': must be a model name or a list of them"),
    (("gates", 0, "value"), "high", "gates[0], key 'value': must be a number or null, got 'high'."),
    (("languages", "track_b_skew", 0, "skew"), "abc", "languages.track_b_skew[0], key 'skew': must be a number"),
    (("items", 0, "model_version"), 3, "items[0], key 'model_version': must be a string, got 3."),
    (("items", 0, "prompts", 0, "answers", 0, "system_fingerprint"), ["fp"], ("key 'system_fingerprint': must be a "
                                                                              "string or null, got ['fp'].")),
    (("run", "system_fingerprints"), "fp_1", "'run', key 'system_fingerprints': must be a list of at most 1,000"),
    (("run", "served_models"), ["m"] * 5000, "'run', key 'served_models': must be a list of at most 1,000"),
    (("run", "model_version"), {"v": 1}, "'run', key 'model_version': must be a model name or a list of them"),
]


def edited(path: tuple[object, ...], value: object) -> dict[str, object]:
    data = copy.deepcopy(report())
    target: object = data
    for step in path[:-1]:
        target = target[step]  # type: ignore[index]
    target[path[-1]] = value  # type: ignore[index]
    return data


@pytest.mark.parametrize(("path", "value", "message"), HOSTILE, ids=[".".join(map(str, h[0])) + f"={h[1]!r:.12}" for h in HOSTILE])
def test_a_hostile_report_is_one_sentence(tmp_path, path, value, message):
    file = save(tmp_path, edited(path, value))
    with pytest.raises(ReportError) as info:
        load_report(file)
    text = str(info.value)
    assert text.startswith(f"{file}: ") and message in text
    assert "\n" not in text and len(text) < 400


@pytest.mark.parametrize("text", [
    '{"format": "pytest-optbench-report", "format_version": 1, "run": ' + deep(100_000) + "}",
    '{"format": "pytest-optbench-report", "format_version": 1, "run": {}, "items": [], "aggregates": [], '
    '"gates": [], "x": ' + deep(500) + "}",
])
def test_deep_nesting_is_one_sentence(tmp_path, text):
    file = tmp_path / "deep.json"
    file.write_text(text)
    with pytest.raises(ReportError, match=r"nested more than 64 levels deep\)\.$"):
        load_report(file)


@pytest.mark.parametrize(("content", "message"), [
    (b"\xff\xfe{not json", "not UTF-8 text"),
    (b'{"format": "pytest-optbench-report", "format_version": true}', "report format version True is not supported"),
    (b"[1, 2, 3]", "not a pytest-optbench JSON report"),
    (b'{"a": ' + b"9" * 5000 + b"}", "not valid JSON"),
])
def test_other_hostile_files_are_one_sentence(tmp_path, content, message):
    file = tmp_path / "bad.json"
    file.write_bytes(content)
    with pytest.raises(ReportError, match=message):
        load_report(file)


# --------------------------------------------------------------------------- the optbench command


def test_compare_with_a_hostile_report_exits_2(tmp_path, capsys):
    good = save(tmp_path, report("a"), "a.json")
    bad = save(tmp_path, edited(("aggregates", 0, "value"), "abc"), "b.json")
    for command in (["compare", str(good), str(bad), "--html", str(tmp_path / "out.html")],
                    ["variance", str(good), str(bad)], ["crosslingual", str(good), str(bad)],
                    ["baseline", str(bad), "--output", str(tmp_path / "base.json")]):
        assert cli.main(command) == 2, command
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "key 'value': must be a number or null" in err, command
    assert not (tmp_path / "out.html").exists() and not (tmp_path / "base.json").exists()


def test_compare_html_that_cannot_be_written_exits_2(tmp_path, capsys):
    a, b = save(tmp_path, report("a"), "a.json"), save(tmp_path, report("b", shift=5), "b.json")
    target = tmp_path / "out.html"
    target.mkdir()
    assert cli.main(["compare", str(a), str(b), "--html", str(target)]) == 2
    err = capsys.readouterr().err
    assert err == f"optbench compare: --html {target}: not written (Is a directory).\n"


def test_compare_html_of_two_valid_runs_is_written(tmp_path, capsys):
    a, b = save(tmp_path, report("a"), "a.json"), save(tmp_path, report("b", shift=5), "b.json")
    assert cli.main(["compare", str(a), str(b), "--html", str(tmp_path / "out.html")]) == 0
    assert (tmp_path / "out.html").read_text().startswith("<!DOCTYPE html>")
    assert "2 runs side by side" in capsys.readouterr().out


def test_baseline_output_that_cannot_be_written_exits_2(tmp_path, capsys):
    source = save(tmp_path, report())
    (tmp_path / "file").write_text("x")
    assert cli.main(["baseline", str(source), "--output", str(tmp_path / "file" / "base.json")]) == 2
    assert "not written (Not a directory)" in capsys.readouterr().err
