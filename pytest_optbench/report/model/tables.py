"""Every table of one run, decided once from the aggregates, verdicts and comparison.

Renderers draw these tables; they never look an aggregate up themselves, so one Skew has one
text wherever it appears.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ...kinds import DerivedTable
from ...scoring.aggregate import VIOLATION_METRICS, Aggregate
from ...scoring.baseline import Comparison
from ...scoring.crosslingual import LanguageMetric, LanguageSkew, spread
from ...scoring.gates.evaluate import Verdict
from ...scoring.gates.spec import DEFAULT_MULTIPLICITY, EFFECT_METRICS, FAIL, MULTIPLICITY_NAMES, NOT_EVALUATED, PASS
from ...scoring.tolerances import display_rank
from .fmt import (
    Formatter,
    change_formatter,
    change_text,
    ci_text,
    digits,
    estimate_text,
    excludes_zero,
    formatter,
    interval,
    p_text,
    plain,
    tolerance_text,
    value_text,
)
from .table import COMPACT, FULL, STRONG, Cell, Column, Row, Table, count, make_table, number, text
from .table import FAIL as FAIL_TONE
from .table import NOT_EVALUATED as NE_TONE
from .table import PASS as PASS_TONE
from .table import WARN as WARN_TONE


# The metrics every "key metrics" list shows (Markdown, baseline changes, ``optbench
# compare``), in this order; the JSON report has every metric.
# The violation rates come from the item-kind registry, in its order.
def key_metrics() -> tuple[str, ...]:
    return ("skew", "delta_plus", "delta_minus", "calibration_error", "brier", "overconfidence", "auc", "ece",
            "ece_debiased", *VIOLATION_METRICS, "parse_rate", "refusal_rate")


KEY_ORDER: DerivedTable[str, int] = DerivedTable(lambda: {m: i for i, m in enumerate(key_metrics())})
VERDICT_TONE = {PASS: PASS_TONE, FAIL: FAIL_TONE, NOT_EVALUATED: NE_TONE}
VERDICT_ORDER = {FAIL: 0, NOT_EVALUATED: 1, PASS: 2}  # failures first, passes last
NO_SUITE = "(no suite ran)"

AggregateKey = tuple[str, str, str, str | None]


def index_aggregates(aggregates: Iterable[Aggregate]) -> dict[AggregateKey, Aggregate]:
    """(suite, condition, metric, domain) -> aggregate; a violation rate at its default
    tolerance (reports written before the defaults: the lowest they hold)."""
    out: dict[AggregateKey, Aggregate] = {}
    for a in sorted(aggregates, key=lambda a: display_rank(a.metric, a.tolerance), reverse=True):
        out[(a.suite, a.condition, a.metric, a.domain)] = a  # the best-ranked row is written last
    return out


def groups_with(aggregates: Iterable[Aggregate], metric: str) -> list[tuple[str, str]]:
    return sorted({(a.suite, a.condition) for a in aggregates if a.metric == metric and a.domain is None})


# --------------------------------------------------------------------------- cells


def value_cell(metric: str, agg: Aggregate | None) -> Cell:
    """The estimate alone; blank where the metric was not computed."""
    return number("", None) if agg is None else number(value_text(metric, agg.value), agg.value)


def estimate_cell(metric: str, agg: Aggregate | None) -> Cell:
    """The estimate with its 95% CI; blank where the metric was not computed."""
    if agg is None:
        return number("", None)
    return number(estimate_text(metric, agg.value, agg.ci_low, agg.ci_high), agg.value)


def ci_cell(metric: str, agg: Aggregate) -> Cell:
    return number(ci_text(metric, agg.ci_low, agg.ci_high))


def p_cell(p: Any) -> Cell:
    return number(p_text(p), p)


def verdict_text(verdict: str) -> str:
    return verdict if verdict == NOT_EVALUATED else verdict.upper()


# --------------------------------------------------------------------------- Skew


def skew_table(aggregates: Sequence[Aggregate]) -> Table:
    """One row per suite x condition with inverted pairs."""
    index = index_aggregates(aggregates)
    rows = []
    for suite, condition in groups_with(aggregates, "skew"):
        def get(metric: str, suite: str = suite, condition: str = condition) -> Aggregate | None:
            return index.get((suite, condition, metric, None))
        skew = index[(suite, condition, "skew", None)]
        rows.append([
            text(suite), text(condition), count(skew.n), value_cell("skew", skew), ci_cell("skew", skew),
            p_cell(skew.p_value), value_cell("delta_plus", get("delta_plus")),
            value_cell("delta_minus", get("delta_minus")), estimate_cell("delta_plus", get("delta_plus")),
            estimate_cell("delta_minus", get("delta_minus")), text(skew.detail.get("quadrant", "")),
            value_cell("complement_violation", get("complement_violation")),
            value_cell("calibration_error", get("calibration_error")),
            value_cell("refusal_rate", get("refusal_rate")), value_cell("parse_rate", get("parse_rate")),
        ])
    # The terminal shows d+ and d- alone; the HTML page with their CIs.
    columns: list[Column | str] = [
        "suite", "condition", "n", "skew", "95% CI", "p", Column("d+", (COMPACT,)), Column("d-", (COMPACT,)),
        Column("d+ [95% CI]", (FULL,)), Column("d- [95% CI]", (FULL,)), "quadrant", "|sum-100|", "vs stated",
        "refusal", "parse"]
    return make_table("skew", "Skew of inverted pairs (pp)", columns, rows, notes=(
        ("Skew = mean over pairs of P(success) - (100 - P(failure)), in pp; d+ and d- are how far the answers to "
         "the good- and bad-outcome questions sit from 50 (Skew = d+ + d-). The quadrant is named only when "
         "Skew's CI excludes 0. p: test of a zero mean from the CI's own bootstrap-t/Student distribution (p < 0.05 "
         "exactly when the CI excludes 0; the JSON report keeps the paper's Wilcoxon p as p_wilcoxon). "
         "|sum-100|: mean unsigned complement violation; vs stated: mean distance from the stated rate (Track A); refusal: share of answers of exactly 50."),))


def domain_table(aggregates: Sequence[Aggregate]) -> Table:
    """Skew per domain, for every suite x condition with domain labels."""
    rows = [[text(a.suite), text(a.condition), text(a.domain), count(a.n), value_cell("skew", a), ci_cell("skew", a),
             p_cell(a.p_value)]
            for a in sorted((a for a in aggregates if a.metric == "skew" and a.domain),
                            key=lambda a: (a.suite, a.condition, a.domain or ""))]
    return make_table("domains", "Skew by domain (pp)", ["suite", "condition", "domain", "n", "skew", "95% CI", "p"],
                      rows)


# --------------------------------------------------------------------------- other families


def _metric_table(key: str, title: str, aggregates: Sequence[Aggregate], key_metric: str, n_header: str,
                  columns: Sequence[tuple[Column | str, str, bool]], notes: Sequence[str] = ()) -> Table:
    """One row per suite x condition that has ``key_metric``; columns are (column, metric,
    with its CI). A metric not computed for a group is a blank cell."""
    index = index_aggregates(aggregates)
    rows = []
    for suite, condition in groups_with(aggregates, key_metric):
        row = [text(suite), text(condition), count(index[(suite, condition, key_metric, None)].n)]
        for _column, metric, with_ci in columns:
            agg = index.get((suite, condition, metric, None))
            row.append(estimate_cell(metric, agg) if with_ci else value_cell(metric, agg))
        rows.append(row)
    return make_table(key, title, ["suite", "condition", n_header, *(c[0] for c in columns)], rows, notes)


def binary_table(aggregates: Sequence[Aggregate]) -> Table:
    """Known-answer items: the calibration paper's headline numbers."""
    return _metric_table("binary", "known-answer items", aggregates, "brier", "n", [
        ("brier [95% CI]", "brier", True), ("climatology", "climatology_brier", False),
        ("skill", "brier_skill", False), ("overconf. [95% CI]", "overconfidence", True), ("ece", "ece", False),
        ("ece debiased", "ece_debiased", False),
        ("auc [95% CI]", "auc", True), (Column("accuracy", (FULL,)), "accuracy", False),
        ("shrink a", "shrinkage_a", False), ("recal. brier", "brier_recalibrated", False),
    ], notes=(("Overconfidence = mean confidence in the chosen side - accuracy (0 when calibrated); "
              "skill = 1 - Brier / climatology Brier; ece: plug-in ECE over 10 bins (biased upward near 0); "
              "ece debiased: Kumar, Liang and Ma's debiased estimator (docs/statistics.md)."),))


