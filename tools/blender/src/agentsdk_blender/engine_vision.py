"""The object-ID pass and the facts only Blender knows, for the visibility report.

Stdlib + bpy + numpy (Blender bundles numpy). After each beauty render the same camera
renders the scene again with the workbench engine: flat lighting, each object in a flat
colour that encodes its number, no antialiasing, no colour management, transparent film
(about a tenth of an 8-sample workbench frame). Every setting and colour is put back.

Facts per object come from projecting its evaluated vertices with the camera's own matrix
(behind the camera, outside the frustum, which frame edges it crosses, how far), and from
a few more ID passes: objects whose screen rectangles overlap another's are drawn without
the others to count their pixels alone (occlusion), and objects that cross the frame are
drawn through a proportionally wider lens to count their whole projection (cut-off).
Objects that cannot overlap are drawn in the same pass, so a scene needs few passes.
"""

from __future__ import annotations

import math
import os
import tempfile
import time
from typing import Any

import bpy
import numpy as np
from numpy.typing import NDArray

from .engine_settings import settings_kept

JSON = dict[str, Any]

GEOMETRY = {"MESH", "CURVE", "SURFACE", "FONT", "META", "CURVES", "POINTCLOUD", "VOLUME"}
MAX_EXTRA_PASSES = 12
"""Alone/zoomed passes per view at most; objects beyond get occluded / cut_off = None."""
EDGE = 1e-6
"""NDC slack: a vertex this close to the frame edge is on it (fit_view places them there)."""
MAX_ZOOM = 8.0
"""Widest lens factor for the cut-off pass; a projection larger than this gets None."""


# --- ID colours: the same grid as agentsdk.vision.id_colours (the add-on cannot import it) --


def _levels(count: int) -> int:
    root: float = round((count + 1) ** (1 / 3), 9)
    return max(2, math.ceil(root))


def id_colour(index: int, count: int) -> tuple[int, int, int]:
    """The 8-bit colour of object ``index`` (1..count) in an ID pass of ``count`` objects."""
    levels = _levels(count)
    step = 255.0 / (levels - 1)
    digits = (index // (levels * levels), (index // levels) % levels, index % levels)
    return tuple(min(255, max(0, round(d * step))) for d in digits)  # type: ignore[return-value]


def decode_ids(rgba: NDArray[Any], count: int) -> NDArray[Any]:
    """Object numbers of an ID pass read as (H, W, 4) uint8 (transparent = background)."""
    levels = _levels(count)
    step = 255.0 / (levels - 1)
    digits = np.rint(rgba[..., :3].astype(np.float32) / step).astype(np.int32)
    ids = (digits[..., 0] * levels + digits[..., 1]) * levels + digits[..., 2]
    ids[(ids > count) | (rgba[..., 3] < 128)] = 0
    return np.asarray(ids)


# --- geometry of the scene as the renderer sees it -------------------------------------------


def renderable_objects(depsgraph: Any) -> dict[str, list[NDArray[Any]]]:
    """World-space vertices of every rendered geometry object, by (source) object name.

    Linked duplicates are separate objects with their own names; instances of a collection
    or from geometry nodes are reported under the objects they instance."""
    found: dict[str, list[NDArray[Any]]] = {}
    for instance in depsgraph.object_instances:
        obj = instance.object
        source = obj.original
        if obj.type not in GEOMETRY or source.hide_render:
            continue
        try:
            mesh = obj.to_mesh()
        except RuntimeError:
            continue
        try:
            if mesh is None or len(mesh.polygons) == 0:
                continue
            local = np.empty(len(mesh.vertices) * 3, np.float64)
            mesh.vertices.foreach_get("co", local)
        finally:
            obj.to_mesh_clear()
        matrix = np.array(instance.matrix_world, np.float64)
        points = local.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3]
        found.setdefault(source.name, []).append(points)
    # Hidden in the viewport only (the eye icon): absent from this depsgraph, yet rendered.
    for obj in bpy.context.view_layer.objects:
        if obj.name in found or obj.type not in GEOMETRY or obj.hide_render or obj.visible_get():
            continue
        if any(c.hide_render for c in obj.users_collection):
            continue
        evaluated = obj.evaluated_get(depsgraph)
        try:
            mesh = evaluated.to_mesh()
        except RuntimeError:
            continue
        try:
            if mesh is None or len(mesh.polygons) == 0:
                continue
            local = np.empty(len(mesh.vertices) * 3, np.float64)
            mesh.vertices.foreach_get("co", local)
        finally:
            evaluated.to_mesh_clear()
        matrix = np.array(obj.matrix_world, np.float64)
        found[obj.name] = [local.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3]]
    return found


