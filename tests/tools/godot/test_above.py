"""add_node's ``above`` and ``gap`` on the real Godot 3 engine: a node put centred over
another, a gap above the top of its world box, read back from the scene file and from the
engine's own measurement of where the node is and which way it faces."""

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


def stored(toolkit: GodotToolkit, path: str, key: str) -> list[float]:
    """The numbers of a node's stored property, as the scene file has them."""
    value = toolkit.project.read_scene(SCENE).node(path).properties[key]
    return [float(v) for v in value.args]  # type: ignore[union-attr]


async def looks_along(toolkit: GodotToolkit, path: str) -> tuple[float, float, float]:
    """The node's -Z axis in world space, as the engine measures it (unit length)."""
    basis = (await toolkit.measurements(SCENE)).node(path).basis
    assert basis is not None
    z = basis[2]
    length = math.sqrt(sum(c * c for c in z))
    return (-z[0] / length, -z[1] / length, -z[2] / length)


@pytest.fixture
async def toolkit(engine: GodotEngine) -> AsyncIterator[GodotToolkit]:
    async with GodotToolkit(engine=engine, groups=["core", "check"]) as tk:
        await done(tk, "create_scene", path=SCENE, main=True)
        await done(tk, "add_node", scene=SCENE, name="Block", type="MeshInstance",
                   shape="box", size=[2, 1, 2], rest_on="ground")  # fmt: skip
        yield tk


async def test_a_light_goes_centred_over_the_block_gap_above_its_top(
    toolkit: GodotToolkit,
) -> None:
    # "an omni light named Bulb 2 above the block": the block's top is at y=1
    text = await done(toolkit, "add_node", scene=SCENE, name="Bulb", type="OmniLight",
                      above="Block", gap=2)  # fmt: skip
    assert "; 2 above Block (top y=1): translation = Vector3( 0, 3, 0 )" in text, text
    assert stored(toolkit, "Bulb", "translation") == pytest.approx([0, 3, 0])
    m = await toolkit.measurements(SCENE)
    assert m.node("Bulb").origin == pytest.approx((0, 3, 0), abs=1e-6)
    # an OmniLight shines every way: it is not turned
    basis = m.node("Bulb").basis
    assert basis is not None
    assert [c for axis in basis for c in axis] == pytest.approx([1, 0, 0, 0, 1, 0, 0, 0, 1])
    assert "transform" not in toolkit.project.read_scene(SCENE).node("Bulb").properties
    # the default gap is 1; the name in another letter case is the node
    text = await done(toolkit, "add_node", scene=SCENE, name="Lamp", type="OmniLight",
                      above="block")  # fmt: skip
    assert "1 above Block (top y=1): translation = Vector3( 0, 2, 0 )" in text, text
    assert (await toolkit.measurements(SCENE)).node("Lamp").origin == pytest.approx(
        (0, 2, 0), abs=1e-6
    )
    # above and gap written among properties are the arguments
    text = await done(toolkit, "add_node", scene=SCENE, name="Glow", type="OmniLight",
                      properties={"above": "Block", "gap": "0.5"})  # fmt: skip
    assert "0.5 above Block (top y=1): translation = Vector3( 0, 1.5, 0 )" in text, text


