"""Maker calls mended to what the request says of the part (no engine), with the real
three.js, Blender and Godot tool schemas: their descriptions say which axis is up."""

from __future__ import annotations

from typing import Any

import pytest
from agentsdk_blender import BlenderToolkit
from agentsdk_godot import GodotToolkit
from agentsdk_openai.local.as_asked import (
    aimed_as_asked,
    as_asked,
    below_as_asked,
    changed_as_asked,
    framed_as_asked,
    kind_as_asked,
    light_as_asked,
    looking_as_asked,
    looks_as_asked,
    placed_as_asked,
    rested_as_asked,
    side_name_as_asked,
    sized_as_asked,
    spaced_as_asked,
)
from agentsdk_openai.local.unmade import (
    another_kind_unmade,
    asked_as_new,
    named_in,
    premature_part,
)
from agentsdk_threejs import ThreeJSToolkit

from agentsdk import (
    Message,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)


def _specs() -> dict[str, ToolSpec]:
    specs = {}
    for toolkit in (ThreeJSToolkit(), BlenderToolkit(), GodotToolkit()):
        for tool in toolkit.tools():
            specs[tool.name] = tool.spec()
    return specs


SPECS = _specs()


def _ask(text: str, *tools: str) -> ModelRequest:
    return ModelRequest(
        messages=[Message.system("Build the scene."), Message.user(text)],
        tools=[SPECS[name] for name in tools],
    )


def _call(tool: str, **arguments: Any) -> ToolCallPart:
    return ToolCallPart(name=tool, arguments=arguments)


SUN_AND_PLATE = (
    "Add a red sphere named sun of radius 1 at (0, 3, 0) and a green box named plate, "
    "6 wide, 0.2 tall and 6 deep, resting on the ground."
)


@pytest.mark.parametrize(
    ("text", "tool", "arguments", "dropped"),
    [
        # three.js (y is up): a point off the ground, nothing said of resting.
        (SUN_AND_PLATE, "add_object",
         {"name": "sun", "shape": "sphere", "position": [0, 3, 0], "rest_on": "ground"}, True),
        ("Put a blue torus named ring at (0, 2, 0), a yellow point light named glow at "
         "(2, 4, 2), and show me a render of it.", "add_object",
         {"name": "ring", "shape": "torus", "position": [0, 2.0, 0], "rest_on": "ground"}, True),
        # A part named "floor" says nothing of a floor.
        ("Add a grey plane named floor at (0, 2, 0).", "add_object",
         {"name": "floor", "shape": "plane", "position": [0, 2, 0], "rest_on": "ground"}, True),
        # Resting asked for, though the model gave a height: rest_on stays.
        (SUN_AND_PLATE, "add_object",
         {"name": "plate", "shape": "box", "position": [0, 1, 0], "rest_on": "ground"}, False),
        ("Create a blue cylinder named tower, radius 1 and height 5, standing on the ground "
         "at (3, 0, 3), and a yellow point light named lamp at (0, 6, 0).", "add_object",
         {"name": "tower", "shape": "cylinder", "position": [3, 0, 3], "rest_on": "ground"},
         False),
        ("Put a red sphere named apple at (0, 2, 0) on top of the table.", "add_object",
         {"name": "apple", "shape": "sphere", "position": [0, 2, 0], "rest_on": "table"}, False),
        # A point on the ground (up coordinate 0) keeps it: "at (2, 0, 2)" means standing there.
        ("Put a box named crate at (2, 0, 2).", "add_object",
         {"name": "crate", "position": [2, 0, 2], "rest_on": "ground"}, False),
        # The call is not at the request's point, or the request gives none.
        (SUN_AND_PLATE, "add_object",
         {"name": "sun", "shape": "sphere", "position": [0, 1, 0], "rest_on": "ground"}, False),
        ("Add a red sphere named sun.", "add_object",
         {"name": "sun", "position": [0, 3, 0], "rest_on": "ground"}, False),
        # Blender (Z is up): (0, 0, 1) is off the ground, (0, 1, 0) is on it.
        ("Make a torus named Ring at (0, 0, 1) and a camera named Cam at (0, -5, 1).",
         "create_primitive",
         {"kind": "torus", "name": "Ring", "location": [0, 0, 1], "rest_on": "ground"}, True),
        ("Make a torus named Ring at (0, 1, 0).", "create_primitive",
         {"kind": "torus", "name": "Ring", "location": [0, 1, 0], "rest_on": "ground"}, False),
        # Godot (bottom at y=0).
        ("Create a main scene with a red sphere named Ball at (0, 2, 0).", "add_node",
         {"scene": "res://main.tscn", "name": "Ball", "type": "MeshInstance", "shape": "sphere",
          "position": [0, 2, 0], "rest_on": "ground"}, True),
    ],
)  # fmt: skip
def test_a_part_put_at_a_point_off_the_ground_does_not_rest(
    text: str, tool: str, arguments: dict[str, Any], dropped: bool
) -> None:
    call = _call(tool, **arguments)
    response = ModelResponse(parts=[call])
    mended = placed_as_asked(_ask(text, tool), response)
    (got,) = mended.tool_calls
    assert ("rest_on" not in got.arguments) is dropped
    assert {k: v for k, v in got.arguments.items() if k != "rest_on"} == {
        k: v for k, v in arguments.items() if k != "rest_on"
    }
    assert got.id == call.id
    if not dropped:
        assert mended is response


SPIRE = (
    "Make a grey floor plane named floor, 10 by 10, and a purple cone named spire, radius "
    "0.5 and 3 tall, standing on it, lit by a directional light."
)


@pytest.mark.parametrize(
    ("text", "call", "name_kept"),
    [
        # A light given a shape's name loses it (add_light names a light by its kind).
        (SPIRE, _call("add_light", kind="directional", name="spire", target="floor"), False),
        ("Add a red sphere named Apple and a sun light.",
         _call("place_light", type="SUN", name="apple", location=[0, 0, 5]), False),
        # The right kind, or a name the request does not give, keeps it.
        ("Add a red box named crate and a point light named lamp above it.",
         _call("add_light", kind="point", name="lamp"), True),
        (SPIRE, _call("add_object", name="spire", shape="cone"), True),
        (SPIRE, _call("add_light", kind="directional", name="key"), True),
        # A tool that needs the name (Godot's add_node) is left as it is.
        ("Create a main scene with a red sphere named Ball.",
         _call("add_node", scene="res://main.tscn", name="Ball", type="OmniLight"), True),
    ],
)  # fmt: skip
def test_a_call_that_makes_another_kind_gives_up_a_name_asked_for_elsewhere(
    text: str, call: ToolCallPart, name_kept: bool
) -> None:
    mended = kind_as_asked(_ask(text, call.name), ModelResponse(parts=[call]))
    (got,) = mended.tool_calls
    assert ("name" in got.arguments) is name_kept
    assert {k: v for k, v in got.arguments.items() if k != "name"} == {
        k: v for k, v in call.arguments.items() if k != "name"
    }


def test_all_four_mends_in_one_response_and_none_without_a_maker() -> None:
    text = "Add a red sphere named sun at (0, 3, 0), lit by a point light."
    request = _ask(text, "add_object", "add_light", "update_object")
    sun = _call(
        "add_object", name="sun of radius 1", shape="sphere", position=[0, 3, 0], rest_on="ground"
    )
    light = _call("add_light", kind="point", name="sun", position=[2, 4, 2])
    moved = _call("update_object", name="sun", position=[0, 3, 0], rest_on="ground")
    response = ModelResponse(parts=[TextPart(text="Adding it."), sun, light, moved])
    mended = as_asked(request, response)
    assert [c.arguments for c in mended.tool_calls] == [
        {"name": "sun", "shape": "sphere", "position": [0, 3, 0], "color": "red"},
        {"kind": "point", "position": [2, 4, 2]},
        moved.arguments,  # update_object makes nothing: left as it is
    ]
    assert mended.text == "Adding it."
    plain = _ask(text, "update_object")
    assert as_asked(plain, ModelResponse(parts=[moved])).tool_calls == [moved]


GODOT = {"scene": "res://main.tscn", "type": "MeshInstance"}


