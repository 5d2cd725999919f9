"""BlenderToolkit: typed scene tools over a Blender worker or a live-Blender bridge."""

from __future__ import annotations

import base64
import io
import tempfile
from pathlib import Path
from typing import Annotated, Literal

import anyio
from PIL import Image as PILImage
from PIL import ImageStat
from pydantic import BaseModel, Field

from agentsdk import Image, Tool, ToolContext, ToolError, Toolkit, tool

from . import protocol as p
from .validation import AssetReport, AssetSpec, validate_asset
from .worker import BlenderConnection, BlenderWorker, CommandFailed, ResultT, SceneLostError

Vector3 = tuple[float, float, float]
Colour = Annotated[tuple[float, float, float, float], Field(description="RGBA, each 0..1 (linear)")]


class RenderSummary(BaseModel):
    """What the model reads next to the rendered images."""

    engine: str
    resolution: tuple[int, int]
    samples: int
    views: list[str]
    seconds_per_view: list[float]
    warnings: list[str]


def _absolute(path: str) -> str:
    return str(Path(path).expanduser().resolve())


def _blank_warning(view: str, png: bytes) -> str | None:
    image = PILImage.open(io.BytesIO(png)).convert("RGB")
    spread = max(high - low for low, high in ImageStat.Stat(image).extrema)
    if spread < 4:
        return f"view {view!r} is a single flat colour: nothing visible (check camera and lights)"
    return None


