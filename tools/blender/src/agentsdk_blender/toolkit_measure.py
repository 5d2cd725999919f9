"""Blender measure and assert tools (group ``measure``): numbers about the scene that a
model, or a verifier, can check its work against. Asserts return ``AssertResult``.

Conventions: world space, metres, Z up; bounds are axis-aligned boxes of the evaluated
geometry (modifiers applied), so a rotated object's box is the box around it as placed.
"""

from __future__ import annotations

import math
from typing import Annotated, ClassVar

from agentsdk.vision import AssertResult
from pydantic import BaseModel, Field

from agentsdk import tool

from . import protocol as p
from .protocol import ObjectNames, Vector3
from .toolkit_base import OptText, Vec3, build_args
from .toolkit_render import RenderTools

Tolerance = Annotated[float, Field(ge=0, le=100, allow_inf_nan=False)]


class ObjectMeasure(BaseModel):
    """An object's size and place (world space, metres)."""

    name: str
    bounds_min: Vector3
    bounds_max: Vector3
    dimensions: Vector3
    centre: Vector3
    bottom_centre: Vector3
    triangles: int


class DistanceMeasure(BaseModel):
    """How far apart two objects are."""

    a: str
    b: str
    centre_distance: float
    gap: float = Field(
        description="shortest distance between the two bounding boxes (0 if they touch)"
    )
    gap_per_axis: Vector3 = Field(
        description="per axis, the space between the boxes (negative: overlap)"
    )


def _measure(bounds: p.ObjectBounds) -> ObjectMeasure:
    low, high = bounds.bounds_min, bounds.bounds_max
    centre = tuple(round((lo + hi) / 2, 6) for lo, hi in zip(low, high, strict=True))
    return ObjectMeasure(
        name=bounds.name,
        bounds_min=low,
        bounds_max=high,
        dimensions=(
            round(high[0] - low[0], 6),
            round(high[1] - low[1], 6),
            round(high[2] - low[2], 6),
        ),
        centre=(centre[0], centre[1], centre[2]),
        bottom_centre=(centre[0], centre[1], low[2]),
        triangles=bounds.triangles,
    )


def _gaps(a: ObjectMeasure, b: ObjectMeasure) -> tuple[float, float, float]:
    x, y, z = (
        max(b.bounds_min[i] - a.bounds_max[i], a.bounds_min[i] - b.bounds_max[i]) for i in range(3)
    )
    return (round(x, 6), round(y, 6), round(z, 6))


