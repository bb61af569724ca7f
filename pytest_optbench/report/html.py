"""The HTML report: one self-contained file a browser opens without a network.

Figures are PNGs embedded as ``data:`` URIs, the CSS is inline, there is no JavaScript, and a
Content-Security-Policy forbids every fetch, so the file can be attached to a CI run or
mailed. Every string that comes from the data (item text, ids, raw answers, metadata) goes
through ``html.escape``; markup is only ever produced by the small helpers below.
"""

from __future__ import annotations

import base64
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from ..scoring.aggregate import VIOLATION_METRICS, Aggregate, binary_data, pair_answers, seeded_rng
from ..scoring.baseline import Comparison
from ..scoring.crosslingual import LanguageSkew, headline_pairs, spread
from ..scoring.gates import FAIL, NOT_EVALUATED, PASS, Verdict
from ..metrics import axioms
from ..metrics.skew import pair_skews
from ..metrics.stats import DEFAULT_RESAMPLES, bootstrap_ci
from ..scoring.outcome import Outcome
from ..scoring.tolerances import display_rank, is_default_tolerance, tolerance_text
from ..records import ItemRecord
from . import plots
from .json_report import write_text
from .terminal import (
    KEY_CHANGE_METRICS, SIGNED_PP, UNSIGNED_PP, failure_sentences, formatter, interval, metric_value_text,
    not_evaluated_sentences, p_text, plain, signed,
)

EFFECT_METRICS = ("condition_effect", "skew_effect", "narrative_susceptibility")
WORST_SHOWN = 10  # rows per "worst items" table
VIOLATIONS_SHOWN = 8  # violating items shown per battery and suite
LIST_SHOWN = 50  # ids shown of "only in one run" lists
VERDICT_CLASS = {PASS: "pass", FAIL: "fail", NOT_EVALUATED: "ne"}
COMPARE_METRICS = ("skew", "delta_plus", "delta_minus", "calibration_error", "brier", "overconfidence", "auc",
                   "ece", "conjunction_violation_rate", "disjunction_violation_rate", "conditional_violation_rate",
                   "dose_response_violation_rate", "parse_rate", "refusal_rate")

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;color:#1d1d1f;
  margin:0;background:#f6f7f9}
