"""ThreeJSToolkit: tools an agent uses to build a three.js scene and see it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar

import anyio
from pydantic import BaseModel, Field

from agentsdk import Image, Tool, ToolContext, ToolError, Toolkit, tool
from agentsdk_threejs.page import RendererError, RendererPage, RenderTimeoutError
from agentsdk_threejs.pool import RendererPool
from agentsdk_threejs.report import (
    RenderReport,
    RenderResult,
    ViewName,
    describe_failure,
    describe_scene,
)
from agentsdk_threejs.report import montage as compose_montage
from agentsdk_threejs.scene_tools import SceneTools

Size = Annotated[int, Field(ge=16, le=2048, description="width and height of each image in pixels")]


class GlbExport(BaseModel):
    """What ``export_glb`` wrote, as read back by trimesh."""

    path: str
    bytes: int
    meshes_in_scene: int
    meshes_in_file: int = Field(description="mesh instances trimesh found in the file")
    triangles_in_file: int
    replaced_materials: int = Field(
        0,
        description="meshes whose material glTF cannot hold, written with a plain standard material",
    )
    bbox_min: list[float] | None = None
    bbox_max: list[float] | None = None


TOOL_GROUPS: dict[str, tuple[str, ...]] = {
    "core": (
        "add_object",
        "update_object",
        "remove_object",
        "add_light",
        "set_camera",
        "fit_view",
        "render",
    ),
    "views": ("render_views",),
    "code": ("render_scene",),
    "files": ("load_model", "export_glb"),
}


class ThreeJSToolkit(SceneTools, Toolkit):
    """Build a three.js scene, render it in headless Chromium, see the pictures and what they show.

    The scene persists across calls (a session on one warm page), so an agent can add, change
    and re-render. The ``core`` tool group (on by default) builds it with typed operations:
    objects by name, lights, camera, fit-to-view. The ``code`` group's ``render_scene`` runs
    JavaScript instead: an async function body that receives ``THREE``, ``scene``, ``camera``,
    ``renderer``, ``loaders`` (``gltf``, ``obj``), ``loadModel(path)``, ``asset(path)``,
    ``addon(path)`` and ``vars`` (an object kept between calls).

    Args:
        pool: a shared :class:`RendererPool`; by default the toolkit starts its own.
        groups: tool groups to offer: ``core`` (default), ``views`` (render_views), ``code``
            (render_scene, raw three.js), ``files`` (load_model, export_glb), or ``all``.
        image_size: width and height of the image the typed tools return.
        asset_dirs: folders models and textures may be loaded from (default: the current folder).
        output_dir: where ``export_glb`` writes (default: the run's artifact folder, else the current folder).
        timeout: seconds a render may take before the scene code is stopped.
        executable_path: the Chromium binary (default: found automatically).
        prefix: prefix for the tool names (``prefix="threejs"`` -> ``threejs_render_scene``).
    """

    name = "threejs"
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
        self.groups = _check_groups(groups)
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

    def tools(self) -> list[Tool]:
        """The tools of the chosen groups, in group order."""
        wanted = [name for group in self.groups for name in TOOL_GROUPS[group]]
        by_name = {
            t.name.removeprefix(f"{self.prefix}_") if self.prefix else t.name: t
            for t in super().tools()
        }
        return [by_name[name] for name in wanted]

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

    @tool
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

    @tool
    async def load_model(
        self,
        path: str,
        name: str | None = None,
        size: Size = 512,
        ctx: ToolContext | None = None,
    ) -> list[RenderReport | str | Image]:
        """Load a glTF (.gltf/.glb) or OBJ model file into the scene and show it (iso view).

        Args:
            path: file path, relative to the first asset folder or absolute inside an asset folder.
            name: name given to the loaded object (to find it later with scene.getObjectByName).
            size: width and height of the image in pixels.
        """
        page = await self.session()
        server = self.pool.server
        assert server is not None
        folders = server.asset_dirs
        candidate = Path(path)
        if not candidate.is_absolute() and folders:
            candidate = folders[0] / candidate
        if not candidate.is_file():
            raise ToolError(
                f"asset not found: {path} (asset folders: {', '.join(map(str, folders))})"
            )
        url = server.asset_url(candidate)
        if url is None:
            raise ToolError(f"{path} is outside the asset folders ({', '.join(map(str, folders))})")
        try:
            result = await page.load_model(url, name=name, size=(size, size))
        except RendererError as error:
            raise ToolError(str(error)) from None
        loaded_as = f" as '{name}'" if name else ""
        return self._deliver(
            result,
            "",
            ctx,
            montage_views=False,
            preface=f"The model was loaded into the scene{loaded_as}, but:",
        )

    @tool
    async def export_glb(self, path: str, ctx: ToolContext | None = None) -> GlbExport:
        """Export the current scene as a binary glTF (.glb) file and check it by loading it back.

        Args:
            path: file name or relative path inside the output folder, ending in .glb.
        """
        base = (self.output_dir or (ctx.artifacts.dir if ctx is not None else Path.cwd())).resolve()
        target = (base / path).resolve()
        if not target.is_relative_to(base) or target.suffix.lower() != ".glb":
            raise ToolError(f"path must be a .glb file inside {base}")
        page = await self.session()
        try:
            exported = await page.export_glb()
        except RendererError as error:
            raise ToolError(str(error)) from None
        data, stats = exported.data, exported.stats
        if stats.meshes == 0:
            raise ToolError("the scene has no meshes to export")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        try:
            meshes, triangles, bounds = read_back_glb(target)
        except Exception as error:
            raise ToolError(f"the exported file does not load back in trimesh: {error}") from None
        return GlbExport(
            path=str(target),
            bytes=len(data),
            meshes_in_scene=stats.meshes,
            meshes_in_file=meshes,
            triangles_in_file=triangles,
            replaced_materials=exported.replaced_materials,
            bbox_min=None if bounds is None else bounds[0],
            bbox_max=None if bounds is None else bounds[1],
        )

    async def _apply(
        self, ops: list[dict[str, Any]], ctx: ToolContext | None, views: list[str] | None = None
    ) -> list[str | Image]:
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
        lines.append(scene)
        report = result.report
        lines.extend(visibility.to_text() for visibility in result.visibility)
        if report.blank and not result.visibility:
            flat = ", ".join(f"{v.view} is all {v.color}" for v in report.views if v.uniform)
            lines.append(
                f"Warning: the frame is blank ({flat}): no light for a lit object, the camera looking "
                "away, or objects outside the view. add_light or fit_view fix the usual causes."
            )
        lines.extend(note for note in self._notes(report))
        labels = [view.view for view in report.views]
        if ctx is not None:
            for label, data in zip(labels, result.images, strict=True):
                ctx.artifacts.save_bytes(f"threejs-{ctx.call_id}-{label}.png", data)
        text = "\n".join(line for line in lines if line)
        return [
            text,
            *(Image(data, label=label) for label, data in zip(labels, result.images, strict=True)),
        ]

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
        seen = "\n".join(visibility.to_text() for visibility in result.visibility)
        if self._scene_lost:
            report.notes.append("The previous renderer page died, so this scene started empty.")
            self._scene_lost = False
        labels = [view.view for view in report.views]
        if not report.ok:
            message = describe_failure(report, code)
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


def _check_groups(groups: Sequence[str] | str) -> tuple[str, ...]:
    """Expand ``all`` and refuse unknown group names with the list of known ones."""
    if isinstance(groups, str):
        groups = [groups]
    chosen: list[str] = []
    for group in groups:
        names = list(TOOL_GROUPS) if group == "all" else [group]
        for name in names:
            if name not in TOOL_GROUPS:
                raise ValueError(
                    f"unknown tool group {group!r}; groups: {', '.join(TOOL_GROUPS)}, all"
                )
            if name not in chosen:
                chosen.append(name)
    return tuple(chosen)


def read_back_glb(path: Path) -> tuple[int, int, tuple[list[float], list[float]] | None]:
    """Load a GLB with trimesh: (mesh instances, triangles, bounding box or None)."""
    import trimesh

    loaded: Any = trimesh.load(path, force="scene")
    meshes = 0
    triangles = 0
    for node in loaded.graph.nodes_geometry:
        geometry = loaded.geometry[loaded.graph[node][1]]
        meshes += 1
        triangles += len(getattr(geometry, "faces", ()))
    bounds = loaded.bounds
    if bounds is None:
        return meshes, triangles, None
    return meshes, triangles, ([float(v) for v in bounds[0]], [float(v) for v in bounds[1]])
