"""What the fake API saw of one request, and its stand-in tokenizer: shared by the real-time
fake (``testing.py``) and its batch APIs (``testing_batches.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class FakeRequest:
    api: str  # "openai" (chat), "completions" or "anthropic"
    model: str
    system: str
    user: str
    body: dict[str, Any]
    authorization: str  # the credential header as sent, to check keys are sent, not stored

    @property
    def n(self) -> int:
        return int(self.body.get("n", 1) or 1)

    @property
    def structured(self) -> bool:
        """Asked for JSON fitting a schema (response_format, json_schema or a forced tool)."""
        fmt = self.body.get("response_format")
        return bool((isinstance(fmt, dict) and fmt.get("type") in ("json_schema", "json_object"))
                    or self.body.get("json_schema") or self.body.get("tool_choice"))

    @property
    def top_logprobs(self) -> int:
        """Alternatives asked per token (0: no logprobs asked)."""
        if self.api == "completions":
            value = self.body.get("logprobs")
            return int(value) if isinstance(value, int) and not isinstance(value, bool) else 0
        return int(self.body.get("top_logprobs") or 0) if self.body.get("logprobs") else 0


def tokens(text: str) -> int:
    """A stand-in tokenizer: about four characters a token."""
    return max(1, len(text) // 4)
