"""Real ``Agent`` runs through each connector's real HTTP stack (``agentsdk.http`` on aiohttp,
for agentsdk-openai and agentsdk-anthropic alike) against a server on 127.0.0.1 that injects faults: each fault
alone with its exact outcome, then 50 runs at random, streamed and not, held to the rules of
issue #21 (the right answer or a documented error; never an empty or wrong success; no run
past its timeout; nothing leaked); and the stream's deadline and consumers."""

from __future__ import annotations

import gc
import json
import random
import time
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from agentsdk.events import RunFailed, RunFinished, TextDelta, ToolCallFinished
from agentsdk_anthropic import AnthropicModel
from agentsdk_openai import OpenAIChatModel
from fault_runs import (
    LATE,
    add,
    check_rules,
    drive,
    loop_errors,
    new_tasks,
    prompt,
    running_tasks,
)
from fault_server import FaultServer
from fault_shapes import ANTHROPIC_FAULTS, OPENAI_FAULTS, TRANSIENT

from agentsdk import (
    Agent,
    ContentFilteredError,
    Message,
    ModelAuthError,
    ModelError,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ResponseTruncatedError,
    RetryPolicy,
    RunTimeout,
    StreamDelta,
)

READ_TIMEOUT = 1.5  # per read; the server's stalls last longer
RUN_TIMEOUT = 30.0
ATTEMPTS = 4
CONNECTORS = ["openai", "anthropic"]
FAULTS = {"openai": OPENAI_FAULTS, "anthropic": ANTHROPIC_FAULTS}
SHORT = ModelSettings(timeout=READ_TIMEOUT)


def model_for(connector: str, server: FaultServer, seed: int = 0) -> Any:
    """The connector as a user builds it (no transport=), retries kept short for CI."""
    retry = RetryPolicy(
        max_attempts=ATTEMPTS, base_delay=0.05, max_delay=0.4, rng=random.Random(seed)
    )
    if connector == "openai":
        return OpenAIChatModel("faulty", base_url=server.base_url, api_key="sk-test", retry=retry)
    return AnthropicModel("claude-faulty", base_url=server.anthropic_url, api_key="k", retry=retry)


def agent_for(model: Any, *, timeout: float = RUN_TIMEOUT, read: float = READ_TIMEOUT) -> Agent:
    return Agent(
        model, tools=[add], timeout=timeout, settings=ModelSettings(timeout=read), max_turns=8
    )


def every_fault() -> list[Any]:
    return [
        pytest.param(connector, fault, id=f"{connector}-{fault}")
        for connector in CONNECTORS
        for fault in sorted(set(FAULTS[connector]) - {"ok"})
    ]


# -- each fault alone, on every run's first request --------------------------------------

RAISED = {
    "401": ModelAuthError,
    "content_filter": ContentFilteredError,
    "refusal": ContentFilteredError,
    "length": ResponseTruncatedError,
    "max_tokens": ResponseTruncatedError,
}


