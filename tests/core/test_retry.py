"""agentsdk.retry: backoff with equal jitter, Retry-After, and giving up."""

from __future__ import annotations

import random
from email.utils import formatdate

import pytest
from agentsdk.retry import RETRYABLE_STATUS, RetryPolicy, parse_retry_after

import agentsdk

NOW = 1_800_000_000.0


def test_backoff_doubles_up_to_max_delay_with_equal_jitter() -> None:
    policy = RetryPolicy(max_attempts=10, base_delay=0.5, max_delay=4.0, rng=random.Random(7))
    ceilings = [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    for attempt, ceiling in enumerate(ceilings, start=1):
        for _ in range(50):
            wait = policy.delay(attempt, None)
            assert wait is not None and ceiling / 2 <= wait <= ceiling


def test_jitter_is_random_and_follows_the_seeded_rng() -> None:
    def waits(seed: int) -> list[float | None]:
        policy = RetryPolicy(max_attempts=100, rng=random.Random(seed))
        return [policy.delay(3, None) for _ in range(20)]

    assert waits(1) == waits(1)
    assert len(set(waits(1))) == 20 and waits(1) != waits(2)


def test_gives_up_after_max_attempts() -> None:
    policy = RetryPolicy(max_attempts=3)
    assert policy.delay(1, None) is not None and policy.delay(2, None) is not None
    assert policy.delay(3, None) is None and policy.delay(3, 1.0) is None
    assert RetryPolicy(max_attempts=1).delay(1, None) is None


def test_retry_after_is_honoured_up_to_max_retry_after() -> None:
    policy = RetryPolicy(max_retry_after=60.0, max_delay=1.0)
    assert policy.delay(1, 7.0) == 7.0  # exact, no jitter, and above max_delay
    assert policy.delay(1, 60.0) == 60.0
    assert policy.delay(1, 0.0) == 0.0
    assert policy.delay(1, 3600.0) is None  # too long: retrying ends at once


def test_defaults_and_shared_names() -> None:
    policy = RetryPolicy()
    assert (policy.max_attempts, policy.base_delay, policy.max_delay) == (4, 0.5, 20.0)
    assert policy.max_retry_after == 60.0
    assert agentsdk.RetryPolicy is RetryPolicy and "RetryPolicy" in agentsdk.__all__
    assert {429, 500, 503, 529} <= RETRYABLE_STATUS and not {400, 401, 404} & RETRYABLE_STATUS


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("7", 7.0), (" 2.5 ", 2.5), ("0", 0.0), ("-3", 0.0)],
)
def test_parse_retry_after_delta_seconds(header: str, seconds: float) -> None:
    assert parse_retry_after(header) == seconds


def test_parse_retry_after_http_date_against_an_injected_now() -> None:
    assert parse_retry_after(formatdate(NOW + 30, usegmt=True), now=NOW) == 30.0
    assert parse_retry_after(formatdate(NOW - 30, usegmt=True), now=NOW) == 0.0
    assert parse_retry_after("Fri, 15 Jan 2027 08:00:05 GMT", now=NOW) == 5.0


@pytest.mark.parametrize("header", [None, "", "   ", "soon", "12 parsecs", "nan", "inf"])
def test_parse_retry_after_missing_or_garbage_is_none(header: str | None) -> None:
    assert parse_retry_after(header, now=NOW) is None
