"""pytest-optbench: LLM probability-judgment bias audits as pytest tests and CI gates."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .providers.base import Model, Prompt, declare_model, fingerprint

__version__ = "0.1.0"
__all__ = ["Model", "Prompt", "__version__", "declare_model", "fingerprint"]


def __getattr__(name: str) -> Any:
    # Imported on first use: pytest loads this package in every session, suites or not.
    if name in ("Model", "Prompt", "declare_model", "fingerprint"):
        from .providers import base

        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
