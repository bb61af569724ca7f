"""The ``optbench`` command: work on suites and reports without running pytest.

    optbench lint [PATH ...]          check suites against the construction rules
    optbench compare REPORT ...       several runs side by side (and --html PATH)
    optbench variance REPORT ...      model vs scenario vs domain shares of Skew variance
    optbench crosslingual REPORT ...  every metric by model and language; model vs language spread
    optbench baseline REPORT          keep a run's report as the baseline (--output PATH)
    optbench power REPORT             the smallest crossing or change a run can detect, and the
                                      items and samples a target effect needs (--effect X)
    optbench merge REPORT ... --output ALL.json   join the reports of a run's CI shards
    optbench gate REPORT              score and gate a (merged) report offline, as a session does
    optbench collect                  pick up the store's open provider batches
    optbench bank [PATH ...]          items per suite and language, as a Markdown table (default: the
                                      bank that ships with the package)
    optbench init [DIR]               a starting point: thresholds, a suite, conftest.py, a CI workflow
    optbench explain "REPLY" [--question Q]   every number of a reply, the rule that decided
                                      its role, and the reading (or why there is none)
"""

from __future__ import annotations

import argparse
import fnmatch
import functools
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .metrics.skew import pair_skews
from .metrics.variance import decompose
from .report.json_report import write_report
from .report.model import build_compare_model
from .report.model.crosslingual import build_crosslingual_model
from .report.model.fmt import as_float, digits, plain, value_text
from .report.reading import ReportError, load_report, report_records
from .report.terminal import render_table, table
from .scoring.aggregate import pair_answers
from .scoring.crosslingual import LanguageMetric, LanguageSkew, model_language_ratio
from .suite.bank import bank_table
from .suite.lint import ERROR, summary_line
from .text.display import one_line, printable


class CliError(Exception):
    """A problem with the command's arguments or outputs; one sentence, exit status 2."""


def cmd_lint(args: argparse.Namespace) -> int:
    from .scoring.gates.lint import lint_project

    findings = lint_project([Path(p) for p in args.paths or ["suites"]])
    for finding in findings:
        print(finding.line())
    print(summary_line(findings))
    return 1 if any(f.severity == ERROR for f in findings) else 0


def cmd_explain(args: argparse.Namespace) -> int:
    """How one reply is read: every number found, the rule that decided its role, the reading."""
    from .answers.explain import explain

    reply = args.reply
    if reply == "-":
        try:
            reply = sys.stdin.buffer.read(MAX_EXPLAIN_BYTES + 1).decode("utf-8", errors="replace")
        except OSError as exc:
            raise CliError(f"cannot read the reply from standard input ({exc.strerror}).") from None
        if len(reply.encode("utf-8", errors="replace")) > MAX_EXPLAIN_BYTES:
            raise CliError(f"the reply on standard input is longer than {MAX_EXPLAIN_BYTES:,} bytes.")
    truncated = {"yes": True, "no": False, None: None}[args.truncated]
    found = explain(reply, question=args.question, truncated=truncated)
    print("\n".join(printable(line) for line in found.text().split("\n")))
    return 0


MAX_EXPLAIN_BYTES = 1_000_000  # a reply longer than this is not one a model wrote


def cmd_bank(args: argparse.Namespace) -> int:
    """The table of the suites under the paths; without paths, of the bank that ships."""
    if args.paths:
        for line in bank_table([Path(p) for p in args.paths]):
            print(line)
        return 0
    from .suite.bundled import bundled

    found = bundled()
    if found is None:
        raise CliError("this installation of pytest-optbench carries no item bank; name the suites to count "
                       "(optbench bank PATH ...).")
    for line in bank_table([found.suites]):
        print(line)
    print(f"\nThe bank that ships with {found.origin}, in {found.suites}; audit it from any directory with "
          "pytest --optbench-bank --model PROVIDER:NAME (narrow it with --language, -k, -m).")
    return 0


def cmd_init(args: argparse.Namespace) -> int:
    """A starting point in DIR: thresholds, change gates, a suite, conftest.py, the CI workflow."""
    from .scaffold import ScaffoldError, write_scaffold

    target = Path(args.dir)
    try:
        written = write_scaffold(target)
    except ScaffoldError as exc:
        raise CliError(str(exc)) from None
    for entry in written:
        if entry.written:
            print(f"optbench init: wrote {target / entry.path}")
        else:
            print(f"optbench init: left {target / entry.path} alone (it is there already; nothing was changed)")
    if not any(e.written for e in written):
        print(f"optbench init: nothing written: all {len(written)} files are in {target} already")
        return 0
    print("Next: optbench lint .  then  pytest --optbench-bank --language en --model sim:calibrated --optbench-strict"
          "  (a simulated model, no key); set the OPENAI_API_KEY secret and MODEL in "
          ".github/workflows/optbench.yml for pull requests.")
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
        for record, skew in zip(pairs, pair_skews(plus, minus), strict=True):
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


