"""validate_asset on real third-party assets (Debian assimp-testmodels), checked against
what pygltflib itself reads from the same files."""

from __future__ import annotations

import struct
from pathlib import Path

import pygltflib
import pytest
import trimesh
from agentsdk_blender import AssetSpec, validate_asset

GLTF2 = "glTF2"


def _gltf(path: Path) -> pygltflib.GLTF2:
    return pygltflib.GLTF2().load(str(path))


def test_skinned_mesh_joints_weights_and_animation(assimp_models: Path) -> None:
    path = assimp_models / GLTF2 / "simple_skin/simple_skin.gltf"
    report = validate_asset(path)
    gltf = _gltf(path)
    [skin] = report.skins
    assert skin.joint_count == len(gltf.skins[0].joints) == 2
    weights = gltf.meshes[0].primitives[0].attributes.WEIGHTS_0
    assert skin.skinned_vertices == gltf.accessors[weights].count
    assert skin.weights_normalized and skin.max_weight_sum_error < 1e-6
    assert skin.joint_index_out_of_range == 0
    assert len(report.animations) == len(gltf.animations) == 1
    sampler_input = gltf.accessors[gltf.animations[0].samplers[0].input]
    assert report.animations[0].duration_s == pytest.approx(sampler_input.max[0])
    assert report.animations[0].target_paths == ["rotation"]
    assert report.ok  # a flat strip: open edges are only a warning by default
    assert [i.code for i in report.issues] == ["not_watertight"]


def test_joint_budget(assimp_models: Path) -> None:
    report = validate_asset(
        assimp_models / GLTF2 / "simple_skin/simple_skin.gltf", AssetSpec(max_joints=1)
    )
    assert not report.ok
    assert any(i.code == "joint_budget" and "2 joints" in i.message for i in report.issues)


def test_morph_targets_and_weight_animation(assimp_models: Path) -> None:
    path = (
        assimp_models / GLTF2 / "glTF-Sample-Models/AnimatedMorphCube-glTF/AnimatedMorphCube.gltf"
    )
    report = validate_asset(path, AssetSpec(require_watertight=True, require_normals=True))
    gltf = _gltf(path)
    primitive = gltf.meshes[0].primitives[0]
    assert report.morph_targets == len(primitive.targets) == 2
    assert report.triangles == gltf.accessors[primitive.indices].count // 3
    assert report.animations[0].name == gltf.animations[0].name
    assert report.animations[0].target_paths == ["weights"]
    assert report.watertight and report.ok, report.issues
    assert report.dimensions_m == pytest.approx((2.0, 2.0, 2.0), abs=1e-5)


@pytest.mark.parametrize(
    ("relative", "source"),
    [
        ("BoxTextured-glTF/BoxTextured.gltf", "CesiumLogoFlat.png"),
        ("BoxTextured-glTF-Binary/BoxTextured.glb", "embedded (bufferView 3)"),
    ],
)
def test_textures_resolved(assimp_models: Path, relative: str, source: str) -> None:
    path = assimp_models / GLTF2 / relative
    report = validate_asset(path, AssetSpec(require_uvs=True, max_triangles=12, origin="center"))
    gltf = _gltf(path)
    [material] = report.materials
    assert material.name == gltf.materials[0].name
    assert [(t.slot, t.source, t.resolved) for t in material.textures] == [
        ("base_color", source, True)
    ]
    assert report.meshes[0].has_uvs and report.ok, report.issues


def test_missing_buffer_and_texture_are_errors(assimp_models: Path) -> None:
    report = validate_asset(assimp_models / GLTF2 / "MissingBin/BoxTextured.gltf")
    codes = {i.code for i in report.issues}
    assert {"missing_buffer", "missing_texture", "no_geometry"} <= codes
    assert not report.ok