@pytest.mark.parametrize(
    ("text", "call", "added"),
    [
        # Godot's add_node with neither shape nor colour (18 of 18 such calls on new users'
        # prompts): both from the words before the name.
        ("Create a main scene with a Camera named Eye and a red sphere named Ball.",
         _call("add_node", name="Ball", **GODOT), {"shape": "sphere", "color": "red"}),
        ("Build a main scene with a yellow cube named Coin resting on it.",
         _call("add_node", name="Coin", **GODOT), {"shape": "box", "color": "yellow"}),
        ("Add a light blue ball named Bubble.",
         _call("add_node", name="Bubble", **GODOT), {"shape": "sphere", "color": "lightblue"}),
        ("Add a dark purple cone named Hat.",
         _call("add_node", name="Hat", **GODOT), {"shape": "cone", "color": "purple"}),
        # Blender: planes for "four thin cylinders named Leg1, ..."; a sphere is uv_sphere.
        ("Make a brown cube named Top and four thin cylinders named Leg1, Leg2, Leg3 and Leg4.",
         _call("create_primitive", kind="plane", name="Leg3"), {"kind": "cylinder"}),
        ("Add a red sphere named Apple.", _call("create_primitive", kind="cube", name="Apple"),
         {"kind": "uv_sphere", "color": "red"}),
        # The words before the name, from after another part's naming (s23/5: the Pedestal
        # made as the Ball's uv sphere, copying its call).
        ("Create a red uv sphere named Ball of radius 0.5 m resting on a grey cube named "
         "Pedestal, 1 m on each side, on the ground.",
         _call("create_primitive", kind="uv_sphere", name="Pedestal", color="grey"),
         {"kind": "cube"}),
        # What the call already says alike, or a colour it gives, stays.
        ("Add a red sphere named Apple.",
         _call("create_primitive", kind="ico_sphere", name="Apple", color="#ff0000"), {}),
        ("Add a white sphere named lamp of radius 0.3.",
         _call("add_object", name="lamp", shape="sphere", color="white"), {}),
        # Nothing to read: no shape word, two of them, a name the request does not give,
        # a light, or a shape the tool has not got.
        ("Add a Camera named Eye.", _call("add_node", name="Eye", **GODOT), {}),
        ("Add a red box or sphere named Odd.", _call("add_node", name="Odd", **GODOT),
         {"color": "red"}),
        ("Add a red sphere named Ball.", _call("add_node", name="Other", **GODOT), {}),
        ("Add a red sphere named Ball and a point light named Lamp.",
         _call("add_node", scene="res://main.tscn", name="Lamp", type="OmniLight"), {}),
        ("Add a blue torus named Ring.", _call("add_node", name="Ring", **GODOT),
         {"color": "blue"}),
        # A mesh or a colour set its own way among Godot's properties: a second one would
        # clash (add_node refuses a shape whose mesh differs from the one given).
        ("Build a main scene with a yellow box named Block.",
         _call("add_node", name="Block", properties={"mesh": "SphereMesh()"}, **GODOT),
         {"color": "yellow"}),
        ("Add a yellow box named Block whose mesh is res://Block.mesh.",
         _call("add_node", name="Block", properties={"mesh": "res://Block.mesh"}, **GODOT),
         {"color": "yellow"}),
        # ... but a file the request does not name is made up (five new users' prompts:
        # "res://Crate.mesh", "res://cube/cube"): it says no shape.
        ("Build a main scene with a yellow box named Block.",
         _call("add_node", name="Block", properties={"mesh": "res://Block.mesh"}, **GODOT),
         {"shape": "box", "color": "yellow"}),
        # A colour written among the properties goes: the argument says the one asked
        # (s24/8: "a yellow cube named Target" made with a red Color among its properties).
        ("Make a main scene with a red cube named Target at the origin.",
         _call("add_node", name="Target", properties={"mesh": '"res://cube/cube"',
               "albedo_color": "Color( 1, 0, 0, 1 )"}, **GODOT),
         {"shape": "box", "color": "red", "properties": {"mesh": '"res://cube/cube"'}}),
        ("Build a main scene with a yellow box named Block.",
         _call("add_node", name="Block", properties={"albedo_color": "Color( 1, 1, 0, 1 )"},
               **GODOT), {"shape": "box", "color": "yellow", "properties": {}}),
        ("Make a main scene with a yellow cube named Target at the origin, a Camera named Cam "
         "at (0, 3, 8) looking at it.",
         _call("add_node", name="Target", properties={"mesh": "CubeMesh()",
               "color": "Color( 1, 0, 0, 1 )", "position": "Vector3( 0, 0, 0 )"}, **GODOT),
         {"color": "yellow", "properties": {"mesh": "CubeMesh()",
                                            "position": "Vector3( 0, 0, 0 )"}}),
        ("Build a main scene with a yellow box named Block.",
         _call("add_node", name="Block", shape="box", properties={"color": "yellow"}, **GODOT),
         {}),
        ("Build a main scene with a yellow box named Block.",
         _call("add_node", name="Block", shape="box", properties={"color": "red"}, **GODOT),
         {"color": "yellow", "properties": {}}),
        # a colour word of another colour is the colour asked; one of the same is kept
        ("Add a yellow cube named Target.",
         _call("add_object", name="Target", shape="box", color="red"), {"color": "yellow"}),
        ("Add a light grey cube named Target.",
         _call("add_object", name="Target", shape="box", color="Light Grey"), {}),
        # a material of the call's own is its colour
        ("Build a main scene with a yellow box named Block.",
         _call("add_node", name="Block", properties={"material_override": "res://gold.tres",
               "albedo_color": "Color( 1, 0, 0, 1 )"}, **GODOT), {"shape": "box"}),
    ],
)  # fmt: skip
def test_a_shape_made_with_the_shape_and_colour_the_request_gives(
    text: str, call: ToolCallPart, added: dict[str, Any]
) -> None:
    response = ModelResponse(parts=[call])
    mended = looks_as_asked(_ask(text, call.name), response)
    (got,) = mended.tool_calls
    assert got.arguments == {**call.arguments, **added}
    if not added:
        assert mended is response


@pytest.mark.parametrize(
    ("text", "call", "added"),
    [
        # Godot's add_node without a place (3 of 4 such calls on new users' prompts).
        ("Create a main scene with a Camera named Eye at (0, 2, 6), a DirectionalLight named "
         "Sun, and a red sphere named Ball at the origin.",
         _call("add_node", scene="res://main.tscn", name="Eye", type="Camera"),
         {"position": [0, 2, 6]}),
        ("Create a main scene whose root is a Node2D, with a Sprite named Player at (100, 200).",
         _call("add_node", scene="res://main.tscn", name="Player", type="Sprite"),
         {"position": [100, 200]}),
        # Blender's location; three.js's position, after which rest_on goes as above.
        ("Make a torus named Ring at (0, 0, 1.5).",
         _call("create_primitive", kind="torus", name="Ring"), {"location": [0, 0, 1.5]}),
        # Placed already (an argument, or a property), a point it aims at, several points,
        # or a tool that would refuse the point (three.js takes [x, y, z] only).
        ("Add a Sprite named Player at (100, 200).",
         _call("add_node", scene="res://main.tscn", name="Player", type="Sprite",
               properties={"translation": "Vector3( 100, 200, 0 )"}), {}),
        ("Add a camera named Cam at (6, -6, 4).",
         _call("place_camera", name="Cam", location=[5, -5, 3]), {}),
        ("Add a Camera named Eye looking at (0, 0, 1).",
         _call("add_node", scene="res://main.tscn", name="Eye", type="Camera"), {}),
        ("Make four red cylinders named p1, p2, p3 and p4 at (2, 0, 0), (0, 0, 2), (-2, 0, 0) "
         "and (0, 0, -2).", _call("add_object", name="p1", shape="cylinder"), {}),
        ("Add a box named crate at (2, 3).", _call("add_object", name="crate"), {}),
    ],
)  # fmt: skip
def test_a_part_the_request_puts_at_a_point_is_placed_there(
    text: str, call: ToolCallPart, added: dict[str, Any]
) -> None:
    response = ModelResponse(parts=[call])
    mended = placed_as_asked(_ask(text, call.name), response)
    (got,) = mended.tool_calls
    assert got.arguments == {**call.arguments, **added}
    if not added:
        assert mended is response


def test_a_point_filled_in_off_the_ground_then_does_not_rest() -> None:
    text = "Add a red sphere named sun of radius 1 at (0, 3, 0)."
    call = _call("add_object", name="sun", shape="sphere", color="red", rest_on="ground")
    (got,) = placed_as_asked(_ask(text, "add_object"), ModelResponse(parts=[call])).tool_calls
    assert got.arguments == {
        "name": "sun",
        "shape": "sphere",
        "color": "red",
        "position": [0, 3, 0],
    }


@pytest.mark.parametrize(
    ("text", "call", "kept"),
    [
        # Put at the point the request gives another part (the 1.5B model put the Ball at
        # the camera's point, s17/4): the call goes without that place.
        ("Make a red sphere named Ball of radius 1 resting on the ground and a camera named "
         "Cam at (6, -6, 4) that looks at it.",
         _call("create_primitive", kind="uv_sphere", name="Ball", location=[6, -6, 4],
               color="red", rest_on="ground"),
         {"kind": "uv_sphere", "name": "Ball", "color": "red", "rest_on": "ground"}),
        ("Add a box named crate and a point light named lamp at (0, 6, 0).",
         _call("add_object", name="crate", shape="box", position=[0, 6.0, 0]),
         {"name": "crate", "shape": "box"}),
        # Resting on itself (Grass on Grass, s17/6) is the toolkits' to read (a new object
        # goes on the ground): left, since the model copies its calls (with Grass's rest_on
        # dropped, its next call, for the Tent standing on Grass, had none either).
        ("Create a green plane named Grass 20 m across and a white cone named Tent on it.",
         _call("create_primitive", kind="plane", name="Grass", size=[20, 20], rest_on="Grass"),
         None),
        # Its own point, a point nobody was given, or a tool that needs the place: kept.
        ("Make a red sphere named Ball and a camera named Cam at (6, -6, 4).",
         _call("place_camera", name="Cam", location=[6, -6, 4]), None),
        ("Add a box named crate and a point light named lamp at (0, 6, 0).",
         _call("add_object", name="crate", position=[1, 0, 1]), None),
        ("Add a box named crate on the table.", _call("add_object", name="crate", rest_on="table"),
         None),
    ],
)  # fmt: skip
def test_a_part_is_not_put_at_another_parts_point(
    text: str, call: ToolCallPart, kept: dict[str, Any] | None
) -> None:
    response = ModelResponse(parts=[call])
    mended = placed_as_asked(_ask(text, call.name), response)
    if kept is None:
        assert mended is response
    else:
        assert mended.tool_calls[0].arguments == kept


