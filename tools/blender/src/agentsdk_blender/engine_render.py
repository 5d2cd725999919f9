"""Rendering inside Blender: beauty views, the ID pass after each, and camera framing.

Stdlib + bpy + numpy (ships inside the add-on too). ``render`` changes render settings
only for its own duration: every setting, the scene camera and the world are put back.
"""

from __future__ import annotations

import base64
import math
import os
import shutil
import tempfile
import time
from typing import Any

import bpy
from mathutils import Vector

from .engine_errors import CommandError
from .engine_names import shown
from .engine_settings import settings_kept
from .engine_sight import hidden_from
from .engine_unknown import missing_objects
from .engine_vision import id_pass, renderable_objects

JSON = dict[str, Any]

ENGINES = {"workbench": "BLENDER_WORKBENCH", "cycles": "CYCLES", "eevee": "BLENDER_EEVEE"}
VIEW_DIRECTIONS = {
    "front": (0.0, -1.0, 0.0),
    "back": (0.0, 1.0, 0.0),
    "left": (-1.0, 0.0, 0.0),
    "right": (1.0, 0.0, 0.0),
    "top": (0.0, 0.0, 1.0),
    "perspective": (1.0, -1.0, 0.8),
}


def _framing_camera(view: str) -> Any:
    import numpy as np

    scene = bpy.context.scene
    geometry = renderable_objects(bpy.context.evaluated_depsgraph_get())
    parts = [p for pieces in geometry.values() for p in pieces]
    points = np.concatenate(parts) if parts else np.array([[-1.0, -1.0, -1.0], [1.0, 1.0, 1.0]])
    data = bpy.data.cameras.new("agentsdk_view")
    camera = bpy.data.objects.new("agentsdk_view", data)
    scene.collection.objects.link(camera)
    size = (scene.render.resolution_x, scene.render.resolution_y)
    _fit(camera, points, Vector(VIEW_DIRECTIONS[view]), size, 1.08)
    return camera


def _half_tangents(data: Any, width: int, height: int) -> tuple[float, float]:
    """tan of half the horizontal and vertical field of view for this frame shape."""
    aspect = width / height
    fit = data.sensor_fit
    if fit == "VERTICAL" or (fit == "AUTO" and height > width):
        size = data.sensor_height if fit == "VERTICAL" else data.sensor_width
        vertical = size / (2 * data.lens)
        return vertical * aspect, vertical
    horizontal = data.sensor_width / (2 * data.lens)
    return horizontal, horizontal / aspect


def _fit(camera: Any, points: Any, direction: Vector, size: tuple[int, int], margin: float) -> None:
    """Aim along -direction at the points' centre and back off just enough that every
    point projects inside the frame with ``margin`` to spare (exact for the vertices)."""
    import numpy as np

    low, high = points.min(axis=0), points.max(axis=0)
    centre = Vector(((low + high) / 2).tolist())
    forward = -direction.normalized()
    if abs(forward.z) > 0.999:  # straight down (or up): image up is +Y
        camera.rotation_euler = (0.0 if forward.z < 0 else math.pi, 0.0, 0.0)
    else:
        camera.rotation_euler = forward.to_track_quat("-Z", "Y").to_euler()
    rotation = np.array(camera.rotation_euler.to_matrix(), np.float64)
    local = (points - np.array(centre)) @ rotation  # columns: right, up, backward
    lateral_x, lateral_y, ahead = np.abs(local[:, 0]), np.abs(local[:, 1]), -local[:, 2]
    data = camera.data
    if data.type == "ORTHO":
        aspect = size[0] / size[1]
        span = max(2 * lateral_x.max(), 2 * lateral_y.max() * aspect) * margin
        data.ortho_scale = max(span if aspect >= 1 else span / aspect, 1e-3)
        distance = float(np.abs(local).max()) * 2 + 1.0
    else:
        tan_x, tan_y = _half_tangents(data, *size)
        need = np.maximum(lateral_x * margin / tan_x, lateral_y * margin / tan_y) - ahead
        distance = float(max(need.max(), (ahead.max() + data.clip_start) * 1.01))
    camera.location = centre - forward * distance
    depth_far = distance + float(np.abs(local).max()) * 2
    data.clip_start = min(data.clip_start, max(distance - float(np.abs(local).max()) * 1.5, 1e-3))
    data.clip_end = max(data.clip_end, depth_far)


