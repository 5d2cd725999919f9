"""Aiming: turn an object so its -Z axis points at a point or at another object
(stdlib + bpy + numpy; ships inside the add-on too).

Small models guess the coordinates of a named thing ("point the light at the crate" became
``look_at=[0, 0, 0]`` for a crate whose centre is at z = 0.5). ``look_at`` therefore also
takes an object's name, and Blender, which knows where the object really is, aims at the
centre of its evaluated geometry's world bounding box.
"""

from __future__ import annotations

from typing import Any

import bpy
from mathutils import Matrix, Vector

from .engine_errors import CommandError
from .engine_names import meant, object_list
from .engine_place import descends, number_text, world_geometry

ORIGIN = "origin"
"""``look_at`` value meaning the point (0, 0, 0) (unless an object has exactly that name)."""

_EULER = frozenset({"XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"})


def point_text(point: Any) -> str:
    """A point as the model reads it: ``(0, 0, 0.5)``."""
    return "(" + ", ".join(number_text(v) for v in point) + ")"


def object_centre(obj: Any) -> Vector:
    """The centre of an object's world bounding box (evaluated geometry: modifiers, parents,
    rotation and scale included); an object without geometry (light, camera, empty) is its
    world location."""
    points = world_geometry(obj).points
    if len(points) == 0:
        return obj.matrix_world.translation.copy()
    return Vector(((points.min(axis=0) + points.max(axis=0)) / 2).tolist())


def target_point(obj: Any, target: Any) -> tuple[Vector, str]:
    """The world point ``target`` means for ``obj`` and how to say it: a point [x, y, z]
    as given, or the centre of the named object (see ``object_centre``)."""
    if not isinstance(target, str):
        point = Vector([float(v) for v in target])
        return point, point_text(point)
    found = bpy.data.objects.get(target)
    if found is None:
        if target.strip().lower() == ORIGIN:
            return Vector((0.0, 0.0, 0.0)), f"{ORIGIN} (0, 0, 0)"
        raise CommandError(
            f"look_at: no object named {target!r}; give one of: {object_list(leave_out=obj)}, "
            f"or a point [x, y, z]{meant(target, leave_out=obj)}"
        )
    if found == obj:
        raise CommandError(f"{obj.name!r} cannot look at itself; give another object or a point")
    if descends(found, obj):
        raise CommandError(
            f"{obj.name!r} cannot look at {found.name!r}: it is parented to {obj.name!r} and "
            "would turn with it; give a point or another object"
        )
    centre = object_centre(found)
    return centre, f"{found.name} {point_text(centre)}"


def aim(obj: Any, target: Any) -> str:
    """Turn ``obj`` so its -Z axis (the view axis of cameras and lights) points at ``target``
    with its Y axis up, keeping its position and scale; returns what it aimed at."""
    bpy.context.view_layer.update()  # a location set in the same call counts
    point, said = target_point(obj, target)
    origin = obj.matrix_world.translation.copy()
    direction = point - origin
    if direction.length < 1e-9:
        raise CommandError(f"look_at: {said} is where {obj.name!r} stands; aim at another point")
    turn = direction.to_track_quat("-Z", "Y")
    if obj.parent is None and obj.rotation_mode in _EULER:
        obj.rotation_euler = turn.to_euler(obj.rotation_mode)
    else:  # parented, quaternion or axis-angle: set the world matrix, Blender solves the rest
        obj.matrix_world = Matrix.LocRotScale(origin, turn, obj.matrix_world.to_scale())
    bpy.context.view_layer.update()
    return said