def quality_table(aggregates: Sequence[Aggregate]) -> Table:
    """Answer quality per suite x condition (n: answers received)."""
    return _metric_table("quality", "answer quality", aggregates, "parse_rate", "answers", [
        ("parse rate [95% CI]", "parse_rate", True), ("refusal rate", "refusal_rate", False),
        ("error rate [95% CI]", "error_rate", True), ("item SD (pp)", "item_sd", False),
    ])


def readings_table(records: Iterable[Any]) -> Table:
    """Text answers by the extractor's rule that decided their reading (``Answer.rule``):
    how many, how many gave a value, how many none. Answers without a rule (logprobs and
    json-mode readings, failed calls, reports written before rules were kept) are not counted."""
    counts: dict[str, list[int]] = {}
    for record in records:
        for answer in record.answers():
            if answer.rule is None:
                continue
            row = counts.setdefault(answer.rule, [0, 0])
            row[0 if answer.value is not None else 1] += 1
    rows = [[text(name), count(v + n), count(v), count(n)]
            for name, (v, n) in sorted(counts.items(), key=lambda kv: (-sum(kv[1]), kv[0]))]
    return make_table("readings", "text answers by the rule that read them",
                      ["rule", "answers", "with a value", "no answer"], rows, notes=(
                          ("rule: the extractor's rule that decided each text answer's reading "
                           "(docs/answer-extraction.md; optbench explain \"REPLY\" shows it for one reply)."),))