class MeasureTools(RenderTools):
    """measure_object, measure_distance and the assert_* tools."""

    TOOL_GROUPS: ClassVar[dict[str, str]] = {
        "measure_object": "measure",
        "measure_distance": "measure",
        "assert_dimensions": "measure",
        "assert_rests_on": "measure",
        "assert_no_overlap": "measure",
        "assert_in_frame": "measure",
    }

    async def measure_objects(self, names: list[str]) -> list[ObjectMeasure]:
        """World bounds, size and centre of objects (also for verifiers and scripts)."""
        args = build_args(p.MeasureArgs, names=names)
        result = await self.call_engine("measure", args, p.MeasureResult)
        return [_measure(o) for o in result.objects]

    @tool
    async def measure_object(self, name: str) -> object:
        """World-space size of an object: bounds, dimensions, centre and bottom centre (m).

        Args:
            name: The object.
        """
        [found] = await self.measure_objects([name])
        return self.reply(found)

    @tool
    async def measure_distance(self, a: str, b: str) -> object:
        """Distance between two objects: centre to centre, and the gap between their boxes.

        Args:
            a: One object.
            b: The other.
        """
        first, second = await self.measure_objects([a, b])
        gaps = _gaps(first, second)
        gap = math.sqrt(sum(max(g, 0.0) ** 2 for g in gaps))
        centre = math.dist(first.centre, second.centre)
        return self.reply(
            DistanceMeasure(
                a=first.name,
                b=second.name,
                centre_distance=round(centre, 6),
                gap=round(gap, 6),
                gap_per_axis=gaps,
            )
        )

    @tool
    async def assert_dimensions(
        self, name: str, expected: Vec3, tolerance: Tolerance = 0.05
    ) -> AssertResult:
        """Check an object's world size (X, Y, Z in metres) within a relative tolerance.

        Args:
            name: The object.
            expected: Expected size X, Y, Z in metres.
            tolerance: Allowed relative deviation per axis (0.05 = 5%).
        """
        [found] = await self.measure_objects([name])
        off = [
            abs(have - want) / max(abs(want), 1e-9)
            for have, want in zip(found.dimensions, expected, strict=True)
        ]
        passed = all(d <= tolerance for d in off)
        size = " x ".join(f"{v:.3f}" for v in found.dimensions)
        return AssertResult(
            check=f"dimensions of {found.name}",
            passed=passed,
            measured={
                "dimensions": list(found.dimensions),
                "largest_deviation": round(max(off), 6),
            },
            tolerance=tolerance,
            message=f"{found.name} is {size} m"
            + ("" if passed else f", expected {' x '.join(f'{v:g}' for v in expected)} m"),
        )

    @tool
    async def assert_rests_on(
        self, name: str, support: str, tolerance: Tolerance = 0.01
    ) -> AssertResult:
        """Check that an object rests on another: its bottom touches the support's top (within
        the tolerance, in metres) and its footprint lies over the support.

        Args:
            name: The object that should rest.
            support: What it should rest on (a floor, a table...).
            tolerance: Allowed gap or sinking in metres.
        """
        item, base = await self.measure_objects([name, support])
        gap = round(item.bounds_min[2] - base.bounds_max[2], 6)
        over = [
            max(
                0.0,
                min(item.bounds_max[i], base.bounds_max[i])
                - max(item.bounds_min[i], base.bounds_min[i]),
            )
            for i in (0, 1)
        ]
        footprint = max((item.dimensions[0] * item.dimensions[1]), 1e-12)
        covered = (
            round(over[0] * over[1] / footprint, 6)
            if item.dimensions[0] and item.dimensions[1]
            else float(all(over))
        )
        centre_over = all(
            base.bounds_min[i] <= item.centre[i] <= base.bounds_max[i] for i in (0, 1)
        )
        passed = abs(gap) <= tolerance and centre_over
        if passed:
            message = f"{item.name} rests on {base.name} (gap {gap:+.3f} m)"
        elif not centre_over:
            message = f"{item.name}'s centre is not over {base.name}"
        else:
            where = "above" if gap > 0 else "sunk into"
            message = f"{item.name} is {abs(gap):.3f} m {where} the top of {base.name}"
        return AssertResult(
            check=f"{item.name} rests on {base.name}",
            passed=passed,
            measured={
                "gap_m": gap,
                "footprint_over_support": covered,
                "centre_over_support": centre_over,
            },
            tolerance=tolerance,
            message=message,
        )

    @tool
    async def assert_no_overlap(self, a: str, b: str, tolerance: Tolerance = 0.001) -> AssertResult:
        """Check that two objects do not interpenetrate: touching is fine, boxes that overlap
        deeper than the tolerance fail when the surfaces cross or one box holds the other.

        Args:
            a: One object.
            b: The other.
            tolerance: Overlap depth in metres that still counts as touching.
        """
        first, second = await self.measure_objects([a, b])
        depth = round(max(0.0, -max(_gaps(first, second))), 6)
        crossing = await self.call_engine(
            "intersect", build_args(p.IntersectArgs, a=a, b=b), p.IntersectResult
        )

        def holds(outer: ObjectMeasure, inner: ObjectMeasure) -> bool:
            return all(
                outer.bounds_min[i] <= inner.bounds_min[i]
                and inner.bounds_max[i] <= outer.bounds_max[i]
                for i in range(3)
            )

        contained = holds(first, second) or holds(second, first)
        passed = depth <= tolerance or not (crossing.surfaces_intersect or contained)
        message = (
            f"{first.name} and {second.name} do not overlap"
            if passed
            else f"{first.name} and {second.name} overlap by {depth:.3f} m"
            + (
                " (their surfaces cross)"
                if crossing.surfaces_intersect
                else " (one is inside the other)"
            )
        )
        return AssertResult(
            check=f"{first.name} and {second.name} do not overlap",
            passed=passed,
            measured={
                "overlap_depth_m": depth,
                "surfaces_intersect": crossing.surfaces_intersect,
                "one_inside_the_other": contained,
            },
            tolerance=tolerance,
            message=message,
        )

    @tool
    async def assert_in_frame(
        self,
        names: ObjectNames,
        min_coverage: Annotated[float, Field(ge=0, le=1)] | None = None,
        camera: OptText = None,
    ) -> AssertResult:
        """Check that objects are fully inside a camera's frame (every vertex in front of the
        camera and within the image), and optionally that together they cover at least
        ``min_coverage`` of the scene camera's image (measured on a render).

        Args:
            names: The objects.
            min_coverage: Least fraction of the image they must fill (0..1), e.g. 0.3.
            camera: Which camera (default: the scene camera).
        """
        last = next(reversed(self._history.values()), None)
        size = last[1].resolution if last else (320, 240)
        args = build_args(p.FrameCheckArgs, names=names, resolution=size, camera=camera)
        framed = await self.call_engine("frame_check", args, p.FrameCheckResult)
        outside = [o.name for o in framed.objects if o.vertices_inside < 1.0]
        measured: dict[str, float | int | str | bool | list[float]] = {
            "fully_inside": not outside,
            "least_inside_fraction": min(o.vertices_inside for o in framed.objects),
        }
        problems = []
        for item in framed.objects:
            if item.behind_camera:
                problems.append(f"{item.name} is behind the camera")
            elif item.vertices_inside < 1.0:
                sides = "/".join(item.cut_sides) or "edge"
                problems.append(f"{item.name} crosses the {sides} of the frame")
        if min_coverage is not None:
            looks = await self.look(resolution=size)
            report = looks[0].report
            coverage = sum(o.coverage for o in report.objects if o.name in names) if report else 0.0
            measured["coverage"] = round(coverage, 6)
            if coverage < min_coverage:
                problems.append(
                    f"they cover {coverage:.0%} of the image, less than {min_coverage:.0%}"
                )
        passed = not problems
        return AssertResult(
            check=f"{', '.join(names)} in frame of {framed.camera}",
            passed=passed,
            measured=measured,
            tolerance=min_coverage,
            message="fully in frame"
            + (f", covering {measured['coverage']:.0%}" if "coverage" in measured else "")
            if passed
            else "; ".join(problems),
        )
