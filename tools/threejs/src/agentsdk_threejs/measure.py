"""Measurements between objects from their world-space boxes, and the asserts built on them.

Boxes are axis-aligned and tight (three's ``Box3.setFromObject(object, precise=true)``, from
the vertices): exact for boxes on the axes, a little generous for rotated shapes and spheres'
diagonals. Every assert returns :class:`agentsdk.vision.AssertResult` with the numbers.
"""

from __future__ import annotations

import math

from agentsdk.vision import AssertResult, VisibilityReport
from pydantic import BaseModel


class ObjectBounds(BaseModel):
    """An object's world-space axis-aligned box (y is up)."""

    name: str
    min: list[float]
    max: list[float]

    @property
    def size(self) -> list[float]:
        """Width (x), height (y), depth (z)."""
        return [b - a for a, b in zip(self.min, self.max, strict=True)]

    @property
    def centre(self) -> list[float]:
        """The box centre."""
        return [(a + b) / 2 for a, b in zip(self.min, self.max, strict=True)]


def _overlaps(a: ObjectBounds, b: ObjectBounds) -> list[float]:
    """Per axis, how far the two boxes overlap (negative: the gap between them)."""
    return [min(a.max[i], b.max[i]) - max(a.min[i], b.min[i]) for i in range(3)]


def gap(a: ObjectBounds, b: ObjectBounds) -> float:
    """Shortest distance between the boxes (0 when they touch or intersect)."""
    return math.sqrt(sum(max(0.0, -d) ** 2 for d in _overlaps(a, b)))


def centre_distance(a: ObjectBounds, b: ObjectBounds) -> float:
    """Distance between the box centres."""
    return math.dist(a.centre, b.centre)


def overlap_volume(a: ObjectBounds, b: ObjectBounds) -> float:
    """Volume of the boxes' intersection."""
    return math.prod(max(0.0, d) for d in _overlaps(a, b))


def penetration(a: ObjectBounds, b: ObjectBounds) -> float:
    """How deep the boxes interpenetrate: the smallest per-axis overlap, 0 if apart."""
    return max(0.0, min(_overlaps(a, b)))


def footprint_share(a: ObjectBounds, b: ObjectBounds) -> float:
    """Share of ``a``'s footprint (x-z) that lies over ``b``'s (0..1)."""
    over = _overlaps(a, b)
    area = max(a.size[0], 1e-9) * max(a.size[2], 1e-9)
    return max(0.0, over[0]) * max(0.0, over[2]) / area if over[0] > 0 and over[2] > 0 else 0.0


def _r(value: float) -> float:
    return round(value, 4)


def rests_on(a: ObjectBounds, b: ObjectBounds, tolerance: float = 0.02) -> AssertResult:
    """``a``'s bottom touches ``b``'s top (within ``tolerance``) and stands over it."""
    vertical = a.min[1] - b.max[1]
    share = footprint_share(a, b)
    passed = abs(vertical) <= tolerance and share > 0
    if passed:
        message = (
            f"{a.name} rests on {b.name} (bottom {a.min[1]:.3f}, top of {b.name} {b.max[1]:.3f})"
        )
    elif share == 0:
        message = f"{a.name} is not over {b.name}: their footprints do not overlap"
    elif vertical > 0:
        message = f"{a.name} floats {vertical:.3f} above {b.name}: lower it by that much"
    else:
        message = f"{a.name} sinks {-vertical:.3f} into {b.name}: raise it by that much"
    return AssertResult(
        check="rests_on",
        passed=passed,
        measured={
            "bottom": _r(a.min[1]),
            "top_of_other": _r(b.max[1]),
            "vertical_gap": _r(vertical),
            "footprint_over_other": _r(share),
        },
        tolerance=tolerance,
        message=message,
    )


