"""The visibility report of a Godot screenshot, from the passes the harness rendered.

The harness (`VisionPass` in `gdscript/godot3/harness.gd`) freezes the scene after the picture,
then renders with a copy of the camera into a viewport `scale` times the frame's size (same
pixel scale, so the frame is its middle): once with every named object in a flat ID colour,
then each object alone. This module reads those passes and hands them to
`agentsdk.vision.visibility_report`: the ID pass's middle is the frame's object map; an object's
alone pass gives the pixels it would cover unoccluded (its middle) and unclipped (all of it).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from agentsdk.vision import (
    FLAT_FRAME_HINT,
    ObjectFacts,
    VisibilityReport,
    id_colours,
    load_rgb,
    visibility_report,
)
from numpy.typing import NDArray
from pydantic import BaseModel

__all__ = ["PassIndex", "read_report"]


class PassObject(BaseModel):
    """One named object of the passes, as the harness listed it."""

    name: str
    index: int
    behind_camera: bool = False
    outside_frustum: bool = False
    alone: str = ""
    clear: bool = False  # nothing can be in front of it: the ID pass shows all of it


class PassLight(BaseModel):
    """A light that was on in the scene (visible in the tree), in world space."""

    name: str  # node path from the scene's root
    type: str  # DirectionalLight, OmniLight, SpotLight
    direction: list[float]  # where it shines: its -Z axis
    energy: float = 1.0
    own: bool = True  # a node of the scene itself, not of a scene instanced in it
    parent_axes: list[list[float]] | None = None  # the parent's world axes, for a local pose


class PassIndex(BaseModel):
    """`report.json`: the frame, the scale of the passes, and the objects."""

    width: int
    height: int
    scale: int
    camera: bool
    objects: list[PassObject]
    view: str = ""  # the camera's node path
    scene: str = ""  # the scene's res:// path
    lights: list[PassLight] = []
    camera_axes: list[list[float]] | None = None  # the camera's world axes (it looks along -z)


def _sides(mask: NDArray[np.bool_], width: int, height: int, scale: int) -> list[str]:
    """Where a mask of the big pass reaches past the frame in its middle."""
    x0, y0 = (scale - 1) // 2 * width, (scale - 1) // 2 * height
    found = []
    if mask[:, :x0].any():
        found.append("left")
    if mask[:, x0 + width :].any():
        found.append("right")
    if mask[:y0, :].any():
        found.append("top")
    if mask[y0 + height :, :].any():
        found.append("bottom")
    return found


def _region_counts(ids: NDArray[np.int32], count: int) -> NDArray[np.int64]:
    return np.bincount(ids.ravel(), minlength=count + 1)


def read_report(
    folder: Path, view: str | None = None, frame_tool: str | None = "fit_view"
) -> VisibilityReport:
    """The report of the passes in `folder` (`report.json`, `beauty.png`, `ids.rgb`, `alone_*.l8`);
    the view is named after the camera's node path unless `view` is given. Framing hints name
    `frame_tool` (`call fit_view(names=["Box"]) or ...`); None for a game already running,
    where the scene file's camera is not the one on screen until the game restarts."""
    index = PassIndex.model_validate(json.loads((folder / "report.json").read_text()))
    view = view or index.view or "no camera"
    beauty = load_rgb((folder / "beauty.png").read_bytes())
    width, height, scale = index.width, index.height, index.scale
    names = {o.index: o.name for o in index.objects}
    facts: dict[str, ObjectFacts] = {}
    ids_file = folder / "ids.rgb"
    if not index.camera or not ids_file.exists():
        ids = np.zeros((height, width), dtype=np.int32)
        for o in index.objects:
            facts[o.name] = ObjectFacts(name=o.name, behind_camera=o.behind_camera)
        report = visibility_report(ids, names, beauty, facts, view=view, frame_tool=frame_tool)
        report.hints.insert(
            0,
            f"the scene has no current Camera: call {frame_tool}() to add one that frames "
            "everything, or add a Camera node"
            if frame_tool
            else "the scene has no current Camera: add a Camera node",
        )
        return report
    big = _raw(ids_file, height * scale, width * scale, 3)
    count = len(index.objects)
    x0, y0 = (scale - 1) // 2 * width, (scale - 1) // 2 * height
    ids = decode_ids(big[y0 : y0 + height, x0 : x0 + width], count)
    in_frame = _region_counts(ids, count)
    # objects with no pass alone (nothing in front of them, or over the limit) are measured on
    # the whole ID pass (decoded only then: it is scale^2 times the frame)
    over_limit = [o for o in index.objects if not o.alone and not o.behind_camera]
    outside: dict[str, NDArray[np.int64]] = {}
    anywhere: NDArray[np.int64] | None = None
    if over_limit:
        big_ids = decode_ids(big, count)
        anywhere = _region_counts(big_ids, count)
        outside = {
            "left": _region_counts(big_ids[:, :x0], count),
            "right": _region_counts(big_ids[:, x0 + width :], count),
            "top": _region_counts(big_ids[:y0, :], count),
            "bottom": _region_counts(big_ids[y0 + height :, :], count),
        }
    for o in index.objects:
        fact: dict[str, Any] = {
            "name": o.name,
            "behind_camera": o.behind_camera,
            "outside_frustum": o.outside_frustum,
        }
        if o.alone:
            mask = _raw(folder / o.alone, height * scale, width * scale, 1)[..., 0] > 0
            fact["pixels_alone"] = int(mask[y0 : y0 + height, x0 : x0 + width].sum())
            fact["pixels_unclipped"] = int(mask.sum())
            fact["cut_sides"] = _sides(mask, width, height, scale)
        elif anywhere is not None and anywhere[o.index]:
            # what shows of it in and around the frame; all of it when nothing can hide it
            fact["pixels_unclipped"] = int(anywhere[o.index])
            fact["cut_sides"] = [side for side, n in outside.items() if n[o.index]]
            if o.clear:
                fact["pixels_alone"] = int(in_frame[o.index])
        facts[o.name] = ObjectFacts(**fact)
    report = visibility_report(ids, names, beauty, facts, view=view, frame_tool=frame_tool)
    _hint_lighting(report, index, frame_tool is not None)
    return report


