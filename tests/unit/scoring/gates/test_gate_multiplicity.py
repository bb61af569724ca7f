"""Gates as tests of their bounds (issue 14, phase B): each ``evidence: ci`` gate's p of "the
bound is crossed", the session's multiplicity correction over those gates, and the crossing a
gate can detect. Checked against closed forms computed here without SciPy (binomial sums,
Holm and BH by their definitions) and against brute-force simulation."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import scipy.stats as sps
from _multiple_testing import reference_bh, reference_holm
from _power import caught_at_printed_crossing
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_optbench.metrics import gate_tests
from pytest_optbench.metrics.confidence import BetaConfidence, studentized_bootstrap
from pytest_optbench.metrics.power import detectable_crossing
from pytest_optbench.report.model.tables import gate_family_text, power_sentences
from pytest_optbench.scoring.aggregate import Aggregate
from pytest_optbench.scoring.baseline import Change, Comparison
from pytest_optbench.scoring.gates.evaluate import evaluate
from pytest_optbench.scoring.gates.spec import FAIL, INCONCLUSIVE, PASS, Gate, ThresholdsError, read_thresholds

KINDS = {"s": ["inverted_pair"]}
Z975, Z80 = 1.959963984540054, 0.8416212335729143


def binomial_tail(x: int, n: int, v: float) -> float:
    """P(Bin(n, v) >= x), summed term by term."""
    return sum(math.comb(n, k) * v ** k * (1 - v) ** (n - k) for k in range(x, n + 1))


def rate(x: int, n: int, suite: str = "s", metric: str = "error_rate") -> Aggregate:
    cd = BetaConfidence(x / n, x, n)
    interval = cd.interval()
    return Aggregate(suite, "base", metric, x / n, interval.low, interval.high, n, confidence=cd)


def rate_gates(counts: list[int], n: int, bound: float, multiplicity: str,
               evidence: str = "ci") -> list:
    suites = {f"s{i}": ["inverted_pair"] for i in range(len(counts))}
    aggs = [rate(x, n, f"s{i}") for i, x in enumerate(counts)]
    gates = [Gate("error_rate", "max", bound, evidence=evidence, suites=(f"s{i}",), min_n=1)
             for i in range(len(counts))]
    return evaluate(gates, aggs, suites, multiplicity=multiplicity)


def test_p_is_the_exact_binomial_tail_of_the_gates_bound() -> None:
    (v,) = rate_gates([12], 200, 0.03, "holm")
    assert v.p_crossing == pytest.approx(binomial_tail(12, 200, 0.03), rel=1e-9)
    assert v.p_adjusted == pytest.approx(v.p_crossing)  # a family of one
    assert (v.multiplicity, v.family_size) == ("holm", 1)
    # The same data against a bound far above the estimate: no evidence of crossing it.
    (far,) = rate_gates([12], 200, 0.2, "holm")
    assert far.p_crossing == pytest.approx(binomial_tail(12, 200, 0.2), rel=1e-9)
    assert far.p_crossing > 0.999 and far.verdict == PASS


def test_the_issues_example_no_longer_passes_with_a_tiny_p() -> None:
    """Issue 14: "a gate delta_plus |x| <= 20 passes with p_holm = 2e-5"; the p belonged to
    delta_plus = 0, not to the bound. Now the gate's p is that of |delta_plus| > 20."""
    values = np.random.default_rng(3).normal(4.0, 6.0, 60)
    cd = studentized_bootstrap(values, np.random.default_rng(4), 2000, (-50, 50))
    interval = cd.interval()
    agg = Aggregate("s", "base", "delta_plus", float(values.mean()), interval.low, interval.high, 60,
                    p_value=2e-5, confidence=cd)
    (v,) = evaluate([Gate("delta_plus", "max_abs", 20, evidence="ci")], [agg], KINDS)
    assert v.verdict == PASS and v.p_value == 2e-5  # the aggregate's own test, kept for reference
    assert v.p_crossing > 0.99 and v.p_holm is not None and v.p_holm > 0.99


