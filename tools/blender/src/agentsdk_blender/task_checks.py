"""Checks and setups of the ``blender`` task suite: every check asks Blender (the scene,
bounds of the evaluated geometry, a fresh visibility report, exported files), never the
agent's words."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import cast

import numpy as np
from agentsdk.tasks import Check, CheckValue, ToolkitSpec, World
from agentsdk.vision import ObjectVisibility
from pydantic import BaseModel

from agentsdk import ToolError

from . import protocol as p
from .toolkit import BlenderToolkit
from .toolkit_measure import ObjectMeasure
from .validation import AssetSpec, validate_asset

BLENDER = ToolkitSpec("blender")  # the default tool groups: core only
SIZE = (320, 240)  # the frame the checks measure (the render tool's default)
TOLERANCE = 0.01  # metres, for positions and contact
CheckFn = Callable[[World], Awaitable[CheckValue]]


def _kit(world: World) -> BlenderToolkit:
    return cast(BlenderToolkit, world.toolkit("blender"))


async def _objects(world: World) -> dict[str, p.ObjectInfo]:
    info = await _kit(world).connection.call("scene_info", p.SceneInfoArgs(limit=500), p.SceneInfo)
    return {o.name: o for o in info.objects}


async def _object(world: World, name: str) -> p.ObjectInfo | str:
    found = (await _objects(world)).get(name)
    return found if found is not None else f"there is no object named {name!r}"


async def _bounds(world: World, name: str) -> ObjectMeasure | str:
    try:
        [found] = await _kit(world).measure_objects([name])
    except ToolError as exc:
        return str(exc)
    return found


async def _seen(world: World, name: str) -> ObjectVisibility | str:
    info = await _kit(world).connection.call("scene_info", p.SceneInfoArgs(limit=1), p.SceneInfo)
    if info.active_camera is None:
        return "the scene has no camera"
    [look] = await _kit(world).look(resolution=SIZE)
    item = look.report.object(name) if look.report else None
    return item if item is not None else f"{name} is not in the camera's report"


def _close(got: tuple[float, ...] | list[float], want: list[float], tolerance: float) -> bool:
    return all(abs(g - w) <= tolerance for g, w in zip(got, want, strict=True))


def _forward(
    rotation_degrees: tuple[float, float, float],
) -> np.ndarray[tuple[int], np.dtype[np.float64]]:
    """Where an object's -Z axis points (Blender's XYZ Euler: X first, then Y, then Z)."""
    x, y, z = (math.radians(a) for a in rotation_degrees)
    rx = np.array([[1, 0, 0], [0, math.cos(x), -math.sin(x)], [0, math.sin(x), math.cos(x)]])
    ry = np.array([[math.cos(y), 0, math.sin(y)], [0, 1, 0], [-math.sin(y), 0, math.cos(y)]])
    rz = np.array([[math.cos(z), -math.sin(z), 0], [math.sin(z), math.cos(z), 0], [0, 0, 1]])
    return np.asarray(rz @ ry @ rx @ np.array([0.0, 0.0, -1.0]))


# -- reusable checks --------------------------------------------------------------------------


def exists(name: str, kind: str = "MESH", triangles: int | None = None) -> Check:
    """The object exists with this type (and triangle count)."""

    async def fn(world: World) -> CheckValue:
        found = await _object(world, name)
        if isinstance(found, str):
            return False, found
        if found.type != kind:
            return False, f"{name} is a {found.type}, not a {kind}"
        if triangles is not None and found.triangles != triangles:
            return False, f"{name} has {found.triangles} triangles, a plain one has {triangles}"
        return True, f"{name} is a {found.type}"

    shape = f" with {triangles} triangles" if triangles is not None else ""
    return Check(f"{name} exists as a {kind.lower()}{shape}", fn)


def size(name: str, want: list[float], relative: float = 0.01) -> Check:
    """The object's world size is ``want`` (X, Y, Z in metres) within ``relative``."""

    async def fn(world: World) -> CheckValue:
        found = await _bounds(world, name)
        if isinstance(found, str):
            return False, found
        ok = all(abs(g - w) <= relative * w for g, w in zip(found.dimensions, want, strict=True))
        return ok, f"{name} measures {found.dimensions}"

    return Check(f"{name} is {' x '.join(f'{v:g}' for v in want)} m", fn)


def centre(name: str, want: list[float], axes: str = "xyz") -> Check:
    """The centre of the object's bounds is at ``want`` on the given axes."""

    async def fn(world: World) -> CheckValue:
        found = await _bounds(world, name)
        if isinstance(found, str):
            return False, found
        index = ["xyz".index(a) for a in axes]
        ok = _close([found.centre[i] for i in index], [want[i] for i in index], TOLERANCE * 2)
        return ok, f"{name}'s centre is at {found.centre}"

    return Check(f"{name} is centred at {want} ({axes})", fn)


