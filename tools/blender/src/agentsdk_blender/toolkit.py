"""BlenderToolkit: typed scene tools over a Blender worker or a live-Blender bridge."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from agentsdk import ToolError, Unchanged, tool

from . import protocol as p
from .colours import parse_colour
from .protocol import NonNegative, Positive, Size, Unit, Vector3
from .toolkit_base import (
    BlenderToolkitBase,
    Colour3,
    OptColour4,
    OptNames,
    OptNumber,
    OptTarget,
    OptText,
    OptVec3,
    Vec3,
    build_args,
)
from .toolkit_files import AssetTools
from .toolkit_measure import MeasureTools
from .toolkit_passes import PassTools
from .worker import CommandFailed, WorkerRestartedError


def _given(text: str | None) -> str | None:
    """An optional text argument; small models often send "" for "not given"."""
    return text.strip() if text and text.strip() else None


def _colour(text: str | None) -> tuple[float, float, float, float] | None:
    """A colour name or hex code as linear RGBA (None when not given)."""
    given = _given(text)
    return parse_colour(given) if given else None


def _target(value: Vector3 | str | None) -> Vector3 | str | None:
    """A look_at point or object name (None when not given, "" included)."""
    return _given(value) if isinstance(value, str) else value


_GREY = (0.8, 0.8, 0.8, 1.0)  # set_material's base colour when none is given
_ORIGIN = (0.0, 0.0, 0.0)


class BlenderToolkit(MeasureTools, PassTools, AssetTools, BlenderToolkitBase):
    """Blender scene tools: build, light, render, import/export and validate 3D assets.

    Drives a warm ``BlenderWorker`` (default) or a ``BlenderBridge`` to a running Blender.
    Tools come in groups: ``core`` (on by default: build, light, render, export),
    ``measure``, ``assets`` (import, validate), ``passes`` and ``python`` (free-form code,
    also switched on by ``allow_python=True``). Writes are confined to ``output_dir`` (else
    the run's artifacts folder), reads to ``read_roots`` (default: the current folder) and
    the output folder. Tools that change the scene or write files are marked
    ``side_effects=True`` (a resumed run never runs such a call twice); reads are not.
    """

    TOOL_GROUPS: ClassVar[dict[str, str]] = {"execute_python": "python"}

    async def reset(self) -> None:
        """An empty, factory-fresh scene in the same warm worker (between eval tasks)."""
        try:
            await self.connection.call("reset", None, p.ResetResult)
        except WorkerRestartedError:  # a lost scene is fine here: empty is what was asked
            await self.connection.call("reset", None, p.ResetResult)
        self.connection.take_notice()
        self._history.clear()

    @tool
    async def scene_info(
        self,
        offset: Annotated[int, Field(ge=0)] = 0,
        limit: Annotated[int, Field(ge=1, le=500)] = 50,
    ) -> object:
        """List the scene's objects (sorted by name, one page at a time) with transforms,
        dimensions in metres, materials, modifiers and polygon/triangle counts.

        Args:
            offset: Index of the first object to list.
            limit: How many objects to list.
        """
        args = p.SceneInfoArgs(offset=offset, limit=limit)
        return self.reply(await self.call_engine("scene_info", args, p.SceneInfo))

    @tool(side_effects=True, creates="name")
    async def create_primitive(
        self,
        kind: Literal[
            "cube", "plane", "uv_sphere", "ico_sphere", "cylinder", "cone", "torus", "monkey"
        ],
        name: OptText = None,
        size: Size = 2.0,
        location: OptVec3 = None,
        rotation_degrees: OptVec3 = None,
        scale: OptVec3 = None,
        color: OptText = None,
        rest_on: OptText = None,
    ) -> object:
        """Add a mesh primitive to the scene.

        Args:
            kind: Which primitive.
            name: Object name; a name already in use is refused (change that object instead).
            size: Metres: a number (cube edge, sphere diameter) or a list: cube [x, y, z],
                sphere [r, r, r], cylinder/cone [radius, height], plane [x, y].
            location: Centre X, Y, Z in metres (Z is up).
            rotation_degrees: Euler XYZ rotation in degrees.
            scale: Scale factors per axis.
            color: Name (red) or hex (#ff8800).
            rest_on: "ground" (lowest point at z=0) or an object to stand on (centred on it
                unless location is given).
        """
        args = build_args(
            p.CreatePrimitiveArgs, kind=kind, name=name, size=size, location=location,
            rotation_degrees=rotation_degrees, scale=scale,
            base_color=_colour(color),
            rest_on=_given(rest_on),
        )  # fmt: skip
        return self.reply(await self.call_engine("create_primitive", args, p.ObjectInfo))

    @tool(side_effects=True)
    async def set_transform(
        self,
        name: str,
        location: OptVec3 = None,
        rotation_degrees: OptVec3 = None,
        scale: OptVec3 = None,
        look_at: OptTarget = None,
        rest_on: OptText = None,
    ) -> object:
        """Move, rotate or scale an object; omitted values stay as they are.

        Args:
            name: The object.
            location: New X, Y, Z in metres.
            rotation_degrees: New Euler XYZ rotation in degrees.
            scale: New scale factors.
            look_at: Turn its -Z axis (cameras, lights) to a point or an object's centre.
            rest_on: Then drop it onto "ground" (z=0) or an object's top (centred on it unless
                location is given).
        """
        args = build_args(
            p.SetTransformArgs, name=name, location=location, rotation_degrees=rotation_degrees,
            scale=scale, look_at=_target(look_at), rest_on=_given(rest_on),
        )  # fmt: skip
        info = await self.call_engine("set_transform", args, p.ObjectInfo)
        return Unchanged(self.reply(info)) if info.unchanged else self.reply(info)

    @tool(side_effects=True)
    async def set_material(
        self,
        name: str,
        color: OptText = None,
        base_color: OptColour4 = None,
        metallic: Unit = 0.0,
        roughness: Unit = 0.5,
        emission_color: Colour3 = (0.0, 0.0, 0.0),
        emission_strength: NonNegative = 0.0,
        material_name: OptText = None,
    ) -> object:
        """Give a mesh a PBR (Principled BSDF) material, replacing its materials.

        Args:
            name: The mesh object.
            color: The base colour by name (red, gold, light grey) or hex (#ff8800).
            base_color: Instead of color: RGBA, each 0..1 (linear); default light grey.
            metallic: 0 dielectric .. 1 metal.
            roughness: 0 mirror .. 1 matte.
            emission_color: Emitted light colour RGB, each 0..1 (linear).
            emission_strength: Emission strength (0 = none).
            material_name: Material to create or reuse (default "<object>_material").
        """
        named = _colour(color)
        if named is not None and base_color is not None:
            raise ToolError(
                "give either base_color (linear RGBA numbers) or color (a name or hex such as "
                "#ff8800), not both"
            )
        args = build_args(
            p.SetMaterialArgs, name=name, base_color=named or base_color or _GREY, metallic=metallic,
            roughness=roughness, emission_color=emission_color,
            emission_strength=emission_strength, material_name=material_name,
        )  # fmt: skip
        given = await self.call_engine("set_material", args, p.MaterialResult)
        return Unchanged(self.reply(given)) if given.unchanged else self.reply(given)

    @tool(side_effects=True)
    async def add_modifier(
        self,
        name: str,
        kind: Literal["subdivision", "bevel", "array", "mirror", "boolean"],
        apply: bool = False,
        levels: Annotated[int, Field(ge=0, le=6)] = 2,
        width: Positive = 0.05,
        segments: Annotated[int, Field(ge=1, le=32)] = 3,
        count: Annotated[int, Field(ge=1, le=1000)] = 3,
        relative_offset: Vec3 = (1.0, 0.0, 0.0),
        axes: list[Literal["x", "y", "z"]] | None = None,
        operation: Literal["difference", "union", "intersect"] = "difference",
        target: OptText = None,
    ) -> object:
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
        args = build_args(
            p.AddModifierArgs, name=name, kind=kind, apply=apply, levels=levels, width=width,
            segments=segments, count=count, relative_offset=relative_offset,
            axes=axes or ["x"], operation=operation, target=target,
        )  # fmt: skip
        return self.reply(await self.call_engine("add_modifier", args, p.ObjectInfo))

    @tool(side_effects=True)
    async def delete(self, names: OptNames = None, keep: OptNames = None) -> object:
        """Delete objects by name, or every object except keep; an unknown name deletes nothing.

        Args:
            names: Objects to delete.
            keep: Instead of names: delete all others (their children and the scene camera stay;
                a name in both lists is kept).
        """
        if names and keep and set(names) <= set(keep):
            names = None  # an object in both lists is kept: small models fill every field
        # names and keep both: the engine refuses, with the call that does what they ask
        if not names and not keep:
            raise ToolError(
                "give names (the objects to delete) or keep (delete every other object)"
            )
        args = build_args(p.DeleteArgs, names=names, keep=keep)
        return self.reply(await self.call_engine("delete", args, p.DeleteResult))

    @tool(side_effects=True, creates="name")
    async def place_camera(
        self,
        location: Vec3,
        look_at: OptTarget = None,
        lens_mm: Annotated[float, Field(gt=1, le=5000, allow_inf_nan=False)] = 50.0,
        name: str = "Camera",
        make_active: bool = True,
    ) -> object:
        """Create or move a camera and aim it at a point; it becomes the render camera.

        Args:
            location: Camera position in metres.
            look_at: An object's name (aims at its centre) or a point [x, y, z]; default
                the origin.
            lens_mm: Focal length (50 normal, 24 wide, 85 tele).
            name: Camera object name.
            make_active: Make it the scene camera used by render(views=["camera"]).
        """
        args = build_args(
            p.PlaceCameraArgs, location=location, look_at=_target(look_at) or _ORIGIN,
            lens_mm=lens_mm, name=name, make_active=make_active,
        )  # fmt: skip
        return self.reply(await self.call_engine("place_camera", args, p.ObjectInfo))

    @tool(side_effects=True, creates="name")
    async def place_light(
        self,
        location: OptVec3 = None,
        above: OptText = None,
        gap: OptNumber = None,
        look_at: OptTarget = None,
        kind: Literal["point", "sun", "spot", "area"] = "sun",
        energy: OptNumber = None,
        color: Colour3 = (1.0, 1.0, 1.0),
        name: str = "Light",
    ) -> object:
        """Create or move a light and aim it at a point.

        Args:
            location: Light position in metres (or give above).
            above: An object's name: the light goes over its centre, gap above its top.
            gap: Metres above that object's top (default 1).
            look_at: An object's name (aims at its centre) or a point [x, y, z]; default
                the origin (with above: that object).
            kind: Light type.
            energy: Strength (sun: W/m², default 3; others: W, default 1000).
            color: Light colour RGB, each 0..1 (linear).
            name: Light object name.
        """
        # "A light above the can": small models cannot add a can's height to its position,
        # and put the light at its top face or inside it; the engine measures the object's
        # evaluated world bounds instead. With both location and above, above wins (small
        # models fill every field; the result says the location was replaced). A gap
        # without above is ignored: there is nothing for it to be measured from.
        where = _given(above)
        target = _target(look_at)
        args = build_args(
            p.PlaceLightArgs, location=location, above=where,
            gap=p.LIGHT_GAP if gap is None else gap,
            look_at=target if target is not None or where else _ORIGIN,
            kind=kind, energy=energy, color=color, name=name,
        )  # fmt: skip
        return self.reply(await self.call_engine("place_light", args, p.ObjectInfo))

    @tool(side_effects=True)
    async def execute_python(self, code: str) -> object:
        """Run Python with `bpy` in the Blender process and return stdout, stderr and any
        exception. On an exception the scene is restored. CPU time and memory are limited.

        Args:
            code: Python source; `bpy` is already imported.
        """
        args = p.ExecutePythonArgs(
            code=code, cpu_seconds=self.python_cpu_seconds, memory_bytes=self.python_memory_bytes
        )
        try:
            output = await self.connection.call("execute_python", args, p.ScriptOutput)
        except CommandFailed as exc:
            details = p.ScriptOutput.model_validate(
                exc.failure.details or {"stdout": "", "stderr": ""}
            )
            raise ToolError(
                f"{details.exception or exc.failure.message} (the scene was restored)\n"
                f"stdout:\n{details.stdout}\nstderr:\n{details.stderr}"
            ) from None
        except WorkerRestartedError as exc:
            raise ToolError(str(exc)) from None
        return self.reply(output)
