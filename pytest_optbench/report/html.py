"""The HTML report: one self-contained file a browser opens without a network.

Figures are PNGs embedded as ``data:`` URIs, the CSS is inline, there is no JavaScript, and a
Content-Security-Policy forbids every fetch, so the file can be attached to a CI run or
mailed. Every string that comes from the data (item text, ids, raw answers, metadata) goes
through ``html.escape``; markup is only ever produced by the small helpers below.

This module draws the report model (``report.model``, full view) and computes nothing.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from html import escape
from pathlib import Path
from typing import Any

from ..answers.explain import rule_account
from ..scoring.outcome import Outcome
from . import plots
from .json_report import write_text
from .model import FULL, CompareModel, RunModel, Table, build_compare_model, build_run_model
from .model.compare import flat
from .model.figures import ValencePoint
from .model.items import Question, Violation, WorstPair, WrongAnswer
from .model.table import FAIL, NOT_EVALUATED, PASS, STRONG, Cell

VIOLATIONS_SHOWN = 8  # violating items shown per battery and suite
LIST_SHOWN = 50  # ids shown of "only in one run" lists
TONE_CLASS = {PASS: "pass", FAIL: "fail", NOT_EVALUATED: "ne", STRONG: "fail"}

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


def _td(cell: Cell) -> str:
    classes = " ".join(c for c in ("num" if cell.numeric else "", TONE_CLASS.get(cell.tone, "")) if c)
    css = f' class="{esc(classes)}"' if classes else ""
    return f"<td{css}>{esc(cell.text)}</td>"


def html_table(header: Sequence[str], rows: Iterable[Sequence[Cell]]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(_td(c) for c in row) + "</tr>" for row in rows)
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def model_table(table: Table | None, with_notes: bool = True) -> str:
    """A model table in its full view, with its notes below; nothing when it has no rows."""
    if table is None or table.empty:
        return ""
    return html_table(table.header(FULL), table.cells(FULL)) + (
        "".join(note(n) for n in table.notes) if with_notes else "")


def raw_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A table whose cells are already markup (built only from ``esc``-ed parts); the last
    column wraps."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row[:-1]) + f'<td class="wrap">{row[-1]}</td></tr>'
                   for row in rows)
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


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


def _question_block(questions: Sequence[Question]) -> str:
    return "".join(f'<div class="q"><b>{esc(q.label)}:</b> {esc(q.text)}</div>' for q in questions)


# --------------------------------------------------------------------------- run and gates


def metadata_section(outcome: Outcome, model: RunModel, metadata: Mapping[str, Any]) -> str:
    pairs = [
        ("models answering", model.headline.model if outcome.records else "(none)"),
        ("item x condition results", str(model.headline.results)),
        ("elicitation", model.headline.elicit),
        ("languages", ", ".join(sorted({r.language for r in outcome.records})) or "(none)"),
        ("suites", ", ".join(sorted({r.suite for r in outcome.records})) or "(none)"),
    ]
    pairs += [(str(key), flat(value)) for key, value in metadata.items()]
    body = definition_list(pairs)
    for text in outcome.notes():
        body += note(f"provider note: {text}", warn=True)
    for line in model.scale:  # shard, batch cost, pending items
        body += note(line.text.strip(), warn=bool(line.tone))
    missing = model.headline.missing
    if missing:
        body += note(f"{len(missing)} item(s) failed without sending answers; aggregates cover only the "
                     "items that reported:", warn=True)
        body += html_table(["item"], [[Cell(m)] for m in missing])
    return body


def gate_banner(model: RunModel) -> str:
    counts = model.headline.gates
    if not counts.total:
        return '<div class="banner ne">No gates: no thresholds file was used.</div>'
    return f'<div class="banner {counts.tone}">{esc(counts.text)}</div>'


def gates_section(model: RunModel) -> str:
    if model.gates.empty:
        return ""
    sentences = "".join(f'<p class="note fail">{esc(s)}</p>' for s in model.gate_failures)
    sentences += "".join(note(s, warn=True) for s in model.gate_not_evaluated)
    sentences += "".join(note(s, warn=True) for s in model.gate_power)
    return sentences + model_table(model.gates)  # its notes say which correction applied


# --------------------------------------------------------------------------- metric tables


def domain_section(model: RunModel) -> str:
    if model.domains.empty:
        return ""
    estimates = model.domain_estimates
    chart = safe_figure(lambda: plots.skew_by_domain(estimates), "Skew by domain",
                        "Skew per domain under the base condition, with 95% bootstrap CIs.") if estimates else ""
    return chart + model_table(model.domains)


def binary_section(model: RunModel) -> str:
    if model.binary.empty:
        return ""
    body = model_table(model.binary)
    for data in model.reliability:
        body += safe_figure(partial(plots.reliability_diagram, data), f"Reliability diagram {data.suite}",
                            f"{data.suite} / {data.condition}: mean stated probability against the observed frequency "
                            f"of yes in 10 equal-width bins ({data.n} items); the bars count items per bin.")
    return body


def coherence_section(model: RunModel) -> str:
    if model.coherence_every.empty:
        return ""
    return model_table(model.coherence_every) + "".join(
        safe_figure(partial(plots.dose_ladders, group.ladders), f"Dose-response ladders {group.suite}",
                    f"{group.suite} / {group.condition}: mean answer per rung of each ladder; steps against the "
                    "ladder's direction (reversals, tolerance 0) in red; ladders are spread sideways a little so "
                    "that identical ones stay visible.")
        for group in model.ladders)


def effects_section(model: RunModel) -> str:
    if model.effects.empty:
        return ""
    estimates = model.effect_estimates
    return safe_figure(lambda: plots.condition_effects(estimates), "Condition effects",
                       "Paired effect of each arm against base, by item (pp), with 95% bootstrap CIs; one panel "
                       "per metric.") + model_table(model.effects)


# --------------------------------------------------------------------------- baseline


def _id_list(title: str, ids: Sequence[str]) -> str:
    if not ids:
        return ""
    shown = ids[:LIST_SHOWN]
    more = f" (first {LIST_SHOWN} shown)" if len(ids) > LIST_SHOWN else ""
    return f"<h3>{esc(f'{len(ids)} {title}{more}')}</h3>" + html_table(["item"], [[Cell(i)] for i in shown])


def baseline_section(outcome: Outcome, model: RunModel) -> str:
    comparison = outcome.comparison
    if comparison is None or model.changes is None:
        return ""
    title = model.changes.title
    body = note(f"{title[:1].upper()}{title[1:]}.") + "".join(note(n, warn=True) for n in model.baseline_notes)
    estimates = model.change_estimates
    if estimates:
        body += safe_figure(lambda: plots.baseline_changes(estimates), "Changes against the baseline",
                            "Change now - baseline of the key metrics under base, with paired 95% CIs.")
    body += model_table(model.changes)
    body += _id_list("item(s) only in this run, not compared", comparison.only_current)
    body += _id_list("item(s) only in the baseline, not compared", comparison.only_baseline)
    body += _id_list("item(s) asked with a different prompt", comparison.changed_prompts)
    return body


# --------------------------------------------------------------------------- worst items


def _pair_row(w: WorstPair) -> list[str]:
    return [esc(w.suite), esc(w.item), esc(w.domain), esc(w.plus_text), esc(w.minus_text), esc(w.skew_text),
            _question_block(w.questions)]


def _wrong_row(w: WrongAnswer) -> list[str]:
    return [esc(w.suite), esc(w.item), esc(w.domain), esc(w.p_yes_text), esc(w.truth),
            f'<div class="q">{esc(" | ".join(w.answers))}</div>', _question_block(w.questions)]


def _violation_row(v: Violation) -> list[str]:
    return [esc(v.item), esc(v.domain), esc(f"{v.size_text} pp: {v.explanation}"), _question_block(v.questions)]


def worst_section(model: RunModel) -> str:
    worst, body = model.worst, ""
    if worst.pairs:
        body += "<h3>Inverted pairs with the largest |Skew| (each item at its worst arm)</h3>"
        body += raw_table(["suite", "item", "domain", "P+", "P-", "skew", "questions asked"],
                          [_pair_row(w) for w in worst.pairs])
    if worst.wrong:
        body += "<h3>Known-answer items answered wrong most confidently</h3>"
        body += raw_table(["suite", "item", "domain", "stated P(yes)", "true answer", "answers as given", "question"],
                          [_wrong_row(w) for w in worst.wrong])
    for group in worst.violations:
        body += f"<h3>{esc(group.title(VIOLATIONS_SHOWN))}</h3>"
        body += raw_table(["item", "domain", "violation", "questions asked (mean answer)"],
                          [_violation_row(v) for v in group.violations[:VIOLATIONS_SHOWN]])
    return body


def readings_section(model: RunModel) -> str:
    """Text answers by the rule that read them, each rule linked to its account below."""
    table = model.readings
    if table.empty:
        return ""
    body = "<h3>" + esc(table.title[:1].upper() + table.title[1:]) + "</h3>"
    rows = []
    for row in table.texts(FULL):
        name, rest = row[0], row[1:]
        rows.append([f'<a href="#rule-{esc(name)}"><code>{esc(name)}</code></a>', *(esc(c) for c in rest)])
    body += raw_table(table.header(FULL), rows)
    body += "".join(note(n) for n in table.notes)
    accounts = [(name, rule_account(name)) for name in (r[0] for r in table.texts(FULL))]
    body += '<dl class="meta">' + "".join(
        f'<dt id="rule-{esc(name)}"><code>{esc(name)}</code></dt><dd>{esc(doc or "(a rule of another version)")}</dd>'
        for name, doc in accounts) + "</dl>"
    return body


# --------------------------------------------------------------------------- the page


def valence_section(points: Sequence[ValencePoint], caption: str) -> str:
    if not points:
        return ""
    return safe_figure(lambda: plots.valence_plane(points), "Valence plane", caption)


def build_html(outcome: Outcome, metadata: dict[str, Any]) -> str:
    """The report of one run as a self-contained HTML page."""
    model = build_run_model(outcome, metadata)
    sections = [
        ("run", "Run", metadata_section(outcome, model, metadata)),
        ("gates", "Gates", gates_section(model)),
        ("skew", "Skew of inverted pairs (pp)", model_table(model.skew)),
        ("valence", "Valence plane", valence_section(
            model.valence, "Each point is one suite / condition: d+ (x) and d- (y) with 95% CIs. "
            "On the dashed diagonal Skew = d+ + d- = 0; above it the answers are tilted optimistic.")),
        ("domains", "Skew by domain", domain_section(model)),
        ("known-answers", "Known-answer items", binary_section(model)),
        ("coherence", "Coherence", coherence_section(model)),
        ("effects", "Condition effects against base (pp)", effects_section(model)),
        ("baseline", "Changes against the baseline", baseline_section(outcome, model)),
        ("languages", "By language", model_table(model.languages)),
        ("worst", "Worst items", worst_section(model)),
        ("quality", "Answer quality", model_table(model.quality) + readings_section(model)),
    ]
    title_model = metadata.get("model") or model.headline.model
    return document(f"pytest-optbench report: {title_model}", sections, gate_banner(model))


# --------------------------------------------------------------------------- several runs


def compare_sections(model: CompareModel) -> list[tuple[str, str, str]]:
    headline = model.headline_table
    return [
        ("runs", "Runs", model_table(model.runs_table)),
        ("valence", "Valence plane, one point per run", valence_section(
            model.valence, "Each point is one run's Track B suite under base (the English one when there are "
            "several): d+ (x) and d- (y) with the 95% CIs of its report; on the dashed diagonal Skew = 0.")
         + model_table(headline, with_notes=False)),
        ("metrics", "Key metrics under base", model_table(model.key_metrics)),
        ("gates", "Gate verdicts", model_table(model.gates)),
        ("languages", "Track B Skew by language", model_table(model.languages)),
    ]


def build_compare_html(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """Several JSON reports side by side: one valence point and one column of key metrics per run."""
    model = build_compare_model(runs)
    return document(f"pytest-optbench comparison of {len(model.runs)} runs", compare_sections(model), "")
