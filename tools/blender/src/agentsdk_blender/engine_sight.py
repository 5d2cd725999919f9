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
from typing import Any, NamedTuple

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


class Sight(NamedTuple):
    """Rays from the camera to an object's sample points."""

    points: int
    in_frame: int
    seen: int
    blockers: Counter[str]

    @property
    def blocker(self) -> str | None:
        return self.blockers.most_common(1)[0][0] if self.blockers else None


def sight(camera: Any, name: str, parts: list[Any], *, first_seen: bool = False) -> Sight:
    """Cast a ray from ``camera`` to each sample point of ``name``'s geometry that lies in
    its frame; ``first_seen`` stops at the first point seen (enough to tell hidden apart)."""
    scene = bpy.context.scene
    depsgraph = bpy.context.evaluated_depsgraph_get()
    origin = camera.matrix_world.translation.copy()
    samples = _samples(parts)
    in_frame = seen = 0
    blockers: Counter[str] = Counter()
    for point in samples:
        if not _in_frame(scene, camera, point):
            continue
        in_frame += 1
        ray = point - origin
        distance = ray.length
        if distance < 1e-6:
            seen += 1  # the camera sits on the object
        else:
            hit, location, _normal, _index, obj, _matrix = scene.ray_cast(
                depsgraph, origin, ray.normalized(), distance=distance
            )
            blocker = obj.original.name if hit and obj is not None else None
            if blocker is None or blocker == name or (location - origin).length >= distance * 0.999:
                seen += 1
            else:
                blockers[blocker] += 1
        if first_seen and seen:
            break
    return Sight(len(samples), in_frame, seen, blockers)


def hidden_from(
    camera: Any, names: list[str], geometry: dict[str, list[Any]] | None = None
) -> dict[str, str]:
    """Each of ``names`` the ``camera`` cannot see any point of although some lie in its
    frame, mapped to the object that blocks the most rays to it. Names the camera sees a
    point of, or that are wholly out of frame, are absent; so are names with no geometry."""
    from .engine_vision import renderable_objects

    if geometry is None:
        geometry = renderable_objects(bpy.context.evaluated_depsgraph_get())
    hidden: dict[str, str] = {}
    for name in names:
        parts = geometry.get(name)
        if not parts:
            continue
        looked = sight(camera, name, parts, first_seen=True)
        if not looked.seen and looked.blocker is not None:
            hidden[name] = looked.blocker
    return hidden


_NOTABLE = 0.05
"""The share of an object's sampled points, hidden or out of frame, worth a note."""


def sight_note(obj: Any, points: Any | None = None) -> str | None:
    """What the scene camera cannot see of ``obj`` (``points``: its world vertices, if the
    caller has them): ``hidden behind Wall from the scene
    camera Camera`` (none of it seen), ``40% hidden behind Wall ...`` (of its sampled
    points), ``outside the frame ...`` or ``30% outside the frame ...``; None when it sees
    all of it (to the nearest 5%), or without a camera or geometry."""
    from .engine_place import world_geometry

    camera = bpy.context.scene.camera
    if camera is None or obj == camera:
        return None
    if points is None:  # the caller's world geometry of obj, when it has it
        points = world_geometry(obj).points
    if not len(points):
        return None
    looked = sight(camera, obj.name, [points])
    where = f"the scene camera {camera.name}"
    if not looked.in_frame:
        return f"outside the frame of {where}"
    notes = []
    outside = 1 - looked.in_frame / looked.points
    if outside >= _NOTABLE:
        notes.append(f"{outside:.0%} outside the frame of {where}")
    hidden = 1 - looked.seen / looked.in_frame
    if looked.blocker is not None and not looked.seen:
        notes.insert(0, f"hidden behind {looked.blocker} from {where}")
    elif looked.blocker is not None and hidden >= _NOTABLE:
        notes.insert(0, f"{hidden:.0%} hidden behind {looked.blocker} from {where}")
    return "; ".join(notes) or None
