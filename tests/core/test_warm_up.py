"""A model warms up (a local engine starts, its prompt prefix is read) while the agent's
toolkits start, instead of after them: the overlap is the point, so the tests time it."""

from __future__ import annotations

import time

import anyio
import pytest
from agentsdk.models import warm_up
from agentsdk.tasks import Check, Suite, Task, ToolkitSpec, run_task
from agentsdk.testing import ScriptedModel

from agentsdk import Agent, ModelRequest, Tiers, ToolCallPart, Toolkit, tool

pytestmark = pytest.mark.anyio


class WarmingModel(ScriptedModel):
    """A scripted model with a warm-up that takes ``seconds`` (an engine loading)."""

    def __init__(self, steps: list, *, seconds: float = 0.3, fail: bool = False, name: str = "w"):
        super().__init__(steps, name=name)
        self.seconds = seconds
        self.fail = fail
        self.warmed: list[tuple[float, float, ModelRequest | None]] = []

    async def warm_up(self, request: ModelRequest | None = None) -> None:
        began = time.perf_counter()
        await anyio.sleep(self.seconds)
        if self.fail:
            raise RuntimeError("the engine binary is missing")
        self.warmed.append((began, time.perf_counter(), request))


class SlowStart(Toolkit):
    """A toolkit that takes ``seconds`` to start (a browser launching)."""

    name = "slow"

    def __init__(self, seconds: float = 0.3):
        super().__init__()
        self.seconds = seconds
        self.started_at: tuple[float, float] | None = None

    async def start(self) -> None:
        began = time.perf_counter()
        await anyio.sleep(self.seconds)
        self.started_at = (began, time.perf_counter())

    @tool
    async def ping(self, word: str) -> str:
        """Echo a word.

        Args:
            word: any word.
        """
        return word


async def test_the_model_warms_up_for_the_first_request_while_toolkits_start() -> None:
    model = WarmingModel([ToolCallPart(name="ping", arguments={"word": "hi"}), "done"])
    kit = SlowStart()
    agent = Agent(model, "Be brief.", tools=[kit])
    started = time.perf_counter()
    result = await agent.run("Say hi.")
    elapsed = time.perf_counter() - started
    assert result.output == "done"
    ((began, ended, request),) = model.warmed
    assert kit.started_at is not None
    assert began < kit.started_at[1] and kit.started_at[0] < ended  # they overlapped
    assert elapsed < 0.55, elapsed  # 0.3 s each, side by side (0.6 s one after the other)
    # It warmed up for the request the first turn then made.
    assert request is not None
    first = model.requests[0]
    assert [m.text for m in request.messages] == [m.text for m in first.messages]
    assert [t.name for t in request.tools] == [t.name for t in first.tools] == ["ping"]


async def test_a_failed_warm_up_leaves_the_error_to_the_first_request() -> None:
    model = WarmingModel(["fine"], fail=True)
    result = await Agent(model, tools=[SlowStart(0.05)]).run("hi")
    assert result.output == "fine" and model.warmed == []


async def test_a_run_that_fails_to_start_its_toolkits_cancels_the_warm_up() -> None:
    class Broken(SlowStart):
        async def start(self) -> None:
            raise OSError("no browser")

    model = WarmingModel(["unused"], seconds=5)
    with pytest.raises(OSError, match="no browser"):
        with anyio.fail_after(2):  # not held up by the 5-second warm-up
            await Agent(model, tools=[Broken()]).run("hi")
    assert model.warmed == [] and model.requests == []


async def test_of_two_tiers_only_the_one_picked_for_turn_one_warms_up() -> None:
    fast = WarmingModel(["x"], seconds=0.01, name="fast")
    standard = WarmingModel(["answer"], seconds=0.01, name="standard")
    tiers = Tiers(fast=fast, standard=standard, policy=lambda info: "standard")
    result = await Agent(tiers, tools=[SlowStart(0.05)]).run("hi")
    assert result.output == "answer"
    assert len(standard.warmed) == 1 and fast.warmed == []
    # With no request (a task's environment starting) the policy cannot be asked:
    # the standard tier, which serves the turns that use tools, warms up.
    await warm_up(Tiers(fast=fast, standard=standard, policy=lambda info: "fast"))
    assert len(standard.warmed) == 2 and fast.warmed == []


async def test_a_task_run_warms_the_model_up_for_its_first_request_while_its_environment_starts() -> (
    None
):
    # run_task makes the agent before it starts the task's toolkits (their tools are
    # listed before they run), so the model warms up for the very request turn 1 makes
    # while the toolkit starts and the setup runs.
    kit = SlowStart(0.3)
    set_up: list[float] = []

    def setup(world: object) -> None:
        set_up.append(time.perf_counter())

    task = Task(
        id="warm/one",
        prompt="Say hi.",
        toolkits=[ToolkitSpec(name="slow", factory=lambda **_: kit)],
        setup=setup,
        checks=[Check("says hi", lambda world: world.answer == "hi")],
    )
    model = WarmingModel(["hi"])
    rollout = await run_task(task, model, suite=Suite(name="warm", tasks=[task]))
    assert rollout.passed, rollout
    assert kit.started_at is not None and set_up
    began, _, request = model.warmed[0]
    assert began < kit.started_at[1]  # began before the toolkit was up
    assert set_up[0] >= kit.started_at[1]  # the setup still ran on the started toolkit
    assert request is not None
    first = model.requests[0]
    assert request == first  # exactly the request turn 1 then made


async def test_a_task_whose_toolkit_lists_its_tools_once_started_warms_the_engine_only() -> None:
    # An MCP server's tools (``tools_version``) are unknown until it runs: the agent is
    # made after the toolkit starts, and the warm-up gets no request to answer.
    class Changing(SlowStart):
        tools_version = 0

    kit = Changing(0.05)
    task = Task(
        id="warm/two",
        prompt="Say hi.",
        toolkits=[ToolkitSpec(name="slow", factory=lambda **_: kit)],
        checks=[Check("says hi", lambda world: world.answer == "hi")],
    )
    model = WarmingModel(["hi"], seconds=0.01)
    rollout = await run_task(task, model, suite=Suite(name="warm", tasks=[task]))
    assert rollout.passed, rollout
    assert model.warmed[0][2] is None
