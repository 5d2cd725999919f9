"""``look_at`` (or ``target``) among add_node's and set_property's properties turns a camera
or a light to a node or a point, on the real Godot 3 engine: the engine's own measurement
of the node's axes afterwards says where it looks."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator

import pytest
from agentsdk_godot import GodotEngine, GodotToolkit
from godot_calls import call

pytestmark = pytest.mark.anyio

SCENE = "res://main.tscn"


async def done(toolkit: GodotToolkit, tool_name: str, /, **args: object) -> str:
    outcome = await call(toolkit, tool_name, **args)
    assert not outcome.is_error, outcome.text
    return outcome.text


async def looks_along(toolkit: GodotToolkit, path: str) -> tuple[float, float, float]:
    """The node's -Z axis in world space, as the engine measures it (unit length)."""
    basis = (await toolkit.measurements(SCENE)).node(path).basis
    assert basis is not None
    z = basis[2]
    length = math.sqrt(sum(c * c for c in z))
    return (-z[0] / length, -z[1] / length, -z[2] / length)


def towards(a: tuple[float, ...], b: tuple[float, ...]) -> tuple[float, float, float]:
    d = [q - p for p, q in zip(a, b, strict=True)]
    length = math.sqrt(sum(c * c for c in d))
    return (d[0] / length, d[1] / length, d[2] / length)


@pytest.fixture
async def toolkit(engine: GodotEngine) -> AsyncIterator[GodotToolkit]:
    async with GodotToolkit(engine=engine, groups=["core", "check"]) as tk:
        await done(tk, "create_scene", path=SCENE, main=True)
        await done(tk, "add_node", scene=SCENE, name="Target", type="MeshInstance",
                   shape="box", color="yellow", position=[0, 0, 0])  # fmt: skip
        yield tk


async def test_a_camera_and_a_spot_light_look_at_the_node_named(toolkit: GodotToolkit) -> None:
    # s24/8: "a Camera named Cam at (0, 3, 8) looking at it, and a spot light named Spot at
    # (0, 5, 0) pointing down at it"; the 1.5B model wrote "target": "Target".
    text = await done(toolkit, "add_node", scene=SCENE, name="Cam", type="Camera",
                      properties={"target": "Target"}, position=[0, 3, 8])  # fmt: skip
    assert "looking at Target (0, 0, 0): transform = Transform(" in text, text
    assert await looks_along(toolkit, "Cam") == pytest.approx(
        towards((0, 3, 8), (0, 0, 0)), abs=1e-5
    )
    m = await toolkit.measurements(SCENE)
    assert m.node("Cam").origin == pytest.approx((0, 3, 8))  # where it was put
    # The engine's camera sees the cube in the middle of its frame.
    corners = m.node("Target").screen
    assert corners and all(0 < x < 512 and 0 < y < 512 for x, y in corners), corners
    await done(toolkit, "add_node", scene=SCENE, name="Spot", type="SpotLight",
               properties={"look_at": "Target"}, position=[0, 5, 0])  # fmt: skip
    assert await looks_along(toolkit, "Spot") == pytest.approx((0, -1, 0), abs=1e-6)
    # a point, written as a list or a Vector3
    await done(toolkit, "add_node", scene=SCENE, name="Key", type="DirectionalLight",
               properties={"look_at": "Vector3( 4, 0, 0 )"}, position=[0, 4, 0])  # fmt: skip
    assert await looks_along(toolkit, "Key") == pytest.approx(
        towards((0, 4, 0), (4, 0, 0)), abs=1e-5
    )


async def test_set_property_turns_an_existing_node_and_a_rotated_parent_is_allowed_for(
    toolkit: GodotToolkit,
) -> None:
    await done(toolkit, "add_node", scene=SCENE, name="Rig", type="Spatial",
               properties={"rotation_degrees": "Vector3( 0, 90, 0 )"}, position=[2, 0, 0])  # fmt: skip
    await done(toolkit, "add_node", scene=SCENE, name="Cam", type="Camera", parent="Rig",
               position=[0, 2, 6])  # fmt: skip
    origin = (await toolkit.measurements(SCENE)).node("Rig/Cam").origin
    text = await done(toolkit, "set_property", scene=SCENE, node="Rig/Cam", property="look_at",
                      value="Target")  # fmt: skip
    assert "looking at Target" in text, text
    assert await looks_along(toolkit, "Rig/Cam") == pytest.approx(
        towards(origin, (0, 0, 0)), abs=1e-5
    )
    assert (await toolkit.measurements(SCENE)).node("Rig/Cam").origin == pytest.approx(origin)


