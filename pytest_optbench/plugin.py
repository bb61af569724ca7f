"""pytest entry point: options, the model fixture, and hooks of a few lines each.

The work happens elsewhere: ``collect`` builds items from suites, ``state.OptbenchRun``
gathers records and decides the outcome, ``report`` formats it.
"""

from __future__ import annotations

import argparse
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from . import __version__
from .collect import SuiteFile, looks_like_suite
from .gates import ThresholdsError, load_thresholds
from .lint import ERROR, lint_paths, summary_line
from .prompts import Settings
from .providers import ProviderError, build_model
from .report.json_report import build_report, write_report
from .report.terminal import (
    binary_table, coherence_table, effects_table, failure_sentences, gate_table, not_evaluated_sentences,
    skew_table,
)
from .state import NO_MODEL_REASON, RUN_KEY, OptbenchRun, RunOptions, get_run, is_controller

THRESHOLDS_FILE = "thresholds.yaml"


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _temperature(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not 0 <= value <= 2:
        raise argparse.ArgumentTypeError(f"must be from 0 to 2, got {value:g}")
    return value


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number from 0 to 1, got {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be from 0 to 1, got {value:g}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("optbench", "LLM probability-bias audits (pytest-optbench)")
    group.addoption("--model", dest="optbench_model", metavar="PROVIDER:NAME",
                    help="model under test, e.g. sim:optimist, openai:gpt-4.1-mini, anthropic:claude-...")
    group.addoption("--base-url", dest="optbench_base_url", metavar="URL",
                    help="API base URL for OpenAI-compatible or Anthropic-compatible servers")
    group.addoption("--samples", dest="optbench_samples", type=_positive_int, metavar="N",
                    help="answers drawn per prompt (overrides suite and item settings)")
    group.addoption("--temperature", dest="optbench_temperature", type=_temperature, metavar="T",
                    help="sampling temperature (overrides suite and item settings)")
    group.addoption("--system-prompt", dest="optbench_system_prompt", metavar="FILE",
                    help="file whose text replaces the system prompt of every suite")
    group.addoption("--keep-fifty", dest="optbench_keep_fifty", action="store_true",
                    help="count answers of exactly 50 in Skew (by default they are refusals)")
    group.addoption("--thresholds", dest="optbench_thresholds", metavar="PATH",
                    help=f"gates file (default: {THRESHOLDS_FILE} at the rootdir, if present)")
    group.addoption("--optbench-report", dest="optbench_report", metavar="PATH",
                    help="write a JSON report of every answer, aggregate and gate")
    group.addoption("--optbench-lint", dest="optbench_lint", action="store_true",
                    help="check the suite files under the given paths against the construction rules, "
                         "without calling a model, and exit (non-zero on errors)")
    group.addoption("--optbench-seed", dest="optbench_seed", type=_int, default=0, metavar="N",
                    help="seed for bootstrap CIs and simulated models (default 0)")
    group.addoption("--optbench-base-rate", dest="optbench_base_rate", type=_probability, metavar="P",
                    help="out-of-sample base rate (0-1) of yes answers, for the climatology baseline "
                         "of known-answer items (measure it on questions disjoint from the scored ones)")
    group.addoption("--optbench-bootstrap", dest="optbench_bootstrap", type=_positive_int,
                    default=10_000, metavar="N", help="bootstrap resamples per CI (default 10000)")


def _read_options(config: pytest.Config) -> RunOptions:
    system_prompt = None
    if path := config.getoption("optbench_system_prompt"):
        try:
            system_prompt = Path(path).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise pytest.UsageError(f"--system-prompt {path}: cannot read the file ({exc.strerror}).") from None
        if not system_prompt:
            raise pytest.UsageError(f"--system-prompt {path}: the file is empty.")
    thresholds = config.getoption("optbench_thresholds")
    if thresholds is None and (config.rootpath / THRESHOLDS_FILE).is_file():
        thresholds = config.rootpath / THRESHOLDS_FILE
    elif thresholds is not None and not Path(thresholds).is_file():
        raise pytest.UsageError(f"--thresholds {thresholds}: no such file.")
    report = config.getoption("optbench_report")
    return RunOptions(
        model_spec=config.getoption("optbench_model"),
        base_url=config.getoption("optbench_base_url"),
        seed=config.getoption("optbench_seed"),
        keep_fifty=config.getoption("optbench_keep_fifty"),
        n_resamples=config.getoption("optbench_bootstrap"),
        base_rate=config.getoption("optbench_base_rate"),
        settings=Settings(config.getoption("optbench_samples"), config.getoption("optbench_temperature"),
                          system_prompt),
        thresholds_path=Path(thresholds) if thresholds else None,
        report_path=Path(report) if report else None,
    )


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    if config.getoption("optbench_lint"):
        findings = lint_paths([Path(a.split("::")[0]) for a in config.args], root=config.rootpath)
        for finding in findings:
            print(finding.line())
        print(summary_line(findings))
        return 1 if any(f.severity == ERROR for f in findings) else 0
    return None


def _display(config: pytest.Config, path: Path) -> str:
    try:
        return str(path.resolve().relative_to(config.rootpath))
    except ValueError:
        return str(path)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "optbench: an item collected from a pytest-optbench suite file")
    options = _read_options(config)
    gates, display = [], None
    if options.thresholds_path:
        display = _display(config, options.thresholds_path)
        try:
            gates = load_thresholds(options.thresholds_path, display)
        except ThresholdsError as exc:
            raise pytest.UsageError(str(exc)) from None
    run = OptbenchRun(options, gates, display)
    if options.model_spec:
        try:  # fail fast on a bad --model, before anything is collected or called
            run.model = build_model(options.model_spec, seed=options.seed, base_url=options.base_url)
        except ProviderError as exc:
            raise pytest.UsageError(str(exc)) from None
    config.stash[RUN_KEY] = run
    if is_controller(config):
        config.pluginmanager.register(ControllerPlugin(run), "optbench-controller")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if looks_like_suite(file_path):
        return SuiteFile.from_parent(parent, path=file_path)
    return None


@pytest.fixture(scope="session")
def optbench_model(pytestconfig: pytest.Config) -> Any:
    """The model under test. Override it in conftest.py to audit your own prompt or pipeline:
    return a callable ``f(prompt) -> str | number`` or an object with ``complete(prompt)``
    (sync or async). ``prompt`` is a ``pytest_optbench.Prompt``."""
    model = get_run(pytestconfig).model
    if model is None:
        pytest.skip(NO_MODEL_REASON)
    return model


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    record = getattr(item, "optbench_record", None)
    if call.when == "call" and record is not None:
        report.optbench_record = record.to_dict()  # travels to the xdist controller
    return report


class GateFailureStat:
    """An entry in the terminal reporter's stats, so the final line counts failed gates."""

    count_towards_summary = True

    def __init__(self, message: str) -> None:
        self.message = message


class ControllerPlugin:
    """Hooks that only the controller (or a serial run) needs: gather, decide, report."""

    def __init__(self, run: OptbenchRun) -> None:
        self.run = run

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.run.add_report(report)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, Any, Any]:
        result = yield
        outcome = self.run.finish()
        if outcome.failed_gates or (outcome.missing and outcome.records):
            session.testsfailed += 1  # fail the session the way pytest-cov does
        if self.run.options.report_path:
            write_report(self.run.options.report_path,
                         build_report(outcome, run_metadata(self.run)))
        return result

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        write_summary(terminalreporter, self.run)


