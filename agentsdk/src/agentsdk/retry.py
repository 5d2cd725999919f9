"""How model connectors retry a transient failure: bounded exponential backoff
with jitter that honours the server's ``Retry-After``."""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio

__all__ = ["RETRYABLE_STATUS", "RetryPolicy", "parse_retry_after"]

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
"""HTTP statuses worth another attempt: timeouts, conflicts, rate limits, server errors, overload."""


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date).

    None when the header is missing or unreadable. ``now`` (epoch seconds, default
    ``time.time()``) is what an HTTP date is measured from.
    """
    text = (value or "").strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


@dataclass
class RetryPolicy:
    """How often and how long a connector waits before retrying a transient failure.

    ``sleep``, ``clock`` and ``rng`` are injectable so tests run on a fake clock.
    """

    max_attempts: int = 4
    """Total attempts, the first one included."""
    base_delay: float = 0.5
    """The backoff before the second attempt; it doubles with each attempt after."""
    max_delay: float = 20.0
    """Upper bound of one computed backoff wait."""
    max_retry_after: float = 60.0
    """A server asking for a longer wait than this is not waited for: retrying ends."""
    sleep: Callable[[float], Awaitable[None]] = anyio.sleep
    clock: Callable[[], float] = time.time
    """Epoch seconds, the ``now`` an HTTP-date ``Retry-After`` is measured from."""
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int, retry_after: float | None) -> float | None:
        """Seconds to wait after failed attempt ``attempt`` (1-based); None means give up."""
        if attempt >= self.max_attempts:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        # "Equal jitter": at least half the backoff, so retries never bunch up at zero.
        return ceiling / 2 + self.rng.uniform(0, ceiling / 2)