class Projection:
    """The render camera's view and projection, as numpy matrices."""

    def __init__(self, scene: Any, camera: Any, depsgraph: Any) -> None:
        render = scene.render
        self.width = int(render.resolution_x * render.resolution_percentage / 100)
        self.height = int(render.resolution_y * render.resolution_percentage / 100)
        projection = camera.calc_matrix_camera(
            depsgraph,
            x=self.width,
            y=self.height,
            scale_x=render.pixel_aspect_x,
            scale_y=render.pixel_aspect_y,
        )
        self.view = np.array(camera.matrix_world.inverted(), np.float64)
        self.full = np.array(projection, np.float64) @ self.view
        self.clip_start = float(camera.data.clip_start)
        self.clip_end = float(camera.data.clip_end)

    def depth(self, points: NDArray[Any]) -> NDArray[Any]:
        """Distance in front of the camera along its axis (negative: behind)."""
        return np.asarray(-(points @ self.view[2, :3] + self.view[2, 3]))

    def ndc(self, points: NDArray[Any]) -> NDArray[Any]:
        """Normalised device x, y (-1..1 spans the frame; y up) of points in front."""
        clip = points @ self.full[:, :3].T + self.full[:, 3]
        return np.asarray(clip[:, :2] / clip[:, 3:4])


def object_facts(points: list[NDArray[Any]], projection: Projection) -> JSON:
    """Where an object is relative to the camera: behind, outside, crossing the frame."""
    every = np.concatenate(points)
    depth = projection.depth(every)
    facts: JSON = {"behind_camera": bool(depth.max() <= 0.0), "outside_frustum": False}
    facts["depth"] = (float(depth.min()), float(depth.max()))
    facts["crosses_camera_plane"] = bool(depth.min() <= 0.0 < depth.max())
    facts["rect"] = None
    if facts["behind_camera"] or facts["crosses_camera_plane"]:
        return facts
    ndc = projection.ndc(every)
    low, high = ndc.min(axis=0), ndc.max(axis=0)
    facts["rect"] = [float(low[0]), float(low[1]), float(high[0]), float(high[1])]
    beyond_depth = depth.min() > projection.clip_end or depth.max() < projection.clip_start
    facts["outside_frustum"] = bool(
        beyond_depth or high[0] < -1 or low[0] > 1 or high[1] < -1 or low[1] > 1
    )
    sides = [
        side
        for side, crossed in (
            ("left", low[0] < -1 - EDGE),
            ("right", high[0] > 1 + EDGE),
            ("top", high[1] > 1 + EDGE),
            ("bottom", low[1] < -1 - EDGE),
        )
        if crossed
    ]
    facts["cut_sides"] = sides
    facts["zoom"] = float(max(1.0, abs(low[0]), abs(high[0]), abs(low[1]), abs(high[1])))
    return facts


def _overlap(a: list[float] | None, b: list[float] | None) -> bool:
    if a is None or b is None:
        return True  # unknown extent (crossing the camera plane): assume it may overlap
    return a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]


# --- ID passes ---------------------------------------------------------------------------


def _configure_id_pass(scene: Any) -> None:
    render = scene.render
    render.engine = "BLENDER_WORKBENCH"
    render.film_transparent = True
    render.dither_intensity = 0.0
    render.use_compositing = False
    render.use_sequencer = False
    settings = render.image_settings
    settings.file_format = "PNG"
    settings.color_mode = "RGBA"
    settings.color_depth = "8"
    settings.compression = 15
    display = scene.display
    display.render_aa = "OFF"
    shading = display.shading
    shading.light = "FLAT"
    shading.color_type = "OBJECT"
    for flag in ("show_shadows", "show_cavity", "show_object_outline",
                 "show_specular_highlight", "show_xray", "show_backface_culling", "use_dof"):  # fmt: skip
        if hasattr(shading, flag):
            setattr(shading, flag, False)
    scene.display_settings.display_device = "sRGB"
    view = scene.view_settings
    view.view_transform = "Raw"  # object colours reach the file unchanged (measured exact)
    view.look = "None"
    view.exposure = 0.0
    view.gamma = 1.0
    view.use_curve_mapping = False


