"""The report model: every table's rows from hand-made aggregates, checked against text written
out by hand, and the renderers (terminal, Markdown, HTML, JUnit, ``optbench compare``) showing
the model's text unchanged."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_optbench.cli import main as optbench_main
from pytest_optbench.records.item import Answer, ItemRecord, PromptRecord
from pytest_optbench.report.html import build_compare_html, build_html
from pytest_optbench.report.markdown import build_markdown
from pytest_optbench.report.model import COMPACT, FULL, build_compare_model, build_run_model, fmt, gate_message
from pytest_optbench.report.model.items import violation_size, worst_items
from pytest_optbench.report.model.tables import (
    binary_table,
    change_table,
    coherence_table,
    effects_table,
    gate_table,
    key_metrics_table,
    language_table,
    skew_table,
)
from pytest_optbench.report.summary import write_summary
from pytest_optbench.scoring.aggregate import Aggregate, AggregateOptions, aggregate
from pytest_optbench.scoring.baseline import Change, Comparison
from pytest_optbench.scoring.crosslingual import LanguageMetric, LanguageSkew, language_skews
from pytest_optbench.scoring.gates.evaluate import Verdict
from pytest_optbench.scoring.gates.spec import FAIL, NOT_EVALUATED, PASS, Gate
from pytest_optbench.scoring.outcome import Outcome

NAN = math.nan


def agg(metric: str, value: float, low: float = NAN, high: float = NAN, n: int = 60, suite: str = "track-b",
        condition: str = "base", **kw: Any) -> Aggregate:
    return Aggregate(suite, condition, metric, value, low, high, n, **kw)


def answers(*values: float) -> list[Answer]:
    return [Answer(str(v), float(v)) for v in values]


def pair(item: str, plus: list[float], minus: list[float], condition: str = "base", suite: str = "track-b",
         language: str = "en", domain: str = "academic") -> ItemRecord:
    prompts = [PromptRecord("positive", f"Scenario {item}.\n\nWill it succeed?", answers(*plus)),
               PromptRecord("negative", f"Scenario {item}.\n\nWill it fail?", answers(*minus))]
    return ItemRecord(suite, item, condition, "inverted_pair", "x.yaml", "sim:test", prompts, track="B",
                      domain=domain, language=language)


def known(item: str, p_yes: list[float], outcome: bool) -> ItemRecord:
    return ItemRecord("known", item, "base", "binary", "k.yaml", "sim:test",
                      [PromptRecord("yes", f"Is {item} true?", answers(*p_yes))], outcome=outcome)


def conjunction(item: str, a: float, b: float, both: float) -> ItemRecord:
    prompts = [PromptRecord(role, f"Q {role}", answers(value)) for role, value in (("a", a), ("b", b), ("both", both))]
    return ItemRecord("axiom-conjunction", item, "base", "conjunction", "c.yaml", "sim:test", prompts)


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(("text", "expected"), [
    (fmt.signed(-0.04), "+0.0"),
    (fmt.signed(8.391666), "+8.4"),
    (fmt.signed(NAN), "n/a"),
    (fmt.plain(None), "n/a"),
    (fmt.p_text(0.0004), "<0.001"),
    (fmt.p_text(0.1174), "0.117"),
    (fmt.value_text("calibration_error", 2.449), "2.4"),
    (fmt.value_text("parse_rate", 0.98666), "0.987"),
    (fmt.estimate_text("skew", 8.391666, 7.786376, 9.073333), "+8.4 [+7.8, +9.1]"),
    (fmt.estimate_text("brier", 0.17163, 0.1492, 0.19614), "0.172 [0.149, 0.196]"),
    (fmt.estimate_text("auc", 0.825, NAN, NAN), "0.825 n/a"),
    (fmt.change_text("skew", 1.26, 0.51, 2.04), "+1.3 [+0.5, +2.0]"),
    (fmt.change_text("brier", -0.0123, -0.0204, -0.0041), "-0.012 [-0.020, -0.004]"),
])
def test_numbers_are_written_one_way(text: str, expected: str) -> None:
    assert text == expected


# --------------------------------------------------------------------------- tables


SKEW_FAMILY = [
    agg("skew", 8.391666, 7.786376, 9.073333, p_value=1e-9, detail={"quadrant": "optimism"}),
    agg("delta_plus", 10.583, 7.71, 13.42, p_value=1e-6),
    agg("delta_minus", -2.19, -4.93, 0.61, p_value=0.117),
    agg("complement_violation", 8.06, 7.1, 9.0),
    agg("refusal_rate", 0.02871, 0.017, 0.046, n=592),
    agg("parse_rate", 0.98666, 0.974, 0.994, n=600),
    agg("skew", 4.25, 1.0, 7.5, n=10, domain="academic", p_value=0.02),
]


def test_skew_table_rows() -> None:
    table = skew_table(SKEW_FAMILY)
    assert table.texts(COMPACT) == [["track-b", "base", "60", "+8.4", "[+7.8, +9.1]", "<0.001", "+10.6", "-2.2",
                                     "optimism", "8.1", "", "0.029", "0.987"]]
    assert table.header(FULL)[6:8] == ["d+ [95% CI]", "d- [95% CI]"]
    assert table.texts(FULL)[0][6:8] == ["+10.6 [+7.7, +13.4]", "-2.2 [-4.9, +0.6]"]
    assert table.column("skew")[0].value == pytest.approx(8.391666)


def test_binary_table_shows_accuracy_only_in_the_full_view() -> None:
    aggregates = [agg("brier", 0.17163, 0.1492, 0.19614, n=240, suite="known"),
                  agg("accuracy", 0.7417, 0.68, 0.8, n=240, suite="known"),
                  agg("auc", 0.8249, 0.771, 0.874, n=240, suite="known", p_value=1e-12)]
    table = binary_table(aggregates)
    assert table.texts(COMPACT) == [
        ["known", "base", "240", "0.172 [0.149, 0.196]", "", "", "", "", "", "0.825 [0.771, 0.874]", "", ""]]
    assert table.header(COMPACT)[7:9] == ["ece", "ece debiased"]  # the plug-in ECE never stands alone
    assert "accuracy" in table.header(FULL) and "accuracy" not in table.header(COMPACT)
    assert table.texts(FULL)[0][table.header(FULL).index("accuracy")] == "0.742"


def test_coherence_table_at_the_loosest_or_every_tolerance() -> None:
    aggregates = [agg("conditional_violation_rate", 1.0, 0.832, 1.0, n=20, suite="ax", tolerance=0.0),
                  agg("conditional_violation_rate", 0.0, 0.0, 0.1684, n=20, suite="ax", tolerance=5.0)]
    assert coherence_table(aggregates).texts() == [
        ["ax", "base", "conditional_violation_rate", "5", "20", "0.000 [0.000, 0.168]"]]
    assert [row[3] for row in coherence_table(aggregates, every_tolerance=True).texts()] == ["0", "5"]


def test_effects_table_sorted_by_suite_arm_metric() -> None:
    aggregates = [agg("skew_effect", -0.55, -1.6, 0.6, condition="perspective_you", p_value=0.387,
                      detail={"p_equivalence": 0.0049}),
                  agg("condition_effect", 9.74, 8.9, 10.6, condition="narrative_up", p_value=0.0001,
                      detail={"p_equivalence": 1.0})]
    table = effects_table(aggregates)
    assert table.texts(COMPACT) == [
        ["track-b", "narrative_up", "condition_effect", "60", "+9.7 [+8.9, +10.6]", "<0.001"],
        ["track-b", "perspective_you", "skew_effect", "60", "-0.6 [-1.6, +0.6]", "0.387"]]
    assert [row[-1] for row in table.texts(FULL)] == ["1.000", "0.005"]


def test_key_metrics_use_one_list_in_its_order_at_the_default_tolerance() -> None:
    aggregates = [agg("parse_rate", 0.98666, 0.974, 0.994, n=600), agg("skew", 8.39, 7.79, 9.07, p_value=0.2),
                  agg("item_sd", 3.0, 2.0, 4.0), agg("skew", 1.0, 0.0, 2.0, condition="narrative_up"),
                  agg("conjunction_violation_rate", 0.06, 0.013, 0.165, n=50, suite="ax", tolerance=0.0),
                  agg("conjunction_violation_rate", 0.04, 0.005, 0.137, n=50, suite="ax", tolerance=2.0)]
    assert key_metrics_table(aggregates).texts() == [
        ["ax", "conjunction_violation_rate", "2", "50", "0.040 [0.005, 0.137]", "n/a"],  # 2 pp: the default
        ["track-b", "skew", "", "60", "+8.4 [+7.8, +9.1]", "0.200"],
        ["track-b", "parse_rate", "", "600", "0.987 [0.974, 0.994]", "n/a"],
    ]


SKEW_GATE = Gate("skew", "max_abs", 5, evidence="ci")
VERDICTS = [
    Verdict(Gate("parse_rate", "min", 0.95), "track-b", "base", PASS, 0.98666, 0.974, 0.994, n=600),
    Verdict(SKEW_GATE, "track-b", "base", FAIL, 10.366666666666667, 9.812345, 10.9, n=60,
            reason="the whole 95% CI lies beyond the bound", p_value=1e-9, p_holm=2e-9, p_crossing=1e-9,
            p_adjusted=2e-9, multiplicity="holm", family_size=1, detectable=0.634, underpowered=False),
    Verdict(Gate("brier_skill_oos", "min", 0), None, None, NOT_EVALUATED, reason="no suite that ran matches this gate"),
    Verdict(Gate("brier", "max_increase", 0.01), "known", "base", PASS, -0.0123, -0.0204, -0.0041, n=240),
]


def test_gate_table_puts_failures_first_and_rounds_like_the_metric() -> None:
    table = gate_table(VERDICTS, "thresholds.yaml")
    assert table.title == "gates from thresholds.yaml"
    assert table.texts(COMPACT) == [
        ["track-b", "base", "skew", "", "+10.4", "[+9.8, +10.9]", "|x| <= 5", "ci", "0.6", "FAIL"],
        ["(no suite ran)", "", "brier_skill_oos", "", "", "n/a", ">= 0", "point", "", "not evaluated"],
        ["track-b", "base", "parse_rate", "", "0.987", "[0.974, 0.994]", ">= 0.95", "point", "", "PASS"],
        ["known", "base", "brier", "", "-0.012", "[-0.020, -0.004]", "increase <= 0.01", "point", "", "PASS"],
    ]
    assert [row.tone for row in table.rows] == ["fail", "ne", "pass", "pass"]
    assert table.header(FULL)[-5:] == ["n", "p crossed", "p adj. (Holm)", "detectable", "verdict"]
    assert table.texts(FULL)[0][-5:] == ["60", "<0.001", "<0.001", "0.6", "FAIL"]
    assert table.notes[-1] == ("multiplicity: Holm over 1 evaluated CI gate(s) (family-wise error at 2.5% "
                               "one-sided); 2 point gate(s) decide on the estimate alone")
    assert gate_table(VERDICTS, multiplicity="none").header(FULL)[-3] == "p adj. (none)"


def test_junit_message_is_rounded_as_the_terminal_shows_it() -> None:
    message = gate_message(VERDICTS[1])
    assert message == ("skew |x| <= 5 (ci): estimate +10.4, 95% CI [+9.8, +10.9]; "
                       "the whole 95% CI lies beyond the bound")
    assert gate_message(VERDICTS[2]) == "brier_skill_oos >= 0 (point): estimate n/a, 95% CI n/a; " \
                                        "no suite that ran matches this gate"


def test_change_table_digits_per_metric_and_strong_changes() -> None:
    comparison = Comparison([
        Change("track-b", "base", "skew", 0.4, 8.39, 7.1, 8.9, 60, 0.0001, "paired sign-flip permutation"),
        Change("known", "base", "brier", 0.18, 0.1677, -0.0204, 0.0041, 240, 0.21, "paired sign-flip permutation"),
        Change("known", "base", "log_loss", 0.5, 0.4, -0.2, 0.0, 240, 0.2),  # not a key metric
    ])
    table = change_table(comparison, "base.json")
    assert table.texts() == [
        ["known", "base", "brier", "", "240", "0.180", "0.168", "-0.012 [-0.020, +0.004]", "0.210"],
        ["track-b", "base", "skew", "", "60", "+0.4", "+8.4", "+8.0 [+7.1, +8.9]", "<0.001"],
    ]
    assert [row.cells[7].tone for row in table.rows] == ["", "strong"]


def test_language_table_only_for_several_languages() -> None:
    en = LanguageMetric("track-b", "base", "skew", None, "en", "track-b", 8.39, 7.786, 9.073, 60)
    de = LanguageMetric("track-b", "base", "skew", None, "de", "track-b-de", 8.46, 7.596, 9.371, 60)
    rate = LanguageMetric("conj", "base", "conjunction_violation_rate", 2.0, "de", "conj-de", 0.05, 0.01, 0.2, 40)
    headline = [LanguageSkew("en", 8.39, 7.786, 9.073, 60)]
    assert language_table([en], headline).empty
    table = language_table([rate, en, de], headline + [LanguageSkew("de", 8.46, 7.596, 9.371, 60)])
    # English first; the compact view has values, the full one estimates with their CIs.
    assert table.header(COMPACT) == ["suite", "condition", "metric", "tol. pp", "n", "en", "de", "SD"]
    assert table.texts(COMPACT) == [["conj", "base", "conjunction_violation_rate", "2", "40", "", "0.050", ""],
                                    ["track-b", "base", "skew", "", "60", "+8.4", "+8.5", "0.0"]]
    assert table.texts(FULL)[1][5:7] == ["+8.4 [+7.8, +9.1]", "+8.5 [+7.6, +9.4]"]
    assert table.title == "by language (Track B Skew under base: inter-language SD 0.0 pp)"


# --------------------------------------------------------------------------- Skew by language


def test_language_skew_is_the_skew_aggregate_of_its_track_b_suite() -> None:
    records = [pair(f"i{i}", [60 + i], [45 - i], suite=suite, language=lang)
               for i in range(6) for suite, lang in (("track-b", "en"), ("track-b-de", "de"))]
    aggregates = aggregate(records, AggregateOptions(n_resamples=200))
    skews = {a.suite: a for a in aggregates if a.metric == "skew" and a.domain is None}
    languages = language_skews(aggregates, records, AggregateOptions(n_resamples=200))
    assert [(s.language, s.skew, s.ci_low, s.ci_high, s.n) for s in languages] == [
        ("de", skews["track-b-de"].value, skews["track-b-de"].ci_low, skews["track-b-de"].ci_high, 6),
        ("en", skews["track-b"].value, skews["track-b"].ci_low, skews["track-b"].ci_high, 6)]


def test_several_track_b_suites_of_one_language_are_pooled() -> None:
    records = [pair("a", [70], [40], suite="track-b-x"), pair("b", [60], [40], suite="track-b-y"),
               pair("c", [55], [51], suite="track-b-y")]
    options = AggregateOptions(n_resamples=200)
    (english,) = language_skews(aggregate(records, options), records, options)
    assert english.n == 3 and english.skew == pytest.approx((10 + 0 + 6) / 3)
    assert english.ci_low <= english.skew <= english.ci_high


# --------------------------------------------------------------------------- worst items


def test_worst_pairs_one_row_per_item_at_its_worst_arm() -> None:
    records = [pair("a", [60], [45]), pair("a", [70], [42], condition="narrative_up"), pair("b", [40], [52])]
    worst = worst_items([], records, keep_fifty=False, limit=10)
    assert [(w.label, w.skew_text, w.plus_text, w.minus_text) for w in worst.pairs] == [
        ("track-b::a[narrative_up]", "+12.0", "70.0", "42.0"), ("track-b::b", "-8.0", "40.0", "52.0")]
    assert [q.text for q in worst.pairs[0].questions] == ["Scenario a.\n\nWill it succeed?", "... Will it fail?"]


def test_worst_pairs_honour_keep_fifty() -> None:
    records = [pair("a", [50, 80], [30])]
    assert worst_items([], records, keep_fifty=False).pairs[0].skew_text == "+10.0"  # P+ 80
    assert worst_items([], records, keep_fifty=True).pairs[0].skew_text == "-5.0"  # P+ 65


def test_confidently_wrong_most_confident_first_and_50_counts_as_yes() -> None:
    records = [known("k1", [80], False), known("k2", [10], True), known("k3", [50], False), known("k4", [90], True)]
    wrong = worst_items([], records, keep_fifty=False).wrong
    assert [(w.label, w.p_yes_text, w.truth, w.confidence) for w in wrong] == [
        ("known::k2", "10.0", "yes", 0.9), ("known::k1", "80.0", "no", 0.8), ("known::k3", "50.0", "no", 0.5)]


def test_violations_at_the_loosest_tolerance_largest_first() -> None:
    records = [conjunction("c1", 40, 60, 45), conjunction("c2", 40, 60, 55), conjunction("c3", 40, 60, 41)]
    aggregates = [agg("conjunction_violation_rate", 1.0, 0.3, 1.0, n=3, suite="axiom-conjunction", tolerance=0.0,
                      detail={"violating_items": ["c1", "c2", "c3"]}),
                  agg("conjunction_violation_rate", 0.67, 0.1, 1.0, n=3, suite="axiom-conjunction", tolerance=2.0,
                      detail={"violating_items": ["c1", "c2"]})]
    (group,) = worst_items(aggregates, records, keep_fifty=False).violations
    assert group.tolerance == 2.0
    assert [(v.label, v.size_text, v.explanation) for v in group.violations] == [
        ("axiom-conjunction::c2", "15.0", "P(a and b) 55.0 > min(P(a), P(b)) 40.0"),
        ("axiom-conjunction::c1", "5.0", "P(a and b) 45.0 > min(P(a), P(b)) 40.0")]
    assert group.title(1) == ("conjunction_violation_rate: 2 violating item(s) in axiom-conjunction / base at "
                              "tolerance 2 pp, 1 largest shown")


def test_violation_explanation_of_a_ladder() -> None:
    prompts = [PromptRecord(f"rung{i}", f"rung {i}", answers(v)) for i, v in enumerate((30, 20, 40, 35), 1)]
    record = ItemRecord("dose", "d1", "base", "dose_response", "d.yaml", "sim:test", prompts, direction="increasing")
    assert violation_size(record) == (15.0, "rungs 30, 20, 40, 35 (should be increasing): 2 reversal(s)")


# --------------------------------------------------------------------------- renderers agree


class FakeReporter:
    """What ``write_summary`` uses of pytest's terminal reporter."""

    def __init__(self, verbose: int = 0) -> None:
        self.lines: list[str] = []
        self.stats: dict[str, list[Any]] = {}
        self.config = type("Config", (), {"getoption": staticmethod(lambda name: verbose)})()

    def write_sep(self, sep: str, title: str, **markup: bool) -> None:
        self.lines.append(f"== {title} ==")

    def write_line(self, text: str, **markup: bool) -> None:
        self.lines.append(text)


