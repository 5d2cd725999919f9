"""validate_asset: a typed report on a 3D file, built on trimesh (geometry) and pygltflib
(glTF structure: materials, textures, skins, animations, morph targets)."""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import trimesh
from pydantic import BaseModel, Field

from .gltf_checks import GltfFacts, inspect_gltf
from .mesh_topology import degenerate_faces, topology
from .paths import PathRefused, check_format, detect_format
from .validation_models import AnimationReport, Issue, MaterialReport, MeshReport, SkinReport

__all__ = [
    "AnimationReport",
    "AssetReport",
    "AssetSpec",
    "Issue",
    "MaterialReport",
    "MeshReport",
    "SkinReport",
    "validate_asset",
]

Vector3 = tuple[float, float, float]
Severity = Literal["error", "warning"]
SUPPORTED = ("glb", "gltf", "obj", "stl", "ply")


class AssetSpec(BaseModel):
    """What an asset must satisfy; unset fields are not checked."""

    max_triangles: int | None = Field(None, gt=0)
    expected_dimensions_m: Vector3 | None = None
    dimension_tolerance: float = Field(0.1, ge=0, le=1)
    require_watertight: bool = False
    require_uvs: bool = False
    require_normals: bool = False
    origin: Literal["any", "bottom_center", "center"] = "any"
    origin_tolerance: float = Field(0.05, ge=0, description="fraction of the largest dimension")
    up_axis: Literal["auto", "y", "z"] = "auto"
    max_joints: int | None = Field(None, gt=0)


class AssetReport(BaseModel):
    """Everything validate_asset found; ``ok`` is False when any issue is an error."""

    path: str
    format: str
    ok: bool
    issues: list[Issue]
    geometry_checked: bool = Field(
        True, description="False when the geometry could not be decoded: the numbers below are None"
    )
    triangles: int | None
    vertices: int | None
    meshes: list[MeshReport]
    bounds_min: Vector3 | None
    bounds_max: Vector3 | None
    dimensions_m: Vector3 | None
    up_axis: Literal["y", "z"]
    origin_offset_m: Vector3 | None = Field(
        description="origin minus the bottom centre of the bounds"
    )
    watertight: bool | None
    degenerate_faces: int | None
    materials: list[MaterialReport]
    skins: list[SkinReport]
    animations: list[AnimationReport]
    morph_targets: int


def _round(values: object) -> Vector3:
    x, y, z = (round(float(v), 6) for v in values)  # type: ignore[attr-defined]
    return (x, y, z)


class _BrokenIndices(Exception):
    """A mesh's faces refer to vertices that do not exist."""


def _mesh_report(name: str, mesh: trimesh.Trimesh, facts: GltfFacts | None) -> MeshReport:
    if len(mesh.faces) and int(mesh.faces.max()) >= len(mesh.vertices):
        raise _BrokenIndices(name)
    vertices = np.asarray(mesh.vertices, np.float64)
    faces = np.asarray(mesh.faces, np.int64)
    edges = topology(vertices, faces)  # welded by position: seams do not open the surface
    uv = getattr(mesh.visual, "uv", None)
    info = facts.mesh(name) if facts else None
    return MeshReport(
        name=name,
        triangles=len(faces),
        vertices=len(vertices),
        watertight=edges.watertight,
        open_edges=edges.open_edges,
        non_manifold_edges=edges.non_manifold_edges,
        winding_consistent=edges.winding_consistent,
        degenerate_faces=degenerate_faces(vertices, faces),
        has_normals=info.has_normals if info else None,
        bad_normals=info.bad_normals if info else 0,
        has_uvs=info.has_uvs if info else uv is not None and len(uv) > 0,
        morph_targets=info.morph_targets if info else 0,
    )


def _text_normals(path: Path, fmt: str) -> bool | None:
    if fmt == "stl":
        return True  # STL stores a normal per facet
    head = path.read_bytes()[:4_000_000]
    if fmt == "obj":
        return b"\nvn " in head
    if fmt == "ply":
        return b"property float nx" in head or b"property double nx" in head
    return None


def validate_asset(path: str | Path, spec: AssetSpec | None = None) -> AssetReport:
    """Load a glb/gltf/obj/stl/ply file and check it against ``spec``.

    Units are metres (glTF's unit; assumed for OBJ/STL/PLY). The up axis is Y for
    glTF and Z otherwise unless the spec says so.
    """
    with np.errstate(invalid="ignore", over="ignore"):  # broken files are reported, not warned
        return _validate(Path(path), spec or AssetSpec())


class _UnquotingResolver(trimesh.resolvers.FilePathResolver):
    """glTF URIs are percent-encoded ("my%20crate.bin" names "my crate.bin")."""

    def get(self, name: str) -> bytes:
        try:
            return bytes(super().get(name))
        except FileNotFoundError:
            return bytes(super().get(urllib.parse.unquote(name)))


def _load_kwargs(fmt: str) -> dict[str, Any]:
    if fmt == "obj":  # one report per OBJ object or group, not one per material
        return {"split_objects": True, "split_groups": True, "group_material": False}
    return {}