def test_holm_keeps_a_lucky_crossing_among_twenty_gates_from_failing_the_session() -> None:
    # 19 gates far inside their bound and one whose CI just lies beyond it (p ~ 0.01).
    counts, n, bound = [0] * 19 + [14], 200, 0.03
    plain = rate_gates(counts, n, bound, "none")
    holm = rate_gates(counts, n, bound, "holm")
    bh = rate_gates(counts, n, bound, "bh")
    assert [v.verdict for v in plain] == [PASS] * 19 + [FAIL]
    # Under Holm the lucky crossing cannot be told from noise: INCONCLUSIVE, beside the 99.75%
    # interval that decided it (Bonferroni's level: the step-down rejects nothing), never PASS.
    assert [v.verdict for v in holm] == [PASS] * 19 + [INCONCLUSIVE]
    assert holm[-1].level == pytest.approx(1 - 2 * 0.025 / 20)
    assert not Gate("error_rate", "max", bound).beyond(holm[-1].interval_low, holm[-1].interval_high)
    assert "the 95% interval lies beyond the bound, but the 99.75% interval the correction asks for straddles it" \
        in holm[-1].reason and "Holm over the 20 gates of family plumbing" in holm[-1].reason
    # Each PASS stands beside its own 95% interval, wholly within the bound.
    assert all(v.level == 0.95 and v.interval_high <= bound for v in holm[:19])
    raw = [binomial_tail(x, n, bound) for x in counts]
    assert [v.p_crossing for v in holm] == pytest.approx(raw, rel=1e-9)
    assert [v.p_holm for v in holm] == pytest.approx(reference_holm(raw), rel=1e-9)
    assert [v.p_adjusted for v in holm] == pytest.approx(reference_holm(raw), rel=1e-9)
    assert [v.p_adjusted for v in bh] == pytest.approx(reference_bh(raw), rel=1e-9)
    assert [v.p_bh for v in holm] == [v.p_adjusted for v in bh]  # both kept, whichever decides
    assert all(v.family_size == 20 for v in holm)


def test_a_clear_crossing_still_fails_under_holm_and_says_so() -> None:
    verdicts = rate_gates([0] * 9 + [40], 200, 0.03, "holm")
    assert verdicts[-1].verdict == FAIL
    assert verdicts[-1].reason.startswith("the whole 99.5% interval lies beyond the bound (Holm over the 10 gates of "
                                          "family plumbing, adjusted p")
    assert verdicts[-1].level == pytest.approx(0.995) and verdicts[-1].interval_low > 0.03


def test_point_gates_and_unevaluated_gates_are_outside_the_family() -> None:
    aggs = [rate(14, 200, "s0"), rate(14, 200, "s1")]
    gates = [Gate("error_rate", "max", 0.03, evidence="ci", suites=("s0",), min_n=1),
             Gate("error_rate", "max", 0.03, evidence="point", suites=("s1",), min_n=1),
             Gate("error_rate", "max", 0.03, evidence="ci", suites=("nowhere",), min_n=1)]
    ci, point, unmatched = evaluate(gates, aggs, {"s0": ["inverted_pair"], "s1": ["inverted_pair"]})
    assert ci.family_size == 1 and ci.verdict == FAIL
    assert point.verdict == FAIL and point.p_adjusted is None and point.multiplicity is None
    assert point.p_crossing == pytest.approx(binomial_tail(14, 200, 0.03), rel=1e-9)  # shown, not corrected
    assert unmatched.verdict == INCONCLUSIVE and unmatched.p_crossing is None
    text = gate_family_text([ci, point, unmatched])
    assert text.startswith("multiplicity: Holm within each family (family-wise error at 2.5% one-sided per family)")
    assert "families: plumbing: 1 CI gate row(s) (error_rate)" in text
    assert text.endswith("1 point gate(s) decide on the estimate alone")
    assert gate_family_text([ci], "none").startswith("multiplicity: none; each CI gate decides on its own 95% interval")


def test_change_gates_test_their_bound_on_the_change_and_join_the_family() -> None:
    d = np.random.default_rng(5).normal(1.0, 4.0, 80)
    cd = studentized_bootstrap(d, np.random.default_rng(6), 2000)
    interval = cd.interval()
    change = Change("s", "base", "skew", 0.0, float(d.mean()), interval.low, interval.high, 80, cd.p_value(0.0),
                    "paired bootstrap-t/Student", cd)
    gates = [Gate("skew", "max_increase", 3.0, evidence="ci"), Gate("skew", "max_decrease", 3.0, evidence="ci"),
             Gate("skew", "max_change", 3.0, evidence="ci")]
    up, down, both = evaluate(gates, [], KINDS, Comparison([change]), multiplicity="none")
    # An increase beyond +3 is "change > 3"; a decrease beyond 3 is "change < -3".
    assert up.p_crossing == pytest.approx(cd.p_greater(3.0))
    assert down.p_crossing == pytest.approx(cd.p_less(-3.0))
    assert both.p_crossing == pytest.approx(min(up.p_crossing, down.p_crossing))
    assert {v.family_size for v in (up, down, both)} == {3}
    assert up.detectable is not None and up.detectable > 0


