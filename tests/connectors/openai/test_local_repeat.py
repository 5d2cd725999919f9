"""A turn that only makes again what was made since the request (``reask.repeats_a_success``)
is replaced: by the answer once every part the request names is done, else by the call for
the part left. The rule on the real three.js schemas (no engine), the step on the real
engine."""

from __future__ import annotations

import pytest
from agentsdk_openai import LocalChatModel, LocalEngine, connect
from agentsdk_openai.local.reask import repeats_a_success
from agentsdk_threejs import ThreeJSToolkit

from agentsdk import (
    Message,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

pytestmark = pytest.mark.anyio

TOOLS = [tool.spec() for tool in ThreeJSToolkit().tools()]
ASKED = "Add a green plane named ground, 20 by 20, and a blue cube named player standing on it."
GROUND = {"name": "ground", "shape": "plane", "size": [20, 20], "color": "green"}
PLAYER = {"name": "player", "shape": "box", "color": "blue", "rest_on": "ground"}


def _call(tool: str, /, **arguments: object) -> ToolCallPart:
    return ToolCallPart(name=tool, arguments=dict(arguments))


def _turns(*calls: ToolCallPart, failed: str = "") -> ModelRequest:
    """The request, then each call as its own turn with its result (an error for the call
    whose id is ``failed``)."""
    messages = [Message.user(ASKED)]
    for call in calls:
        result = ToolResultPart(call_id=call.id, name=call.name, is_error=call.id == failed,
                                parts=[TextPart(text=f"did {call.name}")])  # fmt: skip
        messages += [Message(role="assistant", parts=[call]), Message(role="tool", parts=[result])]
    return ModelRequest(
        messages=messages, tools=TOOLS, settings=ModelSettings(temperature=0, max_tokens=96)
    )


def _next(*calls: ToolCallPart) -> ModelResponse:
    return ModelResponse(parts=list(calls))


def test_a_call_made_again_is_a_repeat_wherever_it_was_made() -> None:
    # s25/7: both parts made, then the first part's call again, two turns after it
    made = _turns(_call("add_object", **GROUND), _call("add_object", **PLAYER))
    assert repeats_a_success(made, _next(_call("add_object", **GROUND)))
    assert repeats_a_success(
        made, _next(_call("add_object", **PLAYER), _call("add_object", **GROUND))
    )
    # a change made again with nothing changed since is a repeat too
    paint = _call("update_object", name="ground", color="red")
    painted = _turns(_call("add_object", **GROUND), paint)
    assert repeats_a_success(painted, _next(paint.model_copy(update={"id": "p2"})))


@pytest.mark.parametrize(
    ("request_", "response"),
    [
        # one argument changed is another call; so is one new call among repeats
        (_turns(_call("add_object", **GROUND)), _next(_call("add_object", **{**GROUND, "color": "red"}))),
        (_turns(_call("add_object", **GROUND)),
         _next(_call("add_object", **GROUND), _call("add_object", **PLAYER))),
        # a tool that only looks may look again; a change made again after another change
        # is new (the colour back to green after red)
        (_turns(_call("render")), _next(_call("render"))),
        (_turns(_call("add_object", **GROUND), paint := _call("update_object", name="ground", color="green"),
                _call("update_object", name="ground", color="red")),
         _next(paint.model_copy(update={"id": "again"}))),
        # a call that failed was not made
        (_turns(first := _call("add_object", **GROUND), failed=first.id),
         _next(_call("add_object", **GROUND))),
        # an answer repeats nothing
        (_turns(_call("add_object", **GROUND)), ModelResponse(parts=[TextPart(text="Done.")])),
    ],
)  # fmt: skip
def test_what_is_not_a_repeat(request_: ModelRequest, response: ModelResponse) -> None:
    assert not repeats_a_success(request_, response)


def test_a_call_that_changed_nothing_was_made_and_its_repeat_is_one() -> None:
    # s17/4: the same set_transform twice, each "Nothing changed", the camera never made
    turn = _call("update_object", name="ground", rotation=[0, 0, 0])
    idle = _turns(_call("add_object", **GROUND), turn, failed=turn.id)
    result = idle.messages[-1].tool_results[0]
    for text, repeat in (
        ("Nothing changed: update_object asked for what already was so, which made no "
         "progress. If the request is done, give your final answer; otherwise take its next "
         "step. The result was:", True),
        ("Error: no object named ground", False),
    ):  # fmt: skip
        said = result.model_copy(update={"parts": [TextPart(text=text)]})
        messages = [*idle.messages[:-1], Message(role="tool", parts=[said])]
        request = idle.model_copy(update={"messages": messages})
        assert repeats_a_success(request, _next(turn.model_copy(update={"id": "t2"}))) is repeat


def test_a_call_made_before_the_newest_request_is_not_a_repeat() -> None:
    earlier = _turns(_call("add_object", **GROUND))
    asked_again = earlier.model_copy(
        update={"messages": [*earlier.messages, Message.user("Make the ground again.")]}
    )
    assert not repeats_a_success(asked_again, _next(_call("add_object", **GROUND)))


async def test_a_repeat_becomes_the_answer_or_the_call_for_the_part_left(
    qwen_engine: LocalEngine,
) -> None:
    model = connect("local:qwen2.5-coder-0.5b")
    assert isinstance(model, LocalChatModel)
    # Both parts made: the answer in place of the ground made again.
    done = _turns(_call("add_object", **GROUND), _call("add_object", **PLAYER))
    again = _next(_call("add_object", **GROUND))
    answered = await model._past_a_repeat(done, again)
    assert not answered.tool_calls and answered.text.strip(), answered.parts
    # The player not made: the call that makes it, under its name.
    half = _turns(_call("add_object", **GROUND))
    called = await model._past_a_repeat(half, again)
    assert [c.arguments.get("name") for c in called.tool_calls] == ["player"], called.parts
    # Asked for once per run: the same repeat in the same run now stands.
    assert await model._past_a_repeat(half, again) is again
    # With tool_choice set by the caller, or a call that is new, the response stands.
    told = done.model_copy(
        update={"settings": done.settings.model_copy(update={"tool_choice": "required"})}
    )
    assert await model._past_a_repeat(told, again) is again
    new = _next(_call("add_object", **{**GROUND, "color": "red"}))
    assert await model._past_a_repeat(done, new) is new
    await model.aclose()


async def test_with_the_request_done_any_answer_ends_the_repeat(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # s25/7: the answer asked for in place of a repeat was refused by the answer checks,
    # the repeat went through, and a second main scene was made. Here the engine's answer
    # is the request said again (the sampling is the engine's own in the test above): it
    # is taken, poor as it is, since the work is done and a loop would undo it.
    model = connect("local:qwen2.5-coder-0.5b")
    assert isinstance(model, LocalChatModel)
    said = ASKED
    asked: list[dict[str, object]] = []

    async def sample(
        request: ModelRequest, settings: dict[str, object], what: str
    ) -> ModelResponse:
        asked.append(settings)
        return ModelResponse(parts=[TextPart(text=said)])

    monkeypatch.setattr(model, "_sample_again", sample)
    done = _turns(_call("add_object", **GROUND), _call("add_object", **PLAYER))
    answered = await model._past_a_repeat(done, _next(_call("add_object", **GROUND)))
    assert answered.text == said and not answered.tool_calls
    assert [s["tool_choice"] for s in asked] == ["none"]
    # Held to the answer checks, as for a turn's own answer, the same text is refused.
    strict = await model._answer_again(done, ModelResponse(parts=[TextPart(text="")]))
    assert strict.text == ""
    await model.aclose()
