"""The HTML report: built from a simulated audit, parsed, checked for escaping and for
self-containment, and rendered in headless Chromium.

Records come straight from the suites, the simulated model and the engine (no pytester), at
every few items of four suites, two samples per prompt and 200 bootstrap resamples, so
the module stays fast.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from pytest_optbench.elicit.engine import elicit
from pytest_optbench.metrics.calibration import bin_index
from pytest_optbench.options import Settings
from pytest_optbench.prompts.build import render_prompts
from pytest_optbench.providers.sim import SimulatedModel
from pytest_optbench.records.item import Answer, ItemRecord, PromptRecord
from pytest_optbench.report import plots
from pytest_optbench.report.html import build_compare_html, build_html, write_html
from pytest_optbench.report.json_report import build_report
from pytest_optbench.report.model.figures import make_ladder, reliability, reliability_bins
from pytest_optbench.report.model.items import differing_part
from pytest_optbench.scoring.aggregate import AggregateOptions, aggregate
from pytest_optbench.scoring.baseline import compare
from pytest_optbench.scoring.crosslingual import language_skews
from pytest_optbench.scoring.gates.evaluate import evaluate
from pytest_optbench.scoring.gates.spec import parse_thresholds
from pytest_optbench.scoring.outcome import Outcome
from pytest_optbench.suite.load import Suite, load_suite

SUITES = Path(__file__).resolve().parents[3] / "suites" / "en"
# Every k-th item of four bundled suites: every domain and kind, a quarter of the answers.
SUITE_FILES = {"track_b.yaml": 3, "known_answers.yaml": 4, "dose_response.yaml": 2, "conjunction.yaml": 2}
OPTIONS = AggregateOptions(n_resamples=200, tolerances={"conjunction_violation_rate": (2.0,)})
SETTINGS = Settings(samples=2)
INJECTED = "<script>alert(1)</script>"
THRESHOLDS = {"optbench": 1, "gates": [
    {"metric": "skew", "max_abs": 5, "suites": ["track-b-*"], "conditions": ["base"]},
    {"metric": "parse_rate", "min": 0.9},
    {"metric": "brier_skill_oos", "min": 0},  # needs --optbench-base-rate: not evaluated
]}
SECTIONS = ("Run", "Gates", "Skew of inverted pairs (pp)", "Valence plane", "Skew by domain", "Known-answer items",
            "Coherence", "Condition effects against base (pp)", "Changes against the baseline",
            "By language", "Worst items", "Answer quality")


def suite_records(model: SimulatedModel, suite: Suite) -> list[ItemRecord]:
    """Every item x condition of a suite, answered by ``model`` (what a collected item does)."""
    out = []
    for item in suite.items:
        for condition in suite.conditions:
            specs = render_prompts(suite, item, condition, SETTINGS)
            out.append(ItemRecord(
                suite=suite.id, item=item.id, condition=condition.name, kind=item.kind, file=suite.path,
                model=model.name, prompts=elicit(model, specs),
                track=suite.track if item.kind == "inverted_pair" else None, domain=item.domain,
                language=suite.language, expected=item.fields.get("expected"), outcome=item.fields.get("outcome"),
                direction=item.fields.get("direction"), prompt_hash="h"))
    return out


def audit(profile: str) -> list[ItemRecord]:
    model = SimulatedModel(profile)
    suites = [replace(suite, items=suite.items[::step]) for name, step in SUITE_FILES.items()
              if (suite := load_suite(SUITES / name)) is not None]
    records = [r for suite in suites if suite is not None for r in suite_records(model, suite)]
    track_b = next(s for s in suites if s is not None and s.id == "track-b-probability")
    german = replace(track_b, id="track-b-probability-de", language="de", conditions=track_b.conditions[:1])
    return records + suite_records(model, german)


def injected_pair() -> ItemRecord:
    """An inverted pair whose text, id and domain try to inject markup; its Skew is extreme."""
    prompts = [PromptRecord(role, f"{INJECTED}\n\nWhat is the probability of {role}?",
                            [Answer(str(value), float(value)), Answer(str(value), float(value))])
               for role, value in (("positive", 95), ("negative", 90))]
    return ItemRecord("track-b-probability", "xss-<b>01</b>", "base", "inverted_pair", "x.yaml", "sim:optimist",
                      prompts, track="B", domain="<i>domain</i>")


def make_outcome(records: list[ItemRecord], baseline: list[ItemRecord] | None = None) -> Outcome:
    aggregates = aggregate(records, OPTIONS)
    kinds: dict[str, set[str]] = {}
    for record in records:
        kinds.setdefault(record.suite, set()).add(record.kind)
    comparison = None
    if baseline is not None:
        comparison = compare(records, baseline, OPTIONS, {"model": "sim:optimist"}, {"model": "sim:calibrated"})
    verdicts = evaluate(parse_thresholds(THRESHOLDS, "thresholds.yaml"), aggregates,
                        {s: sorted(k) for s, k in kinds.items()}, comparison)
    return Outcome(aggregates, verdicts, records, [], language_skews(aggregates, records, OPTIONS), comparison)


METADATA = {"model": "sim:optimist", "seed": 0, "keep_fifty": False, "bootstrap_resamples": 200,
            "thresholds": "thresholds.yaml", "baseline": "baseline.json", "usage": {"answers": 1}}


@pytest.fixture(scope="module")
def outcome() -> Outcome:
    baseline = [r for r in audit("calibrated") if r.item != "academic-01"]  # one item only in this run
    return make_outcome(audit("optimist") + [injected_pair()], baseline)


@pytest.fixture(scope="module")
def page(outcome: Outcome) -> str:
    return build_html(outcome, dict(METADATA))


class Collector(HTMLParser):
    """Start tags, their attributes, the text of h2 headings."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.headings: list[str] = []
        self._in_h2 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "h2":
            self._in_h2 = True
            self.headings.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2":
            self._in_h2 = False

    def handle_data(self, data: str) -> None:
        if self._in_h2:
            self.headings[-1] += data


