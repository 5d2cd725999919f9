"""place_light(above=..., gap=...) on real bpy: the light goes centred over the world bounds of
the named object's evaluated geometry, gap metres over its top, and aims down at its centre.
Every expected point is computed here from the vertices and read back from the scene."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from agentsdk_blender import BlenderToolkit
from blender_calls import call, objects, ok, rotation

pytestmark = pytest.mark.anyio


async def python(kit: BlenderToolkit, code: str) -> Any:
    """The JSON a snippet of bpy code prints."""
    return json.loads((await ok(kit, "execute_python", code=code))["stdout"])


async def world_matrix(kit: BlenderToolkit, name: str) -> np.ndarray:
    code = f"import json\nprint(json.dumps([list(r) for r in bpy.data.objects[{name!r}].matrix_world]))"
    return np.array(await python(kit, code))


async def light_type(kit: BlenderToolkit, name: str) -> str:
    return str(await python(kit, f"print('\"' + bpy.data.objects[{name!r}].data.type + '\"')"))


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def assert_aims_at(matrix: np.ndarray, point: np.ndarray) -> None:
    """The object's world -Z axis points from where it stands to ``point``."""
    facing = unit(-matrix[:3, 2])
    assert np.linalg.norm(facing - unit(point - matrix[:3, 3])) < 1e-5, (facing, point)


async def can(kit: BlenderToolkit) -> None:
    """A fresh scene with a cylinder of radius 0.4, 1.2 m tall, standing on the ground."""
    await kit.reset()
    made = await ok(
        kit, "create_primitive", kind="cylinder", name="Can", size=[0.4, 1.2], rest_on="ground"
    )
    assert made["lowest_z"] == 0 and made["top_z"] == pytest.approx(1.2, abs=1e-6)


async def test_an_area_light_goes_1_m_over_the_can_and_aims_down_at_it(
    toolkit: BlenderToolkit,
) -> None:
    await can(toolkit)
    placed = await ok(toolkit, "place_light", kind="area", name="Soft", above="Can")
    assert placed["placed"] == "1 m above Can (top z=1.2): at (0, 0, 2.2)"
    assert placed["aimed_at"] == "Can (0, 0, 0.6)"
    # Read back from the scene, not from the text.
    scene = await objects(toolkit)
    assert scene["Soft"]["type"] == "LIGHT"
    assert scene["Soft"]["location"] == pytest.approx([0, 0, 2.2], abs=1e-6)
    measured = await ok(toolkit, "measure_object", name="Soft")  # a light: its world location
    assert measured["centre"] == pytest.approx([0, 0, 2.2], abs=1e-6)
    assert await light_type(toolkit, "Soft") == "AREA"
    matrix = await world_matrix(toolkit, "Soft")
    assert matrix[:3, 3] == pytest.approx([0, 0, 2.2], abs=1e-6)
    assert_aims_at(matrix, np.array([0, 0, 0.6]))
    assert unit(-matrix[:3, 2]) == pytest.approx([0, 0, -1], abs=1e-6)  # straight down
    assert set(scene) == {"Can", "Soft"}


async def test_gap_2_puts_it_2_m_over_the_top_moving_the_same_light(
    toolkit: BlenderToolkit,
) -> None:
    await can(toolkit)
    await ok(toolkit, "place_light", kind="area", name="Soft", above="Can")
    placed = await ok(toolkit, "place_light", kind="area", name="Soft", above="Can", gap=2)
    assert placed["placed"] == "2 m above Can (top z=1.2): at (0, 0, 3.2)"
    scene = await objects(toolkit)
    assert set(scene) == {"Can", "Soft"}  # moved, not a second light
    assert scene["Soft"]["location"] == pytest.approx([0, 0, 3.2], abs=1e-6)
    assert (await ok(toolkit, "measure_object", name="Soft"))["centre"] == pytest.approx(
        [0, 0, 3.2], abs=1e-6
    )
    assert_aims_at(await world_matrix(toolkit, "Soft"), np.array([0, 0, 0.6]))
    touching = await ok(toolkit, "place_light", kind="point", name="Soft", above="Can", gap=0)
    assert touching["placed"] == "0 m above Can (top z=1.2): at (0, 0, 1.2)"