async def _one_run(agent: Agent, stream: bool) -> tuple[Any, BaseException | None, list[Any]]:
    """(output, failure, events) of one run of the scripted task (20 + 22)."""
    events: list[Any] = []
    try:
        if stream:
            async for event in agent.stream(prompt("x", 20, 22)):
                events.append(event)
            output = events[-1].output if isinstance(events[-1], RunFinished) else None
        else:
            output = (await agent.run(prompt("x", 20, 22))).output
    except Exception as exc:
        return None, exc, events
    return output, None, events


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(("connector", "fault"), every_fault())
async def test_each_fault_alone_ends_as_documented(
    connector: str, fault: str, stream: bool
) -> None:
    # request 1 is the turn that calls add: a stream broken late had shown only tool-call
    # deltas, which the user never sees, so it is retried like any early break
    async with FaultServer(stall=READ_TIMEOUT + 2, weights={"ok": 1}, script={1: fault}) as server:
        model = model_for(connector, server)
        output, failure, _ = await _one_run(agent_for(model), stream)
        await model.aclose()
        assert await server.wait_until_all_closed(5.0)
    if fault in RAISED:
        assert isinstance(failure, RAISED[fault]), failure
        assert len(server.log) == 1  # not retried
    else:  # retried (a transient fault), tolerated (odd shapes) or fixed by the model (bad args)
        assert failure is None, f"{fault}: {failure!r}"
        assert output == "The sum is 42."
        # a call and an answer, plus the request the fault spoiled (odd shapes spoil nothing)
        assert len(server.log) == (2 if fault == "odd_shapes" else 3), server.log
        assert fault in TRANSIENT | LATE | {"odd_shapes", "bad_args"}


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("fault", sorted(LATE))
@pytest.mark.parametrize("connector", CONNECTORS)
async def test_a_stream_broken_after_text_is_raised_not_replayed(
    connector: str, fault: str, stream: bool
) -> None:
    # request 2 is the answer turn: its stream breaks after "The s" went out as text
    async with FaultServer(weights={"ok": 1}, script={2: fault}) as server:
        model = model_for(connector, server)
        output, failure, events = await _one_run(agent_for(model), stream)
        await model.aclose()
        assert await server.wait_until_all_closed(5.0)
    if not stream:  # a whole answer cannot break late: cut short or 5xx, retried
        assert failure is None and output == "The sum is 42.", failure
        assert len(server.log) == 3
        return
    assert type(failure) is ModelError and failure.retryable, failure
    assert "discarded" in str(failure) or "mid-stream" in str(failure)
    assert len(server.log) == 2  # not asked again: the text already shown would be replayed
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert shown == "The sum is 42."[:5] and isinstance(events[-1], RunFailed)


@pytest.mark.anyio
@pytest.mark.parametrize("fault", sorted(LATE))
@pytest.mark.parametrize("connector", CONNECTORS)
async def test_a_tool_call_stream_broken_late_is_retried_and_shown_once(
    connector: str, fault: str
) -> None:
    # straight from model.stream(), as a caller other than the loop sees it: the tool-call
    # deltas of the broken attempt never went out, so nothing arrives twice
    request = ModelRequest(
        messages=[Message.user(prompt("direct", 20, 22))], tools=[add.spec()], settings=SHORT
    )
    async with FaultServer(weights={"ok": 1}, script={1: fault}) as server:
        model = model_for(connector, server)
        items = [item async for item in model.stream(request)]
        await model.aclose()
        assert await server.wait_until_all_closed(5.0)
    assert server.faults_of("direct") == [fault, "ok"]  # broken once, then asked again
    *deltas, final = items
    assert isinstance(final, ModelResponse) and all(isinstance(d, StreamDelta) for d in deltas)
    (call,) = final.tool_calls
    assert call.name == "add" and call.arguments == {"a": 20, "b": 22}
    starts = [d for d in deltas if d.tool_name]
    assert [(d.tool_call_index, d.tool_name) for d in starts] == [(0, "add")]
    arguments = "".join(d.arguments_delta for d in deltas if d.tool_call_index == 0)
    assert json.loads(arguments) == {"a": 20, "b": 22}
    assert not any(d.text for d in deltas)


# -- fifty runs at random ------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("connector", CONNECTORS)
async def test_fifty_runs_under_random_faults_follow_the_rules(
    connector: str, stream: bool
) -> None:
    before = running_tasks()
    async with FaultServer(seed=21, stall=READ_TIMEOUT + 2) as server:
        seen, stop = loop_errors()
        model = model_for(connector, server, seed=21)
        started = time.monotonic()
        outcomes = await drive(lambda: agent_for(model), runs=50, stream=stream, concurrency=25)
        elapsed = time.monotonic() - started
        await model.aclose()
        closed = await server.wait_until_all_closed(5.0)
        await anyio.sleep(0.05)  # let finished tasks be collected
        leftover = new_tasks(before)
        stop()
    kinds = check_rules(outcomes, server, timeout=RUN_TIMEOUT, attempts=ATTEMPTS)
    print(
        f"\n{connector} {'streamed' if stream else 'whole'}: {dict(kinds)} in {elapsed:.1f} s, "
        f"{len(server.log)} requests, faults {sorted({i.fault for i in server.log})}"
    )
    assert closed, f"{server.open_connections} connection(s) still open after aclose()"
    assert leftover == [], leftover
    assert seen == [], seen
    assert kinds["ok"] >= 35, kinds  # most runs get through the faults
    injected = {i.fault for i in server.log}
    assert len(injected) >= 15, injected


