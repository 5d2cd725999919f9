"""A refused call sent again unchanged becomes the call its refusal offered
(``offers.offer_taken``), with the real Godot tool schemas (no engine)."""

from __future__ import annotations

from typing import Any

from agentsdk_godot import GodotToolkit
from agentsdk_openai.local.offers import offer_taken

from agentsdk import Message, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolResultPart

SPECS = {tool.name: tool.spec() for tool in GodotToolkit().tools()}
ASKED = "Create the main scene with a red cube named Crate and a camera that sees it."
CAMERA = {
    "scene": "res://main.tscn", "name": "Camera", "type": "Camera", "parent": ".",
    "properties": {"direction": "front", "translation": "Vector3( 0, 1, 5 )"},
}  # fmt: skip
OFFER = {**CAMERA, "properties": {"translation": "Vector3( 0, 1, 5 )"}}


def _refused(
    call: dict[str, Any], instead: dict[str, Any] | None, *earlier: Message
) -> ModelRequest:
    made = ToolCallPart(name="add_node", arguments=call)
    result = ToolResultPart(
        call_id=made.id, name="add_node", is_error=True, instead=instead,
        parts=[TextPart(text="Camera has no property 'direction'. Nothing was added.")],
    )  # fmt: skip
    return ModelRequest(
        messages=[
            Message.system("Build the scene."),
            *earlier,
            Message.user(ASKED),
            Message(role="assistant", parts=[made]),
            Message(role="tool", parts=[result]),
        ],
        tools=list(SPECS.values()),
    )


def _sends(*calls: dict[str, Any]) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(name="add_node", arguments=c) for c in calls])


def test_the_same_call_sent_again_becomes_the_offered_one() -> None:
    response = _sends(CAMERA)
    mended = offer_taken(_refused(CAMERA, OFFER), response)
    [call] = mended.tool_calls
    assert call.arguments == OFFER
    assert call.id == response.tool_calls[0].id  # the model's turn, the offer's arguments


def test_a_changed_call_is_the_models_own() -> None:
    changed = {**CAMERA, "properties": {"direction": "back"}}
    response = _sends(changed)
    assert offer_taken(_refused(CAMERA, OFFER), response) == response


def test_no_offer_an_invalid_offer_or_an_offer_of_an_earlier_request_is_not_taken() -> None:
    response = _sends(CAMERA)
    assert offer_taken(_refused(CAMERA, None), response) == response
    invalid = {**OFFER, "position": "far away"}  # the schema wants numbers
    assert offer_taken(_refused(CAMERA, invalid), response) == response
    # Refused in an earlier run of the conversation, then asked anew: the call is new.
    old = _refused(CAMERA, OFFER)
    later = ModelRequest(
        messages=[
            *old.messages,
            Message(role="assistant", parts=[TextPart(text="Done.")]),
            Message.user(ASKED),
        ],
        tools=old.tools,
    )
    assert offer_taken(later, response) == response


def test_only_the_repeated_call_of_a_turn_is_replaced() -> None:
    cube = {"scene": "res://main.tscn", "name": "Crate", "type": "MeshInstance", "shape": "box"}
    response = _sends(cube, CAMERA)
    mended = offer_taken(_refused(CAMERA, OFFER), response)
    assert [c.arguments for c in mended.tool_calls] == [cube, OFFER]


def test_integral_floats_are_the_same_numbers_as_ints() -> None:
    capsule = {
        "scene": "res://main.tscn", "name": "Hero", "type": "MeshInstance",
        "shape": "capsule", "size": [2, 2, 1],
    }  # fmt: skip
    offer = {**capsule, "size": [1, 1, 2]}
    resent = {**capsule, "size": [2.0, 2.0, 1.0]}  # the same call, written with floats
    [call] = offer_taken(_refused(capsule, offer), _sends(resent)).tool_calls
    assert call.arguments == offer
    # A float that is not integral is another number: the call is the model's own.
    other = {**capsule, "size": [2.5, 2.0, 1.0]}
    assert offer_taken(_refused(capsule, offer), _sends(other)).tool_calls[0].arguments == other
    # An offer the model already wrote out (with floats) is not "taken" again.
    taken = {**capsule, "size": [1.0, 1.0, 2.0]}
    assert offer_taken(_refused(taken, offer), _sends(taken)).tool_calls[0].arguments == taken
