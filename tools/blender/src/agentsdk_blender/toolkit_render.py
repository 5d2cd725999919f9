"""Blender tools that render and look: render (with a visibility report per view),
fit_view, and compare_renders."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

from agentsdk.vision import VisibilityReport, compare_images, diff_reports
from pydantic import Field

from agentsdk import Image, TextPart, ToolContext, ToolError, tool

from . import protocol as p
from .toolkit_base import BlenderToolkitBase, OptVec3, Size2, build_args
from .visibility import report_for

Engine = Literal["workbench", "cycles", "eevee"]


@dataclass
class Look:
    """One rendered view: the PNG and what it shows."""

    view: str
    png: bytes
    report: VisibilityReport | None
    seconds: float
    ids_png: bytes | None = None
    """The object-ID pass itself (flat colours, see agentsdk.vision.id_colours)."""
    id_names: dict[str, str] | None = None
    """Object name of each ID number in ``ids_png``."""


class RenderTools(BlenderToolkitBase):
    """render and fit_view (``core``), compare_renders (``measure``)."""

    TOOL_GROUPS: ClassVar[dict[str, str]] = {"compare_renders": "measure"}

    @property
    def _history(self) -> dict[str, tuple[Look, p.RenderArgs]]:
        """The last render of each view and its settings (what compare_renders compares to)."""
        store: dict[str, tuple[Look, p.RenderArgs]] = self.__dict__.setdefault("_looks", {})
        return store

    async def look(
        self,
        views: Sequence[p.View] = ("camera",),
        *,
        engine: Engine = "workbench",
        resolution: tuple[int, int] = (320, 240),
        samples: int = 16,
        report: bool = True,
    ) -> list[Look]:
        """Render views and measure what each shows (for verifiers, tests and scripts)."""
        args = p.RenderArgs(
            engine=engine, resolution=resolution, samples=samples, views=list(views), report=report
        )
        return await self._render(args)

    async def _render(self, args: p.RenderArgs) -> list[Look]:
        result = await self.call_engine("render", args, p.RenderResult, timeout=self.render_timeout)
        looks = []
        for view in result.images:
            png = base64.b64decode(view.png_base64)
            ids = base64.b64decode(view.report.id_png_base64) if view.report else None
            names = view.report.names if view.report else None
            looks.append(Look(view.view, png, report_for(view, png), view.seconds, ids, names))
        for item in looks:
            self._history[item.view] = (item, args)
        return looks

    async def _render_with_progress(self, args: p.RenderArgs, ctx: ToolContext) -> list[Look]:
        """One view at a time, each reported as done (served over MCP: a progress
        notification per view, so a client sees a long cycles render advance)."""
        views = list(args.views)
        await ctx.progress(0, len(views), f"rendering {len(views)} view(s) with {args.engine}")
        looks: list[Look] = []
        for n, view in enumerate(views, start=1):
            (look,) = await self._render(args.model_copy(update={"views": [view]}))
            looks.append(look)
            await ctx.progress(n, len(views), f"rendered {view} in {look.seconds:.1f} s")
        return looks

    @tool
    async def render(
        self,
        engine: Engine = "workbench",
        resolution: Size2 = (320, 240),
        samples: Annotated[int, Field(ge=1, le=4096)] = 16,
        views: list[p.View] | None = None,
        ctx: ToolContext | None = None,
    ) -> list[str | Image | TextPart]:
        """Render the scene; each view comes with a short report of what it shows (per
        object: share of the frame, where, colour, cut off by the frame, hidden behind
        others) and framing hints, plus the image.

        Args:
            engine: workbench (fast flat shading), cycles (CPU path tracing) or eevee (slow here).
            resolution: Width and height in pixels (16..4096).
            samples: Samples per pixel (cycles, eevee).
            views: "camera" (the scene camera, or an automatic framing when there is none)
                and/or automatic framings: front, back, left, right, top, perspective.
        """
        args = build_args(
            p.RenderArgs, engine=engine, resolution=resolution, samples=samples,
            views=views or ["camera"],
        )  # fmt: skip
        if ctx is not None and ctx.report_progress is not None:
            looks = await self._render_with_progress(args, ctx)
        else:
            looks = await self._render(args)
        seconds = sum(item.seconds for item in looks)
        head = f"rendered with {engine} in {seconds:.1f} s"
        texts = [item.report.to_text() for item in looks if item.report is not None]
        notice = self.connection.take_notice()
        lead: list[str | Image | TextPart] = [f"Note: {notice}."] if notice else []
        return [*lead, "\n".join([head, *texts]), *(Image(item.png) for item in looks)]

    @tool(side_effects=True)
    async def fit_view(
        self,
        names: list[str] | None = None,
        direction: OptVec3 = None,
        margin: Annotated[float, Field(ge=1.0, le=10.0)] = 1.1,
    ) -> object:
        """Move the scene camera so the named objects (default: all) are fully in frame,
        looking from its current side (or along ``direction`` towards them).

        Args:
            names: Objects to frame (default: every rendered object).
            direction: From where to look, e.g. [1, -1, 0.8] (front right, above).
            margin: Room around the objects (1.0 = touching the frame edges).
        """
        last = next(reversed(self._history.values()), None)
        size = last[1].resolution if last else (320, 240)  # frame for the shape renders have
        args = build_args(
            p.FitViewArgs, names=names or [], direction=direction, margin=margin, resolution=size
        )
        return self.reply(await self.call_engine("fit_view", args, p.FitViewResult))

    @tool
    async def compare_renders(
        self, view: p.View = "camera", reference: str | None = None, ctx: ToolContext | None = None
    ) -> list[str | Image]:
        """Render a view again and say what changed since its last render (or against a
        reference image file): similarity, the changed region, and per object.

        Args:
            view: Which view to compare (one that was rendered before, unless a reference
                image is given).
            reference: A PNG/JPEG file to compare with instead of the last render.
        """
        previous = self._history.get(view)
        if reference is None and previous is None:
            raise ToolError(f"view {view!r} has not been rendered yet: call render first")
        args = previous[1] if previous else p.RenderArgs()
        args = args.model_copy(update={"views": [view]})
        if reference is not None:
            source = self.path_or_error(self.paths(ctx).readable, reference)
            before_png, before_report = source.read_bytes(), None
        else:
            assert previous is not None
            before_png, before_report = previous[0].png, previous[0].report
        [now] = await self._render(args)
        try:
            comparison = compare_images(before_png, now.png)
        except ValueError as exc:
            raise ToolError(
                f"cannot compare with {reference or 'the last render'}: {exc}"
            ) from None
        lines = [f"view {view}: {comparison.to_text()}"]
        if before_report is not None and now.report is not None:
            lines += diff_reports(before_report, now.report) or ["no object changed"]
        if now.report is not None:
            lines.append(now.report.to_text())
        return ["\n".join(lines), Image(now.png)]
