"""Bounded exponential backoff with jitter that honours ``Retry-After``."""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio

__all__ = ["RetryPolicy", "parse_retry_after"]


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


@dataclass
class RetryPolicy:
    """How often and how long to wait before retrying a transient failure.

    ``sleep`` and ``rng`` are injectable so tests run on a fake clock.
    """

    max_attempts: int = 4
    """Total attempts, the first one included."""
    base_delay: float = 0.5
    max_delay: float = 20.0
    """Upper bound of one computed backoff wait."""
    max_retry_after: float = 60.0
    """A server asking for a longer wait than this is not waited for: the error is raised."""
    sleep: Callable[[float], Awaitable[None]] = anyio.sleep
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int, retry_after: float | None) -> float | None:
        """Seconds to wait before attempt ``attempt + 1`` (1-based); None means give up."""
        if attempt >= self.max_attempts:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        # "Equal jitter": at least half the backoff, so retries never bunch up at zero.
        return float(ceiling / 2 + self.rng.uniform(0, ceiling / 2))
