"""Command-line options: declared, parsed and checked into a ``RunOptions``."""

from __future__ import annotations

import argparse
import importlib.util
import math
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
    peer_stall: float = 60.0  # how long an xdist worker waits for the asking one while nothing is stored (it died)
    run_id: str = ""
    deadline: float | None = None  # seconds the session may spend eliciting (--optbench-deadline)
    # Requests in a row that time out or cannot connect, with no answer in between, before the
    # session stops asking a server that is down or hung (the retries would take hours).
    max_dead_requests: int = 32
    # Requests in a row that time out (no complete reply within --optbench-timeout), with no
    # answer in between: the server stopped answering, and the session stops asking it.
    max_timeouts: int = 6


@dataclass(frozen=True)
class RunOptions:
    model_spec: str | None = None
    base_url: str | None = None
    seed: int = 0
    keep_fifty: bool = False
    n_resamples: int = 10_000
    base_rate: float | None = None
    settings: Settings = Settings()
    thresholds_paths: tuple[Path, ...] = ()  # --thresholds (repeatable), else thresholds.yaml at the rootdir
    bank: bool = False  # --optbench-bank: also collect the bundled item bank
    report_path: Path | None = None
    engine: EngineSettings = EngineSettings()
    languages: tuple[str, ...] = ()  # --language filters; empty: every language
    baseline_path: Path | None = None
    markdown_path: Path | None = None
    html_path: Path | None = None
    timeout: float = 60.0
    cache_dir: Path = Path(".optbench")
    strict: bool = False  # --optbench-strict or the ini option: what is not enforced fails the session
    multiplicity: str | None = None  # --optbench-multiplicity; None: the thresholds file's, else holm
    on_inconclusive: str | None = None  # --optbench-on-inconclusive; None: each gate's, the file's, else pass
    elicit_fallback: str = "text"  # a server that rejects json/logprobs: ask in text, or fail the answers
    batch: bool = False  # --optbench-batch: ask through the providers' batch APIs
    batch_wait: float = 0.0  # --optbench-batch-wait: seconds to wait for open batches
    batch_size: int | None = None  # --optbench-batch-size: lines per batch at most
    shard: tuple[int, int] | None = None  # --optbench-shard I/N as (I - 1, N)
    prices_path: Path | None = None  # --optbench-prices (or the ini option): the run's cost in money
    progress_interval: float = 30.0  # --optbench-progress-interval: seconds between plain progress lines (0: none)
    max_reply: int = 8_000_000  # --optbench-max-reply, in bytes: one reply body (or conftest reply) at most


def _quoted(text: str) -> str:
    """The value as typed, shortened: a 5,000-digit number is not repeated in full."""
    return repr(text if len(text) <= 40 else text[:40] + "...")


def _number(cast: Callable[[str], Any], low: float | None = None, high: float | None = None,
            above: float | None = None) -> Callable[[str], Any]:
    """An argparse type: parse with ``cast`` and check the range; a bad value is one sentence."""
    noun = "a whole number" if cast is int else "a number"

    def parse(text: str) -> Any:
        try:
            value = cast(text)
        except ValueError:  # also an integer of 4,300+ digits, which Python refuses to read
            raise argparse.ArgumentTypeError(f"must be {noun}, got {_quoted(text)}") from None
        if math.isnan(value):  # NaN passes no bound
            raise argparse.ArgumentTypeError(f"must be {noun}, got {_quoted(text)}")
        if low is not None and value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low:g}, got {value:g}")
        if above is not None and not value > above:
            raise argparse.ArgumentTypeError(f"must be above {above:g}, got {value:g}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high:g}, got {value:g}")
        return value

    return parse


# Upper bounds keep a typo from running away: --samples 50000000 would ask for 50 million
# answers per prompt, --optbench-bootstrap 2000000000 would resample for days.
MAX_SAMPLES = 1000  # the bound a suite's samples have
MAX_RESAMPLES = 100_000
MAX_CONCURRENCY = 1024
MAX_TOKENS = 1_000_000
MAX_RETRIES = 100
MAX_SECONDS = 7 * 24 * 3600.0

