"""``optbench power``: what a run's data can resolve, and the items and samples a target effect
needs. Reports are written from hand-made pairs whose item and sample variances are known in
closed form; the answers are checked against the large-sample formula
n = ((z_.975 + z_.8) sd / effect)^2 computed here, not against the module's own functions."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pytest_optbench.cli import main
from pytest_optbench.records.item import Answer, ItemRecord, PromptRecord
from pytest_optbench.report.json_report import build_report, write_report
from pytest_optbench.report.reading import load_report, report_records
from pytest_optbench.scoring.aggregate import AggregateOptions, aggregate
from pytest_optbench.scoring.outcome import Outcome
from pytest_optbench.scoring.power_plan import power_rows

Z = 1.959963984540054 + 0.8416212335729143
D = 6.0  # each prompt's two samples sit at its mean -+ D


def pair(i: int, plus: float, minus: float) -> ItemRecord:
    prompts = [PromptRecord("positive", "good?", [Answer("x", plus - D), Answer("x", plus + D)]),
               PromptRecord("negative", "bad?", [Answer("x", minus - D), Answer("x", minus + D)])]
    return ItemRecord("track-b", f"item-{i:03d}", "base", "inverted_pair", "b.yaml", "m", prompts, track="B")


# Item means: P+ alternates 55/75, P- 40/50 in a different rhythm, so item Skews spread.
RECORDS = [pair(i, 55.0 + 20 * (i % 2), 40.0 + 10 * (i % 3 == 0)) for i in range(40)]


def skews() -> list[float]:
    return [r.prompt("positive").mean() + r.prompt("negative").mean() - 100 for r in RECORDS]


def var(xs: list[float]) -> float:
    m = sum(xs) / len(xs)
    return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("power") / "run.json"
    outcome = Outcome(aggregate(RECORDS, AggregateOptions(n_resamples=300)), [], RECORDS)
    write_report(path, build_report(outcome, {"model": "m", "keep_fifty": False}))
    return str(path)


def test_skew_decomposes_into_item_and_sample_variance(report: str) -> None:
    data = load_report(Path(report))
    (row,) = [r for r in power_rows(data, report_records(data, Path(report))) if r.metric == "skew"]
    within = 2 * (2 * D ** 2)  # one P+ sample plus one P- sample: var of {m - D, m + D} is 2 D^2 each
    assert row.components is not None
    assert row.components.within == pytest.approx(within)
    assert row.components.between == pytest.approx(var(skews()) - within / 2)  # 2 samples per prompt
    assert (row.n, row.samples) == (40, 2)
    # Items needed for a small effect: the large-sample formula, per samples per prompt.
    effect = 0.4
    for design in row.design(effect):
        sd2 = row.components.between + within / design.samples
        assert design.items == pytest.approx((Z ** 2) * sd2 / effect ** 2, rel=0.01)
    for design in row.design(effect, change=True):  # the same items twice: item variance cancels
        assert design.items == pytest.approx((Z ** 2) * 2 * within / design.samples / effect ** 2, rel=0.01)


def test_other_metrics_are_read_off_their_stored_interval(report: str) -> None:
    data = load_report(Path(report))
    stored = next(a for a in data["aggregates"] if a["metric"] == "complement_violation")
    (row,) = [r for r in power_rows(data, report_records(data, Path(report))) if r.metric == "complement_violation"]
    half = max(stored["ci_high"] - stored["value"], stored["value"] - stored["ci_low"])
    sd = half / 1.959963984540054 * math.sqrt(stored["n"])
    assert row.sd == pytest.approx(sd)
    (design,) = row.design(0.05)
    assert design.samples == 0 and design.items == pytest.approx((Z * sd / 0.05) ** 2, rel=0.01)
    assert math.isnan(row.detectable_change)  # no baseline in the report
    (no_change,) = row.design(0.05, change=True)
    assert no_change.items is None


def test_cli_prints_the_table_and_the_design(report: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["power", report]) == 0
    out = capsys.readouterr().out
    assert "crossing" in out and "track-b" in out and "items and samples" in out
    assert main(["power", report, "--effect", "2", "--change"]) == 0
    out = capsys.readouterr().out
    assert "track-b/base skew: to detect a change of 2.0 with 80% power" in out
    assert "samples per prompt  items needed" in out


def test_cli_errors_are_one_sentence(tmp_path: Path, report: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["power", str(tmp_path / "missing.json")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"optbench power: {tmp_path / 'missing.json'}: cannot read the report (No such file or directory).")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "something else"}))
    assert main(["power", str(bad)]) == 2
    assert "not a pytest-optbench JSON report" in capsys.readouterr().err
    assert main(["power", report, "--metric", "skw"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"optbench power: {report} has no skw under condition 'base'") and "skew" in err
    with pytest.raises(SystemExit):
        main(["power", report, "--effect", "0"])
    assert "argument --effect: must be above 0" in capsys.readouterr().err


def test_a_malformed_baseline_section_is_ignored_not_a_traceback(tmp_path: Path, report: str,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(Path(report).read_text())
    for baseline in ([1, 2], {"changes": "x"}, {"changes": [{"metric": "skew", "suite": "track-b", "condition": "base",
                                                             "n": "many", "delta": [], "ci_low": None}]}):
        data["baseline"] = baseline
        path = tmp_path / "odd.json"
        path.write_text(json.dumps(data))
        assert main(["power", str(path), "--metric", "complement_violation", "--effect", "1", "--change"]) == 0
        assert "no change variance" in capsys.readouterr().out
