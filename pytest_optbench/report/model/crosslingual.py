"""Several runs by language (``optbench crosslingual``), from their JSON reports alone.

Each report stores its language table (``languages.metrics``: every metric per bank,
condition and language); nothing is scored again. Two tables: every metric by model and
language, and per metric the inter-model against the inter-language spread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ...scoring.crosslingual import LanguageMetric, metrics_by_row, variance_ratio
from .fmt import digits, plain, tolerance_text
from .table import Table, make_table, number, text
from .tables import LANGUAGE_NOTE, language_columns, language_rows, language_value_columns


@dataclass(frozen=True)
class CrosslingualModel:
    by_model: Table  # every metric, one row per model, one column per language
    spreads: Table  # per metric: inter-model SD, inter-language SD, their ratio


def build_crosslingual_model(metrics_by_model: Mapping[str, Sequence[LanguageMetric]]) -> CrosslingualModel:
    languages = language_columns(m.language for ms in metrics_by_model.values() for m in ms)
    rows = []
    spread_rows = []
    for row, values in metrics_by_row(metrics_by_model).items():
        for model in sorted(metrics_by_model):
            mine = [m for m in metrics_by_model[model] if m.row == row]
            if mine:
                rows.extend(language_rows(mine, languages, labels=(text(model),)))
        ratio = variance_ratio(values)
        if len(ratio.models) >= 2 and len(ratio.languages) >= 2:
            places = digits(row[2])
            spread_rows.append([text(row[0]), text(row[1]), text(row[2]), text(tolerance_text(row[3])),
                                text(str(len(ratio.languages))),
                                number(plain(ratio.inter_model_sd, places), ratio.inter_model_sd),
                                number(plain(ratio.inter_language_sd, places), ratio.inter_language_sd),
                                number(plain(ratio.ratio, 1), ratio.ratio)])
    by_model = make_table("crosslingual", "every metric by model and language",
                          ["suite", "condition", "metric", "tol. pp", "model", "n",
                           *language_value_columns(languages), "SD"], rows, notes=(LANGUAGE_NOTE,))
    spreads = make_table("crosslingual-spreads", "inter-model vs inter-language spread per metric",
                         ["suite", "condition", "metric", "tol. pp", "languages", "inter-model SD",
                          "inter-language SD", "ratio"], spread_rows,
                         notes=(("Inter-model SD: the mean over the languages every model ran of the SD across "
                                "models; inter-language SD: the mean over models of the SD across those languages."),))
    return CrosslingualModel(by_model, spreads)