_samples = _number(int, 1, MAX_SAMPLES)
_resamples = _number(int, 1, MAX_RESAMPLES)
_concurrency = _number(int, 1, MAX_CONCURRENCY)
_max_tokens = _number(int, 1, MAX_TOKENS)
_retries = _number(int, 0, MAX_RETRIES)
_temperature = _number(float, 0, 2)
_probability = _number(float, 0, 1)
_seconds = _number(float, high=MAX_SECONDS, above=0)
_int = _number(int)
_wait = _number(float, 0, MAX_SECONDS)  # --optbench-batch-wait: 0 submits and does not wait
_batch_size = _number(int, 1, 1_000_000)
_interval = _number(float, 0, MAX_SECONDS)  # --optbench-progress-interval: 0 turns the plain line off
_megabytes = _number(float, high=10_000, above=0)
DEFAULT_MAX_REPLY_MB = 8.0


def _shard(text: str) -> tuple[int, int]:
    """``I/N`` (1 <= I <= N) -> (I - 1, N)."""
    index, sep, count = text.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must look like I/N (e.g. 2/4), got {text!r}") from None
    if not sep or n < 1 or not 1 <= i <= n:
        raise argparse.ArgumentTypeError(f"must be I/N with 1 <= I <= N (e.g. 2/4), got {text!r}")
    return i - 1, n


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("optbench", "LLM probability-bias audits (pytest-optbench)")
    group.addoption("--model", dest="optbench_model", metavar="PROVIDER:NAME",
                    help="model under test, e.g. sim:optimist, openai:gpt-4.1-mini, anthropic:claude-...")
    group.addoption("--base-url", dest="optbench_base_url", metavar="URL",
                    help="API base URL for OpenAI-compatible or Anthropic-compatible servers")
    group.addoption("--samples", dest="optbench_samples", type=_samples, metavar="N",
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
    group.addoption("--thresholds", dest="optbench_thresholds", metavar="PATH", action="append",
                    help=f"gates file (default: {THRESHOLDS_FILE} at the rootdir, if present; else, for the "
                         "bundled bank, its default gates); repeat to add the gates of several files")
    group.addoption("--optbench-bank", dest="optbench_bank", action="store_true",
                    help="also collect the item bank that ships with pytest-optbench (4,690 items in ten "
                         "languages; narrow it with --language, -k, -m, --optbench-shard); alone, it is all "
                         "that is collected besides the current directory")
    group.addoption("--optbench-report", dest="optbench_report", metavar="PATH",
                    help="write a JSON report of every answer, aggregate and gate")
    group.addoption("--optbench-baseline", dest="optbench_baseline", metavar="REPORT",
                    help="a JSON report of an earlier run: report changes against it, paired by item, and "
                         "evaluate gates on change (max_increase, max_decrease, max_change)")
    group.addoption("--optbench-prices", dest="optbench_prices", metavar="PATH",
                    help="a prices file (per model: input and output price per million tokens, batch share): "
                         "the summary, reports and step summary show the run's cost in money")
    group.addoption("--optbench-markdown", dest="optbench_markdown", metavar="PATH",
                    help="write a Markdown summary (also appended to $GITHUB_STEP_SUMMARY when it is set)")
    group.addoption("--optbench-html", dest="optbench_html", metavar="PATH",
                    help="write a self-contained HTML report with plots")
    group.addoption("--optbench-strict", dest="optbench_strict", action="store_true", default=None,
                    help="fail the session on whatever would leave a gate unenforced: a gate not evaluated "
                         "or INCONCLUSIVE, no gate at all, no model, no suite item selected, a misspelt "
                         "'optbench' marker, an unused item field (default: the ini option optbench_strict, "
                         "else off)")
    parser.addini("optbench_prices", default="",
                  help="a prices file for every run of this repository (relative to the rootdir; "
                       "--optbench-prices wins)")
    parser.addini("optbench_strict", type="bool", default=False,
                  help="pytest-optbench: strict mode for every run of this repository (see --optbench-strict)")
    group.addoption("--optbench-lint", dest="optbench_lint", action="store_true",
                    help="check the suite files under the given paths against the construction rules, "
                         "without calling a model, and exit (non-zero on errors)")
    group.addoption("--optbench-multiplicity", dest="optbench_multiplicity", choices=("holm", "bh", "none"),
                    metavar="holm|bh|none",
                    help="error control over the session's 'evidence: ci' gates: holm (family-wise error, the "
                         "default), bh (false discovery rate) or none (each gate's CI alone); overrides the "
                         "thresholds file's 'multiplicity:'")
    group.addoption("--optbench-on-inconclusive", dest="optbench_on_inconclusive", choices=("pass", "fail"),
                    metavar="pass|fail",
                    help="whether a gate whose evidence cannot tell (INCONCLUSIVE: its interval straddles the "
                         "bound, or too little data) fails the session; overrides every on_inconclusive: of the "
                         "thresholds file (default: the file's, else pass, or fail under strict mode)")
    group.addoption("--optbench-seed", dest="optbench_seed", type=_int, default=0, metavar="N",
                    help="seed for bootstrap CIs and simulated models (default 0)")
    group.addoption("--optbench-base-rate", dest="optbench_base_rate", type=_probability, metavar="P",
                    help="out-of-sample base rate (0-1) of yes answers, for the climatology baseline "
                         "of known-answer items (measure it on questions disjoint from the scored ones)")
    group.addoption("--optbench-bootstrap", dest="optbench_bootstrap", type=_resamples,
                    default=10_000, metavar="N",
                    help=f"bootstrap resamples per CI (default 10000, at most {MAX_RESAMPLES})")
    engine = parser.getgroup("optbench-engine", "pytest-optbench elicitation (API providers)")
    engine.addoption("--concurrency", dest="optbench_concurrency", type=_concurrency, default=16, metavar="N",
                     help="requests in flight at once, shared by xdist workers (default 16; halved on "
                          "each 429)")
    engine.addoption("--max-tokens", dest="optbench_max_tokens", type=_max_tokens, metavar="N",
                     help="token limit per answer (default 256 for API models, 4,096 for reasoning "
                          "models; logprobs mode sends at most 8, json mode at least 32, 232 on chat endpoints)")
    engine.addoption("--optbench-retries", dest="optbench_retries", type=_retries, default=6, metavar="N",
                     help="retries of a failed request that can succeed (429, 5xx, timeout; default 6)")
    engine.addoption("--optbench-timeout", dest="optbench_timeout", type=_seconds, default=60.0,
                     metavar="S", help="seconds before a request times out (default 60)")
    engine.addoption("--optbench-deadline", dest="optbench_deadline", type=_seconds, metavar="S",
                     help="seconds the whole session may spend asking the model; what is not answered by "
                          "then is not asked (default: no deadline)")
    engine.addoption("--optbench-max-reply", dest="optbench_max_reply", type=_megabytes,
                     default=DEFAULT_MAX_REPLY_MB, metavar="MB",
                     help="the largest reply read, in megabytes (default 8): a server's reply body, a batch "
                          "result line, or what a conftest model returns (in characters); a larger one is that "
                          "answer's error, and is never read whole into memory")
    engine.addoption("--optbench-cache-dir", dest="optbench_cache_dir", metavar="DIR",
                     help="response store directory (default: .optbench/ at the rootdir)")
    engine.addoption("--optbench-offline", dest="optbench_offline", action="store_true",
                     help="answer from the response store only; name what is missing")
    engine.addoption("--optbench-batch", dest="optbench_batch", action="store_true",
                     help="ask through the provider's batch API (OpenAI Batch, Anthropic Message Batches: half "
                          "price, larger limits); batch ids are kept in the store and a later run picks the "
                          "answers up")
    engine.addoption("--optbench-batch-wait", dest="optbench_batch_wait", type=_wait, default=0.0,
                     metavar="SECONDS", help="with --optbench-batch: wait up to this long for open batches to end "
                                             "(default 0: submit, collect what has ended, report the rest pending)")
    engine.addoption("--optbench-batch-size", dest="optbench_batch_size", type=_batch_size, metavar="N",
                     help="with --optbench-batch: at most N lines per batch (default: the provider's limit)")
    engine.addoption("--optbench-shard", dest="optbench_shard", type=_shard, metavar="I/N",
                     help="run shard I of N: a stable, balanced share of the selected items (every condition "
                          "and sample of an item in one shard); merge the JSON reports with optbench merge")
    engine.addoption("--optbench-progress-interval", dest="optbench_progress_interval", type=_interval,
                     default=30.0, metavar="S",
                     help="without a terminal (CI, output to a file): a plain progress line every S seconds "
                          "while answers are asked for (done/total, answers per second, retries, ETA); "
                          "default 30, 0 for none")


def _output_path(option: str, value: str | None) -> Path | None:
    """A report's path, refused now when it can never be written (a directory is in the way,
    or a file where a parent directory should be): before any answer is paid for, not after.
    What only writing can tell (a full disk) is named when the report is written."""
    if not value:
        return None
    path = Path(value)
    if path.is_dir():
        raise pytest.UsageError(f"{option} {value}: is a directory; give the path of a file.")
    parent = next((p for p in path.parents if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise pytest.UsageError(f"{option} {value}: {parent} is a file, not a directory.")
    return path


def _prices_path(config: pytest.Config) -> Path | None:
    """--optbench-prices, else the ini option ``optbench_prices`` (relative to the rootdir)."""
    given = config.getoption("optbench_prices")
    if given:
        return Path(given)
    ini = str(config.getini("optbench_prices") or "").strip()
    return config.rootpath / ini if ini else None


def read_options(config: pytest.Config) -> RunOptions:
    """The command line, checked; a bad value is a one-sentence usage error."""
    system_prompt = None
    if path := config.getoption("optbench_system_prompt"):
        try:
            system_prompt = Path(path).read_bytes().decode("utf-8-sig").strip()
        except OSError as exc:
            raise pytest.UsageError(f"--system-prompt {path}: cannot read the file ({exc.strerror}).") from None
        except UnicodeDecodeError as exc:
            raise pytest.UsageError(f"--system-prompt {path}: not UTF-8 text ({exc.reason} at byte {exc.start}); "
                                    "save it as UTF-8.") from None
        if not system_prompt:
            raise pytest.UsageError(f"--system-prompt {path}: the file is empty.")
    thresholds = [Path(t) for t in config.getoption("optbench_thresholds") or []]
    if not thresholds and (config.rootpath / THRESHOLDS_FILE).is_file():
        thresholds = [config.rootpath / THRESHOLDS_FILE]
    for path in thresholds:
        if not path.is_file():
            raise pytest.UsageError(f"--thresholds {path}: no such file.")
    if config.getoption("optbench_html") and importlib.util.find_spec("matplotlib") is None:
        raise pytest.UsageError("--optbench-html needs matplotlib, which is not installed; install it with: "
                                "pip install 'pytest-optbench[html]'.")
    report = _output_path("--optbench-report", config.getoption("optbench_report"))
    markdown = _output_path("--optbench-markdown", config.getoption("optbench_markdown"))
    html = _output_path("--optbench-html", config.getoption("optbench_html"))
    _output_path("--junitxml", getattr(config.option, "xmlpath", None))
    return RunOptions(
        model_spec=config.getoption("optbench_model"),
        base_url=config.getoption("optbench_base_url"),
        seed=config.getoption("optbench_seed"),
        keep_fifty=config.getoption("optbench_keep_fifty"),
        n_resamples=config.getoption("optbench_bootstrap"),
        base_rate=config.getoption("optbench_base_rate"),
        settings=Settings(config.getoption("optbench_samples"), config.getoption("optbench_temperature"),
                          system_prompt, config.getoption("optbench_elicit")),
        thresholds_paths=tuple(dict.fromkeys(thresholds)),
        bank=bool(config.getoption("optbench_bank")),
        report_path=report,
        markdown_path=markdown,
        html_path=html,
        baseline_path=Path(config.getoption("optbench_baseline")) if config.getoption("optbench_baseline") else None,
        languages=tuple(t.strip() for tag in (config.getoption("optbench_languages") or []) for t in tag.split(",")
                        if t.strip()),
        engine=EngineSettings(
            concurrency=config.getoption("optbench_concurrency"),
            max_retries=config.getoption("optbench_retries"),
            offline=config.getoption("optbench_offline"),
            max_tokens=config.getoption("optbench_max_tokens"),
            deadline=config.getoption("optbench_deadline"),
        ),
        timeout=config.getoption("optbench_timeout"),
        cache_dir=Path(config.getoption("optbench_cache_dir") or config.rootpath / ".optbench"),
        strict=bool(config.getoption("optbench_strict") or config.getini("optbench_strict")),
        multiplicity=config.getoption("optbench_multiplicity"),
        on_inconclusive=config.getoption("optbench_on_inconclusive"),
        elicit_fallback=config.getoption("optbench_elicit_fallback") or "text",
        batch=bool(config.getoption("optbench_batch")),
        batch_wait=config.getoption("optbench_batch_wait"),
        batch_size=config.getoption("optbench_batch_size"),
        shard=config.getoption("optbench_shard"),
        progress_interval=config.getoption("optbench_progress_interval"),
        prices_path=_prices_path(config),
        max_reply=int(config.getoption("optbench_max_reply") * 1_000_000),
    )
