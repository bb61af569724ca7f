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
skewed            +6          -2           +4    2            0.10            0.05        0.30
================  ==========  ===========  ====  ===========  ==============  ==========  ==========

(disjunction and conditional violation rates equal the conjunction rate.) ``skewed`` is the
profile for checking intervals on awkward data: its items' Skew is right-skewed and
heavy-tailed (``item_tilt_sd``), its refusals cluster by item (``refusal_clustering``), and
its binary answers are mildly overconfident (k = 2: overconfidence and ECE 0.10, AUC 0.81,
Brier 0.190, shrinkage a 0.73 from 20,000 simulated items). On a balanced known-answer set the binary answers have AUC 0.80 for every profile (d = 0.6); with k = 5
the overconfidence is 0.195, ECE 0.195, AUC 0.79, Brier 0.228 and the fitted shrinkage a
0.56 (vs 0.000, 0.001, 0.80, 0.182 and 1.00 with k = 1): figures from 400,000 simulated
items, answers rounded as the simulator rounds them.

How answers are made (pp = percentage points, every answer an integer 1-99; each item kind
aims the answer of its roles in ``Kind.simulated_answer``, kinds/*.py):

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
* ``item_tilt_sd`` (0 unless set): each non-stated pair item's P+ gets an extra tilt
  ``item_tilt_sd * (E - 1)``, E ~ Exponential(1) from the item's hash (the same under every
  condition): mean 0, SD ``item_tilt_sd``, skewness 2, so the planted Skew is unchanged in
  expectation but a few items carry a large optimism (a right-skewed, heavy-tailed per-item
  distribution).
* Each answer: ``refusal_rate`` of inverted-pair answers are exactly 50 (refusals by the
  spec's rule; other kinds get none, since there a 50 counts as an answer),
  ``prose_refusal_rate`` are a sentence with no number; with ``refusal_clustering`` = rho > 0
  both rates vary by item x condition, scaled by pi_i / pi with pi_i ~ Beta of mean
  pi = refusal_rate + prose_refusal_rate and intra-item correlation rho (a few items are
  refused again and again, most never); the rest come in varied styles
  ("65", "About 65%.", '{"probability": 65}', "65/100", ...). Accidental 50s are nudged to
  49 or 51 so that only planted refusals are 50.

Every elicitation mode is simulated: ``json`` answers ``{"probability": N}`` (prose refusals
stay prose, as from a server that does not enforce the schema); ``logprobs``
(``SimulatedModel.logprobs``) returns whole-number tokens whose distribution is a discretised
normal around the same mean answer with SD ``noise_sd`` (``axiom_noise_sd`` for the kinds
that use it), so its expected value carries the planted bias without sampling noise; yes/no
items get P(yes) = the mean answer / 100 on "Yes"/"No"; planted 50s put nearly all mass on
"50", prose refusals on a word.

Override any parameter in the spec: ``sim:optimist?delta_plus=4&noise_sd=2``.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, fields, replace
from typing import Any
from urllib.parse import parse_qsl

import numpy as np

from ..answers.distribution import Position
from ..kinds import base, inverted_pair, kind_of
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
    item_tilt_sd: float = 0.0
    refusal_clustering: float = 0.0

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
    "item_tilt_sd": (0, 100), "refusal_clustering": (0, 1),
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
    "skewed": SimProfile(
        delta_plus=6, delta_minus=-2, item_tilt_sd=6, refusal_clustering=0.3, binary_sharpness=2.0,
        conjunction_violation_rate=0.05, disjunction_violation_rate=0.05, conditional_violation_rate=0.05,
        dose_response_violation_rate=0.30,
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
        self._memo: dict[Any, tuple[float, float, float]] = {}  # prompt meta -> _prompt_values

    def __getstate__(self) -> dict[str, Any]:
        # Sent to a pool process (elicit/ahead.py) without its memo: a cache, rebuilt there.
        return {**self.__dict__, "_memo": {}}

    # -- what the item kinds' answer hooks read (kinds/base.py: Simulator) -------------------

    def parameter(self, name: str, default: float = 0.0) -> float:
        """A profile parameter by name; ``default`` for one the profile does not have."""
        return float(getattr(self.profile, name, default))

    def rng(self, *parts: object) -> np.random.Generator:
        return _rng(self.seed, *parts)

    def latent_pair_probability(self, meta: Any) -> float:
        """q: the coherent P(positive) for an inverted pair (before bias and noise)."""
        return inverted_pair.KIND.latent_probability(meta, self)

    def expected_answer(self, meta: Any) -> float:
        """The mean answer the simulator aims at for one prompt (no noise, no refusals): the
        item's kind decides (``Kind.simulated_answer``)."""
        return kind_of(str(meta.get("kind"))).simulated_answer(meta, self)

    def item_tilt(self, meta: Any) -> float:
        """Per-item extra optimism, item_tilt_sd * (Exponential(1) - 1) (0 by default)."""
        if not self.profile.item_tilt_sd:
            return 0.0
        draw = float(_rng(self.seed, "tilt", meta.get("suite"), meta.get("item")).exponential())
        return self.profile.item_tilt_sd * (draw - 1.0)

    def _refusal_rates(self, meta: Any) -> tuple[float, float]:
        """(planted-50 rate, prose rate) for this item x condition (clustered when asked)."""
        profile = self.profile
        rho, total = profile.refusal_clustering, profile.refusal_rate + profile.prose_refusal_rate
        if not rho or not 0 < total < 1:
            return profile.refusal_rate, profile.prose_refusal_rate
        scale = (1 - rho) / rho
        item = _rng(self.seed, "refusal", meta.get("suite"), meta.get("item"), meta.get("condition"))
        share = float(item.beta(total * scale, (1 - total) * scale)) / total
        return profile.refusal_rate * share, profile.prose_refusal_rate * share


    def _prompt_values(self, meta: Any, kind: Any) -> tuple[float, float, float]:
        """(planted-50 rate, prose rate, mean answer) of one prompt: the same for each of its
        samples (they depend on the prompt's meta alone), so drawn once per prompt."""
        try:
            key: Any = tuple(meta.items())
            hash(key)
        except TypeError:  # a value that cannot be a key: computed afresh
            key = None
        values = self._memo.get(key) if key is not None else None
        if values is None:
            values = (*self._refusal_rates(meta), kind.simulated_answer(meta, self))
            if key is not None:
                if len(self._memo) >= 100_000:
                    self._memo.clear()
                self._memo[key] = values
        return values

    # -- the Model protocol ----------------------------------------------------------------

    def complete(self, prompt: Prompt) -> str:
        meta = prompt.meta
        # The profile is part of the key: two simulated models answer with independent noise.
        rng = _rng(self.seed, "sample", self.name, meta.get("suite"), meta.get("item"),
                   meta.get("condition"), meta.get("role"), prompt.sample)
        draw = rng.random()
        kind = kind_of(str(meta.get("kind")))
        fifty, prose, mean = self._prompt_values(meta, kind)
        # Planted 50s only where the spec reads them as refusals (inverted pairs); elsewhere a
        # 50 is an answer and would move the planted axiom and calibration figures.
        if draw < fifty and kind.fifty_is_refusal:
            return "50"
        if draw < fifty + prose:
            return _PROSE_REFUSAL
        value = mean + rng.normal(0.0, self.parameter(kind.sim_noise))
        answer = int(min(99, max(1, round(value))))
        if answer == 50:
            answer = 49 if rng.random() < 0.5 else 51
        if prompt.mode == "json":
            return f'{{"probability": {answer}}}'
        return _STYLES[int(rng.integers(len(_STYLES)))].format(v=answer)

    def logprobs(self, prompt: Prompt) -> list[Position]:
        """Logprobs mode: the answer position's top 20 tokens (see the module doc)."""
        meta = prompt.meta
        rng = _rng(self.seed, "logprobs", self.name, meta.get("suite"), meta.get("item"),
                   meta.get("condition"), meta.get("role"))
        kind = kind_of(str(meta.get("kind")))
        fifty, prose = self._refusal_rates(meta)
        draw = rng.random()
        mean = kind.simulated_answer(meta, self)
        top: tuple[tuple[str, float], ...]
        if base.BINARY in kind.families and not (draw < fifty + prose):
            p = min(0.995, max(0.005, mean / 100.0))
            top = (("Yes", math.log(0.97 * p)), ("No", math.log(0.97 * (1 - p))), ("I", math.log(0.03)))
        elif draw < fifty and kind.fifty_is_refusal:
            top = (("50", math.log(0.97)), ("I", math.log(0.03)))
        elif draw < fifty + prose:
            top = (("I", math.log(0.9)), ("50", math.log(0.05)), ("Sorry", math.log(0.05)))
        else:
            sd = max(0.5, self.parameter(kind.sim_noise))
            values = np.arange(1, 100)
            weights = np.exp(-0.5 * ((values - mean) / sd) ** 2)
            weights = 0.97 * weights / weights.sum()
            best = np.argsort(-weights)[:19]
            top = (*((str(int(values[i])), math.log(max(float(weights[i]), 1e-300))) for i in best),
                   ("I", math.log(0.03)))
        token, logprob = max(top, key=lambda t: t[1])
        return [Position(token, logprob, tuple(top)), Position("<|end|>", 0.0, (("<|end|>", 0.0),))]