def cmd_power(args: argparse.Namespace) -> int:
    """What a run's data can resolve, and what a target effect needs (scoring/power_plan.py)."""
    from .scoring.power_plan import power_rows

    path = Path(args.report)
    data = load_report(path)
    records = report_records(data, path)
    rows = power_rows(data, records)
    metric = args.metric or ("skew" if args.effect is not None else None)
    rows = [r for r in rows if (metric is None or r.metric == metric) and r.condition == args.condition
            and fnmatch.fnmatchcase(r.suite, args.suite)]
    if not rows:
        have = sorted({str(a.get("metric")) for a in data["aggregates"] if isinstance(a, dict)})
        print(f"optbench power: {path} has no {metric or 'aggregate'} under condition {args.condition!r} in suites "
              f"{args.suite!r} (metrics in the report: {', '.join(have) or 'none'}).", file=sys.stderr)
        return 2

    def amount(m: str, value: float) -> str:
        return plain(value, digits(m)) if math.isfinite(value) else "n/a"

    what = "change" if args.change else "crossing"
    if args.effect is None:
        body = [[r.suite, r.condition, r.metric, str(r.n), "" if r.samples is None else f"{r.samples:.3g}",
                 amount(r.metric, r.detectable), amount(r.metric, r.detectable_change), r.source] for r in rows]
        print(f"{path}: the smallest crossing of a gate's bound, and the smallest change against a run on the same "
              "items, detected with 80% power (one-sided 2.5%, as a CI gate or a 95% CI that excludes 0):")
        for line in table(["suite", "condition", "metric", "n", "samples", "crossing", "change", "from"], body):
            print(line)
        print("Changes of metrics read off their CI need a baseline comparison in the report (n/a otherwise). "
              "For the items a given effect needs: optbench power REPORT --metric M --effect X [--change].")
        return 0
    pricing = power_pricing(args, data, records)
    for r in rows:
        design = r.design(args.effect, args.change)
        print(f"{r.suite}/{r.condition} {r.metric}: to detect a {what} of {amount(r.metric, args.effect)} with 80% "
              f"power (one-sided 2.5%), from {r.source} (now n = {r.n}"
              + ("" if r.samples is None else f", {r.samples:.3g} samples per prompt") + "):")
        body = [[str(d.samples) if d.samples else "as run",
                 f"{d.items:,}" if d.items is not None else "unreachable"] for d in design]
        header = ["samples per prompt", "items needed"]
        priced = pricing.group(r.suite, r.condition) if pricing is not None else None
        if priced is not None:
            header.append("cost of a run")
            for row, d in zip(body, design, strict=True):
                row.append(priced.text(d.items, d.samples) if d.items is not None else "")
        for line in table(header, body):
            print(line)
        if pricing is not None and priced is None:
            print(f"  (no cost: the answers of {r.suite}/{r.condition} have no billed tokens, or a model without a "
                  f"price in {pricing.prices.source})")
        if args.change and r.components is None and not math.isfinite(r.change_sd):
            print("  (no change variance: the report holds no baseline comparison of this metric; run with "
                  "--optbench-baseline first)")
    return 0


class _GroupPrice:
    """The cost of one (suite, condition)'s items at the run's cost per answer."""

    def __init__(self, per_answer: float, prompts: float, samples: float, currency: str) -> None:
        self.per_answer, self.prompts, self.samples, self.currency = per_answer, prompts, samples, currency

    def text(self, items: int, samples: int | None) -> str:
        from .scoring.cost import money, run_price

        return money(run_price(items, self.prompts, samples or self.samples, self.per_answer), self.currency)


class _PowerPricing:
    """``optbench power`` in money: --prices, else the prices the report's run was costed at."""

    def __init__(self, prices: Any, records: list[Any]) -> None:
        self.prices = prices
        self.groups: dict[tuple[str, str], list[Any]] = {}
        for record in records:
            self.groups.setdefault((record.suite, record.condition), []).append(record)

    def group(self, suite: str, condition: str) -> _GroupPrice | None:
        from .scoring.cost import cost_per_answer

        records = self.groups.get((suite, condition), [])
        per_answer = cost_per_answer(records, self.prices)
        prompts = [len(r.prompts) for r in records]
        answers = [len(p.answers) for r in records for p in r.prompts]
        if per_answer is None or not prompts or not answers:
            return None
        return _GroupPrice(per_answer, sum(prompts) / len(prompts), sum(answers) / len(answers), self.prices.currency)


def power_pricing(args: argparse.Namespace, data: dict[str, Any], records: list[Any]) -> _PowerPricing | None:
    from .scoring.cost import prices_of_report, read_prices

    prices = read_prices(Path(args.prices)) if args.prices else prices_of_report(data["run"])
    return _PowerPricing(prices, records) if prices is not None else None