# -- the run's deadline and the stream's consumer, with the real connector -----------------


@pytest.mark.anyio
@pytest.mark.parametrize("connector", CONNECTORS)
async def test_a_streamed_run_past_its_timeout_ends_with_run_failed_then_run_timeout(
    connector: str,
) -> None:
    async with FaultServer(stall=30.0, weights={"stall": 1}) as server:
        model = model_for(connector, server)
        agent = agent_for(model, timeout=1.0, read=60.0)
        events: list[object] = []
        started = time.monotonic()
        with pytest.raises(RunTimeout):
            async for event in agent.stream(prompt("t", 1, 2)):
                events.append(event)
        elapsed = time.monotonic() - started
        await model.aclose()
        assert await server.wait_until_all_closed(5.0)
    assert isinstance(events[-1], RunFailed) and events[-1].error_type == "RunTimeout"
    assert 0.9 <= elapsed < 5.0, elapsed


@pytest.mark.anyio
@pytest.mark.parametrize("connector", CONNECTORS)
async def test_a_slow_consumer_still_gets_the_whole_run(connector: str) -> None:
    async with FaultServer(weights={"ok": 1}) as server:
        model = model_for(connector, server)
        agent = agent_for(model, timeout=20.0)
        text: list[str] = []
        final = None
        async for event in agent.stream(prompt("slow", 5, 6)):
            await anyio.sleep(0.05)  # the consumer awaits between events
            if isinstance(event, TextDelta):
                text.append(event.text)
            final = event
        await model.aclose()
    assert isinstance(final, RunFinished) and final.output == "The sum is 11."
    assert "".join(text) == "The sum is 11."


@pytest.mark.anyio
@pytest.mark.parametrize("connector", CONNECTORS)
async def test_breaking_out_early_stops_the_run_and_spares_the_caller(connector: str) -> None:
    before = running_tasks()
    async with FaultServer(stall=30.0, script={2: "stall"}, weights={"ok": 1}) as server:
        model = model_for(connector, server)
        agent = agent_for(model, timeout=1.0, read=60.0)
        stream = agent.stream(prompt("brk", 1, 1))
        async for event in stream:
            if isinstance(event, ToolCallFinished):
                break  # the run goes on to ask again, and that request stalls
        await stream.aclose()
        started = time.monotonic()
        await anyio.sleep(1.5)  # past the abandoned run's deadline: nothing cancels us
        assert time.monotonic() - started >= 1.4
        assert await server.wait_until_all_closed(5.0)
        await model.aclose()
        assert new_tasks(before) == []
    assert server.faults_of("brk")[:1] == ["ok"]


@pytest.mark.anyio
@pytest.mark.parametrize("form", ["async-with", "dropped"])
@pytest.mark.parametrize("connector", CONNECTORS)
async def test_a_cancelled_consumer_leaves_no_run_or_connection_behind(
    connector: str, form: str
) -> None:
    before = running_tasks()
    async with FaultServer(stall=30.0, weights={"stall": 1}) as server:
        model = model_for(connector, server)
        agent = agent_for(model, timeout=20.0, read=60.0)

        async def consume() -> None:
            if form == "async-with":  # the documented way to stop a run at a known point
                async with agent.stream(prompt("cxl", 1, 1)) as events:
                    async for _ in events:
                        pass
            else:  # an iterator simply dropped: its run is cancelled once it is collected
                async for _ in agent.stream(prompt("cxl", 1, 1)):
                    pass

        async with anyio.create_task_group() as group:
            group.start_soon(consume)
            assert await server.wait_for_requests(1, 10.0)  # the run waits on a stalled answer
            group.cancel_scope.cancel()
        if form == "dropped":
            gc.collect()
        assert await server.wait_until_all_closed(5.0)
        await anyio.lowlevel.checkpoint()  # the caller was not cancelled: it goes on
        await model.aclose()
        await anyio.sleep(0.1)
        assert new_tasks(before) == []
    assert server.faults_of("cxl") == ["stall"]  # the run asked once, and was not replayed
