"""Pydantic models for the Blender wire protocol (agent side and worker side).

Frames are length-prefixed JSON (see ``framing``). The server speaks first with a
``Hello``; the client then sends ``Request`` frames and receives one ``Response``
per request, in order. Over the live-Blender bridge the client first sends an
``Auth`` frame carrying the token.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, WithJsonSchema, model_validator
from pydantic_core import PydanticCustomError

from .framing import PROTOCOL_VERSION
from .primitive_size import metres, read_size

Finite = Annotated[float, Field(allow_inf_nan=False)]
"""A float that is not NaN or infinite (Blender would store it; JSON cannot carry it)."""
Vector3 = tuple[Finite, Finite, Finite]
Unit = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
RGB = Annotated[tuple[Unit, Unit, Unit], Field(description="RGB, each 0..1 (linear)")]
RGBA = Annotated[tuple[Unit, Unit, Unit, Unit], Field(description="RGBA, each 0..1 (linear)")]
Pixels = Annotated[int, Field(ge=16, le=4096)]
Resolution = Annotated[tuple[Pixels, Pixels], Field(description="width, height: 16..4096 px")]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
ObjectNames = Annotated[list[str], Field(min_length=1, description="one or more object names")]
Target = Vector3 | Annotated[str, Field(min_length=1)]
"""What ``look_at`` aims at: a point, or an object's name (the centre of its world bounds)."""


def _metres(value: object) -> float | list[float]:
    try:
        return metres(value)
    except ValueError as exc:  # one message at "size", not one per branch of a union
        raise PydanticCustomError("size", str(exc)) from None


Size = Annotated[
    float | list[float],
    PlainValidator(_metres),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "number", "exclusiveMinimum": 0},
                {"type": "array", "items": {"type": "number", "minimum": 0}, "minItems": 2,
                 "maxItems": 3},
            ]
        }
    ),
]  # fmt: skip
"""create_primitive's size: one number above 0, or 2-3 metres (``primitive_size`` reads them)."""
RestOn = Annotated[
    str,
    Field(
        min_length=1,
        description='"ground" (lowest point at z=0) or an object whose top it then stands on '
        "(centred on it in X/Y unless a location is given)",
    ),
]

