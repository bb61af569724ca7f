"""What the engine counts as it elicits: for the progress display and the summary (this
process only). Light, so that the progress display needs none of the engine."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class EngineStats:
    """Counters for the progress display and the summary (this process only)."""

    total: int = 0
    done: int = 0
    cached: int = 0
    in_flight: int = 0
    requests: int = 0
    retries: int = 0
    rate_limited: int = 0
    timeouts: int = 0
    failed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    started: float = field(default_factory=time.monotonic)
