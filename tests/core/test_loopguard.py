"""Loop and stall detection (issue #14, point 3): a model that repeats itself is told
so, and a run that keeps looping ends with a clear reason."""

from __future__ import annotations

import pytest
from agentsdk.testing import FunctionModel, ScriptedModel

from agentsdk import (
    Agent,
    LoopDetected,
    LoopGuard,
    ModelRequest,
    ToolCallPart,
    ToolError,
    Unchanged,
    tool,
)

pytestmark = pytest.mark.anyio


def _counter() -> tuple[dict[str, int], object, object]:
    runs = {"look": 0, "paint": 0}
    box = {"colour": "grey"}

    @tool
    def look(view: str) -> str:
        """Look at the scene.

        Args:
            view: Which view.
        """
        runs["look"] += 1
        return f"the {view} view shows a {box['colour']} box"

    @tool
    def paint(colour: str) -> str:
        """Paint the box.

        Args:
            colour: A colour name.
        """
        runs["paint"] += 1
        box["colour"] = colour
        return f"painted {colour}"

    return runs, look, paint


def _look(view: str = "front") -> ToolCallPart:
    return ToolCallPart(name="look", arguments={"view": view})


async def test_repeating_a_call_that_gives_the_same_result_is_an_error_then_stops_the_run() -> None:
    runs, look, paint = _counter()
    model = ScriptedModel([_look()] * 6)
    assert runs["look"] == 0
    with pytest.raises(LoopDetected, match=r"repeated look\(\{\"view\": \"front\"\}\)") as info:
        await Agent(model, tools=[look, paint]).run("look at it")
    assert info.value.result is not None and info.value.result.turns == 4
    first = model.requests[1].messages[-1].tool_results[0]
    assert not first.is_error
    repeated = model.requests[2].messages[-1].tool_results[0]
    assert repeated.is_error and repeated.text.startswith("Loop detected: you called look")
    assert "the front view shows a grey box" in repeated.text


async def test_a_repeated_call_whose_result_changes_is_progress() -> None:
    pages = iter(["page 1", "page 2", "page 3"])

    @tool
    def next_page() -> str:
        """The next page of results."""
        return next(pages)

    model = ScriptedModel([ToolCallPart(name="next_page", arguments={})] * 3 + ["read all"])
    result = await Agent(model, tools=[next_page]).run("read")
    assert result.output == "read all"
    assert not any(r.is_error for m in result.messages for r in m.tool_results)


async def test_a_model_that_reads_the_refusal_can_finish() -> None:
    runs, look, paint = _counter()
    model = ScriptedModel([_look(), _look(), "It is a grey box."])
    result = await Agent(model, tools=[look, paint]).run("look")
    assert result.output == "It is a grey box." and runs["look"] == 2


async def test_looking_again_after_a_change_is_not_a_loop() -> None:
    runs, look, paint = _counter()
    steps = [
        _look(),
        ToolCallPart(name="paint", arguments={"colour": "red"}),
        _look(),
        [ToolCallPart(name="paint", arguments={"colour": "blue"}), _look()],
        "done",
    ]
    result = await Agent(ScriptedModel(steps), tools=[look, paint]).run("paint it")
    assert result.output == "done" and runs == {"look": 3, "paint": 2}
    assert not any(r.is_error for m in result.messages for r in m.tool_results)
    # A successful action between two identical calls may have changed the world (here it
    # did not, but a delete before a rebuild would have): the second call is not a loop.
    steps = [_look(), ToolCallPart(name="paint", arguments={"colour": "blue"}), _look(), "done"]
    result = await Agent(ScriptedModel(steps), tools=[look, paint]).run("paint it")
    assert [r.is_error for m in result.messages for r in m.tool_results] == [False, False, False]