def _unknown_names(missing: list[str], names: list[str], known: list[str]) -> str:
    """The error for names with no geometry, ending in the call that would work: each name
    swapped for its likely object (the only one, when the scene draws one object)."""
    if not known:
        return f"no rendered geometry named {shown(missing)}: the scene draws nothing yet"
    text = missing_objects(
        missing, tool="fit_view", field="names", asked=names, known=known,
        known_as="objects with geometry", without="frames every object", sole=True,
        none="no rendered geometry named",
    )  # fmt: skip
    drawless = [bpy.data.objects[n] for n in missing if n in bpy.data.objects]
    notes = [f"{o.name} is a {o.type.lower()}: nothing to frame" for o in drawless]
    return text + (f" ({'; '.join(notes)})" if notes else "")


def fit_view(args: JSON) -> JSON:
    """Move the scene camera (created if missing) so the named objects (default: all) fit
    the frame, looking from where it is now, or along ``direction``."""
    import numpy as np

    scene = bpy.context.scene
    names = list(args.get("names") or [])
    geometry = renderable_objects(bpy.context.evaluated_depsgraph_get())
    missing = [n for n in names if n not in geometry]
    if missing:
        raise CommandError(_unknown_names(missing, names, sorted(geometry)))
    if not geometry:
        raise CommandError("the scene has no geometry to frame")
    points = np.concatenate(
        [p for n, parts in geometry.items() if not names or n in names for p in parts]
    )
    camera = scene.camera
    if camera is None:
        camera = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
        scene.collection.objects.link(camera)
        scene.camera = camera
    centre = Vector(((points.min(axis=0) + points.max(axis=0)) / 2).tolist())
    if args.get("direction") is not None:
        direction = Vector(args["direction"])
        if direction.length < 1e-9:
            raise CommandError("direction must not be zero")
    elif (camera.location - centre).length > 1e-6:
        direction = camera.location - centre
    else:
        direction = Vector(VIEW_DIRECTIONS["perspective"])
    size = tuple(int(v) for v in args.get("resolution", (320, 240)))
    margin = float(args.get("margin", 1.1))
    framed = names or sorted(geometry)
    asked = direction.copy()
    hidden = _fit_seen(camera, points, direction, (size[0], size[1]), margin, framed, geometry)
    note = None
    if hidden:
        best, last = (asked, hidden), asked
        for other in sorted(
            (Vector(v) for v in VIEW_DIRECTIONS.values()),
            key=lambda v: -v.normalized().dot(asked.normalized()),
        ):
            if other.normalized().dot(asked.normalized()) > 0.999:
                continue
            left = _fit_seen(camera, points, other, (size[0], size[1]), margin, framed, geometry)
            last = other
            if len(left) < len(best[1]):
                best = (other, left)
            if not left:
                break
        first = ", ".join(f"{n} behind {b}" for n, b in sorted(hidden.items()))
        side, hidden = best
        if side is not asked:
            note = (
                f"from {_vec(asked)} {first} would be hidden, so the camera looks from "
                f"{_vec(side)} instead"
            )
        if last is not side:  # back to the best side tried
            _fit_seen(camera, points, side, (size[0], size[1]), margin, framed, geometry)
    return {
        "camera": camera.name,
        "location": [round(v, 6) for v in camera.location],
        "rotation_degrees": [round(math.degrees(a), 6) for a in camera.rotation_euler],
        "framed": framed,
        **({"note": note} if note else {}),
        **({"hidden": hidden} if hidden else {}),
    }


def _vec(v: Vector) -> str:
    return "[" + ", ".join(f"{c:g}" for c in (round(x, 3) for x in v)) + "]"


