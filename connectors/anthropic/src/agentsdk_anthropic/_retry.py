"""Bounded exponential backoff with jitter that honours the server's ``retry-after``."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from email.utils import parsedate_to_datetime

from pydantic import BaseModel, ConfigDict

Sleep = Callable[[float], Awaitable[None]]
"""An async sleep (``anyio.sleep`` by default; tests inject a fake that records delays)."""

Clock = Callable[[], float]
"""Wall-clock seconds since the epoch (``time.time`` by default), used for HTTP-date headers."""

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
"""Statuses worth another attempt: timeouts, conflicts, rate limits, server errors, overload."""


class RetryPolicy(BaseModel):
    """How often and how long to wait before giving up with a retryable ModelError.

    Delay for attempt ``n`` (0-based) is ``min(max_delay, initial_delay * 2**n)`` with "equal
    jitter" (half fixed, half random). A ``retry-after`` header replaces it; one asking for more
    than ``max_retry_after`` seconds ends retrying at once so a fallback model can take over.
    """

    model_config = ConfigDict(frozen=True)

    max_retries: int = 3
    initial_delay: float = 0.5
    max_delay: float = 20.0
    max_retry_after: float = 60.0

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """The jittered exponential delay before retry number ``attempt + 1``."""
        ceiling = min(self.max_delay, self.initial_delay * 2.0**attempt)
        return ceiling / 2 + rng.uniform(0, ceiling / 2)


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a ``retry-after`` header (delta-seconds or an HTTP date)."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)