async def test_a_moved_turned_arrayed_object_is_measured_by_its_world_bounds(
    toolkit: BlenderToolkit,
) -> None:
    """A 2 x 1 x 0.5 m slab, arrayed twice along its local X, turned and moved: neither its
    origin nor its unturned box is where the light goes; its evaluated world box is."""
    await toolkit.reset()
    turn, at = [0.0, 30.0, 45.0], np.array([3.0, -2.0, 1.0])
    await ok(
        toolkit, "create_primitive", kind="cube", name="Slab", size=[2, 1, 0.5],
        location=at.tolist(), rotation_degrees=turn,
    )  # fmt: skip
    await ok(toolkit, "add_modifier", name="Slab", kind="array", count=2)
    # The array's copy sits one box length (2 m) along local X: 16 corners.
    corners = np.array(
        [[x + 2 * k, y, z] for k in range(2) for x in (-1, 1) for y in (-0.5, 0.5)
         for z in (-0.25, 0.25)]
    )  # fmt: skip
    world = corners @ rotation(turn).T + at
    centre = (world.min(axis=0) + world.max(axis=0)) / 2
    expected = np.array([centre[0], centre[1], world[:, 2].max() + 0.5])
    assert np.linalg.norm(expected[:2] - at[:2]) > 0.5  # the origin would be far off
    placed = await ok(toolkit, "place_light", kind="spot", name="Key", above="Slab", gap=0.5)
    scene = await objects(toolkit)
    assert scene["Key"]["location"] == pytest.approx(expected.tolist(), abs=1e-5)
    assert scene["Slab"]["top_z"] == pytest.approx(world[:, 2].max(), abs=1e-5)
    measured = await ok(toolkit, "measure_object", name="Key")
    assert measured["centre"] == pytest.approx(expected.tolist(), abs=1e-5)
    assert placed["placed"].startswith("0.5 m above Slab (top z=")
    matrix = await world_matrix(toolkit, "Key")
    assert_aims_at(matrix, centre)
    assert unit(-matrix[:3, 2]) == pytest.approx(unit(centre - expected).tolist(), abs=1e-6)


async def test_a_location_given_too_is_replaced_and_said_so(toolkit: BlenderToolkit) -> None:
    await can(toolkit)
    placed = await ok(
        toolkit, "place_light", kind="area", name="Soft", location=[5, 5, 5], above="Can"
    )
    assert placed["placed"] == (
        "1 m above Can (top z=1.2): at (0, 0, 2.2); the location given, (5, 5, 5), was "
        "replaced by above"
    )
    assert (await objects(toolkit))["Soft"]["location"] == pytest.approx([0, 0, 2.2], abs=1e-6)


async def test_look_at_still_wins_and_without_above_the_origin_stays_the_default(
    toolkit: BlenderToolkit,
) -> None:
    await can(toolkit)
    await ok(toolkit, "create_primitive", kind="cube", name="Box", size=0.5, location=[2, 0, 0.25])
    aimed = await ok(toolkit, "place_light", name="Soft", above="Can", look_at="Box")
    assert aimed["aimed_at"] == "Box (2, 0, 0.25)"
    assert_aims_at(await world_matrix(toolkit, "Soft"), np.array([2, 0, 0.25]))
    plain = await ok(toolkit, "place_light", name="Sun", location=[4, -4, 8], gap=3)
    assert plain["aimed_at"] == "(0, 0, 0)" and "placed" not in plain  # gap alone: ignored
    assert_aims_at(await world_matrix(toolkit, "Sun"), np.zeros(3))


async def test_neither_location_nor_above_is_a_clear_error(toolkit: BlenderToolkit) -> None:
    await can(toolkit)
    before = await objects(toolkit)
    for arguments in ({}, {"above": ""}, {"above": "  ", "gap": 2}):
        outcome = await call(toolkit, "place_light", kind="area", name="Soft", **arguments)
        assert outcome.is_error, outcome.text
        assert "give location [x, y, z] or above" in outcome.text, outcome.text
    assert await objects(toolkit) == before