async def test_failing_in_circles_is_a_loop() -> None:
    @tool
    def fetch(source: str) -> str:
        """Fetch a source.

        Args:
            source: Which one.
        """
        raise ToolError(f"{source} is offline")

    a, b = (ToolCallPart(name="fetch", arguments={"source": s}) for s in ("a", "b"))
    model = ScriptedModel([a, b, a, b, a, "gave up"])
    with pytest.raises(LoopDetected):
        await Agent(model, tools=[fetch]).run("fetch")
    third = model.requests[3].messages[-1].tool_results[0]
    assert third.text.startswith("Loop detected: you called fetch")


async def test_the_same_error_twice_is_pointed_out() -> None:
    @tool
    def open_file(path: str) -> str:
        """Open a file.

        Args:
            path: Where it is.
        """
        raise ToolError("files must be inside the project folder")

    model = ScriptedModel(
        [
            ToolCallPart(name="open_file", arguments={"path": "/etc/a"}),
            ToolCallPart(name="open_file", arguments={"path": "/etc/b"}),
            "I cannot open it.",
        ]
    )
    await Agent(model, tools=[open_file]).run("open")
    first = model.requests[1].messages[-1].tool_results[0].text
    second = model.requests[2].messages[-1].tool_results[0].text
    assert "same error" not in first
    assert "This is the same error as your previous call of open_file" in second


async def test_the_guard_can_be_tuned_or_turned_off() -> None:
    runs, look, _ = _counter()
    await Agent(ScriptedModel([_look()] * 4 + ["ok"]), tools=[look], loop_guard=None).run("x")
    assert runs["look"] == 4
    runs, look, _ = _counter()
    with pytest.raises(LoopDetected, match="1 looping turns"):
        await Agent(
            ScriptedModel([_look()] * 3), tools=[look], loop_guard=LoopGuard(max_strikes=1)
        ).run("x")


async def test_the_turn_before_the_last_strike_asks_for_the_answer() -> None:
    """A model that calls whenever it may (as the 1.5B did on finance/damaged-file) gets
    one turn without tools before the run would be stopped, and answers."""
    runs, look, _ = _counter()
    choices: list[str | None] = []

    def decide(request: ModelRequest) -> object:
        choices.append(request.settings.tool_choice)
        if request.settings.tool_choice == "none":
            last = request.messages[-1].tool_results[0].text
            return "I could not get further: " + last.split("The result was:")[-1].strip()
        return _look()

    result = await Agent(FunctionModel(decide), tools=[look]).run("look at it")  # type: ignore[arg-type]
    # the first look, two strikes, then the answer with the guard's note in view
    assert choices == [None, None, None, "none"] and runs["look"] == 3
    assert result.output == "I could not get further: the front view shows a grey box"
    # without the last word the same model is stopped, as before
    runs, look, _ = _counter()
    choices.clear()
    with pytest.raises(LoopDetected, match="3 looping turns"):
        await Agent(FunctionModel(decide), tools=[look], loop_guard=LoopGuard(last_word=False)).run(
            "look at it"
        )  # type: ignore[arg-type]
    assert "none" not in choices


def _donut() -> tuple[object, object]:
    """Two tools whose results show the whole scene, as the 3D toolkits' do."""
    scene = {"colour": "grey", "light": "none"}

    def shown() -> str:
        return f"donut {scene['colour']}, light {scene['light']}"

    @tool
    def recolour(colour: str) -> str:
        """Recolour the donut.

        Args:
            colour: A colour name.
        """
        scene["colour"] = colour
        return "recoloured. " + shown()

    @tool
    def add_light(colour: str) -> str:
        """Add the light, or replace it.

        Args:
            colour: A colour name.
        """
        scene["light"] = colour
        return "light set. " + shown()

    return recolour, add_light


def _recolour(colour: str) -> ToolCallPart:
    return ToolCallPart(name="recolour", arguments={"colour": colour})


def _light(colour: str) -> ToolCallPart:
    return ToolCallPart(name="add_light", arguments={"colour": colour})


