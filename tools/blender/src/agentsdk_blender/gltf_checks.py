"""glTF-specific facts for validate_asset: normals, UVs, morph targets, materials,
textures, skins and animations, read with pygltflib."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pygltflib

from .gltf_reader import AccessorReader, GltfDataError, load_gltf, uri_resolves
from .validation_models import AnimationReport, Issue, MaterialReport, SkinReport, TextureReport


@dataclass
class MeshFacts:
    """What the glTF says about one mesh's attributes."""

    has_normals: bool = True
    has_uvs: bool = True
    morph_targets: int = 0
    bad_normals: int = 0


# Required extensions that do not change where the geometry is or how it is stored
# (materials, textures, lights, metadata), and those this validator decodes itself.
GEOMETRY_NEUTRAL = frozenset({
    "KHR_materials_anisotropy", "KHR_materials_clearcoat", "KHR_materials_dispersion",
    "KHR_materials_emissive_strength", "KHR_materials_ior", "KHR_materials_iridescence",
    "KHR_materials_pbrSpecularGlossiness", "KHR_materials_sheen", "KHR_materials_specular",
    "KHR_materials_transmission", "KHR_materials_unlit", "KHR_materials_variants",
    "KHR_materials_volume", "KHR_texture_basisu", "KHR_texture_transform", "EXT_texture_webp",
    "EXT_texture_avif", "KHR_lights_punctual", "EXT_lights_image_based", "KHR_xmp_json_ld",
    "KHR_animation_pointer",
})  # fmt: skip
DECODED = frozenset({"KHR_draco_mesh_compression"})
# Used without being required, these still leave placement to the fallback a plain reader sees.
PLACEMENT_EXTENSIONS = frozenset({"EXT_mesh_gpu_instancing"})


@dataclass
class GltfFacts:
    """Everything read from the glTF structure."""

    unsupported_extensions: list[str] = field(default_factory=list)
    meshes: dict[str, MeshFacts] = field(default_factory=dict)
    materials: list[MaterialReport] = field(default_factory=list)
    skins: list[SkinReport] = field(default_factory=list)
    animations: list[AnimationReport] = field(default_factory=list)

    def mesh(self, name: str) -> MeshFacts | None:
        """Facts for a trimesh geometry name (glTF mesh name, maybe with a _N suffix)."""
        if name in self.meshes:
            return self.meshes[name]
        stem = name.rsplit("_", 1)[0]
        if stem in self.meshes:
            return self.meshes[stem]
        if not self.meshes:
            return None
        every = list(self.meshes.values())  # unknown name: what holds for all meshes
        return MeshFacts(
            has_normals=all(m.has_normals for m in every),
            has_uvs=all(m.has_uvs for m in every),
            morph_targets=0,
            bad_normals=0,
        )


def _mesh_facts(
    gltf: pygltflib.GLTF2, reader: AccessorReader, issues: list[Issue]
) -> dict[str, MeshFacts]:
    found: dict[str, MeshFacts] = {}
    for index, mesh in enumerate(gltf.meshes):
        facts = MeshFacts()
        for primitive in mesh.primitives:
            attributes = primitive.attributes
            facts.has_normals &= attributes.NORMAL is not None
            facts.has_uvs &= attributes.TEXCOORD_0 is not None
            facts.morph_targets = max(facts.morph_targets, len(primitive.targets or []))
            if attributes.NORMAL is not None:
                try:
                    lengths = np.linalg.norm(reader.attribute(primitive, "NORMAL"), axis=1)
                except (GltfDataError, IndexError, KeyError) as exc:
                    issues.append(Issue(severity="error", code="bad_accessor", message=str(exc)))
                    continue
                facts.bad_normals += int(np.count_nonzero(np.abs(lengths - 1.0) > 1e-2))
        found[mesh.name or f"mesh_{index}"] = facts
    return found


def _texture(gltf: pygltflib.GLTF2, base_dir: Path, slot: str, index: int) -> TextureReport:
    if index >= len(gltf.textures) or gltf.textures[index].source is None:
        return TextureReport(slot=slot, source=f"texture {index}", resolved=False)
    image_index = gltf.textures[index].source
    if image_index >= len(gltf.images):
        return TextureReport(slot=slot, source=f"image {image_index}", resolved=False)
    image = gltf.images[image_index]
    if image.uri:
        shown = "data URI" if image.uri.startswith("data:") else image.uri
        return TextureReport(slot=slot, source=shown, resolved=uri_resolves(base_dir, image.uri))
    valid_view = image.bufferView is not None and image.bufferView < len(gltf.bufferViews)
    return TextureReport(
        slot=slot, source=f"embedded (bufferView {image.bufferView})", resolved=valid_view
    )


def _materials(gltf: pygltflib.GLTF2, base_dir: Path) -> list[MaterialReport]:
    reports = []
    for index, material in enumerate(gltf.materials):
        pbr = material.pbrMetallicRoughness or pygltflib.PbrMetallicRoughness()
        slots = {
            "base_color": pbr.baseColorTexture,
            "metallic_roughness": pbr.metallicRoughnessTexture,
            "normal": material.normalTexture,
            "occlusion": material.occlusionTexture,
            "emissive": material.emissiveTexture,
        }
        textures = [
            _texture(gltf, base_dir, slot, info.index)
            for slot, info in slots.items()
            if info is not None
        ]
        r, g, b, a = pbr.baseColorFactor or (1.0, 1.0, 1.0, 1.0)
        reports.append(
            MaterialReport(
                name=material.name or f"material_{index}",
                base_color=(r, g, b, a),
                metallic=1.0 if pbr.metallicFactor is None else pbr.metallicFactor,
                roughness=1.0 if pbr.roughnessFactor is None else pbr.roughnessFactor,
                textures=textures,
            )
        )
    return reports