def loosest_violations(aggregates: Iterable[Aggregate]) -> list[Aggregate]:
    """Per battery x suite x condition, the violation rate at the loosest tolerance computed
    (a gate's tolerance when one is set), sorted."""
    loosest: dict[tuple[str, str, str], Aggregate] = {}
    for a in aggregates:
        if a.domain is None and a.metric in VIOLATION_METRICS:
            key = (a.suite, a.condition, a.metric)
            if key not in loosest or (a.tolerance or 0) > (loosest[key].tolerance or 0):
                loosest[key] = a
    return [loosest[k] for k in sorted(loosest)]


def coherence_table(aggregates: Sequence[Aggregate], every_tolerance: bool = False) -> Table:
    """Axiom violation rates: at the loosest tolerance computed, or at each."""
    if every_tolerance:
        chosen = [a for a in aggregates if a.domain is None and a.metric in VIOLATION_METRICS]
    else:
        chosen = loosest_violations(aggregates)
    rows = [[text(a.suite), text(a.condition), text(a.metric),
             number(tolerance_text(a.tolerance or 0), a.tolerance or 0), count(a.n), estimate_cell(a.metric, a)]
            for a in sorted(chosen, key=lambda a: (a.suite, a.condition, a.metric, a.tolerance or 0))]
    return make_table("coherence", "axiom violations (n = checks)",
                      ["suite", "condition", "metric", "tol. pp", "n", "estimate [95% CI]"], rows, notes=(
                          ("Violation rate: share of checks an item fails by more than the tolerance (pp), with an "
                          "exact Clopper-Pearson 95% CI."),))


