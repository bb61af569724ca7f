"""Command-line options: declared, parsed and checked into a ``RunOptions``."""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

THRESHOLDS_FILE = "thresholds.yaml"
# How answers are asked for (suites.ELICIT_MODES; a test checks the two agree), and what a
# server that rejects structured output or log-probabilities gets instead.
ELICIT_MODES = ("text", "json", "logprobs")
ELICIT_FALLBACKS = ("text", "fail")


@dataclass(frozen=True)
class Settings:
    """Command-line overrides; ``None`` means "not given", so lower levels apply."""

    samples: int | None = None
    temperature: float | None = None
    system_prompt: str | None = None
    elicit: str | None = None  # text | json | logprobs


@dataclass(frozen=True)
class EngineSettings:
    concurrency: int = 16
    max_retries: int = 6
    offline: bool = False
    max_tokens: int | None = None
    backoff_base: float = 0.5
    backoff_cap: float = 60.0
    peer_wait: float = 900.0  # how long to wait for another xdist worker's share at most
    peer_stall: float = 60.0  # ... and how long while no process stores anything (a dead peer)
    run_id: str = ""


@dataclass(frozen=True)
class RunOptions:
    model_spec: str | None = None
    base_url: str | None = None
    seed: int = 0
    keep_fifty: bool = False
    n_resamples: int = 10_000
    base_rate: float | None = None
    settings: Settings = Settings()
    thresholds_path: Path | None = None
    report_path: Path | None = None
    engine: EngineSettings = EngineSettings()
    languages: tuple[str, ...] = ()  # --language filters; empty: every language
    baseline_path: Path | None = None
    markdown_path: Path | None = None
    html_path: Path | None = None
    timeout: float = 60.0
    cache_dir: Path = Path(".optbench")
    strict: bool = False  # --optbench-strict or the ini option: what is not enforced fails the session
    elicit_fallback: str = "text"  # a server that rejects json/logprobs: ask in text, or fail the answers


def _number(cast: Callable[[str], Any], low: float | None = None, high: float | None = None,
            above: float | None = None) -> Callable[[str], Any]:
    """An argparse type: parse with ``cast`` and check the range; a bad value is one sentence."""
    noun = "a whole number" if cast is int else "a number"

    def parse(text: str) -> Any:
        try:
            value = cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {noun}, got {text!r}") from None
        if low is not None and high is not None and not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be from {low:g} to {high:g}, got {value:g}")
        if low is not None and high is None and value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low:g}, got {value:g}")
        if above is not None and not value > above:
            raise argparse.ArgumentTypeError(f"must be above {above:g}, got {value:g}")
        return value

    return parse


_positive_int = _number(int, low=1)
_temperature = _number(float, 0, 2)
_probability = _number(float, 0, 1)
_positive_float = _number(float, above=0)
_int = _number(int)


