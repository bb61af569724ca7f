"""The cross-lingual view: every metric per language, its spread, and model vs language variance.

Pure. The paper's headline is Track B Skew under the base condition: within one run, Skew
per language (the skew aggregate of its Track B suite) and the standard deviation of the
per-language Skews; across runs (one per model), the mean inter-model SD within a language
against the mean inter-language SD within a model (the paper: 7.2 vs 1.5 pp, 4.7x).

The same view covers every arm and metric a bank has in several languages
(``language_metrics``): Skew per track and condition, the condition effects of each arm,
calibration of the known-answer items and the violation rates of the batteries. A suite's
row is its *bank*: the English suite it translates, by the id rule of translations.py
(``track-b-probability-ko`` is a row of ``track-b-probability``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..metrics import axioms
from ..metrics.confidence import NATURAL_BOUNDS, studentized_bootstrap
from ..metrics.skew import pair_skews
from ..records.item import ItemRecord
from ..suite.translations import source_suite_id
from .aggregate import VIOLATION_METRICS, Aggregate, AggregateOptions, finite_or_none, pair_answers, seeded_rng
from .tolerances import is_default_tolerance

# The metrics compared across languages, in the order tables list them (then the violation
# rates of the registered kinds, each at its default tolerance).
LANGUAGE_METRICS = ("skew", "calibration_error", "condition_effect", "skew_effect", "narrative_susceptibility",
                    "brier", "overconfidence", "ece", "ece_debiased")


@dataclass(frozen=True)
class LanguageSkew:
    language: str
    skew: float
    ci_low: float
    ci_high: float
    n: int

    def to_dict(self) -> dict[str, object]:
        return {"language": self.language, "skew": finite_or_none(self.skew), "ci_low": finite_or_none(self.ci_low),
                "ci_high": finite_or_none(self.ci_high), "n": self.n}


def headline_pairs(records: Iterable[ItemRecord]) -> list[ItemRecord]:
    return [r for r in records if r.kind == "inverted_pair" and r.track == "B" and r.condition == "base"]


def language_skews(aggregates: Iterable[Aggregate], records: Iterable[ItemRecord],
                   options: AggregateOptions | None = None) -> list[LanguageSkew]:
    """Track B Skew under base, one entry per language.

    A language with one Track B suite (the usual case) gets that suite's ``skew`` aggregate, so
    the language table and the Skew table show literally the same interval. Several Track B
    suites in one language are pooled, and the pool's CI is drawn the way ``aggregate`` draws a
    suite's, with the suite ids joined by "+" in place of the suite id.
    """
    options = options or AggregateOptions()
    skew = {a.suite: a for a in aggregates if a.metric == "skew" and a.condition == "base" and a.domain is None}
    by_language: dict[str, list[ItemRecord]] = defaultdict(list)
    for record in headline_pairs(records):
        by_language[record.language].append(record)
    out = []
    for language in sorted(by_language):
        suites = sorted({r.suite for r in by_language[language]})
        if len(suites) == 1 and suites[0] in skew:
            a = skew[suites[0]]
            out.append(LanguageSkew(language, a.value, a.ci_low, a.ci_high, a.n))
            continue
        pairs = sorted(by_language[language], key=lambda r: (r.suite, r.item))
        plus, minus = pair_answers(pairs, options.keep_fifty)
        usable = axioms.usable(plus, minus)
        skews = pair_skews(plus[usable], minus[usable])
        interval = studentized_bootstrap(skews, seeded_rng(options.seed, "+".join(suites), "base", "skew", ""),
                                         options.n_resamples, NATURAL_BOUNDS["skew"]).interval()
        out.append(LanguageSkew(language, float(skews.mean()) if skews.size else float("nan"),
                                interval.low, interval.high, int(skews.size)))
    return out


def spread(values: Sequence[float]) -> float:
    """Sample standard deviation; NaN with fewer than two values."""
    finite = [v for v in values if np.isfinite(v)]
    return float(np.std(finite, ddof=1)) if len(finite) >= 2 else float("nan")


@dataclass(frozen=True)
class VarianceRatio:
    models: list[str]
    languages: list[str]
    matrix: dict[tuple[str, str], float]  # (model, language) -> Skew
    inter_model_sd: float  # mean over languages of the SD across models
    inter_language_sd: float  # mean over models of the SD across languages

    @property
    def ratio(self) -> float:
        if not (np.isfinite(self.inter_model_sd) and np.isfinite(self.inter_language_sd)) or self.inter_language_sd == 0:
            return float("nan")
        return self.inter_model_sd / self.inter_language_sd


def model_language_ratio(skews_by_model: Mapping[str, Sequence[LanguageSkew]]) -> VarianceRatio:
    """Inter-model vs inter-language spread of Skew, over languages every model ran."""
    return variance_ratio({m: {s.language: s.skew for s in skews} for m, skews in skews_by_model.items()})


def variance_ratio(values_by_model: Mapping[str, Mapping[str, float]]) -> VarianceRatio:
    """Inter-model vs inter-language spread of one metric (model -> language -> value),
    over the languages every model has."""
    models = sorted(values_by_model)
    shared = set.intersection(*(set(values_by_model[m]) for m in models)) if models else set()
    languages = sorted(shared)
    matrix = {(m, lang): values_by_model[m][lang] for m in models for lang in languages}
    inter_model = [spread([matrix[(m, lang)] for m in models]) for lang in languages]
    inter_language = [spread([matrix[(m, lang)] for lang in languages]) for m in models]
    return VarianceRatio(models, languages, matrix,
                         float(np.nanmean(inter_model)) if any(np.isfinite(inter_model)) else float("nan"),
                         float(np.nanmean(inter_language)) if any(np.isfinite(inter_language)) else float("nan"))

def language_metric_names() -> tuple[str, ...]:
    return (*LANGUAGE_METRICS, *sorted(VIOLATION_METRICS))


def bank_of(suite: str, language: str) -> str:
    """The bank a suite belongs to: the English suite it translates (its id without
    ``-<language>``), else itself."""
    return source_suite_id(suite, language) or suite


@dataclass(frozen=True)
class LanguageMetric:
    """One metric of one bank, condition and language (one cell of the language table)."""

    bank: str
    condition: str
    metric: str
    tolerance: float | None
    language: str
    suite: str
    value: float
    ci_low: float
    ci_high: float
    n: int

    @property
    def row(self) -> tuple[str, str, str, float | None]:
        return (self.bank, self.condition, self.metric, self.tolerance)

    def to_dict(self) -> dict[str, object]:
        return {"bank": self.bank, "condition": self.condition, "metric": self.metric, "tolerance": self.tolerance,
                "language": self.language, "suite": self.suite, "value": finite_or_none(self.value),
                "ci_low": finite_or_none(self.ci_low), "ci_high": finite_or_none(self.ci_high), "n": self.n}


def language_metrics(aggregates: Iterable[Aggregate], records: Iterable[ItemRecord]) -> list[LanguageMetric]:
    """Every language metric of the run, one per bank x condition x metric x language; a
    violation rate at its default tolerance. Read from the aggregates: the language table and
    the suite tables show the same numbers."""
    language: dict[str, str] = {}
    for record in records:
        language.setdefault(record.suite, record.language)
    wanted = set(language_metric_names())
    out = []
    for a in aggregates:
        if a.domain is not None or a.metric not in wanted or a.suite not in language:
            continue
        if a.metric in VIOLATION_METRICS and not is_default_tolerance(a.metric, a.tolerance):
            continue
        lang = language[a.suite]
        out.append(LanguageMetric(bank_of(a.suite, lang), a.condition, a.metric, a.tolerance, lang, a.suite,
                                  a.value, a.ci_low, a.ci_high, a.n))
    return sorted(out, key=lambda m: (m.bank, m.condition != "base", m.condition, m.metric, m.language, m.suite))


def metrics_by_row(metrics_by_model: Mapping[str, Sequence[LanguageMetric]]
                   ) -> dict[tuple[str, str, str, float | None], dict[str, dict[str, float]]]:
    """row (bank, condition, metric, tolerance) -> model -> language -> value, rows in order."""
    out: dict[tuple[str, str, str, float | None], dict[str, dict[str, float]]] = {}
    rows = sorted({m.row for ms in metrics_by_model.values() for m in ms},
                  key=lambda r: (r[0], r[1] != "base", r[1], r[2], r[3] or 0.0))
    for row in rows:
        out[row] = {}
    for model, metrics in metrics_by_model.items():
        for m in metrics:
            out[m.row].setdefault(model, {}).setdefault(m.language, m.value)
    return out
