"""Optimistic-concurrency retries: jittered exponential backoff.

Defaults are the reference's ``spark.indextables.transaction.retry.*``: 10
attempts, 100 ms base delay doubling up to 5 s, each delay scaled by a random
factor in [0.75, 1.25] so racing writers spread out.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["RetryPolicy"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """How often and how patiently a commit retries a lost race."""

    max_attempts: int = 10
    base_delay_ms: float = 100.0
    max_delay_ms: float = 5000.0
    jitter_low: float = 0.75
    jitter_high: float = 1.25

    def delay_seconds(self, attempt: int, rng: random.Random | None = None) -> float:
        """The pause after failed attempt number ``attempt`` (0-based)."""
        base = min(self.base_delay_ms * (2.0**attempt), self.max_delay_ms)
        factor = (rng or random).uniform(self.jitter_low, self.jitter_high)
        return base * factor / 1000.0