def effects_table(aggregates: Sequence[Aggregate]) -> Table:
    """Paired effects of each arm against base (pp)."""
    rows = [[text(a.suite), text(a.condition), text(a.metric), count(a.n), estimate_cell(a.metric, a),
             p_cell(a.p_value), p_cell(a.detail.get("p_equivalence"))]
            for a in sorted((a for a in aggregates if a.metric in EFFECT_METRICS),
                            key=lambda a: (a.suite, a.condition, a.metric))]
    return make_table("effects", "condition effects against base (pp)", [
        "suite", "arm", "metric", "n", "effect [95% CI]", "p", Column("p (equivalence, |d| < 2 pp)", (FULL,))],
        rows, notes=(("Paired by item; p: sign-flip permutation test; p (equivalence): TOST against +-2 pp. "
                     "condition_effect: P+ (pairs) or mean answer; skew_effect: per-pair Skew; "
                     "narrative_susceptibility: narrative_up - narrative_down."),))


def key_metrics_table(aggregates: Sequence[Aggregate]) -> Table:
    """The key metrics under base, each violation rate at its default tolerance (shown)."""
    chosen = [a for key, a in index_aggregates(aggregates).items()
              if key[3] is None and key[1] == "base" and key[2] in KEY_ORDER]
    rows = [[text(a.suite), text(a.metric), text(tolerance_text(a.tolerance) if a.tolerance is not None else ""),
             count(a.n), estimate_cell(a.metric, a), p_cell(a.p_value)]
            for a in sorted(chosen, key=lambda a: (a.suite, KEY_ORDER[a.metric]))]
    return make_table("key-metrics", "key metrics (base condition)",
                      ["suite", "metric", "tol. pp", "n", "estimate [95% CI]", "p"], rows,
                      notes=(("A violation rate counts the checks an item fails by more than its tolerance (pp); "
                              "each rate is shown at its default tolerance (docs/suite-format.md)."),))


# --------------------------------------------------------------------------- gates


def gate_value_formatter(verdict: Verdict) -> Formatter:
    """A change gate's value is a change (always signed); any other gate's is the metric's."""
    return change_formatter(verdict.gate.metric) if verdict.gate.is_change else formatter(verdict.gate.metric)


def gate_evidence(verdict: Verdict) -> tuple[str, str]:
    """(estimate, 95% CI) texts of a verdict."""
    fmt = gate_value_formatter(verdict)
    return fmt(verdict.value), interval(verdict.ci_low, verdict.ci_high, fmt)


def sorted_verdicts(verdicts: Iterable[Verdict]) -> list[Verdict]:
    return sorted(verdicts, key=lambda v: VERDICT_ORDER[v.verdict])


def detectable_text(verdict: Verdict) -> str:
    """The smallest crossing of the bound the gate detects with 80% power (unsigned)."""
    return "" if verdict.detectable is None else plain(verdict.detectable, digits(verdict.gate.metric))


