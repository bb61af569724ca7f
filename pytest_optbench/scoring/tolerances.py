"""Default tolerances of the axiom violation rates: part of what each rate *is*.

Pure. A violation rate counts the sets whose answers break a rule by more than a tolerance
(percentage points on the mean answer of each prompt). At tolerance 0 the product rule of
``conditional`` is broken by every model, a calibrated one included: P(a) * P(b|a) / 100 is
a product of two noisy means and is almost never exactly the third mean. So each metric has
a default that a calibrated model with ordinary sampling noise meets (documented in
docs/suite-format.md, section 4); a gate's ``tolerance:`` overrides it, ``tolerance: 0``
included.

Sampling noise behind the defaults: at temperature 0.7 a model's answers to one prompt
spread by about 5 pp, so the mean of 5 samples by about 2.2 pp. For the product rule the
residual P(a) P(b|a) / 100 - P(a and b) of a coherent model then has an SD of about 3 pp
(the product carries the noise of two means, scaled by the other factor): 10 pp is three of
those SDs. The inequalities (conjunction, disjunction, dose-response) have slack in a
coherent answer set, so their tolerance only needs to forgive the rounding of answers to
whole numbers (and of the means of a few of them): 2 pp.
"""

from __future__ import annotations

from ..kinds import KINDS, DerivedTable, violation_metric
from ..kinds.base import VIOLATION

# Each kind declares its own (``Kind.default_tolerance``); this table follows the registry.
DEFAULT_TOLERANCES: DerivedTable[str, float] = DerivedTable(lambda: {
    violation_metric(kind): kind.default_tolerance for kind in KINDS.values() if VIOLATION in kind.families})


def effective_tolerance(metric: str, tolerance: float | None) -> float | None:
    """The tolerance a violation-rate metric is computed at (the default when ``None``);
    ``None`` for every other metric."""
    if not metric.endswith("_violation_rate"):
        return None
    return DEFAULT_TOLERANCES.get(metric, 0.0) if tolerance is None else float(tolerance)


def tolerance_text(tolerance: float | None) -> str:
    """``"2 pp"``, or ``""`` for metrics without a tolerance."""
    return "" if tolerance is None else f"{tolerance:g} pp"


def is_default_tolerance(metric: str, tolerance: float | None) -> bool:
    """True for the one row of a violation rate that tables show when they show one: the
    rate at the metric's default tolerance (every other metric has one row anyway)."""
    default = DEFAULT_TOLERANCES.get(metric)
    return default is None or tolerance == default


def display_rank(metric: str, tolerance: float | None) -> tuple[bool, float]:
    """Sort key for the rows of one rate when a table shows one: the default tolerance
    first, then the lowest (reports written before the defaults held tolerance 0 only)."""
    return (not is_default_tolerance(metric, tolerance), float(tolerance or 0))
