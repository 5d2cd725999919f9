"""Tools that run and look: the engine's tree, headless runs, screenshots with their visibility
report, comparing screenshots, and measure/assert tools on the scene the engine builds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentsdk.vision import AssertResult, VisibilityReport, compare_images, diff_reports

from agentsdk import Image, ToolContext, ToolError, tool
from agentsdk_godot.diagnostics import format_diagnostics
from agentsdk_godot.engine import HarnessJob
from agentsdk_godot.measure import SceneMeasurements
from agentsdk_godot.reports import (
    RunReport,
    describe_report,
    problems,
    run_report,
)
from agentsdk_godot.toolkit_base import GodotToolkitBase, OptInt, OptNames, OptNumber, OptText

__all__ = ["InspectionTools"]


class InspectionTools(GodotToolkitBase):
    """scene_tree, run_project, screenshot, compare_screenshots, measure, assert_*."""

    @tool
    async def scene_tree(self, scene: str) -> str:
        """Load a scene in the engine and show the node tree it really builds (with properties).

        Args:
            scene: The scene file.
        """
        chosen = self._scene_or_main(scene)
        run = await self._run(HarnessJob(scene=chosen, frames=1), timeout=self.run_timeout)
        if run.tree is None:
            raise ToolError(f"the engine could not open {chosen}:\n" + problems(run))
        return run.tree.outline()

    @tool
    async def run_project(
        self, scene: OptText = None, seconds: float = 2.0, frames: OptInt = None
    ) -> RunReport:
        """Run the game headless for some seconds (or frames); errors come back with file, line and stack.

        Args:
            scene: Scene to run (default: the main scene).
            seconds: How long to run.
            frames: Run this many frames instead of `seconds`.
        """
        chosen = self._scene_or_main(scene)
        if not 0 < seconds <= 600:
            raise ToolError("seconds must be more than 0 and at most 600")
        job = HarnessJob(scene=chosen, frames=frames or 0, seconds=0.0 if frames else seconds)
        run = await self._run(job, timeout=max(self.run_timeout, seconds * 3 + 10))
        report = run_report(chosen, run)
        if not report.ok:
            errors = [d for d in report.diagnostics if d.severity == "error"]
            text = describe_report(report) + await self._about_errors(errors, whole=True)
            if any("Node not found" in d.message for d in errors):
                text += f"\nnodes of {chosen}: " + ", ".join(
                    n.path for n in self._scene(chosen).nodes
                )
            raise ToolError(text)
        return report

    @tool
    async def screenshot(
        self,
        scene: OptText = None,
        frames: int = 10,
        width: int = 512,
        height: int = 512,
        ctx: ToolContext | None = None,
    ) -> list[str | Image]:
        """Render a scene and return the picture with what it shows: each object's share of the
        frame, position, colour, and whether it is cut off, hidden or behind the camera.

        Args:
            scene: Scene to show (default: the main scene).
            frames: Frame to capture (lets scripts move things first).
            width: Image width.
            height: Image height.
        """
        look = await self.look(scene, frames, width, height)
        saved = self._keep(look.png, "screenshot.png", ctx)
        self._reports[saved.resolve()] = look.report
        chosen = scene or self.project.main_scene
        lines = [f"frame {frames} of {chosen}, {width}x{height}, saved as {saved.name}"]
        if look.report.blank:
            colour = look.report.blank_colour or "one colour"
            lines.append(
                f"WARNING: the frame is blank ({colour}): no camera, no light, or nothing in view?"
            )
        lines.append(look.report.to_text())
        if look.run.errors:
            lines.append(format_diagnostics(look.run.errors))
        return ["\n".join(lines), Image(look.png)]

    @tool
    async def compare_screenshots(
        self, first: str, second: str, ctx: ToolContext | None = None
    ) -> str:
        """Compare two screenshots (names from screenshot results, or a reference image's path):
        similarity, where the picture changed, and how what it shows changed.

        Args:
            first: The earlier picture, e.g. "002-screenshot.png".
            second: The later picture.
        """
        a, b = self._picture(first, ctx), self._picture(second, ctx)
        try:
            comparison = compare_images(a.read_bytes(), b.read_bytes())
        except (OSError, ValueError) as err:
            raise ToolError(f"cannot compare {first} and {second}: {err}") from None
        lines = [comparison.to_text()]
        before: VisibilityReport | None = self._reports.get(a.resolve())
        after: VisibilityReport | None = self._reports.get(b.resolve())
        if before is not None and after is not None:
            lines += diff_reports(before, after) or ["what the reports show did not change"]
        return "\n".join(lines)

    def _picture(self, name: str, ctx: ToolContext | None) -> Path:
        given = Path(name)
        candidates = [given] if given.is_absolute() else []
        candidates += [folder / name for folder in self._picture_folders(ctx)]
        for path in candidates:
            if path.is_file():
                return path
        raise ToolError(
            f"no picture {name!r}: use a name a screenshot result gave (e.g. 001-screenshot.png) "
            "or the full path of an image file"
        )

    # ---------- measure and assert

    async def _measured(
        self, scene: str | None, width: int = 512, height: int = 512
    ) -> SceneMeasurements:
        return await self.measurements(scene, width, height)

    @tool
    async def measure(self, scene: OptText = None, nodes: OptNames = None) -> str:
        """World bounds of nodes as the engine builds them: size, centre, min and max corners.

        Args:
            scene: The scene (default: the main scene).
            nodes: Node paths to measure (default: every node that draws something).
        """
        found = await self._measured(scene)
        paths = nodes or [n.path for n in found.nodes if n.has_bounds]
        lines = []
        for path in paths[:40]:
            try:
                lines.append(found.dimensions(path).message)
            except KeyError as err:
                raise ToolError(str(err.args[0])) from None
        if len(paths) > 40:
            lines.append(f"... {len(paths) - 40} more")
        return "\n".join(lines) or "nothing in the scene draws anything"

    async def _check(
        self,
        scene: str | None,
        check: Callable[[SceneMeasurements], AssertResult],
        width: int = 512,
        height: int = 512,
    ) -> AssertResult:
        found = await self._measured(scene, width, height)
        try:
            return check(found)
        except KeyError as err:  # an unknown node, or one that draws nothing
            raise ToolError(str(err.args[0])) from None

    @tool
    async def assert_in_frame(
        self, node: str, scene: OptText = None, width: int = 512, height: int = 512
    ) -> AssertResult:
        """Check that a node is entirely inside the camera's frame (and in front of it).

        Args:
            node: Node path.
            scene: The scene (default: the main scene).
            width: Frame width the screenshot will use.
            height: Frame height.
        """
        return await self._check(scene, lambda m: m.in_frame(node), width, height)

    @tool
    async def assert_rests_on(
        self, node: str, support: str, scene: OptText = None, tolerance: float = 0.02
    ) -> AssertResult:
        """Check that a node sits on top of another (bottom touches top, footprints overlap).

        Args:
            node: The node on top.
            support: The node under it, e.g. "Floor".
            scene: The scene (default: the main scene).
            tolerance: Allowed gap or overlap in world units.
        """
        return await self._check(scene, lambda m: m.rests_on(node, support, tolerance))

    @tool
    async def assert_overlap(
        self, a: str, b: str, scene: OptText = None, overlapping: bool = False
    ) -> AssertResult:
        """Check whether two nodes' bounds intersect (by default: that they do not).

        Args:
            a: One node path.
            b: The other.
            scene: The scene (default: the main scene).
            overlapping: True to check that they do overlap.
        """
        return await self._check(scene, lambda m: m.overlap(a, b, overlapping))

    @tool
    async def assert_distance(
        self,
        a: str,
        b: str,
        scene: OptText = None,
        minimum: OptNumber = None,
        maximum: OptNumber = None,
    ) -> AssertResult:
        """Distance between two nodes' centres (and the gap between their bounds), checked
        against an optional range.

        Args:
            a: One node path.
            b: The other.
            scene: The scene (default: the main scene).
            minimum: Smallest distance allowed.
            maximum: Largest distance allowed.
        """
        return await self._check(scene, lambda m: m.distance(a, b, minimum, maximum))
