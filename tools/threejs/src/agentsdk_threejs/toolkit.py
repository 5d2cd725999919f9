"""ThreeJSToolkit: tools an agent uses to build a three.js scene and see it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import anyio
from agentsdk.tools import check_groups
from agentsdk.vision import VisibilityReport

from agentsdk import Image, Tool, ToolContext, ToolError, Toolkit, Unchanged, tool
from agentsdk_threejs.file_tools import FileTools
from agentsdk_threejs.measure import ObjectBounds
from agentsdk_threejs.measure_tools import MeasureTools
from agentsdk_threejs.notes import (
    addon_hints,
    crop_notes,
    light_side_notes,
    out_of_view_hints,
    overlap_notes,
)
from agentsdk_threejs.page import RendererError, RendererPage, RenderTimeoutError
from agentsdk_threejs.pool import RendererPool
from agentsdk_threejs.report import (
    RenderReport,
    RenderResult,
    SceneSummary,
    Size,
    ViewName,
    describe_failure,
    describe_scene,
)
from agentsdk_threejs.report import montage as compose_montage
from agentsdk_threejs.scene_tools import Applied, SceneTools

TOOL_GROUPS: dict[str, tuple[str, ...]] = {
    "core": (
        "add_object",
        "update_object",
        "remove_object",
        "add_light",
        "set_camera",
        "fit_view",
        "render",
        "measure",
    ),
    "check": ("assert_rests_on", "assert_not_overlapping", "assert_distance", "assert_in_frame"),
    "views": ("render_views", "compare_renders"),
    "code": ("render_scene",),
    "files": ("load_model", "export_glb"),
}


class ThreeJSToolkit(SceneTools, MeasureTools, FileTools, Toolkit):
    """Build a three.js scene, render it in headless Chromium, see the pictures and what they show.

    The scene persists across calls (a session on one warm page), so an agent can add, change
    and re-render. The ``core`` tool group (on by default) builds it with typed operations:
    objects by name, lights, camera, fit-to-view. The ``code`` group's ``render_scene`` runs
    JavaScript instead: an async function body that receives ``THREE``, ``scene``, ``camera``,
    ``renderer``, ``loaders`` (``gltf``, ``obj``), ``loadModel(path)``, ``asset(path)``,
    ``addon(path)`` and ``vars`` (an object kept between calls).

    Args:
        pool: a shared :class:`RendererPool`; by default the toolkit starts its own.
        groups: tool groups to offer: ``core`` (default: typed scene tools, render, measure),
            ``check`` (assert_* tools), ``views`` (render_views, compare_renders), ``code``
            (render_scene, raw three.js), ``files`` (load_model, export_glb), or ``all``.
        image_size: width and height of the image the typed tools return.
        asset_dirs: folders models and textures may be loaded from (default: the current folder).
        output_dir: where ``export_glb`` writes (default: the run's artifact folder, else the current folder).
        timeout: seconds a render may take before the scene code is stopped.
        executable_path: the Chromium binary (default: found automatically).
        prefix: prefix for the tool names (``prefix="threejs"`` -> ``threejs_render_scene``).
    """

    name = "threejs"
    instructions = (
        "You build a three.js scene with the threejs tools; y is up. Every tool result lists the "
        "scene and what the camera sees (a visibility report per object). Lines starting with "
        "'hint:' are for you, not for the user: when a result has one, do what it says with a tool "
        "call before you answer. Answer in one short sentence only when the scene matches the "
        "request and no hint is left.\n"
    )
    groups_available: ClassVar[dict[str, tuple[str, ...]]] = TOOL_GROUPS

    def __init__(
        self,
        pool: RendererPool | None = None,
        *,
        groups: Sequence[str] = ("core",),
        image_size: int = 512,
        asset_dirs: Sequence[str | Path] | None = None,
        output_dir: str | Path | None = None,
        timeout: float = 15.0,
        executable_path: str | Path | None = None,
        prefix: str | None = None,
    ) -> None:
        super().__init__(prefix=prefix)
        self.groups = check_groups(groups, TOOL_GROUPS)
        self.image_size = image_size
        self._owns_pool = pool is None
        self.pool = pool or RendererPool(
            pages=1,
            asset_dirs=[Path.cwd()] if asset_dirs is None else asset_dirs,
            timeout=timeout,
            executable_path=executable_path,
        )
        self.output_dir = Path(output_dir) if output_dir is not None else None
        self._session: RendererPage | None = None
        self._scene_lost = False
        # The last two frames (and reports) of each view, for compare_renders.
        self._last: dict[str, list[tuple[bytes, VisibilityReport | None]]] = {}

    def tools(self) -> list[Tool]:
        """The tools of the chosen groups, in group order."""
        return self.tools_of_groups(self.groups)

    async def start(self) -> None:
        """Start the renderer pool (when the toolkit owns it)."""
        if self._owns_pool:
            await self.pool.start()

    async def close(self) -> None:
        """Give back the session page and close the pool the toolkit owns; idempotent."""
        session, self._session = self._session, None
        if session is not None:
            await self.pool.release(session)
        if self._owns_pool:
            await self.pool.close()

    async def reset(self) -> None:
        """Empty the scene and put the camera back, keeping the browser and page warm."""
        self._last.clear()
        if self._session is None or self._session.broken:
            return
        try:
            await self._session.run("", reset=True, views=[], visibility=False)
        except RendererError:
            await self.pool.release(self._session)
            self._session = None

    async def bounds(self, *names: str) -> list[ObjectBounds]:
        """World-space boxes of the named objects (every reported object when none is named).

        Raises:
            ToolError: naming the objects the scene has, when a name is not one of them.
        """
        page = await self.session()
        raw = await page.evaluate("arg => window.__agentsdk.bounds(arg)", {"names": list(names)})
        if raw.get("error"):
            raise ToolError(raw["error"])
        empty = [item["name"] for item in raw["objects"] if item["min"] is None]
        if empty:
            raise ToolError(f"{', '.join(empty)} has no geometry to measure")
        return [ObjectBounds.model_validate(item) for item in raw["objects"]]

    async def scene_summary(self) -> SceneSummary:
        """What the scene holds (objects, lights, camera), without rendering."""
        page = await self.session()
        result = await page.apply([], views=[], visibility=False)
        assert result.scene is not None
        return result.scene

    async def visibility(self, view: str = "camera", size: int | None = None) -> VisibilityReport:
        """Render ``view`` and return its visibility report (what a verifier inspects)."""
        side = size or self.image_size
        _png, report = await self._render_for_compare(view, (side, side))
        assert report is not None
        return report

    async def _render_for_compare(
        self, view: str, size: tuple[int, int]
    ) -> tuple[bytes, VisibilityReport | None]:
        page = await self.session()
        try:
            result = await page.apply([], size=size, views=[view])
        except RendererError as error:
            raise ToolError(f"{error}. Try again; the scene may have to be rebuilt.") from None
        return result.images[0], (result.visibility[0] if result.visibility else None)

    def _previous(self, view: str) -> tuple[bytes, VisibilityReport | None] | None:
        frames = self._last.get(view, [])
        return frames[-2] if len(frames) >= 2 else None

    def _reference_path(self, path: str, ctx: ToolContext | None) -> Path:
        folders = [self.output_dir, ctx.artifacts.dir if ctx is not None else None]
        folders += list(self.pool.asset_dirs)
        candidate = Path(path)
        for folder in [None, *folders]:
            if folder is None and not candidate.is_absolute():
                continue
            full = candidate if folder is None else Path(folder) / candidate
            if full.is_file():
                return full
        raise ToolError(
            f"reference image not found: {path} (give a path inside the output or asset folders)"
        )

    async def session(self) -> RendererPage:
        """The page holding this toolkit's scene (a new, empty one if the last one died)."""
        if self._session is not None and self._session.broken:
            await self.pool.release(self._session)
            self._session = None
            self._scene_lost = True
        if self._session is None:
            if self.pool.server is None:
                await self.start()
            try:
                with anyio.fail_after(self.pool.timeout + 5):
                    self._session = await self.pool.acquire()
            except TimeoutError:
                raise RendererError(
                    f"all {self.pool.size} page(s) of the renderer pool stay busy: give the shared "
                    "pool one page per toolkit that uses it"
                ) from None
        return self._session

    @tool(side_effects=True)
    async def render_scene(
        self,
        code: str,
        size: Size = 512,
        views: list[ViewName] | None = None,
        reset: bool = False,
        ctx: ToolContext | None = None,
    ) -> list[RenderReport | str | Image]:
        """Run three.js code against the persistent scene, render it and return the image(s) and a report.

        The code is the body of an async function (``await`` works) receiving ``THREE``, ``scene``,
        ``camera`` (PerspectiveCamera at (4, 3, 6) looking at the origin), ``renderer``,
        ``loaders`` ({gltf, obj}), ``loadModel(path)`` (adds a model from the asset folder and
        returns it), ``asset(path)`` (URL of an asset file), ``addon(path)`` (imports
        ``three/addons/<path>``) and ``vars`` (an object kept between calls). Objects stay in
        the scene between calls: give them a ``name`` and find them with
        ``scene.getObjectByName``. Return ``{camera}`` to switch to another camera. Lit materials
        need lights. Errors come back with line numbers of this code.

        Args:
            code: JavaScript run against the scene (may be empty to just re-render).
            size: width and height of each image in pixels.
            views: "camera" (the scene camera) and/or framed views "front", "side", "top", "iso",
                "back", "left", "bottom". Default ["camera"].
            reset: start from an empty scene and default camera before running the code.
        """
        page = await self.session()
        chosen = views or ["camera"]
        try:
            result = await page.run(code, reset=reset, size=(size, size), views=chosen)
        except RenderTimeoutError as error:
            raise ToolError(self._timeout_message(error, page)) from None
        except RendererError as error:
            raise ToolError(
                f"{error}. The scene was lost; call render_scene again with reset=true."
            ) from None
        return self._deliver(result, code, ctx, montage_views=False)

    @tool
    async def render_views(
        self,
        views: list[ViewName] | None = None,
        size: Size = 384,
        montage: bool = True,
        ctx: ToolContext | None = None,
    ) -> list[RenderReport | str | Image]:
        """Render the current scene from several framed viewpoints, optionally as one montage image.

        Args:
            views: which views; default front, side, top and iso (each framed on the whole scene).
            size: width and height of each view in pixels.
            montage: True for one labelled grid image, False for one image per view.
        """
        page = await self.session()
        chosen = views or ["front", "side", "top", "iso"]
        try:
            result = await page.render_views(chosen, size=(size, size))
        except RendererError as error:
            raise ToolError(f"{error}. Render the scene again with render_scene.") from None
        return self._deliver(result, "", ctx, montage_views=montage)

    async def _apply(
        self, ops: list[dict[str, Any]], ctx: ToolContext | None, views: list[str] | None = None
    ) -> Applied:
        """Run typed operations on the session's scene; the text and picture the model gets."""
        page = await self.session()
        size = (self.image_size, self.image_size)
        try:
            result = await page.apply(ops, size=size, views=views or ["camera"])
        except RendererError as error:
            raise ToolError(
                f"{error}. Try the call again; the scene may have to be rebuilt."
            ) from None
        scene = describe_scene(result.scene) if result.scene is not None else ""
        if result.op_error is not None:
            raise ToolError(f"{result.op_error}. Nothing was changed.\n{scene}")
        lines = [("; ".join(result.changes) + ".") if result.changes else "Rendered."]
        if result.unchanged:
            # Asked for what already was (the 1.5B model recoloured a white orb white and
            # rendered again, turn after turn): said, and marked for the loop guard.
            lines[0] = f"Nothing changed: the scene already was so ({lines[0].rstrip('.')})."
        lines.append(scene)
        if result.scene is not None:
            lines.extend(overlap_notes(result.scene, [op.get("name") for op in ops]))
        report = result.report
        lines.extend(visibility.to_text() for visibility in result.visibility)
        lines.extend(out_of_view_hints(ops, result.visibility))
        lines.extend(crop_notes(ops, result.visibility))
        if result.scene is not None:
            lines.extend(light_side_notes(result.scene, result.visibility))
        if report.blank and not result.visibility:
            flat = ", ".join(f"{v.view} is all {v.color}" for v in report.views if v.uniform)
            lines.append(
                f"Warning: the frame is blank ({flat}): no light for a lit object, the camera looking "
                "away, or objects outside the view. add_light or fit_view fix the usual causes."
            )
        lines.extend(note for note in self._notes(report))
        labels = [view.view for view in report.views]
        self._remember(result)
        if ctx is not None:
            for label, data in zip(labels, result.images, strict=True):
                ctx.artifacts.save_bytes(f"threejs-{ctx.call_id}-{label}.png", data)
        text = "\n".join(line for line in lines if line)
        made: list[str | Image] = [
            text,
            *(Image(data, label=label) for label, data in zip(labels, result.images, strict=True)),
        ]
        return Unchanged(made) if result.unchanged else made

    def _remember(self, result: RenderResult) -> None:
        reports = {v.view: v for v in result.visibility}
        for view, data in zip(result.report.views, result.images, strict=True):
            frames = self._last.setdefault(view.view, [])
            frames[:] = [*frames[-1:], (data, reports.get(view.view))]

    def _notes(self, report: RenderReport) -> list[str]:
        notes = [note for note in report.notes if not note.startswith("Rendered in software")]
        if self._scene_lost:
            notes.append("The previous renderer page died, so this scene started empty.")
            self._scene_lost = False
        return notes

    def _timeout_message(self, error: RenderTimeoutError, page: RendererPage) -> str:
        if page.broken:
            return f"{error}. The page was replaced and the scene is empty now; rebuild it with reset=true."
        return f"{error}. The scene keeps whatever the code had built before it was stopped."

    def _deliver(
        self,
        result: RenderResult,
        code: str,
        ctx: ToolContext | None,
        *,
        montage_views: bool,
        preface: str = "",
    ) -> list[RenderReport | str | Image]:
        report = result.report
        self._remember(result)
        seen = "\n".join(visibility.to_text() for visibility in result.visibility)
        if self._scene_lost:
            report.notes.append("The previous renderer page died, so this scene started empty.")
            self._scene_lost = False
        labels = [view.view for view in report.views]
        if not report.ok:
            message = describe_failure(report, code)
            server = self.pool.server
            hints = addon_hints(report, server.roots["three"] if server is not None else None)
            message = "\n".join([message, *hints])
            if preface and not report.errors:
                message = f"{preface}\n{message}"
            if seen:
                message += "\n" + seen
            if ctx is not None and result.images:
                saved = [
                    ctx.artifacts.save_bytes(f"threejs-{ctx.call_id}-{label}.png", data)
                    for label, data in zip(labels, result.images, strict=True)
                ]
                message += "\nThe frame(s) were saved to " + ", ".join(map(str, saved)) + "."
            # A frame with something in it (a scene half built, or built but logging errors)
            # goes to the model with the error; a flat colour is fully said by the text.
            frames = [
                Image(data, label=f"{view.view} (failed render)")
                for view, data in zip(report.views, result.images, strict=True)
                if not view.uniform
            ]
            raise ToolError(message, images=frames)
        texts: list[RenderReport | str] = [report, seen] if seen else [report]
        if montage_views and len(result.images) > 1:
            return [
                *texts,
                Image(compose_montage(result.images, labels), label="montage " + " ".join(labels)),
            ]
        return [
            *texts,
            *(Image(data, label=label) for label, data in zip(labels, result.images, strict=True)),
        ]
