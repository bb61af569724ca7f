"""Model providers, chosen by the ``--model provider:name`` spec.

Built in: ``sim`` (simulated models with planted biases). A package adds a provider with an
entry point in the group ``pytest_optbench.providers`` whose object is a factory
``factory(name: str, *, seed: int, base_url: str | None) -> Model``.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from .base import Model
from .sim import SimSpecError, SimulatedModel

ENTRY_POINT_GROUP = "pytest_optbench.providers"


class ProviderError(ValueError):
    """The ``--model`` spec cannot be turned into a model; one readable sentence."""


def _sim(name: str, *, seed: int, base_url: str | None) -> Model:
    try:
        return SimulatedModel(name, seed=seed)
    except SimSpecError as exc:
        raise ProviderError(str(exc)) from None


BUILTIN: dict[str, Callable[..., Model]] = {"sim": _sim}


def available_providers() -> dict[str, Callable[..., Any]]:
    providers: dict[str, Callable[..., Any]] = dict(BUILTIN)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        providers.setdefault(ep.name, ep.load)  # loaded only when chosen
    return providers


def build_model(spec: str, *, seed: int = 0, base_url: str | None = None) -> Model:
    provider, sep, name = spec.partition(":")
    if not sep or not provider or not name:
        raise ProviderError(f"--model {spec!r} must look like provider:model, e.g. sim:optimist")
    providers = available_providers()
    if provider not in providers:
        raise ProviderError(
            f"--model {spec!r}: unknown provider {provider!r} (available: {', '.join(sorted(providers))})"
        )
    factory = providers[provider]
    if provider not in BUILTIN:
        factory = factory()  # the entry point's load()
    return factory(name, seed=seed, base_url=base_url)
