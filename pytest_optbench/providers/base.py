"""The one small protocol every model under test speaks, and the adapter for user objects.

A model answers one ``Prompt`` (one sample of one question) with text. The ``optbench_model``
fixture may return anything that fits: an object with ``complete(prompt)``, or a plain
function ``f(prompt)``; either may be ``async`` and may return text or a number on 0-100.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class Prompt:
    """One request: the system and user text plus what the item is (``meta``).

    ``str(prompt)`` is the user text, so ``lambda prompt: my_llm(str(prompt))`` works.
    ``meta`` holds suite, item, condition, kind, role (``positive``/``negative``/``a``/...),
    domain, language and, where the item has them, ``expected``, ``outcome``, ``direction``.
    """

    system: str
    user: str
    temperature: float
    sample: int = 0
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def messages(self) -> list[dict[str, str]]:
        """Chat messages in the OpenAI/Anthropic shape."""
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]

    def __str__(self) -> str:
        return self.user


@runtime_checkable
class Model(Protocol):
    """What the plugin calls. ``name`` labels the run in summaries and reports."""

    name: str

    def complete(self, prompt: Prompt) -> str: ...


class ModelError(Exception):
    """A model call failed in a way that should fail the item, with a readable message."""


class UserModel:
    """Adapts a user's callable or ``complete``-object to the ``Model`` protocol."""

    def __init__(self, target: Any) -> None:
        if hasattr(target, "complete") and callable(target.complete):
            self._call = target.complete
        elif callable(target):
            self._call = target
        else:
            raise TypeError(
                "the optbench_model fixture must return a callable taking a Prompt, or an object "
                f"with a complete(prompt) method; got {type(target).__name__}"
            )
        self.name = str(getattr(target, "name", None) or getattr(target, "__qualname__", None)
                        or type(target).__name__)
        self._target = target

    def complete(self, prompt: Prompt) -> str:
        result = self._call(prompt)
        if inspect.isawaitable(result):
            result = asyncio.run(_await(result))
        if isinstance(result, bool) or not isinstance(result, (str, int, float)):
            raise ModelError(f"model {self.name} returned {type(result).__name__}, expected text or a number")
        return str(result)


async def _await(awaitable: Any) -> Any:
    return await awaitable


def as_model(target: Any) -> Model:
    """Wrap whatever the fixture returned, so sync/async and text/number all work alike."""
    return target if isinstance(target, UserModel) else UserModel(target)
