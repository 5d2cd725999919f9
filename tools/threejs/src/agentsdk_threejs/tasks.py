"""The ``threejs`` task suite (entry point ``agentsdk.suites``): scenes checked in the live page.

Every check asks the page, never the agent's words: the scene graph (objects, shapes, colours,
lights, camera), world-space boxes (rests on, distances), the visibility report of a fresh render
from the scene camera (visible, cut off, hidden, coverage, the lit colour of each object's
pixels) and exported GLB files read back with trimesh. ``tools/threejs/TASKS.md`` lists them.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any, cast

from agentsdk.tasks import Check, CheckValue, Suite, Task, ToolkitSpec, World, call
from agentsdk.vision import ObjectVisibility

from agentsdk import ToolCallPart, ToolError
from agentsdk_threejs.measure import ObjectBounds, footprint_share
from agentsdk_threejs.report import SceneObject, SceneSummary
from agentsdk_threejs.toolkit import ThreeJSToolkit

__all__ = ["INSTRUCTIONS", "suite"]

INSTRUCTIONS = ThreeJSToolkit.instructions  # what the toolkit tells any agent
SIZE = 256  # the frame the tools return and the checks measure
THREEJS = ToolkitSpec("threejs", settings={"groups": ["all"], "image_size": SIZE, "timeout": 30})
CORE = (
    "add_object",
    "update_object",
    "remove_object",
    "add_light",
    "set_camera",
    "fit_view",
    "render",
    "measure",
)
POSITION_TOLERANCE = 0.02
CheckFn = Callable[[World], Awaitable[CheckValue]]


def spec(*extra: str) -> ToolkitSpec:
    """The shared toolkit (one browser for the suite), narrowed to the core tools + ``extra``."""
    return ToolkitSpec(THREEJS.name, settings=THREEJS.settings, tools=(*CORE, *extra))


def _kit(world: World) -> ThreeJSToolkit:
    return cast(ThreeJSToolkit, world.toolkit("threejs"))


async def _scene(world: World) -> SceneSummary:
    return await _kit(world).scene_summary()


async def _object(world: World, name: str) -> SceneObject | str:
    summary = await _scene(world)
    for item in summary.objects:
        if item.name == name:
            return item
    names = ", ".join(o.name for o in summary.objects) or "none"
    return f"no object named {name!r} (objects: {names})"


async def _bounds(world: World, name: str) -> ObjectBounds | str:
    try:
        [found] = await _kit(world).bounds(name)
    except ToolError as error:
        return str(error)
    return found


async def _seen(world: World, name: str) -> ObjectVisibility | str:
    report = await _kit(world).visibility("camera", SIZE)
    item = report.object(name)
    return item if item is not None else f"{name} is not in the camera's report"


def _rgb(hex_colour: str | None) -> tuple[int, int, int]:
    value = int((hex_colour or "#000000").lstrip("#"), 16)
    return value >> 16, (value >> 8) & 255, value & 255


def _close(
    got: list[float] | None, want: list[float], tolerance: float = POSITION_TOLERANCE
) -> bool:
    return got is not None and all(abs(g - w) <= tolerance for g, w in zip(got, want, strict=True))


# -- reusable checks --------------------------------------------------------------------------


def exists(name: str, shape: str | None = None) -> Check:
    async def fn(world: World) -> CheckValue:
        found = await _object(world, name)
        if isinstance(found, str):
            return False, found
        if shape is not None and found.shape != shape:
            return False, f"{name} is a {found.shape}, not a {shape}"
        return True, f"{name} is a {found.shape}"

    return Check(f"{name} exists" + (f" as a {shape}" if shape else ""), fn)


def material_colour(name: str, want: str, tolerance: int = 40) -> Check:
    """The object's material colour is close to ``want`` (#rrggbb), channel by channel."""

    async def fn(world: World) -> CheckValue:
        found = await _object(world, name)
        if isinstance(found, str):
            return False, found
        got = _rgb(found.color)
        ok = all(abs(a - b) <= tolerance for a, b in zip(got, _rgb(want), strict=True))
        return ok, f"{name}'s material is {found.color}"

    return Check(f"{name} has colour {want}", fn)