@settings(max_examples=60, deadline=None)
@given(x=st.integers(0, 60), n=st.integers(60, 300), b1=st.floats(0.001, 0.6), b2=st.floats(0.001, 0.6),
       method=st.sampled_from(["holm", "bh"]))
def test_gate_p_is_a_probability_monotone_in_the_bound_and_never_lowered(
        x: int, n: int, b1: float, b2: float, method: str) -> None:
    low, high = sorted((b1, b2))
    v_low, v_high = rate_gates([x], n, low, method)[0], rate_gates([x], n, high, method)[0]
    for v in (v_low, v_high):
        assert v.p_crossing is not None and 0.0 <= v.p_crossing <= 1.0
    # "The rate is above b" is less plausible the higher b lies.
    assert v_low.p_crossing <= v_high.p_crossing + 1e-12
    pair = rate_gates([x, min(x + 3, n)], n, low, method)
    for v in pair:
        assert v.p_adjusted is not None and v.p_crossing is not None
        assert v.p_crossing - 1e-12 <= v.p_adjusted <= 1.0
        assert v.p_holm is not None and v.p_holm >= v.p_crossing - 1e-12


@settings(max_examples=40, deadline=None)
@given(counts=st.lists(st.integers(0, 30), min_size=1, max_size=12), bound=st.floats(0.01, 0.2))
def test_a_correction_never_fails_a_gate_the_ci_passes(counts: list[int], bound: float) -> None:
    plain = rate_gates(counts, 150, bound, "none")
    for method in ("holm", "bh"):
        corrected = rate_gates(counts, 150, bound, method)
        for a, b in zip(plain, corrected, strict=True):
            assert not (b.verdict == FAIL and a.verdict != FAIL)
    # With no correction the verdict is the CI rule, the p its mirror.
    for v in plain:
        assert (v.verdict == FAIL) == (v.ci_low is not None and v.ci_low > bound)
        assert (v.verdict == FAIL) == (v.p_crossing is not None and v.p_crossing < 0.025)


# --------------------------------------------------------------------------- thresholds.yaml


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "thresholds.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_thresholds_multiplicity_is_optional_and_checked(tmp_path: Path) -> None:
    gates = "gates:\n  - metric: skew\n    max_abs: 5\n"
    assert read_thresholds(write(tmp_path, "optbench: 1\n" + gates)).multiplicity is None
    assert read_thresholds(write(tmp_path, "optbench: 1\nmultiplicity: bh\n" + gates)).multiplicity == "bh"
    with pytest.raises(ThresholdsError) as err:
        read_thresholds(write(tmp_path, "optbench: 1\nmultiplicity: bonferroni\n" + gates), "thresholds.yaml")
    assert str(err.value) == ("thresholds.yaml, key 'multiplicity': must be one of holm, bh, none, "
                              "got 'bonferroni'.")
    with pytest.raises(ThresholdsError) as err:
        read_thresholds(write(tmp_path, "optbench: 1\nmultiplicty: bh\n" + gates), "thresholds.yaml")
    assert "did you mean 'multiplicity'" in str(err.value) and "allowed: optbench, gates, multiplicity" in str(err.value)


def test_unknown_multiplicity_in_code_is_an_error() -> None:
    with pytest.raises(ValueError, match="multiplicity must be one of holm, bh, none"):
        evaluate([], [], KINDS, multiplicity="bonferroni")


# --------------------------------------------------------------------------- power of a gate


def test_detectable_crossing_of_a_mean_has_80_percent_power_by_simulation() -> None:
    """Brute force: normal items, the bound the printed crossing short of the truth, the gate
    fails 75-85% of the time; with many items the crossing is the normal-theory
    (z_.975 + z_.8) se."""
    rng = np.random.default_rng(11)
    caught = caught_at_printed_crossing(lambda g: g.normal(0.0, 3.0, 20), 0.0, "max", rng)
    assert 0.75 <= caught <= 0.85
    many = studentized_bootstrap(rng.normal(0.0, 3.0, 5000), rng, 2000)
    assert detectable_crossing(many) == pytest.approx((Z975 + Z80) * many.se, rel=0.03)