def parse(text: str) -> Collector:
    collector = Collector()
    collector.feed(text)
    collector.close()
    return collector


def images(collector: Collector) -> list[str]:
    return [str(attrs.get("src")) for tag, attrs in collector.tags if tag == "img"]


# --------------------------------------------------------------------------- the page


def test_page_has_every_section_and_the_six_figures(page: str) -> None:
    collector = parse(page)
    assert collector.headings == list(SECTIONS)
    alts = [str(attrs.get("alt")) for tag, attrs in collector.tags if tag == "img"]
    for alt in ("Valence plane", "Skew by domain", "Reliability diagram known-answers",
                "Dose-response ladders axiom-dose-response", "Condition effects", "Changes against the baseline"):
        assert alt in alts
    for src in images(collector):
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1]).startswith(b"\x89PNG")


def test_page_is_self_contained(page: str) -> None:
    collector = parse(page)
    assert "http://" not in page and "https://" not in page
    assert not any(tag in ("script", "link", "iframe", "object", "embed") for tag, _ in collector.tags)
    for tag, attrs in collector.tags:
        if "href" in attrs:
            assert str(attrs["href"]).startswith("#")
        if "src" in attrs:
            assert str(attrs["src"]).startswith("data:")
    for src in images(collector):  # nor inside the PNGs (matplotlib's Software chunk names a URL)
        assert b"http" not in base64.b64decode(src.split(",", 1)[1])
    assert "default-src 'none'" in page


def test_item_text_ids_and_domains_are_escaped(page: str) -> None:
    assert INJECTED not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "xss-&lt;b&gt;01&lt;/b&gt;" in page and "&lt;i&gt;domain&lt;/i&gt;" in page
    assert not any(tag == "script" for tag, _ in parse(page).tags)


def test_gate_verdicts_are_coloured_failures_first(page: str) -> None:
    gates = page[page.index('id="gates"'):page.index('id="skew"')]
    assert '<td class="fail">FAIL</td>' in gates and '<td class="pass">PASS</td>' in gates
    assert '<td class="ne">not evaluated</td>' in gates
    assert gates.index('<td class="fail">') < gates.index('<td class="ne">') < gates.index('<td class="pass">')
    assert "gate skew |x| &lt;= 5 (point) failed on track-b-probability/base" in gates
    assert "optbench gates: 2 failed" in page  # Skew of both Track B suites


def test_baseline_section_states_settings_and_unpaired_items(page: str) -> None:
    baseline = page[page.index('id="baseline"'):page.index('id="languages"')]
    assert "model: baseline &#x27;sim:calibrated&#x27;, now &#x27;sim:optimist&#x27;" in baseline
    assert "only in this run" in baseline and "track-b-probability::academic-01" in baseline


def test_worst_items_show_question_texts(page: str) -> None:
    worst = page[page.index('id="worst"'):page.index('id="quality"')]
    assert "largest |Skew|" in worst and "What is the probability of negative?" in worst
    assert "answered wrong most confidently" in worst
    assert "dose_response_violation_rate" in worst and "reversal(s)" in worst


def test_languages_table_lists_both_languages(page: str) -> None:
    languages = page[page.index('id="languages"'):page.index('id="worst"')]
    assert "<th>de</th>" in languages and "<th>en</th>" in languages


def test_sections_without_data_are_left_out() -> None:
    records = [r for r in audit("calibrated") if r.suite == "axiom-conjunction"]
    headings = parse(build_html(make_outcome(records), {"model": "sim:calibrated"})).headings
    assert "Valence plane" not in headings and "Changes against the baseline" not in headings
    assert "By language" not in headings and "Coherence" in headings