def _validate(source: Path, spec: AssetSpec) -> AssetReport:
    fmt = source.suffix.lower().lstrip(".")
    if fmt not in SUPPORTED:
        raise ValueError(f"cannot validate .{fmt} files; supported: {', '.join(SUPPORTED)}")
    issues: list[Issue] = []
    try:
        fmt = check_format(source, fmt)
    except PathRefused as exc:  # report it, then read the file as what it really is
        issues.append(Issue(severity="error", code="wrong_format", message=str(exc)))
        fmt = detect_format(source) or fmt
        if fmt not in SUPPORTED:
            return _unchecked(source, fmt, issues, GltfFacts())
    facts = inspect_gltf(source, issues) if fmt in ("glb", "gltf") else None
    if facts is not None and facts.unsupported_extensions:
        return _unchecked(source, fmt, issues, facts)
    try:
        scene = trimesh.load_scene(
            str(source), file_type=fmt, process=False, resolver=_UnquotingResolver(str(source)),
            **_load_kwargs(fmt),
        )  # fmt: skip
    except Exception as exc:  # a broken file is a finding, not a crash
        message = f"trimesh cannot load the geometry: {type(exc).__name__}: {exc}"
        issues.append(Issue(severity="error", code="unloadable_geometry", message=message))
        scene = trimesh.Scene()
    meshes: list[MeshReport] = []
    for name, geometry in list(scene.geometry.items()):
        if not isinstance(geometry, trimesh.Trimesh):
            continue
        try:
            meshes.append(_mesh_report(name, geometry, facts))
        except _BrokenIndices:
            message = f"mesh {name!r} has face indices beyond its vertex count; it was skipped"
            issues.append(Issue(severity="error", code="index_out_of_range", message=message))
            scene.delete_geometry(name)
    if facts is None:
        has_normals = _text_normals(source, fmt)
        meshes = [m.model_copy(update={"has_normals": has_normals}) for m in meshes]
    placed = _placed(scene)
    triangles = sum(len(g.faces) for g, _ in placed)
    vertices = sum(len(g.vertices) for g, _ in placed)
    if placed:
        low, high = _bounds(placed)
        if not (np.isfinite(low).all() and np.isfinite(high).all()):
            message = "vertex positions contain infinite or NaN values"
            issues.append(Issue(severity="error", code="non_finite_positions", message=message))
    else:
        low = high = np.zeros(3)
        issues.append(
            Issue(severity="error", code="no_geometry", message="the file has no triangle meshes")
        )
    up: Literal["y", "z"] = spec.up_axis if spec.up_axis != "auto" else ("y" if facts else "z")
    up_index = 1 if up == "y" else 2
    bottom_centre = (low + high) / 2
    bottom_centre[up_index] = low[up_index]
    dimensions = high - low
    checked = issues + _check(spec, meshes, triangles, dimensions, low, high, up_index, facts)
    report_issues: list[Issue] = []
    for issue in checked:  # one finding reached by two routes is reported once
        if all(issue.message != seen.message for seen in report_issues):
            report_issues.append(issue)
    return AssetReport(
        path=str(source),
        format=fmt,
        ok=not any(i.severity == "error" for i in report_issues),
        issues=report_issues,
        triangles=triangles,
        vertices=vertices,
        meshes=meshes,
        bounds_min=_round(low),
        bounds_max=_round(high),
        dimensions_m=_round(dimensions),
        up_axis=up,
        origin_offset_m=_round(-bottom_centre),
        watertight=bool(meshes) and all(m.watertight for m in meshes),
        degenerate_faces=sum(m.degenerate_faces for m in meshes),
        materials=facts.materials if facts else [],
        skins=facts.skins if facts else [],
        animations=facts.animations if facts else [],
        morph_targets=sum(m.morph_targets for m in meshes),
    )


def _placed(scene: trimesh.Scene) -> list[tuple[trimesh.Trimesh, npt.NDArray[np.float64]]]:
    """Each mesh instance as placed by the scene graph, with its 4x4 transform (no copies:
    a 1M-triangle mesh is not duplicated to be counted)."""
    found = []
    for node in scene.graph.nodes_geometry:
        transform, name = scene.graph[node]
        geometry = scene.geometry.get(name)
        if isinstance(geometry, trimesh.Trimesh):
            found.append((geometry, np.asarray(transform, np.float64)))
    return found


