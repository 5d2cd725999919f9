"""The ``files`` tool group: load a model file into the scene, export the scene as GLB."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agentsdk import Image, ToolContext, ToolError, tool
from agentsdk_threejs.page import RendererError, RendererPage
from agentsdk_threejs.pool import RendererPool
from agentsdk_threejs.report import RenderReport, RenderResult, Size


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


class FileTools:
    """Mixed into :class:`ThreeJSToolkit`."""

    pool: RendererPool
    output_dir: Path | None

    async def session(self) -> RendererPage:
        raise NotImplementedError  # provided by ThreeJSToolkit

    def _deliver(
        self,
        result: RenderResult,
        code: str,
        ctx: ToolContext | None,
        *,
        montage_views: bool,
        preface: str = "",
    ) -> list[RenderReport | str | Image]:
        raise NotImplementedError  # provided by ThreeJSToolkit

    @tool(side_effects=True)
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

    @tool(side_effects=True)
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