def test_the_part_a_call_would_make_as_another_kind_before_any_call_made_it() -> None:
    text = "Create a cylinder named Can on the ground, and a point light named Bulb 2 m above it."
    request = _ask(text, "create_primitive", "place_light")
    plane = _call("create_primitive", kind="plane", name="Bulb")
    part = another_kind_unmade(request, [plane])
    assert part is not None and (part.kind, part.key) == ("name", "Bulb")
    assert part.clause == "a point light named Bulb 2 m above it"
    # The right kind, a name the request does not give, or a part a call already made.
    assert another_kind_unmade(request, [_call("place_light", type="POINT", name="Bulb")]) is None
    assert (
        another_kind_unmade(request, [_call("create_primitive", kind="cube", name="Box")]) is None
    )
    made = request.model_copy(
        update={"messages": [*request.messages, Message(role="assistant", parts=[plane])]}
    )
    assert another_kind_unmade(made, [plane]) is None


@pytest.mark.parametrize(
    ("text", "call", "added"),
    [
        # Godot's add_node for a part "on the ground" without rest_on (3 of 5 such calls).
        ("Create the main scene with a red cube named Crate standing on the ground and a "
         "camera that sees it.",
         _call("add_node", name="Crate", properties={"mesh": "CubeMesh()"}, **GODOT),
         {"rest_on": "ground"}),
        ("Put a white box named table on the ground.", _call("add_object", name="table"),
         {"rest_on": "ground"}),
        # Given already, said of another part, or a tool that takes no rest_on.
        ("Add a red cube named Crate standing on the ground.",
         _call("add_node", name="Crate", rest_on="Floor", **GODOT), {}),
        ("Add a box named Floor and a red cube named Crate on the ground.",
         _call("add_node", name="Floor", **GODOT), {}),
        ("Add a camera named Cam on the ground.", _call("place_camera", name="Cam", location=[0, -5, 1]),
         {}),
    ],
)  # fmt: skip
def test_a_part_on_the_ground_rests_on_it(
    text: str, call: ToolCallPart, added: dict[str, Any]
) -> None:
    mended = placed_as_asked(_ask(text, call.name), ModelResponse(parts=[call]))
    assert mended.tool_calls[0].arguments == {**call.arguments, **added}


@pytest.mark.parametrize(
    ("text", "name", "kept"),
    [
        # The 1.5B model named Godot's scene root after the first part the request names.
        ("Build a main scene with a blue cube named Player and attach a script to it.",
         "Player", False),
        ("Create a main scene whose root is a Node2D, with a Sprite named Player at (100, 200).",
         "Player", False),
        ("Create a main scene with a Camera named Eye at (0, 2, 6) and a DirectionalLight "
         "named Sun.", "Eye", False),
        # The request names the root, or the scene, so.
        ("Create a scene whose root is a Spatial named World.", "World", True),
        ("Create a main scene named Level with a red cube named Crate.", "Level", True),
        ("Make a scene with a root node called Hub.", "Hub", True),
        # A name the request does not give is left alone.
        ("Create a main scene with a red cube named Crate.", "Main", True),
    ],
)  # fmt: skip
def test_a_scene_root_is_not_given_the_name_of_a_part(text: str, name: str, kept: bool) -> None:
    call = _call("create_scene", path="res://main.tscn", root_type="Spatial", root_name=name)
    mended = side_name_as_asked(_ask(text, "create_scene", "add_node"), ModelResponse(parts=[call]))
    (after,) = mended.tool_calls
    assert ("root_name" in after.arguments) is kept
    assert {k: v for k, v in after.arguments.items() if k != "root_name"} == {
        "path": "res://main.tscn", "root_type": "Spatial"
    }  # fmt: skip
    # Through as_asked too, with a tool that makes nothing among those offered.
    assert as_asked(_ask(text, "create_scene"), ModelResponse(parts=[call])).tool_calls == [after]


@pytest.mark.parametrize(
    ("text", "new"),
    [
        ("Create three cubes named A, B and C in a row.", {"A": True, "B": True, "C": True}),
        ("Add two spheres of radius 0.5 named left and right.", {"left": True, "right": True}),
        ("Make a red sphere named Ball and a camera named Cam at (6, -6, 4).",
         {"Ball": True, "Cam": True}),
        # Parts the scene has.
        ("Make the object named lamp visible without moving it.", {"lamp": False}),
        ("Delete everything in the scene except the cube named Crate.", {"Crate": False}),
        ("There is a cube named Crate. Make it red.", {"Crate": False}),
        ("The scene has a sphere named Ball; move it up.", {"Ball": False}),
        ("Put a box named cube on top of the object named table.", {"cube": True, "table": False}),
    ],
)  # fmt: skip
def test_a_part_asked_for_as_new_or_as_one_there(text: str, new: dict[str, bool]) -> None:
    assert {name: asked_as_new(text, name) for name in new} == new


def _ran(call: ToolCallPart, text: str, error: bool = False) -> list[Message]:
    result = ToolResultPart(
        call_id=call.id, name=call.name, parts=[TextPart(text=text)], is_error=error
    )
    return [Message(role="assistant", parts=[call]), Message(role="tool", parts=[result])]


def test_a_call_that_needs_a_part_no_call_has_made() -> None:
    # New users' prompt s18/5 on Blender's real tools.
    text = (
        "Create three cubes named A, B and C in a row along the X axis, 3 m apart, all "
        "resting on the ground, then export them as row.glb."
    )
    tools = [SPECS[n] for n in ("create_primitive", "export_asset", "set_transform", "fit_view")]
    a = _call("create_primitive", kind="cube", name="A")
    messages = [Message.user(text), *_ran(a, '{"name":"A"}')]
    request = ModelRequest(messages=messages, tools=tools)
    export = _call("export_asset", path="row.glb", names=["A", "B", "C"])
    part = premature_part(request, [export])
    assert part is not None and (part.kind, part.key) == ("name", "B")
    assert "three cubes named A, B and C" in part.clause
    # A call that makes a missing part is what is needed; one on parts made needs nothing.
    assert premature_part(request, [_call("create_primitive", kind="cube", name="C")]) is None
    assert premature_part(request, [_call("set_transform", name="A", location=[0, 0, 1])]) is None
    # After a failure that names C, from a call that did not mean to make it.
    b = _call("create_primitive", kind="cube", name="B")
    missing = "export_asset failed: CommandError: no object named C (the scene has: A, B)"
    messages += [*_ran(b, '{"name":"B"}'), *_ran(export, missing, error=True)]
    after = ModelRequest(messages=messages, tools=tools)
    around = _call("export_asset", path="row.glb", names=["A", "B"])
    part = premature_part(after, [around])
    assert part is not None and part.key == "C"
    # A maker call that failed on C is left to the model to fix.
    c = _call("create_primitive", kind="cube", name="C", size=[-1])
    refused = [*messages[:-2], *_ran(c, "size must be positive: no object named C made", True)]
    assert premature_part(ModelRequest(messages=refused, tools=tools), [around]) is None
    # A part the scene has is worked on, not made.
    there = ModelRequest(
        messages=[Message.user("Frame the object named box and the cube named C.")], tools=tools
    )
    assert premature_part(there, [_call("fit_view", names=["box", "C"])]) is None
    # An argument that names a new thing on the way (Godot's root_name) is not a need.
    godot = ModelRequest(
        messages=[Message.user("Build a main scene with a blue cube named Player.")],
        tools=[SPECS["create_scene"], SPECS["add_node"]],
    )
    root = _call("create_scene", path="res://main.tscn", root_name="Player")
    assert premature_part(godot, [root]) is None


@pytest.mark.parametrize(
    ("text", "arguments"),
    [
        # A change of opacity is the call's to make, and so is the colour asked
        ("Add a red sphere named sun of radius 1 at (0, 3, 0).",
         {"name": "sun", "color": "red", "opacity": 0.5}),
        # ... and a colour the request gives after the name
        ("Add a green cone named tree, then make it yellow.", {"name": "tree", "color": "yellow"}),
        ("Add a cone named tree.", {"name": "tree", "color": "yellow"}),
        # A part the request gives a point of its own may go there.
        ("Add a red sphere named sun at (0, 3, 0) and a box named plate at (2, 0, 2).",
         {"name": "sun", "position": [0, 3, 0]}),
    ],
)  # fmt: skip
def test_a_change_to_a_new_part_is_the_calls_to_make(text: str, arguments: dict[str, Any]) -> None:
    call = _call("update_object", **arguments)
    request = _ask(text, "add_object", "update_object")
    assert as_asked(request, ModelResponse(parts=[call])).tool_calls == [call]


