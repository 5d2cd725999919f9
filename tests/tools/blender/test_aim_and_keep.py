"""Goal-level aiming and "delete all but" on real bpy: ``look_at`` takes an object's name
(the centre of its evaluated geometry's world bounds, computed here from the vertices), and
``delete(keep=...)`` deletes every other object but what the kept ones need."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import trimesh
from agentsdk_blender import BlenderToolkit
from blender_calls import call, objects, ok, rotation

pytestmark = pytest.mark.anyio


async def python(kit: BlenderToolkit, code: str) -> str:
    return str((await ok(kit, "execute_python", code=code))["stdout"])


def box_centre(
    local: np.ndarray, degrees: list[float], scale: list[float], at: list[float]
) -> np.ndarray:
    """Centre of the world bounding box of vertices scaled, rotated, then moved."""
    world = (local * np.array(scale)) @ rotation(degrees).T + np.array(at)
    return (world.min(axis=0) + world.max(axis=0)) / 2


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def facing(placed: dict[str, Any]) -> np.ndarray:
    """The world direction of an unparented object's -Z axis, from its reported rotation."""
    return rotation(placed["rotation_degrees"]) @ np.array([0.0, 0.0, -1.0])


async def world_matrix(kit: BlenderToolkit, name: str) -> np.ndarray:
    code = f"import json\nprint(json.dumps([list(r) for r in bpy.data.objects[{name!r}].matrix_world]))"
    return np.array(json.loads(await python(kit, code)))


def text(value: np.ndarray) -> str:
    return "(" + ", ".join(f"{round(float(v), 4) + 0.0:g}" for v in value) + ")"


# --- aiming at an object by name --------------------------------------------------------------


async def test_a_light_aims_at_the_centre_of_a_turned_scaled_real_mesh(
    toolkit: BlenderToolkit, assimp_models: Path
) -> None:
    """assimp's scanned Wuson.stl, turned, stretched and moved: its world box centre is
    neither its origin nor the centre of its unturned box; the light's -Z axis points at it."""
    await toolkit.reset()
    path = assimp_models / "STL/Wuson.stl"
    [name] = (await ok(toolkit, "import_asset", path=str(path)))["objects"]
    turn, stretch, at = [70.0, -20.0, 15.0], [0.5, 1.5, 1.0], [2.0, -1.0, 1.5]
    await ok(toolkit, "set_transform", name=name, location=at, rotation_degrees=turn, scale=stretch)
    vertices = np.asarray(trimesh.load(path, force="mesh").vertices, np.float64)
    centre = box_centre(vertices, turn, stretch, at)
    assert np.linalg.norm(centre - np.array(at)) > 0.05  # aiming at the origin would be off
    light = await ok(
        toolkit, "place_light", name="Key", kind="sun", location=[4, -4, 8], look_at=name
    )
    assert np.linalg.norm(facing(light) - unit(centre - [4, -4, 8])) < 1e-4
    assert light["aimed_at"] == f"{name} {text(centre)}"
    assert light["location"] == [4, -4, 8]


async def test_a_camera_aims_at_an_arrayed_cube_by_its_evaluated_geometry(
    toolkit: BlenderToolkit,
) -> None:
    await toolkit.reset()
    turn, stretch, at = [10.0, 25.0, 40.0], [1.0, 2.0, 0.5], [1.0, 3.0, 0.7]
    await ok(toolkit, "create_primitive", kind="cube", name="Bar", size=1.0)
    await ok(toolkit, "add_modifier", name="Bar", kind="array", count=3)
    await ok(
        toolkit, "set_transform", name="Bar", location=at, rotation_degrees=turn, scale=stretch
    )
    # The array's copies sit at x + 0, 1, 2 m (offset relative to the 1 m cube): 24 corners.
    corners = np.array(
        [[x + k, y, z] for k in range(3) for x in (-0.5, 0.5) for y in (-0.5, 0.5)
         for z in (-0.5, 0.5)]
    )  # fmt: skip
    centre = box_centre(corners, turn, stretch, at)
    camera = await ok(toolkit, "place_camera", location=[-5, -9, 6], look_at="Bar")
    assert np.linalg.norm(facing(camera) - unit(centre - [-5, -9, 6])) < 1e-4
    assert camera["aimed_at"].startswith("Bar (")
    # The point form still works and says where it aimed.
    point = await ok(toolkit, "place_camera", location=[-5, -9, 6], look_at=[1, 2, 3])
    assert np.linalg.norm(facing(point) - unit(np.array([6.0, 11, -3]))) < 1e-4
    assert point["aimed_at"] == "(1, 2, 3)"