@pytest.fixture(scope="module")
def outcome() -> Outcome:
    records = [pair(f"i{i}", [55 + 3 * i + shift, 60], [40 + i, 42], suite=suite, language=lang,
                    domain=("academic", "business")[i % 2])
               for i in range(8) for suite, lang, shift in (("track-b", "en", 0), ("track-b-de", "de", 7))]
    records += [known("k1", [90], False), known("k2", [20], True), known("k3", [70], True)]
    options = AggregateOptions(n_resamples=300)
    aggregates = aggregate(records, options)
    skew = next(a for a in aggregates if a.suite == "track-b" and a.metric == "skew" and a.domain is None)
    verdicts = [Verdict(SKEW_GATE, "track-b", "base", FAIL, skew.value, skew.ci_low, skew.ci_high, n=skew.n,
                        reason="the whole 95% CI lies beyond the bound")]
    return Outcome(aggregates, verdicts, records, [], language_skews(aggregates, records, options))


METADATA = {"model": "sim:test", "seed": 0, "prompt_hash": "abc", "keep_fifty": False, "thresholds": "thresholds.yaml",
            "baseline": None}


def intervals_after(text: str, estimate: str) -> set[str]:
    """Every CI printed right after ``estimate`` (with or without its own column between)."""
    return set(re.findall(re.escape(estimate) + r"(?:\s|</td><td[^>]*>|\s*\|\s*)+(\[[^\]]+\])", text))


