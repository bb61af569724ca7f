"""Several runs side by side (``optbench compare``), from their JSON reports alone.

Every number is read from a report's stored aggregates, gates and language table: nothing is
bootstrapped again, so a run's Skew here has the interval its own report printed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...scoring.gates.spec import CHANGE_KEYS, FAIL, PASS
from ...scoring.tolerances import display_rank
from .figures import ValencePoint
from .fmt import as_float, change_formatter, estimate_text, formatter, number_or_none
from .table import FAIL as FAIL_TONE
from .table import PASS as PASS_TONE
from .table import Cell, Table, count, make_table, number, text
from .tables import KEY_ORDER, NO_SUITE, VERDICT_TONE, verdict_text

Report = Mapping[str, Any]


@dataclass(frozen=True)
class CompareRun:
    label: str  # unique among the runs compared
    data: Report

    @property
    def run(self) -> Mapping[str, Any]:
        return self.data["run"]  # type: ignore[no-any-return]

    def aggregates(self) -> list[Mapping[str, Any]]:
        return list(self.data.get("aggregates") or [])

    def aggregate(self, suite: str, condition: str, metric: str) -> Mapping[str, Any] | None:
        """A stored aggregate (overall, not per domain; a violation rate at its default
        tolerance, else the lowest the report holds)."""
        found = [a for a in self.aggregates()
                 if (a.get("suite"), a.get("condition"), a.get("metric")) == (suite, condition, metric)
                 and a.get("domain") is None]
        return min(found, key=lambda a: display_rank(metric, a.get("tolerance")), default=None)


def unique_labels(labels: Sequence[str]) -> list[str]:
    """The labels, with " (2)", " (3)"... added to repeats (two runs of one model)."""
    seen: dict[str, int] = defaultdict(int)
    out = []
    for label in labels:
        seen[label] += 1
        out.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return out


def compare_runs(runs: Sequence[tuple[str, Report]]) -> list[CompareRun]:
    return [CompareRun(label, data) for label, (_, data) in zip(unique_labels([label for label, _ in runs]), runs, strict=True)]


def flat(value: Any) -> str:
    """A metadata value as one line of text."""
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {flat(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(flat(v) for v in value) if value else "(none)"
    return "(not set)" if value is None else str(value)


def gate_counts(gates: Sequence[Mapping[str, Any]]) -> tuple[int, int, int]:
    failed = sum(g.get("verdict") == FAIL for g in gates)
    passed = sum(g.get("verdict") == PASS for g in gates)
    return failed, passed, len(gates) - failed - passed


def runs_table(runs: Sequence[CompareRun]) -> Table:
    rows = []
    for run in runs:
        gates = list(run.data.get("gates") or [])
        failed, passed, rest = gate_counts(gates)
        verdict = Cell(f"{failed} failed, {passed} passed, {rest} not evaluated",
                       tone=FAIL_TONE if failed else PASS_TONE if gates else "")
        rows.append([text(run.label), text(flat(run.run.get("model"))), text(flat(run.run.get("plugin_version"))),
                     text(flat(run.run.get("seed"))), text(flat(run.run.get("prompt_hash"))),
                     count(len(run.data.get("items") or [])), verdict])
    return make_table("runs", "runs", ["run", "model", "plugin", "seed", "prompt hash", "results", "gates"], rows)


def headline_suite(run: CompareRun) -> str | None:
    """The suite a run is summed up by: its Track B suite (the English one when there are
    several, else the largest), or failing that the largest suite with a Skew under base."""
    language: dict[str, str] = {}
    track_b: set[str] = set()
    for item in run.data.get("items") or []:
        if item.get("kind") == "inverted_pair" and item.get("condition") == "base":
            language.setdefault(str(item.get("suite")), str(item.get("language") or "en"))
            if item.get("track") == "B":
                track_b.add(str(item.get("suite")))
    with_skew = {str(a.get("suite")): int(a.get("n") or 0) for a in run.aggregates()
                 if a.get("metric") == "skew" and a.get("condition") == "base" and a.get("domain") is None}
    candidates = [s for s in track_b if s in with_skew] or list(with_skew)
    if not candidates:
        return None
    return min(candidates, key=lambda s: (language.get(s, "en") != "en", -with_skew[s], s))


@dataclass(frozen=True)
class RunHeadline:
    label: str
    suite: str
    n: int
    skew: Mapping[str, Any]
    delta_plus: Mapping[str, Any]
    delta_minus: Mapping[str, Any]

    def point(self) -> ValencePoint:
        dp, dm = self.delta_plus, self.delta_minus
        return ValencePoint(f"{self.label} ({self.suite})", as_float(dp.get("value")), as_float(dp.get("ci_low")),
                            as_float(dp.get("ci_high")), as_float(dm.get("value")), as_float(dm.get("ci_low")),
                            as_float(dm.get("ci_high")))


def headlines(runs: Sequence[CompareRun]) -> list[RunHeadline]:
    out = []
    for run in runs:
        suite = headline_suite(run)
        if suite is None:
            continue
        parts = [run.aggregate(suite, "base", m) for m in ("skew", "delta_plus", "delta_minus")]
        if parts[0] is None or parts[1] is None or parts[2] is None:
            continue
        out.append(RunHeadline(run.label, suite, int(parts[0].get("n") or 0), parts[0], parts[1], parts[2]))
    return out


def _estimate_cell(a: Mapping[str, Any] | None) -> Cell:
    if a is None:
        return number("")
    metric = str(a["metric"])
    at = "" if a.get("tolerance") is None else f" at tol. {a['tolerance']:g} pp"  # a rate says its tolerance
    return number(estimate_text(metric, a.get("value"), a.get("ci_low"), a.get("ci_high")) + at, a.get("value"))


def headline_table(rows: Sequence[RunHeadline]) -> Table:
    return make_table("headline", "each run's Track B Skew under base", [
        "run", "suite", "pairs", "skew [95% CI]", "d+ [95% CI]", "d- [95% CI]"],
        [[text(h.label), text(h.suite), count(h.n), _estimate_cell(h.skew), _estimate_cell(h.delta_plus),
          _estimate_cell(h.delta_minus)] for h in rows],
        notes=(("Each run is summed up by its Track B suite under base (the English one when there are several), "
               "with the estimates and 95% CIs of its own report."),))


def key_metrics_table(runs: Sequence[CompareRun]) -> Table:
    """One row per (suite, key metric) under base, a column per run (blank where it did not
    run); a violation rate at its default tolerance, said beside it."""
    cells: dict[tuple[str, str], dict[str, Mapping[str, Any]]] = defaultdict(dict)
    for run in runs:
        for a in run.aggregates():
            if a.get("condition") == "base" and a.get("domain") is None and a.get("metric") in KEY_ORDER:
                key, metric = (str(a.get("suite")), str(a["metric"])), str(a["metric"])
                held = cells[key].get(run.label)
                if held is None or display_rank(metric, a.get("tolerance")) < display_rank(metric, held.get("tolerance")):
                    cells[key][run.label] = a
    rows = [[text(suite), text(metric), *(_estimate_cell(by_run.get(run.label)) for run in runs)]
            for (suite, metric), by_run in sorted(cells.items(), key=lambda kv: (kv[0][0], KEY_ORDER[kv[0][1]]))]
    labels = [r.label for r in runs]
    return make_table("metrics", "key metrics under base, estimate [95% CI]", ["suite", "metric", *labels], rows)


def gates_table(runs: Sequence[CompareRun]) -> Table:
    cells: dict[tuple[str, str, str, str], dict[str, Mapping[str, Any]]] = defaultdict(dict)
    for run in runs:
        for g in run.data.get("gates") or []:
            key = (str(g.get("metric")), str(g.get("suite") or NO_SUITE), str(g.get("condition") or ""),
                   str(g.get("bound_text") or ""))
            cells[key][run.label] = g
    rows = []
    for key, by_run in sorted(cells.items()):
        row = [text(part) for part in key]
        for run in runs:
            g = by_run.get(run.label)
            if g is None:
                row.append(number(""))
                continue
            verdict = str(g.get("verdict"))
            value = g.get("value")
            fmt = change_formatter(key[0]) if g.get("bound_kind") in CHANGE_KEYS else formatter(key[0])
            shown = "" if value is None else f" {fmt(value)}"
            row.append(Cell(verdict_text(verdict) + shown, number_or_none(value), tone=VERDICT_TONE.get(verdict, "")))
        rows.append(row)
    labels = [r.label for r in runs]
    return make_table("gates", "gate verdicts", ["metric", "suite", "condition", "bound", *labels], rows)


def _language_cell(s: Mapping[str, Any] | None) -> Cell:
    if s is None:
        return number("")
    return number(estimate_text("skew", s.get("skew"), s.get("ci_low"), s.get("ci_high")), s.get("skew"))


def languages_table(runs: Sequence[CompareRun]) -> Table:
    """Track B Skew per language and run, as each report's language table gave it."""
    by_language: dict[str, dict[str, Mapping[str, Any]]] = defaultdict(dict)
    for run in runs:
        for s in (run.data.get("languages") or {}).get("track_b_skew") or []:
            if isinstance(s, Mapping) and s.get("language") is not None:
                by_language[str(s["language"])][run.label] = s
    rows = [] if len(by_language) < 2 else [
        [text(language), *(_language_cell(by_run.get(run.label)) for run in runs)]
        for language, by_run in sorted(by_language.items())]
    return make_table("languages", "Track B Skew by language", ["language", *(r.label for r in runs)], rows)


@dataclass(frozen=True)
class CompareModel:
    runs: tuple[CompareRun, ...]
    runs_table: Table
    headlines: tuple[RunHeadline, ...]
    headline_table: Table
    key_metrics: Table
    gates: Table
    languages: Table

    @property
    def labels(self) -> list[str]:
        return [run.label for run in self.runs]

    @property
    def valence(self) -> list[ValencePoint]:
        return [h.point() for h in self.headlines]


def build_compare_model(runs: Sequence[tuple[str, Report]]) -> CompareModel:
    loaded = compare_runs(runs)
    heads = headlines(loaded)
    return CompareModel(tuple(loaded), runs_table(loaded), tuple(heads), headline_table(heads),
                        key_metrics_table(loaded), gates_table(loaded), languages_table(loaded))