async def test_aiming_at_an_empty_and_a_light_uses_their_world_location(
    toolkit: BlenderToolkit,
) -> None:
    """An empty under a turned, 2x parent: its world location, worked out here, is the target;
    a camera parented to the same rig in quaternion mode is aimed through its world matrix."""
    await toolkit.reset()
    await ok(toolkit, "place_light", name="Lamp", kind="point", location=[3, 1, 4])
    await python(
        toolkit,
        "rig = bpy.data.objects.new('Rig', None)\n"
        "marker = bpy.data.objects.new('Marker', None)\n"
        "cam = bpy.data.objects.new('RigCam', bpy.data.cameras.new('RigCam'))\n"
        "for o in (rig, marker, cam):\n"
        "    bpy.context.scene.collection.objects.link(o)\n"
        "rig.location, rig.rotation_euler, rig.scale = (1, 2, 3), (0, 0, 0.7), (2, 2, 2)\n"
        "marker.parent, marker.location = rig, (1, 0.5, -1)\n"
        "cam.parent, cam.location, cam.rotation_mode = rig, (-3, -2, 1), 'QUATERNION'\n",
    )
    rig = np.eye(4)
    rig[:3, :3] = rotation([0, 0, math.degrees(0.7)]) * 2
    rig[:3, 3] = [1, 2, 3]
    marker = (rig @ [1, 0.5, -1, 1])[:3]
    camera = await ok(toolkit, "place_camera", name="Shot", location=[0, -8, 2], look_at="Marker")
    assert np.linalg.norm(facing(camera) - unit(marker - [0, -8, 2])) < 1e-4
    assert camera["aimed_at"] == f"Marker {text(marker)}"
    at_light = await ok(toolkit, "place_camera", name="Shot", location=[0, -8, 2], look_at="Lamp")
    assert np.linalg.norm(facing(at_light) - unit(np.array([3.0, 9, 2]))) < 1e-4
    assert at_light["aimed_at"] == "Lamp (3, 1, 4)"
    # The parented quaternion-mode camera: aimed, not moved.
    before = await world_matrix(toolkit, "RigCam")
    await ok(toolkit, "set_transform", name="RigCam", look_at="Lamp")
    after = await world_matrix(toolkit, "RigCam")
    assert after[:3, 3] == pytest.approx(before[:3, 3], abs=1e-5)
    assert np.linalg.norm(unit(-after[:3, 2]) - unit(np.array([3, 1, 4]) - after[:3, 3])) < 1e-4
    # "origin" is the point (0, 0, 0) when no object has that name.
    origin = await ok(toolkit, "set_transform", name="Shot", look_at="origin")
    assert np.linalg.norm(facing(origin) - unit(np.array([0.0, 8, -2]))) < 1e-4
    assert origin["aimed_at"] == "origin (0, 0, 0)"


