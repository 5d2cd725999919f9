"""The arithmetic behind ``fit_view``: where a camera goes, and which way it faces, so that a
world box fills its frame; and that pose as a Godot 3 ``Transform`` under the camera's parent.

A Godot 3 Camera looks along its local -Z with +Y up. For a view, the camera's z axis is the
unit vector from the box's centre towards the camera; x and y complete a right-handed frame
with y as close to world up as it can be (for the view from above, y points to -Z). Each
corner of the box is ``(a, b, c)`` along ``(x, y, z)`` from the centre; a camera at
``(s, t, d)`` in those axes sees it inside the frame, with room ``margin``, when
``|a - s|`` and ``|b - t|`` are at most ``(d - c) * tan(fov / 2) / margin``. These are linear
in ``s``, ``t``, ``d``: the least ``d`` and the ``s``, ``t`` that centre the box's picture have
a closed form (`frame_points`). The boxes' corners suffice: a box is convex.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
from numpy.typing import NDArray

from agentsdk_godot.measure import CameraInfo
from agentsdk_godot.variant import Constructor

__all__ = [
    "VIEWS",
    "Axes",
    "Framing",
    "ViewName",
    "axes_facing",
    "corners",
    "frame_points",
    "local_pose",
    "transform_value",
    "upright",
]

Vec = tuple[float, float, float]
Axes = tuple[Vec, Vec, Vec]
"""A camera's world x, y and z axes (z points back, away from what it sees)."""

Array = NDArray[np.float64]
ViewName = Literal["front", "back", "side", "left", "top", "iso"]

_ELEVATION, _AZIMUTH = math.radians(30.0), math.radians(45.0)
VIEWS: dict[str, Vec] = {
    "front": (0.0, 0.0, 1.0),  # from +Z, looking along -Z: Godot's own default direction
    "back": (0.0, 0.0, -1.0),
    "side": (1.0, 0.0, 0.0),  # from the right (+X)
    "left": (-1.0, 0.0, 0.0),
    "top": (0.0, 1.0, 0.0),
    # three quarters: 45 degrees round from the front towards +X, 30 degrees up
    "iso": (
        math.cos(_ELEVATION) * math.sin(_AZIMUTH),
        math.sin(_ELEVATION),
        math.cos(_ELEVATION) * math.cos(_AZIMUTH),
    ),
}
"""Each view's direction from the framed box's centre towards the camera."""
assert set(VIEWS) == set(get_args(ViewName))

ORTHOGONAL = 1  # Camera.projection


@dataclass(frozen=True)
class Framing:
    """Where the camera goes (world space) and what its lens needs for the box not to clip."""

    origin: Vec
    axes: Axes
    aim: Vec  # the point of the line of sight level with the box's centre
    distance: float  # from the camera to `aim`
    near: float | None = None  # a new near plane, when the camera's own would cut the box
    far: float | None = None  # a new far plane, likewise
    size: float | None = None  # an orthogonal camera's new size


def _unit(v: Array) -> Array:
    length = float(np.linalg.norm(v))
    if length < 1e-9:
        raise ValueError("a zero-length direction")
    result: Array = v / length
    return result


def _tuple(v: Array) -> Vec:
    return (float(v[0]), float(v[1]), float(v[2]))


def axes_facing(back: Vec) -> Axes:
    """Camera axes whose z is `back` (normalised), with y as near to world up as it can be."""
    z = _unit(np.array(back, dtype=float))
    if abs(z[1]) > 0.999:  # straight down (or up): the top of the picture is -Z (or +Z)
        up = np.array((0.0, 0.0, -1.0 if z[1] > 0 else 1.0))
    else:
        up = np.array((0.0, 1.0, 0.0))
    x = _unit(np.cross(up, z))
    y = np.cross(z, x)
    return (_tuple(x), _tuple(y), _tuple(z))


def upright(axes: Axes) -> Axes:
    """The camera's own axes made orthonormal (its direction and roll kept, scale dropped)."""
    z = _unit(np.array(axes[2], dtype=float))
    x = np.array(axes[0], dtype=float)
    x = _unit(x - float(np.dot(x, z)) * z)
    y = np.cross(z, x)
    return (_tuple(x), _tuple(y), _tuple(z))