def _glb_normals(path: Path) -> list[tuple[float, float, float]]:
    """Decode the NORMAL accessor straight from the GLB binary chunk, independently."""
    gltf = _gltf(path)
    accessor = gltf.accessors[gltf.meshes[0].primitives[0].attributes.NORMAL]
    view = gltf.bufferViews[accessor.bufferView]
    blob = gltf.binary_blob()
    start = (view.byteOffset or 0) + (accessor.byteOffset or 0)
    stride = view.byteStride or 12
    return [struct.unpack_from("<3f", blob, start + i * stride) for i in range(accessor.count)]


def test_bad_normals_counted(assimp_models: Path) -> None:
    path = assimp_models / GLTF2 / "BoxBadNormals-glTF-Binary/BoxBadNormals.glb"
    expected = sum(1 for n in _glb_normals(path) if abs(sum(c * c for c in n) ** 0.5 - 1) > 1e-2)
    report = validate_asset(path)
    assert expected > 0
    assert report.meshes[0].bad_normals == expected
    assert not report.ok and report.issues[0].code == "bad_normals"


def test_big_engine_budget_scale_and_triangles(assimp_models: Path) -> None:
    path = assimp_models / GLTF2 / "2CylinderEngine-glTF-Binary/2CylinderEngine.glb"
    gltf = _gltf(path)
    placed = sum(
        gltf.accessors[p.indices].count // 3
        for node in gltf.nodes
        if node.mesh is not None
        for p in gltf.meshes[node.mesh].primitives
    )
    spec = AssetSpec(max_triangles=50_000, expected_dimensions_m=(0.75, 0.27, 0.27))
    report = validate_asset(path, spec)
    assert report.triangles == placed
    codes = [i.code for i in report.issues]
    assert "triangle_budget" in codes and "dimensions" in codes
    assert report.dimensions_m[0] == pytest.approx(
        743.38, abs=0.01
    )  # millimetres written as metres


@pytest.mark.parametrize(
    ("relative", "watertight", "triangles"),
    [("OBJ/box.obj", True, 12), ("PLY/cube.ply", True, 12), ("STL/sphereWithHole.stl", False, 285)],
)
def test_other_formats(
    assimp_models: Path, relative: str, watertight: bool, triangles: int
) -> None:
    report = validate_asset(assimp_models / relative, AssetSpec(require_watertight=True))
    assert report.triangles == triangles
    assert report.watertight is watertight
    assert report.ok is watertight
    assert report.up_axis == "z"


def test_broken_files_become_findings(assimp_models: Path) -> None:
    out_of_range = validate_asset(assimp_models / GLTF2 / "IndexOutOfRange/IndexOutOfRange.gltf")
    assert "index_out_of_range" in {i.code for i in out_of_range.issues}
    infinite = validate_asset(
        assimp_models / GLTF2 / "BoxWithInfinites-glTF-Binary/BoxWithInfinites.glb"
    )
    assert "non_finite_positions" in {i.code for i in infinite.issues} and not infinite.ok
    with pytest.raises(ValueError, match=r"cannot validate \.fbx"):
        validate_asset(assimp_models / "FBX/box.fbx")


def test_open_and_non_manifold_edges(assimp_models: Path, tmp_path: Path) -> None:
    holed = validate_asset(assimp_models / "STL/sphereWithHole.stl")
    assert (holed.meshes[0].open_edges, holed.meshes[0].non_manifold_edges) == (9, 0)
    # three triangles hinged on one edge: that edge is used by three faces
    fan = trimesh.Trimesh(
        vertices=[[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1]],
        faces=[[0, 1, 2], [1, 0, 3], [0, 1, 4]],
        process=False,
    )
    fan.export(tmp_path / "fan.stl")
    report = validate_asset(tmp_path / "fan.stl", AssetSpec(require_watertight=True))
    assert report.meshes[0].non_manifold_edges == 1
    assert {i.code for i in report.issues} >= {"non_manifold", "not_watertight"} and not report.ok