async def test_an_offset_turned_block_is_measured_by_its_world_box(
    toolkit: GodotToolkit,
) -> None:
    # A 2 x 1 x 2 box at (2, 1, -1) turned 45 degrees about z: its world box reaches
    # (2 sin 45 + 1 cos 45) / 2 = 1.0607 above its centre, not the 0.5 of its mesh.
    await done(toolkit, "add_node", scene=SCENE, name="Tilted", type="MeshInstance",
               shape="box", size=[2, 1, 2], position=[2, 1, -1],
               properties={"rotation_degrees": "Vector3( 0, 0, 45 )"})  # fmt: skip
    top = 1 + 1.5 * math.sqrt(0.5)
    text = await done(toolkit, "add_node", scene=SCENE, name="Bulb", type="OmniLight",
                      above="Tilted", gap=1)  # fmt: skip
    assert "1 above Tilted (top y=2.06): translation = Vector3( 2, 3.06066, -1 )" in text, text
    m = await toolkit.measurements(SCENE)
    box = m.node("Tilted")
    assert box.max is not None and box.max[1] == pytest.approx(top, abs=1e-4)
    assert m.node("Bulb").origin == pytest.approx(
        (box.centre[0], box.max[1] + 1, box.centre[2]), abs=1e-5
    )
    assert m.node("Bulb").origin == pytest.approx((2, top + 1, -1), abs=1e-5)
    # A box turned about y is measured by its world box too: 45 degrees about y and off
    # the centre in x and z, a 2 x 1 x 2 box still has its top 0.5 above its centre.
    await done(toolkit, "add_node", scene=SCENE, name="Crate", type="MeshInstance",
               shape="box", size=[2, 1, 2], position=[-3, 0.5, 4],
               properties={"rotation_degrees": "Vector3( 0, 45, 0 )"})  # fmt: skip
    await done(toolkit, "add_node", scene=SCENE, name="Over", type="OmniLight", above="Crate")
    assert (await toolkit.measurements(SCENE)).node("Over").origin == pytest.approx(
        (-3, 2, 4), abs=1e-5
    )


async def test_under_a_moved_turned_scaled_parent_it_ends_at_the_world_point(
    toolkit: GodotToolkit,
) -> None:
    await done(toolkit, "add_node", scene=SCENE, name="Rig", type="Spatial", position=[3, 1, -2],
               properties={"rotation_degrees": "Vector3( 0, 90, 30 )",
                           "scale": "Vector3( 2, 2, 2 )"})  # fmt: skip
    text = await done(toolkit, "add_node", scene=SCENE, name="Bulb", type="OmniLight",
                      parent="Rig", above="Block", gap=1.5)  # fmt: skip
    assert "1.5 above Block (top y=1): translation = Vector3( " in text, text
    m = await toolkit.measurements(SCENE)
    assert m.node("Rig/Bulb").origin == pytest.approx((0, 2.5, 0), abs=1e-5)
    # the translation is in the parent's frame, not the world's
    assert stored(toolkit, "Rig/Bulb", "translation") != pytest.approx([0, 2.5, 0], abs=0.1)
    # A node added under the block itself: the block's box leaves out the new node (a tall
    # post of 1 x 4 x 1, which would reach y=2.5 at the block's origin).
    await done(toolkit, "add_node", scene=SCENE, name="Post", type="MeshInstance",
               shape="box", size=[1, 4, 1], parent="Block", above="Block", gap=0)  # fmt: skip
    m = await toolkit.measurements(SCENE)
    assert m.node("Block/Post").origin == pytest.approx((0, 1, 0), abs=1e-6)
    assert stored(toolkit, "Block/Post", "translation") == pytest.approx([0, 0.5, 0])


async def test_a_spot_light_a_sun_and_a_camera_over_the_block_face_down_at_it(
    toolkit: GodotToolkit,
) -> None:
    text = await done(toolkit, "add_node", scene=SCENE, name="Spot", type="SpotLight",
                      above="Block", gap=3)  # fmt: skip
    assert "3 above Block (top y=1): transform = Transform( " in text, text
    assert "facing down at Block's centre (0, 0.5, 0)" in text, text
    assert await looks_along(toolkit, "Spot") == pytest.approx((0, -1, 0), abs=1e-6)
    assert stored(toolkit, "Spot", "transform")[9:] == pytest.approx([0, 4, 0])
    assert (await toolkit.measurements(SCENE)).node("Spot").origin == pytest.approx(
        (0, 4, 0), abs=1e-6
    )
    for name, cls in (("Sun", "DirectionalLight"), ("Eye", "Camera")):
        await done(toolkit, "add_node", scene=SCENE, name=name, type=cls, above="Block")
        assert await looks_along(toolkit, name) == pytest.approx((0, -1, 0), abs=1e-6)
        assert (await toolkit.measurements(SCENE)).node(name).origin == pytest.approx(
            (0, 2, 0), abs=1e-6
        )
    # Turned by the call itself: left as asked (a rotation), or aimed where look_at says.
    await done(toolkit, "add_node", scene=SCENE, name="Side", type="SpotLight", above="Block",
               properties={"rotation_degrees": "Vector3( 0, 90, 0 )"})  # fmt: skip
    assert await looks_along(toolkit, "Side") == pytest.approx((-1, 0, 0), abs=1e-6)
    await done(toolkit, "add_node", scene=SCENE, name="Aside", type="SpotLight", above="Block",
               gap=2, properties={"look_at": "[4, 0, 0]"})  # fmt: skip
    assert await looks_along(toolkit, "Aside") == pytest.approx((0.8, -0.6, 0), abs=1e-6)
    # A node that draws nothing (a light) is taken at its origin: a camera over the Sun
    text = await done(toolkit, "add_node", scene=SCENE, name="High", type="Camera",
                      above="Sun", gap=2)  # fmt: skip
    assert "2 above Sun (draws nothing: its origin y=2)" in text, text
    assert (await toolkit.measurements(SCENE)).node("High").origin == pytest.approx(
        (0, 4, 0), abs=1e-6
    )
    assert await looks_along(toolkit, "High") == pytest.approx((0, -1, 0), abs=1e-6)


