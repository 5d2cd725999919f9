"""BlenderToolkit through its tools, as a model calls them, against real bpy."""

from __future__ import annotations

import io
import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
import trimesh
from agentsdk.testing import ScriptedModel
from agentsdk_blender import BlenderToolkit, BlenderWorker
from agentsdk_blender.protocol import ResetResult
from blender_calls import call, ok
from PIL import Image as PILImage

from agentsdk import Agent, ImagePart, ToolCallPart

pytestmark = pytest.mark.anyio


async def build_red_cube_scene(kit: BlenderToolkit) -> None:
    await kit.connection.call("reset", None, ResetResult)
    await ok(kit, "create_primitive", kind="cube", name="Crate", size=2.0, location=[0, 0, 1])
    await ok(kit, "set_material", name="Crate", base_color=[0.9, 0.05, 0.05, 1.0], roughness=0.6)
    await ok(kit, "place_camera", location=[6, -6, 5], look_at=[0, 0, 1])
    await ok(kit, "place_light", location=[4, -3, 8], look_at=[0, 0, 0], kind="sun", energy=4.0)


def centre_pixel(image: ImagePart) -> tuple[int, int, int]:
    pil = PILImage.open(io.BytesIO(image.data)).convert("RGB")
    return pil.getpixel((pil.width // 2, pil.height // 2))  # type: ignore[return-value]


def is_red(rgb: tuple[int, int, int]) -> bool:
    r, g, b = rgb
    return r > 60 and r > 2 * g and r > 2 * b


@pytest.mark.parametrize("engine", ["workbench", "cycles"])
async def test_render_shows_red_cube_in_centre(toolkit: BlenderToolkit, engine: str) -> None:
    await build_red_cube_scene(toolkit)
    outcome = await call(toolkit, "render", engine=engine, resolution=[160, 120], samples=8)
    assert not outcome.is_error, outcome.text
    head, view_line, crate_line = outcome.text.splitlines()[:3]
    assert head.startswith(f"rendered with {engine} in ")
    assert view_line.startswith("view camera: 1 of 1 objects visible")
    assert crate_line.startswith("Crate: ") and crate_line.endswith("red")  # "red" or "dark red"
    [image] = outcome.images
    pil = PILImage.open(io.BytesIO(image.data))
    assert pil.size == (160, 120)
    assert is_red(centre_pixel(image)), centre_pixel(image)
    corner = pil.convert("RGB").getpixel((2, 2))
    assert not is_red(corner)  # type: ignore[arg-type]


async def test_several_views_and_blank_warning(toolkit: BlenderToolkit) -> None:
    await build_red_cube_scene(toolkit)
    outcome = await call(
        toolkit, "render", views=["front", "top", "perspective"], resolution=[96, 72]
    )
    views = [
        line.split()[1].rstrip(":")
        for line in outcome.text.splitlines()
        if line.startswith("view ")
    ]
    assert views == ["front", "top", "perspective"]
    assert len(outcome.images) == 3
    assert all(is_red(centre_pixel(i)) for i in outcome.images)
    await ok(toolkit, "place_camera", location=[0, 0, 30], look_at=[0, 0, 60])  # facing away
    away = await call(toolkit, "render", resolution=[64, 48])
    assert "Crate: not visible (behind the camera)" in away.text  # it looks up, away from it
    assert "hint: nothing is visible; Crate is behind the camera" in away.text


async def test_modifiers_change_geometry(toolkit: BlenderToolkit) -> None:
    await build_red_cube_scene(toolkit)
    subdivided = await ok(toolkit, "add_modifier", name="Crate", kind="subdivision", levels=2)
    assert subdivided["triangles"] == 12 * 16
    arrayed = await ok(toolkit, "add_modifier", name="Crate", kind="array", count=3)
    x_size, y_size, _ = arrayed["dimensions"]  # three copies side by side along X
    assert x_size == pytest.approx(3 * y_size, abs=1e-3)
    assert [m["type"] for m in arrayed["modifiers"]] == ["SUBSURF", "ARRAY"]
    await ok(
        toolkit, "create_primitive", kind="cylinder", name="Drill", size=1.0, location=[0, 0, 2]
    )
    await ok(toolkit, "create_primitive", kind="cube", name="Block", location=[10, 0, 1])
    await ok(toolkit, "add_modifier", name="Block", kind="bevel", width=0.2, segments=2, apply=True)
    cut = await ok(
        toolkit, "add_modifier", name="Block", kind="boolean", target="Drill", apply=True
    )
    assert cut["modifiers"] == [] and cut["triangles"] > 12
    mirrored = await ok(toolkit, "add_modifier", name="Block", kind="mirror", axes=["x"])
    assert (
        mirrored["triangles"] == 2 * cut["triangles"]
    )  # a mirrored copy about the object's origin
    info = await ok(toolkit, "scene_info", offset=0, limit=2)
    assert info["total_objects"] == 5 and [o["name"] for o in info["objects"]] == [
        "Block",
        "Camera",
    ]


async def test_failed_tool_call_leaves_scene_as_it_was(toolkit: BlenderToolkit) -> None:
    await build_red_cube_scene(toolkit)
    before = await ok(toolkit, "scene_info")
    outcome = await call(toolkit, "delete", names=["Crate", "Camera", "Nope"])
    assert outcome.is_error
    assert (
        "no object named Nope (the scene has: Camera, Crate, Light)" in outcome.text
        and "restored" in outcome.text
    )
    assert await ok(toolkit, "scene_info") == before


async def test_transform_and_look_at(toolkit: BlenderToolkit) -> None:
    await build_red_cube_scene(toolkit)
    moved = await ok(
        toolkit,
        "set_transform",
        name="Crate",
        location=[1, 2, 3],
        rotation_degrees=[0, 0, 45],
        scale=[1, 1, 2],
    )
    assert moved["location"] == [1, 2, 3] and moved["rotation_degrees"][2] == pytest.approx(45)
    assert moved["dimensions"] == pytest.approx([2, 2, 4])
    camera = await ok(
        toolkit, "set_transform", name="Camera", location=[0, -10, 0], look_at=[0, 0, 0]
    )
    assert camera["rotation_degrees"] == pytest.approx(
        [90, 0, 0], abs=1e-3
    )  # -Z now points along +Y


async def test_export_formats_seen_by_trimesh(toolkit: BlenderToolkit) -> None:
    await build_red_cube_scene(toolkit)
    await ok(
        toolkit, "create_primitive", kind="uv_sphere", name="Ball", size=1.0, location=[3, 0, 0.5]
    )
    glb = await ok(toolkit, "export_asset", path="scene.glb")
    scene = trimesh.load_scene(glb["path"])
    assert sorted(scene.geometry) == ["Ball", "Crate"]
    # glTF is Y-up: Blender's (x, y, z) becomes (x, z, -y)
    assert scene.bounds.ravel().tolist() == pytest.approx([-1, 0, -1, 3.5, 2, 1], abs=1e-3)
    only_ball = await ok(toolkit, "export_asset", path="ball.stl", names=["Ball"])
    stl = trimesh.load_mesh(only_ball["path"])
    assert stl.bounds.ravel().tolist() == pytest.approx([2.5, -0.5, 0, 3.5, 0.5, 1], abs=1e-3)
    for fmt in ("gltf", "fbx", "obj", "ply"):
        written = await ok(toolkit, "export_asset", path=f"scene.{fmt}")
        assert written["bytes"] > 500 and Path(written["path"]).is_file()
    assert trimesh.load_scene(
        str(Path(glb["path"]).with_suffix(".gltf"))
    ).bounds.ravel().tolist() == pytest.approx(scene.bounds.ravel().tolist(), abs=1e-3)


@pytest.mark.parametrize(
    "relative",
    [
        "glTF2/BoxTextured-glTF-Binary/BoxTextured.glb",
        "glTF2/simple_skin/simple_skin.gltf",
        "FBX/box.fbx",
        "OBJ/box.obj",
        "STL/sphereWithHole.stl",
        "PLY/cube.ply",
    ],
)
async def test_import_real_assets(
    toolkit: BlenderToolkit, assimp_models: Path, relative: str
) -> None:
    await toolkit.connection.call("reset", None, ResetResult)
    imported = await ok(toolkit, "import_asset", path=str(assimp_models / relative))
    assert imported["objects"]
    info = await ok(toolkit, "scene_info")
    assert {o["name"] for o in info["objects"]} == set(imported["objects"])
    assert any(o["type"] == "MESH" and o["triangles"] > 0 for o in info["objects"])


async def test_import_missing_file_is_an_error_the_model_can_fix(toolkit: BlenderToolkit) -> None:
    outcome = await call(toolkit, "import_asset", path="glTF2/no-such-model.glb")
    assert outcome.is_error and "no such file: glTF2/no-such-model.glb" in outcome.text


async def test_execute_python_output_and_errors(toolkit: BlenderToolkit) -> None:
    await build_red_cube_scene(toolkit)
    done = await ok(toolkit, "execute_python", code="print(len(bpy.data.objects))")
    assert done["stdout"] == "3\n" and done["stderr"] == "" and done.get("exception") is None
    failed = await call(
        toolkit,
        "execute_python",
        code="import sys\nprint('oops', file=sys.stderr)\nraise ValueError('bad value')",
    )
    assert failed.is_error
    assert "ValueError: bad value (line 3)" in failed.text and "oops" in failed.text


async def test_execute_python_is_off_by_default() -> None:
    names = [t.name for t in BlenderToolkit().tools()]
    assert "execute_python" not in names and "render" in names


async def test_crash_in_execute_python_restores_the_scene(toolkit: BlenderToolkit) -> None:
    await build_red_cube_scene(toolkit)
    before = await ok(toolkit, "scene_info")
    outcome = await call(toolkit, "execute_python", code="import os\nos._exit(9)")
    assert outcome.is_error
    assert "exit code 9" in outcome.text and "restored from the last save" in outcome.text
    assert await ok(toolkit, "scene_info") == before


async def test_a_worker_lost_between_calls_is_said_in_the_next_result(
    toolkit: BlenderToolkit,
) -> None:
    await build_red_cube_scene(toolkit)
    worker = toolkit.connection
    assert isinstance(worker, BlenderWorker) and worker.pid is not None
    os.killpg(worker.pid, signal.SIGKILL)
    assert worker._process is not None
    await worker._process.wait(timeout=10)
    outcome = await call(toolkit, "scene_info")
    assert not outcome.is_error
    note, body = outcome.parts
    assert "restarted; the scene was restored from the last save" in note.text  # type: ignore[union-attr]
    assert {o["name"] for o in json.loads(body.text)["objects"]} == {"Crate", "Camera", "Light"}  # type: ignore[union-attr]


async def test_agent_sees_the_render(toolkit: BlenderToolkit) -> None:
    model = ScriptedModel(
        [
            ToolCallPart(name="create_primitive", arguments={"kind": "monkey", "name": "Suzanne"}),
            ToolCallPart(name="render", arguments={"views": ["front"], "resolution": [64, 48]}),
            "A monkey head, seen from the front.",
        ]
    )
    await toolkit.connection.call("reset", None, ResetResult)
    agent = Agent(model=model, tools=[toolkit])
    result = await agent.run("Model a monkey head and show me")
    assert result.output == "A monkey head, seen from the front."
    seen = [p for m in model.requests[-1].messages for p in _parts(m) if isinstance(p, ImagePart)]
    assert len(seen) == 1 and PILImage.open(io.BytesIO(seen[0].data)).size == (64, 48)


def _parts(message: Any) -> list[Any]:
    nested = [q for p in message.parts for q in getattr(p, "parts", [])]
    return [*message.parts, *nested]


@pytest.mark.slow
async def test_eevee_renders(toolkit: BlenderToolkit) -> None:
    await build_red_cube_scene(toolkit)
    outcome = await call(toolkit, "render", engine="eevee", resolution=[64, 48], samples=1)
    assert not outcome.is_error, outcome.text
    assert outcome.text.startswith("rendered with eevee")
    assert is_red(centre_pixel(outcome.images[0]))


async def test_validate_what_the_agent_built(toolkit: BlenderToolkit) -> None:
    await toolkit.connection.call("reset", None, ResetResult)
    # A 1 m crate standing on the ground, origin at the bottom centre.
    await ok(toolkit, "create_primitive", kind="cube", name="Crate", size=1.0, location=[0, 0, 0.5])
    await ok(
        toolkit, "add_modifier", name="Crate", kind="bevel", width=0.05, segments=2, apply=True
    )
    await ok(toolkit, "export_asset", path="crate.glb")
    spec = {"max_triangles": 500, "expected_dimensions_m": [1, 1, 1], "require_watertight": True}
    good = await ok(toolkit, "validate_asset", path="crate.glb", origin="bottom_center", **spec)
    assert good["ok"] and good["watertight"] and good["dimensions_m"] == pytest.approx([1, 1, 1])
    await ok(toolkit, "set_transform", name="Crate", scale=[100, 100, 100], location=[0, 0, 50])
    await ok(toolkit, "export_asset", path="crate_cm.glb")
    wrong = await ok(toolkit, "validate_asset", path="crate_cm.glb", **spec)
    assert not wrong["ok"]
    assert [i["code"] for i in wrong["issues"]] == ["dimensions"] * 3


async def test_validate_fbx_through_blender_keeps_the_scene(
    toolkit: BlenderToolkit, assimp_models: Path
) -> None:
    await build_red_cube_scene(toolkit)
    before = await ok(toolkit, "scene_info")
    report = await ok(toolkit, "validate_asset", path=str(assimp_models / "FBX/box.fbx"))
    assert report["format"] == "fbx (read through Blender as glb)"
    assert report["triangles"] == 12 and report["watertight"]
    assert await ok(toolkit, "scene_info") == before


async def test_reset_gives_an_empty_scene_even_after_a_lost_one(toolkit: BlenderToolkit) -> None:
    await build_red_cube_scene(toolkit)
    worker = toolkit.connection
    assert isinstance(worker, BlenderWorker) and worker.pid is not None and worker.saved_scene
    os.killpg(worker.pid, signal.SIGKILL)
    assert worker._process is not None
    await worker._process.wait(timeout=10)
    worker.saved_scene.write_bytes(b"damaged")  # the next start cannot restore it
    await toolkit.reset()  # between eval tasks: empty is what was asked for
    assert (await ok(toolkit, "scene_info"))["total_objects"] == 0
