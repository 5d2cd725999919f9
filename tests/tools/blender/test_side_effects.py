"""Which Blender tools change the world (``side_effects=True``: a resumed run never runs
such a call twice, and the local tier policy lets the stronger model pick the next step),
checked on real bpy: every marked tool changes the scene or writes a file, every other tool
leaves both exactly as they were."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agentsdk_blender import BlenderToolkit
from agentsdk_blender.toolkit_base import GROUPS

pytestmark = pytest.mark.anyio

ASSIMP = Path("/usr/share/assimp/models")
GLB = ASSIMP / "glTF2/BoxTextured-glTF-Binary/BoxTextured.glb"
FBX = ASSIMP / "FBX/box.fbx"  # validated through Blender (converted in a clean scene)

# A new tool must be put in one of these two tables, with arguments to call it on the scene
# built below; the tests then check that the marking matches what the call does.
CHANGES: dict[str, list[dict[str, Any]]] = {
    "create_primitive": [{"kind": "cube", "name": "New"}],
    "set_transform": [{"name": "New", "location": [1, 2, 3]}, {"name": "New", "look_at": "Ball"}],
    "set_material": [{"name": "New", "color": "red"}],
    "add_modifier": [{"name": "New", "kind": "bevel"}],
    "delete": [{"names": ["New"]}, {"keep": ["Crate", "Ball"]}],  # keep: the light goes
    "place_camera": [{"location": [7, -7, 5], "name": "Side", "make_active": False}],
    "place_light": [
        {"location": [0, 0, 9], "name": "Top"},
        {"location": [3, 3, 3], "look_at": "Crate"},
    ],
    "fit_view": [{"names": ["Crate"]}],  # moves the scene camera
    "import_asset": [{"path": str(ASSIMP / "STL/triangle.stl")}],
    "export_asset": [{"path": "scene.glb"}],
    "render_passes": [{"name": "passes", "resolution": [32, 24]}],
    "execute_python": [{"code": "bpy.data.objects['Crate'].location.x += 1"}],
}
READS: dict[str, list[dict[str, Any]]] = {
    "scene_info": [{}],
    "render": [{"resolution": [48, 36], "views": ["camera", "top"]}],
    "compare_renders": [{"view": "camera"}],
    "measure_object": [{"name": "Crate"}],
    "measure_distance": [{"a": "Crate", "b": "Ball"}],
    "assert_dimensions": [{"name": "Crate", "expected": [1, 1, 1]}],
    "assert_rests_on": [{"name": "Ball", "support": "Crate"}],
    "assert_no_overlap": [{"a": "Crate", "b": "Ball"}],
    "assert_in_frame": [{"names": ["Crate"], "min_coverage": 0.01}],
    "validate_asset": [{"path": str(GLB)}, {"path": str(FBX)}],
}

# What a world-changing call would leave behind: every object with its transform, data,
# materials and modifiers, the scene camera, the render settings and each data pool's size.
FINGERPRINT = """
import json
d, scene = bpy.data, bpy.context.scene
objects = {
    o.name: [o.type, o.data.name if o.data else None, [list(v) for v in o.matrix_world],
             [m.name for m in o.modifiers], [s.material.name for s in o.material_slots if s.material],
             o.hide_render, o.parent.name if o.parent else None]
    for o in d.objects
}
materials = {m.name: list(m.diffuse_color) for m in d.materials}
pools = {k: len(getattr(d, k)) for k in ("meshes", "cameras", "lights", "worlds",
                                       "collections", "node_groups")}
# A render leaves Blender's "Render Result" buffer behind: not part of the scene, never saved.
pools["images"] = sorted(i.name for i in d.images if i.type != "RENDER_RESULT")
render = [scene.render.engine, scene.render.resolution_x, scene.render.resolution_y,
          scene.render.resolution_percentage, scene.view_settings.view_transform,
          scene.world.name if scene.world else None, scene.camera.name if scene.camera else None]
print(json.dumps([objects, materials, pools, render], sort_keys=True))
"""


async def run(kit: BlenderToolkit, tool_name: str, arguments: dict[str, Any]) -> str:
    tool = next(t for t in kit.tools() if t.name == tool_name)
    outcome = await tool.call(arguments, ctx=None)
    assert not outcome.is_error, (tool_name, outcome.text)
    return outcome.text


async def world(kit: BlenderToolkit) -> tuple[str, dict[str, tuple[int, int]]]:
    """The scene's fingerprint and the output folder's files (size, modification time)."""
    printed = json.loads(await run(kit, "execute_python", {"code": FINGERPRINT}))["stdout"]
    assert kit.output_dir is not None
    files = {
        str(f.relative_to(kit.output_dir)): (f.stat().st_size, f.stat().st_mtime_ns)
        for f in kit.output_dir.rglob("*")
        if f.is_file()
    }
    return printed, files


async def build(kit: BlenderToolkit) -> None:
    await kit.reset()
    calls: list[tuple[str, dict[str, Any]]] = [
        ("create_primitive", {"kind": "cube", "name": "Crate", "size": 1.0, "color": "brown",
                              "rest_on": "ground"}),
        ("create_primitive", {"kind": "uv_sphere", "name": "Ball", "size": 0.5,
                              "rest_on": "Crate"}),
        ("place_camera", {"location": [4, -4, 3], "look_at": [0, 0, 0.5]}),
        ("place_light", {"location": [3, -2, 6]}),
    ]  # fmt: skip
    for tool_name, arguments in calls:
        await run(kit, tool_name, arguments)


def test_every_tool_is_classified_and_marked_as_classified() -> None:
    tools = BlenderToolkit(groups=GROUPS).tools()
    names = {t.name for t in tools}
    assert not set(CHANGES) & set(READS)
    assert names == set(CHANGES) | set(READS), "classify the new tool in CHANGES or READS"
    assert {t.name for t in tools if t.side_effects} == set(CHANGES)
    # A prefix (two Blender toolkits in one agent) keeps the marking.
    prefixed = BlenderToolkit(groups=GROUPS, prefix="shop").tools()
    assert {t.name for t in prefixed if t.side_effects} == {f"shop_{n}" for n in CHANGES}


async def test_reading_tools_change_nothing(toolkit: BlenderToolkit) -> None:
    await build(toolkit)
    before = await world(toolkit)
    for tool_name, calls in READS.items():
        for arguments in calls:
            await run(toolkit, tool_name, arguments)
            assert await world(toolkit) == before, (tool_name, arguments)


async def test_each_marked_tool_changes_the_scene_or_writes_a_file(
    toolkit: BlenderToolkit,
) -> None:
    await build(toolkit)
    for tool_name, calls in CHANGES.items():
        for arguments in calls:
            before = await world(toolkit)
            await run(toolkit, tool_name, arguments)
            assert await world(toolkit) != before, (tool_name, arguments)