async def test_a_position_given_too_is_replaced_and_said_so(toolkit: GodotToolkit) -> None:
    text = await done(toolkit, "add_node", scene=SCENE, name="Bulb", type="OmniLight",
                      above="Block", position=[5, 5, 5])  # fmt: skip
    assert "position Vector3( 5, 5, 5 ) replaced by above" in text, text
    assert "translation = Vector3( 5, 5, 5 )" not in text, text
    assert stored(toolkit, "Bulb", "translation") == pytest.approx([0, 2, 0])
    text = await done(toolkit, "add_node", scene=SCENE, name="Lamp", type="OmniLight",
                      above="Block", properties={"translation": "Vector3( 4, 4, 4 )"})  # fmt: skip
    assert "translation Vector3( 4, 4, 4 ) replaced by above" in text, text
    m = await toolkit.measurements(SCENE)
    assert m.node("Bulb").origin == pytest.approx((0, 2, 0), abs=1e-6)
    assert m.node("Lamp").origin == pytest.approx((0, 2, 0), abs=1e-6)
    # a gap without above is left unused: the node stands where its position says
    text = await done(toolkit, "add_node", scene=SCENE, name="Fill", type="OmniLight",
                      position=[3, 1, 0], gap=2)  # fmt: skip
    assert "above" not in text and "gap" not in text, text
    assert stored(toolkit, "Fill", "translation") == pytest.approx([3, 1, 0])


async def test_refused_above_adds_nothing(toolkit: GodotToolkit) -> None:
    file = toolkit.project.file(SCENE)
    before = file.read_bytes()

    async def refused(said: str, **args: object) -> dict[str, object] | None:
        outcome = await call(toolkit, "add_node", scene=SCENE, name="Bulb", **args)
        assert outcome.is_error and said in outcome.text, outcome.text
        assert "Nothing was added." in outcome.text, outcome.text
        assert file.read_bytes() == before
        return outcome.instead

    offer = await refused("above and rest_on both place the node: give one or the other",
                          type="OmniLight", above="Block", rest_on="Block")  # fmt: skip
    assert offer is not None and offer["above"] == "Block" and "rest_on" not in offer
    offer = await refused("above and rest_on both place the node", type="MeshInstance",
                          shape="box", above="Block", rest_on="Block")  # fmt: skip
    assert offer is not None and offer["rest_on"] == "Block" and "above" not in offer
    await refused("above: no node 'Nowhere' in the scene (nodes: Block).",
                  type="OmniLight", above="Nowhere")  # fmt: skip
    offer = await refused("gap is the distance above the node's top, 0 or more (default 1), "
                          "not -2.", type="OmniLight", above="Block", gap=-2)  # fmt: skip
    assert offer is not None and offer["above"] == "Block" and "gap" not in offer
    await refused("above is for 3D nodes (Spatial and the classes that inherit it): Bulb "
                  "would be a Label", type="Label", above="Block")  # fmt: skip
    # nothing is over a 2D node in 3D
    await done(toolkit, "add_node", scene=SCENE, name="Score", type="Label")
    before = file.read_bytes()
    await refused("above: Score is a Label, a Control (2D user interface), not a 3D node",
                  type="OmniLight", above="Score")  # fmt: skip
