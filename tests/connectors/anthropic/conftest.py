"""Fixtures: an AnthropicModel wired to a scripted fake server and a fake clock."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from agentsdk_anthropic import AnthropicModel, RetryPolicy
from anthropic_recordings import FakeAnthropic, FakeClock, Reply

SECRET_KEY = "sk-ant-api03-test-SECRET-do-not-leak-1234567890"

MakeModel = Callable[..., tuple[AnthropicModel, FakeAnthropic]]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def make_model(clock: FakeClock, anyio_backend: str) -> AsyncIterator[MakeModel]:
    """``make_model(*replies, **model_kwargs)`` → (model, fake server)."""
    made: list[AnthropicModel] = []

    def make(
        *replies: Reply | Callable[..., Reply], **kwargs: Any
    ) -> tuple[AnthropicModel, FakeAnthropic]:
        fake = FakeAnthropic(list(replies))
        kwargs.setdefault("retry", RetryPolicy(max_retries=3, initial_delay=0.5, max_delay=20))
        model = AnthropicModel(
            "claude-sonnet-4-5",
            api_key=SECRET_KEY,
            transport=fake.transport,
            sleep=clock.sleep,
            clock=clock.time,
            rng=random.Random(7),
            **kwargs,
        )
        made.append(model)
        return model, fake

    yield make
    for model in made:
        await model.aclose()