async def test_going_back_and_forth_between_calls_that_change_nothing_is_a_loop() -> None:
    # New users' prompt s16/4: update_object and add_light in turn, each with the result it
    # had the first time, until the run used all its turns.
    recolour, add_light = _donut()
    steps = [_recolour("orange"), _light("yellow")] * 5
    model = ScriptedModel(steps)
    with pytest.raises(LoopDetected, match="as your previous turn did") as info:
        await Agent(model, tools=[recolour, add_light], max_turns=12).run("an orange donut")
    assert info.value.result is not None and info.value.result.turns == 7
    results = [m.tool_results[0] for m in model.requests[-1].messages if m.tool_results]
    # the first three calls are new, the fourth a first revisit; then back and forth
    assert [r.is_error for r in results] == [False, False, False, False, True, True]
    assert results[4].text.startswith(
        "Loop detected: you called recolour with exactly these arguments before and got "
        "exactly the same result, as your previous turn did"
    )
    assert results[4].text.endswith("recoloured. donut orange, light yellow")
    assert model.requests[6].settings.tool_choice == "none"  # the last word was offered


async def test_going_back_and_forth_while_the_results_change_is_progress() -> None:
    recolour, add_light = _donut()
    colours = ["red", "green", "blue", "white"]
    steps: list[object] = [c for colour in colours for c in (_recolour(colour), _light(colour))]
    # back to a scene seen before (blue on blue) once, then on: a single revisit passes
    steps += [_recolour("blue"), _light("blue"), _recolour("pink"), "done"]
    result = await Agent(ScriptedModel(steps), tools=[recolour, add_light], max_turns=20).run("x")
    assert result.output == "done"
    assert not any(r.is_error for m in result.messages for r in m.tool_results)


def _orb() -> tuple[dict[str, str], object, object]:
    orb = {"colour": "grey"}

    @tool(side_effects=True)
    def paint(colour: str) -> str | Unchanged:
        """Paint the orb.

        Args:
            colour: A colour name.
        """
        if orb["colour"] == colour:
            return Unchanged(f"the orb already is {colour}")
        orb["colour"] = colour
        return f"painted the orb {colour}"

    @tool
    def render() -> str:
        """Render the scene."""
        return f"a {orb['colour']} orb"

    return orb, paint, render


def _paint(colour: str) -> ToolCallPart:
    return ToolCallPart(name="paint", arguments={"colour": colour})


async def test_calls_that_change_nothing_are_no_progress() -> None:
    # New users' prompt s22/1: the scene was as asked; the 1.5B model set the orb's colour
    # to the colour it had and rendered again, turn after turn, to the turn limit.
    orb, paint, render = _orb()
    look = ToolCallPart(name="render", arguments={})
    steps = [_paint("white"), look, _paint("white"), look, "done"]
    model = ScriptedModel(steps)
    result = await Agent(model, tools=[paint, render], max_turns=10).run("a white orb")
    results = [m.tool_results[0] for m in result.messages if m.tool_results]
    assert [r.is_error for r in results] == [False, False, True, True]
    assert results[2].text.startswith("Nothing changed: paint asked for what already was so")
    assert results[2].text.endswith("the orb already is white")
    assert results[3].text.startswith("Loop detected: you called render")  # the same look
    # two looping turns in a row: the third is asked for the answer, and gives it
    assert model.requests[4].settings.tool_choice == "none"
    assert result.output == "done" and orb["colour"] == "white"


async def test_a_call_that_changes_nothing_beside_one_that_does_is_progress() -> None:
    _, paint, render = _orb()
    look = ToolCallPart(name="render", arguments={})
    model = ScriptedModel([_paint("red"), [_paint("red"), _paint("blue")], look, "done"])
    result = await Agent(model, tools=[paint, render]).run("paint it")
    outcomes = [r for m in result.messages for r in m.tool_results]
    assert not any(r.is_error for r in outcomes)
    assert outcomes[1].text == "the orb already is red"  # said by the tool, not an error
    assert result.output == "done"