def gate_table(verdicts: Sequence[Verdict], thresholds: str | None = None,
               multiplicity: str | None = None) -> Table:
    """One row per verdict: failures first, then not evaluated, then passes."""
    rows = []
    method = gate_multiplicity(verdicts, multiplicity)
    for v in sorted_verdicts(verdicts):
        estimate, ci = gate_evidence(v)
        tone = VERDICT_TONE[v.verdict]
        cells = (text(v.suite or NO_SUITE), text(v.condition or ""), text(v.gate.metric),
                 text("" if v.gate.tolerance_used is None else f"{tolerance_text(v.gate.tolerance_used)} pp"),
                 number(estimate if v.value is not None else "", v.value), number(ci), text(v.gate.bound_text),
                 text(v.gate.evidence), count(v.n), p_cell(v.p_crossing), p_cell(v.p_adjusted),
                 number(detectable_text(v), v.detectable, WARN_TONE if v.underpowered else ""),
                 Cell(verdict_text(v.verdict), tone=tone))
        rows.append(Row(cells, tone))
    adjusted = f"p adj. ({MULTIPLICITY_NAMES[method]})" if method != "none" else "p adj. (none)"
    columns: list[Column | str] = [
        "suite", "condition", "metric", "tol.", "estimate", "95% CI", "bound", "evidence",
        Column("n", (FULL,)), Column("p crossed", (FULL,)), Column(adjusted, (FULL,)), "detectable", "verdict"]
    return make_table("gates", f"gates from {thresholds or 'thresholds.yaml'}", columns, rows, notes=(
        ("evidence point: the estimate must hold the bound; ci: fail only when the whole 95% CI lies beyond it "
         "and, corrected for the session's CI gates, the p that the bound is crossed stays below 0.025. "
         "p crossed: one-sided p of \"the true value lies beyond the bound\"; p adj.: the same, corrected over "
         "the CI gates. detectable: how far beyond the bound the truth must lie for a CI gate to fail it with 80% "
         "power at this number of items (one-sided 2.5%)."),
        gate_family_text(verdicts, multiplicity)))


def gate_multiplicity(verdicts: Sequence[Verdict], multiplicity: str | None = None) -> str:
    """The correction the CI gates were judged under (the run's setting, else the verdicts')."""
    if multiplicity in MULTIPLICITY_NAMES:
        return str(multiplicity)
    return next((v.multiplicity for v in verdicts if v.multiplicity), DEFAULT_MULTIPLICITY)


def gate_family_text(verdicts: Sequence[Verdict], multiplicity: str | None = None) -> str:
    """Which gates were corrected together, and how: the summary states it under the gates."""
    method = gate_multiplicity(verdicts, multiplicity)
    family = max((v.family_size for v in verdicts), default=0)
    point = sum(v.gate.evidence == "point" and v.verdict != NOT_EVALUATED for v in verdicts)
    if method == "none":
        head = f"multiplicity: none; each of the {family} evaluated CI gate(s) decides on its own 95% CI"
    else:
        what = "family-wise error" if method == "holm" else "false discovery rate"
        head = (f"multiplicity: {MULTIPLICITY_NAMES[method]} over {family} evaluated CI gate(s) ({what} at "
                f"2.5% one-sided)")
    return head + (f"; {point} point gate(s) decide on the estimate alone" if point else "")


def power_sentences(verdicts: Sequence[Verdict]) -> list[str]:
    """CI gates whose data cannot tell the ideal value from one well beyond the bound: one
    sentence per gate of the thresholds file, however many suites it applies to."""
    groups: dict[tuple[str, str], list[Verdict]] = {}
    for v in verdicts:
        if v.underpowered and v.detectable is not None:
            groups.setdefault((v.gate.metric, v.gate.bound_text), []).append(v)
    out = []
    advice = ("more than the bound's distance from the ideal value; add items or samples "
              "(optbench power REPORT.json says how many)")
    for (metric, bound), group in groups.items():
        if len(group) == 1:
            v = group[0]
            out.append(f"gate {metric} {bound} on {v.suite}/{v.condition} is underpowered: with n = {v.n} its CI "
                       f"detects a crossing only of {detectable_text(v)} or more (80% power), {advice}")
            continue
        where = ", ".join(f"{v.suite}/{v.condition}" for v in group[:3])
        where += f" and {len(group) - 3} more" if len(group) > 3 else ""
        ns = sorted({v.n for v in group if v.n is not None})
        n_text = f"n = {ns[0]}" if len(ns) == 1 else f"n = {ns[0]} to {ns[-1]}"
        by_size = sorted(group, key=lambda v: v.detectable or 0.0)
        low, high = detectable_text(by_size[0]), detectable_text(by_size[-1])
        crossing = low if low == high else f"{low} to {high}"
        out.append(f"gate {metric} {bound} is underpowered on {len(group)} suite/condition pairs ({where}): with "
                   f"{n_text} their CIs detect a crossing only of {crossing} or more (80% power), {advice}")
    return out


