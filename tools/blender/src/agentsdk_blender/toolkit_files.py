"""Blender tools that read and write files: import, export, validate.

Every path goes through the toolkit's PathPolicy: writes stay in the output folder, reads
in the read roots, and a file's content must match its format.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, ClassVar, Literal

import anyio
from pydantic import Field

from agentsdk import ToolContext, ToolError, tool

from . import protocol as p
from .paths import PathRefused, check_format
from .toolkit_base import BlenderToolkitBase, OptVec3, build_args
from .validation import AssetReport, AssetSpec, validate_asset

Format = Literal["glb", "gltf", "fbx", "obj", "stl", "ply"]
FORMATS = ("glb", "gltf", "fbx", "obj", "stl", "ply")


def _format(path: Path, given: str | None) -> str:
    fmt = (given or path.suffix.lstrip(".")).lower()
    if fmt not in FORMATS:
        raise ToolError(f"unsupported format {fmt!r} for {path.name}; use one of {list(FORMATS)}")
    return fmt


class AssetTools(BlenderToolkitBase):
    """import_asset and validate_asset (group ``assets``), export_asset (``core``)."""

    TOOL_GROUPS: ClassVar[dict[str, str]] = {"import_asset": "assets", "validate_asset": "assets"}

    def _readable_asset(
        self, path: str, given: str | None, ctx: ToolContext | None
    ) -> tuple[Path, str]:
        policy = self.paths(ctx)
        source = self.path_or_error(policy.readable, path)
        fmt = _format(source, given)
        try:
            fmt = check_format(source, fmt)
            policy.check_references(source)
        except PathRefused as exc:
            raise ToolError(str(exc)) from None
        return source, fmt

    @tool(side_effects=True)
    async def import_asset(
        self, path: str, format: Format | None = None, ctx: ToolContext | None = None
    ) -> object:
        """Import a 3D file into the scene and list the objects it created.

        Args:
            path: File to import (inside the allowed folders; relative: the output folder,
                then the read folders).
            format: File format (default: from the extension).
        """
        source, fmt = self._readable_asset(path, format, ctx)
        args = build_args(p.ImportAssetArgs, path=str(source), format=fmt)
        return self.reply(await self.call_engine("import_asset", args, p.ImportResult))

    @tool(side_effects=True)
    async def export_asset(
        self,
        path: str,
        format: Format | None = None,
        names: list[str] | None = None,
        ctx: ToolContext | None = None,
    ) -> object:
        """Export the scene (or only the named objects) to a file.

        Args:
            path: Output file inside the output folder (a relative path goes there).
            format: File format (default: from the extension).
            names: Objects to export (default: all).
        """
        policy = self.paths(ctx)
        target = self.path_or_error(policy.writable, path)
        fmt = _format(target, format)
        try:
            policy.check_sidecars(target, fmt)
        except PathRefused as exc:
            raise ToolError(str(exc)) from None
        args = build_args(p.ExportAssetArgs, path=str(target), format=fmt, names=names or [])
        return self.reply(await self.call_engine("export_asset", args, p.ExportResult))

    @tool
    async def validate_asset(
        self,
        path: str,
        max_triangles: Annotated[int, Field(gt=0)] | None = None,
        expected_dimensions_m: OptVec3 = None,
        dimension_tolerance: Annotated[float, Field(ge=0, le=1)] = 0.1,
        require_watertight: bool = False,
        require_uvs: bool = False,
        origin: Literal["any", "bottom_center", "center"] = "any",
        ctx: ToolContext | None = None,
    ) -> object:
        """Check a 3D file (glb, gltf, obj, stl, ply; fbx via Blender) against a spec and
        report what is wrong: triangles, watertight/manifold, degenerate faces, normals, UVs,
        materials/textures, size in metres, origin, skins, animations, morph targets.

        Args:
            path: The file (a relative path is looked up in the output folder first).
            max_triangles: Triangle budget.
            expected_dimensions_m: Expected bounding-box size X, Y, Z in metres (file axes).
            dimension_tolerance: Allowed relative deviation of each dimension.
            require_watertight: Every mesh must be closed.
            require_uvs: Every mesh must have texture coordinates.
            origin: Where the origin should sit relative to the bounds.
        """
        spec = build_args(
            AssetSpec, max_triangles=max_triangles, expected_dimensions_m=expected_dimensions_m,
            dimension_tolerance=dimension_tolerance, require_watertight=require_watertight,
            require_uvs=require_uvs, origin=origin,
        )  # fmt: skip
        target, fmt = self._readable_asset(path, None, ctx)
        if fmt != "fbx":
            report = await anyio.to_thread.run_sync(validate_asset, target, spec)
            return self.reply(report)
        # trimesh cannot read FBX: Blender converts it to GLB (the scene is left as it was).
        with tempfile.TemporaryDirectory(prefix="agentsdk-validate-") as folder:
            glb = Path(folder) / f"{target.stem}.glb"
            args = p.ConvertAssetArgs(path=str(target), output=str(glb))
            await self.call_engine("convert_asset", args, p.ConvertResult)
            report = await anyio.to_thread.run_sync(validate_asset, glb, spec)
        fbx_report: AssetReport = report.model_copy(
            update={"path": str(target), "format": "fbx (read through Blender as glb)"}
        )
        return self.reply(fbx_report)
