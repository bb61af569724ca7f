"""Model providers, chosen by the ``--model provider:name`` spec.

Built in: ``sim`` (simulated models with planted biases), ``openai`` and ``anthropic``
(official SDKs, async), and ``openai-completions`` (base models through the completions
endpoint, with a prompt scaffold). A package adds a provider with an entry point in the group
``pytest_optbench.providers`` whose object is a factory
``factory(name: str, options: ProviderOptions) -> model``; a model is anything the
``optbench_model`` fixture may return, or an ``ApiProvider`` subclass to get concurrency,
retries and the response store.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from .base import Model
from .remote import ApiProvider, ProviderOptions

if TYPE_CHECKING:
    from .batch_api import BatchClient

ENTRY_POINT_GROUP = "pytest_optbench.providers"


class ProviderError(ValueError):
    """The ``--model`` spec cannot be turned into a model; one readable sentence."""


def _sim(name: str, options: ProviderOptions) -> Model:
    from .sim import SimulatedModel  # numpy: an API model's run needs it only once it scores

    return SimulatedModel(name, seed=options.seed)


def _openai(name: str, options: ProviderOptions) -> ApiProvider:
    from .openai_provider import OpenAIProvider

    return _configured(OpenAIProvider(name, base_url=options.base_url, env=options.env, timeout=options.timeout),
                       options)


def _openai_completions(name: str, options: ProviderOptions) -> ApiProvider:
    from .completions import CompletionsProvider

    return _configured(CompletionsProvider(name, base_url=options.base_url, env=options.env,
                                           timeout=options.timeout), options)


def _anthropic(name: str, options: ProviderOptions) -> ApiProvider:
    from .anthropic_provider import AnthropicProvider

    return _configured(AnthropicProvider(name, base_url=options.base_url, env=options.env,
                                         timeout=options.timeout), options)


def _configured(provider: ApiProvider, options: ProviderOptions) -> ApiProvider:
    provider.elicit_fallback = options.elicit_fallback
    provider.max_reply = options.max_reply
    return provider


BUILTIN: dict[str, Callable[[str, ProviderOptions], Any]] = {
    "sim": _sim, "openai": _openai, "openai-completions": _openai_completions, "anthropic": _anthropic}


def available_providers() -> dict[str, Callable[[], Any]]:
    """Provider name -> loader of its factory (entry points are imported only when chosen)."""
    providers: dict[str, Callable[[], Any]] = {name: functools.partial(lambda f: f, f) for name, f in BUILTIN.items()}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        providers.setdefault(ep.name, ep.load)
    return providers


def build_model(spec: str, options: ProviderOptions | None = None) -> Any:
    options = options or ProviderOptions()
    provider, sep, name = spec.partition(":")
    if not sep or not provider or not name:
        raise ProviderError(f"--model {spec!r} must look like provider:model, e.g. sim:optimist")
    providers = available_providers()
    if provider not in providers:
        raise ProviderError(
            f"--model {spec!r}: unknown provider {provider!r} (available: {', '.join(sorted(providers))})"
        )
    try:
        return providers[provider]()(name, options)
    except ValueError as exc:  # also the simulator's SimSpecError
        raise ProviderError(str(exc)) from None
    except ImportError as exc:
        extra = provider.partition("-")[0]
        hint = f"; install it with: pip install 'pytest-optbench[{extra}]'" if provider in BUILTIN else ""
        raise ProviderError(f"--model {spec!r}: the provider needs a package that is not installed "
                            f"({exc}){hint}.") from None


def batch_client(api: ApiProvider) -> BatchClient | None:
    """The batch client of a provider, or None when it has no batch API."""
    if api.provider == "openai":
        from .batch_openai import OpenAIBatches

        return OpenAIBatches(api)
    if api.provider == "anthropic":
        from .batch_anthropic import AnthropicBatches

        return AnthropicBatches(api)
    factory = getattr(api, "batch_client", None)  # a third-party ApiProvider may bring its own
    return factory() if callable(factory) else None
