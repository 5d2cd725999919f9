"""The ``blender`` task suite (entry point ``agentsdk.suites``): scenes checked in the worker.

Every check asks Blender, never the agent's words: the scene (objects, types, transforms,
materials, modifiers), world-space bounds of the evaluated geometry, the visibility report of
a fresh render from the scene camera (visible, cut off, hidden, coverage) and exported files
read back with the validator. The tasks need only the default ``core`` tools (no
``execute_python``). ``tools/blender/TASKS.md`` lists what each task checks.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import cast

import numpy as np
from agentsdk.tasks import Check, CheckValue, Suite, Task, ToolkitSpec, World, call
from agentsdk.vision import ObjectVisibility
from pydantic import BaseModel

from agentsdk import ToolError

from . import protocol as p
from .toolkit import BlenderToolkit
from .toolkit_measure import ObjectMeasure
from .validation import AssetSpec, validate_asset

__all__ = ["INSTRUCTIONS", "suite"]

INSTRUCTIONS = (
    "You build scenes with the Blender tools; Z is up and units are metres. scene_info lists "
    "the objects; every render comes with a report of what the camera sees (per object: share "
    "of the frame, cut off, hidden). Read the results and fix what is wrong until the scene "
    "matches the request, then answer in one short sentence."
)
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
    async def fn(world: World) -> CheckValue:
        found = await _bounds(world, name)
        if isinstance(found, str):
            return False, found
        ok = all(abs(g - w) <= relative * w for g, w in zip(found.dimensions, want, strict=True))
        return ok, f"{name} measures {found.dimensions}"

    return Check(f"{name} is {' x '.join(f'{v:g}' for v in want)} m", fn)


def centre(name: str, want: list[float], axes: str = "xyz") -> Check:
    async def fn(world: World) -> CheckValue:
        found = await _bounds(world, name)
        if isinstance(found, str):
            return False, found
        index = ["xyz".index(a) for a in axes]
        ok = _close([found.centre[i] for i in index], [want[i] for i in index], TOLERANCE * 2)
        return ok, f"{name}'s centre is at {found.centre}"

    return Check(f"{name} is centred at {want} ({axes})", fn)


def bottom_at(name: str, z: float) -> Check:
    async def fn(world: World) -> CheckValue:
        found = await _bounds(world, name)
        if isinstance(found, str):
            return False, found
        return abs(
            found.bounds_min[2] - z
        ) <= TOLERANCE, f"{name}'s lowest point is at z={found.bounds_min[2]}"

    return Check(f"{name}'s lowest point is at z={z:g}", fn)


def rests_on(name: str, support: str) -> Check:
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


async def _setup_clutter(world: World) -> None:
    await _add(world, "create_primitive", _primitive("cube", "Crate", size=1.0))
    await _add(world, "create_primitive", _primitive("uv_sphere", "Junk_1", location=(3, 0, 0)))
    await _add(world, "create_primitive", _primitive("cone", "Junk_2", location=(-3, 0, 0)))


async def _setup_sphere(world: World) -> None:
    await _add(world, "create_primitive", _primitive("uv_sphere", "Sphere", location=(0, 0, 1)))


async def _setup_post(world: World) -> None:
    await _add(
        world, "create_primitive", _primitive("cube", "Post", size=0.5, location=(0, 0, 0.25))
    )


async def _setup_cube(world: World) -> None:
    await _add(
        world, "create_primitive", _primitive("cube", "Crate", size=1.0, location=(0, 0, 0.5))
    )


async def _setup_suzanne(world: World) -> None:
    await _add(world, "create_primitive", _primitive("monkey", "Suzanne", location=(3, 2, 1)))
    camera = p.PlaceCameraArgs(location=(0, -8, 1), look_at=(-4, 0, 1), name="Camera")
    await _add(world, "place_camera", camera)


async def _setup_wall(world: World) -> None:
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


async def _setup_blank(world: World) -> None:
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
    async def fn(world: World) -> CheckValue:
        meshes = {n for n, o in (await _objects(world)).items() if o.type == "MESH"}
        return meshes == names, f"meshes left: {sorted(meshes)}"

    return Check(f"only {', '.join(sorted(names))} is left", fn)


def exported(
    filename: str, max_triangles: int, min_triangles: int, dimensions: list[float]
) -> Check:
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


# -- the suite ----------------------------------------------------------------------------------


def _task(
    name: str, prompt: str, checks: list[Check], reference: list[object], **extra: object
) -> Task:
    return Task(
        id=f"blender/{name}",
        prompt=prompt,
        toolkits=[BLENDER],
        checks=checks,
        reference=reference,  # type: ignore[arg-type]
        **extra,  # type: ignore[arg-type]
    )


def suite() -> Suite:
    """The Blender suite: one-tool tasks up to multi-step ones that need the render reports."""
    tasks = [
        _task(
            "red-cube",
            "Add a red cube named Crate at the origin.",
            [exists("Crate", triangles=12), centre("Crate", [0, 0, 0]), red("Crate")],
            [
                call("create_primitive", kind="cube", name="Crate"),
                call("set_material", name="Crate", base_color=[0.8, 0.05, 0.05, 1.0]),
                "A red cube named Crate stands at the origin.",
            ],
            tags=("two-tool",),
            description="a named cube at the origin with a red base colour",
        ),
        _task(
            "ball-on-ground",
            "Create a UV sphere named Ball, 3 m in diameter, resting on the ground (its lowest point at z = 0).",
            [exists("Ball"), size("Ball", [3, 3, 3]), bottom_at("Ball", 0.0)],
            [
                call(
                    "create_primitive",
                    kind="uv_sphere",
                    name="Ball",
                    size=3.0,
                    location=[0, 0, 1.5],
                ),
                "Ball is a 3 m sphere resting on the ground.",
            ],
            tags=("one-tool",),
            description="size and placement from a spec",
        ),
        _task(
            "stack",
            "Stack two cubes: Base, 1 m, standing on the ground at the origin; and Top, 0.5 m, "
            "resting on Base, centred on it.",
            [
                size("Base", [1, 1, 1]),
                bottom_at("Base", 0.0),
                centre("Base", [0, 0, 0], "xy"),
                size("Top", [0.5, 0.5, 0.5]),
                rests_on("Top", "Base"),
                centre("Top", [0, 0, 0], "xy"),
            ],
            [
                call("create_primitive", kind="cube", name="Base", size=1.0, location=[0, 0, 0.5]),
                call("create_primitive", kind="cube", name="Top", size=0.5, location=[0, 0, 1.25]),
                "Top rests centred on Base, which stands on the ground.",
            ],
            tags=("multi-step", "measure"),
            description="contact: one object resting on another",
        ),
        _task(
            "clean-up",
            "Delete everything in the scene except the cube named Crate.",
            [only_left({"Crate"}), unchanged("Crate")],
            [call("delete", names=["Junk_1", "Junk_2"]), "Only Crate is left."],
            setup=_setup_clutter,
            tags=("one-tool",),
            description="delete by name, keep the rest",
        ),
        _task(
            "gold-sphere",
            "Give the object Sphere a polished gold material: fully metallic, roughness at most "
            "0.3 and a golden yellow base colour.",
            [gold("Sphere")],
            [
                call(
                    "set_material",
                    name="Sphere",
                    base_color=[1.0, 0.77, 0.34, 1.0],
                    metallic=1.0,
                    roughness=0.2,
                ),
                "Sphere now has a polished gold material.",
            ],
            setup=_setup_sphere,
            tags=("one-tool",),
            description="PBR values of a material",
        ),
        _task(
            "aim-camera",
            "Place a camera named ShotCam at (6, -6, 4) looking at the origin and make it the scene camera.",
            [aimed("ShotCam", "CAMERA", [6, -6, 4], [0, 0, 0], active=True)],
            [
                call("place_camera", name="ShotCam", location=[6, -6, 4], look_at=[0, 0, 0]),
                "ShotCam looks at the origin from (6, -6, 4).",
            ],
            tags=("one-tool",),
            description="camera position, aim and the active camera",
        ),
        _task(
            "key-light",
            "Add a sun light named Key at (4, -4, 8) pointing at the cube Crate.",
            [aimed("Key", "LIGHT", [4, -4, 8], [0, 0, 0.5], active=False), unchanged("Crate")],
            [
                call(
                    "place_light", name="Key", kind="sun", location=[4, -4, 8], look_at=[0, 0, 0.5]
                ),
                "The sun light Key points at Crate.",
            ],
            setup=_setup_cube,
            tags=("one-tool",),
            description="a light aimed at an object",
        ),
        _task(
            "row-of-posts",
            "Turn the cube Post into a row of 4 identical copies along +X, touching each other, "
            "with an array modifier (keep it one object).",
            [
                has_modifier("Post", "ARRAY", 48),
                size("Post", [2.0, 0.5, 0.5]),
                bottom_at("Post", 0.0),
            ],
            [
                call("add_modifier", name="Post", kind="array", count=4, relative_offset=[1, 0, 0]),
                "Post is now a row of four touching copies.",
            ],
            setup=_setup_post,
            tags=("one-tool", "modifiers"),
            description="an array modifier's result",
        ),
        _task(
            "bevelled-crate-glb",
            "Model a 1 m crate standing on the ground: a cube with bevelled edges. Export it as "
            "crate.glb with at most 300 triangles; it must be watertight.",
            [exported("crate.glb", 300, 13, [1.0, 1.0, 1.0])],
            [
                call("create_primitive", kind="cube", name="Crate", size=1.0, location=[0, 0, 0.5]),
                call(
                    "add_modifier", name="Crate", kind="bevel", width=0.05, segments=2, apply=True
                ),
                call("export_asset", path="crate.glb"),
                "crate.glb is exported: a bevelled 1 m crate under 300 triangles.",
            ],
            tags=("multi-step", "export"),
            description="an export under a triangle budget that validates",
        ),
        _task(
            "frame-suzanne",
            "From the scene camera, the monkey Suzanne must be fully in frame and cover at least "
            "30% of the image (render at 320x240). Move the camera, not Suzanne.",
            [unchanged("Suzanne"), framed("Suzanne", min_coverage=0.30)],
            [
                call("render"),
                call("fit_view", names=["Suzanne"], margin=1.02),
                call("render"),
                "Suzanne now fills the camera's frame.",
            ],
            setup=_setup_suzanne,
            tags=("multi-step", "visual"),
            description="framing from the visibility report: in frame and >= 30% of the image",
        ),
        _task(
            "unhide-ball",
            "From the scene camera, the ball named Ball is hidden behind Wall. Move only Ball so "
            "that it is fully visible in the camera's image.",
            [unchanged("Wall"), unchanged("Camera"), framed("Ball", max_hidden=0.01)],
            [
                call("render"),
                call("set_transform", name="Ball", location=[2, -1, 0.5]),
                call("render"),
                "Ball is now in front of the wall, fully visible.",
            ],
            setup=_setup_wall,
            tags=("multi-step", "visual"),
            description="occlusion from the report",
        ),
        _task(
            "blank-view",
            "The render from the scene camera shows nothing. Aim the camera so that both Crate "
            "and Ball are fully visible in its image.",
            [framed("Crate"), framed("Ball")],
            [
                call("render"),
                call("place_camera", name="Camera", location=[1, -7, 3], look_at=[1, 0, 0.5]),
                call("render"),
                "Both Crate and Ball are in view now.",
            ],
            setup=_setup_blank,
            tags=("multi-step", "visual"),
            description="a blank frame fixed by aiming",
        ),
    ]
    return Suite(
        name="blender",
        description="Blender scenes built with the core tools, checked in the worker",
        instructions=INSTRUCTIONS,
        tasks=tasks,
    )
