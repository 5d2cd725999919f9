"""Geometry in world space and goal-level placement: rest an object on the ground or on
another object (stdlib + bpy + numpy; ships inside the add-on too).

A small model cannot work out where a rotated, scaled or modified object's lowest point is;
Blender can, from the evaluated mesh, so ``rest_on`` moves the object by exactly that much
and measures again, so the result the model reads is what the scene holds.
"""

from __future__ import annotations

import math
import re
from typing import Any, NamedTuple

import bpy
import numpy as np
from mathutils import Vector
from numpy.typing import NDArray

from .engine_errors import CommandError
from .engine_names import meant, object_list
from .engine_unknown import CUBE, missing_objects

GROUND = "ground"
"""``rest_on`` value meaning the plane z = 0 (unless an object has exactly that name)."""

NO_GEOMETRY = frozenset(
    {"CAMERA", "LIGHT", "LIGHT_PROBE", "EMPTY", "SPEAKER", "ARMATURE", "LATTICE"}
)
"""Object types that have no surface of their own (nothing to rest, nothing to rest on)."""


class Geometry(NamedTuple):
    """An object's evaluated geometry (modifiers applied) in world space."""

    points: NDArray[Any]  # (N, 3) vertex positions, metres
    triangles: NDArray[Any]  # (M, 3) vertex indices
    polygons: int


def _empty() -> Geometry:
    return Geometry(np.zeros((0, 3), np.float64), np.zeros((0, 3), np.int64), 0)


def world_geometry(obj: Any, depsgraph: Any | None = None) -> Geometry:
    """World-space vertices and triangles of an object as rendered (empty when it has none)."""
    if obj.type in NO_GEOMETRY:
        return _empty()
    depsgraph = depsgraph or bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    try:
        mesh = evaluated.to_mesh()
    except RuntimeError:
        mesh = None
    if mesh is None:
        return _empty()
    try:
        local = np.empty(len(mesh.vertices) * 3, np.float64)
        mesh.vertices.foreach_get("co", local)
        mesh.calc_loop_triangles()
        triangles = np.empty(len(mesh.loop_triangles) * 3, np.int64)
        mesh.loop_triangles.foreach_get("vertices", triangles)
        polygons = len(mesh.polygons)
    finally:
        evaluated.to_mesh_clear()
    matrix = np.array(evaluated.matrix_world, np.float64)
    points = local.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3]
    return Geometry(points, triangles.reshape(-1, 3), polygons)


def _num(value: float) -> float:
    return round(float(value), 6) + 0.0  # + 0.0 turns -0.0 into 0.0


def _points(obj: Any, role: str) -> NDArray[Any]:
    points = world_geometry(obj).points
    if len(points) == 0:
        kind = obj.type.lower().replace("_", " ")
        if role == "rest":
            raise CommandError(
                f"{obj.name!r} is a {kind} without geometry, so it cannot rest on anything; "
                "give it a location instead"
            )
        raise CommandError(
            f"cannot rest on {obj.name!r}: it is a {kind} without geometry; "
            f'rest on "{GROUND}" or on a mesh'
        )
    return points


def _named_at_start(target: str) -> Any | None:
    """The object a ``rest_on`` names when it is written with its description after the
    name, as a result reports it ("Base (top z=1): lowest z=1": the 1.5B model copied
    that back on blender/stack): the longest object name followed by " (" or ":"."""
    text = target.strip()
    found = [
        o
        for o in bpy.data.objects
        if text.startswith(o.name) and text[len(o.name) : len(o.name) + 2] in (" (", ": ", ":")
    ]
    return max(found, key=lambda o: len(o.name)) if found else None


_GROUND_WORDS = re.compile(
    r"(the\s+)?(ground|floor|ground\s+plane|ground\s+level|z\s*=\s*0(\.0+)?|0)", re.I
)
"""rest_on text that means the ground when no object has that name: "the floor" in a
scene without one, "z = 0" (the ways small models write it)."""


def _in_any_case(target: str) -> Any | None:
    """The one object whose name is ``target`` in another letter case ("floor" for Floor)."""
    same = [o for o in bpy.data.objects if o.name.lower() == target.strip().lower()]
    return same[0] if len(same) == 1 else None


def named(target: str) -> Any | None:
    """The object ``target`` names: exactly, with a result's description after the name
    ("Base (top z=1)"), or in another letter case when only one object matches; else None."""
    return bpy.data.objects.get(target) or _named_at_start(target) or _in_any_case(target)


def _support(obj: Any, target: str) -> Any | None:
    """The object to rest on, None for the ground, or ``obj`` itself when ``target`` names
    it in any of the ways a support is named."""
    support = named(target)
    if support is None:
        if _GROUND_WORDS.fullmatch(target.strip()):
            return None
        raise CommandError(
            f'rest_on: no object named {target!r}; use "{GROUND}" (z=0) or one of: '
            + object_list(leave_out=obj)
            + meant(target, leave_out=obj)
        )
    if support == obj:
        return obj  # the caller decides what resting on itself means
    parent = support.parent
    while parent is not None:
        if parent == obj:
            raise CommandError(
                f"{obj.name!r} cannot rest on {support.name!r}: it is parented to "
                f"{obj.name!r} and would move with it"
            )
        parent = parent.parent
    return support


