"""Turning a 3D node so its -Z axis (where a Camera looks, where a DirectionalLight or a
SpotLight shines) points at another node or at a point: what ``look_at`` (or ``target``)
among add_node's or set_property's properties means, where the class has no such property.

Godot 3 has no such property; a small model writes one anyway ("a Camera named Cam at
(0, 3, 8) looking at it" came as ``"target": "Target"``, s24/8) and was refused, so the
camera stayed unaimed. The direction is worked out in world space from the engine's
measurements (the target's bounds centre, or its origin when it draws nothing) and written
as the node's ``transform`` in its parent's frame; any scale it had is kept.
"""

from __future__ import annotations

import math
import re

from agentsdk_godot.measure import Vec
from agentsdk_godot.rest import current_origin
from agentsdk_godot.scene import NodeEntry
from agentsdk_godot.variant import Constructor

__all__ = ["AIM_KEYS", "aim_node", "aim_point", "aimed_transform", "facing_basis", "popped_aim"]

AIM_KEYS = ("look_at", "target", "looking_at", "look_at_target", "aim_at", "point_at")
"""Property names read as an aim, on a class that has no property of that name."""

_NUMBER = r"-?\d+(?:\.\d+)?(?:e-?\d+)?"
_POINT = re.compile(
    rf"\s*(?:Vector3\s*)?[\[(]?\s*({_NUMBER})\s*,\s*({_NUMBER})\s*,\s*({_NUMBER})\s*[\])]?\s*",
    re.IGNORECASE,
)


def popped_aim(properties: dict[str, str], known: list[str] | None) -> str | None:
    """Take the aim out of ``properties`` (the first of :data:`AIM_KEYS` the class lacks;
    with no catalog, any of them): the node or point it names, or None."""
    for key in list(properties):
        said = key.strip().lower()
        if said in AIM_KEYS and (known is None or key not in known):
            return str(properties.pop(key))
    return None


def aim_point(text: str) -> Vec | None:
    """The point an aim writes out (``[0, 1, 0]``, ``(0, 1, 0)``, ``Vector3( 0, 1, 0 )``),
    or None when it names a node."""
    found = _POINT.fullmatch(text)
    if found is None:
        return None
    x, y, z = (float(v) for v in found.groups())
    return (x, y, z)


def _unit(v: Vec) -> Vec:
    length = math.sqrt(sum(c * c for c in v))
    return (v[0] / length, v[1] / length, v[2] / length)


def _cross(a: Vec, b: Vec) -> Vec:
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def facing_basis(direction: Vec, parent_axes: tuple[Vec, Vec, Vec] | None) -> tuple[Vec, Vec, Vec]:
    """The x, y and z axes (in the parent's frame) of a node whose -Z points along the world
    ``direction``, its x level (y up; looking straight up or down, its top faces -z). The
    parent's world axes, when given, take the direction into its frame."""
    d = _unit(direction)
    if parent_axes is not None:
        d = _unit(tuple(sum(a * b for a, b in zip(axis, d, strict=True)) / sum(a * a for a in axis)
                        for axis in parent_axes))  # type: ignore[arg-type]  # fmt: skip
    z = (-d[0], -d[1], -d[2])
    up: Vec = (0.0, 1.0, 0.0) if abs(z[1]) < 0.999 else (0.0, 0.0, -1.0)
    x = _unit(_cross(up, z))
    y = _cross(z, x)
    return x, y, z


def aimed_transform(node: NodeEntry, axes: tuple[Vec, Vec, Vec]) -> Constructor:
    """The node's ``transform`` with these axes, its scale and origin as the file stores
    them (``translation``, or its transform's origin)."""
    factors = _scale(node)
    x, y, z = (tuple(c * f for c in axis) for axis, f in zip(axes, factors, strict=True))
    rows = [v for i in range(3) for v in (x[i], y[i], z[i])]
    origin = current_origin(node)
    return Constructor("Transform", tuple(round(v, 6) + 0.0 for v in (*rows, *origin)))


def aim_node(node: NodeEntry, axes: tuple[Vec, Vec, Vec]) -> Constructor:
    """Store the aimed transform on the node, in place of what placed it before
    (``translation``, ``rotation_degrees``, ``rotation``, ``scale``); returns it."""
    form = aimed_transform(node, axes)
    for key in ("translation", "rotation_degrees", "rotation", "scale"):
        node.properties.pop(key, None)
    node.properties["transform"] = form
    return form


def _numbers(value: object, count: int) -> list[float] | None:
    if not isinstance(value, Constructor) or len(value.args) != count:
        return None
    try:
        return [float(a) for a in value.args]  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def _scale(node: NodeEntry) -> Vec:
    """The node's scale as the file stores it: ``scale``, or the lengths of its
    transform's axes; (1, 1, 1) when it stores none."""
    scale = _numbers(node.properties.get("scale"), 3)
    if scale is not None:
        return (scale[0], scale[1], scale[2])
    form = _numbers(node.properties.get("transform"), 12)
    if form is not None:
        x, y, z = (math.sqrt(sum(form[3 * r + c] ** 2 for r in range(3))) for c in range(3))
        return (x, y, z)
    return (1.0, 1.0, 1.0)