@pytest.mark.parametrize(
    ("text", "arguments", "colour"),
    [
        # s24/2: the green tree made yellow, the star's colour; s20/1's black post made
        # light grey; s16/4's orange donut made red. The call then changes nothing, and the
        # tool says so (Unchanged).
        ("Add a green cone named tree, 2 tall, on the ground, and a small yellow sphere "
         "named star on its tip.", {"name": "tree", "color": "yellow"}, "green"),
        ("Add a black cylinder named post, radius 0.1 and 2 tall, standing on the ground.",
         {"name": "post", "color": "lightgrey"}, "black"),
        ("Add an orange torus named donut at (0, 1, 0) and make sure the camera sees all of it.",
         {"name": "donut", "color": "Red", "position": [0, 1, 0]}, "orange"),
    ],
)  # fmt: skip
def test_a_change_keeps_the_colour_asked(text: str, arguments: dict[str, Any], colour: str) -> None:
    call = _call("update_object", **arguments)
    request = _ask(text, "add_object", "update_object")
    (after,) = as_asked(request, ModelResponse(parts=[call])).tool_calls
    assert after.arguments == {**arguments, "color": colour}
    assert after.id == call.id


def test_a_change_does_not_put_a_part_at_another_parts_point() -> None:
    # s17/4 on Blender's set_transform: the Ball sent to the camera's point.
    text = (
        "Make a red sphere named Ball of radius 1 resting on the ground and a camera named "
        "Cam at (6, -6, 4) looking at it."
    )
    request = _ask(text, "create_primitive", "set_transform", "place_camera")
    call = _call("set_transform", name="Ball", location=[6, -6, 4], scale=[1, 1, 1])
    (after,) = as_asked(request, ModelResponse(parts=[call])).tool_calls
    assert after.arguments == {"name": "Ball", "scale": [1, 1, 1]}
    # Cam's own point stays; so does a point the request does not give, and a call on a
    # part the request speaks of as there already.
    there = _ask("Move the sphere named Ball next to the camera named Cam at (6, -6, 4).",
                 "create_primitive", "set_transform", "place_camera")  # fmt: skip
    moved = _call("set_transform", name="Ball", location=[6, -6, 4])
    assert as_asked(there, ModelResponse(parts=[moved])).tool_calls == [moved]
    for arguments in (
        {"name": "Cam", "location": [6, -6, 4]},
        {"name": "Ball", "location": [1, 1, 1]},
    ):
        call = _call("set_transform", **arguments)
        assert as_asked(request, ModelResponse(parts=[call])).tool_calls == [call]


BALL_AND_CAM = (
    "Make a red sphere named Ball of radius 1 resting on the ground and a camera named Cam at "
    "(6, -6, 4) that looks at it."
)


@pytest.mark.parametrize(
    ("text", "call", "aim"),
    [
        # New users' prompt s17/4: the location copied into look_at, refused by Blender and
        # sent again; "it" is the part named before the camera.
        (BALL_AND_CAM, _call("place_camera", location=[6, -6, 4], look_at=[6, -6, 4],
                             name="Cam", make_active=True), "Ball"),
        # the same aim by set_transform, the camera's point read from the request
        (BALL_AND_CAM, _call("set_transform", name="Cam", look_at=[6, -6, 4]), "Ball"),
        ("Add a camera named Eye at (0, 2, 6) looking at (0, 0, 1).",
         _call("place_camera", location=[0, 2, 6], look_at=[0, 2, 6], name="Eye"), [0, 0, 1]),
        ("Put a camera named Top at (0, 0, 10) looking straight down at the origin.",
         _call("place_camera", location=[0, 0, 10], look_at=[0, 0, 10], name="Top"), [0, 0, 0]),
        ("Add a box named crate and a spot light named lamp at (0, 5, 2) pointing at crate.",
         _call("add_light", kind="spot", position=[0, 5, 2], target=[0, 5, 2]), "crate"),
        # nothing said of the aim: left to the tool's default
        ("Add a camera named Eye at (0, 2, 6).",
         _call("place_camera", location=[0, 2, 6], look_at=[0, 2, 6], name="Eye"), None),
        # aimed elsewhere, or at its own point with no point to compare: kept
        (BALL_AND_CAM, _call("place_camera", location=[6, -6, 4], look_at="Ball", name="Cam"),
         "Ball"),
        (BALL_AND_CAM, _call("set_transform", name="Ball", look_at=[0, 0, 0]), [0, 0, 0]),
    ],
)  # fmt: skip
def test_nothing_is_aimed_at_its_own_point(text: str, call: ToolCallPart, aim: object) -> None:
    response = ModelResponse(parts=[call])
    mended = aimed_as_asked(_ask(text, call.name), response)
    (got,) = mended.tool_calls
    assert got.arguments.get("look_at", got.arguments.get("target")) == aim
    others = {k: v for k, v in got.arguments.items() if k not in ("look_at", "target")}
    assert others == {k: v for k, v in call.arguments.items() if k not in ("look_at", "target")}
    if aim == call.arguments.get("look_at", call.arguments.get("target")):
        assert mended is response


@pytest.mark.parametrize(
    ("text", "call", "size"),
    [
        # three.js's cylinder is [r, h]: "3 tall" sent as the radius (new users' s22 base run)
        ("Put a green cylinder named pillar, 3 tall, on the ground and a white sphere named "
         "orb resting on top of it.",
         _call("add_object", name="pillar", shape="cylinder", size=[3, 1, 1]), [1, 3]),
        # Godot's size is [x, y, z] extents, y up: a height with no size, a radius as twice
        ("Make a main scene with a DirectionalLight named Sun, a Camera named Eye at (0, 4, "
         "10), and an orange cylinder named Tower, 3 tall, on the ground.",
         _call("add_node", name="Tower", shape="cylinder", **GODOT), [1, 3, 1]),
        ("Create a main scene with a grey box named Table, 2 by 1 by 1, standing on the "
         "ground, and a green sphere named Apple of radius 0.2 on top of it.",
         _call("add_node", name="Apple", shape="sphere", size=[0.2, 0.2, 0.2], **GODOT),
         [0.4, 0.4, 0.4]),
        ("Add a red cylinder named Post of radius 0.5 and height 4.",
         _call("add_node", name="Post", shape="cylinder", size=[0.5, 4, 0.5], **GODOT),
         [1, 4, 1]),
        # Blender: a cube is [x, y, z], Z up; a cylinder [radius, height]; a sphere [r, r, r]
        # a cube is as high as it is wide and deep: one extent is every edge
        ("Add a cube named Crate, 2 m high.",
         _call("create_primitive", kind="cube", name="Crate", size=[1, 1, 1]), [2, 2, 2]),
        ("Add a box named Crate, 2 m high.",
         _call("create_primitive", kind="cube", name="Crate", size=[1, 1, 1]), [1, 1, 2]),
        # s24/4: "2 m wide" sent as [2, 2, 0], refused (a cube takes 1 or 3 numbers) in a loop
        ("Add a cube named Base, 2 m wide, on the ground, and a cylinder named Column, 0.3 m "
         "in radius and 2 m tall, standing on top of the base.",
         _call("create_primitive", kind="cube", name="Base", size=[2, 2, 0]), [2, 2, 2]),
        ("Add a red cube named Box, 1.5 on each side.",
         _call("add_object", name="Box", shape="box"), [1.5, 1.5, 1.5]),
        ("Add a red cube named Box, 2 wide and 3 deep.",
         _call("add_object", name="Box", shape="box", size=[2, 1, 3]), [2, 1, 3]),
        ("Add a box named Crate, 2 m wide.",
         _call("create_primitive", kind="cube", name="Crate", size=[2, 2, 0]), [2, 2, 0]),
        # s24/2: "2 tall" sent as a cone [2, 0, 0] (three.js read it as radius 2, height 0,
        # and refused it): on a solid a zero is no dimension, the numbers left the size given
        ("Add a green cone named tree, 2 tall, on the ground, and a small yellow sphere named "
         "star on its tip.",
         _call("add_object", name="tree", shape="cone", size=[2, 0, 0]), [1, 2]),
        ("Add a green cone named tree, 2 tall, on the ground.",
         _call("add_object", name="tree", shape="cone", size=[0.5, 0, 2]), [0.5, 2]),
        ("Add a brown cylinder named Trunk, radius 0.2 m and 2 m tall, on the ground, and a "
         "green ico sphere named Crown of radius 1 m on top of it.",
         _call("create_primitive", kind="cylinder", name="Trunk", size=[2, 0.2]), [0.2, 2]),
        # read as the toolkits read it: [r, r, h]; a zero is no dimension (s16/6, s21/4), so
        # it goes (Blender reads [0.2, 0, 2] as [0.2, 2]; three.js would read radius 0.2,
        # height 0)
        ("Add a red cylinder named Pillar, 3 m tall, resting on the ground.",
         _call("create_primitive", kind="cylinder", name="Pillar", size=[0.5, 0.5, 3]),
         [0.5, 0.5, 3]),
        ("Add a brown cylinder named Trunk, radius 0.2 m and 2 m tall, on the ground.",
         _call("create_primitive", kind="cylinder", name="Trunk", size=[0.2, 0, 2]),
         [0.2, 2]),
        ("Add a blue cylinder named tower, radius 1 and height 5.",
         _call("add_object", name="tower", shape="cylinder", size=[1, 1, 4]), [1, 5]),
        # dimensions "A by B (by C)", for a call with no size, in order on extents
        ("Create a main scene with a green plane named Field, 20 by 20, and a white capsule "
         "named Hero standing on it.",
         _call("add_node", name="Field", shape="plane", **GODOT), [20, 0, 20]),
        ("Create a grey plane named Floor, 10 by 6, and a red cube named Box on it.",
         _call("create_primitive", kind="plane", name="Floor"), [10, 6]),
        ("Add a box named crate, 2 x 1 x 0.5, on the ground.",
         _call("add_object", name="crate", shape="box"), [2, 1, 0.5]),
        ("Add a box named crate, 2 by 1 by 0.5.",
         _call("add_object", name="crate", shape="box", size=[1, 1, 1]), [1, 1, 1]),
        ("Add a box named slab, 2 by 3.", _call("add_node", name="slab", shape="box", **GODOT),
         None),
        ("Add a cylinder named can, 2 by 3.",
         _call("add_object", name="can", shape="cylinder"), None),
        # what the call says alike, or nothing to read, is kept
        ("Add a brown cylinder named Trunk, radius 0.2 m and 2 m tall, on the ground, and a "
         "green ico sphere named Crown of radius 1 m on top of it.",
         _call("create_primitive", kind="ico_sphere", name="Crown", size=[1, 1, 1]),
         [1, 1, 1]),
        ("Create a main scene with a grey box named Table and a green sphere named Apple of "
         "radius 0.2 on top of it.", _call("add_node", name="Apple", **GODOT, properties={
             "mesh": "SphereMesh()", "size": "about this big"}), None),
        ("Add a box named Crate of radius 2.", _call("add_object", name="Crate", shape="box"),
         None),
        ("Add a red sphere named Ball.", _call("add_object", name="Ball", shape="sphere",
                                                size=[2]), [2]),
        ("Build a snowman: three white spheres named base, middle and head, of radius 1, 0.7 "
         "and 0.45, stacked on top of each other on the ground.",
         _call("add_object", name="middle", shape="sphere", size=[0.7]), [0.7]),
        ("Add a box named Tower, 3 tall or 4 tall.",
         _call("add_object", name="Tower", shape="box", size=[1, 1, 1]), [1, 1, 1]),
        ("Add a point light named Glow 2 m high.",
         _call("add_light", kind="point", name="Glow"), None),
        ("Add a torus named Ring, height 2.", _call("create_primitive", kind="torus",
                                                    name="Ring", size=[1, 1, 1]), [1, 1, 1]),
    ],
)  # fmt: skip
def test_a_shape_sized_as_the_request_gives_it(
    text: str, call: ToolCallPart, size: list[float] | None
) -> None:
    response = ModelResponse(parts=[call])
    mended = sized_as_asked(_ask(text, call.name), response)
    (got,) = mended.tool_calls
    assert got.arguments.get("size") == size
    assert {k: v for k, v in got.arguments.items() if k != "size"} == {
        k: v for k, v in call.arguments.items() if k != "size"
    }
    if size == call.arguments.get("size"):
        assert mended is response