def _skins(gltf: pygltflib.GLTF2, reader: AccessorReader) -> list[SkinReport]:
    reports = []
    for index, skin in enumerate(gltf.skins):
        joint_count = len(skin.joints)
        sums: list[npt.NDArray[np.float64]] = []
        out_of_range = 0
        meshes = {node.mesh for node in gltf.nodes if node.skin == index and node.mesh is not None}
        for mesh_index in sorted(meshes):
            for primitive in gltf.meshes[mesh_index].primitives:
                attributes = primitive.attributes
                weight_sets = [
                    n
                    for n in ("WEIGHTS_0", "WEIGHTS_1")
                    if getattr(attributes, n, None) is not None
                ]
                joint_sets = [
                    n for n in ("JOINTS_0", "JOINTS_1") if getattr(attributes, n, None) is not None
                ]
                if not weight_sets:
                    continue
                weights = [reader.attribute(primitive, n) for n in weight_sets]
                sums.append(np.sum([w.sum(axis=1) for w in weights], axis=0))
                for joints, weight in zip(
                    (reader.attribute(primitive, n) for n in joint_sets), weights, strict=False
                ):
                    out_of_range += int(np.count_nonzero((joints >= joint_count) & (weight > 0)))
        total = np.concatenate(sums) if sums else np.ones(0)
        error = float(np.abs(total - 1.0).max()) if total.size else 0.0
        reports.append(
            SkinReport(
                name=skin.name or f"skin_{index}",
                joint_count=joint_count,
                skinned_vertices=int(total.size),
                max_weight_sum_error=round(error, 6),
                weights_normalized=error <= 2e-2,  # 8-bit normalised weights round by ~1/255 each
                joint_index_out_of_range=out_of_range,
            )
        )
    return reports


def _animations(gltf: pygltflib.GLTF2, reader: AccessorReader) -> list[AnimationReport]:
    reports = []
    for index, animation in enumerate(gltf.animations):
        duration = 0.0
        for sampler in animation.samplers:
            accessor = gltf.accessors[sampler.input]
            if accessor.max:
                duration = max(duration, float(accessor.max[0]))
            else:
                duration = max(duration, float(reader.read(sampler.input).max(initial=0.0)))
        paths = sorted({c.target.path for c in animation.channels if c.target is not None})
        reports.append(
            AnimationReport(
                name=animation.name or f"animation_{index}",
                channels=len(animation.channels),
                target_paths=paths,
                duration_s=round(duration, 6),
            )
        )
    return reports


def _draco_decodes(gltf: pygltflib.GLTF2, reader: AccessorReader, issues: list[Issue]) -> bool:
    """Whether every Draco primitive decodes to what its accessors promise (trimesh would
    otherwise fill an undecodable one with zeros: a mesh that is not in the file)."""
    for mesh_index, mesh in enumerate(gltf.meshes):
        for primitive in mesh.primitives:
            try:
                reader.check_draco(primitive)
            except (GltfDataError, IndexError, KeyError, ValueError) as exc:
                message = f"mesh {mesh.name or mesh_index}: {exc}; its geometry was not checked"
                issues.append(Issue(severity="error", code="undecodable_draco", message=message))
                return False
    return True


def inspect_gltf(path: Path, issues: list[Issue]) -> GltfFacts:
    """Read the glTF structure; problems become issues rather than exceptions."""
    try:
        gltf = load_gltf(path)
    except Exception as exc:
        issues.append(
            Issue(severity="error", code="unreadable_gltf", message=f"{type(exc).__name__}: {exc}")
        )
        return GltfFacts()
    base_dir = path.parent
    required = set(gltf.extensionsRequired or [])
    unsupported = sorted(required - GEOMETRY_NEUTRAL - DECODED)
    if unsupported:
        names = ", ".join(unsupported)
        issues.append(
            Issue(
                severity="error",
                code="unsupported_extension",
                message=f"the file requires {names}, which this validator cannot decode: its "
                "geometry (triangles, size, topology, normals) was not checked",
            )
        )
        return GltfFacts(unsupported_extensions=unsupported, materials=_materials(gltf, base_dir))
    for name in sorted(set(gltf.extensionsUsed or []) & PLACEMENT_EXTENSIONS - required):
        issues.append(
            Issue(
                severity="warning",
                code="extension_not_expanded",
                message=f"{name} is used but not expanded: counts and bounds are those of the "
                "file's fallback, without the extra instances",
            )
        )
    for index, buffer in enumerate(gltf.buffers):
        if buffer.uri and not uri_resolves(base_dir, buffer.uri):
            issues.append(
                Issue(
                    severity="error",
                    code="missing_buffer",
                    message=f"buffer {index} file {buffer.uri!r} not found",
                )
            )
    reader = AccessorReader(gltf, base_dir)
    facts = GltfFacts(materials=_materials(gltf, base_dir))
    if not _draco_decodes(gltf, reader, issues):
        facts.unsupported_extensions = ["KHR_draco_mesh_compression (undecodable data)"]
        return facts
    try:
        facts.meshes = _mesh_facts(gltf, reader, issues)
        facts.skins = _skins(gltf, reader)
        facts.animations = _animations(gltf, reader)
    except (GltfDataError, IndexError, KeyError, ValueError) as exc:
        issues.append(
            Issue(severity="error", code="bad_accessor", message=f"{type(exc).__name__}: {exc}")
        )
    return facts
