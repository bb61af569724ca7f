"""The HTML report's figures: the report model's figure data in, PNG bytes out.

Draws only: estimates, bins and reversals arrive computed (``report.model.figures``). Pure
apart from matplotlib, used through its object API (``Figure`` with the Agg canvas,
never pyplot): no display is needed and the user's own pyplot state and backend are left
alone. Every function builds one figure and renders it to PNG without the "Software"
metadata chunk (it names a URL, and the report must not).
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, cast

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .model.figures import Estimate, Ladder, Reliability, ValencePoint

__all__ = ["Estimate", "Ladder", "Reliability", "ValencePoint", "baseline_changes", "condition_effects",
           "dose_ladders", "reliability_diagram", "skew_by_domain", "valence_plane"]

DPI = 110
LADDER_SPREAD = 0.25  # rungs: total sideways spread of the dose-response ladders
BLUE, RED, GREY, GREEN = "#1f5fa8", "#c62828", "#7a7a7a", "#2e7d32"
# Quadrants of the valence plane: (x sign, y sign) -> name (docs/reading-the-summary.md).
QUADRANTS = {(1, -1): "optimism", (-1, 1): "pessimism", (1, 1): "compound overclaim", (-1, -1): "compound underclaim"}


@contextmanager
def _figure(width: float, height: float, rows: int = 1, **kw: Any) -> Iterator[tuple[Figure, list[Axes]]]:
    fig = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, 1, squeeze=False, **kw)
    yield fig, list(axes[:, 0])


def _png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight", metadata={"Software": None})
    return buffer.getvalue()


def _finite(value: float) -> bool:
    return value is not None and math.isfinite(value)


def _errors(value: float, low: float, high: float) -> tuple[float, float]:
    """Distances from the estimate to the CI ends; 0 where the CI is missing."""
    if not (_finite(value) and _finite(low) and _finite(high)):
        return 0.0, 0.0
    return max(0.0, value - low), max(0.0, high - value)


# --------------------------------------------------------------------------- valence plane


def _valence_limit(points: Sequence[ValencePoint]) -> float:
    ends = [abs(v) for p in points for v in (p.plus_low, p.plus_high, p.minus_low, p.minus_high,
                                              p.delta_plus, p.delta_minus) if _finite(v)]
    return max(15.0, math.ceil((max(ends, default=0.0) * 1.15) / 5.0) * 5.0)


def _quadrant_labels(ax: Axes, limit: float) -> None:
    """Each quadrant's name near its outer edge, clear of the axes and of the diagonal."""
    for (sx, sy), name in QUADRANTS.items():
        signs = f"(d+ {'+' if sx > 0 else '-'}, d- {'+' if sy > 0 else '-'})"
        ax.text(sx * limit * 0.5, sy * limit * 0.9, f"{name}\n{signs}", ha="center",
                va="top" if sy > 0 else "bottom", fontsize=8, color=GREY, style="italic")


def valence_plane(points: Sequence[ValencePoint]) -> bytes:
    """delta_plus (x) against delta_minus (y), 95% CI bars, quadrants, the Skew = 0 diagonal."""
    limit = _valence_limit(points)
    with _figure(6.4, 6.0) as (fig, (ax,)):
        ax.axhline(0, color="black", lw=0.8)
        ax.axvline(0, color="black", lw=0.8)
        ax.plot([-limit, limit], [limit, -limit], ls="--", color=GREY, lw=1)
        ax.text(-limit * 0.5, limit * 0.56, "Skew = 0  (d+ + d- = 0)", rotation=-45, color=GREY,
                fontsize=8, ha="center", va="bottom", rotation_mode="anchor")
        _quadrant_labels(ax, limit)
        colors = colormaps["tab10" if len(points) <= 10 else "tab20"]
        for i, p in enumerate(points):
            if not (_finite(p.delta_plus) and _finite(p.delta_minus)):
                continue
            xerr = np.array([_errors(p.delta_plus, p.plus_low, p.plus_high)]).T
            yerr = np.array([_errors(p.delta_minus, p.minus_low, p.minus_high)]).T
            ax.errorbar(p.delta_plus, p.delta_minus, xerr=xerr, yerr=yerr, fmt="o", ms=6, capsize=3,
                        color=colors(i % colors.N), label=p.label)
        ax.set_xlim(-limit, limit)
        ax.set_ylim(-limit, limit)
        ax.set_aspect("equal")
        ax.set_xlabel("delta_plus: mean P(good outcome) - 50 (pp)")
        ax.set_ylabel("delta_minus: mean P(bad outcome) - 50 (pp)")
        ax.set_title("Valence plane (95% CIs)")
        ax.grid(alpha=0.25)
        if points:
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
        return _png(fig)


# --------------------------------------------------------------------------- bars and forests


def _row_height(n: int) -> float:
    return max(2.2, 0.32 * n + 1.2)


def _whiskers(rows: Sequence[Estimate]) -> np.ndarray:
    return np.array([_errors(r.value, r.low, r.high) for r in rows]).T.reshape(2, len(rows))


def _values(rows: Sequence[Estimate]) -> np.ndarray:
    return np.array([r.value if _finite(r.value) else np.nan for r in rows], dtype=float)


def skew_by_domain(rows: Sequence[Estimate]) -> bytes:
    """Horizontal bars of Skew per domain with 95% CI whiskers; red above 0, blue below."""
    rows = list(rows)
    with _figure(7.5, _row_height(len(rows))) as (fig, (ax,)):
        y = np.arange(len(rows))[::-1]
        values = _values(rows)
        colors = [RED if v > 0 else BLUE for v in np.nan_to_num(values)]
        ax.barh(y, np.nan_to_num(values), xerr=_whiskers(rows), color=colors, alpha=0.75,
                error_kw={"ecolor": "black", "capsize": 3, "lw": 1})
        ax.set_yticks(y, [r.label for r in rows], fontsize=8)
        ax.axvline(0, color="black", lw=0.8)
        ax.set_xlabel("Skew (pp): > 0 optimistic, < 0 pessimistic")
        ax.set_title("Skew by domain (95% CIs)")
        ax.grid(axis="x", alpha=0.25)
        return _png(fig)