@pytest.mark.parametrize(
    ("text", "properties", "shape", "size"),
    [
        # s21/7: the shape by its mesh class, the size as text among properties
        ("Create a main scene with a grey box named Table, 2 by 1 by 1, standing on the "
         "ground, and a green sphere named Apple of radius 0.2 on top of it.",
         {"mesh": "SphereMesh()", "size": "[0.2, 0.2, 0.2]"}, None, [0.4, 0.4, 0.4]),
        # s20/7: the shape both ways, the size as text
        ("Create a main scene with a green box named Field, 20 by 0.1 by 20, and a white "
         "sphere named Apple of radius 0.5 resting on it.",
         {"shape": "sphere", "size": "[0.5, 0.5, 0.5]"}, "sphere", [1, 1, 1]),
        # a Vector3, and a list
        ("Add an orange cylinder named Apple, 3 tall, on the ground.",
         {"size": "Vector3( 1, 1, 1 )"}, "cylinder", [1, 3, 1]),
        ("Add an orange cylinder named Apple, 3 tall, on the ground.",
         {"size": [1, 2, 1], "cast_shadow": "0"}, "cylinder", [1, 3, 1]),
        # s25/8: numbers with commas, no brackets (refused as a cylinder 3 wide and 1 tall)
        ("Make a main scene with a red cylinder named Apple, 3 tall, standing on the ground.",
         {"shape": "cylinder", "size": "3, 1, 1"}, "cylinder", [1, 3, 1]),
        # one bare number is the toolkit's to read (every edge)
        ("Add a box named Apple, 2 by 1 by 1.", {"size": "2"}, "box", None),
        # as asked already, or a mesh whose shape is not read: left as written
        ("Add a box named Apple, 2 by 1 by 1.", {"size": "[2, 1, 1]"}, "box", None),
        ("Add a sphere named Apple of radius 1.", {"mesh": "ArrayMesh()", "size": "[1, 1, 1]"},
         None, None),
    ],
)  # fmt: skip
def test_a_size_among_properties_is_read_and_mended_as_the_argument(
    text: str, properties: dict[str, Any], shape: str | None, size: list[float] | None
) -> None:
    call = _call("add_node", name="Apple", **GODOT, properties=properties)
    if shape is not None:
        call.arguments["shape"] = shape
    response = ModelResponse(parts=[call])
    mended = sized_as_asked(_ask(text, call.name), response)
    if size is None:
        assert mended is response
        return
    (got,) = mended.tool_calls
    assert got.arguments["size"] == size
    assert got.arguments["properties"] == {k: v for k, v in properties.items() if k != "size"}
    assert {k: v for k, v in got.arguments.items() if k not in ("size", "properties")} == {
        k: v for k, v in call.arguments.items() if k != "properties"
    }


@pytest.mark.parametrize(
    ("text", "call", "rest", "placed"),
    [
        # s22/4: Blender's Post "standing on" the floor plane, made ten metres above it;
        # resting on it with no point said, its location goes: centred on the floor
        ("Create a grey plane named Floor, 10 m wide, and a green cylinder named Post standing "
         "on it, then render the scene.",
         _call("create_primitive", kind="cylinder", name="Post", location=[0, 0, 10]), "Floor",
         False),
        # s22/1: the orb rested on the pillar as asked, but 3 m off it
        ("Put a green cylinder named pillar, 3 tall, on the ground and a white sphere named "
         "orb resting on top of it.",
         _call("add_object", name="orb", shape="sphere", rest_on="pillar",
               position=[0, 1.5, 3]), "pillar", False),
        ("Put a green cylinder named pillar, 3 tall, on the ground and a white sphere named "
         "orb resting on top of it.",
         _call("add_object", name="orb", shape="sphere", rest_on="ground"), "pillar", False),
        # s24/4: "standing on top of the base", the last words of the request, and the call's
        # own name as its support
        ("Add a cube named Base, 2 m wide, on the ground, and a cylinder named Column, 0.3 m "
         "in radius and 2 m tall, standing on top of the base.",
         _call("create_primitive", kind="cylinder", name="Column", location=[0, 0, 2],
               rest_on="Column"), "Base", False),
        # s24/2: "on its tip" is on the part named before, centred on it
        ("Add a green cone named tree, 2 tall, on the ground, and a small yellow sphere named "
         "star on its tip.",
         _call("add_object", name="star", shape="sphere", position=[0, 1, 1], rest_on="tree"),
         "tree", False),
        ("Make a green sphere named head of radius 0.5 sitting on a blue box named body, 1 "
         "wide, which stands on the ground.",
         _call("add_object", name="head", shape="sphere"), "body", False),
        ("Add a cube named Crate on the ground, then a cube named Lid stacked on top of Crate.",
         _call("add_node", name="Lid", shape="box", position=[0, 2, 0], **GODOT), "Crate",
         False),
        # a point or a side said keeps the place
        ("Add a table named T and a cup named Cup on it at (0.5, 1, 0).",
         _call("add_object", name="Cup", position=[0.5, 1, 0]), "T", True),
        ("Add a box named T and a box named Bit resting on it, on the left of its top.",
         _call("add_object", name="Bit", position=[-1, 1, 0]), "T", True),
        # kept: a rest of its own choosing, the ground asked for, nothing named to rest on
        ("Put a green cylinder named pillar on the ground and a white sphere named orb "
         "resting on top of it.",
         _call("add_object", name="orb", shape="sphere", rest_on="table", position=[0, 1, 3]),
         "table", True),
        ("Put a green cylinder named pillar on the ground and a white sphere named orb on the "
         "ground.", _call("add_object", name="orb", shape="sphere"), None, True),
        ("Add a red cube named Box on the left.", _call("add_object", name="Box"), None, True),
        ("Create a main scene with a green plane named Field, 20 by 20, and a white capsule "
         "named Hero standing on it.", _call("add_node", name="Hero", shape="capsule",
                                             properties={"rest_on": "Field"}, **GODOT), None,
         True),
        ("Put a camera named Cam on top of it.", _call("place_camera", name="Cam",
                                                      location=[0, 0, 5]), None, True),
    ],
)  # fmt: skip
def test_a_part_rests_on_the_part_the_request_puts_it_on(
    text: str, call: ToolCallPart, rest: str | None, placed: bool
) -> None:
    response = ModelResponse(parts=[call])
    request = _ask(text, call.name)
    assert rested_as_asked(request, response) is response  # the support is not made yet
    # once calls have made the other parts
    made = [_call("add_object", name=n) for n in named_in(text) if n != call.arguments["name"]]
    ran = [m for c in made for m in _ran(c, f"added {c.arguments['name']}")]
    request = request.model_copy(update={"messages": [*request.messages, *ran]})
    mended = rested_as_asked(request, response)
    (got,) = mended.tool_calls
    assert got.arguments.get("rest_on") == rest
    kept = ("rest_on",) if placed else ("rest_on", "position", "location")
    others = {k: v for k, v in got.arguments.items() if k not in kept}
    assert others == {k: v for k, v in call.arguments.items() if k not in kept}
    if not placed:
        assert not {"position", "location"} & set(got.arguments)
    if rest == call.arguments.get("rest_on") and placed:
        assert mended is response


