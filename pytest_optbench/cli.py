"""The ``optbench`` command: work on suites and reports without running pytest.

    optbench lint [PATH ...]          check suites against the construction rules
    optbench compare REPORT ...       several runs side by side (and --html PATH)
    optbench variance REPORT ...      model vs scenario vs domain shares of Skew variance
    optbench crosslingual REPORT ...  every metric by model and language; model vs language spread
    optbench baseline REPORT          keep a run's report as the baseline (--output PATH)
    optbench bank [PATH ...]          items per suite and language, as a Markdown table
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .bank import bank_table
from .lint import ERROR, lint_paths, summary_line
from .metrics.skew import pair_skews
from .metrics.variance import decompose
from .records import ReportError, load_report, report_records
from .report.json_report import write_report
from .report.model import build_compare_model
from .report.model.crosslingual import build_crosslingual_model
from .report.model.fmt import as_float, value_text
from .report.terminal import render_table, table
from .scoring.aggregate import pair_answers
from .scoring.crosslingual import LanguageMetric, LanguageSkew, model_language_ratio
from .text import one_line, printable


class CliError(Exception):
    """A problem with the command's arguments or outputs; one sentence, exit status 2."""


def cmd_lint(args: argparse.Namespace) -> int:
    findings = lint_paths([Path(p) for p in args.paths or ["suites"]])
    for finding in findings:
        print(finding.line())
    print(summary_line(findings))
    return 1 if any(f.severity == ERROR for f in findings) else 0


def cmd_bank(args: argparse.Namespace) -> int:
    for line in bank_table([Path(p) for p in args.paths or ["suites"]]):
        print(line)
    return 0


def skew_rows(paths: Sequence[Path], condition: str = "base") -> list[dict[str, object]]:
    """One row per (run, inverted pair): model, scenario, domain, Skew."""
    rows: list[dict[str, object]] = []
    for path in paths:
        data = load_report(path)
        keep_fifty = bool(data["run"].get("keep_fifty", False))
        model = str(data["run"].get("model") or path.stem)
        pairs = [r for r in report_records(data, path) if r.kind == "inverted_pair" and r.condition == condition]
        plus, minus = pair_answers(pairs, keep_fifty)
        for record, skew in zip(pairs, pair_skews(plus, minus)):
            if np.isfinite(skew):
                rows.append({"model": model, "scenario": f"{record.suite}::{record.item}",
                             "domain": record.domain or "(none)", "skew": float(skew)})
    return rows


def compare_report(path: Path) -> dict[str, Any]:
    """A report whose aggregates and gates ``compare`` can read."""
    data = load_report(path)
    for key in ("aggregates", "gates"):
        for entry in data[key]:
            if not isinstance(entry, dict) or not isinstance(entry.get("metric"), str):
                raise ReportError(f"{path}: an entry of '{key}' is not an object with a 'metric'.")
    return data


def cmd_compare(args: argparse.Namespace) -> int:
    """Several runs side by side: key metrics per run (as each report stored them), then the
    variance decomposition."""
    runs = [(str(data["run"].get("model") or path.stem), data)
            for path in map(Path, args.reports) for data in [compare_report(path)]]
    model = build_compare_model(runs)
    print(f"{len(model.runs)} runs side by side, {model.key_metrics.title}:")
    for text, _style in render_table(model.key_metrics):
        print(text)
    if len({label for label, _ in runs}) >= 2:
        print()
        cmd_variance(argparse.Namespace(reports=args.reports, condition="base"))
    if args.html:
        from .report.html import build_compare_html, write_html

        try:
            write_html(Path(args.html), build_compare_html(runs))
        except OSError as exc:
            raise CliError(f"--html {args.html}: not written ({exc.strerror}).") from None
        print(f"optbench compare: wrote {args.html}")
    return 0


def cmd_variance(args: argparse.Namespace) -> int:
    rows = skew_rows([Path(p) for p in args.reports], args.condition)
    models = {r["model"] for r in rows}
    if len(models) < 2:
        print(f"optbench variance: need reports of at least two models, got {len(models)}.", file=sys.stderr)
        return 2
    shares, residual = decompose(rows, "skew", ["model", "scenario", "domain"])
    body = [[s.factor, str(s.levels), f"{s.sum_of_squares:.1f}", f"{100 * s.share:.1f}%",
             f"{100 * s.marginal_share:.1f}%"] for s in shares]
    body.append(["residual", "", "", f"{100 * residual:.1f}%", ""])
    print(f"Skew variance over {len(rows)} pairs from {len(models)} models (condition {args.condition}):")
    for line in table(["factor", "levels", "type-II SS", "% of total", "alone (eta^2)"], body):
        print(line)
    print("Scenarios are nested in domains: once scenario is in the model, domain adds nothing "
          "(type-II 0); 'alone' is each factor's share by itself.")
    return 0