def _move(obj: Any, delta: Vector) -> None:
    """Translate an object by a world-space vector, whatever its parent's transform."""
    if obj.parent is None and not obj.constraints:
        obj.location += delta
        return
    # matrix_world = P @ matrix_basis: a world step is P's inverse applied to the location.
    outer = obj.matrix_world @ obj.matrix_basis.inverted_safe()
    obj.location += outer.to_3x3().inverted_safe() @ delta


def rest(obj: Any, target: str, *, keep_xy: bool, new: bool = False) -> str | None:
    """Move ``obj`` up or down so its lowest point touches the ground (z = 0) or the top of
    ``target``'s world bounding box; over an object it is also centred on it in X/Y unless
    ``keep_xy``. Returns what was measured afterwards, for the model to read.

    Nothing stands on itself, and small models fill ``rest_on`` with the object's own name
    (blender/row-of-posts looped on that error): a ``new`` object named as its own support
    goes on the ground; one already placed stays where it is (None: nothing was done)."""
    support = _support(obj, target)
    if support == obj:
        if not new:
            return None
        support = None
    bpy.context.view_layer.update()
    points = _points(obj, "rest")
    delta = Vector((0.0, 0.0, 0.0))
    top = 0.0
    if support is not None:
        under = _points(support, "support")
        top = float(under[:, 2].max())
        if not keep_xy:
            centre = (under[:, :2].min(axis=0) + under[:, :2].max(axis=0)) / 2
            own = (points[:, :2].min(axis=0) + points[:, :2].max(axis=0)) / 2
            delta.x, delta.y = (float(v) for v in centre - own)
    delta.z = top - float(points[:, 2].min())
    _move(obj, delta)
    bpy.context.view_layer.update()
    after = _points(obj, "rest")
    low = _num(after[:, 2].min())
    if support is None:
        return f"ground: lowest z={low:g}"
    where = "at the given x, y" if keep_xy else "centred on it"
    return f"{support.name} (top z={_num(top):g}): lowest z={low:g}, {where}"


# --- a light over an object: place_light(above=...) ------------------------------------------


class Over(NamedTuple):
    """Where ``place_light(above=...)`` puts a light, worked out before anything moves."""

    support: Any  # the object it goes over
    point: Vector  # world: the centre of the support's box in X/Y, ``gap`` over its top
    centre: Vector  # world centre of the support's box: what the light aims at by default
    said: str  # "1 m above Can (top z=1.2)"


def number_text(value: float) -> str:
    """A number as the model reads it: 4 decimals at most, no "-0"."""
    return f"{round(float(value), 4) + 0.0:g}"  # + 0.0: no "-0"


def descends(obj: Any, ancestor: Any) -> bool:
    """Whether ``ancestor`` is among ``obj``'s parents (it moves when they do)."""
    parent = obj.parent
    while parent is not None:
        if parent == ancestor:
            return True
        parent = parent.parent
    return False


def over(light_name: str, target: str, gap: float) -> Over:
    """Where the light ``light_name`` goes ``gap`` metres over the object ``target`` names
    (as ``rest_on`` names it: exactly, with a result's description after it, or in another
    case): centred on the world bounding box of the object's evaluated geometry in X/Y, over
    its highest point. An object without geometry (light, camera, empty) counts as its world
    location, as ``measure`` reads it. Checked before the light is made or moved: an unknown
    name, the light itself, or an object parented to the light (it would move too) is a
    ``CommandError``."""
    if not math.isfinite(gap) or gap < 0:  # the agent side refuses it; the add-on may not
        raise CommandError(f"gap: {gap} is not a distance; give metres, 0 or more (default 1)")
    support = named(target)
    if support is None:
        raise CommandError(_unknown_support(target, light_name))
    light = bpy.data.objects.get(light_name)
    if support == light or support.name == light_name:
        raise CommandError(
            f"above: {light_name!r} cannot go above itself; give another object's name, or a "
            "location"
        )
    if light is not None and descends(support, light):
        raise CommandError(
            f"above: {light_name!r} cannot go above {support.name!r}: it is parented to "
            f"{light_name!r} and would move with it; give a location"
        )
    bpy.context.view_layer.update()
    points = world_geometry(support).points
    if len(points) == 0:
        points = np.array(support.matrix_world.translation, np.float64).reshape(1, 3)
    low, high = points.min(axis=0), points.max(axis=0)
    centre = Vector(((low + high) / 2).tolist())
    point = Vector((centre.x, centre.y, float(high[2]) + gap))
    said = f"{number_text(gap)} m above {support.name} (top z={number_text(high[2])})"
    return Over(support, point, centre, said)


def _unknown_support(target: str, light_name: str) -> str:
    """The error for an ``above`` no object has: the names it could be (the light left out),
    the likely one, and for "ground" (a height, not an object) the location form."""
    ground = _GROUND_WORDS.fullmatch(target.strip()) is not None
    text = missing_objects(
        [target], tool="place_light", field="above", none="above: no object named",
        known=[o.name for o in bpy.data.objects if o.name != light_name],
        make=None if ground else CUBE,
    )  # fmt: skip
    if ground:
        end = "" if text.endswith((".", "?")) else "."
        text += f"{end} For a height over the ground, give location [x, y, z] instead of above"
    return text


def put(obj: Any, point: Vector) -> None:
    """Move ``obj`` so that its world position is ``point``, whatever its parent's transform."""
    bpy.context.view_layer.update()
    _move(obj, point - obj.matrix_world.translation)
    bpy.context.view_layer.update()