class BlenderToolkit(Toolkit):
    """Blender scene tools: build, light, render, import/export and validate 3D assets.

    Drives a warm ``BlenderWorker`` (default) or a ``BlenderBridge`` to a running
    Blender. ``execute_python`` is only offered when ``allow_python=True``.
    """

    name = "blender"

    def __init__(
        self,
        connection: BlenderConnection | None = None,
        *,
        allow_python: bool = False,
        python_cpu_seconds: float = 10.0,
        python_memory_bytes: int = 1 << 30,
        output_dir: str | Path | None = None,
        render_timeout: float = 600.0,
        prefix: str | None = None,
    ) -> None:
        super().__init__(prefix=prefix)
        self.connection: BlenderConnection = connection or BlenderWorker()
        self.allow_python = allow_python
        self.python_cpu_seconds = python_cpu_seconds
        self.python_memory_bytes = python_memory_bytes
        self.output_dir = Path(output_dir) if output_dir is not None else None
        # Renders get their own, longer limit: a cold eevee shader compile takes ~20 s on CPU.
        self.render_timeout = render_timeout

    async def start(self) -> None:
        """Start the worker (or connect the bridge)."""
        await self.connection.start()

    async def close(self) -> None:
        """Stop the worker (or disconnect the bridge). Idempotent."""
        await self.connection.close()

    def tools(self) -> list[Tool]:
        """The bound tools; ``execute_python`` only when it was enabled."""
        found: list[Tool] = super().tools()
        if not self.allow_python:
            found = [t for t in found if not t.name.endswith("execute_python")]
        return found

    async def _call(
        self,
        command: str,
        args: BaseModel | None,
        result: type[ResultT],
        timeout: float | None = None,
    ) -> ResultT:
        try:
            return await self.connection.call(command, args, result, timeout=timeout)
        except (CommandFailed, SceneLostError) as exc:
            raise ToolError(str(exc)) from None

    def _output_path(self, path: str, ctx: ToolContext | None) -> str:
        target = Path(path).expanduser()
        if not target.is_absolute():
            base = self.output_dir or (ctx.artifacts.dir if ctx is not None else Path.cwd())
            target = base / target
        return str(target.resolve())

    def _input_path(self, path: str, ctx: ToolContext | None) -> Path:
        """An existing file: as given, else inside the output folder (where exports go)."""
        given = Path(path).expanduser()
        candidates = [given]
        if not given.is_absolute():
            candidates.append(Path(self._output_path(path, ctx)))
        for candidate in candidates:
            if candidate.is_file():
                return candidate.resolve()
        raise ToolError(f"no such file: {path}")

    @tool
    async def scene_info(
        self,
        offset: Annotated[int, Field(ge=0)] = 0,
        limit: Annotated[int, Field(ge=1, le=500)] = 50,
    ) -> p.SceneInfo:
        """List the scene's objects (sorted by name, one page at a time) with transforms,
        dimensions in metres, materials, modifiers and polygon/triangle counts.

        Args:
            offset: Index of the first object to list.
            limit: How many objects to list.
        """
        return await self._call(
            "scene_info", p.SceneInfoArgs(offset=offset, limit=limit), p.SceneInfo
        )

    @tool
    async def create_primitive(
        self,
        kind: Literal[
            "cube", "plane", "uv_sphere", "ico_sphere", "cylinder", "cone", "torus", "monkey"
        ],
        name: str | None = None,
        size: Annotated[float, Field(gt=0)] = 2.0,
        location: Vector3 | None = None,
        rotation_degrees: Vector3 | None = None,
        scale: Vector3 | None = None,
    ) -> p.ObjectInfo:
        """Add a mesh primitive to the scene.

        Args:
            kind: Which primitive.
            name: Object name (Blender appends .001 if taken; the real name is returned).
            size: Overall size in metres (cube edge, sphere diameter...).
            location: X, Y, Z in metres (Z is up).
            rotation_degrees: Euler XYZ rotation in degrees.
            scale: Scale factors per axis.
        """
        args = p.CreatePrimitiveArgs(
            kind=kind, name=name, size=size, location=location,
            rotation_degrees=rotation_degrees, scale=scale,
        )  # fmt: skip
        return await self._call("create_primitive", args, p.ObjectInfo)

    @tool
    async def set_transform(
        self,
        name: str,
        location: Vector3 | None = None,
        rotation_degrees: Vector3 | None = None,
        scale: Vector3 | None = None,
        look_at: Vector3 | None = None,
    ) -> p.ObjectInfo:
        """Move, rotate or scale an object; omitted values stay as they are.

        Args:
            name: The object.
            location: New X, Y, Z in metres.
            rotation_degrees: New Euler XYZ rotation in degrees.
            scale: New scale factors.
            look_at: Turn the object so its -Z axis points at this point (cameras, lights).
        """
        args = p.SetTransformArgs(
            name=name, location=location, rotation_degrees=rotation_degrees, scale=scale,
            look_at=look_at,
        )  # fmt: skip
        return await self._call("set_transform", args, p.ObjectInfo)

    @tool
    async def set_material(
        self,
        name: str,
        base_color: Colour = (0.8, 0.8, 0.8, 1.0),
        metallic: Annotated[float, Field(ge=0, le=1)] = 0.0,
        roughness: Annotated[float, Field(ge=0, le=1)] = 0.5,
        emission_color: Vector3 = (0.0, 0.0, 0.0),
        emission_strength: Annotated[float, Field(ge=0)] = 0.0,
        material_name: str | None = None,
    ) -> p.MaterialResult:
        """Give a mesh a PBR (Principled BSDF) material, replacing its materials.

        Args:
            name: The mesh object.
            base_color: Base colour RGBA.
            metallic: 0 dielectric .. 1 metal.
            roughness: 0 mirror .. 1 matte.
            emission_color: Emitted light colour RGB.
            emission_strength: Emission strength (0 = none).
            material_name: Material to create or reuse (default "<object>_material").
        """
        args = p.SetMaterialArgs(
            name=name, base_color=base_color, metallic=metallic, roughness=roughness,
            emission_color=emission_color, emission_strength=emission_strength,
            material_name=material_name,
        )  # fmt: skip
        return await self._call("set_material", args, p.MaterialResult)

    @tool
    async def add_modifier(
        self,
        name: str,
        kind: Literal["subdivision", "bevel", "array", "mirror", "boolean"],
        apply: bool = False,
        levels: Annotated[int, Field(ge=0, le=6)] = 2,
        width: Annotated[float, Field(gt=0)] = 0.05,
        segments: Annotated[int, Field(ge=1, le=32)] = 3,
        count: Annotated[int, Field(ge=1, le=1000)] = 3,
        relative_offset: Vector3 = (1.0, 0.0, 0.0),
        axes: list[Literal["x", "y", "z"]] | None = None,
        operation: Literal["difference", "union", "intersect"] = "difference",
        target: str | None = None,
    ) -> p.ObjectInfo:
        """Add a modifier to a mesh (optionally applying it to the mesh data).

        Args:
            name: The mesh object.
            kind: subdivision (levels), bevel (width, segments), array (count, relative_offset),
                mirror (axes) or boolean (operation, target; the target is hidden).
            apply: Bake the modifier into the mesh now.
            levels: Subdivision levels.
            width: Bevel width in metres.
            segments: Bevel segments.
            count: Array copies.
            relative_offset: Array offset relative to the object's size.
            axes: Mirror axes (default ["x"]).
            operation: Boolean operation.
            target: Boolean cutter object.
        """
        args = p.AddModifierArgs(
            name=name, kind=kind, apply=apply, levels=levels, width=width, segments=segments,
            count=count, relative_offset=relative_offset, axes=axes or ["x"],
            operation=operation, target=target,
        )  # fmt: skip
        return await self._call("add_modifier", args, p.ObjectInfo)

    @tool
    async def delete(self, names: list[str]) -> p.DeleteResult:
        """Delete objects; if any name is unknown nothing is deleted.

        Args:
            names: Object names.
        """
        return await self._call("delete", p.DeleteArgs(names=names), p.DeleteResult)

    @tool
    async def place_camera(
        self,
        location: Vector3,
        look_at: Vector3 = (0.0, 0.0, 0.0),
        lens_mm: Annotated[float, Field(gt=1)] = 50.0,
        name: str = "Camera",
        make_active: bool = True,
    ) -> p.ObjectInfo:
        """Create or move a camera and aim it at a point; it becomes the render camera.

        Args:
            location: Camera position in metres.
            look_at: Point the camera looks at.
            lens_mm: Focal length (50 normal, 24 wide, 85 tele).
            name: Camera object name.
            make_active: Make it the scene camera used by render(views=["camera"]).
        """
        args = p.PlaceCameraArgs(
            location=location, look_at=look_at, lens_mm=lens_mm, name=name, make_active=make_active
        )
        return await self._call("place_camera", args, p.ObjectInfo)

    @tool
    async def place_light(
        self,
        location: Vector3,
        look_at: Vector3 = (0.0, 0.0, 0.0),
        kind: Literal["point", "sun", "spot", "area"] = "sun",
        energy: Annotated[float, Field(ge=0)] | None = None,
        color: Vector3 = (1.0, 1.0, 1.0),
        name: str = "Light",
    ) -> p.ObjectInfo:
        """Create or move a light and aim it at a point.

        Args:
            location: Light position in metres.
            look_at: Point the light faces.
            kind: Light type.
            energy: Strength (sun: W/m², default 3; others: W, default 1000).
            color: Light colour RGB.
            name: Light object name.
        """
        args = p.PlaceLightArgs(
            location=location, look_at=look_at, kind=kind, energy=energy, color=color, name=name
        )
        return await self._call("place_light", args, p.ObjectInfo)

    @tool
    async def import_asset(
        self, path: str, format: Literal["glb", "gltf", "fbx", "obj", "stl", "ply"] | None = None
    ) -> p.ImportResult:
        """Import a 3D file into the scene and list the objects it created.

        Args:
            path: File to import.
            format: File format (default: from the extension).
        """
        args = p.ImportAssetArgs(path=_absolute(path), format=format)
        return await self._call("import_asset", args, p.ImportResult)

    @tool
    async def export_asset(
        self,
        path: str,
        format: Literal["glb", "gltf", "fbx", "obj", "stl", "ply"] | None = None,
        names: list[str] | None = None,
        ctx: ToolContext | None = None,
    ) -> p.ExportResult:
        """Export the scene (or only the named objects) to a file.

        Args:
            path: Output file; a relative path goes into the run's output folder.
            format: File format (default: from the extension).
            names: Objects to export (default: all).
        """
        target = self._output_path(path, ctx)
        args = p.ExportAssetArgs(path=target, format=format, names=names or [])
        return await self._call("export_asset", args, p.ExportResult)

    @tool
    async def render(
        self,
        engine: Literal["workbench", "cycles", "eevee"] = "workbench",
        resolution: tuple[int, int] = (320, 240),
        samples: Annotated[int, Field(ge=1, le=4096)] = 16,
        views: list[p.View] | None = None,
    ) -> list[str | Image]:
        """Render the scene and look at the images.

        Args:
            engine: workbench (fast flat shading), cycles (CPU path tracing) or eevee (slow here).
            resolution: Width and height in pixels.
            samples: Samples per pixel (cycles, eevee).
            views: "camera" (the scene camera, or an automatic framing when there is none)
                and/or automatic framings: front, back, left, right, top, perspective.
        """
        args = p.RenderArgs(
            engine=engine, resolution=resolution, samples=samples, views=views or ["camera"]
        )
        result = await self._call("render", args, p.RenderResult, timeout=self.render_timeout)
        pngs = [base64.b64decode(view.png_base64) for view in result.images]
        warnings = [
            w
            for v, png in zip(result.images, pngs, strict=True)
            if (w := _blank_warning(v.view, png))
        ]
        summary = RenderSummary(
            engine=result.engine,
            resolution=(result.width, result.height),
            samples=samples,
            views=[v.view for v in result.images],
            seconds_per_view=[v.seconds for v in result.images],
            warnings=warnings,
        )
        return [summary.model_dump_json(), *(Image(png) for png in pngs)]

    @tool
    async def execute_python(self, code: str) -> p.ScriptOutput:
        """Run Python with `bpy` in the Blender process and return stdout, stderr and any
        exception. On an exception the scene is restored. CPU time and memory are limited.

        Args:
            code: Python source; `bpy` is already imported.
        """
        args = p.ExecutePythonArgs(
            code=code, cpu_seconds=self.python_cpu_seconds, memory_bytes=self.python_memory_bytes
        )
        try:
            return await self.connection.call("execute_python", args, p.ScriptOutput)
        except CommandFailed as exc:
            details = p.ScriptOutput.model_validate(
                exc.failure.details or {"stdout": "", "stderr": ""}
            )
            raise ToolError(
                f"{details.exception or exc.failure.message} (the scene was restored)\n"
                f"stdout:\n{details.stdout}\nstderr:\n{details.stderr}"
            ) from None
        except SceneLostError as exc:
            raise ToolError(str(exc)) from None

    @tool
    async def validate_asset(
        self,
        path: str,
        max_triangles: Annotated[int, Field(gt=0)] | None = None,
        expected_dimensions_m: Vector3 | None = None,
        dimension_tolerance: Annotated[float, Field(ge=0, le=1)] = 0.1,
        require_watertight: bool = False,
        require_uvs: bool = False,
        origin: Literal["any", "bottom_center", "center"] = "any",
        ctx: ToolContext | None = None,
    ) -> AssetReport:
        """Check a 3D file (glb, gltf, obj, stl, ply; fbx via Blender) against a spec and report what is wrong:
        triangles, watertight/manifold, degenerate faces, normals, UVs, materials/textures,
        size in metres, origin, skins, animations, morph targets.

        Args:
            path: The file (a relative path is looked up in the run's output folder).
            max_triangles: Triangle budget.
            expected_dimensions_m: Expected bounding-box size X, Y, Z in metres (file axes).
            dimension_tolerance: Allowed relative deviation of each dimension.
            require_watertight: Every mesh must be closed.
            require_uvs: Every mesh must have texture coordinates.
            origin: Where the origin should sit relative to the bounds.
        """
        spec = AssetSpec(
            max_triangles=max_triangles, expected_dimensions_m=expected_dimensions_m,
            dimension_tolerance=dimension_tolerance, require_watertight=require_watertight,
            require_uvs=require_uvs, origin=origin,
        )  # fmt: skip
        target = self._input_path(path, ctx)
        if target.suffix.lower() != ".fbx":
            return await anyio.to_thread.run_sync(validate_asset, target, spec)
        # trimesh cannot read FBX: Blender converts it to GLB (the scene is left as it was).
        with tempfile.TemporaryDirectory(prefix="agentsdk-validate-") as folder:
            glb = Path(folder) / f"{target.stem}.glb"
            args = p.ConvertAssetArgs(path=str(target), output=str(glb))
            await self._call("convert_asset", args, p.ConvertResult)
            report = await anyio.to_thread.run_sync(validate_asset, glb, spec)
        return report.model_copy(
            update={"path": str(target), "format": "fbx (read through Blender as glb)"}
        )
