"""Bad input, path confinement and awkward real files through the tools, against real bpy."""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pygltflib
import pytest
import trimesh
from agentsdk_blender import BlenderToolkit, BlenderWorker
from agentsdk_blender.toolkit_base import GROUPS
from blender_calls import call, ok

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """An output folder, a read folder, and a folder outside both."""
    return {name: tmp_path_factory.mktemp(name) for name in ("out", "inputs", "elsewhere")}


@pytest.fixture(scope="module")
async def toolkit(
    anyio_backend: str, folders: dict[str, Path], assimp_models: Path
) -> AsyncIterator[BlenderToolkit]:
    kit = BlenderToolkit(
        BlenderWorker(timeout=60),
        groups=GROUPS,
        output_dir=folders["out"],
        read_roots=[folders["inputs"], assimp_models],
    )
    async with kit:
        yield kit


async def fresh(kit: BlenderToolkit) -> None:
    await kit.reset()


# --- path confinement ---------------------------------------------------------------------


@pytest.mark.parametrize("path", ["../escape.glb", "sub/../../escape.glb", "/tmp/escape.glb"])
async def test_exports_outside_the_output_folder_are_refused(
    toolkit: BlenderToolkit, folders: dict[str, Path], path: str
) -> None:
    await fresh(toolkit)
    await ok(toolkit, "create_primitive", kind="cube", name="Crate")
    outcome = await call(toolkit, "export_asset", path=path)
    assert outcome.is_error and "outside the output folder" in outcome.text
    assert not (folders["out"].parent / "escape.glb").exists()
    assert not Path("/tmp/escape.glb").exists()


async def test_a_symlink_out_of_the_output_folder_is_refused(
    toolkit: BlenderToolkit, folders: dict[str, Path]
) -> None:
    await fresh(toolkit)
    await ok(toolkit, "create_primitive", kind="cube", name="Crate")
    victim = folders["elsewhere"] / "victim.glb"
    victim.write_bytes(b"precious")
    (folders["out"] / "link.glb").symlink_to(victim)
    outcome = await call(toolkit, "export_asset", path="link.glb")
    assert outcome.is_error and "outside the output folder" in outcome.text
    assert victim.read_bytes() == b"precious"
    # An OBJ's .mtl companion planted as a link is refused the same way.
    (folders["out"] / "crate.mtl").symlink_to(folders["elsewhere"] / "victim.mtl")
    outcome = await call(toolkit, "export_asset", path="crate.obj")
    assert outcome.is_error and "crate.mtl is a link" in outcome.text
    assert not (folders["elsewhere"] / "victim.mtl").exists()


async def test_relative_exports_land_in_the_output_folder(
    toolkit: BlenderToolkit, folders: dict[str, Path]
) -> None:
    await fresh(toolkit)
    await ok(toolkit, "create_primitive", kind="cube", name="Crate")
    written = await ok(toolkit, "export_asset", path="nested/crate.glb")
    assert Path(written["path"]) == folders["out"] / "nested/crate.glb"
    report = await ok(toolkit, "validate_asset", path="nested/crate.glb")
    assert report["triangles"] == 12


async def test_reads_outside_the_roots_are_refused(
    toolkit: BlenderToolkit, folders: dict[str, Path], assimp_models: Path
) -> None:
    outside = folders["elsewhere"] / "box.glb"
    shutil.copy(assimp_models / "glTF2/BoxTextured-glTF-Binary/BoxTextured.glb", outside)
    for tool_name in ("import_asset", "validate_asset"):
        outcome = await call(toolkit, tool_name, path=str(outside))
        assert outcome.is_error and "outside the folders the tools may read" in outcome.text
    # A link inside a read root that points out of it is followed, then refused.
    (folders["inputs"] / "sneaky.glb").symlink_to(outside)
    outcome = await call(toolkit, "import_asset", path="sneaky.glb")
    assert outcome.is_error and "outside the folders" in outcome.text


async def test_a_gltf_pointing_out_of_the_roots_is_refused(
    toolkit: BlenderToolkit, folders: dict[str, Path], assimp_models: Path
) -> None:
    source = assimp_models / "glTF2/BoxTextured-glTF/BoxTextured.gltf"
    document = json.loads(source.read_text())
    secret = folders["elsewhere"] / "secret.bin"
    shutil.copy(source.parent / document["buffers"][0]["uri"], secret)
    document["buffers"][0]["uri"] = "../" + secret.parent.name + "/secret.bin"
    (folders["inputs"] / "box.gltf").write_text(json.dumps(document))
    for tool_name in ("import_asset", "validate_asset"):
        outcome = await call(toolkit, tool_name, path="box.gltf")
        assert outcome.is_error and "refers to" in outcome.text and "secret.bin" in outcome.text


# --- bad values ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool_name", "arguments", "problem"),
    [
        ("render", {"resolution": [0, 0]}, "resolution.0"),
        ("render", {"resolution": [-64, 48]}, "resolution.0"),
        ("set_material", {"name": "Crate", "base_color": [2.0, 0, 0, 1]}, "base_color.0"),
        ("place_light", {"location": [0, 0, 5], "color": [1, 1, -0.5]}, "color.2"),
        ("delete", {"names": []}, "names"),
        ("create_primitive", {"kind": "cube", "location": [math.nan, 0, 0]}, "location.0"),
        ("set_transform", {"name": "Crate", "scale": [1, math.inf, 1]}, "scale.1"),
        ("create_primitive", {"kind": "cube", "size": 0}, "size"),
    ],
)
async def test_out_of_range_values_are_clear_errors(
    toolkit: BlenderToolkit, tool_name: str, arguments: dict[str, Any], problem: str
) -> None:
    await fresh(toolkit)
    await ok(toolkit, "create_primitive", kind="cube", name="Crate")
    before = await ok(toolkit, "scene_info")
    outcome = await call(toolkit, tool_name, **arguments)
    assert outcome.is_error and outcome.kind == "invalid_arguments", outcome.text
    assert f"- {problem}:" in outcome.text and "Call the tool again" in outcome.text
    assert await ok(toolkit, "scene_info") == before  # nothing changed


