"""Closed-form projection for the tests: where known geometry lands in the image.

Independent of three.js: a look-at camera (up = +Y) and a perspective projection, the way any
textbook writes them, so the tests can check the page's reports against their own maths.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.typing import NDArray


def camera_basis(
    position: list[float], target: list[float], up: tuple[float, float, float] = (0, 1, 0)
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Right, up and backward unit vectors of a camera at ``position`` looking at ``target``."""
    eye, at = np.asarray(position, float), np.asarray(target, float)
    back = eye - at
    back /= np.linalg.norm(back)
    right = np.cross(np.asarray(up, float), back)
    right /= np.linalg.norm(right)
    return right, np.cross(back, right), back


def to_ndc(
    points: NDArray[np.float64],
    position: list[float],
    target: list[float],
    fov: float,
    aspect: float = 1.0,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Normalised device coordinates (x right, y up, -1..1 in frame) and view depth of points."""
    right, up, back = camera_basis(position, target)
    relative = np.asarray(points, float) - np.asarray(position, float)
    depth = -(relative @ back)
    tan_y = math.tan(math.radians(fov) / 2)
    x = (relative @ right) / depth / (tan_y * aspect)
    y = (relative @ up) / depth / tan_y
    return np.stack([x, y], 1), depth


def to_pixels(ndc: NDArray[np.float64], width: int, height: int) -> NDArray[np.float64]:
    """Pixel coordinates (origin top left, x right, y down) of NDC points."""
    return np.stack([(ndc[:, 0] + 1) / 2 * width, (1 - ndc[:, 1]) / 2 * height], 1)


def box_corners(centre: list[float], size: list[float]) -> NDArray[np.float64]:
    """The 8 corners of an axis-aligned box."""
    c, half = np.asarray(centre, float), np.asarray(size, float) / 2
    return np.array([c + half * np.array(s) for s in itertools.product((-1, 1), repeat=3)])


def convex_area(points: NDArray[np.float64]) -> float:
    """Area of the convex hull of 2-D points (monotone chain + shoelace)."""
    pts = sorted(map(tuple, np.asarray(points, float)))
    if len(pts) < 3:
        return 0.0
    hull = _hull(pts)
    xs, ys = np.array([p[0] for p in hull]), np.array([p[1] for p in hull])
    return float(abs(np.dot(xs, np.roll(ys, 1)) - np.dot(ys, np.roll(xs, 1))) / 2)


def clip_area(points: NDArray[np.float64], width: int, height: int) -> float:
    """Area of the convex hull of 2-D pixel points, clipped to the frame (Sutherland-Hodgman)."""
    pts = sorted(map(tuple, np.asarray(points, float)))
    hull = _hull(pts)
    for axis, limit, keep_below in (
        (0, 0.0, False),
        (0, width, True),
        (1, 0.0, False),
        (1, height, True),
    ):
        hull = _clip(hull, axis, limit, keep_below)
        if not hull:
            return 0.0
    return convex_area(np.array(hull))


def _hull(pts: list[tuple[float, float]]) -> list[tuple[float, float]]:
    def half(chain: list[tuple[float, float]]) -> list[tuple[float, float]]:
        out: list[tuple[float, float]] = []
        for p in chain:
            while len(out) >= 2:
                (ax, ay), (bx, by) = out[-2], out[-1]
                if (bx - ax) * (p[1] - ay) - (by - ay) * (p[0] - ax) > 0:
                    break
                out.pop()
            out.append(p)
        return out

    return half(pts)[:-1] + half(pts[::-1])[:-1]


def _clip(
    polygon: list[tuple[float, float]], axis: int, limit: float, keep_below: bool
) -> list[tuple[float, float]]:
    def inside(p: tuple[float, float]) -> bool:
        return p[axis] <= limit if keep_below else p[axis] >= limit

    out: list[tuple[float, float]] = []
    for i, current in enumerate(polygon):
        previous = polygon[i - 1]
        if inside(current) != inside(previous):
            t = (limit - previous[axis]) / (current[axis] - previous[axis])
            out.append(
                (
                    previous[0] + t * (current[0] - previous[0]),
                    previous[1] + t * (current[1] - previous[1]),
                )
            )
        if inside(current):
            out.append(current)
    return out