def renders_as(name: str, colour: str) -> Check:
    """In a fresh render, the object's pixels are mostly ``colour`` (a plain colour name)."""

    async def fn(world: World) -> CheckValue:
        seen = await _seen(world, name)
        if isinstance(seen, str):
            return False, seen
        ok = seen.visible and seen.colour is not None and colour in seen.colour
        return ok, f"{name} renders {seen.colour or 'invisible'} ({seen.coverage:.1%} of the frame)"

    return Check(f"{name} renders {colour}", fn)


def in_view(name: str, min_coverage: float = 0.0, max_hidden: float = 1.0) -> Check:
    """Visible in the camera view, not cut off by the frame, big enough, not too hidden."""

    async def fn(world: World) -> CheckValue:
        seen = await _seen(world, name)
        if isinstance(seen, str):
            return False, seen
        cut = seen.cut_off if seen.cut_off is not None else (1.0 if seen.cut_sides else 0.0)
        hidden = seen.occluded or 0.0
        ok = (
            seen.visible and cut <= 0.005 and seen.coverage >= min_coverage and hidden <= max_hidden
        )
        return ok, (
            f"{name}: visible {seen.visible}, {seen.coverage:.1%} of the frame, "
            f"cut off {cut:.1%}, hidden {hidden:.0%}"
        )

    label = f"{name} fully in view"
    if min_coverage:
        label += f", at least {min_coverage:.0%} of the frame"
    if max_hidden < 1:
        label += f", at most {max_hidden:.0%} hidden"
    return Check(label, fn)


def placed(name: str, centre: list[float], tolerance: float = POSITION_TOLERANCE) -> Check:
    async def fn(world: World) -> CheckValue:
        found = await _bounds(world, name)
        if isinstance(found, str):
            return False, found
        ok = _close(found.centre, centre, tolerance)
        return ok, f"{name}'s centre is ({', '.join(f'{v:.3g}' for v in found.centre)})"

    return Check(f"{name} centred at {tuple(centre)}", fn)


def sized(name: str, size: list[float], tolerance: float = POSITION_TOLERANCE) -> Check:
    async def fn(world: World) -> CheckValue:
        found = await _bounds(world, name)
        if isinstance(found, str):
            return False, found
        ok = _close(found.size, size, tolerance)
        return ok, f"{name} measures {' x '.join(f'{v:.3g}' for v in found.size)}"

    return Check(f"{name} measures {' x '.join(map(str, size))}", fn)


def rests(name: str, on: str, tolerance: float = POSITION_TOLERANCE) -> Check:
    async def fn(world: World) -> CheckValue:
        top, below = await _bounds(world, name), await _bounds(world, on)
        if isinstance(top, str) or isinstance(below, str):
            return False, top if isinstance(top, str) else str(below)
        gap = top.min[1] - below.max[1]
        ok = abs(gap) <= tolerance and footprint_share(top, below) > 0
        return ok, f"{name}'s bottom is {gap:+.3f} from {on}'s top"

    return Check(f"{name} rests on {on}", fn)


def lights(kind: str | None = None, name: str | None = None) -> Check:
    async def fn(world: World) -> CheckValue:
        found = [
            light
            for light in (await _scene(world)).lights
            if (kind is None or light.kind == kind) and (name is None or light.name == name)
        ]
        return bool(found), f"{len(found)} matching light(s)"

    what = " ".join(part for part in (name, kind, "light") if part)
    return Check(f"the scene has a {what}", fn)


def unchanged(name: str, centre: list[float]) -> Check:
    check = placed(name, centre, 1e-3)
    return Check(f"{name} was not moved", check.fn)


