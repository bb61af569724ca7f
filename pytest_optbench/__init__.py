"""pytest-optbench: LLM probability-judgment bias audits as pytest tests and CI gates."""

from .providers.base import Model, Prompt

__version__ = "0.1.0"
__all__ = ["Model", "Prompt", "__version__"]
