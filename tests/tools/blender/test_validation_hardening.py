"""validate_asset on files that used to give wrong numbers: Draco and other compressed glTF,
percent-encoded buffer names, renamed files, multi-object OBJ, a 1M-triangle mesh.

Expected values are computed in the tests from the files themselves (DracoPy, pygltflib,
the OBJ text), never taken from the validator.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import DracoPy
import numpy as np
import pygltflib
import pytest
import trimesh
from agentsdk_blender import AssetSpec, validate_asset
from agentsdk_blender.mesh_topology import topology

DRACO_ENGINE = "glTF2/draco/2CylinderEngine.gltf"
PLAIN_ENGINE = "glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb"


def _placed_draco_triangles(path: Path) -> int:
    """Triangles as placed by the nodes, decoding every Draco primitive with DracoPy."""
    gltf = pygltflib.GLTF2().load(str(path))
    buffer = (path.parent / gltf.buffers[0].uri).read_bytes()
    per_mesh = []
    for mesh in gltf.meshes:
        count = 0
        for primitive in mesh.primitives:
            view = gltf.bufferViews[
                primitive.extensions["KHR_draco_mesh_compression"]["bufferView"]
            ]
            start = view.byteOffset or 0
            count += len(DracoPy.decode(buffer[start : start + view.byteLength]).faces)
        per_mesh.append(count)
    return sum(per_mesh[node.mesh] for node in gltf.nodes if node.mesh is not None)


def test_draco_engine_is_decoded_not_reported_as_degenerate(assimp_models: Path) -> None:
    report = validate_asset(assimp_models / DRACO_ENGINE)
    plain = validate_asset(assimp_models / PLAIN_ENGINE)
    assert report.geometry_checked
    assert report.triangles == _placed_draco_triangles(assimp_models / DRACO_ENGINE)
    # Draco quantises positions (14 bits here): sizes agree with the uncompressed file to 0.1%.
    assert report.dimensions_m == pytest.approx(plain.dimensions_m, rel=1e-3)
    assert "bad_normals" not in {i.code for i in report.issues}  # normals are decoded too
    assert report.degenerate_faces is not None and report.degenerate_faces < 100


def _draco_cube_gltf(folder: Path, *, corrupt: bool = False) -> Path:
    """A 2 m cube with normals, Draco-compressed, written the way the extension specifies."""
    box = trimesh.creation.box(extents=(2.0, 2.0, 2.0))
    points = np.asarray(box.vertices, np.float32)
    normals = points.astype(np.float64) / np.linalg.norm(points, axis=1, keepdims=True)
    faces = np.asarray(box.faces, np.uint32)
    blob = DracoPy.encode(points, faces, normals=normals, preserve_order=True)
    decoded = DracoPy.decode(blob)
    ids = {a["attribute_type"]: a["unique_id"] for a in decoded.attributes}
    if corrupt:
        blob = blob[:20] + bytes(len(blob) - 20)
    (folder / "cube.bin").write_bytes(blob)
    gltf = {
        "asset": {"version": "2.0"},
        "extensionsUsed": ["KHR_draco_mesh_compression"],
        "extensionsRequired": ["KHR_draco_mesh_compression"],
        "buffers": [{"uri": "cube.bin", "byteLength": len(blob)}],
        "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": len(blob)}],
        "accessors": [
            {
                "componentType": 5126,
                "count": len(decoded.points),
                "type": "VEC3",
                "min": [-1, -1, -1],
                "max": [1, 1, 1],
            },
            {"componentType": 5126, "count": len(decoded.points), "type": "VEC3"},
            {"componentType": 5125, "count": decoded.faces.size, "type": "SCALAR"},
        ],
        "meshes": [
            {
                "name": "Cube",
                "primitives": [
                    {
                        "attributes": {"POSITION": 0, "NORMAL": 1},
                        "indices": 2,
                        "extensions": {
                            "KHR_draco_mesh_compression": {
                                "bufferView": 0,
                                "attributes": {"POSITION": ids[0], "NORMAL": ids[1]},
                            }
                        },
                    }
                ],
            }
        ],
        "nodes": [{"mesh": 0}],
        "scenes": [{"nodes": [0]}],
        "scene": 0,
    }
    path = folder / "cube.gltf"
    path.write_text(json.dumps(gltf))
    return path


def test_draco_cube_has_exact_counts_and_size(tmp_path: Path) -> None:
    report = validate_asset(_draco_cube_gltf(tmp_path), AssetSpec(require_watertight=True))
    assert report.triangles == 12
    assert report.dimensions_m == pytest.approx((2.0, 2.0, 2.0), abs=1e-3)
    assert report.watertight and report.ok, report.issues
    assert report.meshes[0].has_normals and report.meshes[0].bad_normals == 0


def test_damaged_draco_data_is_an_error_not_a_shape(tmp_path: Path) -> None:
    report = validate_asset(_draco_cube_gltf(tmp_path, corrupt=True))
    assert not report.ok and not report.geometry_checked
    assert report.triangles is None and report.meshes == []  # never a made-up mesh
    assert "undecodable_draco" in {i.code for i in report.issues}


def test_meshopt_file_says_it_cannot_be_validated(assimp_models: Path, tmp_path: Path) -> None:
    source = assimp_models / "glTF2/BoxTextured-glTF/BoxTextured.gltf"
    for item in source.parent.iterdir():
        shutil.copy(item, tmp_path / item.name)
    document = json.loads(source.read_text())
    document["extensionsUsed"] = ["EXT_meshopt_compression"]
    document["extensionsRequired"] = ["EXT_meshopt_compression"]
    (tmp_path / source.name).write_text(json.dumps(document))
    report = validate_asset(tmp_path / source.name, AssetSpec(max_triangles=100))
    assert not report.ok and not report.geometry_checked
    assert report.triangles is None and report.dimensions_m is None and report.meshes == []
    [issue] = [i for i in report.issues if i.code == "unsupported_extension"]
    assert "EXT_meshopt_compression" in issue.message and "not checked" in issue.message


def test_percent_encoded_buffer_name(assimp_models: Path, tmp_path: Path) -> None:
    source = assimp_models / "glTF2/BoxTextured-glTF/BoxTextured.gltf"
    document = json.loads(source.read_text())
    original = document["buffers"][0]["uri"]
    shutil.copy(source.parent / original, tmp_path / "box data.bin")
    for image in document["images"]:
        shutil.copy(source.parent / image["uri"], tmp_path / image["uri"])
    document["buffers"][0]["uri"] = "box%20data.bin"  # as the glTF spec requires
    (tmp_path / "box.gltf").write_text(json.dumps(document))
    report = validate_asset(tmp_path / "box.gltf")
    expected = validate_asset(source)
    assert expected.triangles == 12
    assert report.triangles == expected.triangles
    assert report.dimensions_m == expected.dimensions_m
    assert "missing_buffer" not in {i.code for i in report.issues}


def test_glb_renamed_stl_is_reported_as_wrong_format(assimp_models: Path, tmp_path: Path) -> None:
    fake = tmp_path / "box.stl"
    shutil.copy(assimp_models / "glTF2/BoxTextured-glTF-Binary/BoxTextured.glb", fake)
    report = validate_asset(fake)
    assert not report.ok
    [issue] = [i for i in report.issues if i.code == "wrong_format"]
    assert "binary glTF (GLB) file, not STL" in issue.message
    assert report.triangles == 12  # read as what it really is


def _obj_groups(path: Path) -> dict[str, int]:
    """Triangles per `o`/`g` group, counted from the OBJ text (an n-gon is n - 2 triangles)."""
    counts: dict[str, int] = {}
    current = None
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith(("o ", "g ")):
            current = line.split(maxsplit=1)[1].strip()
        elif line.startswith("f ") and current is not None:
            counts[current] = counts.get(current, 0) + len(line.split()) - 3
    return counts


def test_multi_object_obj_reports_each_object(assimp_models: Path) -> None:
    path = assimp_models / "OBJ/spider.obj"
    expected = _obj_groups(path)
    report = validate_asset(path)
    by_name = {m.name: m.triangles for m in report.meshes}
    assert len(expected) == 19
    assert by_name == expected


def test_million_triangle_mesh_is_counted_exactly(tmp_path: Path) -> None:
    sphere = trimesh.creation.icosphere(subdivisions=8)  # 1,310,720 triangles
    # Flat-shaded like most exports: every face has its own three vertices.
    vertices = sphere.vertices[sphere.faces].reshape(-1, 3)
    faces = np.arange(len(vertices)).reshape(-1, 3)
    faces[:10] = faces[:10, ::-1]  # ten flipped faces: winding must be reported inconsistent
    trimesh.Trimesh(vertices, faces, process=False).export(tmp_path / "sphere.glb")
    report = validate_asset(tmp_path / "sphere.glb", AssetSpec(max_triangles=2_000_000))
    assert report.triangles == len(sphere.faces) == 1_310_720
    [mesh] = report.meshes
    assert mesh.watertight and mesh.open_edges == 0 and mesh.non_manifold_edges == 0
    assert not mesh.winding_consistent
    assert report.dimensions_m == pytest.approx((2.0, 2.0, 2.0), abs=1e-6)


def test_topology_agrees_with_trimesh_on_real_meshes(assimp_models: Path) -> None:
    for relative in ("STL/sphereWithHole.stl", "PLY/cube.ply", "OBJ/spider.obj"):
        for mesh in trimesh.load_scene(assimp_models / relative).geometry.values():
            welded = trimesh.Trimesh(mesh.vertices, mesh.faces, process=True)
            welded.update_faces(welded.nondegenerate_faces())
            ours = topology(np.asarray(mesh.vertices), np.asarray(mesh.faces))
            assert ours.watertight == welded.is_watertight, relative
            assert ours.winding_consistent == welded.is_winding_consistent, relative


def test_every_real_model_is_recognised_as_its_format(assimp_models: Path) -> None:
    from agentsdk_blender.paths import detect_format

    suffixes = {".glb", ".gltf", ".fbx", ".obj", ".stl", ".ply"}
    files = [
        p
        for p in assimp_models.rglob("*")
        if p.is_file() and p.suffix.lower() in suffixes and "invalid" not in p.parts
    ]
    assert len(files) > 100
    wrong = []
    for path in files:
        found, claimed = detect_format(path), path.suffix.lower().lstrip(".")
        if found != claimed and {found, claimed} != {"glb", "gltf"}:
            wrong.append((path.name, found))
    assert wrong == []