def bottom_at(name: str, z: float) -> Check:
    """The object's lowest point is at height ``z``."""

    async def fn(world: World) -> CheckValue:
        found = await _bounds(world, name)
        if isinstance(found, str):
            return False, found
        return abs(
            found.bounds_min[2] - z
        ) <= TOLERANCE, f"{name}'s lowest point is at z={found.bounds_min[2]}"

    return Check(f"{name}'s lowest point is at z={z:g}", fn)


def rests_on(name: str, support: str) -> Check:
    """The object's bottom touches the support's top, its centre over the support."""

    async def fn(world: World) -> CheckValue:
        item, base = await _bounds(world, name), await _bounds(world, support)
        if isinstance(item, str) or isinstance(base, str):
            return False, item if isinstance(item, str) else str(base)
        gap = item.bounds_min[2] - base.bounds_max[2]
        over = all(base.bounds_min[i] <= item.centre[i] <= base.bounds_max[i] for i in (0, 1))
        return abs(gap) <= TOLERANCE and over, f"{name} is {gap:+.3f} m from {support}'s top"

    return Check(f"{name} rests on {support}", fn)


def unchanged(name: str) -> Check:
    """The object is where the task's setup left it (recorded in ``world.data``)."""

    async def fn(world: World) -> CheckValue:
        found = await _object(world, name)
        if isinstance(found, str):
            return False, found
        before = world.data.get(name)
        if before is None:
            return False, f"the setup did not record {name}"
        same = _close(found.location, list(before["location"]), 1e-4) and _close(
            found.rotation_degrees, list(before["rotation_degrees"]), 1e-3
        )
        return same, f"{name} is at {found.location}"

    return Check(f"{name} was not moved", fn)


def framed(name: str, min_coverage: float = 0.0, max_hidden: float = 0.01) -> Check:
    """In a fresh render from the scene camera: visible, not cut off, big enough, not hidden."""

    async def fn(world: World) -> CheckValue:
        seen = await _seen(world, name)
        if isinstance(seen, str):
            return False, seen
        cut = bool(seen.cut_sides) or (seen.cut_off or 0) > 0.01
        hidden = seen.occluded or 0.0
        ok = seen.visible and not cut and seen.coverage >= min_coverage and hidden <= max_hidden
        return ok, (
            f"{name}: visible={seen.visible}, {seen.coverage:.1%} of the frame, "
            f"cut={'/'.join(seen.cut_sides) or 'no'}, hidden {hidden:.0%}"
        )

    what = f", covering at least {min_coverage:.0%}" if min_coverage else ""
    return Check(f"{name} is fully in the camera's view{what}", fn)


# -- setups -------------------------------------------------------------------------------------


async def _add(world: World, command: str, args: BaseModel) -> None:
    result_type = p.ObjectInfo
    found = await _kit(world).connection.call(command, args, result_type)
    world.data[found.name] = {
        "location": found.location,
        "rotation_degrees": found.rotation_degrees,
    }


def _primitive(kind: str, name: str, **values: object) -> p.CreatePrimitiveArgs:
    return p.CreatePrimitiveArgs.model_validate({"kind": kind, "name": name, **values})


async def setup_clutter(world: World) -> None:
    """Crate at the origin with two junk objects beside it."""
    await _add(world, "create_primitive", _primitive("cube", "Crate", size=1.0))
    await _add(world, "create_primitive", _primitive("uv_sphere", "Junk_1", location=(3, 0, 0)))
    await _add(world, "create_primitive", _primitive("cone", "Junk_2", location=(-3, 0, 0)))


async def setup_sphere(world: World) -> None:
    """A UV sphere named Sphere."""
    await _add(world, "create_primitive", _primitive("uv_sphere", "Sphere", location=(0, 0, 1)))


async def setup_post(world: World) -> None:
    """A 0.5 m cube named Post standing on the ground."""
    await _add(
        world, "create_primitive", _primitive("cube", "Post", size=0.5, location=(0, 0, 0.25))
    )


async def setup_cube(world: World) -> None:
    """A 1 m cube named Crate standing on the ground."""
    await _add(
        world, "create_primitive", _primitive("cube", "Crate", size=1.0, location=(0, 0, 0.5))
    )


async def setup_suzanne(world: World) -> None:
    """Suzanne off to the side of a camera that looks away from her."""
    await _add(world, "create_primitive", _primitive("monkey", "Suzanne", location=(3, 2, 1)))
    camera = p.PlaceCameraArgs(location=(0, -8, 1), look_at=(-4, 0, 1), name="Camera")
    await _add(world, "place_camera", camera)


async def setup_wall(world: World) -> None:
    """A wall between the camera and a ball behind it."""
    await _add(
        world,
        "create_primitive",
        _primitive("cube", "Wall", size=1.0, location=(0, 0, 1.5), scale=(4, 0.2, 3)),
    )
    await _add(
        world, "create_primitive", _primitive("uv_sphere", "Ball", size=0.6, location=(0, 2, 0.5))
    )
    await _add(
        world,
        "place_camera",
        p.PlaceCameraArgs(location=(0, -8, 1.5), look_at=(0, 0, 1), name="Camera"),
    )