__all__ = [
    "COMMAND_ARGS",
    "LIGHT_GAP",
    "PROTOCOL_VERSION",
    "AddModifierArgs",
    "Auth",
    "CommandFailure",
    "ConvertAssetArgs",
    "ConvertResult",
    "CreatePrimitiveArgs",
    "DeleteArgs",
    "DeleteResult",
    "ExecutePythonArgs",
    "ExportAssetArgs",
    "ExportResult",
    "FitViewArgs",
    "FitViewResult",
    "FrameCheckArgs",
    "FrameCheckResult",
    "FrameObject",
    "Hello",
    "IdPass",
    "ImportAssetArgs",
    "ImportResult",
    "IntersectArgs",
    "IntersectResult",
    "MaterialResult",
    "MaterialValues",
    "MeasureArgs",
    "MeasureResult",
    "ModifierInfo",
    "NoArgs",
    "ObjectBounds",
    "ObjectInfo",
    "PassFacts",
    "PassesArgs",
    "PassesResult",
    "PingResult",
    "PlaceCameraArgs",
    "PlaceLightArgs",
    "RenderArgs",
    "RenderResult",
    "RenderedView",
    "Request",
    "ResetResult",
    "Response",
    "SceneInfo",
    "SceneInfoArgs",
    "ScriptOutput",
    "SetMaterialArgs",
    "SetTransformArgs",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --- frames ---------------------------------------------------------------------------


class Hello(BaseModel):
    """First frame from the server: who it is and which protocol it speaks."""

    hello: Literal["agentsdk-blender"] = "agentsdk-blender"
    protocol_version: int
    blender_version: str
    pid: int
    background: bool
    scene_restored: bool = False
    restore_error: str | None = None


class Auth(_Strict):
    """First frame from a bridge client: the shared token and its protocol version."""

    token: str
    protocol_version: int = PROTOCOL_VERSION


class Request(_Strict):
    """One command for the server."""

    id: int
    command: str
    args: dict[str, Any] = Field(default_factory=dict)


class CommandFailure(BaseModel):
    """Why a command failed and whether the scene was restored to its state before it."""

    type: str
    message: str
    rolled_back: bool = False
    details: dict[str, Any] | None = None


class Response(BaseModel):
    """The server's answer to one request (``result`` when ok, ``error`` otherwise)."""

    id: int | None = None
    ok: bool
    result: dict[str, Any] | None = None
    error: CommandFailure | None = None
    notice: str | None = None
    scene_unsaved: bool = False


# --- command arguments ----------------------------------------------------------------


class NoArgs(_Strict):
    """Commands without arguments (ping, reset)."""


class SceneInfoArgs(_Strict):
    """A page of the object list."""

    offset: int = Field(0, ge=0)
    limit: int = Field(50, ge=1, le=500)


class CreatePrimitiveArgs(_Strict):
    """A new mesh primitive."""

    kind: Literal["cube", "plane", "uv_sphere", "ico_sphere", "cylinder", "cone", "torus", "monkey"]
    name: str | None = None
    size: Size = 2.0
    location: Vector3 | None = None
    rotation_degrees: Vector3 | None = None
    scale: Vector3 | None = None
    base_color: RGBA | None = Field(
        None, description='linear RGBA: gives it the material "<name>_material" (see set_material)'
    )
    rest_on: RestOn | None = None

    @model_validator(mode="after")
    def _size_fits_the_kind(self) -> CreatePrimitiveArgs:
        try:
            read_size(self.kind, self.size, self.scale)
        except ValueError as exc:
            raise PydanticCustomError("size", str(exc)) from None
        return self


class SetTransformArgs(_Strict):
    """New transform values; omitted fields stay as they are."""

    name: str
    location: Vector3 | None = None
    rotation_degrees: Vector3 | None = None
    scale: Vector3 | None = None
    look_at: Target | None = None
    rest_on: RestOn | None = None


class SetMaterialArgs(_Strict):
    """PBR values for a Principled BSDF material."""

    name: str
    material_name: str | None = None
    base_color: RGBA = (0.8, 0.8, 0.8, 1.0)
    metallic: Unit = 0.0
    roughness: Unit = 0.5
    emission_color: RGB = (0.0, 0.0, 0.0)
    emission_strength: NonNegative = 0.0


Axis = Literal["x", "y", "z"]


def _x_axis() -> list[Axis]:
    return ["x"]


class AddModifierArgs(_Strict):
    """A modifier and its settings (only the fields for its kind are used)."""

    name: str
    kind: Literal["subdivision", "bevel", "array", "mirror", "boolean"]
    modifier_name: str | None = None
    apply: bool = False
    levels: int = Field(2, ge=0, le=6)
    width: Positive = 0.05
    segments: int = Field(3, ge=1, le=32)
    count: int = Field(3, ge=1, le=1000)
    relative_offset: Vector3 = (1.0, 0.0, 0.0)
    axes: list[Axis] = Field(default_factory=_x_axis)
    operation: Literal["difference", "union", "intersect"] = "difference"
    target: str | None = None
    hide_target: bool = True


class DeleteArgs(_Strict):
    """Objects to delete (``names``), or every object but ``keep`` (the engine refuses both or
    neither): see ``engine_delete`` for what else stays."""

    names: ObjectNames | None = None
    keep: ObjectNames | None = None


class PlaceCameraArgs(_Strict):
    """Where a camera stands and what it looks at."""

    location: Vector3
    look_at: Target = (0.0, 0.0, 0.0)
    name: str | None = None
    lens_mm: Annotated[float, Field(gt=1, le=5000, allow_inf_nan=False)] = 50.0
    make_active: bool = True


LIGHT_GAP = 1.0
"""place_light's default ``gap``: metres between the top of the ``above`` object and the light."""


class PlaceLightArgs(_Strict):
    """Where a light stands (``location``, or ``gap`` metres over the top of the object named
    ``above``, centred on it: ``above`` wins when both are given), what it points at (default:
    the ``above`` object's centre, else the origin), and how bright it is."""

    location: Vector3 | None = None
    look_at: Target | None = None
    kind: Literal["point", "sun", "spot", "area"] = "sun"
    name: str | None = None
    energy: NonNegative | None = None
    color: RGB = (1.0, 1.0, 1.0)
    above: Annotated[str, Field(min_length=1)] | None = None
    gap: NonNegative = LIGHT_GAP

    @model_validator(mode="after")
    def _somewhere(self) -> PlaceLightArgs:
        if self.location is None and self.above is None:
            raise PydanticCustomError(
                "place", "give location [x, y, z] or above (the name of an object to put it over)"
            )
        return self


AssetFormat = Literal["glb", "gltf", "fbx", "obj", "stl", "ply"]


class ImportAssetArgs(_Strict):
    """A file to import."""

    path: str
    format: AssetFormat | None = None


class ExportAssetArgs(_Strict):
    """Where to export and what (all objects when ``names`` is empty)."""

    path: str
    format: AssetFormat | None = None
    names: list[str] = Field(default_factory=list)


class ConvertAssetArgs(_Strict):
    """Convert ``path`` to ``output`` (format from its extension) without touching the scene."""

    path: str
    output: str


View = Literal["camera", "front", "back", "left", "right", "top", "perspective"]


def _camera_only() -> list[View]:
    return ["camera"]


class RenderArgs(_Strict):
    """Render settings."""

    engine: Literal["workbench", "cycles", "eevee"] = "workbench"
    resolution: Resolution = (320, 240)
    samples: int = Field(16, ge=1, le=4096)
    views: list[View] = Field(default_factory=_camera_only, min_length=1, max_length=8)
    report: bool = True


class FitViewArgs(_Strict):
    """Objects to frame (default all) and where to look from."""

    names: list[str] = Field(default_factory=list)
    direction: Vector3 | None = None
    margin: Annotated[float, Field(ge=1.0, le=10.0, allow_inf_nan=False)] = 1.1
    resolution: Resolution = (320, 240)


class MeasureArgs(_Strict):
    """Objects to measure."""

    names: ObjectNames


class IntersectArgs(_Strict):
    """Two objects whose surfaces may cross."""

    a: str
    b: str


class FrameCheckArgs(_Strict):
    """Objects to place in the scene camera's frame of this size."""

    names: ObjectNames
    resolution: Resolution = (320, 240)
    camera: str | None = None


class PassesArgs(_Strict):
    """Size of the depth and normal passes."""

    resolution: Resolution = (320, 240)


class ExecutePythonArgs(_Strict):
    """Free-form code with its resource limits."""

    code: str
    cpu_seconds: float | None = Field(10.0, gt=0)
    memory_bytes: int | None = Field(1 << 30, gt=0)


COMMAND_ARGS: dict[str, type[BaseModel]] = {
    "ping": NoArgs,
    "reset": NoArgs,
    "scene_info": SceneInfoArgs,
    "create_primitive": CreatePrimitiveArgs,
    "set_transform": SetTransformArgs,
    "set_material": SetMaterialArgs,
    "add_modifier": AddModifierArgs,
    "delete": DeleteArgs,
    "place_camera": PlaceCameraArgs,
    "place_light": PlaceLightArgs,
    "import_asset": ImportAssetArgs,
    "export_asset": ExportAssetArgs,
    "convert_asset": ConvertAssetArgs,
    "render": RenderArgs,
    "fit_view": FitViewArgs,
    "measure": MeasureArgs,
    "intersect": IntersectArgs,
    "frame_check": FrameCheckArgs,
    "passes": PassesArgs,
    "execute_python": ExecutePythonArgs,
}
"""Argument model of every command; the worker validates requests against it."""


from .protocol_results import (  # noqa: E402  (results live in their own module)
    ConvertResult,
    DeleteResult,
    ExportResult,
    FitViewResult,
    FrameCheckResult,
    FrameObject,
    IdPass,
    ImportResult,
    IntersectResult,
    MaterialResult,
    MaterialValues,
    MeasureResult,
    ModifierInfo,
    ObjectBounds,
    ObjectInfo,
    PassesResult,
    PassFacts,
    PingResult,
    RenderedView,
    RenderResult,
    ResetResult,
    SceneInfo,
    ScriptOutput,
)
