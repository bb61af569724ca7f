"""The report model: every table, list and number a report shows, decided once.

Renderers (``summary``/``terminal``, ``markdown``, ``html``/``plots``, the JUnit gate cases and
``optbench compare``) draw this model and compute nothing: no statistics, no bootstraps, no
lookups of their own. A new table is one function here.

- ``fmt``: how a number is written (digits per metric, sign, CI text, p values)
- ``table``: ``Table``/``Column``/``Row``/``Cell`` and ``Line``
- ``tables``: one run's tables from aggregates, verdicts, the baseline comparison and languages
- ``items``: the worst items (largest |Skew|, confidently wrong, axiom violations)
- ``figures``: the data behind each figure
- ``compare``: several runs side by side, from their JSON reports
- ``run``: ``build_run_model(outcome, metadata) -> RunModel``
"""

from __future__ import annotations

from .compare import CompareModel, build_compare_model
from .run import GateCounts, Headline, RunModel, build_run_model
from .table import COMPACT, FULL, Cell, Column, Line, Row, Table
from .tables import gate_message

__all__ = [
    "COMPACT", "FULL", "Cell", "Column", "CompareModel", "GateCounts", "Headline", "Line", "Row",
    "RunModel", "Table", "build_compare_model", "build_run_model", "gate_message",
]