def run_metadata(run: OptbenchRun) -> dict[str, Any]:
    records = run.outcome.records if run.outcome else []
    models = sorted({r.model for r in records})
    settings = run.settings
    return {
        "plugin_version": __version__,
        "model": run.options.model_spec or (models[0] if len(models) == 1 else models),
        "base_url_set": run.options.base_url is not None,
        "seed": run.options.seed,
        "keep_fifty": run.options.keep_fifty,
        "bootstrap_resamples": run.options.n_resamples,
        "base_rate_oos": run.options.base_rate,
        "samples_override": settings.samples,
        "temperature_override": settings.temperature,
        "system_prompt_override": settings.system_prompt is not None,
        "prompt_hash": run.prompt_hash(),
        "thresholds": run.thresholds_display,
    }


def write_summary(tr: Any, run: OptbenchRun) -> None:
    outcome = run.outcome
    if outcome is None or not (outcome.records or outcome.missing):
        return
    tr.write_sep("=", "optbench summary", bold=True)
    models = sorted({r.model for r in outcome.records})
    tr.write_line(f"model {', '.join(models) or '?'} | seed {run.options.seed} | prompt {run.prompt_hash()} | "
                  f"{len(outcome.records)} item x condition results")
    verbose = tr.config.getoption("verbose") > 0
    sections = [
        ("Skew of inverted pairs (pp)", skew_table(outcome.aggregates, with_domains=verbose)),
        ("known-answer items", binary_table(outcome.aggregates)),
        ("coherence", coherence_table(outcome.aggregates)),
        ("condition effects against base (pp)", effects_table(outcome.aggregates)),
    ]
    for title, lines in sections:
        if lines:
            tr.write_line("")
            tr.write_line(f"{title}:", bold=True)
            for line in lines:
                tr.write_line(line)
    if outcome.missing:
        tr.write_line(f"{len(outcome.missing)} item(s) failed without sending answers (crashed worker or "
                      f"fixture error); aggregates cover only the items that reported:", red=True)
        for nodeid in outcome.missing[:10]:
            tr.write_line(f"  {nodeid}", red=True)
    if run.gates:
        tr.write_line("")
        tr.write_line(f"gates from {run.thresholds_display}:", bold=True)
        for text, style in gate_table(outcome.verdicts):
            tr.write_line(text, **({style: True} if style else {}))
        for sentence in not_evaluated_sentences(outcome.verdicts):
            tr.write_line(sentence, yellow=True)
        failures = failure_sentences(outcome.verdicts)
        for sentence in failures:
            tr.write_line(sentence, red=True)
        passed = sum(v.verdict == "pass" for v in outcome.verdicts)
        summary = f"optbench gates: {len(failures)} failed, {passed} passed, " \
                  f"{len(outcome.verdicts) - len(failures) - passed} not evaluated"
        tr.write_line(summary, red=bool(failures), green=not failures, bold=True)
        if failures:  # so pytest's last line says it too, not just "N passed"
            tr.stats.setdefault("optbench gate(s) failed", []).extend(GateFailureStat(f) for f in failures)
