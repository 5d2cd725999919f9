"""What the scene camera sees of an object, without rendering: rays cast from the camera to
points of the object's geometry (``scene.ray_cast``).

An object is *hidden* when part of it lies in front of the camera, inside the frame, and
every ray to it meets another object first. ``fit_view`` uses this to avoid framing from a
side where one of its objects is hidden behind another, and the placing tools report it
("hidden behind Wall from the scene camera"): without a render, a small model had moved a
ball and answered that it was now visible while it was still behind the wall.

Stdlib + bpy + numpy, like the other engine modules (ships inside the add-on too).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import bpy
from mathutils import Vector

__all__ = ["hidden_from", "sight_note"]

_SAMPLES = 48
"""Points per object: its geometry's centre and up to this many of its vertices, spread
evenly over the vertex list."""


def _samples(parts: list[Any]) -> list[Vector]:
    import numpy as np

    points = np.concatenate(parts)
    step = max(1, len(points) // _SAMPLES)
    centre = (points.min(axis=0) + points.max(axis=0)) / 2
    # each vertex pulled 2% toward the centre, so a ray to it does not graze a neighbour
    # that touches it (a crate's corner on the floor)
    picked = points[::step] * 0.98 + centre * 0.02
    return [Vector(centre.tolist()), *(Vector(p.tolist()) for p in picked)]


def _in_frame(scene: Any, camera: Any, point: Vector) -> bool:
    from bpy_extras.object_utils import world_to_camera_view

    ndc = world_to_camera_view(scene, camera, point)
    return bool(0.0 <= ndc.x <= 1.0 and 0.0 <= ndc.y <= 1.0 and ndc.z > 0.0)


def hidden_from(
    camera: Any, names: list[str], geometry: dict[str, list[Any]] | None = None
) -> dict[str, str]:
    """Each of ``names`` the ``camera`` cannot see any point of although some lie in its
    frame, mapped to the object that blocks the most rays to it. Names the camera sees a
    point of, or that are wholly out of frame, are absent; so are names with no geometry."""
    from .engine_vision import renderable_objects

    scene = bpy.context.scene
    depsgraph = bpy.context.evaluated_depsgraph_get()
    if geometry is None:
        geometry = renderable_objects(depsgraph)
    origin = camera.matrix_world.translation.copy()
    hidden: dict[str, str] = {}
    for name in names:
        parts = geometry.get(name)
        if not parts:
            continue
        blockers: Counter[str] = Counter()
        seen = False
        for point in _samples(parts):
            if not _in_frame(scene, camera, point):
                continue
            ray = point - origin
            distance = ray.length
            if distance < 1e-6:
                seen = True  # the camera sits on the object
                break
            hit, location, _normal, _index, obj, _matrix = scene.ray_cast(
                depsgraph, origin, ray.normalized(), distance=distance
            )
            blocker = obj.original.name if hit and obj is not None else None
            if blocker is None or blocker == name or (location - origin).length >= distance * 0.999:
                seen = True
                break
            blockers[blocker] += 1
        if not seen and blockers:
            hidden[name] = blockers.most_common(1)[0][0]
    return hidden


def sight_note(obj: Any) -> str | None:
    """What the scene camera sees of ``obj`` when it sees none of it: ``hidden behind Wall
    from the scene camera Camera`` or ``outside the frame of the scene camera Camera``;
    None when it sees some of it, or without a camera or geometry."""
    from .engine_place import world_geometry

    camera = bpy.context.scene.camera
    if camera is None or obj == camera:
        return None
    points = world_geometry(obj).points
    if not len(points):
        return None
    if not any(_in_frame(bpy.context.scene, camera, p) for p in _samples([points])):
        return f"outside the frame of the scene camera {camera.name}"
    blocker = hidden_from(camera, [obj.name], {obj.name: [points]}).get(obj.name)
    if blocker is None:
        return None
    return f"hidden behind {blocker} from the scene camera {camera.name}"