def gate_message(verdict: Verdict) -> str:
    """One gate's verdict in one line (the JUnit test case's message)."""
    estimate, ci = gate_evidence(verdict)
    return (f"{verdict.gate.metric} {verdict.gate.bound_text}{_at_tolerance(verdict)} ({verdict.gate.evidence}): "
            f"estimate {estimate}, 95% CI {ci}; {verdict.reason}")


def _at_tolerance(verdict: Verdict) -> str:
    tolerance = verdict.gate.tolerance_used
    return "" if tolerance is None else f" at tolerance {tolerance:g} pp"


def failure_sentences(verdicts: Sequence[Verdict], comparison: Comparison | None = None) -> list[str]:
    """One sentence per failed gate; a failed change gate also names what changed against the
    baseline (the model's declared version, the served model, settings, prompts)."""
    changed = changed_text(comparison) if comparison is not None else ""
    out = []
    for v in verdicts:
        if v.verdict == FAIL:
            estimate, ci = gate_evidence(v)
            also = f"; against the baseline, {changed}" if changed and v.gate.is_change else ""
            out.append(f"gate {v.gate.metric} {v.gate.bound_text}{_at_tolerance(v)} ({v.gate.evidence}) failed on "
                       f"{v.suite}/{v.condition}: estimate {estimate}, 95% CI {ci} ({v.reason}){also}")
    return out


def changed_text(comparison: Comparison) -> str:
    """What differs from the baseline run, in one clause ("" when nothing does)."""
    parts = [d.split(" (", 1)[0] for d in comparison.setting_differences]
    if comparison.changed_suites:
        parts.append(f"the prompts of {', '.join(comparison.changed_suites)} changed")
    return "; ".join(parts)


def not_evaluated_sentences(verdicts: Sequence[Verdict]) -> list[str]:
    unmatched = [f"{v.gate.metric} {v.gate.bound_text}" for v in verdicts
                 if v.verdict == NOT_EVALUATED and v.suite is None]
    out = [f"gate {v.gate.metric} {v.gate.bound_text} on {v.suite}/{v.condition} not evaluated: {v.reason}"
           for v in verdicts if v.verdict == NOT_EVALUATED and v.suite is not None]
    if unmatched:
        out.append(f"not evaluated, no suite that ran matches: {'; '.join(unmatched)}")
    return out


# --------------------------------------------------------------------------- baseline


def change_table(comparison: Comparison, baseline: str | None = None) -> Table:
    """The key metrics' changes: baseline, now, change with its paired 95% CI and p."""
    rows = []
    key_changes = [c for c in comparison.changes if c.metric in KEY_ORDER]
    for c in sorted(key_changes, key=lambda c: (c.suite, c.condition, KEY_ORDER[c.metric], c.tolerance or 0)):
        fmt = formatter(c.metric)
        strong = excludes_zero(c.ci_low, c.ci_high)
        rows.append([text(c.suite), text(c.condition), text(c.metric), text(tolerance_text(c.tolerance)), count(c.n),
                     number(fmt(c.baseline), c.baseline),
                     number(fmt(c.current), c.current),
                     number(change_text(c.metric, c.delta, c.ci_low, c.ci_high), c.delta, STRONG if strong else ""),
                     p_cell(c.p_value)])
    title = f"changes against the baseline {baseline} (paired by item)" if baseline else \
        "changes against the baseline (paired by item)"
    columns = ["suite", "condition", "metric", "tol. pp", "n", "baseline", "now", "change [95% CI]", "p"]
    return make_table("baseline", title, columns,
                      rows, notes=(("Changes are paired by item, over the items both runs answered; a change whose "
                                   "95% CI excludes 0 is marked."),))