def test_detectable_crossing_of_a_two_valued_mean_has_80_percent_power() -> None:
    """Brier-like items of a sharp forecaster (0.01 when right, 0.81 when wrong, a quarter
    wrong) at 30 items: read off the interval's two quantiles separately the crossing was
    caught 0.93 of the time, because a low mean comes with a small se; the bootstrap of the
    gate's power (mean and se resampled together) puts it at 75-85% (docs/statistics.md, Power)."""
    rng = np.random.default_rng(12)

    def brier_like(g: np.random.Generator) -> np.ndarray:
        return np.where(g.random(30) < 0.25, 0.81, 0.01)

    caught = caught_at_printed_crossing(brier_like, 0.25 * 0.81 + 0.75 * 0.01, "max", rng)
    assert 0.75 <= caught <= 0.85


@pytest.mark.parametrize(("events", "checks", "bound", "side"),
                         [(0, 100, 0.02, "max"), (3, 60, 0.1, "max"), (95, 100, 0.9, "min"), (40, 40, 0.95, "min")])
def test_detectable_crossing_of_a_rate_is_exact_binomial_power(events: int, checks: int, bound: float,
                                                               side: str) -> None:
    """Issue 27, D8: at a true rate the printed crossing beyond the bound, the gate (the
    Clopper-Pearson end beyond the bound) fails 80% of the time, counted over every outcome;
    reading the run's own interval promised crossings a 0-event run's gate never sees."""
    cd = BetaConfidence(events / checks, events, checks)
    d = detectable_crossing(cd, side=side, bound=bound)
    truth = bound + d if side == "max" else bound - d
    outcomes = np.arange(checks + 1)
    fails = np.array([gate_tests.p_crossing(BetaConfidence(x / checks, x, checks), side, bound) < 0.025
                      for x in outcomes])
    power = float(sps.binom.pmf(outcomes, checks, truth)[fails].sum())
    assert power == pytest.approx(0.80, abs=1e-6)


def test_an_underpowered_ci_gate_is_flagged_and_said_once() -> None:
    aggs = [rate(1, 40, "s0"), rate(1, 40, "s1")]
    tight = Gate("error_rate", "max", 0.02, evidence="ci", suites=("s0",), min_n=1)
    loose = Gate("error_rate", "max", 0.5, evidence="ci", suites=("s1",), min_n=1)
    verdicts = evaluate([tight, loose], aggs, {"s0": ["inverted_pair"], "s1": ["inverted_pair"]})
    assert [v.underpowered for v in verdicts] == [True, False]
    assert verdicts[0].detectable is not None and verdicts[0].detectable > 0.02
    (sentence,) = power_sentences(verdicts)
    assert sentence.startswith("gate error_rate <= 0.02 on s0/base is underpowered: with n = 40 its CI detects")


def test_a_gate_underpowered_on_many_suites_is_one_sentence() -> None:
    """The bundled thresholds apply one gate to ten languages: one line, not ten."""
    aggs = [rate(1, 40, f"s{j}") for j in range(5)]
    tight = Gate("error_rate", "max", 0.02, evidence="ci", min_n=1)
    verdicts = evaluate([tight], aggs, {f"s{j}": ["inverted_pair"] for j in range(5)})
    assert all(v.underpowered for v in verdicts)
    (sentence,) = power_sentences(verdicts)
    assert sentence.startswith("gate error_rate <= 0.02 is underpowered on 5 suite/condition pairs "
                               "(s0/base, s1/base, s2/base and 2 more): with n = 40 their CIs detect a crossing only of")


def test_a_far_crossing_fails_under_holm_whatever_the_number_of_resamples() -> None:
    """Beyond every bootstrap draw Student's tail decides, so the p is not stuck at 1 / (B + 1)
    (with 200 resamples and 20 gates, 20 / 201 > 0.025 would pass every gate)."""
    rng = np.random.default_rng(2)
    suites = {f"s{j}": ["inverted_pair"] for j in range(20)}
    aggs, gates = [], []
    for j in range(20):
        values = rng.normal(8.0 if j == 0 else 0.0, 2.0, 60)
        cd = studentized_bootstrap(values, rng, 200)
        interval = cd.interval()
        aggs.append(Aggregate(f"s{j}", "base", "skew", float(values.mean()), interval.low, interval.high, 60,
                              confidence=cd))
        gates.append(Gate("skew", "max_abs", 5, evidence="ci", suites=(f"s{j}",)))
    verdicts = evaluate(gates, aggs, suites)
    assert verdicts[0].p_crossing is not None and verdicts[0].p_crossing < 1 / 201
    assert [v.verdict for v in verdicts] == [FAIL] + [PASS] * 19
