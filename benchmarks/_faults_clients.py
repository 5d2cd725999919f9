"""How each framework runs the fault benchmark's task against the fault server.

A client factory takes the server's address and the per-read timeout and returns a
``FaultClient`` whose ``run(prompt, stream)`` does one whole run and returns the final text.
Every framework talks to the server through its own client with that client's default
retries; only the read timeout is set the same everywhere (the defaults, 600 s, would let a
stalled server hold a run for ten minutes).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any


async def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First number.
        b: Second number.
    """
    return a + b


@dataclass
class FaultClient:
    """One framework wired to the server: a run function, what to close, what it is."""

    run: Callable[[str, bool], Awaitable[str]]
    close: Callable[[], Awaitable[None]]
    label: str
    retries: str
    own_timeout: bool
    """True when the framework enforces the run timeout itself (else asyncio.wait_for does)."""


INSTRUCTIONS = "Add the numbers with the add tool, then say the sum."


def agentsdk_openai(base: str, read_timeout: float, run_timeout: float) -> FaultClient:
    """agentsdk over agentsdk-openai (aiohttp), its default RetryPolicy."""
    from agentsdk_openai import OpenAIChatModel

    from agentsdk import Agent, ModelSettings, tool

    model = OpenAIChatModel("faulty", base_url=f"{base}/v1", api_key="bench")
    agent = Agent(
        model,
        INSTRUCTIONS,
        [tool(add)],
        timeout=run_timeout,
        settings=ModelSettings(timeout=read_timeout),
        max_turns=8,
    )
    return FaultClient(
        _agentsdk_run(agent), model.aclose, "agentsdk-openai (aiohttp)", "4 attempts", True
    )


def agentsdk_anthropic(base: str, read_timeout: float, run_timeout: float) -> FaultClient:
    """agentsdk over agentsdk-anthropic (aiohttp, through agentsdk.http), its default RetryPolicy."""
    from agentsdk_anthropic import AnthropicModel

    from agentsdk import Agent, ModelSettings, tool

    model = AnthropicModel("claude-faulty", base_url=base, api_key="bench")
    agent = Agent(
        model,
        INSTRUCTIONS,
        [tool(add)],
        timeout=run_timeout,
        settings=ModelSettings(timeout=read_timeout),
        max_turns=8,
    )
    return FaultClient(
        _agentsdk_run(agent), model.aclose, "agentsdk-anthropic (aiohttp)", "4 attempts", True
    )


def _agentsdk_run(agent: Any) -> Callable[[str, bool], Awaitable[str]]:
    from agentsdk.events import RunFinished

    async def run(prompt: str, stream: bool) -> str:
        if not stream:
            return str((await agent.run(prompt)).output)
        output = ""
        async for event in agent.stream(prompt):
            if isinstance(event, RunFinished):
                output = str(event.output)
        return output

    return run


def openai_agents(base: str, read_timeout: float, run_timeout: float) -> FaultClient:
    """openai-agents: ``OpenAIChatCompletionsModel`` over one ``AsyncOpenAI`` (2 retries)."""
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        Runner,
        function_tool,
        set_tracing_disabled,
    )
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=f"{base}/v1", api_key="bench", timeout=read_timeout)
    model = OpenAIChatCompletionsModel(model="faulty", openai_client=client)
    agent = Agent(name="bench", instructions=INSTRUCTIONS, tools=[function_tool(add)], model=model)

    async def run(prompt: str, stream: bool) -> str:
        if not stream:
            return str((await Runner.run(agent, prompt, max_turns=8)).final_output)
        result = Runner.run_streamed(agent, prompt, max_turns=8)
        async for _ in result.stream_events():
            pass
        return str(result.final_output)

    return FaultClient(
        run, client.close, "openai-agents (openai SDK)", "openai SDK: 2 retries", False
    )


def pydantic_ai_openai(base: str, read_timeout: float, run_timeout: float) -> FaultClient:
    """pydantic-ai: ``OpenAIChatModel`` over an ``AsyncOpenAI`` (2 retries)."""
    from openai import AsyncOpenAI
    from pydantic_ai import Agent, Tool
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    client = AsyncOpenAI(base_url=f"{base}/v1", api_key="bench", timeout=read_timeout)
    model = OpenAIChatModel("faulty", provider=OpenAIProvider(openai_client=client))
    agent = Agent(model, instructions=INSTRUCTIONS, tools=[Tool(add, takes_ctx=False)])
    return FaultClient(
        _pydantic_run(agent),
        client.close,
        "pydantic-ai (openai SDK)",
        "openai SDK: 2 retries",
        False,
    )


def pydantic_ai_anthropic(base: str, read_timeout: float, run_timeout: float) -> FaultClient:
    """pydantic-ai: ``AnthropicModel`` over an ``AsyncAnthropic`` (2 retries)."""
    from anthropic import AsyncAnthropic
    from pydantic_ai import Agent, Tool
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    client = AsyncAnthropic(base_url=base, api_key="bench", timeout=read_timeout)
    model = AnthropicModel("claude-faulty", provider=AnthropicProvider(anthropic_client=client))
    agent = Agent(model, instructions=INSTRUCTIONS, tools=[Tool(add, takes_ctx=False)])
    return FaultClient(
        _pydantic_run(agent),
        client.close,
        "pydantic-ai (anthropic SDK)",
        "anthropic SDK: 2 retries",
        False,
    )


def _pydantic_run(agent: Any) -> Callable[[str, bool], Awaitable[str]]:
    async def drain(_ctx: Any, events: Any) -> None:
        async for _ in events:
            pass

    async def run(prompt: str, stream: bool) -> str:
        handler = drain if stream else None
        return str((await agent.run(prompt, event_stream_handler=handler)).output)

    return run


CLIENTS: dict[str, tuple[str, Callable[[str, float, float], FaultClient]]] = {
    "agentsdk": ("openai", agentsdk_openai),
    "openai-agents": ("openai", openai_agents),
    "pydantic-ai": ("openai", pydantic_ai_openai),
    "agentsdk-anthropic": ("anthropic", agentsdk_anthropic),
    "pydantic-ai-anthropic": ("anthropic", pydantic_ai_anthropic),
}
"""name -> (the API it speaks, its factory)."""