async def test_a_glb_renamed_stl_is_refused_with_what_it_is(
    toolkit: BlenderToolkit, folders: dict[str, Path], assimp_models: Path
) -> None:
    await fresh(toolkit)
    fake = folders["inputs"] / "box.stl"
    shutil.copy(assimp_models / "glTF2/BoxTextured-glTF-Binary/BoxTextured.glb", fake)
    outcome = await call(toolkit, "import_asset", path="box.stl")
    assert outcome.is_error
    assert "is a binary glTF (GLB) file, not STL" in outcome.text and "format='glb'" in outcome.text
    assert (await ok(toolkit, "scene_info"))["total_objects"] == 0
    imported = await ok(toolkit, "import_asset", path="box.stl", format="glb")
    assert imported["objects"]
    garbage = folders["inputs"] / "noise.ply"
    garbage.write_bytes(bytes(range(256)) * 8)
    outcome = await call(toolkit, "import_asset", path="noise.ply")
    assert outcome.is_error and "does not look like a PLY file" in outcome.text


# --- awkward real files ---------------------------------------------------------------------


async def test_skinned_gltf_import_adds_only_the_asset(
    toolkit: BlenderToolkit, assimp_models: Path, folders: dict[str, Path]
) -> None:
    await fresh(toolkit)
    path = assimp_models / "glTF2/simple_skin/simple_skin.gltf"
    gltf = pygltflib.GLTF2().load(str(path))
    imported = await ok(toolkit, "import_asset", path=str(path))
    info = await ok(toolkit, "scene_info")
    types = {o["name"]: o["type"] for o in info["objects"]}
    assert set(types) == set(imported["objects"])
    assert sorted(types.values()) == ["ARMATURE", "MESH"]  # no bone-shape Icosphere
    assert sum(1 for t in types.values() if t == "MESH") == len(gltf.meshes)
    exported = await ok(toolkit, "export_asset", path="skin.glb")
    assert len(pygltflib.GLTF2().load(exported["path"]).meshes) == len(gltf.meshes)


@pytest.mark.parametrize("name", ["animation_with_skeleton.fbx", "global_settings.fbx"])
async def test_fbx_with_lights_imports(
    toolkit: BlenderToolkit, assimp_models: Path, name: str
) -> None:
    await fresh(toolkit)
    path = assimp_models / "FBX" / name
    imported = await ok(toolkit, "import_asset", path=str(path))
    info = await ok(toolkit, "scene_info")
    types = {o["type"] for o in info["objects"]}
    assert {"LIGHT", "MESH"} <= types and imported["objects"]
    report = await ok(toolkit, "validate_asset", path=str(path))
    assert report["triangles"] and report["triangles"] > 0


async def test_gltf_with_a_space_in_its_buffer_name(
    toolkit: BlenderToolkit, folders: dict[str, Path]
) -> None:
    await fresh(toolkit)
    await ok(toolkit, "create_primitive", kind="uv_sphere", name="Ball", size=1.0)
    written = await ok(toolkit, "export_asset", path="my ball.gltf")
    document = json.loads(Path(written["path"]).read_text())
    assert document["buffers"][0]["uri"] == "my%20ball.bin"  # Blender encodes it, as specified
    glb = await ok(toolkit, "export_asset", path="ball.glb")
    expected = sum(len(g.faces) for g in trimesh.load_scene(glb["path"]).geometry.values())
    report = await ok(toolkit, "validate_asset", path="my ball.gltf")
    assert report["triangles"] == expected > 0
    await fresh(toolkit)
    assert (await ok(toolkit, "import_asset", path="my ball.gltf"))["objects"] == ["Ball"]


async def test_draco_export_from_blender_validates_like_the_plain_one(
    toolkit: BlenderToolkit, folders: dict[str, Path]
) -> None:
    await fresh(toolkit)
    await ok(toolkit, "create_primitive", kind="monkey", name="Suzanne", size=2.0)
    plain = await ok(toolkit, "export_asset", path="suzanne.glb")
    # Blender's own Draco writer (through the worker's bpy), as an artist would export it.
    draco = folders["out"] / "suzanne_draco.glb"
    code = (
        f"bpy.ops.export_scene.gltf(filepath={str(draco)!r}, export_format='GLB', "
        "export_draco_mesh_compression_enable=True)"
    )
    await ok(toolkit, "execute_python", code=code)
    assert "KHR_draco_mesh_compression" in (
        pygltflib.GLTF2().load(str(draco)).extensionsRequired or []
    )
    plain_report = await ok(toolkit, "validate_asset", path=plain["path"])
    draco_report = await ok(toolkit, "validate_asset", path=str(draco))
    assert draco_report["triangles"] == plain_report["triangles"] == 968
    for got, want in zip(draco_report["dimensions_m"], plain_report["dimensions_m"], strict=True):
        assert got == pytest.approx(want, abs=2e-3)
    assert "bad_normals" not in {i["code"] for i in draco_report["issues"]}
    await fresh(toolkit)
    assert (await ok(toolkit, "import_asset", path=str(draco)))["objects"] == ["Suzanne"]
