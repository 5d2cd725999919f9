"""What a render tells the caller: typed report, frames, and the text a model reads on failure."""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field
from typing import Annotated, Literal

from agentsdk.vision import VisibilityReport
from pydantic import BaseModel, Field

SOFTWARE_RENDERER_MARKERS = ("swiftshader", "llvmpipe", "softpipe", "software", "basic render")

Size = Annotated[int, Field(ge=16, le=2048, description="width and height of each image in pixels")]

ViewName = Literal["camera", "front", "back", "side", "left", "top", "bottom", "iso"]


class ConsoleEntry(BaseModel):
    """A console message printed while the scene code ran."""

    level: Literal["log", "warn", "error"]
    text: str
    line: int | None = Field(None, description="line in the scene code, when the call came from it")
    column: int | None = None


class ScriptError(BaseModel):
    """A problem that stops the scene from being what the code asked for."""

    kind: Literal["syntax", "exception", "uncaught", "asset", "timeout", "webgl"]
    text: str
    line: int | None = Field(None, description="line in the scene code (1 = its first line)")
    column: int | None = None


class RendererInfo(BaseModel):
    """The WebGL implementation the page got."""

    webgl: bool
    webgl_version: int
    renderer: str
    vendor: str
    software: bool = Field(description="True for a CPU rasteriser (SwiftShader, llvmpipe)")
    error: str | None = None


class SceneStats(BaseModel):
    """What is in the scene after the code ran."""

    objects: int
    meshes: int
    triangles: int
    lights: int
    bbox_min: list[float] | None = None
    bbox_max: list[float] | None = None


class CameraInfo(BaseModel):
    """The scene camera (the ``camera`` view)."""

    type: str
    position: list[float]


class SceneObject(BaseModel):
    """One object the reports speak about (a named top-level object of the scene)."""

    name: str
    shape: str = Field(
        description="box, sphere, ... for objects made by the typed tools; mesh, group ... otherwise"
    )
    color: str | None = Field(None, description="the first material colour, #rrggbb")
    position: list[float]
    size: list[float] | None = Field(None, description="world-space width, height, depth")
    bbox_min: list[float] | None = None
    bbox_max: list[float] | None = None
    visible: bool = True


class SceneLight(BaseModel):
    """A light in the scene."""

    name: str
    kind: str
    intensity: float
    position: list[float] | None = None
    target: list[float] | None = Field(
        None, description="where a directional or spot light points (world space)"
    )


class SceneCamera(BaseModel):
    """The scene camera: where it is and the point it looks at."""

    type: str
    position: list[float]
    target: list[float]
    fov: float | None = None


class SceneSummary(BaseModel):
    """What the scene holds after a call."""

    objects: list[SceneObject] = []
    lights: list[SceneLight] = []
    camera: SceneCamera


class ViewSummary(BaseModel):
    """One rendered view: is it a single flat colour?"""

    view: str
    uniform: bool = Field(description="every pixel has (almost) the same colour: nothing visible")
    color: str = Field(description="colour of the bottom-left pixel, #rrggbb")


class RenderReport(BaseModel):
    """The structured report returned with every render."""

    ok: bool
    errors: list[ScriptError] = []
    console: list[ConsoleEntry] = []
    renderer: RendererInfo
    stats: SceneStats
    camera: CameraInfo | None = None
    views: list[ViewSummary] = []
    blank: bool = Field(False, description="at least one view is a uniform colour")
    render_ms: float = Field(description="wall time of the render call, milliseconds")
    visibility_ms: float | None = Field(
        None, description="of which the page's object-ID passes took this long, milliseconds"
    )
    notes: list[str] = []


@dataclass
class RenderResult:
    """A report plus the PNG bytes of each view, in the order of ``report.views``."""

    report: RenderReport
    images: list[bytes] = field(default_factory=list)
    scene: SceneSummary | None = None
    changes: list[str] = field(default_factory=list)
    op_error: str | None = None
    unchanged: bool = False
    """Typed operations that left the scene as it was (a colour set to the one it had)."""
    visibility: list[VisibilityReport] = field(default_factory=list)
    """One report per view (same order as ``images``), empty when the pass was off."""


def is_software_renderer(renderer: str) -> bool:
    """True when the WebGL renderer string names a CPU rasteriser."""
    lowered = renderer.lower()
    return any(marker in lowered for marker in SOFTWARE_RENDERER_MARKERS)


def software_note(renderer: RendererInfo) -> str:
    """The note a report carries when WebGL runs on a CPU rasteriser."""
    return f"Rendered in software ({renderer.renderer}): correct pictures, slower than a GPU."


def decode_data_url(data_url: str) -> bytes:
    """The bytes of a ``data:image/png;base64,...`` URL."""
    return base64.b64decode(data_url.split(",", 1)[1])


def hex_color(rgb: list[int]) -> str:
    """``[255, 0, 0]`` -> ``#ff0000``."""
    return "#" + "".join(f"{int(value):02x}" for value in rgb[:3])