def _positive(text: str) -> float:
    shown = repr(text if len(text) <= 40 else text[:40] + "...")
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {shown}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be above 0, got {shown}")
    return value


def cmd_merge(args: argparse.Namespace) -> int:
    """The reports of one run's shards (or disjoint parts) -> one report of every item result."""
    from .report.json_report import write_report as write
    from .scoring.shards import merge_reports
    from .session.gate import pending_records

    reports = []
    for name in args.reports:
        path = Path(name)
        data = load_report(path)
        report_records(data, path)
        pending_records(data, path)
        reports.append((name, data))
    merged, notes = merge_reports(reports)
    strict = args.strict if args.strict is not None else merged["run"].get("strict") is True
    merged["run"]["strict"] = strict
    try:
        write(Path(args.output), merged)
    except OSError as exc:
        raise CliError(f"--output {args.output}: not written ({exc.strerror or type(exc).__name__}).") from None
    for note in notes:
        print(f"optbench merge: {'strict' if strict else 'note'}: {note}")
    info = merged["run"]["merge"]
    shards = f", shards 1-{info['shards']} of {info['shards']}" if info.get("shards") else ""
    print(f"optbench merge: {args.output} holds {info['results']:,} item results ({info['pending']:,} pending, "
          f"{len(merged['items_without_results']):,} without results) from {len(reports)} report(s){shards}; "
          f"score and gate it with: optbench gate {args.output}")
    if strict and notes:
        print(f"optbench merge: strict mode: {len(notes)} problem(s) above fail the merge (the merged report was "
              "written)", file=sys.stderr)
        return 1
    return 0


def cmd_gate(args: argparse.Namespace) -> int:
    from .elicit.store import StoreError
    from .scoring.gates.spec import ThresholdsError
    from .session.gate import EXIT_USAGE, GateArgs, run_gate

    def path(value: str | None) -> Path | None:
        return Path(value) if value else None

    gate_args = GateArgs(Path(args.report), [Path(t) for t in args.thresholds or []], path(args.baseline), path(args.output),
                         path(args.markdown), path(args.html), path(args.junitxml), args.strict, args.verbose,
                         multiplicity=args.multiplicity, on_inconclusive=args.on_inconclusive,
                         prices=path(args.prices))
    try:
        return run_gate(gate_args, print)
    except (ReportError, ThresholdsError, StoreError, ValueError, OSError) as exc:
        text = str(exc) if not isinstance(exc, OSError) else f"{exc.filename}: {exc.strerror}."
        print(f"optbench gate: {text}", file=sys.stderr)
        return EXIT_USAGE


def cmd_collect(args: argparse.Namespace) -> int:
    import os

    from .elicit.batch import collect_batches
    from .elicit.store import StoreError

    path = Path(args.cache_dir) / "responses.sqlite"
    if not path.is_file():
        print(f"optbench collect: {path}: no response store there (pass --cache-dir DIR).", file=sys.stderr)
        return 2
    try:
        return collect_batches(path, args.wait, args.base_url, dict(os.environ), print)
    except StoreError as exc:
        print(f"optbench collect: {exc}", file=sys.stderr)
        return 2


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {text!r}")
    return value


def load_plugins(modules: Sequence[str]) -> None:
    """The kinds installed packages declare, then each ``--plugin`` module (a module of the
    current directory is found as ``python -m`` would find it), as pytest's conftest would."""
    import importlib

    from .kinds import load_entry_points

    load_entry_points()
    if modules and "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 (the plugin's own error, whatever it is, as one sentence)
            raise CliError(f"--plugin {module}: cannot be imported ({type(exc).__name__}: {one_line(exc, 200)})") \
                from None


