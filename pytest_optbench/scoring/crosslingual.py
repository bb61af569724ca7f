"""The cross-lingual view: Skew per language, its spread, and model vs language variance.

Pure. Uses Track B inverted pairs under the base condition (the paper's headline setting).
Within one run: Skew per language (the skew aggregate of its Track B suite), and the standard
deviation of the per-language Skews. Across runs (one per model): the mean inter-model SD within a language
against the mean inter-language SD within a model; the paper reports 7.2 vs 1.5 pp, 4.7x.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..metrics import axioms
from ..metrics.confidence import NATURAL_BOUNDS, studentized_bootstrap
from ..metrics.skew import pair_skews
from ..records import ItemRecord
from .aggregate import (
    Aggregate,
    AggregateOptions,
    finite_or_none,
    pair_answers,
    seeded_rng,
)


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
    models = sorted(skews_by_model)
    shared = set.intersection(*({s.language for s in skews_by_model[m]} for m in models)) if models else set()
    languages = sorted(shared)
    matrix = {(m, s.language): s.skew for m in models for s in skews_by_model[m] if s.language in shared}
    inter_model = [spread([matrix[(m, lang)] for m in models]) for lang in languages]
    inter_language = [spread([matrix[(m, lang)] for lang in languages]) for m in models]
    return VarianceRatio(models, languages, matrix,
                         float(np.nanmean(inter_model)) if any(np.isfinite(inter_model)) else float("nan"),
                         float(np.nanmean(inter_language)) if any(np.isfinite(inter_language)) else float("nan"))
