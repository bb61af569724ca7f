"""What the fake API saw of one request, and its stand-in tokenizer: shared by the real-time
fake (``testing.py``) and its batch APIs (``testing_batches.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class FakeRequest:
    api: str  # "openai" or "anthropic"
    model: str
    system: str
    user: str
    body: dict[str, Any]
    authorization: str  # the credential header as sent, to check keys are sent, not stored

    @property
    def n(self) -> int:
        return int(self.body.get("n", 1) or 1)


def tokens(text: str) -> int:
    """A stand-in tokenizer: about four characters a token."""
    return max(1, len(text) // 4)
