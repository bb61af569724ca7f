"""The one small protocol every model under test speaks, and the adapter for user objects.

A model answers one ``Prompt`` (one sample of one question) with text. The ``optbench_model``
fixture may return anything that fits: an object with ``complete(prompt)``, or a plain
function ``f(prompt)``; either may be ``async`` and may return text or a number on 0-100.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Protocol, Self, runtime_checkable


class Prompt(str):
    """One request. It *is* the user text (a ``str``), so ``lambda prompt: my_llm(prompt)``
    works unchanged; it also carries the system prompt and what the item is.

    ``meta`` holds suite, item, condition, kind, role (``positive``/``negative``/``a``/...),
    domain, language and, where the item has them, ``expected``, ``outcome``, ``direction``.
    """

    system: str
    temperature: float
    sample: int
    meta: Mapping[str, Any]
    # How the answer is asked for: "text", "json" (reply {"probability": N}) or "logprobs"
    # (a model with a ``logprobs(prompt)`` method returns the answer tokens' distribution).
    mode: str

    def __new__(
        cls, system: str, user: str, temperature: float, sample: int = 0,
        meta: Mapping[str, Any] | None = None, mode: str = "text",
    ) -> Self:
        self = super().__new__(cls, user)
        self.system, self.temperature, self.sample = system, temperature, sample
        self.meta = MappingProxyType(dict(meta or {}))
        self.mode = mode
        return self

    @property
    def user(self) -> str:
        return str.__str__(self)

    @property
    def messages(self) -> list[dict[str, str]]:
        """Chat messages in the OpenAI/Anthropic shape."""
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]

    def __repr__(self) -> str:
        return f"Prompt(user={self.user!r}, role={self.meta.get('role')!r}, sample={self.sample})"


@runtime_checkable
class Model(Protocol):
    """What the plugin calls. ``name`` labels the run in summaries and reports."""

    name: str

    def complete(self, prompt: Prompt) -> str: ...


class ModelError(Exception):
    """A model call failed in a way that should fail the item, with a readable message."""


# Methods tried, in order, on an object returned by the fixture (before calling it).
ANSWER_METHODS = ("complete", "answer", "generate", "predict")


class UserModel:
    """Adapts a user's callable or ``complete``-object to the ``Model`` protocol."""

    def __init__(self, target: Any) -> None:
        method = next((getattr(target, m) for m in ANSWER_METHODS
                       if callable(getattr(target, m, None))), None)
        if method is not None:
            self._call = method
        elif callable(target):
            self._call = target
        else:
            raise TypeError(
                "the optbench_model fixture must return a callable taking a Prompt, or an object "
                f"with a complete(prompt) method; got {type(target).__name__}"
            )
        self.name = str(getattr(target, "name", None) or getattr(target, "__qualname__", None)
                        or type(target).__name__)
        # Logprobs mode: a model that can give the answer tokens' distribution (a list of
        # ``elicit.distribution.Position``) offers ``logprobs(prompt)``.
        if callable(getattr(target, "logprobs", None)):
            self.logprobs = target.logprobs

    def complete(self, prompt: Prompt) -> str:
        result = self._call(prompt)
        if inspect.isawaitable(result):
            result = asyncio.run(_await(result))
        if isinstance(result, Mapping):  # e.g. {"probability": 65}: parsed like JSON text
            result = json.dumps(dict(result))
        if isinstance(result, bool) or not isinstance(result, (str, int, float)):
            raise ModelError(f"model {self.name} returned {type(result).__name__}, expected text or a number")
        return str(result)


async def _await(awaitable: Any) -> Any:
    return await awaitable


def as_model(target: Any) -> Model:
    """Wrap whatever the fixture returned, so sync/async and text/number all work alike."""
    return target if isinstance(target, UserModel) else UserModel(target)