main{max-width:1240px;margin:0 auto;padding:16px 28px 48px;background:#fff}
h1{font-size:24px;margin:8px 0 4px}h2{font-size:19px;margin:32px 0 8px;padding-top:8px;border-top:1px solid #ddd}
h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0 12px;font-size:12.5px}
th,td{border:1px solid #d5d8dc;padding:3px 7px;text-align:left;vertical-align:top;white-space:nowrap}
td.wrap{white-space:normal;min-width:150px;max-width:560px}
.scroll{overflow-x:auto}
th{background:#eef1f4;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.pass{background:#dff3e3;color:#14532d;font-weight:600}td.fail{background:#fbe0e0;color:#8b1111;font-weight:700}
td.ne{background:#fff4cc;color:#6b5500}
.banner{padding:10px 14px;border-radius:6px;font-weight:600;margin:10px 0}
.banner.fail{background:#fbe0e0;color:#8b1111}.banner.pass{background:#dff3e3;color:#14532d}
.banner.ne{background:#eef1f4;color:#333}
.note{color:#555;font-size:12.5px;margin:4px 0}.note.warn{color:#8a5a00}.note.fail{color:#8b1111;font-weight:600}
.q{white-space:pre-wrap;font-size:12px;margin:2px 0;max-width:620px}.q b{color:#444}
figure{margin:10px 0 18px}figure img{max-width:100%;height:auto;border:1px solid #e3e3e3}
figcaption{font-size:12.5px;color:#555;max-width:900px}
nav ul{columns:3;font-size:13px;padding-left:18px}
dl.meta{display:grid;grid-template-columns:max-content minmax(0,1fr) max-content minmax(0,1fr);gap:2px 12px;
  font-size:12.5px;margin:6px 0 12px}
dl.meta dt{font-weight:600;color:#444}dl.meta dd{margin:0;overflow-wrap:anywhere}
"""
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


# --------------------------------------------------------------------------- markup helpers


def esc(value: object) -> str:
    return escape(str(value), quote=True)


@dataclass(frozen=True)
class Cell:
    """A table cell: its text (escaped when rendered) and an optional CSS class."""

    text: str
    css: str = ""


CellLike = str | Cell


def _td(cell: CellLike) -> str:
    cell = cell if isinstance(cell, Cell) else Cell(str(cell))
    css = f' class="{esc(cell.css)}"' if cell.css else ""
    return f"<td{css}>{esc(cell.text)}</td>"


def html_table(header: Sequence[str], rows: Iterable[Sequence[CellLike]]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(_td(c) for c in row) + "</tr>" for row in rows)
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def raw_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A table whose cells are already markup (built only from ``esc``-ed parts); the last
    column wraps."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row[:-1]) + f'<td class="wrap">{row[-1]}</td></tr>'
                   for row in rows)
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def num(text: str) -> Cell:
    return Cell(text, "num")


def definition_list(pairs: Iterable[tuple[str, str]]) -> str:
    return '<dl class="meta">' + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in pairs) + "</dl>"


def note(text: str, warn: bool = False) -> str:
    return f'<p class="note{" warn" if warn else ""}">{esc(text)}</p>'


def section(anchor: str, title: str, body: str) -> str:
    return f'<section id="{esc(anchor)}"><h2>{esc(title)}</h2>{body}</section>'


def figure(png: bytes, alt: str, caption: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return (f'<figure><img src="data:image/png;base64,{data}" alt="{esc(alt)}">'
            f"<figcaption>{esc(caption)}</figcaption></figure>")


def safe_figure(draw: Callable[[], bytes], alt: str, caption: str) -> str:
    """A figure, or a visible note when it cannot be drawn: a plotting bug never costs the report."""
    try:
        return figure(draw(), alt, caption)
    except Exception as exc:  # noqa: BLE001 - shown in the page, not swallowed
        return note(f"figure '{alt}' could not be drawn: {type(exc).__name__}: {exc}", warn=True)


def document(title: str, sections: Sequence[tuple[str, str, str]], header: str) -> str:
    """The page: head with CSP and CSS, a table of contents, then the non-empty sections."""
    shown = [(a, t, b) for a, t, b in sections if b]
    toc = "".join(f'<li><a href="#{esc(a)}">{esc(t)}</a></li>' for a, t, _ in shown)
    body = "".join(section(a, t, b) for a, t, b in shown)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body><main>"
        f"<h1>{esc(title)}</h1>{header}<nav><ul>{toc}</ul></nav>{body}</main></body></html>\n"
    )


def write_html(path: Path, text: str) -> None:
    """Write atomically (see ``json_report.write_text``)."""
    write_text(Path(path), text)


# --------------------------------------------------------------------------- small data helpers


def _finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def _ci_text(metric: str, low: float | None, high: float | None) -> str:
    return interval(low, high, formatter(metric))


def _value_ci(metric: str, agg: Aggregate | None) -> str:
    return "" if agg is None else metric_value_text(metric, agg.value, agg.ci_low, agg.ci_high)


AggregateKey = tuple[str, str, str, str | None]


def index_aggregates(aggregates: Iterable[Aggregate]) -> dict[AggregateKey, Aggregate]:
    """(suite, condition, metric, domain) -> aggregate, at the default tolerance for violation rates."""
    return {(a.suite, a.condition, a.metric, a.domain): a for a in aggregates
            if is_default_tolerance(a.metric, a.tolerance)}


def groups_with(aggregates: Iterable[Aggregate], metric: str) -> list[tuple[str, str]]:
    return sorted({(a.suite, a.condition) for a in aggregates if a.metric == metric and a.domain is None})


def _flat(value: Any) -> str:
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {_flat(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_flat(v) for v in value) if value else "(none)"
    return "(not set)" if value is None else str(value)


SENTENCE_END = re.compile(r"(?<=[.?!])\s+|(?<=[\u3002\uff1f\uff01\u0964])\s*|\n+")


def sentences(text: str) -> list[str]:
    """The text cut after each sentence end (Latin, CJK and Devanagari stops) and line break."""
    return [part for part in SENTENCE_END.split(text) if part.strip()]


def differing_part(first: str, text: str) -> str:
    """``text`` without the sentences it shares with ``first`` at its start and end; an
    ellipsis marks what was cut."""
    a, b = sentences(first), sentences(text)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    middle = b[head:len(b) - tail]
    if not middle:
        return text
    return ("... " if head else "") + " ".join(middle) + (" ..." if tail else "")


def prompt_texts(record: ItemRecord) -> list[tuple[str, str]]:
    """(role, text) per prompt: the first in full, each other one only where it differs from
    the first (the prompts of an item repeat its scenario)."""
    first = record.prompts[0].user if record.prompts else ""
    return [(p.role, p.user if i == 0 else differing_part(first, p.user)) for i, p in enumerate(record.prompts)]


def _question_block(record: ItemRecord, means: Mapping[str, float] | None = None) -> str:
    parts = []
    for role, text in prompt_texts(record):
        label = role if means is None else f"{role} ({signed(means[role], 1).lstrip('+')})"
        parts.append(f'<div class="q"><b>{esc(label)}:</b> {esc(text)}</div>')
    return "".join(parts)


def _label(record: ItemRecord) -> str:
    return record.item if record.condition == "base" else f"{record.item} [{record.condition}]"


# --------------------------------------------------------------------------- run and gates


def metadata_section(outcome: Outcome, metadata: Mapping[str, Any]) -> str:
    models = sorted({r.model for r in outcome.records})
    pairs = [
        ("models answering", ", ".join(models) or "(none)"),
        ("item x condition results", str(len(outcome.records))),
        ("languages", ", ".join(sorted({r.language for r in outcome.records})) or "(none)"),
        ("suites", ", ".join(sorted({r.suite for r in outcome.records})) or "(none)"),
    ]
    pairs += [(str(key), _flat(value)) for key, value in metadata.items()]
    body = definition_list(pairs)
    for text in outcome.notes():
        body += note(f"provider note: {text}", warn=True)
    if outcome.missing:
        body += note(f"{len(outcome.missing)} item(s) failed without sending answers; aggregates cover only the "
                     "items that reported:", warn=True)
        body += html_table(["item"], [[m] for m in outcome.missing])
    return body


def gate_banner(verdicts: Sequence[Verdict]) -> str:
    failed = sum(v.verdict == FAIL for v in verdicts)
    passed = sum(v.verdict == PASS for v in verdicts)
    rest = len(verdicts) - failed - passed
    if not verdicts:
        return '<div class="banner ne">No gates: no thresholds file was used.</div>'
    css = "fail" if failed else "ne" if rest else "pass"  # a gate that judged nothing is no pass
    return (f'<div class="banner {css}">optbench gates: {failed} failed, {passed} passed, '
            f"{rest} not evaluated</div>")


VERDICT_ORDER = {FAIL: 0, NOT_EVALUATED: 1, PASS: 2}


def gate_rows(verdicts: Sequence[Verdict]) -> list[list[CellLike]]:
    """One row per verdict, failures first, then not evaluated, then passes."""
    rows: list[list[CellLike]] = []
    for v in sorted(verdicts, key=lambda v: VERDICT_ORDER[v.verdict]):
        metric = v.gate.metric
        tolerance = tolerance_text(v.gate.tolerance_used)
        verdict = v.verdict.upper() if v.verdict != NOT_EVALUATED else v.verdict
        rows.append([v.suite or "(no suite ran)", v.condition or "", metric, tolerance,
                     num(metric_value_text(metric, v.value) if v.value is not None else ""),
                     num(_ci_text(metric, v.ci_low, v.ci_high)), v.gate.bound_text, v.gate.evidence,
                     num(str(v.n)), num(p_text(v.p_holm)), Cell(verdict, VERDICT_CLASS[v.verdict])])
    return rows


def gates_section(verdicts: Sequence[Verdict]) -> str:
    if not verdicts:
        return ""
    header = ["suite", "condition", "metric", "tolerance", "estimate", "95% CI", "bound", "evidence", "n",
              "p (Holm)", "verdict"]
    sentences = "".join(f'<p class="note fail">{esc(s)}</p>' for s in failure_sentences(verdicts))
    sentences += "".join(note(s, warn=True) for s in not_evaluated_sentences(verdicts))
    return sentences + html_table(header, gate_rows(verdicts)) + note(
        "evidence point: the estimate must hold the bound; ci: fail only when the whole 95% CI lies beyond it. "
        "p (Holm): the aggregate's own test, adjusted over every evaluated gate.")


# --------------------------------------------------------------------------- metric tables


def skew_rows(aggregates: Sequence[Aggregate]) -> list[list[CellLike]]:
    index = index_aggregates(aggregates)
    rows: list[list[CellLike]] = []
    for suite, condition in groups_with(aggregates, "skew"):
        skew = index[(suite, condition, "skew", None)]
        get = lambda m: index.get((suite, condition, m, None))  # noqa: E731
        refusal, parse = get("refusal_rate"), get("parse_rate")
        rows.append([suite, condition, num(str(skew.n)), num(signed(skew.value)),
                     num(interval(skew.ci_low, skew.ci_high)), num(p_text(skew.p_value)),
                     num(_value_ci("delta_plus", get("delta_plus"))), num(_value_ci("delta_minus", get("delta_minus"))),
                     str(skew.detail.get("quadrant", "")),
                     num(plain(refusal.value, 2) if refusal else "n/a"), num(plain(parse.value, 2) if parse else "n/a")])
    return rows


def skew_section(aggregates: Sequence[Aggregate]) -> str:
    rows = skew_rows(aggregates)
    if not rows:
        return ""
    header = ["suite", "condition", "n", "skew", "95% CI", "p", "d+ [95% CI]", "d- [95% CI]", "quadrant",
              "refusal", "parse"]
    return html_table(header, rows) + note(
        "Skew = mean over pairs of P(success) - (100 - P(failure)), in pp; d+ and d- are how far the answers to "
        "the good- and bad-outcome questions sit from 50 (Skew = d+ + d-). The quadrant is named only when "
        "the CIs of Skew, d+ and d- all exclude 0; where only one part's CI does, the label names that side "
        "(good-side or bad-side optimism or pessimism) and says which part is not distinguishable from 0. "
        "p: Wilcoxon signed-rank.")


def domain_estimates(aggregates: Sequence[Aggregate]) -> list[plots.Estimate]:
    """Per-domain Skew under ``base`` (the gated arm); the suite is named when several have domains."""
    rows = [a for a in aggregates if a.metric == "skew" and a.domain and a.condition == "base"]
    several = len({a.suite for a in rows}) > 1
    return [plots.Estimate(f"{a.suite}: {a.domain}" if several else str(a.domain), a.value, a.ci_low, a.ci_high)
            for a in sorted(rows, key=lambda a: (a.suite, a.domain or ""))]


def domain_section(aggregates: Sequence[Aggregate]) -> str:
    rows = [a for a in aggregates if a.metric == "skew" and a.domain and a.condition == "base"]
    if not rows:
        return ""
    table = html_table(["suite", "domain", "n", "skew", "95% CI", "p"], [
        [a.suite, str(a.domain), num(str(a.n)), num(signed(a.value)), num(interval(a.ci_low, a.ci_high)),
         num(p_text(a.p_value))] for a in sorted(rows, key=lambda a: (a.suite, a.domain or ""))])
    return safe_figure(lambda: plots.skew_by_domain(domain_estimates(aggregates)), "Skew by domain",
                       "Skew per domain under the base condition, with 95% bootstrap CIs.") + table


def _metric_rows(aggregates: Sequence[Aggregate], key_metric: str,
                 columns: Sequence[tuple[str, str, bool]]) -> list[list[CellLike]]:
    index = index_aggregates(aggregates)
    rows: list[list[CellLike]] = []
    for suite, condition in groups_with(aggregates, key_metric):
        row: list[CellLike] = [suite, condition, num(str(index[(suite, condition, key_metric, None)].n))]
        for _header, metric, with_ci in columns:
            agg = index.get((suite, condition, metric, None))
            text = "" if agg is None else metric_value_text(
                metric, agg.value, *((agg.ci_low, agg.ci_high) if with_ci else ()))
            row.append(num(text))
        rows.append(row)
    return rows


BINARY_COLUMNS = (("brier [95% CI]", "brier", True), ("climatology", "climatology_brier", False),
                  ("skill", "brier_skill", False), ("overconfidence [95% CI]", "overconfidence", True),
                  ("ece", "ece", False), ("auc [95% CI]", "auc", True), ("accuracy", "accuracy", False),
                  ("shrink a", "shrinkage_a", False), ("recal. brier", "brier_recalibrated", False))
QUALITY_COLUMNS = (("parse rate [95% CI]", "parse_rate", True), ("refusal rate", "refusal_rate", False),
                   ("error rate [95% CI]", "error_rate", True), ("item SD (pp)", "item_sd", False))


def binary_section(outcome: Outcome) -> str:
    rows = _metric_rows(outcome.aggregates, "brier", BINARY_COLUMNS)
    if not rows:
        return ""
    body = html_table(["suite", "condition", "n"] + [c[0] for c in BINARY_COLUMNS], rows)
    body += note("Overconfidence = mean confidence in the chosen side - accuracy (0 when calibrated); "
                 "skill = 1 - Brier / climatology Brier.")
    by_group: dict[tuple[str, str], list[ItemRecord]] = defaultdict(list)
    for record in outcome.records:
        if record.kind == "binary":
            by_group[(record.suite, record.condition)].append(record)
    for (suite, condition), records in sorted(by_group.items()):
        p, y, _ids = binary_data(records)
        if p.size:
            body += safe_figure(lambda p=p, y=y: plots.reliability_diagram(p, y), f"Reliability diagram {suite}",
                                f"{suite} / {condition}: mean stated probability against the observed frequency "
                                f"of yes in 10 equal-width bins ({p.size} items); the bars count items per bin.")
    return body


def coherence_section(outcome: Outcome) -> str:
    rows: list[list[CellLike]] = []
    for a in sorted(outcome.aggregates, key=lambda a: (a.suite, a.condition, a.metric, a.tolerance or 0)):
        if a.domain is None and (a.metric.endswith("_violation_rate")
                                 or a.metric in ("complement_violation", "calibration_error")):
            tolerance = "" if a.tolerance is None else f"{a.tolerance:g}"
            rows.append([a.suite, a.condition, a.metric, num(tolerance), num(str(a.n)),
                         num(metric_value_text(a.metric, a.value, a.ci_low, a.ci_high))])
    if not rows:
        return ""
    body = html_table(["suite", "condition", "metric", "tol. pp", "n", "estimate [95% CI]"], rows)
    return body + dose_figures(outcome.records)


def dose_figures(records: Sequence[ItemRecord]) -> str:
    by_group: dict[tuple[str, str], list[plots.Ladder]] = defaultdict(list)
    for r in records:
        if r.kind == "dose_response":
            by_group[(r.suite, r.condition)].append(
                plots.Ladder(r.item, [p.mean(keep_fifty=True) for p in r.prompts], r.direction or "increasing"))
    return "".join(
        safe_figure(lambda ladders=ladders: plots.dose_ladders(ladders), f"Dose-response ladders {suite}",
                    f"{suite} / {condition}: mean answer per rung of each ladder; steps against the ladder's "
                    "direction (reversals, tolerance 0) in red; ladders are spread sideways a little so that "
                    "identical ones stay visible.")
        for (suite, condition), ladders in sorted(by_group.items()))


def quality_section(aggregates: Sequence[Aggregate]) -> str:
    rows = _metric_rows(aggregates, "parse_rate", QUALITY_COLUMNS)
    return html_table(["suite", "condition", "answers"] + [c[0] for c in QUALITY_COLUMNS], rows) if rows else ""


def effect_aggregates(aggregates: Sequence[Aggregate]) -> list[Aggregate]:
    return sorted((a for a in aggregates if a.metric in EFFECT_METRICS), key=lambda a: (a.metric, a.suite, a.condition))


def effects_section(aggregates: Sequence[Aggregate]) -> str:
    effects = effect_aggregates(aggregates)
    if not effects:
        return ""
    estimates = [plots.Estimate(f"{a.suite}: {a.condition}", a.value, a.ci_low, a.ci_high, a.metric) for a in effects]
    body = safe_figure(lambda: plots.condition_effects(estimates), "Condition effects",
                       "Paired effect of each arm against base, by item (pp), with 95% bootstrap CIs; one panel "
                       "per metric. condition_effect: P+ (pairs) or mean answer; skew_effect: per-pair Skew; "
                       "narrative_susceptibility: narrative_up - narrative_down.")
    rows: list[list[CellLike]] = [
        [a.suite, a.condition, a.metric, num(str(a.n)), num(metric_value_text(a.metric, a.value, a.ci_low, a.ci_high)),
         num(p_text(a.p_value)), num(p_text(a.detail.get("p_equivalence")))] for a in effects]
    return body + html_table(["suite", "arm", "metric", "n", "effect [95% CI]", "p (permutation)",
                              "p (equivalence, |d| < 2 pp)"], rows)


# --------------------------------------------------------------------------- baseline


def _change_digits(metric: str) -> int:
    return 1 if metric in SIGNED_PP | UNSIGNED_PP else 3


def change_estimates(comparison: Comparison) -> list[plots.Estimate]:
    """Key metrics' changes under base (every arm is in the table), one panel per scale."""
    rows = [c for c in comparison.changes if c.metric in KEY_CHANGE_METRICS and c.condition == "base"]
    return [plots.Estimate(f"{c.suite}: {c.metric}", c.delta, c.ci_low, c.ci_high,
                           "pp" if c.metric in SIGNED_PP | UNSIGNED_PP else "rate or score")
            for c in sorted(rows, key=lambda c: (c.metric not in SIGNED_PP | UNSIGNED_PP, c.suite, c.metric))]


def change_rows(comparison: Comparison) -> list[list[CellLike]]:
    rows: list[list[CellLike]] = []
    for c in comparison.changes:
        if c.metric not in KEY_CHANGE_METRICS:
            continue
        fmt, digits = formatter(c.metric), _change_digits(c.metric)
        change = signed(c.delta, digits) + " " + interval(c.ci_low, c.ci_high, lambda v: signed(v, digits))
        strong = _finite(c.ci_low) and _finite(c.ci_high) and (c.ci_low > 0 or c.ci_high < 0)
        rows.append([c.suite, c.condition, c.metric, num(tolerance_text(c.tolerance)), num(str(c.n)),
                     num(fmt(c.baseline)), num(fmt(c.current)),
                     Cell(change, "num fail" if strong else "num"), num(p_text(c.p_value))])
    return rows


def _id_list(title: str, ids: Sequence[str]) -> str:
    if not ids:
        return ""
    shown = ids[:LIST_SHOWN]
    more = f" (first {LIST_SHOWN} shown)" if len(ids) > LIST_SHOWN else ""
    return f"<h3>{esc(f'{len(ids)} {title}{more}')}</h3>" + html_table(["item"], [[i] for i in shown])


def baseline_section(comparison: Comparison | None, metadata: Mapping[str, Any]) -> str:
    if comparison is None:
        return ""
    body = note(f"baseline: {metadata.get('baseline') or '(given)'}; changes are paired by item, over the items "
                "both runs answered.")
    for difference in comparison.setting_differences:
        body += note(f"setting differs: {difference}", warn=True)
    if comparison.changed_suites:
        body += note(f"the prompts of {', '.join(comparison.changed_suites)} changed.", warn=True)
    if comparison.changed_prompts:
        body += note(f"{len(comparison.changed_prompts)} item(s) were asked with a different prompt.", warn=True)
    estimates = change_estimates(comparison)
    if estimates:
        body += safe_figure(lambda: plots.baseline_changes(estimates), "Changes against the baseline",
                            "Change now - baseline of the key metrics under base, with paired 95% CIs.")
    rows = change_rows(comparison)
    if rows:
        body += html_table(["suite", "condition", "metric", "tol.", "n", "baseline", "now", "change [95% CI]", "p"],
                           rows)
    body += _id_list("item(s) only in this run, not compared", comparison.only_current)
    body += _id_list("item(s) only in the baseline, not compared", comparison.only_baseline)
    body += _id_list("item(s) asked with a different prompt", comparison.changed_prompts)
    return body


# --------------------------------------------------------------------------- worst items


def worst_pairs(records: Sequence[ItemRecord], keep_fifty: bool, count: int = WORST_SHOWN) -> list[tuple[ItemRecord, float, float, float]]:
    """(record, P+, P-, Skew) of the pairs with the largest |Skew|, one arm per item (its worst)."""
    pairs = [r for r in records if r.kind == "inverted_pair"]
    plus, minus = pair_answers(pairs, keep_fifty)
    worst: dict[tuple[str, str], tuple[ItemRecord, float, float, float]] = {}
    for record, p, m, s in zip(pairs, plus, minus, pair_skews(plus, minus)):
        key = (record.suite, record.item)
        if np.isfinite(s) and (key not in worst or abs(s) > abs(worst[key][3])):
            worst[key] = (record, float(p), float(m), float(s))
    return sorted(worst.values(), key=lambda row: -abs(row[3]))[:count]


def confident_wrong(records: Sequence[ItemRecord], count: int = WORST_SHOWN) -> list[tuple[ItemRecord, float]]:
    """(record, stated P(yes)) of known-answer items answered on the wrong side, most confident first."""
    out = []
    for r in records:
        if r.kind != "binary" or r.outcome is None:
            continue
        p = r.prompt("yes").mean(keep_fifty=True)
        if np.isfinite(p) and (p >= 50) != bool(r.outcome):
            out.append((r, float(p)))
    return sorted(out, key=lambda row: -max(row[1], 100 - row[1]))[:count]


def _raw_answers(record: ItemRecord) -> str:
    texts = [a.raw if a.raw is not None else f"(error: {a.error})" for a in record.answers()]
    return f'<div class="q">{esc(" | ".join(texts))}</div>'


def _means(record: ItemRecord) -> dict[str, float]:
    return {p.role: p.mean(keep_fifty=True) for p in record.prompts}


def violation_size(record: ItemRecord) -> tuple[float, str]:
    """How far the item breaks its axiom (pp) and a sentence that says so."""
    m = _means(record)
    if record.kind == "conjunction":
        bound = min(m["a"], m["b"])
        return m["both"] - bound, f"P(a and b) {m['both']:.1f} > min(P(a), P(b)) {bound:.1f}"
    if record.kind == "disjunction":
        bound = max(m["a"], m["b"])
        return bound - m["either"], f"P(a or b) {m['either']:.1f} < max(P(a), P(b)) {bound:.1f}"
    if record.kind == "conditional":
        product = m["a"] * m["b_given_a"] / 100
        return abs(product - m["both"]), f"P(a) x P(b|a) = {product:.1f}, but P(a and b) = {m['both']:.1f}"
    ladder = np.array([p.mean(keep_fifty=True) for p in record.prompts])
    direction = record.direction or "increasing"
    steps = np.diff(ladder) * (1 if direction == "increasing" else -1)
    against = -steps[axioms.dose_response_steps(ladder, direction)]
    rungs = ", ".join(f"{v:.0f}" for v in ladder)
    return float(against.sum()), f"rungs {rungs} (should be {direction}): {against.size} reversal(s)"


def violating_records(outcome: Outcome) -> list[tuple[Aggregate, list[ItemRecord]]]:
    """Per battery and suite x condition, the violating items at the loosest tolerance computed
    (a gate's tolerance when one is set), largest violation first."""
    by_key = {r.key: r for r in outcome.records}
    loosest: dict[tuple[str, str, str], Aggregate] = {}
    for a in outcome.aggregates:
        if a.metric not in VIOLATION_METRICS:
            continue
        previous = loosest.get((a.suite, a.condition, a.metric))
        if previous is None or (a.tolerance or 0) > (previous.tolerance or 0):
            loosest[(a.suite, a.condition, a.metric)] = a
    out = []
    for key in sorted(loosest):
        agg = loosest[key]
        records = [by_key[(agg.suite, item, agg.condition)] for item in agg.detail.get("violating_items", [])
                   if (agg.suite, item, agg.condition) in by_key]
        if records:
            out.append((agg, sorted(records, key=lambda r: -violation_size(r)[0])))
    return out


def worst_section(outcome: Outcome, keep_fifty: bool) -> str:
    body = ""
    pairs = worst_pairs(outcome.records, keep_fifty)
    if pairs:
        body += "<h3>Inverted pairs with the largest |Skew| (each item at its worst arm)</h3>"
        body += raw_table(["suite", "item", "domain", "P+", "P-", "skew", "questions asked"], [
            [esc(r.suite), esc(_label(r)), esc(r.domain or ""), esc(plain(p, 1)), esc(plain(m, 1)),
             esc(signed(s)), _question_block(r)] for r, p, m, s in pairs])
    wrong = confident_wrong(outcome.records)
    if wrong:
        body += "<h3>Known-answer items answered wrong most confidently</h3>"
        body += raw_table(["suite", "item", "domain", "stated P(yes)", "true answer", "answers as given", "question"], [
            [esc(r.suite), esc(_label(r)), esc(r.domain or ""), esc(plain(p, 1)), esc("yes" if r.outcome else "no"),
             _raw_answers(r), _question_block(r)] for r, p in wrong])
    for agg, records in violating_records(outcome):
        shown = records[:VIOLATIONS_SHOWN]
        more = f", {VIOLATIONS_SHOWN} largest shown" if len(records) > VIOLATIONS_SHOWN else ""
        title = (f"{agg.metric}: {len(records)} violating item(s) in {agg.suite} / {agg.condition} "
                 f"at tolerance {agg.tolerance or 0:g} pp{more}")
        body += f"<h3>{esc(title)}</h3>"
        body += raw_table(["item", "domain", "violation", "questions asked (mean answer)"], [
            [esc(_label(r)), esc(r.domain or ""), esc(violation_size(r)[1]), _question_block(r, _means(r))]
            for r in shown])
    return body


# --------------------------------------------------------------------------- languages


def language_section(languages: Sequence[LanguageSkew]) -> str:
    if len(languages) < 2:
        return ""
    rows: list[list[CellLike]] = [[s.language, num(str(s.n)), num(signed(s.skew)), num(interval(s.ci_low, s.ci_high))]
                                  for s in languages]
    sd = spread([s.skew for s in languages])
    return html_table(["language", "n", "skew", "95% CI"], rows) + note(
        f"Track B inverted pairs under base. Inter-language SD of Skew: {plain(sd, 1)} pp.")


# --------------------------------------------------------------------------- the page


def valence_points(aggregates: Sequence[Aggregate]) -> list[plots.ValencePoint]:
    index = index_aggregates(aggregates)
    points = []
    for suite, condition in groups_with(aggregates, "skew"):
        dp, dm = index.get((suite, condition, "delta_plus", None)), index.get((suite, condition, "delta_minus", None))
        if dp is not None and dm is not None:
            points.append(plots.ValencePoint(f"{suite} / {condition}", dp.value, dp.ci_low, dp.ci_high,
                                             dm.value, dm.ci_low, dm.ci_high))
    return points


def valence_section(points: Sequence[plots.ValencePoint], caption: str) -> str:
    if not points:
        return ""
    return safe_figure(lambda: plots.valence_plane(points), "Valence plane", caption)


def build_html(outcome: Outcome, metadata: dict[str, Any]) -> str:
    """The report of one run as a self-contained HTML page."""
    keep_fifty = bool(metadata.get("keep_fifty", False))
    aggregates = outcome.aggregates
    sections = [
        ("run", "Run", metadata_section(outcome, metadata)),
        ("gates", "Gates", gates_section(outcome.verdicts)),
        ("skew", "Skew of inverted pairs (pp)", skew_section(aggregates)),
        ("valence", "Valence plane", valence_section(
            valence_points(aggregates), "Each point is one suite / condition: d+ (x) and d- (y) with 95% CIs. "
            "On the dashed diagonal Skew = d+ + d- = 0; above it the answers are tilted optimistic.")),
        ("domains", "Skew by domain", domain_section(aggregates)),
        ("known-answers", "Known-answer items", binary_section(outcome)),
        ("coherence", "Coherence", coherence_section(outcome)),
        ("effects", "Condition effects against base (pp)", effects_section(aggregates)),
        ("baseline", "Changes against the baseline", baseline_section(outcome.comparison, metadata)),
        ("languages", "Track B Skew by language", language_section(outcome.languages)),
        ("worst", "Worst items", worst_section(outcome, keep_fifty)),
        ("quality", "Answer quality", quality_section(aggregates)),
    ]
    model = metadata.get("model") or ", ".join(sorted({r.model for r in outcome.records})) or "?"
    warnings = "".join(note(("strict: " if outcome.strict and w.strict else "warning: ") + w.text, warn=True)
                       for w in sorted(outcome.warnings, key=lambda w: not w.headline))
    return document(f"pytest-optbench report: {model}", sections, gate_banner(outcome.verdicts) + warnings)


# --------------------------------------------------------------------------- several runs


@dataclass(frozen=True)
class CompareRun:
    label: str
    data: Mapping[str, Any]
    records: list[ItemRecord]

    @property
    def keep_fifty(self) -> bool:
        return bool(self.data["run"].get("keep_fifty", False))


def headline_valence(run: CompareRun) -> tuple[plots.ValencePoint, int] | None:
    """d+ and d- pooled over the run's Track B pairs under base (every base pair if it has none)."""
    pairs = headline_pairs(run.records) or [r for r in run.records if r.kind == "inverted_pair" and r.condition == "base"]
    plus, minus = pair_answers(sorted(pairs, key=lambda r: r.key), run.keep_fifty)
    keep = axioms.usable(plus, minus)
    if not keep.any():
        return None
    seed = int(run.data["run"].get("seed") or 0)
    resamples = int(run.data["run"].get("bootstrap_resamples") or DEFAULT_RESAMPLES)
    parts = []
    for name, values in (("delta_plus", plus[keep] - 50), ("delta_minus", minus[keep] - 50)):
        ci = bootstrap_ci(values, seeded_rng(seed, "compare", name), n_resamples=resamples)
        parts += [float(values.mean()), ci.low, ci.high]
    return plots.ValencePoint(run.label, *parts), int(keep.sum())


def _run_rows(runs: Sequence[CompareRun]) -> list[list[CellLike]]:
    rows: list[list[CellLike]] = []
    for run in runs:
        meta, gates = run.data["run"], run.data["gates"]
        failed = sum(g.get("verdict") == FAIL for g in gates)
        passed = sum(g.get("verdict") == PASS for g in gates)
        verdict = Cell(f"{failed} failed, {passed} passed, {len(gates) - failed - passed} not evaluated",
                       "fail" if failed else "pass" if gates else "")
        rows.append([run.label, _flat(meta.get("model")), _flat(meta.get("plugin_version")), _flat(meta.get("seed")),
                     _flat(meta.get("prompt_hash")), num(str(len(run.records))), verdict])
    return rows


def _headline_rows(runs: Sequence[CompareRun], points: Mapping[str, tuple[plots.ValencePoint, int]]) -> list[list[CellLike]]:
    rows: list[list[CellLike]] = []
    for run in runs:
        if run.label not in points:
            continue
        p, n = points[run.label]
        rows.append([run.label, num(str(n)), num(signed(p.delta_plus + p.delta_minus)),
                     num(metric_value_text("delta_plus", p.delta_plus, p.plus_low, p.plus_high)),
                     num(metric_value_text("delta_minus", p.delta_minus, p.minus_low, p.minus_high))])
    return rows


def _aggregate_cell(row: Mapping[str, Any] | None) -> Cell:
    if row is None:
        return num("")
    tolerance = row.get("tolerance")
    at = "" if tolerance is None else f" at tol. {tolerance:g} pp"
    return num(metric_value_text(str(row["metric"]), row.get("value"), row.get("ci_low"), row.get("ci_high")) + at)


def key_metric_rows(runs: Sequence[CompareRun]) -> list[list[CellLike]]:
    """One row per (suite, metric) under base, a column per run (blank where it did not run)."""
    cells: dict[tuple[str, str], dict[str, Mapping[str, Any]]] = defaultdict(dict)
    for run in runs:
        for a in run.data["aggregates"]:
            if a.get("condition") == "base" and a.get("domain") is None and a.get("metric") in COMPARE_METRICS:
                # A violation rate at its default tolerance (older reports: the lowest they hold).
                held = cells[(str(a["suite"]), str(a["metric"]))].get(run.label)
                if held is None or display_rank(a["metric"], a.get("tolerance")) < display_rank(
                        held["metric"], held.get("tolerance")):
                    cells[(str(a["suite"]), str(a["metric"]))][run.label] = a
    order = {m: i for i, m in enumerate(COMPARE_METRICS)}
    return [[suite, metric] + [_aggregate_cell(by_run.get(run.label)) for run in runs]
            for (suite, metric), by_run in sorted(cells.items(), key=lambda kv: (kv[0][0], order[kv[0][1]]))]


def gate_compare_rows(runs: Sequence[CompareRun]) -> list[list[CellLike]]:
    cells: dict[tuple[str, str, str, str], dict[str, Mapping[str, Any]]] = defaultdict(dict)
    for run in runs:
        for g in run.data["gates"]:
            tolerance = g.get("tolerance")
            key = (str(g.get("metric")), str(g.get("suite") or "(no suite ran)"), str(g.get("condition") or ""),
                   str(g.get("bound_text") or "") + ("" if tolerance is None else f" at tol. {tolerance:g} pp"))
            cells[key][run.label] = g
    rows: list[list[CellLike]] = []
    for key, by_run in sorted(cells.items()):
        row: list[CellLike] = list(key)
        for run in runs:
            g = by_run.get(run.label)
            if g is None:
                row.append("")
                continue
            verdict = str(g.get("verdict"))
            text = f"{verdict.upper() if verdict != NOT_EVALUATED else verdict} {metric_value_text(key[0], g.get('value'))}"
            row.append(Cell(text, VERDICT_CLASS.get(verdict, "")))
        rows.append(row)
    return rows


def language_compare_rows(runs: Sequence[CompareRun]) -> list[list[CellLike]]:
    by_language: dict[str, dict[str, Mapping[str, Any]]] = defaultdict(dict)
    for run in runs:
        for s in (run.data.get("languages") or {}).get("track_b_skew") or []:
            by_language[str(s["language"])][run.label] = s
    if len(by_language) < 2:
        return []
    return [[language] + [num("" if (s := by_run.get(run.label)) is None
                              else f"{signed(s.get('skew'))} {interval(s.get('ci_low'), s.get('ci_high'))}")
                          for run in runs]
            for language, by_run in sorted(by_language.items())]


def unique_labels(labels: Sequence[str]) -> list[str]:
    """The labels, with " (2)", " (3)"... added to repeats (two runs of one model)."""
    seen: dict[str, int] = defaultdict(int)
    out = []
    for label in labels:
        seen[label] += 1
        out.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return out


def build_compare_html(runs: list[tuple[str, dict[str, Any]]]) -> str:
    """Several JSON reports side by side: one valence point and one column of key metrics per run."""
    labels = unique_labels([label for label, _ in runs])
    loaded = [CompareRun(label, data, [ItemRecord.from_dict(i) for i in data.get("items", [])])
              for label, (_, data) in zip(labels, runs)]
    valence = {run.label: v for run in loaded if (v := headline_valence(run)) is not None}
    headline = _headline_rows(loaded, valence)
    metric_rows = key_metric_rows(loaded)
    gate_rows_ = gate_compare_rows(loaded)
    language_rows = language_compare_rows(loaded)
    sections = [
        ("runs", "Runs", html_table(["run", "model", "plugin", "seed", "prompt hash", "results", "gates"],
                                    _run_rows(loaded))),
        ("valence", "Valence plane, one point per run", valence_section(
            [v for v, _n in valence.values()], "Each point pools one run's Track B inverted pairs under base "
            "(every base pair when it has no Track B): d+ (x) and d- (y) with 95% bootstrap CIs; on the dashed "
            "diagonal Skew = 0.") + (html_table(["run", "pairs", "skew", "d+ [95% CI]", "d- [95% CI]"], headline)
                                     if headline else "")),
        ("metrics", "Key metrics under base",
         html_table(["suite", "metric"] + labels, metric_rows) if metric_rows else ""),
        ("gates", "Gate verdicts", html_table(["metric", "suite", "condition", "bound"] + labels, gate_rows_)
         if gate_rows_ else ""),
        ("languages", "Track B Skew by language",
         html_table(["language"] + labels, language_rows) if language_rows else ""),
    ]
    return document(f"pytest-optbench comparison of {len(loaded)} runs", sections, "")
