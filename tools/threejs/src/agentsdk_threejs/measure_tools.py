"""Measure, assert and compare tools (mixed into :class:`ThreeJSToolkit`).

``measure`` is in the default ``core`` group; the ``assert_*`` tools form the ``check`` group
and ``compare_renders`` is in ``views``. The same measurements serve the task verifiers through
the toolkit's Python methods (:meth:`ThreeJSToolkit.bounds`, :meth:`ThreeJSToolkit.visibility`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from agentsdk.vision import AssertResult, VisibilityReport, compare_images, diff_reports, load_rgb
from pydantic import WithJsonSchema

from agentsdk import Image, ToolContext, ToolError, tool
from agentsdk_threejs import measure
from agentsdk_threejs.measure import ObjectBounds
from agentsdk_threejs.report import ViewName

OptStr = Annotated[str | None, WithJsonSchema({"type": "string"})]


class MeasureTools:
    """Tools that answer questions about the scene with numbers instead of pictures."""

    async def bounds(self, *names: str) -> list[ObjectBounds]:
        raise NotImplementedError  # provided by ThreeJSToolkit

    async def visibility(self, view: str = "camera", size: int | None = None) -> VisibilityReport:
        raise NotImplementedError  # provided by ThreeJSToolkit

    async def _render_for_compare(
        self, view: str, size: tuple[int, int]
    ) -> tuple[bytes, VisibilityReport | None]:
        raise NotImplementedError  # provided by ThreeJSToolkit

    def _previous(self, view: str) -> tuple[bytes, VisibilityReport | None] | None:
        raise NotImplementedError  # provided by ThreeJSToolkit

    def _reference_path(self, path: str, ctx: ToolContext | None) -> Path:
        raise NotImplementedError  # provided by ThreeJSToolkit

    @tool
    async def measure(self, name: str, other: OptStr = None) -> str:
        """Measure an object (size, centre, bottom, top) and how it relates to another.

        Args:
            name: the object to measure.
            other: a second object: distance, gap, whether name rests on it, overlap.
        """
        found = await self.bounds(name, *([other] if other else []))
        lines = [measure.describe_bounds(item) for item in found]
        if other:
            lines.append(measure.describe_pair(found[0], found[1]))
        return "\n".join(lines)

    @tool
    async def assert_rests_on(self, name: str, on: str, tolerance: float = 0.02) -> AssertResult:
        """Check that an object's bottom touches another's top and stands over it.

        Args:
            name: the object on top.
            on: the object below.
            tolerance: allowed vertical gap or sink.
        """
        a, b = await self.bounds(name, on)
        return measure.rests_on(a, b, tolerance)

    @tool
    async def assert_not_overlapping(
        self, name: str, other: str, tolerance: float = 0.001
    ) -> AssertResult:
        """Check that two objects do not interpenetrate (touching is fine).

        Args:
            tolerance: allowed overlap depth.
        """
        a, b = await self.bounds(name, other)
        return measure.not_overlapping(a, b, tolerance)

    @tool
    async def assert_distance(
        self, name: str, other: str, distance: float, tolerance: float = 0.05
    ) -> AssertResult:
        """Check the centre-to-centre distance of two objects.

        Args:
            distance: the expected distance.
        """
        a, b = await self.bounds(name, other)
        return measure.distance_between(a, b, distance, tolerance)

    @tool
    async def assert_in_frame(
        self, name: str, min_coverage: float = 0.0, view: ViewName = "camera"
    ) -> AssertResult:
        """Check that an object is visible, not cut off by the frame, and big enough.

        Args:
            min_coverage: smallest share of the frame it must cover (0..1).
            view: camera (default) or a framed view.
        """
        report = await self.visibility(view)
        return measure.in_frame(report, name, min_coverage)

    @tool
    async def compare_renders(
        self, reference: str = "previous", view: ViewName = "camera", ctx: ToolContext | None = None
    ) -> list[str | Image]:
        """Render now and compare with the render before the latest one, or an image file.

        Args:
            reference: "previous" (the render before the latest change) or a PNG/JPEG path.
            view: camera (default) or a framed view.
        """
        before_report: VisibilityReport | None = None
        if reference == "previous":
            previous = self._previous(view)
            if previous is None:
                raise ToolError(
                    f"fewer than two renders of the {view} view so far: change the scene first"
                )
            before, before_report = previous
            label = f"the {view} render before the latest one"
        else:
            path = self._reference_path(reference, ctx)
            before = path.read_bytes()
            label = path.name
        try:
            height, width = load_rgb(before).shape[:2]
        except Exception as error:
            raise ToolError(f"{reference} is not an image I can read: {error}") from None
        now, now_report = await self._render_for_compare(view, (width, height))
        comparison = compare_images(before, now)
        lines = [f"Compared with {label}: {comparison.to_text()}."]
        if before_report is not None and now_report is not None:
            changes = diff_reports(before_report, now_report)
            lines.append(
                "Changes: " + ("; ".join(changes) if changes else "none in the report") + "."
            )
        if now_report is not None:
            lines.append(now_report.to_text())
        return ["\n".join(lines), Image(now, label=f"{view} now")]
