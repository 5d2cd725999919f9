"""Which parts a request names, and which of them a run has not touched yet (no engine)."""

from __future__ import annotations

import pytest
from agentsdk_openai.local.unmade import asked_for, named_in, unmade_names

from agentsdk import Message, ModelRequest, TextPart, ToolCallPart, ToolResultPart


@pytest.mark.parametrize(
    ("text", "names"),
    [
        (
            "Add a red sphere named sun of radius 1 at (0, 3, 0) and a green box named plate, "
            "6 wide, 0.2 tall and 6 deep, resting on the ground.",
            ["sun", "plate"],
        ),
        ("Place three yellow cubes named a, b and c in a row along x.", ["a", "b", "c"]),
        ("Two cubes named left and right, a green one at x = -3.", ["left", "right"]),
        ("cubes called x, y, and z here", ["x", "y", "z"]),
        ('Add a sphere and name it "Red Ball", then light it.', ["Red Ball"]),
        ("a Label labelled `Title`", ["Title"]),
        ("Add a blue cube named Box, 2 m on each side, and a sun light named Sun.", ["Box", "Sun"]),
        # A property after a comma is not a second name; a step after "and" is not one.
        ("a purple cone named spire, radius 0.5 and 3 tall", ["spire"]),
        ("a blue cylinder named tower, radius 1 and height 5", ["tower"]),
        ("a cube named Box and make it red", ["Box"]),
        # Each name once, in the order given; words that follow "named" without naming.
        ("a cube named Box, then move the cube named box up", ["Box"]),
        ("a light named after the tree", []),
        ("the object named a is red", []),
        ("Make it the same colour.", []),
        ("", []),
    ],
)
def test_the_names_a_request_gives(text: str, names: list[str]) -> None:
    assert named_in(text) == names


@pytest.mark.parametrize(
    ("text", "name", "part"),
    [
        # The clause that names it, so the cue says what kind of thing it is.
        (
            "Add a blue cube named Box, 2 m on each side, resting on the ground, and a sun "
            "light named Sun above it pointing at it.",
            "Sun",
            "a sun light named Sun above it pointing at it",
        ),
        (
            "Make a red sphere named Ball of radius 1 resting on the ground and a camera named "
            "Cam at (6, -6, 4) that looks at it.",
            "Cam",
            "a camera named Cam at (6, -6, 4) that looks at it",
        ),
        (
            "Add a cube named Crate on the ground, then a cube named Lid of the same size "
            "stacked on top of it, and render the result.",
            "Lid",
            "a cube named Lid of the same size stacked on top of it",
        ),
        (
            "Place three cubes named a, b and c in a row.",
            "b",
            "Place three cubes named a, b and c in a row",
        ),
        ("a cone named spire, radius 0.5 and 3 tall", "spire", "a cone named spire"),
        ("Add it; name it Box", "Nope", "Nope"),  # no clause names it: the name alone
    ],
)
def test_the_part_of_the_request_that_names_it(text: str, name: str, part: str) -> None:
    assert asked_for(text, name) == part


def _run(ask: str, *steps: tuple[ToolCallPart, str]) -> ModelRequest:
    messages = [Message.system("Build the scene."), Message.user(ask)]
    for call, result in steps:
        done = ToolResultPart(call_id=call.id, name=call.name, parts=[TextPart(text=result)])
        messages += [Message(role="assistant", parts=[call]), Message(role="tool", parts=[done])]
    return ModelRequest(messages=messages)


ASK = "Add a red sphere named sun and a green box named plate."


def test_a_name_no_call_and_no_result_mentions_is_unmade() -> None:
    sun = ToolCallPart(name="add_object", arguments={"name": "sun", "shape": "sphere"})
    assert unmade_names(_run(ASK)) == ["sun", "plate"]
    assert unmade_names(_run(ASK, (sun, 'added sphere "sun".'))) == ["plate"]
    # Made under another name's spelling: case does not matter, whole words do.
    plate = ToolCallPart(name="add_object", arguments={"name": "Plate", "shape": "box"})
    assert unmade_names(_run(ASK, (sun, "ok"), (plate, "ok"))) == []
    plates = ToolCallPart(name="add_object", arguments={"name": "plates"})
    assert unmade_names(_run(ASK, (sun, "ok"), (plates, "ok"))) == ["plate"]
    # A result that mentions it counts: the part exists (made earlier, or found).
    look = ToolCallPart(name="scene_info", arguments={})
    assert unmade_names(_run(ASK, (look, "Objects: sun (sphere); plate (box)."))) == []
    # Arguments the model wrote that were not JSON count too.
    raw = ToolCallPart(name="add_object", raw_arguments='{"name": "plate", ')
    assert unmade_names(_run(ASK, (sun, "ok"), (raw, "Error: not JSON"))) == []


def test_only_the_newest_request_counts() -> None:
    sun = ToolCallPart(name="add_object", arguments={"name": "sun"})
    request = _run(ASK, (sun, "ok"))
    later = ModelRequest(messages=[*request.messages, Message.user("Now make the sun blue.")])
    assert unmade_names(later) == []  # "sun" is not given as a name ("named"/"called")
    renamed = ModelRequest(messages=[*request.messages, Message.user("Add a cone named tip.")])
    assert unmade_names(renamed) == ["tip"]