async def test_an_unknown_name_lists_the_scene_and_changes_nothing(
    toolkit: BlenderToolkit,
) -> None:
    await can(toolkit)
    await ok(toolkit, "place_light", kind="point", name="Lamp", location=[3, 0, 4])
    before = await objects(toolkit)
    typo = await call(toolkit, "place_light", kind="area", name="Soft", above="Cn")
    assert typo.is_error
    assert "above: no object named Cn (the scene has: Can, Lamp)" in typo.text, typo.text
    assert 'did you mean Can? Call place_light again with above="Can"' in typo.text
    new = await call(toolkit, "place_light", kind="area", name="Soft", above="Table")
    assert new.is_error and "above: no object named Table" in new.text
    assert 'create_primitive(kind="cube", name="Table")' in new.text
    # moving an existing light: it stays where it was
    moved = await call(toolkit, "place_light", kind="point", name="Lamp", above="Tabel")
    assert moved.is_error and "(the scene has: Can)" in moved.text  # the light left out
    ground = await call(toolkit, "place_light", name="Soft", above="the floor")
    assert ground.is_error and "give location [x, y, z] instead of above" in ground.text
    assert "create_primitive" not in ground.text
    assert await objects(toolkit) == before


async def test_the_light_itself_and_a_negative_gap_are_refused(toolkit: BlenderToolkit) -> None:
    await can(toolkit)
    await ok(toolkit, "place_light", kind="area", name="Soft", above="Can")
    before = await objects(toolkit)
    itself = await call(toolkit, "place_light", kind="area", name="Soft", above="Soft")
    assert itself.is_error and "'Soft' cannot go above itself" in itself.text, itself.text
    for gap in (-1, -0.01):
        negative = await call(
            toolkit, "place_light", kind="area", name="Glow", above="Can", gap=gap
        )
        assert negative.is_error and negative.kind == "invalid_arguments", negative.text
        assert "- gap:" in negative.text and "greater than or equal to 0" in negative.text
    assert await objects(toolkit) == before


async def test_the_schema_offers_above_and_gap_with_location_optional(
    toolkit: BlenderToolkit,
) -> None:
    tool = next(t for t in toolkit.tools() if t.name == "place_light")
    properties = tool.parameters["properties"]
    assert "location" not in tool.parameters.get("required", [])
    assert properties["above"]["type"] == "string"
    assert properties["gap"] == {
        "default": None, "description": "Metres above that object's top (default 1).",
        "minimum": 0, "type": "number",
    }  # fmt: skip


async def test_a_parented_light_moves_in_world_space_and_its_child_is_refused(
    toolkit: BlenderToolkit,
) -> None:
    """A light under a turned, 2x-scaled empty lands on the world point; an object parented to
    the light would move with it, so it cannot be what the light goes over."""
    await can(toolkit)
    await ok(toolkit, "place_light", kind="point", name="Lamp", location=[1, 1, 1])
    await ok(
        toolkit,
        "execute_python",
        code="o = bpy.data.objects\nrig = o.new('Rig', None)\n"
        "bpy.context.scene.collection.objects.link(rig)\n"
        "rig.location, rig.rotation_euler, rig.scale = (2, -1, 0.5), (0.3, 0, 0.7), (2, 2, 2)\n"
        "o['Lamp'].parent = rig\n"
        "tag = o.new('Tag', None)\nbpy.context.scene.collection.objects.link(tag)\n"
        "tag.parent = o['Lamp']\n",
    )
    placed = await ok(toolkit, "place_light", kind="point", name="Lamp", above="Can")
    assert placed["placed"] == "1 m above Can (top z=1.2): at (0, 0, 2.2)"
    matrix = await world_matrix(toolkit, "Lamp")
    assert matrix[:3, 3] == pytest.approx([0, 0, 2.2], abs=1e-5)
    assert_aims_at(matrix, np.array([0, 0, 0.6]))
    before = await objects(toolkit)
    child = await call(toolkit, "place_light", kind="point", name="Lamp", above="Tag")
    assert child.is_error and "it is parented to 'Lamp' and would move with it" in child.text
    assert await objects(toolkit) == before