async def setup_blank(world: World) -> None:
    """Crate and Ball, and a camera that looks away from both."""
    await _add(
        world, "create_primitive", _primitive("cube", "Crate", size=1.0, location=(0, 0, 0.5))
    )
    await _add(
        world, "create_primitive", _primitive("uv_sphere", "Ball", size=1.0, location=(2, 0, 0.5))
    )
    camera = p.PlaceCameraArgs(location=(0, -6, 2), look_at=(0, -12, 2), name="Camera")
    await _add(world, "place_camera", camera)


# -- task-specific checks ------------------------------------------------------------------------


def red(name: str) -> Check:
    """The object's first material has a red base colour."""

    async def fn(world: World) -> CheckValue:
        found = await _object(world, name)
        if isinstance(found, str) or not found.material_values:
            return False, found if isinstance(found, str) else f"{name} has no material"
        r, g, b = found.material_values[0].base_color[:3]
        return (
            r >= 0.4 and g <= 0.3 * r and b <= 0.3 * r,
            f"{name}'s base colour is {r:.2f}, {g:.2f}, {b:.2f}",
        )

    return Check(f"{name} is red", fn)


def gold(name: str) -> Check:
    """The object's first material is metallic, smooth and golden."""

    async def fn(world: World) -> CheckValue:
        found = await _object(world, name)
        if isinstance(found, str) or not found.material_values:
            return False, found if isinstance(found, str) else f"{name} has no material"
        values = found.material_values[0]
        r, g, b = values.base_color[:3]
        golden = r >= 0.5 and 0.35 * r <= g <= 0.95 * r and b <= 0.6 * g
        ok = golden and values.metallic >= 0.9 and values.roughness <= 0.3
        return (
            ok,
            f"colour {r:.2f}, {g:.2f}, {b:.2f}, metallic {values.metallic}, roughness {values.roughness}",
        )

    return Check(f"{name} is polished gold", fn)


def aimed(name: str, kind: str, location: list[float], target: list[float], active: bool) -> Check:
    """The camera or light stands at ``location`` with its -Z axis at ``target``."""

    async def fn(world: World) -> CheckValue:
        objects = await _objects(world)
        found = objects.get(name)
        if found is None or found.type != kind:
            return False, f"there is no {kind.lower()} named {name!r}"
        want = np.array(target) - np.array(found.location)
        forward = _forward(found.rotation_degrees)
        angle = math.degrees(
            math.acos(max(-1.0, min(1.0, float(forward @ want / np.linalg.norm(want)))))
        )
        ok = _close(found.location, location, TOLERANCE) and angle <= 1.0
        if active:
            info = await _kit(world).connection.call(
                "scene_info", p.SceneInfoArgs(limit=1), p.SceneInfo
            )
            ok = ok and info.active_camera == name
        return ok, f"{name} at {found.location}, {angle:.1f} degrees off its target"

    return Check(f"{name} stands at {location} facing {target}", fn)


def only_left(names: set[str]) -> Check:
    """The meshes in the scene are exactly ``names``."""

    async def fn(world: World) -> CheckValue:
        meshes = {n for n, o in (await _objects(world)).items() if o.type == "MESH"}
        return meshes == names, f"meshes left: {sorted(meshes)}"

    return Check(f"only {', '.join(sorted(names))} is left", fn)


def exported(
    filename: str, max_triangles: int, min_triangles: int, dimensions: list[float]
) -> Check:
    """The file in the run's folder validates against the budget and size."""

    async def fn(world: World) -> CheckValue:
        path = world.workdir / filename
        if not path.is_file():
            return False, f"{filename} was not exported to the run's folder"
        spec = AssetSpec(
            max_triangles=max_triangles,
            expected_dimensions_m=(dimensions[0], dimensions[1], dimensions[2]),
            dimension_tolerance=0.02,
            require_watertight=True,
        )
        report = validate_asset(path, spec)
        ok = report.ok and (report.triangles or 0) >= min_triangles
        problems = "; ".join(i.message for i in report.issues if i.severity == "error") or "valid"
        return ok, f"{filename}: {report.triangles} triangles, {problems}"

    return Check(f"{filename} validates (<= {max_triangles} triangles, watertight)", fn)


def has_modifier(name: str, kind: str, triangles: int) -> Check:
    """The object has a modifier of this kind and this many triangles."""

    async def fn(world: World) -> CheckValue:
        found = await _object(world, name)
        if isinstance(found, str):
            return False, found
        kinds = [m.type for m in found.modifiers]
        return (
            kind in kinds and found.triangles == triangles,
            f"{name}: modifiers {kinds}, {found.triangles} triangles",
        )

    return Check(f"{name} uses a {kind.lower()} modifier", fn)