def _render_rgba(scene: Any, path: str) -> NDArray[Any]:
    scene.render.filepath = path
    bpy.ops.render.render(write_still=True)
    image = bpy.data.images.load(path, check_existing=False)
    try:
        image.colorspace_settings.name = "Non-Color"
        width, height = image.size
        pixels = np.empty(width * height * 4, np.float32)
        image.pixels.foreach_get(pixels)
    finally:
        bpy.data.images.remove(image)
    rgba = np.rint(pixels.reshape(height, width, 4) * 255).astype(np.uint8)
    return np.asarray(
        rgba[::-1]
    )  # Blender's rows run bottom-up; the report's origin is the top left


def _zoomed(camera: Any, factor: float) -> Any:
    """Widen the camera about its principal point by ``factor`` (a context manager)."""
    data = camera.data
    saved = (data.lens, data.ortho_scale, data.shift_x, data.shift_y)

    class _Zoom:
        def __enter__(self) -> None:
            if data.type == "ORTHO":
                data.ortho_scale = saved[1] * factor
            else:
                data.lens = saved[0] / factor
            data.shift_x, data.shift_y = saved[2] / factor, saved[3] / factor

        def __exit__(self, *exc: object) -> None:
            data.lens, data.ortho_scale, data.shift_x, data.shift_y = saved

    return _Zoom()


def id_pass(scene: Any, camera: Any, folder: str) -> JSON:
    """Render the object-ID pass for the current camera and collect the facts.

    Returns the ID image (PNG path), the object names by number, and per object the
    facts for ``agentsdk.vision.ObjectFacts``.
    """
    started = time.perf_counter()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    geometry = renderable_objects(depsgraph)
    names = sorted(geometry)
    count = len(names)
    objects = [bpy.data.objects[n] for n in names]
    projection = Projection(scene, camera, depsgraph)
    facts = {n: object_facts(geometry[n], projection) for n in names}
    id_path = os.path.join(folder, "ids.png")
    extra_passes = 0
    # Geometry the render may draw that the list missed (e.g. hidden in the viewport only):
    # drawn black, it reads as background instead of as another object's number.
    others = [o for o in scene.objects if o.type in GEOMETRY and o.name not in geometry]
    with settings_kept(scene, objects + others):
        _configure_id_pass(scene)
        for index, obj in enumerate(objects, start=1):
            r, g, b = id_colour(index, count)
            obj.color = (r / 255.0, g / 255.0, b / 255.0, 1.0)
        for obj in others:
            obj.color = (0.0, 0.0, 0.0, 1.0)
        ids = decode_ids(_render_rgba(scene, id_path), count)
        pixels = np.bincount(ids.ravel(), minlength=count + 1)
        groups = _alone_groups(names, facts, ids)
        for group_index, group in enumerate(groups):
            if group_index >= MAX_EXTRA_PASSES:
                break
            extra_passes += _count_alone(scene, camera, names, objects, group, facts, folder)
    result: dict[str, JSON] = {}
    for index, name in enumerate(names, start=1):
        fact = facts[name]
        shown = int(pixels[index])
        alone = fact.get("pixels_alone", shown if not fact.get("needs_alone") else None)
        result[name] = {
            "name": name,
            "pixels_alone": alone,
            "pixels_unclipped": fact.get("pixels_unclipped"),
            "cut_sides": fact.get("cut_sides", []) if shown else [],
            "behind_camera": fact["behind_camera"],
            "outside_frustum": fact["outside_frustum"],
        }
    return {
        "id_png": id_path,
        "count": count,
        "names": {str(i): n for i, n in enumerate(names, start=1)},
        "facts": list(result.values()),
        "extra_passes": extra_passes,
        "seconds": round(time.perf_counter() - started, 4),
    }


def _region(ids: NDArray[Any], rect: list[float] | None) -> NDArray[Any]:
    """The ID pixels inside an NDC box (the whole image for an unknown box)."""
    if rect is None:
        return ids
    height, width = ids.shape
    x0 = max(0, math.floor((rect[0] + 1) / 2 * width))
    x1 = min(width, math.ceil((rect[2] + 1) / 2 * width))
    y0 = max(0, math.floor((1 - rect[3]) / 2 * height))
    y1 = min(height, math.ceil((1 - rect[1]) / 2 * height))
    return ids[y0:y1, x0:x1]