def _hint_lighting(report: VisibilityReport, index: PassIndex, calls: bool) -> None:
    """A frame that is flat or has black objects, lit only by directional lights that do not
    shine the way the camera looks: say which light and how to turn it (the core's hint says
    only "add lights"). A default DirectionalLight shines along -Z, so a camera looking from
    the side sees the faces it leaves dark. ``calls``: write the fix as a tool call."""
    shown = [o for o in report.objects if o.visible]
    if index.camera_axes is None or not shown:
        return
    if not report.blank and not any(o.colour == "black" for o in shown):
        return
    look = -_unit(np.array(index.camera_axes[2], dtype=float))
    # shine the way the camera looks, a little downwards, so the tops are lit too
    wanted = _unit(look + np.array((0.0, -0.4, 0.0))) if abs(look[1]) < 0.99 else look
    lights = [light for light in index.lights if light.energy > 0]
    scene = index.scene
    if not lights:
        rotation = _rotation_text(wanted)
        fix = (
            f'add_node(scene="{scene}", name="Sun", type="DirectionalLight", '
            f'properties={{"rotation_degrees": "{rotation}"}})'
            if calls and scene
            else f"a DirectionalLight with rotation_degrees = {rotation}"
        )
        hint = f"the scene has no light: add one that shines the way the camera looks, {fix}"
    else:
        if any(light.type != "DirectionalLight" for light in lights):
            return  # a lamp's reach and aim are not judged here
        shining = [
            (float(np.dot(_unit(np.array(light.direction)), look)), light) for light in lights
        ]
        best, light = max(shining, key=lambda pair: (pair[0], pair[1].own))
        if best >= 0.5 or not light.own:
            return  # a light shines at what the camera sees: the dark is something else
        where = "towards the camera" if best < -0.3 else "across the camera's view"
        rotation = _rotation_text(_local(wanted, light.parent_axes))
        fix = (
            f'set_property(scene="{scene}", node="{light.name}", property="rotation_degrees", '
            f'value="{rotation}")'
            if calls and scene
            else f"rotation_degrees = {rotation} on {light.name}"
        )
        direction = ", ".join(f"{c:.2g}" for c in _unit(np.array(light.direction)) + 0.0)
        hint = (
            f"{light.name} shines along ({direction}), {where}, so the sides the camera sees "
            f"get no light: turn it to shine the way the camera looks, {fix}"
        )
    flat = next((i for i, h in enumerate(report.hints) if h.startswith(FLAT_FRAME_HINT)), None)
    if flat is None:
        report.hints.append(hint)
    else:
        report.hints[flat] = hint


def _unit(v: NDArray[np.float64]) -> NDArray[np.float64]:
    length = float(np.linalg.norm(v))
    return v / length if length > 1e-9 else np.array((0.0, 0.0, -1.0))


def _local(
    direction: NDArray[np.float64], parent_axes: list[list[float]] | None
) -> NDArray[np.float64]:
    """A world direction in the frame of a parent with these world axes."""
    if parent_axes is None:
        return direction
    parent = np.array(parent_axes, dtype=float).T  # columns are the axes
    if abs(float(np.linalg.det(parent))) < 1e-9:
        return direction
    return _unit(np.linalg.solve(parent, direction))


def _rotation_text(direction: NDArray[np.float64]) -> str:
    """``rotation_degrees`` (Godot's YXZ order, no roll) of a node whose -Z points along
    ``direction``: -Z turned by pitch x then yaw y is (-sin y cos x, sin x, -cos y cos x)."""
    dx, dy, dz = (float(c) for c in _unit(direction))
    pitch = math.degrees(math.asin(max(-1.0, min(1.0, dy))))
    yaw = math.degrees(math.atan2(-dx, -dz)) if abs(dy) < 0.9999 else 0.0
    numbers = [round(pitch, 1) + 0.0, round(yaw, 1) + 0.0, 0]
    return "Vector3( " + ", ".join(f"{n:g}" for n in numbers) + " )"


def decode_ids(image: NDArray[np.uint8], count: int) -> NDArray[np.int32]:
    """`agentsdk.vision.ids_from_colours`, by table lookup (the ID pass is 9x the frame)."""
    colours = id_colours(count)
    step = float(colours[1][2]) if count else 255.0  # object 1 is (0, 0, step)
    levels = round(255.0 / step) + 1
    lut = np.rint(np.arange(256, dtype=np.float64) / (255.0 / (levels - 1))).astype(np.int32)
    digits = lut[image[..., :3]]
    ids: NDArray[np.int32] = (digits[..., 0] * levels + digits[..., 1]) * levels + digits[..., 2]
    ids[ids > count] = 0
    return ids


def _raw(path: Path, height: int, width: int, channels: int) -> NDArray[np.uint8]:
    data = np.fromfile(path, dtype=np.uint8)
    expected = height * width * channels
    if data.size != expected:
        raise ValueError(f"{path.name}: {data.size} bytes, expected {width}x{height}x{channels}")
    return data.reshape(height, width, channels)
