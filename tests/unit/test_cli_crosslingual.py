"""``optbench crosslingual``: Track B Skew by model and language from JSON reports, and the
inter-model vs inter-language spread. Reports are written from hand-made records; the
expected spreads come from ``statistics.stdev``."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest

from pytest_optbench.cli import main
from pytest_optbench.records.item import Answer, ItemRecord, PromptRecord
from pytest_optbench.report.json_report import build_report, write_report
from pytest_optbench.scoring.aggregate import AggregateOptions, aggregate
from pytest_optbench.scoring.crosslingual import language_skews
from pytest_optbench.scoring.outcome import Outcome


def pair(item: str, language: str, skew: float, track: str = "B", condition: str = "base") -> ItemRecord:
    """A pair with P- = 40, so P+ = 60 + skew."""
    prompts = [PromptRecord("positive", f"{item} good?", [Answer(f"{60 + skew:g}", 60.0 + skew)]),
               PromptRecord("negative", f"{item} bad?", [Answer("40", 40.0)])]
    return ItemRecord(f"track-{track.lower()}-{language}", item, condition, "inverted_pair", f"{language}.yaml", "m", prompts,
                      track=track, language=language)


def scored(records: list[ItemRecord], keep_fifty: bool = False) -> Outcome:
    """The outcome a run would write: aggregates and the language table from scoring."""
    options = AggregateOptions(keep_fifty=keep_fifty, n_resamples=200)
    aggregates = aggregate(records, options)
    return Outcome(aggregates, [], records, [], language_skews(aggregates, records, options))


def write(tmp_path: Path, model: str, records: list[ItemRecord]) -> str:
    path = tmp_path / f"{model}.json"
    write_report(path, build_report(scored(records), {"model": model, "keep_fifty": False}))
    return str(path)


# Skew per (model, language): A en (10 + 14) / 2 = 12, fr 4, de 7; B en 2, fr 0 (no de).
# Left out: a Track A pair, a pair under another condition, German (only A has it).
MODEL_A = [pair("i1", "en", 10), pair("i2", "en", 14), pair("i1", "fr", 4), pair("i1", "de", 7),
           pair("t1", "en", 40, track="A"), pair("i1", "en", -30, condition="narrative_up")]
MODEL_B = [pair("i1", "en", 2), pair("i2", "en", 2), pair("i1", "fr", 0)]


def test_matrix_spreads_and_ratio(tmp_path, capsys) -> None:
    reports = [write(tmp_path, "model-a", MODEL_A), write(tmp_path, "model-b", MODEL_B)]
    assert main(["crosslingual", *reports]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Track B Skew (pp, base condition) by model and language:"
    assert lines[1].split() == ["model", "en", "fr"]
    assert lines[2].split() == ["model-a", "+12.0", "+4.0"]
    assert lines[3].split() == ["model-b", "+2.0", "+0.0"]
    inter_model = statistics.mean([statistics.stdev([12, 2]), statistics.stdev([4, 0])])  # 4.95
    inter_language = statistics.mean([statistics.stdev([12, 4]), statistics.stdev([2, 0])])  # 3.54
    assert lines[4] == f"inter-model SD within a language (mean): {inter_model:.2f} pp"
    assert lines[5] == f"inter-language SD within a model (mean): {inter_language:.2f} pp"
    assert lines[6].startswith(f"ratio: {inter_model / inter_language:.1f}x")
    assert f"{inter_model:.2f}" == "4.95" and f"{inter_model / inter_language:.1f}" == "1.4"


def test_fifties_follow_the_report_keep_fifty(tmp_path, capsys) -> None:
    """A 50 is a refusal unless the run kept them: the same answers give other Skews."""
    refusal = [PromptRecord("positive", "q+", [Answer("50", 50.0), Answer("70", 70.0)]),
               PromptRecord("negative", "q-", [Answer("40", 40.0)])]
    records = {lang: ItemRecord(f"b-{lang}", "i", "base", "inverted_pair", "x.yaml", "m", refusal, track="B",
                                language=lang) for lang in ("en", "fr")}
    paths = []
    for model, keep in (("dropped", False), ("kept", True)):
        path = tmp_path / f"{model}.json"
        write_report(path, build_report(scored(list(records.values()), keep), {"model": model, "keep_fifty": keep}))
        paths.append(str(path))
    assert main(["crosslingual", *paths]) == 0
    rows = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()[2:4]}
    assert rows == {"dropped": ["+10.0", "+10.0"], "kept": ["+0.0", "+0.0"]}  # 70 - 60; 60 - 60


def test_one_model_is_not_enough(tmp_path, capsys) -> None:
    assert main(["crosslingual", write(tmp_path, "model-a", MODEL_A)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("optbench crosslingual: need reports of at least two models over at least two shared "
                           "languages (got 1 models, 3 shared languages).")


def test_models_without_two_shared_languages(tmp_path, capsys) -> None:
    reports = [write(tmp_path, "model-a", [pair("i1", "en", 3), pair("i1", "fr", 1)]),
               write(tmp_path, "model-b", [pair("i1", "en", 2), pair("i1", "de", 1)])]
    assert main(["crosslingual", *reports]) == 2
    assert "(got 2 models, 1 shared languages)" in capsys.readouterr().err


@pytest.mark.parametrize(("content", "message"), [
    (None, "cannot read the report"),
    ("{not json", "not valid JSON"),
    (json.dumps({"format": "something else"}), "not a pytest-optbench JSON report"),
])
def test_unreadable_reports_are_one_sentence(tmp_path, capsys, content, message) -> None:
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    good = write(tmp_path, "model-a", MODEL_A)
    assert main(["crosslingual", good, str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"optbench crosslingual: {bad}: {message}") and "Traceback" not in err


def answers(role: str, value: float) -> PromptRecord:
    return PromptRecord(role, f"{role}?", [Answer(f"{value:g}", value)])


def battery(language: str, item: str, both: float) -> ItemRecord:
    """A conjunction set with P(a) = P(b) = 50: a violation when P(both) > 52 (tolerance 2 pp)."""
    prompts = [answers("a", 50), answers("b", 50), answers("both", both)]
    return ItemRecord(f"conj-{language}", item, "base", "conjunction", "c.yaml", "m", prompts, language=language)


def known(language: str, item: str, p: float, outcome: bool) -> ItemRecord:
    return ItemRecord(f"known-{language}", item, "base", "binary", "k.yaml", "m", [answers("yes", p)],
                      language=language, outcome=outcome)


def audit(shift: float) -> list[ItemRecord]:
    """Two languages, each with Track B under base and narrative_up, a conjunction battery and
    known answers; ``shift`` moves every Skew (and the narrative arm by twice as much)."""
    out = []
    for lang, extra in (("en", 0.0), ("ko", 2.0)):
        for i in range(6):
            out.append(pair(f"i{i}", lang, shift + extra + i))
            out.append(pair(f"i{i}", lang, 2 * shift + extra + i, condition="narrative_up"))
            out.append(battery(lang, f"c{i}", 60.0 if i < 2 else 40.0))
            out.append(known(lang, f"k{i}", 80.0, i % 2 == 0))
    return out


def test_every_metric_is_reported_per_language_and_compared_across_models(tmp_path, capsys) -> None:
    reports = [write(tmp_path, "model-a", audit(10.0)), write(tmp_path, "model-b", audit(0.0))]
    stored = json.loads(Path(reports[0]).read_text())["languages"]["metrics"]
    cells = {(m["bank"], m["condition"], m["metric"], m["language"]): m for m in stored}
    # The suite ids' -<language> suffix ties the languages of one bank together.
    assert cells[("track-b", "base", "skew", "ko")]["suite"] == "track-b-ko"
    assert cells[("track-b", "base", "skew", "ko")]["value"] == pytest.approx(10 + 2 + 2.5)
    assert cells[("track-b", "narrative_up", "skew", "en")]["value"] == pytest.approx(20 + 2.5)
    assert cells[("track-b", "narrative_up", "condition_effect", "en")]["value"] == pytest.approx(10)
    assert cells[("conj", "base", "conjunction_violation_rate", "ko")]["value"] == pytest.approx(2 / 6)
    assert cells[("conj", "base", "conjunction_violation_rate", "ko")]["tolerance"] == 2.0
    assert cells[("known", "base", "brier", "en")]["value"] == pytest.approx((3 * 0.04 + 3 * 0.64) / 6)
    assert {m["metric"] for m in stored} >= {"overconfidence", "ece", "skew_effect"}
    assert main(["crosslingual", *reports]) == 0
    out = capsys.readouterr().out
    assert "inter-model vs inter-language spread per metric:" in out
    # narrative_up Skew: model-a 22.5 / 24.5, model-b 2.5 / 4.5: inter-model SD 14.1, inter-language 1.4.
    assert re.search(r"track-b\s+narrative_up\s+skew\s+2\s+14\.1\s+1\.4\s+10\.0", out)
    assert re.search(r"track-b\s+narrative_up\s+skew\s+model-a\s+6\s+\+22\.5\s+\+24\.5\s+1\.4", out)
    assert re.search(r"known\s+base\s+brier\s+model-b\s+6\s+0\.340\s+0\.340\s+0\.000", out)


def test_a_malformed_language_metric_is_one_sentence(tmp_path, capsys) -> None:
    reports = [write(tmp_path, "model-a", audit(10.0)), write(tmp_path, "model-b", audit(0.0))]
    data = json.loads(Path(reports[1]).read_text())
    data["languages"]["metrics"][0]["tolerance"] = "\x1b[31mwide"
    Path(reports[1]).write_text(json.dumps(data))
    assert main(["crosslingual", *reports]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"optbench crosslingual: {reports[1]}: an entry of 'languages.metrics' is malformed")
    assert "\x1b" not in err and len(err.splitlines()) == 1
