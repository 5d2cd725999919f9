"""agent.stream(): the run lives in its own task, so deadlines, early exits, slow and
cancelled consumers behave (issue #21, point 2)."""

from __future__ import annotations

import gc
import logging

import anyio
import pytest
from agentsdk.events import RunFailed, RunFinished, ToolCallStarted
from agentsdk.testing import ScriptedModel

from agentsdk import Agent, RunTimeout, ToolCallPart, tool

pytestmark = pytest.mark.anyio


def _slow_agent(
    state: dict[str, object],
    *,
    timeout: float | None,
    seconds: float = 30,
    cancelled: anyio.Event | None = None,
) -> Agent:
    @tool
    async def slow(label: str) -> str:
        """Wait a long time.

        Args:
            label: Any text.
        """
        state["started"] = True
        try:
            await anyio.sleep(seconds)
        except BaseException:
            state["cancelled"] = True
            if cancelled is not None:
                cancelled.set()
            raise
        return "finished"

    model = ScriptedModel([ToolCallPart(name="slow", arguments={"label": "x"}), "done"])
    return Agent(model, tools=[slow], timeout=timeout)


async def test_stream_timeout_ends_with_run_failed_then_run_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    state: dict[str, object] = {}
    agent = _slow_agent(state, timeout=0.5)
    seen = []
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(RunTimeout, match=r"longer than its 0\.5 s timeout"):
            async for event in agent.stream("go"):
                seen.append(event)
    assert isinstance(seen[-1], RunFailed) and seen[-1].error_type == "RunTimeout"
    assert seen[-1].run_id == seen[0].run_id
    assert state == {"started": True, "cancelled": True}
    assert "cancel scope" not in caplog.text


async def test_a_slow_consumer_is_not_timed_by_the_runs_deadline() -> None:
    model = ScriptedModel([ToolCallPart(name="echo", arguments={"text": "a"}), "the end"])

    @tool
    def echo(text: str) -> str:
        """Echo.

        Args:
            text: Text.
        """
        return text

    agent = Agent(model, tools=[echo], timeout=0.3)
    events = []
    async for event in agent.stream("go"):
        events.append(event)
        await anyio.sleep(0.1)  # six or more events: well past the run's 0.3 s
    assert isinstance(events[-1], RunFinished) and events[-1].output == "the end"


async def test_breaking_out_early_cancels_the_run_and_not_the_caller() -> None:
    state: dict[str, object] = {}
    cancelled = anyio.Event()
    agent = _slow_agent(state, timeout=None, cancelled=cancelled)  # no deadline to end it
    async for event in agent.stream("go"):
        if isinstance(event, ToolCallStarted):
            break
    gc.collect()
    with anyio.fail_after(5):  # the dropped stream cancelled its run
        await cancelled.wait()
    assert state["cancelled"] is True


async def test_an_abandoned_runs_deadline_does_not_touch_the_caller() -> None:
    state: dict[str, object] = {}
    agent = _slow_agent(state, timeout=0.3)
    stream = agent.stream("go")
    async for event in stream:
        if isinstance(event, ToolCallStarted):
            break
    await anyio.sleep(0.8)  # past the abandoned run's deadline: nothing here is cancelled
    await stream.aclose()


async def test_a_cancelled_consumer_cancels_the_runs_tools() -> None:
    state: dict[str, object] = {}
    agent = _slow_agent(state, timeout=None)
    stream = agent.stream("go")
    with anyio.move_on_after(0.5) as scope:
        async with stream:
            async for _ in stream:
                pass
    assert scope.cancelled_caught
    assert state == {"started": True, "cancelled": True}
    await anyio.sleep(0.05)  # the caller goes on normally


async def test_an_error_is_announced_then_raised() -> None:
    model = ScriptedModel([ValueError("model exploded")])
    events = []
    with pytest.raises(ValueError, match="model exploded"):
        async for event in Agent(model).stream("hi"):
            events.append(event)
    assert isinstance(events[-1], RunFailed) and events[-1].error_type == "ValueError"


async def test_run_ids_name_runs_and_are_checked(tmp_path: anyio.Path) -> None:
    model = ScriptedModel(["ok"])
    result = await Agent(model, artifacts_dir=str(tmp_path)).run("hi", run_id="task-1.a")
    assert result.run_id == "task-1.a"
    with pytest.raises(ValueError, match="run_id"):
        await Agent(ScriptedModel(["ok"])).run("hi", run_id="../escape")


async def test_on_event_sees_every_event_of_a_plain_run() -> None:
    model = ScriptedModel(["ok"])
    seen: list[str] = []
    await Agent(model).run("hi", on_event=lambda e: seen.append(type(e).__name__))
    assert seen[0] == "RunStarted" and seen[-1] == "RunFinished" and "TurnFinished" in seen