def not_overlapping(a: ObjectBounds, b: ObjectBounds, tolerance: float = 0.001) -> AssertResult:
    """The boxes do not interpenetrate by more than ``tolerance`` (touching is fine)."""
    depth = penetration(a, b)
    passed = depth <= tolerance
    message = (
        f"{a.name} and {b.name} do not overlap (gap {gap(a, b):.3f})"
        if passed
        else f"{a.name} and {b.name} overlap by {depth:.3f}: move one of them apart"
    )
    return AssertResult(
        check="not_overlapping",
        passed=passed,
        measured={
            "penetration": _r(depth),
            "overlap_volume": _r(overlap_volume(a, b)),
            "gap": _r(gap(a, b)),
        },
        tolerance=tolerance,
        message=message,
    )


def distance_between(
    a: ObjectBounds, b: ObjectBounds, expected: float, tolerance: float = 0.05
) -> AssertResult:
    """The centres are ``expected`` apart, within ``tolerance``."""
    measured = centre_distance(a, b)
    passed = abs(measured - expected) <= tolerance
    return AssertResult(
        check="distance",
        passed=passed,
        measured={"centre_distance": _r(measured), "gap": _r(gap(a, b)), "expected": expected},
        tolerance=tolerance,
        message=f"{a.name} and {b.name} are {measured:.3f} apart (centre to centre), "
        f"{'within' if passed else 'not within'} {tolerance:g} of {expected:g}",
    )


def in_frame(
    report: VisibilityReport, name: str, min_coverage: float = 0.0, tolerance: float = 0.005
) -> AssertResult:
    """``name`` is visible, not cut off by the frame (within ``tolerance``), and covers at
    least ``min_coverage`` of the frame."""
    item = report.object(name)
    if item is None:
        return AssertResult(
            check="in_frame",
            passed=False,
            measured={"visible": False},
            tolerance=tolerance,
            message=f"no object named {name} in the {report.view} view",
        )
    cut = item.cut_off if item.cut_off is not None else (1.0 if item.cut_sides else 0.0)
    problems = []
    if not item.visible:
        problems.append("it is not visible")
    if cut > tolerance:
        problems.append(f"{cut:.0%} is cut off ({'/'.join(item.cut_sides) or 'edge'})")
    if item.coverage < min_coverage:
        problems.append(f"it covers {item.coverage:.1%} of the frame, less than {min_coverage:.0%}")
    measured: dict[str, float | int | str | bool | list[float]] = {
        "visible": item.visible,
        "coverage": _r(item.coverage),
        "cut_off": _r(cut),
        "occluded": _r(item.occluded or 0.0),
        "min_coverage": min_coverage,
    }
    return AssertResult(
        check="in_frame",
        passed=not problems,
        measured=measured,
        tolerance=tolerance,
        message=f"{name} is fully in the {report.view} frame ({item.coverage:.1%} of it)"
        if not problems
        else f"{name}: " + "; ".join(problems),
    )


def describe_bounds(a: ObjectBounds) -> str:
    """One line: size, centre, bottom and top."""
    w, h, d = a.size
    cx, cy, cz = a.centre
    return (
        f"{a.name}: size {w:.3g} x {h:.3g} x {d:.3g} (w x h x d), centre ({cx:.3g}, {cy:.3g}, "
        f"{cz:.3g}), bottom y {a.min[1]:.3g}, top y {a.max[1]:.3g}"
    )


def describe_pair(a: ObjectBounds, b: ObjectBounds, tolerance: float = 0.02) -> str:
    """One line relating two objects: distances, touching, resting, overlapping."""
    parts = [f"centre distance {centre_distance(a, b):.3g}", f"gap {gap(a, b):.3g}"]
    rest = rests_on(a, b, tolerance)
    if rest.passed:
        parts.append(f"{a.name} rests on {b.name}")
    elif footprint_share(a, b) > 0 and a.min[1] >= b.max[1] - tolerance:
        parts.append(f"{a.name} is {a.min[1] - b.max[1]:.3g} above {b.name}'s top")
    depth = penetration(a, b)
    if depth > 0.001:
        parts.append(f"they overlap by {depth:.3g}")
    return f"{a.name} to {b.name}: " + ", ".join(parts)
