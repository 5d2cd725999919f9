"""Fixtures: an AnthropicModel wired to a scripted fake server and a fake clock."""

from __future__ import annotations

import random
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from agentsdk_anthropic import AnthropicModel, RetryPolicy

# pytest runs with --import-mode=importlib, which does not put test folders on sys.path;
# the recordings module has a name unique to this folder, so adding the folder is safe.
sys.path.insert(0, str(Path(__file__).parent))

from anthropic_recordings import (
    SECRET_KEY,
    FakeAnthropic,
    FakeClock,
    MakeModel,
    Reply,
)


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
        kwargs.setdefault(
            "retry",
            RetryPolicy(
                max_attempts=4,
                base_delay=0.5,
                max_delay=20,
                sleep=clock.sleep,
                clock=clock.time,
                rng=random.Random(7),
            ),
        )
        model = AnthropicModel(
            "claude-sonnet-4-5", api_key=SECRET_KEY, transport=fake.transport, **kwargs
        )
        made.append(model)
        return model, fake

    yield make
    for model in made:
        await model.aclose()