def _made_then(text: str, made: list[str], call: ToolCallPart) -> ModelRequest:
    """The request after a successful add_object call for each of ``made``."""
    messages = [Message.system("Build the scene."), Message.user(text)]
    for name in made:
        add = _call("add_object", name=name, shape="box")
        done = ToolResultPart(call_id=add.id, name=add.name, parts=[TextPart(text="added")])
        messages += [Message(role="assistant", parts=[add]), Message(role="tool", parts=[done])]
    return ModelRequest(messages=messages, tools=[SPECS["add_object"], SPECS[call.name]])


@pytest.mark.parametrize(
    ("text", "made", "names", "framed"),
    [
        # s20/2 and s17/3: one of two framed for "frame both"
        ("Create a red box named car at (-3, 0, 0), a blue box named truck at (3, 0, 0), and "
         "frame both.", ["car", "truck"], ["truck"], ["car", "truck"]),
        ("Add two cubes named left and right, then frame both in the camera.",
         ["left", "right"], ["right"], ["left", "right"]),
        ("Add boxes named a, b and c and make sure the camera sees all of them.",
         ["a", "b", "c"], ["b", "floor"], ["a", "b", "c", "floor"]),
        # only parts made so far; one asked for; "all of it"; nothing said of all
        ("Add boxes named a, b and c, then frame all three.", ["a"], ["a"], None),
        ("Add an orange torus named donut and make sure the camera sees all of it.",
         ["donut"], ["donut"], None),
        ("Add boxes named a and b, then frame a.", ["a", "b"], ["a"], None),
    ],
)  # fmt: skip
def test_a_framing_call_frames_all_when_all_are_asked_for(
    text: str, made: list[str], names: list[str], framed: list[str] | None
) -> None:
    call = _call("fit_view", names=names, view="front")
    response = ModelResponse(parts=[call])
    mended = framed_as_asked(_made_then(text, made, call), response)
    if framed is None:
        assert mended is response
        return
    (got,) = mended.tool_calls
    assert got.arguments == {"names": framed, "view": "front"}


@pytest.mark.parametrize(
    ("text", "made", "call", "point"),
    [
        # s22/2: "2 apart" sent as 1 apart
        ("Make three blue boxes named a, b and c in a row along x, 2 apart, all on the ground.",
         {"a": [0, 0, 0]}, _call("add_object", name="b", shape="box", position=[1, 0.5, 0]),
         [2, 0.5, 0]),
        ("Make three blue boxes named a, b and c in a row along x, 2 apart, all on the ground.",
         {"a": [0, 0, 0], "b": [2, 0, 0]},
         _call("add_object", name="c", shape="box", position=[2, 0.5, 0]), [4, 0.5, 0]),
        # along z, from the first one's point; a call with no point gets one
        ("Add spheres named p and q, 3 apart along z.", {"p": [1, 1, 1]},
         _call("add_object", name="q", shape="sphere"), [1, 1, 4]),
        # the first part not made yet, the first part itself, points of their own, already so
        ("Add boxes named a and b, 2 apart.", {}, _call("add_object", name="b", shape="box",
                                                        position=[5, 0, 0]), None),
        ("Add boxes named a and b, 2 apart.", {"b": [0, 0, 0]},
         _call("add_object", name="a", shape="box", position=[9, 0, 0]), None),
        ("Add boxes named a and b, 2 apart, at (0, 0, 0) and (2, 0, 0).", {"a": [0, 0, 0]},
         _call("add_object", name="b", shape="box", position=[1, 0, 0]), None),
        ("Add boxes named a and b, 2 apart.", {"a": [0, 0, 0]},
         _call("add_object", name="b", shape="box", position=[2, 0, 0]), None),
        ("Add a box named a and a box named b, 2 apart.", {"a": [0, 0, 0]},
         _call("add_object", name="b", shape="box", position=[1, 0, 0]), None),
    ],
)  # fmt: skip
def test_parts_named_together_are_spaced_as_asked(
    text: str, made: dict[str, list[float]], call: ToolCallPart, point: list[float] | None
) -> None:
    messages = [Message.system("Build the scene."), Message.user(text)]
    for name, at in made.items():
        add = _call("add_object", name=name, shape="box", position=at)
        done = ToolResultPart(call_id=add.id, name=add.name, parts=[TextPart(text="added")])
        messages += [Message(role="assistant", parts=[add]), Message(role="tool", parts=[done])]
    request = ModelRequest(messages=messages, tools=[SPECS["add_object"]])
    response = ModelResponse(parts=[call])
    mended = spaced_as_asked(request, response)
    if point is None:
        assert mended is response
        return
    (got,) = mended.tool_calls
    assert got.arguments == {**call.arguments, "position": point}


SCENE = {"scene": "res://main.tscn"}


@pytest.mark.parametrize(
    ("text", "call", "kind"),
    [
        # s24/8, s17/9: Godot's class of the kind asked (Godot 4's names keep their suffix)
        ("Make a main scene with a yellow cube named Target at the origin and a spot light "
         "named Spot at (0, 5, 0) pointing down at it.",
         _call("add_node", name="Spot", type="DirectionalLight", **SCENE), "SpotLight"),
        ("Build a main scene with a yellow box named Block and an omni light named Bulb "
         "above it.", _call("add_node", name="Bulb", type="DirectionalLight", **SCENE),
         "OmniLight"),
        ("Add a point light named Glow.",
         _call("add_node", name="Glow", type="SpotLight3D", **SCENE), "OmniLight3D"),
        # three.js's kind (the words of its description), Blender's enum
        ("Create a blue cylinder named tower and a yellow point light named lamp at (0, 6, 0).",
         _call("add_light", name="lamp", kind="directional"), "point"),
        ("Add a blue cube named Box and a sun light named Sun above it.",
         _call("place_light", name="Sun", kind="point", location=[0, 0, 5]), "sun"),
        ("Add an orange ico sphere named Bead and a point light named Glow 1 m above it.",
         _call("place_light", name="Glow", kind="SUN", location=[0, 0, 5]), "point"),
        # the kind asked already, no kind said, two kinds said, not a light: kept
        ("Add a spot light named Beam.", _call("add_light", name="Beam", kind="spot"), None),
        ("Add a light named Key.", _call("add_light", name="Key", kind="point"), None),
        ("Add a sun or a spot light named Key.",
         _call("add_light", name="Key", kind="point"), None),
        ("Add a spot light named Key.",
         _call("add_node", name="Key", type="Camera", **SCENE), None),
        ("Add a red cube named Spot.",
         _call("add_node", name="Spot", type="MeshInstance", **SCENE), None),
        ("Add an area light named Panel.",
         _call("add_node", name="Panel", type="OmniLight", **SCENE), None),
    ],
)  # fmt: skip
def test_a_light_made_of_the_kind_asked(text: str, call: ToolCallPart, kind: str | None) -> None:
    response = ModelResponse(parts=[call])
    mended = light_as_asked(_ask(text, call.name), response)
    if kind is None:
        assert mended is response
        return
    (got,) = mended.tool_calls
    key = "type" if call.name == "add_node" else "kind"
    assert got.arguments == {**call.arguments, key: kind}
    assert as_asked(_ask(text, call.name), response).tool_calls[0].arguments[key] == kind


CAM_ASKED = (
    "Make a main scene with a yellow cube named Target at the origin, a Camera named Cam at "
    "(0, 3, 8) looking at it, and a spot light named Spot at (0, 5, 0) pointing down at it."
)


def _made_target(text: str) -> ModelRequest:
    """The request, after Target was made."""
    made = _call("add_node", name="Target", shape="box", **GODOT)
    request = _ask(text, "add_node")
    result = ToolResultPart(call_id=made.id, name="add_node", parts=[TextPart(text="added")])
    messages = [
        *request.messages,
        Message(role="assistant", parts=[made]),
        Message(role="tool", parts=[result]),
    ]
    return request.model_copy(update={"messages": messages})


