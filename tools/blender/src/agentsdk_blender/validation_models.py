"""Parts of an asset validation report."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class Issue(BaseModel):
    """One finding; errors make the report fail, warnings do not."""

    severity: Literal["error", "warning"]
    code: str
    message: str


class MeshReport(BaseModel):
    """Geometry checks of one mesh (triangles and vertices as stored, before instancing)."""

    name: str
    triangles: int
    vertices: int
    watertight: bool
    open_edges: int = 0
    non_manifold_edges: int = 0
    winding_consistent: bool
    degenerate_faces: int
    has_normals: bool | None = None
    bad_normals: int = 0
    has_uvs: bool
    morph_targets: int = 0


class TextureReport(BaseModel):
    """A texture a material uses and whether its image data can be found."""

    slot: str
    source: str
    resolved: bool


class MaterialReport(BaseModel):
    """A glTF material with its PBR factors and textures."""

    name: str
    base_color: tuple[float, float, float, float]
    metallic: float
    roughness: float
    textures: list[TextureReport]


class SkinReport(BaseModel):
    """A skin: its joints and whether each skinned vertex's weights sum to 1."""

    name: str
    joint_count: int
    skinned_vertices: int
    max_weight_sum_error: float
    weights_normalized: bool
    joint_index_out_of_range: int


class AnimationReport(BaseModel):
    """An animation clip."""

    name: str
    channels: int
    target_paths: list[str]
    duration_s: float