async def test_bad_targets_are_refused_and_change_nothing(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    await ok(toolkit, "create_primitive", kind="cube", name="Crate", size=1.0, rest_on="ground")
    await ok(toolkit, "place_light", name="Key", location=[4, -4, 8], look_at="Crate")
    await ok(toolkit, "place_camera", location=[6, -6, 4], look_at="Crate")
    await python(
        toolkit,
        "tip = bpy.data.objects.new('Tip', None)\nbpy.context.scene.collection.objects.link(tip)\n"
        "tip.parent, tip.location = bpy.data.objects['Camera'], (0, 0, -2)\n",
    )
    before = await objects(toolkit)
    unknown = await call(toolkit, "place_light", name="Key", location=[1, 1, 9], look_at="Crat")
    assert unknown.is_error
    assert "look_at: no object named 'Crat'; give one of: Camera, Crate, Tip" in unknown.text
    assert "did you mean 'Crate'?" in unknown.text
    assert "or a point [x, y, z]" in unknown.text
    itself = await call(toolkit, "set_transform", name="Camera", look_at="Camera")
    assert itself.is_error and "'Camera' cannot look at itself" in itself.text
    child = await call(toolkit, "set_transform", name="Camera", look_at="Tip")
    assert child.is_error and "it is parented to 'Camera' and would turn with it" in child.text
    new = await call(toolkit, "place_camera", name="Extra", location=[1, 1, 1], look_at="Crat")
    assert new.is_error  # and no camera Extra is left behind (checked below)
    standing = await call(toolkit, "place_camera", location=[4, -4, 8], look_at="Key")
    assert standing.is_error and "Key (4, -4, 8) is where 'Camera' stands" in standing.text
    assert await objects(toolkit) == before  # nothing moved, nothing turned


# --- delete(keep=...) -------------------------------------------------------------------------


async def build_room(kit: BlenderToolkit) -> None:
    """Crate (with a boolean cutter and a child lid), a shelf holding a vase as its child under
    a turned 2x transform, a ball, a light, the scene camera (tracking an empty, Focus) and
    a second camera."""
    await kit.reset()
    await ok(kit, "create_primitive", kind="cube", name="Crate", size=1.0, rest_on="ground")
    await ok(kit, "create_primitive", kind="cylinder", name="Cutter", size=0.4, location=[0, 0, 1])
    await ok(kit, "add_modifier", name="Crate", kind="boolean", target="Cutter")
    await ok(kit, "create_primitive", kind="plane", name="Lid", size=1.0, location=[0, 0, 1.2])
    await ok(kit, "create_primitive", kind="cube", name="Shelf", size=1.0, location=[4, 0, 1])
    await ok(kit, "create_primitive", kind="cone", name="Vase", size=0.5, location=[0.2, 0, 0.8])
    await ok(kit, "create_primitive", kind="uv_sphere", name="Ball", location=[-3, 0, 1])
    await ok(kit, "place_light", name="Key", location=[4, -4, 8], look_at="Crate")
    await ok(kit, "place_camera", name="Side", location=[9, 0, 2], make_active=False)
    await ok(kit, "place_camera", name="Camera", location=[6, -6, 4], look_at="Crate")
    await python(
        kit,
        "o = bpy.data.objects\n"
        "o['Lid'].parent = o['Crate']\n"
        "o['Lid'].matrix_parent_inverse = o['Crate'].matrix_world.inverted()\n"
        "o['Shelf'].rotation_euler, o['Shelf'].scale = (0, 0, 0.5), (2, 2, 2)\n"
        "o['Vase'].parent = o['Shelf']\n"  # no parent inverse: the shelf's transform shows
        "focus = o.new('Focus', None)\nbpy.context.scene.collection.objects.link(focus)\n"
        "o['Camera'].constraints.new('TRACK_TO').target = focus\n",
    )


async def test_keep_deletes_everything_else_but_what_the_kept_need(
    toolkit: BlenderToolkit,
) -> None:
    await build_room(toolkit)
    before = await objects(toolkit)
    [vase_before] = await toolkit.measure_objects(["Vase"])
    result = await ok(toolkit, "delete", keep=["Crate", "Vase"])
    assert result["deleted"] == ["Ball", "Key", "Shelf", "Side"]
    assert result["kept"] == ["Camera", "Crate", "Cutter", "Focus", "Lid", "Vase"]
    assert result["also_kept"] == [
        "Camera: the scene camera (delete it by name to remove it)",
        "Cutter: used by Crate's boolean modifier",
        "Focus: used by Camera's Track To constraint",
        "Lid: child of Crate",
    ]
    assert result["reattached"] == [
        "Vase: its parent Shelf was deleted; now unparented, in the same place"
    ]
    after = await objects(toolkit)
    assert set(after) == set(result["kept"])
    # What stays looks as it did: the crate still cut (same triangles), the vase where it was.
    for name in ("Crate", "Cutter", "Lid", "Camera", "Focus"):
        assert after[name] == before[name], name
    [vase] = await toolkit.measure_objects(["Vase"])
    assert vase.bounds_min == pytest.approx(vase_before.bounds_min, abs=1e-5)
    assert vase.bounds_max == pytest.approx(vase_before.bounds_max, abs=1e-5)
    assert "parent" not in after["Vase"]  # unparented (None is left out of results)
    # The scene camera goes when it is named.
    assert (await ok(toolkit, "delete", names=["Camera"]))["deleted"] == ["Camera"]


async def test_a_child_of_a_deleted_parent_moves_up_without_moving(
    toolkit: BlenderToolkit,
) -> None:
    await build_room(toolkit)
    await python(
        toolkit,
        "o = bpy.data.objects\no['Shelf'].parent = o['Ball']\n",  # Ball > Shelf > Vase
    )
    [vase_before] = await toolkit.measure_objects(["Vase"])
    result = await ok(toolkit, "delete", names=["Shelf"])
    assert result == {
        "deleted": ["Shelf"],
        "reattached": ["Vase: its parent Shelf was deleted; now under Ball, in the same place"],
    }
    [vase] = await toolkit.measure_objects(["Vase"])
    assert vase.bounds_min == pytest.approx(vase_before.bounds_min, abs=1e-5)
    assert vase.bounds_max == pytest.approx(vase_before.bounds_max, abs=1e-5)
    assert (await objects(toolkit))["Vase"]["parent"] == "Ball"


async def test_bad_delete_requests_delete_nothing(toolkit: BlenderToolkit) -> None:
    await build_room(toolkit)
    before = await objects(toolkit)
    both = await call(toolkit, "delete", names=["Ball"], keep=["Crate"])
    assert both.is_error and "give names" in both.text and "not both" in both.text
    assert 'call delete(names=["Ball"])' in both.text and 'call delete(keep=["Crate"])' in both.text
    neither = await call(toolkit, "delete")
    assert neither.is_error and "or keep (delete every other object)" in neither.text
    unknown = await call(toolkit, "delete", keep=["Crate", "Crat"])
    assert unknown.is_error
    assert (
        "keep: no object named Crat (the scene has: Ball, Camera, Crate, Cutter, Focus,"
        in unknown.text
    )
    assert "did you mean Crate?" in unknown.text and "nothing was deleted" in unknown.text
    assert 'Call delete again with keep=["Crate"]' in unknown.text
    empty = await call(toolkit, "delete", keep=[])
    assert empty.is_error and empty.kind == "invalid_arguments" and "- keep:" in empty.text
    assert await objects(toolkit) == before


async def test_a_name_in_both_lists_is_kept(toolkit: BlenderToolkit) -> None:
    # The 1.5B model filled both fields: delete(names=["Crate"], keep=["Crate"]) for
    # "delete everything except Crate"; it is read as keep, not refused (or worse, obeyed).
    await build_room(toolkit)
    before = set(await objects(toolkit))
    result = await ok(toolkit, "delete", names=["Crate"], keep=["Crate"])
    after = set(await objects(toolkit))
    assert "Crate" in after and "Ball" not in after
    assert set(result["deleted"]) == before - after and "Ball" in result["deleted"]