def _fit_seen(
    camera: Any,
    points: Any,
    direction: Vector,
    size: tuple[int, int],
    margin: float,
    names: list[str],
    geometry: dict[str, Any],
) -> dict[str, str]:
    """Fit along ``direction``; the framed objects the camera then cannot see any of (each
    with what hides it). Only checked when several objects are framed or others exist."""
    _fit(camera, points, direction, size, margin)
    bpy.context.view_layer.update()
    if len(geometry) < 2:
        return {}
    return hidden_from(camera, names, geometry)


def _configure(scene: Any, engine: str, width: int, height: int, samples: int) -> None:
    scene.render.engine = ENGINES[engine]
    scene.render.resolution_x, scene.render.resolution_y = width, height
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = "PNG"
    scene.render.image_settings.color_mode = "RGBA"
    scene.render.dither_intensity = 0.0  # identical scenes give identical pixels
    scene.view_settings.view_transform = "Standard"  # colours as set, not AgX-toned
    if scene.world is None:  # removed again when the settings are put back
        scene.world = bpy.data.worlds.new("World")
        scene.world.color = (0.05, 0.05, 0.05)
    if engine == "workbench":
        shading = scene.display.shading
        shading.light, shading.color_type = "STUDIO", "MATERIAL"
    elif engine == "cycles":
        scene.cycles.device = "CPU"
        scene.cycles.samples = samples
        scene.cycles.use_denoising = False
    else:
        scene.eevee.taa_render_samples = samples


def _read_b64(path: str) -> str:
    with open(path, "rb") as handle:
        return base64.b64encode(handle.read()).decode("ascii")


def render(args: JSON) -> JSON:
    """Render one PNG per requested view with workbench, cycles (CPU) or eevee, each with
    its object-ID pass and facts when ``report`` is set (the default)."""
    engine = args.get("engine", "workbench")
    if engine not in ENGINES:
        raise CommandError(f"unknown engine {engine!r}; use one of {sorted(ENGINES)}")
    views = list(args.get("views") or ["camera"])
    unknown = [v for v in views if v != "camera" and v not in VIEW_DIRECTIONS]
    if unknown:
        raise CommandError(f"unknown views {unknown}; use camera or {sorted(VIEW_DIRECTIONS)}")
    scene = bpy.context.scene
    width, height = (int(v) for v in args.get("resolution", [320, 240]))
    want_report = bool(args.get("report", True))
    images: list[JSON] = []
    folder = tempfile.mkdtemp(prefix="agentsdk-render-")
    try:
        with settings_kept(scene):
            _configure(scene, engine, width, height, int(args.get("samples", 16)))
            original_camera = scene.camera
            for index, view in enumerate(views):
                images.append(
                    _render_view(scene, view, index, original_camera, folder, want_report)
                )
            used_engine = scene.render.engine
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return {"engine": used_engine, "width": width, "height": height, "images": images}


def _render_view(
    scene: Any, view: str, index: int, original_camera: Any, folder: str, want_report: bool
) -> JSON:
    temp_camera = None
    if view != "camera" or original_camera is None:
        temp_camera = _framing_camera(view if view != "camera" else "perspective")
        scene.camera = temp_camera
    try:
        scene.render.filepath = os.path.join(folder, f"view{index}.png")
        started = time.perf_counter()
        bpy.ops.render.render(write_still=True)
        seconds = time.perf_counter() - started
        image: JSON = {
            "view": view,
            "png_base64": _read_b64(scene.render.filepath),
            "seconds": round(seconds, 4),
        }
        if want_report:
            passes = os.path.join(folder, f"passes{index}")
            os.makedirs(passes)
            found = id_pass(scene, scene.camera, passes)
            found["id_png_base64"] = _read_b64(found.pop("id_png"))
            image["report"] = found
        return image
    finally:
        scene.camera = original_camera
        if temp_camera is not None:
            data = temp_camera.data
            bpy.data.objects.remove(temp_camera, do_unlink=True)
            bpy.data.cameras.remove(data)
