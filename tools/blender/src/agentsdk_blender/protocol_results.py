"""Result models of the Blender wire protocol: what each command returns (see ``protocol``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Vector3 = tuple[float, float, float]


class PingResult(BaseModel):
    """Identity of the Blender process."""

    blender_version: str
    pid: int
    background: bool


class ResetResult(BaseModel):
    """Objects left after a reset (always 0)."""

    objects: int


class ModifierInfo(BaseModel):
    """A modifier on an object."""

    name: str
    type: str


class MaterialValues(BaseModel):
    """A material's main PBR values (linear RGBA base colour)."""

    name: str
    base_color: tuple[float, ...]
    metallic: float
    roughness: float


class ObjectInfo(BaseModel):
    """One object as the scene sees it (dimensions in metres, rotation in degrees)."""

    name: str
    type: str
    parent: str | None = None
    location: Vector3
    rotation_degrees: Vector3
    scale: Vector3
    dimensions: Vector3
    materials: list[str]
    material_values: list[MaterialValues] = Field(default_factory=list)
    modifiers: list[ModifierInfo]
    polygons: int
    triangles: int
    lowest_z: float | None = Field(None, description="world z of the lowest point of its geometry")
    top_z: float | None = Field(None, description="world z of the highest point of its geometry")
    size_read: str | None = Field(
        None,
        description='create_primitive: how its size was read, e.g. "size [0.5, 3] read as '
        'radius 0.5, height 3 (dimensions 1 x 1 x 3)"',
    )
    rests_on: str | None = Field(
        None, description="after rest_on: what it stands on and the heights measured"
    )
    aimed_at: str | None = Field(
        None, description='after look_at: the point it faces, e.g. "Crate (0, 0, 0.5)"'
    )
    placed: str | None = Field(
        None,
        description='place_light with above: where it went, e.g. "1 m above Can (top z=1.2): '
        'at (0, 0, 2.2)"',
    )
    unchanged: str | None = Field(
        None, description="set_transform only: when it moved nothing, it says so"
    )
    named: str | None = Field(
        None,
        description="place_camera/place_light: the name given instead of the one asked for, "
        "which another kind of object has",
    )
    camera_view: str | None = Field(
        None,
        description="when the scene camera sees none of it: hidden behind which object, or "
        "outside its frame",
    )


class SceneInfo(BaseModel):
    """One page of the scene's objects."""

    total_objects: int
    offset: int
    objects: list[ObjectInfo]
    active_camera: str | None
    unit_system: str
    unit_scale: float


class MaterialResult(BaseModel):
    """Which material an object now has."""

    object: str
    material: str
    unchanged: str | None = Field(
        None, description="when the object already had this material, as it was: it says so"
    )


class DeleteResult(BaseModel):
    """What a delete removed and, with ``keep``, what stayed and why."""

    deleted: list[str]
    kept: list[str] | None = Field(None, description="with keep: every object left")
    also_kept: list[str] | None = Field(None, description="kept without being named, and why")
    reattached: list[str] | None = Field(
        None, description="objects whose parent was deleted (not moved)"
    )


class ImportResult(BaseModel):
    """Objects an import created."""

    path: str
    format: str
    objects: list[str]


class ExportResult(BaseModel):
    """The written file."""

    path: str
    format: str
    bytes: int


class ConvertResult(BaseModel):
    """A converted file and the objects it held."""

    path: str
    format: str
    bytes: int
    objects: list[str]


class PassFacts(BaseModel):
    """What Blender knows about one object in a view (see ``agentsdk.vision.ObjectFacts``)."""

    name: str
    pixels_alone: int | None = None
    pixels_unclipped: int | None = None
    cut_sides: list[Literal["left", "right", "top", "bottom"]] = Field(default_factory=list)
    behind_camera: bool = False
    outside_frustum: bool = False


class IdPass(BaseModel):
    """The object-ID pass of one view: the image, who is who, and the facts."""

    id_png_base64: str
    count: int
    names: dict[str, str]
    facts: list[PassFacts]
    extra_passes: int
    seconds: float


class RenderedView(BaseModel):
    """One rendered image (with its ID pass when a report was asked for)."""

    view: str
    png_base64: str
    seconds: float
    report: IdPass | None = None


class FitViewResult(BaseModel):
    """Where the camera went and what it frames."""

    camera: str
    location: Vector3
    rotation_degrees: Vector3
    framed: list[str]
    note: str | None = Field(
        None, description="when the camera looks from another side than asked, and why"
    )
    hidden: dict[str, str] | None = Field(
        None, description="objects still hidden behind another from every side tried"
    )


class RenderResult(BaseModel):
    """All images of one render call and the engine that made them."""

    engine: str
    width: int
    height: int
    images: list[RenderedView]


class ScriptOutput(BaseModel):
    """What ``execute_python`` printed and raised."""

    stdout: str
    stderr: str
    exception: str | None = None


class ObjectBounds(BaseModel):
    """An object's world-space axis-aligned bounds (evaluated geometry, metres)."""

    name: str
    type: str
    bounds_min: Vector3
    bounds_max: Vector3
    vertices: int
    triangles: int


class MeasureResult(BaseModel):
    """Bounds of the measured objects."""

    objects: list[ObjectBounds]


class IntersectResult(BaseModel):
    """Whether two surfaces cross."""

    surfaces_intersect: bool
    intersecting_pairs: int


class FrameObject(BaseModel):
    """Where one object's vertices project in the camera frame (NDC: -1..1 spans it)."""

    name: str
    behind_camera: bool
    crosses_camera_plane: bool
    outside_frustum: bool
    ndc_rect: tuple[float, float, float, float] | None
    cut_sides: list[str]
    vertices_inside: float


class FrameCheckResult(BaseModel):
    """The camera used and each object's place in its frame."""

    camera: str
    objects: list[FrameObject]


class PassesResult(BaseModel):
    """Depth and normal arrays (base64 float32, rows from the top) and the camera model."""

    camera: dict[str, Any]
    depth_base64: str
    normals_base64: str
    width: int
    height: int