async def test_a_node_is_aimed_at_by_its_name_alone(toolkit: GodotToolkit) -> None:
    # s20/7: the Ball made under the Field, the camera told to look at "Ball"
    await done(toolkit, "add_node", scene=SCENE, name="Ball", type="MeshInstance", shape="sphere",
               parent="Target", position=[0, 2, 0])  # fmt: skip
    text = await done(toolkit, "add_node", scene=SCENE, name="Cam", type="Camera",
                      properties={"look_at": "Ball"}, position=[0, 2, 6])  # fmt: skip
    assert "looking at Target/Ball (0, 2, 0)" in text, text
    assert await looks_along(toolkit, "Cam") == pytest.approx((0, 0, -1), abs=1e-5)


async def test_a_camera_put_nowhere_is_offered_a_place_back_from_what_it_looks_at(
    toolkit: GodotToolkit,
) -> None:
    # s17/7: "a camera named Eye that looks at it", sent with no place (so at the origin,
    # where the Planet is) again and again
    file = toolkit.project.file(SCENE)
    before = file.read_bytes()
    [found] = [t for t in toolkit.tools() if t.name == "add_node"]
    refused = await found.call({"scene": SCENE, "name": "Eye", "type": "Camera",
                                "properties": {"look_at": "Target"}})  # fmt: skip
    assert refused.is_error and file.read_bytes() == before
    assert refused.text.startswith("look_at: Eye stands at Target (0, 0, 0): it cannot look at "
                                   "where it is. Nothing was added. To add Eye looking at it "
                                   "from [0.0, 1.67, 5.0]: add_node("), refused.text  # fmt: skip
    assert refused.instead is not None and refused.instead["position"] == [0.0, 1.67, 5.0]
    await done(toolkit, "add_node", **refused.instead)
    m = await toolkit.measurements(SCENE)
    assert m.node("Eye").origin == pytest.approx((0, 1.67, 5), abs=1e-4)
    assert await looks_along(toolkit, "Eye") == pytest.approx(
        towards((0, 1.67, 5), (0, 0, 0)), abs=1e-5
    )
    corners = m.node("Target").screen
    assert corners and all(0 < x < 512 and 0 < y < 512 for x, y in corners), corners


async def test_an_aim_at_nothing_adds_nothing(toolkit: GodotToolkit) -> None:
    file = toolkit.project.file(SCENE)
    before = file.read_bytes()
    for aim, said in (("Nowhere", "look_at: no node 'Nowhere'"),
                      ("[0, 3, 8]", "look_at: Cam stands at (0, 3, 8)")):  # fmt: skip
        refused = await call(toolkit, "add_node", scene=SCENE, name="Cam", type="Camera",
                             properties={"look_at": aim}, position=[0, 3, 8])  # fmt: skip
        assert refused.is_error and said in refused.text, refused.text
        assert "Nothing was added." in refused.text, refused.text
        assert file.read_bytes() == before
    # An aim at no node is offered without it (the 1.5B model copied the description's
    # example, "look_at": "Box", onto a light that looks at nothing: s23/7).
    [found] = [t for t in toolkit.tools() if t.name == "add_node"]
    asked = {"scene": SCENE, "name": "Lamp", "type": "OmniLight", "position": [0, 4, 0],
             "properties": {"look_at": "Box", "shadow_enabled": "true"}}  # fmt: skip
    refused = await found.call(asked)
    assert refused.is_error and refused.instead is not None, refused.text
    assert refused.instead["properties"] == {"shadow_enabled": "true"}
    assert refused.text.endswith(f'To add Lamp without look_at: add_node(scene="{SCENE}", '
                                 'name="Lamp", type="OmniLight", parent=".", properties='
                                 '{"shadow_enabled": "true"}, position=[0, 4, 0])'), refused.text  # fmt: skip
    await done(toolkit, "add_node", **refused.instead)
