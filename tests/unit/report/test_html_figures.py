"""The HTML report's content: its tables show the numbers of a small hand-made run (worked out
by hand below, not by the scoring code), and every embedded figure is a PNG that decodes to a
non-blank image.

Only ``build_html(outcome, metadata)`` and the HTML it returns are used, so these checks hold
whatever the renderer looks like inside. Numbers are compared to the precision shown.
"""

from __future__ import annotations

import base64
import io
import re
from html.parser import HTMLParser

import numpy as np
import pytest
from matplotlib import image as mpimg

from pytest_optbench.records.item import Answer, ItemRecord, PromptRecord
from pytest_optbench.report.html import build_html
from pytest_optbench.scoring.aggregate import AggregateOptions, aggregate
from pytest_optbench.scoring.gates.evaluate import evaluate
from pytest_optbench.scoring.gates.spec import parse_thresholds
from pytest_optbench.scoring.outcome import Outcome


def prompts(**answers: float) -> list[PromptRecord]:
    return [PromptRecord(role, f"{role}?", [Answer(f"{value:g}", float(value))]) for role, value in answers.items()]


def record(suite: str, item: str, kind: str, answers: list[PromptRecord], condition: str = "base",
           **fields) -> ItemRecord:
    return ItemRecord(suite, item, condition, kind, f"{suite}.yaml", "hand", answers, **fields)


# Inverted pairs, one answer per prompt:      P+  P-  Skew = P+ - (100 - P-)
#   i1 alpha                                  70  40  +10
#   i2 alpha                                  60  30  -10
#   i3 beta                                   80  45  +25
#   i4 beta                                   55  60  +15
# base: Skew (10 - 10 + 25 + 15) / 4 = +10.0, d+ = mean P+ - 50 = 16.25, d- = mean P- - 50 = -6.25;
# alpha 0.0, beta +20.0. Under narrative_up every P+ is 5 higher: Skew +15.0, condition effect +5.0.
PAIRS = [("i1", "alpha", 70, 40), ("i2", "alpha", 60, 30), ("i3", "beta", 80, 45), ("i4", "beta", 55, 60)]
# Known answers: p = .8 (yes), .6 (no), .3 (no), .1 (yes). Brier = (.04 + .36 + .09 + .81) / 4 = 0.325;
# accuracy (yes when p >= .5) = 2 / 4.
KNOWN = [("k1", 80, True), ("k2", 60, False), ("k3", 30, False), ("k4", 10, True)]
# Conjunctions: c1 P(a and b) 50 > min(40, 30): violated; c2 20 <= 60: fine. Rate 1 / 2.
# Dose-response: d1 increasing 20, 40, 30, 60 has one step down; d2 decreasing 80, 60, 40 none. Rate 1 / 5 steps.


def hand_records() -> list[ItemRecord]:
    out = []
    for condition, lift in (("base", 0), ("narrative_up", 5)):
        for item, domain, plus, minus in PAIRS:
            out.append(record("demo-pairs", item, "inverted_pair", prompts(positive=plus + lift, negative=minus),
                              condition, track="B", domain=domain))
    for item, p, outcome in KNOWN:
        out.append(record("demo-known", item, "binary", prompts(yes=p), outcome=outcome))
    out.append(record("demo-conj", "c1", "conjunction", prompts(a=40, b=30, both=50)))
    out.append(record("demo-conj", "c2", "conjunction", prompts(a=60, b=70, both=20)))
    out.append(record("demo-dose", "d1", "dose_response", prompts(rung1=20, rung2=40, rung3=30, rung4=60),
                      direction="increasing"))
    out.append(record("demo-dose", "d2", "dose_response", prompts(rung1=80, rung2=60, rung3=40),
                      direction="decreasing"))
    return out


THRESHOLDS = {"optbench": 1, "gates": [
    {"metric": "skew", "max_abs": 5, "suites": ["demo-pairs"], "conditions": ["base"]},
    {"metric": "brier", "max": 0.3},
]}


@pytest.fixture(scope="module")
def page() -> str:
    records = hand_records()
    aggregates = aggregate(records, AggregateOptions(n_resamples=200))
    kinds: dict[str, set[str]] = {}
    for r in records:
        kinds.setdefault(r.suite, set()).add(r.kind)
    verdicts = evaluate(parse_thresholds(THRESHOLDS, "thresholds.yaml"), aggregates,
                        {s: sorted(k) for s, k in kinds.items()})
    return build_html(Outcome(aggregates, verdicts, records), {"model": "hand", "keep_fifty": False})


# --------------------------------------------------------------------------- reading the page