def _alone_groups(names: list[str], facts: dict[str, JSON], ids: NDArray[Any]) -> list[list[str]]:
    """Objects that need a pass of their own, packed so no two in a pass can overlap."""
    framed = [n for n in names if not facts[n]["behind_camera"] and not facts[n]["outside_frustum"]]
    numbers = {n: i for i, n in enumerate(names, start=1)}
    for name in framed:
        fact = facts[name]
        # Only something nearer (somewhere) whose screen box overlaps can hide it, and only
        # if it actually shows inside this object's box in the ID pass.
        nearer = [
            numbers[other]
            for other in framed
            if other != name
            and _overlap(fact["rect"], facts[other]["rect"])
            and facts[other]["depth"][0] < fact["depth"][1]
        ]
        fact["needs_alone"] = bool(nearer) and bool(
            np.isin(_region(ids, fact["rect"]), nearer).any()
        )
        fact["needs_zoom"] = bool(
            fact["rect"] is not None and fact.get("cut_sides") and fact["zoom"] <= MAX_ZOOM
        )
    wanted = [n for n in framed if facts[n]["needs_alone"] or facts[n]["needs_zoom"]]
    groups: list[list[str]] = []
    for name in wanted:
        for group in groups:
            if not any(_overlap(facts[name]["rect"], facts[o]["rect"]) for o in group):
                group.append(name)
                break
        else:
            groups.append([name])
    return groups


def _border(render: Any, rects: list[list[float] | None], factor: float) -> None:
    """Render only the region the objects can cover (their NDC boxes seen through a lens
    ``factor`` times wider), with a small margin; the whole frame when a box is unknown."""
    if any(r is None for r in rects):
        render.use_border = False
        return
    boxes = [r for r in rects if r is not None]
    low_x, low_y = min(r[0] for r in boxes) / factor, min(r[1] for r in boxes) / factor
    high_x, high_y = max(r[2] for r in boxes) / factor, max(r[3] for r in boxes) / factor
    render.use_border, render.use_crop_to_border = True, False
    render.border_min_x = max(0.0, low_x / 2 + 0.5 - 0.01)
    render.border_max_x = min(1.0, high_x / 2 + 0.5 + 0.01)
    render.border_min_y = max(0.0, low_y / 2 + 0.5 - 0.01)
    render.border_max_y = min(1.0, high_y / 2 + 0.5 + 0.01)


def _count_alone(
    scene: Any,
    camera: Any,
    names: list[str],
    objects: list[Any],
    group: list[str],
    facts: dict[str, JSON],
    folder: str,
) -> int:
    """Render one group without the other objects: pixels alone, and (wider lens) unclipped."""
    members = set(group)
    for obj in objects:
        obj.hide_render = obj.name not in members
    render = scene.render
    rects = [facts[n]["rect"] for n in group]
    _border(render, rects, 1.0)
    count = len(names)
    numbers = {n: i for i, n in enumerate(names, start=1)}
    passes = 0
    path = os.path.join(folder, "alone.png")
    if any(facts[n]["needs_alone"] for n in group):
        pixels = np.bincount(
            decode_ids(_render_rgba(scene, path), count).ravel(), minlength=count + 1
        )
        passes += 1
        for name in group:
            facts[name]["pixels_alone"] = int(pixels[numbers[name]])
    zoomed = [n for n in group if facts[n]["needs_zoom"]]
    if zoomed:
        factor = max(facts[n]["zoom"] for n in zoomed) * 1.02
        _border(render, rects, factor)
        with _zoomed(camera, factor):
            ids = decode_ids(_render_rgba(scene, path), count)
        pixels = np.bincount(ids.ravel(), minlength=count + 1)
        passes += 1
        for name in zoomed:
            facts[name]["pixels_unclipped"] = round(float(pixels[numbers[name]]) * factor * factor)
    for obj in objects:
        obj.hide_render = False
    render.use_border = False
    return passes


def scratch_folder() -> str:
    """A temporary folder for pass images (removed by the caller)."""
    return tempfile.mkdtemp(prefix="agentsdk-idpass-")