def add_options(parser: pytest.Parser) -> None:
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
    group.addoption("--optbench-elicit", dest="optbench_elicit", choices=ELICIT_MODES, metavar="MODE",
                    help="how answers are asked for: text (default; the reply is read by the answer "
                         "extractor), json (JSON-schema structured output; forced tool use on Anthropic) or "
                         "logprobs (the answer token's distribution, one greedy request per prompt); overrides "
                         "the suites' and items' 'elicit'")
    group.addoption("--optbench-elicit-fallback", dest="optbench_elicit_fallback", choices=ELICIT_FALLBACKS,
                    default="text", metavar="WHAT",
                    help="when the server rejects response_format or logprobs: text (ask in text mode, noted "
                         "in the summary; default) or fail (those answers fail)")
    group.addoption("--language", dest="optbench_languages", action="append", metavar="TAG",
                    help="run only suites in this language (BCP-47 tag or its prefix: en, zh, pt-BR); "
                         "repeat for several; default: every language")
    group.addoption("--keep-fifty", dest="optbench_keep_fifty", action="store_true",
                    help="count answers of exactly 50 in Skew (by default they are refusals)")
    group.addoption("--thresholds", dest="optbench_thresholds", metavar="PATH",
                    help=f"gates file (default: {THRESHOLDS_FILE} at the rootdir, if present)")
    group.addoption("--optbench-report", dest="optbench_report", metavar="PATH",
                    help="write a JSON report of every answer, aggregate and gate")
    group.addoption("--optbench-baseline", dest="optbench_baseline", metavar="REPORT",
                    help="a JSON report of an earlier run: report changes against it, paired by item, and "
                         "evaluate gates on change (max_increase, max_decrease, max_change)")
    group.addoption("--optbench-markdown", dest="optbench_markdown", metavar="PATH",
                    help="write a Markdown summary (also appended to $GITHUB_STEP_SUMMARY when it is set)")
    group.addoption("--optbench-html", dest="optbench_html", metavar="PATH",
                    help="write a self-contained HTML report with plots")
    group.addoption("--optbench-strict", dest="optbench_strict", action="store_true", default=None,
                    help="fail the session on whatever would leave a gate unenforced: a gate not evaluated, "
                         "no model, no suite item selected, a misspelt 'optbench' marker, an unused item field "
                         "(default: the ini option optbench_strict, else off)")
    parser.addini("optbench_strict", type="bool", default=False,
                  help="pytest-optbench: strict mode for every run of this repository (see --optbench-strict)")
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
    engine = parser.getgroup("optbench-engine", "pytest-optbench elicitation (API providers)")
    engine.addoption("--concurrency", dest="optbench_concurrency", type=_positive_int, default=16, metavar="N",
                     help="requests in flight at once, shared by xdist workers (default 16; halved on "
                          "each 429)")
    engine.addoption("--max-tokens", dest="optbench_max_tokens", type=_positive_int, metavar="N",
                     help="token limit per answer (default: none for OpenAI, 64 for Anthropic)")
    engine.addoption("--optbench-retries", dest="optbench_retries", type=_int, default=6, metavar="N",
                     help="retries of a failed request that can succeed (429, 5xx, timeout; default 6)")
    engine.addoption("--optbench-timeout", dest="optbench_timeout", type=_positive_float, default=60.0,
                     metavar="S", help="seconds before a request times out (default 60)")
    engine.addoption("--optbench-cache-dir", dest="optbench_cache_dir", metavar="DIR",
                     help="response store directory (default: .optbench/ at the rootdir)")
    engine.addoption("--optbench-offline", dest="optbench_offline", action="store_true",
                     help="answer from the response store only; name what is missing")


def read_options(config: pytest.Config) -> RunOptions:
    """The command line, checked; a bad value is a one-sentence usage error."""
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
    if config.getoption("optbench_html") and importlib.util.find_spec("matplotlib") is None:
        raise pytest.UsageError("--optbench-html needs matplotlib, which is not installed; install it with: "
                                "pip install 'pytest-optbench[html]'.")
    report = config.getoption("optbench_report")
    return RunOptions(
        model_spec=config.getoption("optbench_model"),
        base_url=config.getoption("optbench_base_url"),
        seed=config.getoption("optbench_seed"),
        keep_fifty=config.getoption("optbench_keep_fifty"),
        n_resamples=config.getoption("optbench_bootstrap"),
        base_rate=config.getoption("optbench_base_rate"),
        settings=Settings(config.getoption("optbench_samples"), config.getoption("optbench_temperature"),
                          system_prompt, config.getoption("optbench_elicit")),
        thresholds_path=Path(thresholds) if thresholds else None,
        report_path=Path(report) if report else None,
        markdown_path=Path(config.getoption("optbench_markdown")) if config.getoption("optbench_markdown") else None,
        html_path=Path(config.getoption("optbench_html")) if config.getoption("optbench_html") else None,
        baseline_path=Path(config.getoption("optbench_baseline")) if config.getoption("optbench_baseline") else None,
        languages=tuple(t.strip() for tag in (config.getoption("optbench_languages") or []) for t in tag.split(",")
                        if t.strip()),
        engine=EngineSettings(
            concurrency=config.getoption("optbench_concurrency"),
            max_retries=max(0, config.getoption("optbench_retries")),
            offline=config.getoption("optbench_offline"),
            max_tokens=config.getoption("optbench_max_tokens"),
        ),
        timeout=config.getoption("optbench_timeout"),
        cache_dir=Path(config.getoption("optbench_cache_dir") or config.rootpath / ".optbench"),
        strict=bool(config.getoption("optbench_strict") or config.getini("optbench_strict")),
        elicit_fallback=config.getoption("optbench_elicit_fallback") or "text",
    )
