"""``above`` for add_node: put a new 3D node (a light, a camera, a mesh) centred over another
node, a gap above its top, measured from the scene as the engine builds it, so "an omni light
named Bulb above the block" needs no arithmetic from a small model.

The node over which it goes is measured as ``rest_on`` measures its support: the world boxes
of what it and the nodes under it draw (each ``GeometryInstance``'s own box), leaving out the
new node and what is under it. Only drawn geometry counts: the harness gives a light a box
too (its range: ±5 m for a default OmniLight), which is nothing to put anything over, so a
node that draws nothing (a light, a Camera, an empty Spatial) is taken as a zero-size box at
its origin.

The new node's *origin* goes to ``(centre x, top + gap, centre z)``: ``above`` is for what is
placed by a point (a light, a camera); ``rest_on`` stands a mesh's bottom on a top. The world
point is taken into the parent's frame with the inverse of the parent's measured world basis,
which is exact under a rotated or scaled parent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from agentsdk_godot.measure import NodeBounds, SceneMeasurements, Vec
from agentsdk_godot.scene import NodeEntry, SceneError, SceneFile

__all__ = ["GAP", "Over", "local_origin", "named_node", "parent_axes", "plan_above"]

GAP = 1.0
"""Metres between the node's top and what goes over it, when the call gives no gap."""


@dataclass(frozen=True)
class Over:
    """Where a node goes over another: the world point for its origin, and what was measured."""

    point: Vec
    centre: Vec  # the box's centre (its origin when it draws nothing): what an aimed node faces
    top: float
    drawn: bool  # False: the node draws nothing, so its origin stood in for its box
    target: str  # its path


def named_node(doc: SceneFile, said: str) -> NodeEntry:
    """The node ``said`` names, as ``rest_on`` reads its support: a path, a name only one
    node has (``"Ball"`` for ``Field/Ball``), or either in another letter case. Raises
    KeyError with a message listing the nodes (or the paths of the nodes sharing the name)."""
    text = said.strip()
    try:
        return doc.node(text)
    except SceneError:
        pass
    folded = text.strip("/").lower()
    named = [n for n in doc.nodes[1:] if n.name == text]
    cased = [n for n in doc.nodes[1:] if folded in (n.name.lower(), n.path.lower())]
    for found in (named, cased):
        if len(found) == 1:
            return found[0]
        if found:
            paths = ", ".join(n.path for n in found)
            raise KeyError(f"{len(found)} nodes are named {text!r} ({paths}): give the path")
    known = ", ".join(n.path for n in doc.nodes[1:]) or "none but the root"
    raise KeyError(f"no node {text!r} in the scene (nodes: {known})")


def _exact(found: SceneMeasurements, path: str) -> NodeBounds | None:
    return next((n for n in found.nodes if n.path == path), None)


def _within(path: str, ancestor: str) -> bool:
    """``path`` is ``ancestor`` or under it ("." is the root)."""
    return ancestor == "." or path == ancestor or path.startswith(ancestor + "/")


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else "."


def parent_axes(found: SceneMeasurements, path: str) -> tuple[Vec, Vec, Vec] | None:
    """The world axes of the node's parent (None when the parent is not a 3D node, so the
    node's own frame is the world's)."""
    parent = _exact(found, _parent(path))
    return parent.basis if parent is not None else None


def plan_above(found: SceneMeasurements, path: str, target: str, gap: float) -> Over:
    """Where the node at ``path`` goes, centred over ``target`` and ``gap`` above its top.

    Raises KeyError with a message for the model when either is not a measured 3D node."""
    if _exact(found, path) is None:
        raise KeyError(f"{path} is not a 3D node: above places 3D nodes only")
    under = _exact(found, target)
    if under is None:
        raise KeyError(f"{target} is not a 3D node: nothing can be put over it")
    boxes = [
        (n.own_min, n.own_max)
        for n in found.nodes
        if n.geometry
        and n.own_min is not None
        and n.own_max is not None
        and _within(n.path, under.path)
        and not _within(n.path, path)
    ]
    if boxes:
        lo = [min(b[0][i] for b in boxes) for i in range(3)]
        hi = [max(b[1][i] for b in boxes) for i in range(3)]
        centre: Vec = ((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2)
        top = hi[1]
    else:
        centre, top = under.origin, under.origin[1]
    point = (centre[0], top + gap, centre[2])
    return Over(point, centre, top, bool(boxes), under.path)


def local_origin(found: SceneMeasurements, path: str, stored: Vec, point: Vec) -> Vec:
    """The local origin (in the parent's frame) that puts the node at ``path``, whose file
    stores ``stored``, at the world ``point``: its measured world origin moved by the
    difference, taken into the parent's frame. Raises KeyError when the parent's axes are
    degenerate (scaled to nothing)."""
    me = _exact(found, path)
    assert me is not None
    delta = (point[0] - me.origin[0], point[1] - me.origin[1], point[2] - me.origin[2])
    axes = parent_axes(found, path)
    if axes is not None:
        delta = _solve(axes, delta, _parent(path))
    return (stored[0] + delta[0], stored[1] + delta[1], stored[2] + delta[2])


def _det(a: Vec, b: Vec, c: Vec) -> float:
    """The determinant of the matrix with columns a, b, c."""
    return (
        a[0] * (b[1] * c[2] - b[2] * c[1])
        - b[0] * (a[1] * c[2] - a[2] * c[1])
        + c[0] * (a[1] * b[2] - a[2] * b[1])
    )


def _solve(axes: tuple[Vec, Vec, Vec], v: Vec, parent: str) -> Vec:
    """``c`` with ``c[0] * x + c[1] * y + c[2] * z == v`` for the axes x, y, z (Cramer)."""
    x, y, z = axes
    whole = _det(x, y, z)
    if not math.isfinite(whole) or abs(whole) < 1e-12:
        raise KeyError(f"{parent} is scaled to nothing: no place under it is above anything")
    return (_det(v, y, z) / whole, _det(x, v, z) / whole, _det(x, y, v) / whole)