@pytest.mark.parametrize(
    ("call", "aim"),
    [
        # s24/8: Godot's camera and light, aimed nowhere: look_at among their properties
        (_call("add_node", name="Cam", type="Camera", position=[0, 3, 8], **SCENE), "Target"),
        (_call("add_node", name="Spot", type="SpotLight", **SCENE,
               properties={"translation": "Vector3( 0, 5, 0 )"}), "Target"),
        # aimed its own way already (the toolkit reads "target"), or a shape: kept
        (_call("add_node", name="Cam", type="Camera", **SCENE,
               properties={"target": "Target"}), None),
        (_call("add_node", name="Target", type="MeshInstance", **SCENE), None),
    ],
)  # fmt: skip
def test_a_camera_or_light_asked_to_look_at_a_part_is_aimed_at_it(
    call: ToolCallPart, aim: str | None
) -> None:
    response = ModelResponse(parts=[call])
    mended = looking_as_asked(_made_target(CAM_ASKED), response)
    if aim is None:
        assert mended is response
        return
    (got,) = mended.tool_calls
    assert got.arguments["properties"] == {**call.arguments.get("properties", {}), "look_at": aim}
    assert {k: v for k, v in got.arguments.items() if k != "properties"} == {
        k: v for k, v in call.arguments.items() if k != "properties"
    }


def test_an_aim_at_a_name_the_request_never_gives_goes() -> None:
    # s23/7: the description's example, "look_at": "Box", copied onto the Ball and the Lamp
    asked = ("Create a main scene with a red sphere named Ball of radius 1 at (0, 1, 0) and "
             "an omni light named Lamp at (0, 4, 0).")  # fmt: skip
    for name, kind in (("Ball", "MeshInstance"), ("Lamp", "OmniLight")):
        call = _call("add_node", name=name, type=kind, **SCENE,
                     properties={"translation": "Vector3( 0, 4, 0 )", "look_at": "Box"})  # fmt: skip
        (got,) = looking_as_asked(_ask(asked, "add_node"), ModelResponse(parts=[call])).tool_calls
        assert got.arguments["properties"] == {"translation": "Vector3( 0, 4, 0 )"}
    # ... and a camera asked to look at a made part gets that part in its place
    cam = _call("add_node", name="Cam", type="Camera", **SCENE, properties={"target": "Box"})
    (got,) = looking_as_asked(_made_target(CAM_ASKED), ModelResponse(parts=[cam])).tool_calls
    assert got.arguments["properties"] == {"look_at": "Target"}
    # A part the request names, a point or the origin stays.
    for aim in ("Target", "target", "[0, 1, 0]", "Vector3( 0, 1, 0 )", "origin"):
        kept = _call("add_node", name="Cam", type="Camera", **SCENE, properties={"look_at": aim})
        response = ModelResponse(parts=[kept])
        assert looking_as_asked(_made_target(CAM_ASKED), response) is response, aim


def test_an_aim_at_a_part_not_made_or_at_a_point_or_unsaid() -> None:
    cam = _call("add_node", name="Cam", type="Camera", **SCENE)
    response = ModelResponse(parts=[cam])
    # Target not made yet: the toolkit would refuse the aim, so none is given
    assert looking_as_asked(_ask(CAM_ASKED, "add_node"), response) is response
    at_origin = "Make a main scene with a Camera named Cam at (0, 3, 8) looking at the origin."
    (got,) = looking_as_asked(_ask(at_origin, "add_node"), response).tool_calls
    assert got.arguments["properties"] == {"look_at": "[0, 0, 0]"}
    unsaid = "Make a main scene with a Camera named Cam at (0, 3, 8)."
    assert looking_as_asked(_ask(unsaid, "add_node"), response) is response
    # Blender's place_camera has an aim argument of its own: that argument (session 25),
    # and a call that gives it keeps it
    blender = _call("place_camera", name="Cam", location=[0, -6, 3])
    asked = "Add a camera named Cam at (0, -6, 3) looking at the origin."
    (got,) = looking_as_asked(
        _ask(asked, "place_camera"), ModelResponse(parts=[blender])
    ).tool_calls
    assert got.arguments == {**blender.arguments, "look_at": [0, 0, 0]}
    aimed = _call("place_camera", name="Cam", location=[0, -6, 3], look_at=[0, 0, 1])
    kept = ModelResponse(parts=[aimed])
    assert looking_as_asked(_ask(asked, "place_camera"), kept) is kept


def _after(text: str, *made: ToolCallPart) -> ModelRequest:
    """The request offering Godot's add_node, after these calls were made (each without an
    error)."""
    return _made_in(text, "add_node", *made)


GO = "Build a main scene whose root is a Control, with a Label named Title that says Hello and a Button named Go below it."  # fmt: skip
TITLE = _call("add_node", name="Title", type="Label", parent=".", properties={"text": "Hello"}, **SCENE)  # fmt: skip


@pytest.mark.parametrize(
    ("text", "made", "call", "changed"),
    [
        # s23/9 and s18/8: made inside the part above it
        (GO, TITLE, _call("add_node", name="Go", type="Button", parent="Title", **SCENE),
         {"parent": ".", "position": [0, 40]}),
        ("Make a main scene with a Label named Score showing 0 and a Button named Restart "
         "below it.", _call("add_node", name="Score", type="Label", parent=".", **SCENE),
         _call("add_node", name="Restart", type="Button", parent="Score",
               properties={"text": "Restart"}, **SCENE), {"parent": ".", "position": [0, 40]}),
        # s24/9: at the part's own place
        ("Build a main scene whose root is a Control with a Button named Play that says Play "
         "and a Label named Hint under it.",
         _call("add_node", name="Play", type="Button", parent=".", properties={"text": "Play"},
               **SCENE),
         _call("add_node", name="Hint", type="Label", parent=".", properties={"text": "Hint"},
               **SCENE), {"position": [0, 40]}),
        # below where the part above was placed, by name, its parent kept
        ("Make a Panel named Box with a Label named Top at (10, 10) and a Label named Low "
         "under Top.", _call("add_node", name="Top", type="Label", parent="Box",
                             properties={"rect_position": "Vector2( 10, 10 )"}, **SCENE),
         _call("add_node", name="Low", type="Label", parent="Top", **SCENE),
         {"parent": "Box", "position": [10, 50]}),
        # placed by the call already: only the parent
        (GO, TITLE, _call("add_node", name="Go", type="Button", parent="Title",
                          position=[0, 60], **SCENE), {"parent": "."}),
        (GO, TITLE, _call("add_node", name="Go", type="Button", parent=".", position=[0, 60],
                          **SCENE), None),
        # not flat parts, or the part above not made
        ("Add a green cone named tree on the ground and a brown cylinder named trunk under "
         "it.", _call("add_node", name="tree", type="MeshInstance", shape="cone", **SCENE),
         _call("add_node", name="trunk", type="MeshInstance", shape="cylinder", **SCENE),
         None),
        (GO, _call("add_node", name="Other", type="Label", **SCENE),
         _call("add_node", name="Go", type="Button", parent="Title", **SCENE), None),
    ],
)  # fmt: skip
def test_a_flat_part_below_another_is_made_beside_it_and_below_it(
    text: str, made: ToolCallPart, call: ToolCallPart, changed: dict[str, Any] | None
) -> None:
    response = ModelResponse(parts=[call])
    mended = below_as_asked(_after(text, made), response)
    if changed is None:
        assert mended is response
        return
    (got,) = mended.tool_calls
    assert got.arguments == {**call.arguments, **changed}


def _made_in(text: str, tool: str, *made: ToolCallPart) -> ModelRequest:
    """The request offering the maker ``tool``, after these calls were made."""
    request = _ask(text, tool)
    messages = list(request.messages)
    for call in made:
        result = ToolResultPart(call_id=call.id, name=call.name, parts=[TextPart(text="added")])
        messages += [Message(role="assistant", parts=[call]), Message(role="tool", parts=[result])]
    return request.model_copy(update={"messages": messages})


HEDGE = ("Create a green box named hedge, 5 long, 1 tall and 0.5 deep, on the ground, and a "
         "point light named lamp 2 above it.")  # fmt: skip
CAN = ("Add an orange cylinder named Can, 0.4 m in radius and 1.2 m tall, standing on the "
       "ground, and an area light named Soft above it.")  # fmt: skip
BLOCK = ("Build a main scene with a yellow box named Block resting on the ground and an omni "
         "light named Bulb above it.")  # fmt: skip
GLOW = ("Create a yellow cylinder named lamp, radius 0.3 and 1 tall, on the ground, with a "
        "point light named glow just above it.")  # fmt: skip


@pytest.mark.parametrize(
    ("text", "tool", "made", "call", "changed"),
    [
        # s25/3 (three.js): "2 above it" sent as a point 2 along z
        (HEDGE, "add_light", _call("add_object", name="hedge", shape="box"),
         _call("add_light", kind="point", name="lamp", position=[0, 1, 2], target="hedge"),
         {"above": "hedge", "gap": 2, "target": "hedge"}),
        # s23/2 (three.js): "just above it", no distance said: the toolkit's own gap
        (GLOW, "add_light", _call("add_object", name="lamp", shape="cylinder"),
         _call("add_light", kind="point", name="glow", position=[1, 1, 0]), {"above": "lamp"}),
        # s25/6 (Blender): at the can's top face
        (CAN, "place_light", _call("create_primitive", kind="cylinder", name="Can"),
         _call("place_light", kind="area", name="Soft", location=[0, 0, 1.2]), {"above": "Can"}),
        # s17/9 (Godot): inside the block; its rest_on goes too
        (BLOCK, "add_node", _call("add_node", name="Block", type="MeshInstance", **SCENE),
         _call("add_node", name="Bulb", type="OmniLight", rest_on="Block", **SCENE),
         {"above": "Block"}),
        # by name, and "1 m over"
        ("Add a red cube named Box on the ground and a point light named Key 1.5 m over Box.",
         "place_light", _call("create_primitive", kind="cube", name="Box"),
         _call("place_light", kind="point", name="Key", location=[3, 3, 3]),
         {"above": "Box", "gap": 1.5}),
    ],
)  # fmt: skip
def test_a_part_above_another_is_put_over_it_by_the_toolkit(
    text: str, tool: str, made: ToolCallPart, call: ToolCallPart, changed: dict[str, Any]
) -> None:
    from agentsdk_openai.local.placing import above_as_asked

    mended = above_as_asked(_made_in(text, tool, made), ModelResponse(parts=[call]))
    (got,) = mended.tool_calls
    expected = {
        k: v for k, v in call.arguments.items() if k not in ("position", "location", "rest_on")
    }
    assert got.arguments == {**expected, **changed}