@functools.cache
def _parser() -> argparse.ArgumentParser:
    """The command line, built once per process (tests and a wrapper call ``main`` many times)."""
    parser = argparse.ArgumentParser(prog="optbench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-p", "--plugin", action="append", default=[], metavar="MODULE",
                        help="import MODULE first (from here or the path), e.g. one that registers an item kind "
                             "with pytest_optbench.api.register_kind; installed plugins load by themselves")
    sub = parser.add_subparsers(dest="command", required=True)
    lint = sub.add_parser("lint", help="check suite files without calling a model")
    lint.add_argument("paths", nargs="*", help="suite files or directories (default: suites)")
    lint.set_defaults(func=cmd_lint)
    explain = sub.add_parser("explain", help="how a reply is read: every number, the rule that decided it, the reading")
    explain.add_argument("reply", help="the reply text ('-': read it from standard input)")
    explain.add_argument("--question", help="the question (user message) the reply answers")
    explain.add_argument("--truncated", choices=("yes", "no"),
                         help="the reply hit the token limit (yes) or stopped by itself (no); default: unknown")
    explain.set_defaults(func=cmd_explain)
    init = sub.add_parser("init", help="write a starting point: thresholds, a suite, conftest.py, a CI workflow")
    init.add_argument("dir", nargs="?", default=".", help="where to write (default: the current directory)")
    init.set_defaults(func=cmd_init)
    bank = sub.add_parser("bank", help="items per suite and language (the bank table of docs/suites.md)")
    bank.add_argument("paths", nargs="*", help="suite files or directories (default: the bank that ships with "
                                               "pytest-optbench)")
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
    power = sub.add_parser("power", help="the smallest effect a run can detect, and the items a target effect needs")
    power.add_argument("report", help="a JSON report written by --optbench-report")
    power.add_argument("--metric", help="one metric (default: every metric; with --effect: skew)")
    power.add_argument("--effect", type=_positive, metavar="X",
                       help="the crossing (or with --change the change) to detect, in the metric's units "
                            "(pp for Skew): print the items needed per number of samples")
    power.add_argument("--change", action="store_true", help="a change between two runs on the same items")
    power.add_argument("--condition", default="base", help="condition (default: base)")
    power.add_argument("--suite", default="*", help="suite glob (default: every suite)")
    power.add_argument("--prices", metavar="PATH",
                       help="a prices file: what the items a target effect needs would cost (default: the prices "
                            "the report's run was costed at, if any)")
    power.set_defaults(func=cmd_power)
    merge = sub.add_parser("merge", help="join the JSON reports of one run's CI shards into one report")
    merge.add_argument("reports", nargs="+", help="JSON reports written with --optbench-shard I/N (all N of them)")
    merge.add_argument("--output", required=True, help="where to write the merged report")
    merge.add_argument("--strict", action="store_true", default=None,
                       help="fail (exit 1, the merged report still written) when the merge cannot prove the "
                            "reports cover the whole selection (default: strict when a report was written under "
                            "strict mode)")
    merge.add_argument("--no-strict", dest="strict", action="store_false", help="not strict, whatever the reports say")
    merge.set_defaults(func=cmd_merge)
    gate = sub.add_parser("gate", help="score and gate a (merged) JSON report offline, with a session's exit codes")
    gate.add_argument("report", help="a JSON report (e.g. from optbench merge)")
    gate.add_argument("--thresholds", metavar="PATH", action="append",
                      help="gates file (default: thresholds.yaml here, if present); repeat to add several files' gates")
    gate.add_argument("--baseline", metavar="REPORT", help="compare with an earlier run, paired by item")
    gate.add_argument("--output", "--report", dest="output", metavar="PATH", help="write the scored JSON report")
    gate.add_argument("--markdown", metavar="PATH", help="write a Markdown summary (also to $GITHUB_STEP_SUMMARY)")
    gate.add_argument("--html", metavar="PATH", help="write the HTML report")
    gate.add_argument("--junitxml", metavar="PATH", help="write items and gate verdicts as JUnit XML")
    gate.add_argument("--strict", action="store_true", default=None,
                      help="fail on whatever leaves a gate unenforced, as --optbench-strict does: a gate not "
                           "evaluated or inconclusive, no gate at all, items still pending in provider batches "
                           "(default: strict when the report's run was)")
    gate.add_argument("--no-strict", dest="strict", action="store_false", help="not strict, whatever the report says")
    gate.add_argument("--on-inconclusive", choices=("pass", "fail"),
                      help="whether INCONCLUSIVE gates fail (overrides the thresholds file's on_inconclusive; "
                           "default: the file's, else pass)")
    gate.add_argument("-v", "--verbose", action="count", default=0, help="list every gate row")
    gate.add_argument("--prices", metavar="PATH", help="a prices file: show the run's cost in money")
    gate.add_argument("--multiplicity", choices=("holm", "bh", "none"),
                      help="error control over the 'evidence: ci' gates (default: the thresholds file's, else holm)")
    gate.set_defaults(func=cmd_gate)
    collect = sub.add_parser("collect", help="pick up the results of the store's open provider batches")
    collect.add_argument("--cache-dir", default=".optbench", metavar="DIR",
                         help="the response store's directory (default: .optbench)")
    collect.add_argument("--wait", type=_seconds, default=0.0, metavar="SECONDS",
                         help="wait up to this long for open batches to end (default 0)")
    collect.add_argument("--base-url", metavar="URL", help="API base URL, when the store's is not the one to use")
    collect.set_defaults(func=cmd_collect)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        load_plugins(args.plugin)
        return int(args.func(args))
    except (ReportError, CliError) as exc:
        print(f"optbench {args.command}: {printable(exc)}", file=sys.stderr)
        return 2
    except ValueError as exc:  # MergeError and other one-sentence input errors
        print(f"optbench {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
