"""In-process part of the overhead benchmark: each framework with its own fake model.

Every framework runs the same script: ``turns`` model calls that each ask for ``add(a=i, b=1)``,
then one call that answers with text. The tool is an ``async def`` in every framework, so no
framework pays for a worker thread the others do not.

Measured in the process that imports only that framework (the orchestrator starts one process
per framework, which keeps peak RSS clean):

* CPU per model call: ``time.process_time_ns`` around a whole run divided by ``turns + 1``,
  median over the repeats after warm-up;
* flatness: the tool records the CPU clock each time it runs; the cost of turn k is the gap
  between tool calls k-1 and k. ``first`` is the median of turns 2-4, ``last`` of the last three.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

RunFactory = Callable[[int], Callable[[], Awaitable[Any]]]
"""Given a turn count, build (untimed) a zero-argument coroutine function that does one run."""

TOOL_CLOCK: list[int] = []
RECORD_CLOCK = [False]  # read the CPU clock in the tool only during the flatness runs


async def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    if RECORD_CLOCK[0]:
        TOOL_CLOCK.append(time.process_time_ns())
    return a + b


# --- bare-loop floor -------------------------------------------------------------------


def floor_factory(turns: int) -> Callable[[], Awaitable[Any]]:
    """The least a loop can do: validate the JSON arguments, call, append a result."""
    import json

    from pydantic import TypeAdapter
    from typing_extensions import TypedDict

    class AddArguments(TypedDict):
        a: int
        b: int

    validator = TypeAdapter(AddArguments)
    script = [json.dumps({"a": i, "b": 1}) for i in range(turns)]

    async def one_run() -> str:
        history: list[dict[str, object]] = [{"role": "user", "content": "add things"}]
        for call_number, raw_arguments in enumerate(script):
            arguments = validator.validate_json(raw_arguments)
            history.append({"role": "assistant", "tool_call": ("add", raw_arguments)})
            result = await add(**arguments)
            history.append({"role": "tool", "id": call_number, "content": str(result)})
        return "done"

    return one_run


# --- agentsdk ------------------------------------------------------------------------------


def agentsdk_factory(turns: int) -> Callable[[], Awaitable[Any]]:
    """agentsdk's own ScriptedModel."""
    from agentsdk.testing import ScriptedModel

    from agentsdk import Agent, ToolCallPart, tool

    add_tool = tool(add)

    async def one_run() -> str:
        script: list[Any] = [
            ToolCallPart(name="add", arguments={"a": i, "b": 1}) for i in range(turns)
        ]
        model = ScriptedModel([*script, "done"])
        agent = Agent(model=model, instructions="Add.", tools=[add_tool], max_turns=turns + 5)
        result = await agent.run("add things")
        return str(result.output)

    return one_run


# --- openai-agents -------------------------------------------------------------------------


def _openai_agents_outputs(turns: int) -> list[Any]:
    from agents.testing import assistant_message, function_call

    calls = [[function_call("add", {"a": i, "b": 1}, call_id=f"call_{i}")] for i in range(turns)]
    return [*calls, [assistant_message("done")]]


def openai_agents_factory(turns: int) -> Callable[[], Awaitable[Any]]:
    """openai-agents with the smallest ``Model`` subclass: canned ``ModelResponse`` objects."""
    from agents import Agent, Runner, function_tool, set_tracing_disabled
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage

    set_tracing_disabled(True)
    outputs = _openai_agents_outputs(turns)

    class CannedModel(Model):  # type: ignore[misc,unused-ignore]
        def __init__(self) -> None:
            self.position = 0

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            output = outputs[self.position]
            self.position += 1
            return ModelResponse(output=output, usage=Usage(requests=1), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    tools = [function_tool(add)]

    async def one_run() -> str:
        agent = Agent(name="bench", instructions="Add.", tools=tools, model=CannedModel())
        result = await Runner.run(agent, "add things", max_turns=turns + 5)
        return str(result.final_output)

    return one_run


def openai_agents_scripted_factory(turns: int) -> Callable[[], Awaitable[Any]]:
    """openai-agents with its shipped ``agents.testing.ScriptedModel``."""
    from agents import Agent, Runner, function_tool, set_tracing_disabled
    from agents.testing import ScriptedModel

    set_tracing_disabled(True)
    tools = [function_tool(add)]

    async def one_run() -> str:
        model = ScriptedModel(_openai_agents_outputs(turns))
        agent = Agent(name="bench", instructions="Add.", tools=tools, model=model)
        result = await Runner.run(agent, "add things", max_turns=turns + 5)
        return str(result.final_output)

    return one_run


# --- pydantic-ai ---------------------------------------------------------------------------


def pydantic_ai_factory(turns: int) -> Callable[[], Awaitable[Any]]:
    """pydantic-ai's FunctionModel answering from a precomputed script."""
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    script = [
        ModelResponse(parts=[ToolCallPart("add", {"a": i, "b": 1}, tool_call_id=f"call_{i}")])
        for i in range(turns)
    ] + [ModelResponse(parts=[TextPart("done")])]
    tools = [Tool(add, takes_ctx=False)]

    async def one_run() -> str:
        position = 0

        def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
            nonlocal position
            position += 1
            return script[position - 1]

        agent = Agent(FunctionModel(respond), instructions="Add.", tools=tools)
        result = await agent.run("add things")
        return str(result.output)

    return one_run


FACTORIES: dict[str, RunFactory] = {
    "floor": floor_factory,
    "agentsdk": agentsdk_factory,
    "openai-agents": openai_agents_factory,
    "openai-agents-scripted": openai_agents_scripted_factory,
    "pydantic-ai": pydantic_ai_factory,
}


def _turn_gaps(clock: list[int]) -> list[float]:
    return [(later - earlier) / 1000 for earlier, later in itertools.pairwise(clock)]


async def _measure(
    name: str, turns: int, flat_turns: int, repeats: int, warmup: int
) -> dict[str, Any]:
    factory = FACTORIES[name]
    one_run = factory(turns)
    for _ in range(warmup):
        await one_run()
    per_call_us: list[float] = []
    for _ in range(repeats):
        started = time.process_time_ns()
        await one_run()
        per_call_us.append((time.process_time_ns() - started) / 1000 / (turns + 1))
    long_run = factory(flat_turns)
    await long_run()
    firsts: list[float] = []
    lasts: list[float] = []
    RECORD_CLOCK[0] = True
    for _ in range(max(3, repeats // 2)):
        TOOL_CLOCK.clear()
        await long_run()
        gaps = _turn_gaps(TOOL_CLOCK)
        firsts.append(statistics.median(gaps[:3]))
        lasts.append(statistics.median(gaps[-3:]))
    RECORD_CLOCK[0] = False
    first, last = statistics.median(firsts), statistics.median(lasts)
    return {
        "cpu_us_per_turn": round(statistics.median(per_call_us), 1),
        "cpu_us_per_turn_min": round(min(per_call_us), 1),
        "turns": turns,
        "repeats": repeats,
        "flat_turns": flat_turns,
        "turn_first_us": round(first, 1),
        "turn_last_us": round(last, 1),
        "last_over_first": round(last / first, 2) if first else None,
    }


def measure(name: str, turns: int, flat_turns: int, repeats: int, warmup: int) -> dict[str, Any]:
    """Run one framework's in-process measurement in this process and return its numbers."""
    gc.collect()
    return asyncio.run(_measure(name, turns, flat_turns, repeats, warmup))