def test_skew_interval_text_is_identical_in_terminal_markdown_and_html(outcome: Outcome) -> None:
    model = build_run_model(outcome, METADATA)
    (row,) = [r for r in model.skew.texts(COMPACT) if r[0] == "track-b"]
    estimate, ci = row[3], row[4]
    (english,) = [row[5] for row in model.languages.texts(FULL) if row[:3] == ["track-b", "base", "skew"]]
    assert english == f"{estimate} {ci}"  # the same aggregate
    reporter = FakeReporter()
    write_summary(reporter, outcome, METADATA, has_gates=True)
    terminal = "\n".join(reporter.lines)
    markdown = build_markdown(outcome, METADATA)
    page = build_html(outcome, METADATA)
    for name, text in (("terminal", terminal), ("markdown", markdown), ("html", page)):
        assert intervals_after(text, estimate) == {ci}, name
    assert f"estimate {estimate}, 95% CI {ci}" in terminal and f"estimate {estimate}, 95% CI {ci}" in page
    assert terminal.count(ci) >= 3  # Skew table, gate table and the failure sentence


def test_markdown_and_html_list_the_same_worst_items(outcome: Outcome) -> None:
    model = build_run_model(outcome, METADATA)
    markdown = build_markdown(outcome, METADATA)
    page = build_html(outcome, METADATA)
    for w in model.worst.pairs[:5]:
        assert f"| {w.label} | {w.skew_text} |" in markdown and f"<td>{w.skew_text}</td>" in page
    assert [w.label for w in model.worst.wrong] == ["known::k1", "known::k2"]
    assert "| known::k1 | P(yes) 90.0 |" in markdown and "<td>90.0</td>" in page