def baseline_notes(comparison: Comparison, shown: int = 5) -> list[str]:
    """What makes the comparison less than like for like, one sentence each."""
    out = [f"baseline differs: {d}" for d in comparison.setting_differences]
    if comparison.changed_suites:
        out.append(f"baseline differs: the prompts of {', '.join(comparison.changed_suites)} changed")
    if comparison.changed_prompts:
        out.append(f"baseline differs: {len(comparison.changed_prompts)} item(s) were asked with a different prompt")
    for label, items in (("only in this run", comparison.only_current),
                         ("only in the baseline", comparison.only_baseline)):
        if items:
            listed = ", ".join(items[:shown]) + (f" and {len(items) - shown} more" if len(items) > shown else "")
            out.append(f"{len(items)} item(s) {label}, not compared: {listed}")
    return out


# --------------------------------------------------------------------------- languages


def language_columns(languages: Iterable[str]) -> list[str]:
    """English first (the source of the translations), then the others in order."""
    return sorted(set(languages), key=lambda lang: (lang.lower() not in ("en", "en-us", "en-gb"), lang))


def _n_text(ns: Sequence[int]) -> Cell:
    low, high = min(ns), max(ns)
    return Cell(str(low) if low == high else f"{low}-{high}", float(high), True)


def language_rows(metrics: Sequence[LanguageMetric], languages: Sequence[str],
                  labels: Sequence[Cell] = ()) -> list[list[Cell]]:
    """One row per bank x condition x metric: its names, the extra ``labels`` (a model), n,
    each language's value (compact) and estimate with its CI (full), and the inter-language SD."""
    by_row: dict[tuple[str, str, str, float | None], dict[str, LanguageMetric]] = {}
    for m in metrics:
        by_row.setdefault(m.row, {}).setdefault(m.language, m)
    rows = []
    for (bank, condition, metric, tolerance), cells in by_row.items():
        row = [text(bank), text(condition), text(metric), text(tolerance_text(tolerance)), *labels,
               _n_text([m.n for m in cells.values()])]
        for language in languages:
            cell = cells.get(language)
            row.append(number("", None) if cell is None else number(value_text(metric, cell.value), cell.value))
            row.append(number("", None) if cell is None else
                       number(estimate_text(metric, cell.value, cell.ci_low, cell.ci_high), cell.value))
        sd = spread([m.value for m in cells.values()])
        row.append(number(plain(sd, digits(metric)) if len(cells) >= 2 else "", sd))  # blank: one language
        rows.append(row)
    return rows


def language_value_columns(languages: Sequence[str]) -> list[Column]:
    """Per language a value column (terminal, Markdown) and an estimate [95% CI] one (HTML)."""
    return [c for lang in languages for c in (Column(lang, (COMPACT,)), Column(lang, (FULL,)))]


LANGUAGE_NOTE = ("Each suite row is a bank: the English suite and its translations (a translation's id is the "
                 "English id followed by -<language>). Condition effects are paired by item against base in each "
                 "language; a violation rate is shown at its default tolerance. SD: the standard deviation of the "
                 "row's values across languages.")


def language_spread_text(languages: Sequence[LanguageSkew]) -> str:
    return plain(spread([s.skew for s in languages]), 1)


def language_table(metrics: Sequence[LanguageMetric], headline: Sequence[LanguageSkew] = ()) -> Table:
    """Every metric that exists per language, one column per language, when more than one
    language ran (scoring/crosslingual.py decides the cells); the title gives the paper's
    headline, the inter-language SD of Track B Skew under base."""
    languages = language_columns(m.language for m in metrics)
    rows = language_rows(metrics, languages) if len(languages) >= 2 else []
    sd = language_spread_text(headline)
    return make_table("languages", f"by language (Track B Skew under base: inter-language SD {sd} pp)",
                      ["suite", "condition", "metric", "tol. pp", "n", *language_value_columns(languages), "SD"],
                      rows, notes=(LANGUAGE_NOTE,))
