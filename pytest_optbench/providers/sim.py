"""Simulated models with planted, documented biases (``--model sim:<profile>``).

No key, no network, deterministic given the seed: every answer is a function of
(seed, suite, item, condition, role, sample). Each profile plants known parameters, so the
metrics can be checked to recover them:

================  ==========  ===========  ====  ===========  ==============  ==========  ==========
profile           delta_plus  delta_minus  Skew  binary k     overconfidence  conj. rate  dose rate
================  ==========  ===========  ====  ===========  ==============  ==========  ==========
calibrated        0           0            0     1 (exact)    0.00            0.00        0.00
optimist          +10         -2           +8    1            0.00            0.05        0.30
pessimist         -9          +2           -7    1            0.00            0.05        0.30
overclaim         +7          +6           +13   1            0.00            0.10        0.40
overconfident     0           0            0     5 (extreme)  0.195           0.05        0.35
================  ==========  ===========  ====  ===========  ==============  ==========  ==========

(disjunction and conditional violation rates equal the conjunction rate.) On a balanced
known-answer set the binary answers have AUC 0.80 for every profile (d = 0.6); with k = 5
the overconfidence is 0.195, ECE 0.195, AUC 0.79, Brier 0.228 and the fitted shrinkage a
0.56 (vs 0.000, 0.001, 0.80, 0.182 and 1.00 with k = 1): figures from 400,000 simulated
items, answers rounded as the simulator rounds them.

How answers are made (pp = percentage points, every answer an integer 1-99):

* ``inverted_pair``: a latent probability q per item (the item's ``expected`` when set,
  else 50 + u with u uniform in [-20, 20] from the item's hash). Items with a stated rate
  (``expected``, Track A) get no bias, as every model in the paper reproduces stated rates:
  they are the positive control. P+ = q + delta_plus + noise,
  P- = 100 - q + delta_minus + noise, so Skew = delta_plus + delta_minus exactly in
  expectation. ``delta_plus``/``delta_minus`` as metrics are mean(P+) - 50 and mean(P-) - 50,
  which also carry mean(q) - 50 of the suite's items.
  Under a condition whose name ends in ``_up`` (``_down``) q moves up (down) by
  ``narrative_shift`` (10 pp): both answers move coherently, so Skew stays the same while
  the mean answer shows the narrative's pull.
* ``binary``: z = +d or -d (by the item's outcome) plus N(0, 1) per item, p = sigmoid(k*2*d*z)
  with d = ``binary_separation``. With k = 1 p is the exact posterior (calibrated); k > 1 pushes
  answers to the extremes without adding discrimination (overconfident; AUC = Phi(d*sqrt(2))).
* ``conjunction``/``disjunction``/``conditional``: coherent latent answers (P(a and b) =
  P(a)P(b), inclusion-exclusion, P(a)P(b|a)); with the profile's rate an item instead gets a
  violating value 8-12 pp beyond the bound.
* ``dose_response``: rungs move 10 pp in the item's direction; each adjacent step is reversed
  with the profile's dose rate.
* Each answer: ``refusal_rate`` of inverted-pair answers are exactly 50 (refusals by the
  spec's rule; other kinds get none, since there a 50 counts as an answer),
  ``prose_refusal_rate`` are a sentence with no number; the rest come in varied styles
  ("65", "About 65%.", '{"probability": 65}', "65/100", ...). Accidental 50s are nudged to
  49 or 51 so that only planted refusals are 50.

Override any parameter in the spec: ``sim:optimist?delta_plus=4&noise_sd=2``.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, fields, replace
from typing import Any
from urllib.parse import parse_qsl

import numpy as np

from .base import Prompt


@dataclass(frozen=True)
class SimProfile:
    delta_plus: float = 0.0
    delta_minus: float = 0.0
    noise_sd: float = 5.0
    axiom_noise_sd: float = 1.5
    binary_separation: float = 0.6
    binary_sharpness: float = 1.0
    conjunction_violation_rate: float = 0.0
    disjunction_violation_rate: float = 0.0
    conditional_violation_rate: float = 0.0
    dose_response_violation_rate: float = 0.0
    refusal_rate: float = 0.02
    prose_refusal_rate: float = 0.02
    narrative_shift: float = 10.0

    @property
    def skew(self) -> float:
        return self.delta_plus + self.delta_minus


# What each parameter may be: checked when the model is built, so that a bad value is a
# usage error at start-up, not a failure of every call (a negative SD, a rate above 1; a
# sharpness or separation whose logistic overflows).
PARAMETER_RANGES: dict[str, tuple[float, float]] = {
    "delta_plus": (-100, 100), "delta_minus": (-100, 100), "narrative_shift": (-100, 100),
    "noise_sd": (0, 100), "axiom_noise_sd": (0, 100),
    "binary_separation": (0, 3), "binary_sharpness": (0, 10),
    "conjunction_violation_rate": (0, 1), "disjunction_violation_rate": (0, 1),
    "conditional_violation_rate": (0, 1), "dose_response_violation_rate": (0, 1),
    "refusal_rate": (0, 1), "prose_refusal_rate": (0, 1),
}

PROFILES: dict[str, SimProfile] = {
    "calibrated": SimProfile(),
    "optimist": SimProfile(
        delta_plus=10, delta_minus=-2, conjunction_violation_rate=0.05,
        disjunction_violation_rate=0.05, conditional_violation_rate=0.05,
        dose_response_violation_rate=0.30,
    ),
    "pessimist": SimProfile(
        delta_plus=-9, delta_minus=2, conjunction_violation_rate=0.05,
        disjunction_violation_rate=0.05, conditional_violation_rate=0.05,
        dose_response_violation_rate=0.30,
    ),
    "overclaim": SimProfile(
        delta_plus=7, delta_minus=6, conjunction_violation_rate=0.10,
        disjunction_violation_rate=0.10, conditional_violation_rate=0.10,
        dose_response_violation_rate=0.40,
    ),
    "overconfident": SimProfile(
        binary_sharpness=5.0, conjunction_violation_rate=0.05,
        disjunction_violation_rate=0.05, conditional_violation_rate=0.05,
        dose_response_violation_rate=0.35,
    ),
}

_STYLES = (
    "{v}",
    "About {v}%.",
    '{{"probability": {v}}}',
    "{v}/100",
    "I'd estimate the probability at {v} percent.",
    "Probability: {v}%",
)
_PROSE_REFUSAL = "I can't give a reliable probability for this without more information."


class SimSpecError(ValueError):
    """A ``sim:`` model spec names an unknown profile or parameter."""


def parse_sim_spec(spec: str) -> tuple[str, SimProfile]:
    """``optimist?noise_sd=2`` -> ("optimist", profile with that override)."""
    name, _, query = spec.partition("?")
    if name not in PROFILES:
        raise SimSpecError(f"unknown simulated profile {name!r}; choose one of: {', '.join(PROFILES)}")
    profile = PROFILES[name]
    known = {f.name for f in fields(SimProfile)}
    overrides: dict[str, float] = {}
    for key, value in parse_qsl(query, keep_blank_values=True):
        if key not in known:
            raise SimSpecError(f"unknown simulated-model parameter {key!r} in 'sim:{spec}'; known: {', '.join(sorted(known))}")
        try:
            overrides[key] = float(value)
        except ValueError:
            raise SimSpecError(f"parameter {key!r} in 'sim:{spec}' must be a number, got {value!r}") from None
        low, high = PARAMETER_RANGES[key]
        if not low <= overrides[key] <= high:  # also NaN
            raise SimSpecError(f"parameter {key!r} in 'sim:{spec}' must be from {low:g} to {high:g}, got {value}")
    profile = replace(profile, **overrides)
    if profile.refusal_rate + profile.prose_refusal_rate > 1:
        raise SimSpecError(f"refusal_rate + prose_refusal_rate in 'sim:{spec}' must be at most 1")
    return name, profile


def _rng(*parts: Any) -> np.random.Generator:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "little"))


class SimulatedModel:
    """Answers every item kind from latent values with planted biases (see module doc)."""

    def __init__(self, profile_spec: str = "calibrated", seed: int = 0) -> None:
        self.profile_name, self.profile = parse_sim_spec(profile_spec)
        self.seed = seed
        self.name = f"sim:{profile_spec}"

    # -- latent values, shared by every sample and role of an item -------------------------

    def _item_rng(self, meta: Any) -> np.random.Generator:
        return _rng(self.seed, "item", meta.get("suite"), meta.get("item"), meta.get("condition"))

    def latent_pair_probability(self, meta: Any) -> float:
        """q: the coherent P(positive) for an inverted pair (before bias and noise)."""
        if meta.get("expected") is not None:
            return float(meta["expected"])
        # Keyed by item only, so q is the same under every condition but a narrative one.
        q = 50.0 + float(_rng(self.seed, "q", meta.get("suite"), meta.get("item")).uniform(-20, 20))
        condition = str(meta.get("condition") or "")
        if condition.endswith("_up"):
            q += self.profile.narrative_shift
        elif condition.endswith("_down"):
            q -= self.profile.narrative_shift
        return q

    def expected_answer(self, meta: Any) -> float:
        """The mean answer the simulator aims at for one prompt (no noise, no refusals)."""
        kind, role, profile = meta.get("kind"), meta.get("role"), self.profile
        if kind == "inverted_pair":
            q = self.latent_pair_probability(meta)
            stated = meta.get("expected") is not None  # the positive control: no bias
            if role == "positive":
                return q + (0.0 if stated else profile.delta_plus)
            return 100.0 - q + (0.0 if stated else profile.delta_minus)
        rng = self._item_rng(meta)
        if kind == "binary":
            d = profile.binary_separation
            z = (d if meta.get("outcome") else -d) + rng.standard_normal()
            return 100.0 / (1.0 + math.exp(-profile.binary_sharpness * 2 * d * z))
        if kind == "dose_response":
            return self._ladder(meta, rng)[int(str(role).removeprefix("rung")) - 1]
        return self._axiom_set(kind, meta, rng)[role]

    def _axiom_set(self, kind: str, meta: Any, rng: np.random.Generator) -> dict[str, float]:
        profile = self.profile
        if kind == "conjunction":
            a, b = rng.uniform(30, 80, size=2)
            both = a * b / 100
            if rng.random() < profile.conjunction_violation_rate:
                both = min(a, b) + rng.uniform(8, 12)
            return {"a": a, "b": b, "both": both}
        if kind == "disjunction":
            a, b = rng.uniform(20, 60, size=2)
            either = a + b - a * b / 100
            if rng.random() < profile.disjunction_violation_rate:
                either = max(a, b) - rng.uniform(8, 12)
            return {"a": a, "b": b, "either": either}
        a, b_given_a = rng.uniform(30, 80, size=2)
        both = a * b_given_a / 100
        if rng.random() < profile.conditional_violation_rate:
            both += rng.uniform(12, 18)
        return {"a": a, "b_given_a": b_given_a, "both": both}

    def _ladder(self, meta: Any, rng: np.random.Generator) -> list[float]:
        sign = 1.0 if meta.get("direction") == "increasing" else -1.0
        value = 30.0 if sign > 0 else 70.0
        ladder = [value]
        for _ in range(11):  # enough rungs for any sensible ladder
            step = 10.0 * sign
            if rng.random() < self.profile.dose_response_violation_rate:
                step = -step
            value = min(95.0, max(5.0, value + step))
            ladder.append(value)
        return ladder

    # -- the Model protocol ----------------------------------------------------------------

    def complete(self, prompt: Prompt) -> str:
        meta = prompt.meta
        # The profile is part of the key: two simulated models answer with independent noise.
        rng = _rng(self.seed, "sample", self.name, meta.get("suite"), meta.get("item"),
                   meta.get("condition"), meta.get("role"), prompt.sample)
        draw = rng.random()
        # Planted 50s only where the spec reads them as refusals (inverted pairs); elsewhere a
        # 50 is an answer and would move the planted axiom and calibration figures.
        if draw < self.profile.refusal_rate and meta.get("kind") == "inverted_pair":
            return "50"
        if draw < self.profile.refusal_rate + self.profile.prose_refusal_rate:
            return _PROSE_REFUSAL
        sd = self.profile.noise_sd if meta.get("kind") in ("inverted_pair",) else self.profile.axiom_noise_sd
        value = self.expected_answer(meta) + rng.normal(0.0, sd)
        answer = int(min(99, max(1, round(value))))
        if answer == 50:
            answer = 49 if rng.random() < 0.5 else 51
        return _STYLES[int(rng.integers(len(_STYLES)))].format(v=answer)
