"""A third call in a row that only turns one tool's numbers, once the request is done
(``reask.drifting``), is replaced by the answer: the rule on the real three.js schemas
(no engine), and the step on the real engine."""

from __future__ import annotations

import pytest
from agentsdk_openai import LocalChatModel, LocalEngine, connect
from agentsdk_openai.local.reask import drifting
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
ASKED = (
    "Make a brown box named desk, 2 wide, 0.8 tall and 1 deep, on the ground, and a white "
    "sphere named globe of radius 0.2 sitting on the desk."
)
DESK = ToolCallPart(name="add_object", arguments={"name": "desk", "shape": "box",
                                                  "size": [2, 0.8, 1], "rest_on": "ground"})  # fmt: skip
GLOBE = ToolCallPart(name="add_object", arguments={"name": "globe", "shape": "sphere",
                                                   "size": [0.2], "rest_on": "desk"})  # fmt: skip


def _camera(*position: float) -> ToolCallPart:
    return ToolCallPart(name="set_camera", arguments={"position": list(position)})


def _turns(*calls: ToolCallPart, asked: str = ASKED, failed: str = "") -> ModelRequest:
    """The request, then each call as its own turn with its result (an error for the call
    whose id is ``failed``)."""
    messages = [Message.user(asked)]
    for call in calls:
        said = f"did {call.name} ({', '.join(str(v) for v in call.arguments.values())})"
        result = ToolResultPart(call_id=call.id, name=call.name, is_error=call.id == failed,
                                parts=[TextPart(text=said)])  # fmt: skip
        messages += [Message(role="assistant", parts=[call]), Message(role="tool", parts=[result])]
    return ModelRequest(messages=messages, tools=TOOLS)


def _next(call: ToolCallPart) -> ModelResponse:
    return ModelResponse(parts=[call])


def test_a_knob_turned_a_third_time_with_the_request_done_is_drifting() -> None:
    # s24/1: both parts made, then the camera moved a metre a turn until the turns ran out
    turned = _turns(DESK, GLOBE, _camera(4, 3, 5), _camera(4, 3, 4))
    assert drifting(turned, _next(_camera(4, 3, 3)))


@pytest.mark.parametrize(
    ("request_", "response"),
    [
        # the second turn of it, not the third
        (_turns(DESK, GLOBE, _camera(4, 3, 5)), _next(_camera(4, 3, 4))),
        # a part still unmade: the globe
        (_turns(DESK, _camera(4, 3, 5), _camera(4, 3, 4)), _next(_camera(4, 3, 3))),
        # the same call again is the loop guard's; a word changed is another call
        (_turns(DESK, GLOBE, _camera(4, 3, 5), _camera(4, 3, 4)), _next(_camera(4, 3, 4))),
        (_turns(DESK, GLOBE, ToolCallPart(name="set_camera", arguments={"look_at": "desk"}),
                ToolCallPart(name="set_camera", arguments={"look_at": "globe"})),
         _next(ToolCallPart(name="set_camera", arguments={"look_at": "desk"}))),
        # a tool that only looks (render, measure) is no change of the world
        (_turns(DESK, GLOBE, ToolCallPart(name="measure", arguments={"names": ["desk"]}),
                ToolCallPart(name="measure", arguments={"names": ["desk"]})),
         _next(ToolCallPart(name="measure", arguments={"names": ["globe"]}))),
        # another tool between them, or a request that names no part
        (_turns(DESK, GLOBE, _camera(4, 3, 5), DESK.model_copy(update={"id": "x"})),
         _next(_camera(4, 3, 3))),
        (_turns(_camera(4, 3, 5), _camera(4, 3, 4), asked="Move the camera closer."),
         _next(_camera(4, 3, 3))),
    ],
)  # fmt: skip
def test_what_is_not_drifting(request_: ModelRequest, response: ModelResponse) -> None:
    assert not drifting(request_, response)


def test_a_failed_turn_or_a_turn_of_two_calls_breaks_the_row() -> None:
    first, second = _camera(4, 3, 5), _camera(4, 3, 4)
    failed = _turns(DESK, GLOBE, first, second, failed=second.id)
    assert not drifting(failed, _next(_camera(4, 3, 3)))
    request = _turns(DESK, GLOBE, first, second)
    both = Message(role="assistant", parts=[second, _camera(1, 1, 1)])
    messages = [*request.messages[:-2], both, request.messages[-1]]
    assert not drifting(request.model_copy(update={"messages": messages}), _next(_camera(4, 3, 3)))


async def test_the_answer_is_asked_for_in_its_place(qwen_engine: LocalEngine) -> None:
    model = connect("local:qwen2.5-coder-0.5b")
    assert isinstance(model, LocalChatModel)
    request = _turns(DESK, GLOBE, _camera(4, 3, 5), _camera(4, 3, 4))
    request = request.model_copy(update={"settings": ModelSettings(temperature=0, max_tokens=64)})
    drifted = _next(_camera(4, 3, 3))
    answered = await model._answer_when_drifting(request, drifted)
    assert not answered.tool_calls and answered.text.strip(), answered.parts
    # With tool_choice set by the caller, or with no drift, the call stands.
    told = request.model_copy(
        update={"settings": request.settings.model_copy(update={"tool_choice": "required"})}
    )
    assert await model._answer_when_drifting(told, drifted) is drifted
    early = _next(_camera(4, 3, 4))
    shorter = request.model_copy(update={"messages": request.messages[:-2]})
    assert await model._answer_when_drifting(shorter, early) is early
    await model.aclose()