def corners(lo: Vec, hi: Vec) -> list[Vec]:
    """The eight corners of the box `lo`..`hi`."""
    return [
        (hi[0] if i & 1 else lo[0], hi[1] if i & 2 else lo[1], hi[2] if i & 4 else lo[2])
        for i in range(8)
    ]


def frame_points(points: list[Vec], axes: Axes, lens: CameraInfo, margin: float) -> Framing:
    """The camera pose (facing along -`axes` z) that puts every point (the corners of the
    boxes to frame) inside a square frame with `margin` of room (1 = edge to edge), as large
    as it can be and centred in the frame, and the near/far/size the lens then needs.

    A perspective lens's fov spans the square frame's height and width alike; in a wider frame
    with the default ``keep_aspect`` (keep the height) the points fit with room to the sides.
    """
    if not points:
        raise ValueError("no points to frame")
    cloud = np.array(points, dtype=float)
    low, high = cloud.min(axis=0), cloud.max(axis=0)
    centre = (low + high) / 2
    x, y, z = (np.array(a, dtype=float) for a in axes)
    offsets = list(cloud - centre)
    across = [[float(np.dot(o, x)) for o in offsets], [float(np.dot(o, y)) for o in offsets]]
    toward = [float(np.dot(o, z)) for o in offsets]  # towards the camera: nearer the lens
    radius = max(float(np.linalg.norm(high - low)) / 2, 1e-3)
    nearest, farthest = max(toward), min(toward)
    near = far = size = None
    if lens.projection == ORTHOGONAL:
        shift = [(max(a) + min(a)) / 2 for a in across]
        size = max(max(max(a) - min(a) for a in across) * margin, 1e-3)
        back = nearest + max(2 * lens.near, radius)
    else:
        # camera at centre + s x + t y + d z: each corner needs |a - s| <= k (d - c) with
        # k = tan(fov / 2) / margin; per axis the least d is (A + B) / 2 at s = k (A - B) / 2,
        # A = max(c + a / k), B = max(c - a / k): the box's extremes balanced about the middle
        k = math.tan(math.radians(min(max(lens.fov, 1.0), 179.0)) / 2) / margin
        shift, needed = [], []
        for values in across:
            a_max = max(c + a / k for a, c in zip(values, toward, strict=True))
            b_max = max(c - a / k for a, c in zip(values, toward, strict=True))
            shift.append(k * (a_max - b_max) / 2)
            needed.append((a_max + b_max) / 2)
        back = max(needed)
        if back - nearest < 0.002:  # a box with no width or height: a point
            back = nearest + 0.002
        if back - nearest < lens.near * 1.01:  # the near plane would cut the nearest corner
            near = max(round((back - nearest) / 2, 6), 0.001)
    if back - farthest > lens.far * 0.99:
        far = round((back - farthest) * 1.5, 3)
    aim = centre + x * shift[0] + y * shift[1]  # on the line of sight, level with the centre
    origin = aim + z * back
    return Framing(_tuple(origin), axes, _tuple(aim), back, near, far, size)


def local_pose(
    axes: Axes, origin: Vec, parent_axes: Axes | None, parent_origin: Vec | None
) -> tuple[Array, Array]:
    """The local basis (3x3, columns are axes) and origin that give the world pose under a
    parent at (`parent_axes`, `parent_origin`): the parent's inverse times the world pose.

    Raises ValueError when the parent is scaled to nothing (no local pose reaches the world one).
    """
    world = np.array(axes, dtype=float).T
    place = np.array(origin, dtype=float)
    if parent_axes is None or parent_origin is None:
        return world, place
    parent = np.array(parent_axes, dtype=float).T
    if abs(float(np.linalg.det(parent))) < 1e-9:
        raise ValueError("the parent is scaled to zero")
    inverse = np.linalg.inv(parent)
    return inverse @ world, inverse @ (place - np.array(parent_origin, dtype=float))


def transform_value(basis: Array, origin: Array) -> Constructor:
    """A Godot 3 ``Transform( ... )`` literal: the basis matrix row by row (x.x, y.x, z.x,
    x.y, ...: the axes are its columns), then the origin."""
    numbers = [float(basis[row, column]) for row in range(3) for column in range(3)]
    numbers += [float(c) for c in origin]
    return Constructor("Transform", tuple(round(n, 6) + 0.0 for n in numbers))
