"""The public extension API of pytest-optbench: the one module plugins and users' tests import.

What ``__all__`` lists here keeps its name and meaning across releases; every other module of
the package is internal and may move (docs/extending.md shows each piece end to end):

* **Item kinds**: subclass ``KindBase`` (or implement the ``Kind`` protocol) and register it
  with ``register_kind`` at import, in a module your ``conftest.py`` imports; the ``optbench``
  command loads the same module with ``optbench --plugin MODULE ...``, and an installed
  package declares it in the entry-point group ``pytest_optbench.kinds`` instead.
* **Providers**: subclass ``ApiProvider`` (the engine then gives it concurrency, retries and
  the response store) and return it from the ``optbench_model`` fixture, or publish a factory
  ``factory(name, options: ProviderOptions)`` in the entry-point group
  ``pytest_optbench.providers`` to make ``--model NAME:model`` work.
* **The model under test in a conftest**: ``Prompt`` is what a model is called with; raise
  ``ModelError`` for a failed answer; ``declare_model(name=..., version=fingerprint(...))``
  names it and declares the version a baseline comparison checks.
* **Tests of your own**: ``FakeAPI`` is a local fake of the OpenAI and Anthropic HTTP APIs
  (the real wire protocol, so the official SDKs talk to it unchanged).
"""

from __future__ import annotations

from .kinds import ENTRY_POINT_GROUP as KIND_ENTRY_POINTS
from .kinds import KINDS, kind_of, unregister
from .kinds import register as register_kind
from .kinds.base import (
    BINARY,
    DATA,
    ERROR,
    INFO,
    PROBABILITY_PROMPT,
    SKEW,
    TEXT,
    VIOLATION,
    WARNING,
    WORD,
    FieldError,
    FieldSpec,
    ItemLike,
    Kind,
    KindBase,
    Lint,
    Question,
    Simulator,
    Violation,
    Violations,
    item_rng,
    prompt_means,
)
from .providers import ENTRY_POINT_GROUP as PROVIDER_ENTRY_POINTS
from .providers.base import Model, ModelError, Prompt, declare_model, fingerprint
from .providers.remote import ApiProvider, ApiRequest, ApiResult, CallFailed, ProviderOptions, status_failure
from .records.item import Answer, ItemRecord, PromptRecord
from .testing import FakeAPI, FakeRequest

unregister_kind = unregister

__all__ = [
    "BINARY",
    "DATA",
    "ERROR",
    "INFO",
    "KINDS",
    "KIND_ENTRY_POINTS",
    "PROBABILITY_PROMPT",
    "PROVIDER_ENTRY_POINTS",
    "SKEW",
    "TEXT",
    "VIOLATION",
    "WARNING",
    "WORD",
    "Answer",
    "ApiProvider",
    "ApiRequest",
    "ApiResult",
    "CallFailed",
    "FakeAPI",
    "FakeRequest",
    "FieldError",
    "FieldSpec",
    "ItemLike",
    "ItemRecord",
    "Kind",
    "KindBase",
    "Lint",
    "Model",
    "ModelError",
    "Prompt",
    "PromptRecord",
    "ProviderOptions",
    "Question",
    "Simulator",
    "Violation",
    "Violations",
    "declare_model",
    "fingerprint",
    "item_rng",
    "kind_of",
    "prompt_means",
    "register_kind",
    "status_failure",
    "unregister_kind",
]
