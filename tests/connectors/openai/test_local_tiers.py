"""The 1.5B model on the real engine, and ``local:tiered`` running both models at once."""

from __future__ import annotations

import pytest
from agentsdk.events import ModelRequestStarted, RunFinished
from agentsdk_openai import LocalEngine

from agentsdk import Agent, ModelSettings, RunResult, tool

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@tool
def add(a: float, b: float) -> float:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


async def test_tiered_plans_with_the_stronger_model_and_answers_with_the_fast_one(
    qwen_engine: LocalEngine, engine_pids: list[int]
) -> None:
    stronger = LocalEngine.shared("qwen2.5-coder-1.5b")
    await stronger.start()
    assert stronger.pid is not None and qwen_engine.pid is not None
    engine_pids.append(stronger.pid)
    assert stronger.pid != qwen_engine.pid  # one server process per model

    agent = Agent(
        "local:tiered",
        instructions="Use the add tool for arithmetic, then answer in one sentence.",
        tools=[add],
        settings=ModelSettings(temperature=0, max_tokens=96),
        max_turns=4,
    )
    turns: list[tuple[str | None, str]] = []
    result: RunResult | None = None
    async for event in agent.stream("What is 1234.5 + 4321?"):
        if isinstance(event, ModelRequestStarted):
            turns.append((event.tier, event.model))
        elif isinstance(event, RunFinished):
            result = event.result
    await agent.aclose()
    assert result is not None
    assert turns[0] == ("standard", "local:qwen2.5-coder-1.5b")  # the planning turn
    assert turns[1] == ("fast", "local:qwen2.5-coder-0.5b")  # the routine answer
    assert result.tool_calls == ["add"]
    assert str(1234.5 + 4321) in str(result.output).replace(",", "")
    assert set(result.usage_by_model) == {"local:qwen2.5-coder-1.5b", "local:qwen2.5-coder-0.5b"}