def cmd_crosslingual(args: argparse.Namespace) -> int:
    """Track B Skew by model and language, as each report's language table stored it."""
    by_model = {}
    reports = {}
    for path in map(Path, args.reports):
        data = load_report(path)
        model = str(data["run"].get("model") or path.stem)
        by_model[model] = stored_language_skews(data, path)
        reports[model] = (data, path)
    result = model_language_ratio(by_model)
    every = build_crosslingual_model({model: stored_language_metrics(data, path) for model, (data, path) in
                                      reports.items()})
    if (len(result.models) < 2 or len(result.languages) < 2) and every.spreads.empty:
        print("optbench crosslingual: need reports of at least two models over at least two shared languages "
              f"(got {len(result.models)} models, {len(result.languages)} shared languages).", file=sys.stderr)
        return 2
    if len(result.models) >= 2 and len(result.languages) >= 2:
        body = [[m] + [value_text("skew", result.matrix[(m, lang)]) for lang in result.languages]
                for m in result.models]
        print("Track B Skew (pp, base condition) by model and language:")
        for line in table(["model", *result.languages], body):
            print(line)
        print(f"inter-model SD within a language (mean): {result.inter_model_sd:.2f} pp")
        print(f"inter-language SD within a model (mean): {result.inter_language_sd:.2f} pp")
        print(f"ratio: {result.ratio:.1f}x (OptimismBench reports 7.2 vs 1.5 pp, 4.7x)")
    for part in (every.spreads, every.by_model):
        if not part.empty:
            print(f"\n{part.title}:")
            for text, _style in render_table(part):
                print(text)
    return 0


def stored_language_skews(data: dict[str, Any], path: Path) -> list[LanguageSkew]:
    """The report's Track B Skew per language, without scoring anything again."""
    try:
        entries = (data.get("languages") or {}).get("track_b_skew") or []
        return [LanguageSkew(str(e["language"]), as_float(e.get("skew")), as_float(e.get("ci_low")),
                             as_float(e.get("ci_high")), int(e.get("n") or 0)) for e in entries]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ReportError(f"{path}: an entry of 'languages.track_b_skew' is malformed "
                          f"({type(exc).__name__}: {exc}).") from None


def stored_language_metrics(data: dict[str, Any], path: Path) -> list[LanguageMetric]:
    """The report's every metric per language (none in reports written before they were stored)."""
    try:
        entries = (data.get("languages") or {}).get("metrics") or []
        return [LanguageMetric(str(e["bank"]), str(e["condition"]), str(e["metric"]),
                               None if e.get("tolerance") is None else float(e["tolerance"]), str(e["language"]),
                               str(e.get("suite") or e["bank"]), as_float(e.get("value")), as_float(e.get("ci_low")),
                               as_float(e.get("ci_high")), int(e.get("n") or 0)) for e in entries]
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise ReportError(f"{path}: an entry of 'languages.metrics' is malformed "
                          f"({type(exc).__name__}: {one_line(exc, 200)}).") from None


def cmd_baseline(args: argparse.Namespace) -> int:
    """Store a run's JSON report as the baseline later runs compare against."""
    source, target = Path(args.report), Path(args.output)
    data = load_report(source)
    report_records(data, source)  # a report whose items cannot be read is no baseline
    try:
        write_report(target, data)
    except OSError as exc:
        raise CliError(f"--output {target}: not written ({exc.strerror}).") from None
    usage = data["run"].get("model")
    print(f"optbench baseline: {target} now holds the run of {usage} ({len(data['items'])} item results); "
          f"compare against it with --optbench-baseline {target}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="optbench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    lint = sub.add_parser("lint", help="check suite files without calling a model")
    lint.add_argument("paths", nargs="*", help="suite files or directories (default: suites)")
    lint.set_defaults(func=cmd_lint)
    bank = sub.add_parser("bank", help="items per suite and language (the README's bank table)")
    bank.add_argument("paths", nargs="*", help="suite files or directories (default: suites)")
    bank.set_defaults(func=cmd_bank)
    variance = sub.add_parser("variance", help="variance decomposition of Skew over several JSON reports")
    variance.add_argument("reports", nargs="+", help="JSON reports written by --optbench-report, one per model")
    variance.add_argument("--condition", default="base", help="condition to use (default: base)")
    variance.set_defaults(func=cmd_variance)
    compare = sub.add_parser("compare", help="several JSON reports (one per model) side by side")
    compare.add_argument("reports", nargs="+", help="JSON reports written by --optbench-report")
    compare.add_argument("--html", metavar="PATH", help="also write an HTML page with the runs' plots")
    compare.set_defaults(func=cmd_compare)
    baseline = sub.add_parser("baseline", help="store a JSON report as the baseline for later runs")
    baseline.add_argument("report", help="a JSON report written by --optbench-report")
    baseline.add_argument("--output", default=".optbench/baseline.json",
                          help="where to keep the baseline (default: .optbench/baseline.json)")
    baseline.set_defaults(func=cmd_baseline)
    crosslingual = sub.add_parser("crosslingual", help="every metric by model and language, and model vs language spread, over JSON reports")
    crosslingual.add_argument("reports", nargs="+", help="JSON reports, one per model, each over several languages")
    crosslingual.set_defaults(func=cmd_crosslingual)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (ReportError, CliError) as exc:
        print(f"optbench {args.command}: {printable(exc)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