def _last_text(world: World) -> str:
    return world.tool_results[-1].text if world.tool_results else ""


# -- setups -----------------------------------------------------------------------------------


async def _build(world: World, *ops: dict[str, object]) -> None:
    """Start the task's scene with the toolkit's own operations."""
    page = await _kit(world).session()
    result = await page.apply(list(ops), views=[], visibility=False)
    if result.op_error:
        raise RuntimeError(f"setup failed: {result.op_error}")


def _add(name: str, **fields: object) -> dict[str, object]:
    return {"op": "add", "name": name, **fields}


def _light(kind: str, **fields: object) -> dict[str, object]:
    return {"op": "light", "kind": kind, **fields}


# -- reference steps that read the report first ----------------------------------------------


def _fit_if_cut(world: World) -> ToolCallPart:
    """Correct from the text: the report says the box is cut off or too small."""
    text = _last_text(world)
    if "box is cut off" in text or "box: not visible" in text or "tiny" in text:
        return call("fit_view", names=["box"], margin=1.1)
    return call("fit_view", names=["box"], margin=1.05)


def _look_around_the_wall(world: World) -> ToolCallPart:
    text = _last_text(world)
    if "ball: not visible (fully hidden" in text or ("ball" in text and "hidden" in text):
        return call("fit_view", names=["ball"], view="side")
    return call("render")


def _turn_to_lamp(world: World) -> ToolCallPart:
    if "lamp: not visible (behind the camera)" in _last_text(world):
        return call("fit_view", names=["lamp"])
    return call("render")


# -- the suite --------------------------------------------------------------------------------