def _forest_panel(ax: Axes, rows: Sequence[Estimate], xlabel: str) -> None:
    y = np.arange(len(rows))[::-1]
    values = _values(rows)
    excludes_zero = [r.excludes_zero for r in rows]
    for yi, value, (lo, hi), strong in zip(y, values, _whiskers(rows).T, excludes_zero, strict=True):
        color = RED if strong else BLUE
        ax.errorbar(value, yi, xerr=[[lo], [hi]], fmt="s" if strong else "o", ms=5, capsize=3, color=color)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(y, [r.label for r in rows], fontsize=8)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel(xlabel, fontsize=9)
    ax.grid(axis="x", alpha=0.25)


def _forest(rows: Sequence[Estimate], title: str, xlabel: str) -> bytes:
    """One panel per ``panel`` value (each on its own scale); CIs that exclude 0 in red."""
    panels: dict[str, list[Estimate]] = {}
    for row in rows:
        panels.setdefault(row.panel, []).append(row)
    heights = [_row_height(len(p)) for p in panels.values()]
    with _figure(7.5, sum(heights), rows=len(panels), gridspec_kw={"height_ratios": heights}) as (fig, axes):
        for ax, (panel, members) in zip(axes, panels.items(), strict=False):  # _figure: one axis per panel
            _forest_panel(ax, members, f"{xlabel} ({panel})" if panel else xlabel)
        axes[0].set_title(f"{title} (95% CIs; red: CI excludes 0)")
        fig.tight_layout()
        return _png(fig)


def condition_effects(rows: Sequence[Estimate]) -> bytes:
    """Forest plot of paired effects against base (pp)."""
    return _forest(rows, "Condition effects against base", "effect, arm - base")


def baseline_changes(rows: Sequence[Estimate]) -> bytes:
    """Forest plot of each metric's change against the baseline, paired by item."""
    return _forest(rows, "Changes against the baseline", "change, now - baseline")


# --------------------------------------------------------------------------- calibration


def reliability_diagram(data: Reliability) -> bytes:
    """Mean stated probability vs observed frequency per bin, with the count per bin below."""
    count, mean_p, freq = (np.asarray(v, dtype=float) for v in (data.count, data.mean_p, data.freq))
    bins = count.size
    edges = np.linspace(0, 1, bins + 1)
    with _figure(5.6, 6.2, rows=2, sharex=True, gridspec_kw={"height_ratios": [3, 1]}) as (fig, (top, bottom)):
        top.plot([0, 1], [0, 1], ls="--", color=GREY, lw=1, label="perfect calibration")
        filled = count > 0
        top.plot(mean_p[filled], freq[filled], "o-", color=BLUE, label="model")
        top.set_ylabel("observed frequency of yes")
        top.set_xlim(0, 1)
        top.set_ylim(0, 1)
        top.set_title(f"Reliability diagram ({bins} equal-width bins)")
        top.legend(fontsize=8, loc="upper left")
        top.grid(alpha=0.25)
        bottom.bar(edges[:-1], count, width=1 / bins, align="edge", color=GREY, edgecolor="white")
        for left, n in zip(edges[:-1], count, strict=True):
            if n:
                bottom.text(left + 0.5 / bins, n, str(int(n)), ha="center", va="bottom", fontsize=7)
        bottom.set_ylim(0, max(1.0, count.max()) * 1.25)
        bottom.set_ylabel("items")
        bottom.set_xlabel("stated probability of yes")
        fig.tight_layout()
        return _png(fig)


# --------------------------------------------------------------------------- dose response


def dose_ladders(ladders: Sequence[Ladder]) -> bytes:
    """Each ladder's mean answer per rung; steps against its direction drawn in red. Ladders are
    spread sideways by up to LADDER_SPREAD / 2 of a rung so that identical ones do not hide."""
    with _figure(7.5, 4.8) as (fig, (ax,)):
        reversals = 0
        for i, ladder in enumerate(ladders):
            means = np.asarray(ladder.means, dtype=float)
            if means.size < 2 or np.isnan(means).any():
                continue
            # Spread ladders sideways a little, so ones with the same answers stay visible.
            rungs = np.arange(1, means.size + 1) + LADDER_SPREAD * (i / max(1, len(ladders) - 1) - 0.5)
            ax.plot(rungs, means, "-o", ms=3, lw=1, alpha=0.55,
                    color=BLUE if ladder.direction == "increasing" else GREEN)
            for step in ladder.reversals:
                reversals += 1
                ax.plot(rungs[step:step + 2], means[step:step + 2], "-o", ms=4, lw=2.2, color=RED)
        ax.plot([], [], color=BLUE, label="should increase")
        ax.plot([], [], color=GREEN, label="should decrease")
        ax.plot([], [], color=RED, lw=2.2, label=f"reversal ({reversals} steps)")
        ax.set_xlabel("rung (stronger evidence ->)")
        ax.set_ylabel("mean answer (0-100)")
        ax.set_ylim(0, 100)
        cast(MaxNLocator, ax.xaxis.get_major_locator()).set_params(integer=True)  # the default AutoLocator
        ax.set_title(f"Dose-response ladders ({len(ladders)} items)")
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        ax.grid(alpha=0.25)
        return _png(fig)