@pytest.mark.parametrize(
    ("text", "tool", "made", "call"),
    [
        # the part it goes over not made yet: left to the call
        (HEDGE, "add_light", _call("add_object", name="other", shape="box"),
         _call("add_light", kind="point", name="lamp", position=[0, 3, 0])),
        # "above the ground" is a height, not a part
        ("Add a red cube named Box on the ground and a point light named Key 3 m above the "
         "ground.", "place_light", _call("create_primitive", kind="cube", name="Box"),
         _call("place_light", kind="point", name="Key", location=[0, 0, 3])),
        # nothing said of above; or above another part of the call's own choosing
        ("Add a red cube named Box and a point light named Key at (0, 0, 4).", "place_light",
         _call("create_primitive", kind="cube", name="Box"),
         _call("place_light", kind="point", name="Key", location=[0, 0, 4])),
        (HEDGE, "add_light", _call("add_object", name="hedge", shape="box"),
         _call("add_light", kind="point", name="lamp", above="post")),
        # a tool that takes no "above" (three.js add_object): left alone
        ("Add a red box named crate on the ground and a blue sphere named ball 2 above it.",
         "add_object", _call("add_object", name="crate", shape="box"),
         _call("add_object", name="ball", shape="sphere", position=[0, 3, 0])),
    ],
)  # fmt: skip
def test_what_is_not_put_over_a_part(
    text: str, tool: str, made: ToolCallPart, call: ToolCallPart
) -> None:
    from agentsdk_openai.local.placing import above_as_asked

    response = ModelResponse(parts=[call])
    assert above_as_asked(_made_in(text, tool, made), response) is response


@pytest.mark.parametrize(
    ("text", "tool", "call", "kept"),
    [
        # s25/8 and s25/9: filled in unasked, then refused
        ("Make a main scene with a red cylinder named Pole, 3 tall, standing on the ground, "
         "and a directional light named Sun.", "add_node",
         _call("add_node", name="Pole", type="MeshInstance", shape="cylinder", above=".", gap=1,
               rest_on="ground", **SCENE),
         {"name": "Pole", "type": "MeshInstance", "shape": "cylinder", "rest_on": "ground", **SCENE}),
        ("Build a main scene whose root is a Node2D with a Label named Score at (20, 20) that "
         "says 0.", "add_node",
         _call("add_node", name="Score", type="Label", position=[20, 20], above=".", gap=1,
               properties={"text": "0", "above": "."}, **SCENE),
         {"name": "Score", "type": "Label", "position": [20, 20], "properties": {"text": "0"},
          **SCENE}),
        (HEDGE.replace(" 2 above it", " at (0, 3, 0)"), "add_light",
         _call("add_light", kind="point", name="lamp", position=[0, 3, 0], above="hedge", gap=2),
         {"kind": "point", "name": "lamp", "position": [0, 3, 0]}),
    ],
)  # fmt: skip
def test_above_and_gap_the_request_never_asks_for_go(
    text: str, tool: str, call: ToolCallPart, kept: dict[str, Any]
) -> None:
    from agentsdk_openai.local.placing import above_as_asked

    mended = above_as_asked(_made_in(text, tool), ModelResponse(parts=[call]))
    (got,) = mended.tool_calls
    assert got.arguments == kept


STEP = (
    "Create a cube named Step, 1 m on each side, on the ground, then make it twice as wide along x."
)


@pytest.mark.parametrize(
    ("made", "change", "kept"),
    [
        # s25/5: made at [0, 0, 0] and rested; widened with that point again
        ({"location": [0, 0, 0], "rest_on": "ground"}, {"location": [0.0, 0.0, 0.0], "scale": [2, 1, 1]},
         {"scale": [2, 1, 1]}),
        # made there without a rest: the point is where it is, kept
        ({"location": [0, 0, 0]}, {"location": [0, 0, 0], "scale": [2, 1, 1]}, None),
        # another point: the call's own move, kept
        ({"location": [0, 0, 0], "rest_on": "ground"}, {"location": [1, 0, 0]}, None),
    ],
)  # fmt: skip
def test_a_change_does_not_put_a_rested_part_back_where_its_maker_call_said(
    made: dict[str, Any], change: dict[str, Any], kept: dict[str, Any] | None
) -> None:
    maker = _call("create_primitive", kind="cube", name="Step", size=[1, 1, 1], **made)
    request = _made_in(STEP, "create_primitive", maker)
    request = request.model_copy(update={"tools": [*request.tools, SPECS["set_transform"]]})
    response = ModelResponse(parts=[_call("set_transform", name="Step", **change)])
    mended = changed_as_asked(request, response)
    if kept is None:
        assert mended is response
        return
    (got,) = mended.tool_calls
    assert got.arguments == {"name": "Step", **kept}


@pytest.mark.parametrize(
    ("text", "call", "changed"),
    [
        # s25/9: no text in two runs of three
        ("Build a main scene whose root is a Node2D with a Label named Score at (20, 20) that "
         "says 0.", _call("add_node", name="Score", type="Label", position=[20, 20], **SCENE),
         {"properties": {"text": "0"}}),
        ("Build a main scene whose root is a Control, with a Label named Title that says Hello "
         "and a Button named Go below it.",
         _call("add_node", name="Title", type="Label", properties={"align": "1"}, **SCENE),
         {"properties": {"align": "1", "text": "Hello"}}),
        ("Make a Control scene with a Label named End with the text 'Game Over' at (10, 10).",
         _call("add_node", name="End", type="Label", **SCENE), {"properties": {"text": "Game Over"}}),
        # given already, another part shown, a camera, no words said: left alone
        ("Build a main scene with a Button named Play that says Play.",
         _call("add_node", name="Play", type="Button", properties={"text": "Start"}, **SCENE), None),
        ("Make a main scene with a red sphere named Ball and a Camera named Cam showing the "
         "ball.", _call("add_node", name="Cam", type="Camera", **SCENE), None),
        ("Make a main scene with a Label named Score at (20, 20).",
         _call("add_node", name="Score", type="Label", **SCENE), None),
    ],
)  # fmt: skip
def test_a_part_shows_the_words_the_request_gives_it(
    text: str, call: ToolCallPart, changed: dict[str, Any] | None
) -> None:
    from agentsdk_openai.local.as_asked import worded_as_asked

    response = ModelResponse(parts=[call])
    mended = worded_as_asked(_ask(text, "add_node"), response)
    if changed is None:
        assert mended is response
        return
    (got,) = mended.tool_calls
    assert got.arguments == {**call.arguments, **changed}


@pytest.mark.parametrize(
    ("text", "made", "call", "aim"),
    [
        # blender/key-light (session 25): no look_at, so aimed at the origin
        ("Add a sun light named Key at (4, -4, 8) pointing at the cube Crate.", None,
         _call("place_light", location=[4, -4, 8], kind="sun", name="Key"), {"look_at": "Crate"}),
        # s17/4's camera, "that looks at it": the ball made before it
        ("Make a red sphere named Ball of radius 1 resting on the ground and a camera named Cam "
         "at (6, -6, 4) that looks at it.", _call("create_primitive", kind="uv_sphere", name="Ball"),
         _call("place_camera", location=[6, -6, 4], name="Cam"), {"look_at": "Ball"}),
        ("Add a spot light named Key at (0, 5, 0) aimed at (1, 0, 1).", None,
         _call("add_light", kind="spot", name="Key", position=[0, 5, 0]), {"target": [1, 0, 1]}),
        # aimed by the call, at a part not made yet, or nothing said: left alone
        ("Add a sun light named Key at (4, -4, 8) pointing at the cube Crate.", None,
         _call("place_light", location=[4, -4, 8], name="Key", look_at=[0, 0, 1]), None),
        ("Add a camera named Cam at (6, -6, 4) looking at it and a red sphere named Ball.", None,
         _call("place_camera", location=[6, -6, 4], name="Cam"), None),
        ("Add a sun light named Key at (4, -4, 8).", None,
         _call("place_light", location=[4, -4, 8], name="Key"), None),
    ],
)  # fmt: skip
def test_a_camera_or_light_is_aimed_with_its_own_argument_as_asked(
    text: str, made: ToolCallPart | None, call: ToolCallPart, aim: dict[str, Any] | None
) -> None:
    request = _made_in(text, call.name, *([made] if made else []))
    response = ModelResponse(parts=[call])
    mended = looking_as_asked(request, response)
    if aim is None:
        assert mended is response
        return
    (got,) = mended.tool_calls
    assert got.arguments == {**call.arguments, **aim}