class Page(HTMLParser):
    """Tables (header cells and rows of cell texts) and image sources."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tables: list[dict[str, list]] = []
        self.images: list[str] = []
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append({"header": [], "rows": []})
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "img":
            self.images.append(str(dict(attrs).get("src")))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None and self.tables:
            table = self.tables[-1]
            if not table["header"]:
                table["header"] = [h.lower() for h in self._row]
            else:
                table["rows"].append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def row(page: Page, headers: tuple[str, ...], *cells: str) -> dict[str, str]:
    """The one row, in a table with all ``headers``, that has every one of ``cells``."""
    found = [dict(zip(t["header"], r, strict=True)) for t in page.tables if all(h in t["header"] for h in headers)
             for r in t["rows"] if all(c in r for c in cells)]
    assert len(found) == 1, (headers, cells, found)
    return found[0]


NUMBER = re.compile(r"[-+]?\d+(?:\.(\d+))?")


def shows(text: str, expected: float) -> bool:
    """The first number in ``text`` is ``expected`` to the precision it is shown with."""
    match = NUMBER.search(text)
    assert match is not None, text
    digits = len(match.group(1) or "")
    return abs(float(match.group(0)) - expected) <= 0.5 * 10 ** -digits + 1e-9


# --------------------------------------------------------------------------- the tables


def test_skew_table_shows_the_hand_numbers(page: str) -> None:
    parsed = Page(page)
    base = row(parsed, ("suite", "condition", "n", "skew", "d+ [95% ci]"), "demo-pairs", "base")
    assert base["n"] == "4" and shows(base["skew"], 10.0)
    assert shows(base["d+ [95% ci]"], 16.25) and shows(base["d- [95% ci]"], -6.25)
    assert shows(row(parsed, ("suite", "condition", "skew", "d+ [95% ci]"), "demo-pairs", "narrative_up")["skew"],
                 15.0)


def test_domain_table_shows_skew_per_domain(page: str) -> None:
    parsed = Page(page)
    # The domain table has a row per condition too: the base rows.
    alpha = row(parsed, ("domain", "n", "skew"), "demo-pairs", "base", "alpha")
    beta = row(parsed, ("domain", "n", "skew"), "demo-pairs", "base", "beta")
    assert (alpha["n"], beta["n"]) == ("2", "2")
    assert shows(alpha["skew"], 0.0) and shows(beta["skew"], 20.0)


def test_known_answer_table_shows_brier_and_accuracy(page: str) -> None:
    known = row(Page(page), ("brier [95% ci]", "accuracy"), "demo-known", "base")
    assert known["n"] == "4" and shows(known["brier [95% ci]"], 0.325) and shows(known["accuracy"], 0.5)


def test_coherence_table_shows_the_violation_rates(page: str) -> None:
    parsed = Page(page)
    conj = row(parsed, ("metric", "n"), "demo-conj", "conjunction_violation_rate")
    dose = row(parsed, ("metric", "n"), "demo-dose", "dose_response_violation_rate")
    assert conj["n"] == "2" and shows(conj["estimate [95% ci]"], 0.5)
    assert dose["n"] == "5" and shows(dose["estimate [95% ci]"], 0.2)


def test_effect_table_shows_the_narrative_effect(page: str) -> None:
    effect = row(Page(page), ("arm", "metric"), "demo-pairs", "narrative_up", "condition_effect")
    assert effect["n"] == "4" and shows(effect["effect [95% ci]"], 5.0)


def test_gate_table_shows_estimates_and_verdicts(page: str) -> None:
    parsed = Page(page)
    skew = row(parsed, ("estimate", "verdict"), "demo-pairs", "skew")
    brier = row(parsed, ("estimate", "verdict"), "demo-known", "brier")
    # 4 pairs and 4 known answers: below the default min_n (6), so no verdict on too little data
    assert skew["verdict"] == "not evaluated" and shows(skew["estimate"], 10.0)
    assert brier["verdict"] == "not evaluated" and shows(brier["estimate"], 0.325)


# --------------------------------------------------------------------------- the figures


def test_every_figure_is_a_decodable_non_blank_png(page: str) -> None:
    sources = Page(page).images
    # One figure each: valence plane, Skew by domain, reliability diagram, dose-response
    # ladders, condition effects.
    assert len(sources) >= 5
    for src in sources:
        prefix, _, payload = src.partition(",")
        assert prefix == "data:image/png;base64"
        pixels = mpimg.imread(io.BytesIO(base64.b64decode(payload, validate=True)), format="png")
        height, width = pixels.shape[:2]
        assert pixels.ndim == 3 and pixels.shape[2] in (3, 4)
        assert height >= 100 and width >= 100
        assert np.ptp(pixels[..., :3]) > 0.5  # something was drawn on the white background