# --------------------------------------------------------------------------- several runs


def report(model: str, skew: tuple[float, float, float], gates: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    value, low, high = skew
    aggregates = [
        {"suite": "track-b", "condition": "base", "metric": "skew", "domain": None, "value": value, "ci_low": low,
         "ci_high": high, "n": 60, "tolerance": None},
        {"suite": "track-b", "condition": "base", "metric": "delta_plus", "domain": None, "value": 10.58,
         "ci_low": 7.71, "ci_high": 13.42, "n": 60, "tolerance": None},
        {"suite": "track-b", "condition": "base", "metric": "delta_minus", "domain": None, "value": -2.19,
         "ci_low": None, "ci_high": None, "n": 60, "tolerance": None},
        {"suite": "ax", "condition": "base", "metric": "conjunction_violation_rate", "domain": None, "value": 0.06,
         "ci_low": 0.013, "ci_high": 0.165, "n": 50, "tolerance": 0.0},
        {"suite": "ax", "condition": "base", "metric": "conjunction_violation_rate", "domain": None, "value": 0.0,
         "ci_low": 0.0, "ci_high": 0.07, "n": 50, "tolerance": 2.0},
    ]
    items = [{"suite": "track-b", "item": "i0", "condition": "base", "kind": "inverted_pair", "track": "B",
              "language": "en", "file": "track_b.yaml", "model": model,
              "prompts": [{"role": role, "user": "q", "answers": [{"raw": "60", "value": 60.0}]}
                          for role in ("positive", "negative")]}]
    return {"format": "pytest-optbench-report", "format_version": 1, "run": {"model": model, "seed": 0},
            "items": items, "aggregates": aggregates, "gates": gates or [],
            "languages": {"track_b_skew": [{"language": "en", "skew": value, "ci_low": low, "ci_high": high, "n": 60}]}}


def test_compare_reads_each_reports_stored_aggregates() -> None:
    gate = {"metric": "skew", "suite": "track-b", "condition": "base", "bound_text": "|x| <= 5",
            "bound_kind": "max_abs", "value": 8.39, "verdict": "fail"}
    model = build_compare_model([("m", report("m", (8.391666, 7.786376, 9.073333), [gate])),
                                 ("m", report("m", (0.4, -0.61, 1.42)))])
    assert model.labels == ["m", "m (2)"]
    assert model.key_metrics.texts() == [
        # a violation rate at its default tolerance (2 pp), which the cell says
        ["ax", "conjunction_violation_rate", "0.000 [0.000, 0.070] at tol. 2 pp", "0.000 [0.000, 0.070] at tol. 2 pp"],
        ["track-b", "skew", "+8.4 [+7.8, +9.1]", "+0.4 [-0.6, +1.4]"],
        ["track-b", "delta_plus", "+10.6 [+7.7, +13.4]", "+10.6 [+7.7, +13.4]"],
        ["track-b", "delta_minus", "-2.2 n/a", "-2.2 n/a"],
    ]
    assert model.headline_table.texts()[0] == ["m", "track-b", "60", "+8.4 [+7.8, +9.1]", "+10.6 [+7.7, +13.4]",
                                               "-2.2 n/a"]
    assert model.valence[0].plus_low == 7.71 and math.isnan(model.valence[0].minus_low)
    assert model.gates.texts() == [["skew", "track-b", "base", "|x| <= 5", "FAIL +8.4", ""]]
    assert model.runs_table.texts()[0][-1] == "1 failed, 0 passed, 0 not evaluated"
    page = build_compare_html([("m", report("m", (8.391666, 7.786376, 9.073333)))])
    assert "+8.4 [+7.8, +9.1]" in page


def test_optbench_compare_prints_the_models_cells(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(json.dumps(report("m", (8.391666, 7.786376, 9.073333))))
    second.write_text(json.dumps(report("m", (0.4, -0.61, 1.42))))
    assert optbench_main(["compare", str(first), str(second)]) == 0
    out = capsys.readouterr().out
    assert "2 runs side by side, key metrics under base, estimate [95% CI]:" in out
    assert re.search(r"track-b\s+skew\s+\+8\.4 \[\+7\.8, \+9\.1\]\s+\+0\.4 \[-0\.6, \+1\.4\]", out)


def test_optbench_crosslingual_reads_the_stored_language_table(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    paths = []
    for model, skews in (("m1", (8.0, 6.0)), ("m2", (2.0, 1.0))):
        data = report(model, (0.0, -1.0, 1.0))
        data["languages"]["track_b_skew"] = [{"language": lang, "skew": s, "ci_low": None, "ci_high": None, "n": 60}
                                             for lang, s in zip(("de", "en"), skews, strict=True)]
        path = tmp_path / f"{model}.json"
        path.write_text(json.dumps(data))
        paths.append(str(path))
    assert optbench_main(["crosslingual", *paths]) == 0
    out = capsys.readouterr().out
    assert re.search(r"m1\s+\+8\.0\s+\+6\.0", out) and re.search(r"m2\s+\+2\.0\s+\+1\.0", out)


def test_optbench_compare_names_a_malformed_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = report("m", (1.0, 0.0, 2.0))
    data["aggregates"].append(["not", "an", "object"])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    assert optbench_main(["compare", str(path)]) == 2
    assert capsys.readouterr().err == f"optbench compare: {path}: aggregates[5] is not an object.\n"