def source_line(code: str, line: int | None) -> str | None:
    """The text of a 1-based line of the scene code, if it exists."""
    if line is None or line < 1:
        return None
    lines = code.splitlines()
    return lines[line - 1].strip() if line <= len(lines) else None


def describe_stats(stats: SceneStats) -> str:
    """One line about the scene for a model."""
    box = (
        f", bounding box {_vec(stats.bbox_min)} to {_vec(stats.bbox_max)}"
        if stats.bbox_min is not None and stats.bbox_max is not None
        else ", nothing with geometry"
    )
    return (
        f"The scene has {stats.objects} object(s), {stats.meshes} mesh(es), "
        f"{stats.triangles} triangle(s), {stats.lights} light(s){box}."
    )


def describe_failure(report: RenderReport, code: str = "") -> str:
    """The message a model gets when a render failed or came back blank."""
    lines: list[str] = []
    if report.errors:
        lines.append("The scene code failed:")
        for error in report.errors:
            where = f" at line {error.line}" if error.line is not None else ""
            where += f", column {error.column}" if error.line is not None and error.column else ""
            lines.append(f"- {error.kind} error{where}: {error.text}")
            text = source_line(code, error.line)
            if text:
                lines.append(f"    {error.line} | {text}")
    for entry in report.console:
        if entry.level == "error":
            where = f" at line {entry.line}" if entry.line is not None else ""
            lines.append(f"- console.error{where}: {entry.text}")
    if not report.errors and report.blank:
        flat = ", ".join(
            f"{view.view} is all {view.color}" for view in report.views if view.uniform
        )
        lines.append(f"The frame is blank: {flat}.")
        lines.append(
            "Likely causes: no light for a lit material (MeshStandardMaterial needs lights), "
            "the camera is not looking at the objects, objects are outside the view or too small, "
            "or they have the background colour."
        )
    lines.append(describe_stats(report.stats))
    if report.camera is not None:
        lines.append(f"Camera: {report.camera.type} at {_vec(report.camera.position)}.")
    # The software-rendering note does not help fixing the scene; other notes do.
    lines.extend(note for note in report.notes if note != software_note(report.renderer))
    return "\n".join(lines)


def is_failure(report: RenderReport) -> bool:
    """Errors, console.error output, or a blank view."""
    return bool(report.errors) or report.blank or any(e.level == "error" for e in report.console)


def montage(images: list[bytes], labels: list[str]) -> bytes:
    """Tile PNG frames into one labelled grid (2 columns) and return it as PNG."""
    from PIL import Image as PILImage
    from PIL import ImageDraw

    frames = [PILImage.open(io.BytesIO(data)).convert("RGB") for data in images]
    width, height = frames[0].size
    columns = 1 if len(frames) == 1 else 2
    rows = (len(frames) + columns - 1) // columns
    sheet = PILImage.new("RGB", (width * columns, height * rows), (40, 40, 40))
    draw = ImageDraw.Draw(sheet)
    for index, (frame, label) in enumerate(zip(frames, labels, strict=True)):
        x, y = (index % columns) * width, (index // columns) * height
        sheet.paste(frame, (x, y))
        draw.rectangle((x, y, x + 8 + 7 * len(label), y + 16), fill=(0, 0, 0))
        draw.text((x + 4, y + 3), label, fill=(255, 255, 255))
    out = io.BytesIO()
    sheet.save(out, format="PNG")
    return out.getvalue()


MAX_LISTED = 12


def describe_scene(summary: SceneSummary, max_objects: int = MAX_LISTED) -> str:
    """A few lines a small model can plan from: objects, lights, camera."""
    lines = []
    if summary.objects:
        shown = []
        for item in summary.objects[:max_objects]:
            size = f" size {'x'.join(f'{v:.3g}' for v in item.size)}" if item.size else ""
            color = f" {item.color}" if item.color else ""
            hidden = " hidden" if not item.visible else ""
            shown.append(
                f"{item.name} ({item.shape}{color}) at {_vec(item.position)}{size}{hidden}"
            )
        more = len(summary.objects) - max_objects
        lines.append(
            "Objects: " + "; ".join(shown) + (f"; and {more} more" if more > 0 else "") + "."
        )
    else:
        lines.append("Objects: none.")
    if summary.lights:
        lights = [
            f"{light.name} ({light.kind} {light.intensity:g})"
            + (f" at {_vec(light.position)}" if light.position is not None else "")
            for light in summary.lights[:max_objects]
        ]
        more = len(summary.lights) - max_objects
        lines.append(
            "Lights: " + "; ".join(lights) + (f"; and {more} more" if more > 0 else "") + "."
        )
    else:
        lines.append("Lights: none (lit materials look black; add_light adds one).")
    camera = summary.camera
    fov = f", fov {camera.fov:g}" if camera.fov is not None else ""
    lines.append(f"Camera at {_vec(camera.position)} looking at {_vec(camera.target)}{fov}.")
    return "\n".join(lines)


def _vec(values: list[float] | None) -> str:
    if values is None:
        return "?"
    return "(" + ", ".join(f"{value:.3g}" for value in values) + ")"
