"""A toolkit's own instructions reach the system prompt of the agent that uses it."""

from __future__ import annotations

import pytest
from agentsdk.testing import ScriptedModel
from pydantic import BaseModel

from agentsdk import Agent, Message, TextPart, Toolkit, tool

pytestmark = pytest.mark.anyio


class Lamp(Toolkit):
    name = "lamp"
    instructions = "Lamps are named in lower case; brightness runs 0 to 100."

    @tool
    def switch(self, lamp: str, on: bool = True) -> str:
        """Switch a lamp on or off."""
        return f"{lamp} {'on' if on else 'off'}"

    @tool
    def dim(self, lamp: str, brightness: int) -> str:
        """Set a lamp's brightness."""
        return f"{lamp} at {brightness}"


class Plain(Toolkit):
    name = "plain"

    @tool
    def ping(self) -> str:
        """Answer pong."""
        return "pong"


class Learns(Toolkit):
    """Knows its instructions only once it runs (as an MCP server's toolkit does)."""

    name = "learns"

    async def start(self) -> None:
        self.instructions = "Found at start: the device speaks metric."

    @tool
    def read(self) -> str:
        """Read the device."""
        return "12 cm"


async def _system(agent: Agent, model: ScriptedModel, **run: object) -> str | None:
    await agent.run("Go.", **run)  # type: ignore[arg-type]
    first = model.requests[0].messages[0]
    return first.text if first.role == "system" else None


async def test_the_toolkit_speaks_when_the_agent_has_no_instructions() -> None:
    model = ScriptedModel(["ok"])
    assert await _system(Agent(model, tools=[Lamp()]), model) == Lamp.instructions


async def test_the_agent_speaks_first_then_each_toolkit_once() -> None:
    model = ScriptedModel(["ok"])
    agent = Agent(model, "Be brief.", tools=[Lamp(), Plain(), Lamp(prefix="b")])
    assert await _system(agent, model) == f"Be brief.\n\n{Lamp.instructions}"


async def test_a_text_the_agent_already_holds_is_not_repeated() -> None:
    # the task suites pass their toolkit's text as their own: the prompt stays theirs
    own = f"Intro.\n{Lamp.instructions}\nOutro."
    model = ScriptedModel(["ok"])
    assert await _system(Agent(model, own, tools=[Lamp()]), model) == own


async def test_toolkit_instructions_can_be_left_out() -> None:
    model = ScriptedModel(["ok"])
    agent = Agent(model, "Mine only.", tools=[Lamp()], toolkit_instructions=False)
    assert await _system(agent, model) == "Mine only."
    bare = ScriptedModel(["ok"])
    assert await _system(Agent(bare, tools=[Lamp()], toolkit_instructions=False), bare) is None


async def test_a_subset_of_a_toolkit_keeps_its_instructions() -> None:
    lamp = Lamp()
    subset = lamp.only("dim")
    assert subset.instructions == Lamp.instructions
    model = ScriptedModel(["ok"])
    assert await _system(Agent(model, tools=[subset]), model) == Lamp.instructions
    assert [spec.name for spec in model.requests[0].tools] == ["dim"]


async def test_the_output_type_s_instructions_come_last() -> None:
    class Reading(BaseModel):
        value: float

    model = ScriptedModel(['{"value": 1.5}'])
    agent = Agent(model, "Measure.", tools=[Lamp()], output_type=Reading)
    system = await _system(agent, model)
    assert system is not None
    measure, lamp, output = system.split("\n\n")
    assert (measure, lamp) == ("Measure.", Lamp.instructions)
    assert output.startswith("When you give your final answer, reply with only a JSON value")


async def test_instructions_a_toolkit_learns_when_it_starts_are_in_the_first_request() -> None:
    model = ScriptedModel(["ok"])
    agent = Agent(model, "Read it.", tools=[Learns()])
    assert await _system(agent, model) == "Read it.\n\nFound at start: the device speaks metric."
    # a held-open agent has started its toolkits before it builds the request
    held = ScriptedModel(["ok"])
    async with Agent(held, tools=[Learns()]) as open_agent:
        assert await _system(open_agent, held) == "Found at start: the device speaks metric."


async def test_a_conversation_with_its_own_system_message_keeps_it() -> None:
    model = ScriptedModel(["ok"])
    hello = Message(role="assistant", parts=[TextPart(text="Hello.")])
    history = [Message.system("Theirs."), Message.user("Hi."), hello]
    agent = Agent(model, "Mine.", tools=[Lamp(), Learns()])
    await agent.run("Go.", message_history=history)
    systems = [m.text for m in model.requests[0].messages if m.role == "system"]
    assert systems == ["Theirs."]


@pytest.mark.parametrize("name", ["finance", "threejs", "blender", "godot", "unity"])
def test_each_shipped_suite_measures_the_prompt_a_plain_agent_gets(name: str) -> None:
    """The suites' instructions are their toolkit's own, so their pass rates hold for
    ``Agent("local:default", tools=[toolkit])`` with no instructions of its own."""
    from agentsdk.plugins import load_suite

    suite = load_suite(name)
    model = ScriptedModel([])
    for task in suite.tasks:
        tools = [s.build().only(*s.tools) if s.tools else s.build() for s in task.specs]
        given = suite.instructions_for(task)
        assert given  # every shipped task runs with instructions
        assert Agent(model, given, tools=tools)._system_prompt() == given  # not doubled
        assert Agent(model, tools=tools)._system_prompt() == given, task.id