def _bounds(
    placed: list[tuple[trimesh.Trimesh, npt.NDArray[np.float64]]],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Exact world bounds of the placed meshes (vertices transformed unless the transform
    only moves and scales, when the mesh's own bounds transform exactly)."""
    lows, highs = [], []
    for geometry, transform in placed:
        vertices = np.asarray(geometry.vertices, np.float64)
        if not len(vertices):
            continue
        linear = transform[:3, :3]
        if np.count_nonzero(linear - np.diag(np.diag(linear))) == 0:
            scale = np.diag(linear)
            corners = np.array([vertices.min(axis=0) * scale, vertices.max(axis=0) * scale])
            corners = corners + transform[:3, 3]
            lows.append(corners.min(axis=0))
            highs.append(corners.max(axis=0))
        else:
            moved = vertices @ linear.T + transform[:3, 3]
            lows.append(moved.min(axis=0))
            highs.append(moved.max(axis=0))
    if not lows:
        return np.zeros(3), np.zeros(3)
    return np.min(lows, axis=0), np.max(highs, axis=0)


def _unchecked(source: Path, fmt: str, issues: list[Issue], facts: GltfFacts) -> AssetReport:
    """A report that says the geometry was not checked, with no numbers that could mislead."""
    return AssetReport(
        path=str(source), format=fmt, ok=False, issues=issues, geometry_checked=False,
        triangles=None, vertices=None, meshes=[], bounds_min=None, bounds_max=None,
        dimensions_m=None, up_axis="y" if fmt in ("glb", "gltf") else "z", origin_offset_m=None,
        watertight=None, degenerate_faces=None, materials=facts.materials, skins=[],
        animations=[], morph_targets=0,
    )  # fmt: skip


def _check(
    spec: AssetSpec,
    meshes: list[MeshReport],
    triangles: int,
    dimensions: npt.NDArray[np.float64],
    low: npt.NDArray[np.float64],
    high: npt.NDArray[np.float64],
    up_index: int,
    facts: GltfFacts | None,
) -> list[Issue]:
    found: list[Issue] = []

    def add(severity: Severity, code: str, message: str) -> None:
        found.append(Issue(severity=severity, code=code, message=message))

    if spec.max_triangles is not None and triangles > spec.max_triangles:
        add(
            "error",
            "triangle_budget",
            f"{triangles} triangles exceed the budget of {spec.max_triangles}",
        )
    watertight_severity: Severity = "error" if spec.require_watertight else "warning"
    mesh_rules: list[tuple[Severity, str, str, Callable[[MeshReport], str | None]]] = [
        (watertight_severity, "not_watertight", "have open edges",
         lambda m: f"{m.name} ({m.open_edges})" if m.open_edges else None),
        (watertight_severity, "non_manifold", "have edges shared by more than two faces",
         lambda m: f"{m.name} ({m.non_manifold_edges})" if m.non_manifold_edges else None),
        ("warning", "inconsistent_winding", "have inconsistent face winding",
         lambda m: m.name if not m.winding_consistent else None),
        ("warning", "degenerate_faces", "have zero-area faces",
         lambda m: f"{m.name} ({m.degenerate_faces})" if m.degenerate_faces else None),
        ("error", "bad_normals", "have normals that are not unit length",
         lambda m: f"{m.name} ({m.bad_normals})" if m.bad_normals else None),
        ("error", "missing_normals", "have no vertex normals",
         lambda m: m.name if spec.require_normals and m.has_normals is False else None),
        ("error", "missing_uvs", "have no texture coordinates",
         lambda m: m.name if spec.require_uvs and not m.has_uvs else None),
    ]  # fmt: skip
    for severity, code, what, finding in mesh_rules:
        hits = [hit for mesh in meshes if (hit := finding(mesh)) is not None]
        if hits:
            more = f" and {len(hits) - 5} more" if len(hits) > 5 else ""
            add(
                severity,
                code,
                f"{len(hits)} of {len(meshes)} meshes {what}: {', '.join(hits[:5])}{more}",
            )
    if spec.expected_dimensions_m is not None:
        for axis, want, have in zip("xyz", spec.expected_dimensions_m, dimensions, strict=True):
            if abs(have - want) > spec.dimension_tolerance * max(want, 1e-6):
                add(
                    "error",
                    "dimensions",
                    f"{axis} size is {have:.3f} m, expected {want:.3f} m ±{spec.dimension_tolerance:.0%}",
                )
    if spec.origin != "any":
        target = (low + high) / 2
        if spec.origin == "bottom_center":
            target[up_index] = low[up_index]
        distance = float(np.linalg.norm(target))
        allowed = spec.origin_tolerance * float(max(dimensions.max(), 1e-6))
        if distance > allowed:
            add(
                "error",
                "origin",
                f"origin is {distance:.3f} m from the {spec.origin.replace('_', ' ')} of the bounds (allowed {allowed:.3f} m)",
            )
    if facts is not None:
        for skin in facts.skins:
            if spec.max_joints is not None and skin.joint_count > spec.max_joints:
                add(
                    "error",
                    "joint_budget",
                    f"skin {skin.name!r} has {skin.joint_count} joints, more than {spec.max_joints}",
                )
            if not skin.weights_normalized:
                add(
                    "error",
                    "skin_weights",
                    f"skin {skin.name!r}: vertex weights sum to 1 ± {skin.max_weight_sum_error:.3f}",
                )
        for material in facts.materials:
            for texture in material.textures:
                if not texture.resolved:
                    add(
                        "error",
                        "missing_texture",
                        f"material {material.name!r}: texture {texture.source!r} not found",
                    )
    return found
