"""The one small protocol every model under test speaks, and the adapter for user objects.

A model answers one ``Prompt`` (one sample of one question) with text. The ``optbench_model``
fixture may return anything that fits: an object with ``complete(prompt)``, or a plain
function ``f(prompt)``; either may be ``async`` and may return text or a number on 0-100.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Protocol, Self, TypeVar, runtime_checkable

from ..text.display import one_line

T = TypeVar("T")
MAX_MODEL_TEXT = 200  # characters of a declared name or version kept


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
        self.name = model_name(target)
        # What the model declares it is (a version, or a fingerprint of its own prompt): a
        # baseline in which it differs is named, as a changed prompt is.
        self.version = model_version(target)
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


def model_name(target: Any) -> str:
    """The name a run is labelled with: the object's ``name``, else its function or class name
    without the scope it was defined in (``acme_pipeline``, not
    ``optbench_model.<locals>.acme_pipeline``)."""
    declared = getattr(target, "name", None)
    if isinstance(declared, str) and declared.strip():
        return one_line(declared.strip(), MAX_MODEL_TEXT)
    qualname = getattr(target, "__qualname__", None)
    if isinstance(qualname, str) and qualname:
        return one_line(qualname.rpartition("<locals>.")[2], MAX_MODEL_TEXT)
    return type(target).__name__


def model_version(target: Any) -> str:
    """The ``version`` a model declares (text or a number); "" when it declares none."""
    declared = getattr(target, "version", None)
    if isinstance(declared, bool) or not isinstance(declared, (str, int, float)):
        return ""
    return one_line(str(declared).strip(), MAX_MODEL_TEXT)


def fingerprint(*parts: str) -> str:
    """A short, stable hash of text (a pipeline's own system prompt, its template, its
    settings): a model's ``version`` that changes whenever any part does."""
    digest = hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
    return f"sha256:{digest[:16]}"


def declare_model(name: str | None = None, version: str | None = None) -> Callable[[T], T]:
    """Decorate a conftest model (a function or an object) with the name that labels the run
    and the version (or ``fingerprint(...)``) a baseline comparison checks::

        @declare_model(name="acme-pipeline", version=fingerprint(SYSTEM_PROMPT))
        def acme_pipeline(prompt): ...

    The same as setting the attributes ``name`` and ``version`` yourself."""
    def mark(target: T) -> T:
        if name is not None:
            target.name = name  # type: ignore[attr-defined]
        if version is not None:
            target.version = version  # type: ignore[attr-defined]
        return target
    return mark


def as_model(target: Any) -> Model:
    """Wrap whatever the fixture returned, so sync/async and text/number all work alike."""
    return target if isinstance(target, UserModel) else UserModel(target)
