"""The prefix cache on the real engine: a new server process restores the saved KV state
of the system turn and tools, and a changed tool schema misses it.

Private engines with their own KV folder (tmp_path), so nothing else's cache interferes.
What the server says it reused (``cached_tokens``) is the measurement.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from agentsdk.errors import AgentError
from agentsdk.tools import ToolSpec
from agentsdk_openai import LocalChatModel, LocalEngine

from agentsdk import (
    Message,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def _tool(description: str) -> ToolSpec:
    return ToolSpec(
        name="lookup",
        description=description,
        parameters={
            "type": "object",
            "properties": {"ticker": {"type": "string", "description": "Stock symbol."}},
            "required": ["ticker"],
        },
    )


@asynccontextmanager
async def _engine(kv_dir: Path, engine_pids: list[int]) -> AsyncIterator[LocalEngine]:
    """A private 0.5B engine with its own KV folder, running; its pid recorded."""
    engine = LocalEngine("qwen2.5-coder-0.5b", kv_cache_dir=kv_dir)
    async with engine:
        assert engine.pid is not None
        engine_pids.append(engine.pid)
        yield engine


def _request(system: str, tool: ToolSpec) -> ModelRequest:
    return ModelRequest(
        messages=[Message.system(system), Message.user("Look up MSFT.")],
        tools=[tool],
        settings=ModelSettings(temperature=0, max_tokens=40, tool_choice="required"),
    )


async def test_a_new_engine_process_restores_the_prefix(
    tmp_path: Path, engine_pids: list[int]
) -> None:
    # A nonce makes this prefix new to any cache, so the first run must save it.
    system = f"Session {secrets.token_hex(4)}. You are a careful market analyst. " * 6
    tool = _tool("Look up the latest price of a stock.")

    async with _engine(tmp_path, engine_pids) as first:
        model = LocalChatModel(first)
        cold = await model.request(_request(system, tool))
        await model.aclose()
    (saved,) = model.prefix_events
    assert saved.action == "saved" and saved.tokens >= 64
    assert saved.file is not None and Path(saved.file).parent == tmp_path
    assert Path(saved.file).stat().st_size > 1000 * saved.tokens  # KV of every prefix token
    assert cold.tool_calls and cold.tool_calls[0].name == "lookup"

    second = LocalEngine("qwen2.5-coder-0.5b", kv_cache_dir=tmp_path)
    async with second:
        assert second.pid is not None and second.pid != engine_pids[-1]
        engine_pids.append(second.pid)
        model = LocalChatModel(second)
        warm = await model.request(_request(system, tool))
        (restored,) = model.prefix_events
        # The server reused the restored prefix instead of evaluating it again.
        assert restored.action == "restored" and restored.key == saved.key
        assert warm.usage.cache_read_tokens >= saved.tokens - 1
        assert warm.usage.input_tokens - warm.usage.cache_read_tokens < 40
        assert [(c.name, c.arguments) for c in warm.tool_calls] == [
            (c.name, c.arguments) for c in cold.tool_calls
        ]  # same state, same greedy answer

        # A changed tool schema is a different prefix: a miss, saved under a new key.
        changed = _tool("Look up the latest closing price of a listed stock.")
        other = await model.request(_request(system, changed))
        assert model.prefix_events[-1].action == "saved"
        assert model.prefix_events[-1].key != saved.key
        assert other.tool_calls and other.tool_calls[0].name == "lookup"
        assert len(list(tmp_path.glob("*.bin"))) == 2

        # A damaged file is dropped and the run goes on without it.
        cache = second.prefix_cache
        assert cache is not None
        ids = await model.tokenize("A system prompt nobody has used before. " * 12)
        broken = tmp_path / f"{cache.key(ids)}.bin"
        broken.write_bytes(b"not a llama.cpp slot file")
        event = await cache.ensure(ids, model.post_engine)
        assert event.action == "failed" and not broken.exists()
        again = await model.request(_request(system, tool))
        assert again.tool_calls
        await model.aclose()


async def test_an_answer_only_turn_reads_on_from_the_conversation_in_the_slot(
    tmp_path: Path, engine_pids: list[int]
) -> None:
    # The loop guard's last turn and an escalated answer ask with tool_choice="none". The
    # tools are still in that prompt, so the slot's conversation is a prefix of it: the
    # turn must read on from there, not restore a tool-less system turn over it.
    system = f"Session {secrets.token_hex(4)}. You are a careful market analyst. " * 6
    tool = _tool("Look up the latest price of a stock.")
    call = ToolCallPart(name="lookup", arguments={"ticker": "MSFT"}, id="call_1")
    result = ToolResultPart(
        call_id="call_1",
        name="lookup",
        parts=[TextPart(text='{"ticker": "MSFT", "price": 412.37, "date": "2026-11-30"} ' * 8)],
    )
    conversation = [
        Message.system(system),
        Message.user("Look up MSFT and tell me its price."),
        Message(role="assistant", parts=[call]),
        Message(role="tool", parts=[result]),
    ]
    async with _engine(tmp_path, engine_pids) as engine:
        model = LocalChatModel(engine)
        settings = ModelSettings(temperature=0, max_tokens=24, allow_truncated=True)
        auto = await model.request(
            ModelRequest(messages=conversation, tools=[tool], settings=settings)
        )
        answer = await model.request(
            ModelRequest(
                messages=conversation,
                tools=[tool],
                settings=settings.model_copy(update={"tool_choice": "none"}),
            )
        )
        await model.aclose()
    # One prefix (system turn and tools) was put in place, by the first turn only.
    assert [e.action for e in model.prefix_events] == ["saved"]
    # The answer turn reused all the conversation but the tail after the last result.
    assert auto.usage.input_tokens > 200
    assert answer.usage.cache_read_tokens >= auto.usage.input_tokens - 40
    assert not answer.tool_calls and answer.text.strip()


async def test_the_engine_starts_and_reads_the_prefix_while_the_toolkits_start(
    tmp_path: Path, engine_pids: list[int]
) -> None:
    # Agent.run warms the model up beside its toolkits: a toolkit that takes as long to
    # start as the engine sees the engine come up and the prefix saved meanwhile, and the
    # first turn then reads only the user's message.
    from agentsdk.events import TurnFinished
    from agentsdk.tools import Toolkit, tool

    from agentsdk import Agent

    engine = LocalEngine("qwen2.5-coder-0.5b", kv_cache_dir=tmp_path)
    model = LocalChatModel(engine)
    seen: list[str] = []

    class Market(Toolkit):
        name = "market"

        async def start(self) -> None:  # a browser or Blender would be starting here
            with anyio.fail_after(120):
                while not model.prefix_events:  # noqa: ASYNC110 (the model has no event to wait on)
                    await anyio.sleep(0.05)
            seen.append(model.prefix_events[0].action)
            assert engine.pid is not None
            engine_pids.append(engine.pid)

        @tool
        async def lookup(self, ticker: str) -> str:
            """Look up the latest price of a stock.

            Args:
                ticker: Stock symbol.
            """
            return f"{ticker}: 412.37 USD on 2026-11-30"

    turns: list[TurnFinished] = []

    def keep(event: object) -> None:
        if isinstance(event, TurnFinished):
            turns.append(event)

    system = f"Session {secrets.token_hex(4)}. You are a careful market analyst. " * 6
    agent = Agent(
        model,
        system,
        tools=[Market()],
        max_turns=2,
        settings=ModelSettings(temperature=0, max_tokens=40, tool_choice="required"),
    )
    try:
        with anyio.fail_after(300):
            await agent.run("Look up MSFT.", on_event=keep)
    except AgentError:
        pass  # two turns may not reach an answer: the first turn is what is measured
    finally:
        await model.aclose()
        await engine.stop()
    assert seen == ["saved"]  # put in place while the toolkit was still starting
    assert [e.action for e in model.prefix_events] == ["saved"]  # once, not again by turn 1
    prefix = model.prefix_events[0].tokens
    first = turns[0].usage
    assert first.cache_read_tokens >= prefix - 1
    assert first.input_tokens - first.cache_read_tokens < 40  # the user's message, about
    # Turn 1 was written by the warm-up, while the toolkit started, not asked again.
    assert model.answered_ahead == 1
    assert turns[0].tool_calls == 1


async def test_a_warm_up_answer_serves_only_the_request_it_was_asked_for(
    tmp_path: Path, engine_pids: list[int]
) -> None:
    system = f"Session {secrets.token_hex(4)}. You are a careful market analyst. " * 6
    tool = _tool("Look up the latest price of a stock.")
    async with _engine(tmp_path, engine_pids) as engine:
        model = LocalChatModel(engine)
        asked = _request(system, tool)
        await model.warm_up(asked)
        await model.warm_up(asked)  # a second warm-up for it (the agent's) asks nothing more
        # Another request (a different user message) is answered by the engine, and the
        # kept answer still waits for its own request.
        other = asked.model_copy(
            update={"messages": [Message.system(system), Message.user("Look up IBM.")]}
        )
        ibm = await model.request(other)
        assert model.answered_ahead == 0
        assert ibm.tool_calls and ibm.tool_calls[0].arguments == {"ticker": "IBM"}
        msft = await model.request(asked)
        assert model.answered_ahead == 1
        assert msft.tool_calls and msft.tool_calls[0].arguments == {"ticker": "MSFT"}
        # Given out once: the same request again goes to the engine.
        again = await model.request(asked)
        assert model.answered_ahead == 1 and again.tool_calls
        # Streamed, a kept answer arrives whole.
        await model.warm_up(asked)
        items = [item async for item in model.stream(asked)]
        assert model.answered_ahead == 2
        final = items[-1]
        assert isinstance(final, ModelResponse) and final.tool_calls[0].arguments == {
            "ticker": "MSFT"
        }
        # answer_ahead=False: a warm-up only puts the system turn and tools in place.
        plain = LocalChatModel(engine, answer_ahead=False)
        await plain.warm_up(asked)
        await plain.request(asked)
        assert plain.answered_ahead == 0
        await model.aclose()
        await plain.aclose()