def _tasks() -> list[Task]:
    return [
        Task(
            id="threejs/red-box",
            prompt="Add a red box named box.",
            toolkits=[spec()],
            checks=[exists("box", "box"), material_colour("box", "#ff0000")],
            reference=[
                call("add_object", name="box", shape="box", color="red"),
                "Added a red box.",
            ],
            max_turns=4,
            tags=("one-tool",),
            description="one add_object call with a shape and a colour name",
        ),
        Task(
            id="threejs/blue-ball-at",
            prompt="Add a blue sphere named ball with radius 0.5, centred at (1, 0.5, -2).",
            toolkits=[spec()],
            checks=[
                exists("ball", "sphere"),
                sized("ball", [1, 1, 1]),
                placed("ball", [1, 0.5, -2]),
                material_colour("ball", "#0000ff"),
            ],
            reference=[
                call(
                    "add_object",
                    name="ball",
                    shape="sphere",
                    size=[0.5],
                    color="blue",
                    position=[1, 0.5, -2],
                ),
                "Added the blue ball.",
            ],
            max_turns=4,
            tags=("one-tool",),
            description="sizes and positions in one call",
        ),
        Task(
            id="threejs/recolour",
            prompt="Make the object named crate orange (#ff8800). Do not move it.",
            toolkits=[spec()],
            setup=lambda world: _build(
                world,
                _add("crate", color="grey", position=[0, 0.5, 0]),
                _light("ambient", intensity=2),
            ),
            checks=[
                material_colour("crate", "#ff8800", tolerance=8),
                renders_as("crate", "orange"),
                unchanged("crate", [0, 0.5, 0]),
            ],
            reference=[
                call("update_object", name="crate", color="#ff8800"),
                "crate is orange now.",
            ],
            max_turns=4,
            tags=("one-tool",),
            description="update_object changes the colour only",
        ),
        Task(
            id="threejs/remove-one",
            prompt="Remove the object named b from the scene and keep a and c.",
            toolkits=[spec()],
            setup=lambda world: _build(
                world,
                _add("a", position=[-2, 0.5, 0]),
                _add("b", position=[0, 0.5, 0]),
                _add("c", position=[2, 0.5, 0]),
            ),
            checks=[
                Check("b is gone", _gone("b")),
                exists("a"),
                exists("c"),
            ],
            reference=[call("remove_object", name="b"), "Removed b."],
            max_turns=4,
            tags=("one-tool",),
            description="remove by name, nothing else",
        ),
        Task(
            id="threejs/light-it",
            prompt="The render of this scene is black. Light it so that the box named box shows its red colour.",
            toolkits=[spec()],
            setup=lambda world: _build(world, _add("box", color="red", position=[0, 0.5, 0])),
            checks=[lights(), renders_as("box", "red"), unchanged("box", [0, 0.5, 0])],
            reference=[
                call("render"),
                lambda world: (
                    call("add_light", kind="directional", name="sun")
                    if "flat black" in _last_text(world) or "black" in _last_text(world)
                    else call("render")
                ),
                "The box is lit and shows red.",
            ],
            max_turns=6,
            tags=("visual",),
            description="the report says the frame is flat black; a light fixes it",
        ),
        Task(
            id="threejs/cube-on-table",
            prompt="Put a box named cube, 0.5 on each side, on top of the object named table: resting on it, centred.",
            toolkits=[spec()],
            setup=lambda world: _build(
                world,
                _add("table", size=[2, 1, 2], position=[0, 0.5, 0], color="saddlebrown"),
                _light("ambient", intensity=2),
            ),
            checks=[
                exists("cube", "box"),
                sized("cube", [0.5, 0.5, 0.5]),
                rests("cube", "table"),
                Check("cube centred over table", _centred_over("cube", "table")),
            ],
            reference=[
                call("add_object", name="cube", size=[0.5], rest_on="table"),
                "The cube rests on the table.",
            ],
            max_turns=6,
            tags=("measure", "multi-step"),
            description="rest the cube on the table (rest_on, or measure's top and arithmetic)",
        ),
        Task(
            id="threejs/frame-the-box",
            prompt="Make the object named box fully visible in the camera view and at least 30% of the frame. Do not move the box.",
            toolkits=[spec()],
            setup=lambda world: _build(
                world,
                _add("box", color="red", position=[3.2, 0.5, -1]),
                _light("ambient", intensity=1),
                _light("directional", name="sun"),
            ),
            checks=[in_view("box", min_coverage=0.3), unchanged("box", [3.2, 0.5, -1])],
            reference=[
                call("render"),
                _fit_if_cut,
                "box is fully in view and fills over 30% of the frame.",
            ],
            max_turns=6,
            tags=("visual", "multi-step"),
            description="setup leaves the box cut off at the right edge; the report says so; fit_view fixes it",
        ),
        Task(
            id="threejs/place-and-frame",
            prompt="Add a red box named box, size 1, centred at (3.2, 0.5, -1). Then make sure "
            "all of the box is visible in the camera view and covers at least 30% of the frame. "
            "Keep the box where you put it.",
            toolkits=[spec()],
            setup=lambda world: _build(
                world, _light("ambient", intensity=1), _light("directional", name="sun")
            ),
            checks=[
                exists("box", "box"),
                material_colour("box", "#ff0000"),
                placed("box", [3.2, 0.5, -1]),
                in_view("box", min_coverage=0.3),
            ],
            reference=[
                call("add_object", name="box", shape="box", color="red", position=[3.2, 0.5, -1]),
                _fit_if_cut,
                "The red box is in place, fully visible and over 30% of the frame.",
            ],
            max_turns=6,
            tags=("visual", "multi-step", "demo"),
            description="the first try leaves the box cut off at the right edge (the report after "
            "add_object says so); fit_view corrects it",
        ),
        Task(
            id="threejs/see-the-ball",
            prompt="The ball named ball is hidden behind the wall. Move the camera, not the objects, so that at least 80% of ball is visible.",
            toolkits=[spec()],
            setup=lambda world: _build(
                world,
                _add("ball", shape="sphere", size=[0.5], color="red", position=[0, 0.5, 0]),
                _add("wall", size=[3, 3, 0.2], color="grey", position=[0, 1.5, 2]),
                {"op": "camera", "position": [0, 1, 8], "look_at": [0, 0.5, 0]},
                _light("ambient", intensity=1),
                _light("directional", name="sun"),
            ),
            checks=[
                in_view("ball", max_hidden=0.2),
                unchanged("ball", [0, 0.5, 0]),
                unchanged("wall", [0, 1.5, 2]),
            ],
            reference=[
                call("render"),
                _look_around_the_wall,
                "The camera now sees the ball from the side.",
            ],
            max_turns=6,
            tags=("visual", "multi-step"),
            description="the report says the ball is fully hidden; a view from the side shows it",
        ),
        Task(
            id="threejs/find-the-lamp",
            prompt="Nothing shows in the camera view. Make the object named lamp visible without moving it.",
            toolkits=[spec()],
            setup=lambda world: _build(
                world,
                _add("lamp", shape="cylinder", size=[0.3, 1], color="gold", position=[0, 0.5, 12]),
                _light("ambient", intensity=2),
            ),
            checks=[in_view("lamp"), unchanged("lamp", [0, 0.5, 12])],
            reference=[call("render"), _turn_to_lamp, "lamp is in view."],
            max_turns=6,
            tags=("visual",),
            description="the report says the lamp is behind the camera",
        ),
        Task(
            id="threejs/floor-box-sun",
            prompt=(
                "Build a grey floor named floor (a flat plane 10 x 10 at y = 0), a red box named box, "
                "1 on each side, resting on the floor at its centre, and a directional light named sun."
            ),
            toolkits=[spec()],
            checks=[
                exists("floor", "plane"),
                sized("floor", [10, 0, 10]),
                exists("box", "box"),
                rests("box", "floor"),
                lights("directional", "sun"),
                renders_as("box", "red"),
            ],
            reference=[
                call("add_object", name="floor", shape="plane", size=[10, 10], color="grey"),
                call("add_object", name="box", size=[1], color="red", rest_on="floor"),
                call("add_light", kind="directional", name="sun"),
                "Built the floor, the box on it and the sun.",
            ],
            max_turns=8,
            tags=("multi-step",),
            description="three objects, placed relative to each other, lit",
        ),
        Task(
            id="threejs/two-apart",
            prompt=(
                "Add two spheres of radius 0.5 named left and right, both resting on y = 0 (bottom at 0), "
                "3 units apart along x and centred on x = 0."
            ),
            toolkits=[spec("assert_distance")],
            checks=[
                exists("left", "sphere"),
                exists("right", "sphere"),
                placed("left", [-1.5, 0.5, 0]),
                placed("right", [1.5, 0.5, 0]),
            ],
            reference=[
                call(
                    "add_object",
                    name="left",
                    shape="sphere",
                    size=[0.5],
                    position=[-1.5, 0, 0],
                    rest_on="ground",
                ),
                call(
                    "add_object",
                    name="right",
                    shape="sphere",
                    size=[0.5],
                    position=[1.5, 0, 0],
                    rest_on="ground",
                ),
                call("assert_distance", name="left", other="right", distance=3),
                "The spheres are 3 apart.",
            ],
            max_turns=8,
            tags=("multi-step", "measure"),
            description="arithmetic on positions, checked with assert_distance",
        ),
        Task(
            id="threejs/top-view",
            prompt="Look at the scene from directly above so that all three boxes a, b and c are fully visible.",
            toolkits=[spec()],
            setup=lambda world: _build(
                world,
                _add("a", position=[-3, 0.5, 0], color="red"),
                _add("b", position=[0, 0.5, 1], color="green"),
                _add("c", position=[3, 0.5, -1], color="blue"),
                _light("ambient", intensity=2),
            ),
            checks=[
                Check("the camera looks straight down", _looks_down),
                in_view("a"),
                in_view("b"),
                in_view("c"),
            ],
            reference=[call("fit_view", view="top"), "The camera looks down at all three boxes."],
            max_turns=4,
            tags=("one-tool", "visual"),
            description="fit_view from the top",
        ),
        Task(
            id="threejs/export-tree",
            prompt="Add a green cone named tree (radius 0.5, height 2) and export the scene to tree.glb.",
            toolkits=[spec("export_glb")],
            checks=[
                exists("tree", "cone"),
                Check("tree.glb holds the tree", _glb_has("tree.glb", "tree"), weight=2),
            ],
            reference=[
                call(
                    "add_object",
                    name="tree",
                    shape="cone",
                    size=[0.5, 2],
                    color="green",
                    position=[0, 1, 0],
                ),
                call("export_glb", path="tree.glb"),
                "Exported tree.glb.",
            ],
            max_turns=6,
            tags=("files", "multi-step"),
            description="the exported file is read back with trimesh",
        ),
        Task(
            id="threejs/code-ring",
            prompt="With render_scene (three.js code), add a yellow torus named ring (radius 1, tube 0.25) and an ambient light.",
            toolkits=[spec("render_scene")],
            checks=[
                exists("ring"),
                sized("ring", [2.5, 2.5, 0.5], 0.05),
                material_colour("ring", "#ffff00"),
                lights("ambient"),
            ],
            reference=[
                call(
                    "render_scene",
                    code=(
                        "const ring = new THREE.Mesh(new THREE.TorusGeometry(1, 0.25, 24, 64), "
                        "new THREE.MeshStandardMaterial({ color: 'yellow' }));\n"
                        "ring.name = 'ring';\nscene.add(ring);\nscene.add(new THREE.AmbientLight(0xffffff, 1.5));"
                    ),
                ),
                "Added the ring.",
            ],
            max_turns=6,
            tags=("code",),
            description="the raw-JS tool for models that write three.js",
        ),
    ]