def test_compare_page_has_one_valence_point_and_a_column_per_run(outcome: Outcome) -> None:
    calibrated = make_outcome(audit("calibrated"))
    runs = [("<b>optimist</b>", json.loads(json.dumps(build_report(outcome, dict(METADATA))))),
            ("calibrated", json.loads(json.dumps(build_report(calibrated, {"model": "sim:calibrated"}))))]
    page = build_compare_html(runs)
    collector = parse(page)
    assert collector.headings == ["Runs", "Valence plane, one point per run", "Key metrics under base",
                                  "Gate verdicts", "Track B Skew by language"]
    assert len(images(collector)) == 1
    assert "<b>optimist</b>" not in page and "&lt;b&gt;optimist&lt;/b&gt;" in page
    assert "http://" not in page and "https://" not in page


def test_compare_page_keeps_two_runs_of_one_model_apart(outcome: Outcome) -> None:
    report = json.loads(json.dumps(build_report(outcome, dict(METADATA))))
    page = build_compare_html([("sim:optimist", report), ("sim:optimist", report)])
    assert "<th>sim:optimist</th><th>sim:optimist (2)</th>" in page


def test_write_html_replaces_atomically(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "report.html"
    write_html(target, "old")
    write_html(target, "<p>new</p>")
    assert target.read_text(encoding="utf-8") == "<p>new</p>"
    assert [p.name for p in target.parent.iterdir()] == ["report.html"]
    assert target.stat().st_mode & 0o644 == 0o644  # readable like any file, not mkstemp's 0600


def test_differing_part_keeps_only_what_changes() -> None:
    scenario = "A student applies. The deadline is near."
    assert differing_part(f"{scenario}\n\nWill it pass?", f"{scenario}\n\nWill it fail?") == "... Will it fail?"
    assert differing_part("S. Rung one.\n\nQ?", "S. Rung two.\n\nQ?") == "... Rung two. ..."


# --------------------------------------------------------------------------- the figures


@pytest.mark.parametrize("draw", [
    lambda: plots.valence_plane([]),
    lambda: plots.valence_plane([plots.ValencePoint("m", 3, float("nan"), float("nan"), -2, -4, 0)]),
    lambda: plots.skew_by_domain([plots.Estimate("d", 2.0, float("nan"), float("nan"))]),
    lambda: plots.reliability_diagram(reliability("s", "base", [0.1, 0.95, float("nan")], [0, 1, 1])),
    lambda: plots.reliability_diagram(reliability("s", "base", [], [])),
    lambda: plots.dose_ladders([make_ladder("x", [30, 20, float("nan")], "increasing"),
                                make_ladder("y", [70, 80], "decreasing"), make_ladder("z", [40, 20, 60], "increasing")]),
    lambda: plots.condition_effects([plots.Estimate("a", -1, -2, 0, "p1"), plots.Estimate("b", 1, 0.5, 2, "p2")]),
    lambda: plots.baseline_changes([plots.Estimate("skew", 0.5, -1, 2, "pp")]),
])
def test_figures_are_png_even_for_thin_data(draw) -> None:  # type: ignore[no-untyped-def]
    assert draw().startswith(b"\x89PNG")


def test_reliability_bins_use_the_calibration_bins() -> None:
    p = np.array([0.05, 0.07, 0.7, 0.71, 1.0])
    y = np.array([0, 1, 1, 1, 0])
    count, mean_p, freq = reliability_bins(p, y)
    assert list(np.flatnonzero(count)) == sorted(set(bin_index(p)))
    assert count[0] == 2 and freq[0] == 0.5 and mean_p[0] == pytest.approx(0.06)
    assert count[7] == 2 and count[9] == 1 and freq[9] == 0.0


# --------------------------------------------------------------------------- in a browser


def chromium() -> str:
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.skip("headless Chromium is not installed (Debian/Ubuntu package 'chromium'; CI installs it)")
    return binary


def run_chromium(binary: str, tmp_path: Path, html: Path, *mode: str) -> subprocess.CompletedProcess[str]:
    command = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={tmp_path / 'profile'}", *mode, "--window-size=1280,2400", html.as_uri()]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)


def test_page_renders_in_headless_chromium(page: str, tmp_path: Path) -> None:
    binary = chromium()
    html = tmp_path / "report.html"
    write_html(html, page)
    shot = tmp_path / "shot.png"
    result = run_chromium(binary, tmp_path, html, f"--screenshot={shot}")
    assert shot.exists(), result.stderr[-2000:]
    assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 20_000
    dom = run_chromium(binary, tmp_path, html, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    for heading in SECTIONS:
        assert f">{heading.replace('&', '&amp;')}</h2>" in dom.stdout
    assert "<script>" not in dom.stdout