def _gone(name: str) -> CheckFn:
    async def fn(world: World) -> CheckValue:
        found = await _object(world, name)
        return isinstance(found, str), "gone" if isinstance(
            found, str
        ) else f"{name} is still there"

    return fn


def _centred_over(name: str, on: str) -> CheckFn:
    async def fn(world: World) -> CheckValue:
        top, below = await _bounds(world, name), await _bounds(world, on)
        if isinstance(top, str) or isinstance(below, str):
            return False, top if isinstance(top, str) else str(below)
        dx, dz = top.centre[0] - below.centre[0], top.centre[2] - below.centre[2]
        return math.hypot(dx, dz) <= 0.05, f"offset ({dx:.3f}, {dz:.3f}) from {on}'s centre"

    return fn


async def _looks_down(world: World) -> CheckValue:
    camera = (await _scene(world)).camera
    direction = [t - p for t, p in zip(camera.target, camera.position, strict=True)]
    length = math.sqrt(sum(v * v for v in direction)) or 1.0
    down = -direction[1] / length
    return down >= 0.99, f"the camera's view direction points {down:.0%} straight down"


def _glb_has(path: str, name: str) -> Callable[[World], CheckValue]:
    def fn(world: World) -> CheckValue:
        import trimesh

        file = world.workdir / path
        if not file.is_file():
            return False, f"{path} was not written in the run's folder"
        scene: Any = trimesh.load(file, force="scene")
        meshes = len(scene.graph.nodes_geometry)
        has = name in scene.graph.nodes
        return (
            has and meshes >= 1,
            f"{path}: {meshes} mesh(es), nodes {sorted(scene.graph.nodes)[:6]}",
        )

    return fn


def suite() -> Suite:
    """The three.js suite: 15 tasks, from one call to corrections driven by the report."""
    return Suite(
        name="threejs",
        description="three.js scenes built with the typed tools, checked in the live page",
        instructions=INSTRUCTIONS,
        tasks=_tasks(),
    )
