"""The `godot` task suite: from one tool call to a script fixed after reading the engine's error
and a screenshot whose report must show a red object fully in frame.

Every check inspects the project the tools changed: scene files parsed here, the tree the engine
builds, the output of a headless run the verifier starts itself, world bounds measured by the
engine, and the visibility report of a screenshot the verifier takes. Nothing is read from the
model's answer or from tool output. See TASKS.md.
"""

from __future__ import annotations

import math
import re

from agentsdk.tasks import Check, CheckResult, Suite, Task, ToolkitSpec, World, call

from agentsdk import ToolError
from agentsdk_godot.engine import EngineRun, HarnessJob, NodeInfo
from agentsdk_godot.project import ProjectPathError
from agentsdk_godot.scene import SceneError, SceneFile
from agentsdk_godot.toolkit import GodotToolkit
from agentsdk_godot.variant import (
    Constructor,
    ExtResource,
    SubResource,
    Variant,
    VariantSyntaxError,
    parse_variant,
)

__all__ = ["suite"]

INSTRUCTIONS = GodotToolkit.instructions  # what the toolkit tells any agent
MAIN = "res://main.tscn"


# ---------- what the checks look at


def _toolkit(world: World) -> GodotToolkit:
    toolkit = world.toolkit("godot")
    assert isinstance(toolkit, GodotToolkit)
    return toolkit


def _scene(world: World, path: str = MAIN) -> SceneFile | None:
    """The scene file as it is on disk, or None when it is missing or unreadable."""
    try:
        return _toolkit(world).project.read_scene(path)
    except (ProjectPathError, SceneError, VariantSyntaxError, OSError):
        return None


async def _run(world: World, frames: int = 2, fixed_fps: int | None = None) -> EngineRun | None:
    """A headless run of the main scene started by the verifier (None: nothing to run)."""
    toolkit = _toolkit(world)
    main = toolkit.project.main_scene
    if not main or not toolkit.project.file(main).exists():
        return None
    return await toolkit.engine.run_harness(
        toolkit.project.path,
        HarnessJob(scene=main, frames=frames),
        timeout=60,
        fixed_fps=fixed_fps,
    )


def _printed(run: EngineRun) -> list[str]:
    """Lines the game printed (the harness's own lines left out)."""
    return [
        line.strip()
        for line in run.stdout.splitlines()
        if line.strip() and not line.startswith(("AGENTSDK", "Godot Engine"))
    ]


def _errors(run: EngineRun) -> str:
    return "; ".join(f"{d.file}:{d.line}: {d.message}" for d in run.errors[:3])


def _node(tree: NodeInfo | None, name: str) -> NodeInfo | None:
    return tree.find(name) if tree is not None else None


def _number(value: Variant) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _colour(value: Variant) -> tuple[float, ...] | None:
    if isinstance(value, Constructor) and value.name == "Color" and len(value.args) >= 3:
        numbers = [_number(a) for a in value.args[:3]]
        if all(n is not None for n in numbers):
            return tuple(n for n in numbers if n is not None)
    return None


def _material_colours(scene: SceneFile, node: str) -> list[tuple[float, ...]]:
    """Albedo colours of the materials a node draws with: override, surface slots, its mesh's."""
    try:
        entry = scene.node(node)
    except SceneError:
        return []
    refs: list[Variant] = [entry.properties.get("material_override")]
    refs += [v for k, v in entry.properties.items() if re.fullmatch(r"material/\d+", k)]
    mesh = entry.properties.get("mesh")
    if isinstance(mesh, SubResource):
        try:
            refs.append(scene.sub_resource(mesh).properties.get("material"))
        except SceneError:
            pass
    found = []
    for ref in refs:
        if isinstance(ref, SubResource):
            try:
                colour = _colour(scene.sub_resource(ref).properties.get("albedo_color"))
            except SceneError:
                continue
            if colour is not None:
                found.append(colour)
    return found


def _is_red(rgb: tuple[float, ...]) -> bool:
    return rgb[0] >= 0.7 and rgb[1] <= 0.3 and rgb[2] <= 0.3


# ---------- setups (through the toolkit's Python API, as a user's project would be)


def _box_scene(world: World) -> None:
    project = _toolkit(world).project
    scene = project.new_scene("Main", "Spatial")
    scene.add_node("Box", "MeshInstance").properties["mesh"] = scene.add_sub_resource(
        "CubeMesh", {}
    )
    project.write_scene(MAIN, scene)
    project.main_scene = MAIN


def _script_scene(
    world: World, root_type: str, script: str, source: str, label: bool = False
) -> None:
    project = _toolkit(world).project
    scene = project.new_scene("Main", root_type)
    if label:
        scene.add_node("Score", "Label").properties["text"] = "..."
    project.write_text(script, source)
    scene.attach_script(".", script)
    project.write_scene(MAIN, scene)
    project.main_scene = MAIN


BROKEN_SUM = """extends Node

func _ready():
\tvar total = 0
\tfor i in range(1, 5)
\t\ttotal += i
\tprint("total: ", total)
"""
FIXED_SUM = BROKEN_SUM.replace("range(1, 5)\n", "range(1, 5):\n")

WRONG_NODE = """extends Control

func _ready():
\tget_node("Scoreboard").text = "ready"
"""
RIGHT_NODE = WRONG_NODE.replace('"Scoreboard"', '"Score"')


def _floor_scene(world: World) -> None:
    project = _toolkit(world).project
    scene = project.new_scene("Main", "Spatial")
    floor = scene.add_node("Floor", "MeshInstance")
    floor.properties["mesh"] = scene.add_sub_resource(
        "CubeMesh", {"size": Constructor("Vector3", (8, 0.5, 8))}
    )
    project.write_scene(MAIN, scene)  # the floor's top is at y = 0.25
    project.main_scene = MAIN


# ---------- checks


def _has_box(world: World) -> tuple[bool, str]:
    scene = _scene(world)
    if scene is None:
        return False, f"{MAIN} does not exist or does not parse"
    try:
        box = scene.node("Box")
    except SceneError:
        return False, "the scene has no node Box"
    return box.type == "MeshInstance", f"Box is a {box.type}"


async def _engine_box_cube(world: World) -> tuple[bool, str]:
    run = await _run(world, frames=1)
    box = _node(run.tree if run else None, "Box")
    if box is None:
        return False, "the engine's tree has no Box"
    mesh = box.properties.get("mesh", "")
    return box.type == "MeshInstance" and mesh.startswith("CubeMesh"), f"Box mesh: {mesh or 'none'}"


async def _box_at(world: World) -> tuple[bool, str]:
    try:
        measured = await _toolkit(world).measurements(MAIN)
        centre = measured.bounded("Box").centre
    except (ToolError, KeyError) as err:
        return False, str(err)
    ok = math.dist(centre, (2, 1, -3)) <= 1e-3
    return ok, "Box centre " + ", ".join(f"{c:.3f}" for c in centre)


def _box_red(world: World) -> tuple[bool, str]:
    scene = _scene(world)
    colours = _material_colours(scene, "Box") if scene else []
    return any(_is_red(c) for c in colours), f"Box material colours: {colours or 'none'}"


async def _loads_cleanly(world: World) -> tuple[bool, str]:
    run = await _run(world, frames=1)
    if run is None:
        return False, "no main scene"
    return run.tree is not None and not run.errors, _errors(run) or "loads without errors"


async def _prints_hello(world: World) -> tuple[bool, str]:
    run = await _run(world, frames=2)
    if run is None:
        return False, "no main scene"
    said = _printed(run)
    return "Hello from Godot" in said and not run.errors, f"printed {said[:3]} {_errors(run)}"


def _hello_attached(world: World) -> tuple[bool, str]:
    scene = _scene(world)
    if scene is None:
        return False, f"{MAIN} is missing"
    script = scene.root.properties.get("script")
    paths = [e.path for e in scene.ext_resources if script == ExtResource(e.id)]
    return paths == ["res://hello.gd"], f"root script: {paths or 'none'}"


async def _prints_total(world: World) -> tuple[bool, str]:
    run = await _run(world, frames=2)
    if run is None:
        return False, "no main scene"
    said = _printed(run)
    return "total: 10" in said and not run.errors, f"printed {said[:3]} {_errors(run)}"


async def _label_ready(world: World) -> tuple[bool, str]:
    run = await _run(world, frames=2)
    label = _node(run.tree if run else None, "Score")
    if run is None or label is None:
        return False, "the scene has no Score label"
    text = label.properties.get("text", "")
    return text == '"ready"' and not run.errors, f"Score.text = {text} {_errors(run)}"


async def _crate_on_floor(world: World) -> CheckResult:
    try:
        measured = await _toolkit(world).measurements(MAIN)
        on = measured.rests_on("Crate", "Floor", tolerance=0.01)
        size = measured.bounded("Crate").size
    except (ToolError, KeyError) as err:
        return CheckResult(name="", score=0.0, passed=False, reason=str(err))
    unit = all(abs(s - 1) <= 0.01 for s in size)
    score = (on.passed + unit) / 2
    why = f"{on.message}; Crate size " + " x ".join(f"{s:.3f}" for s in size)
    return CheckResult(name="", score=score, passed=score == 1, reason=why)


async def _spins(world: World) -> tuple[bool, str]:
    # 60 frames at a fixed 60 fps is one second of game time, whatever the machine's speed
    run = await _run(world, frames=60, fixed_fps=60)
    box = _node(run.tree if run else None, "Box")
    if run is None or box is None or run.errors:
        return False, _errors(run) if run else "no main scene"
    try:
        basis = parse_variant(
            box.properties.get("transform", "Transform( 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0 )")
        )
    except VariantSyntaxError:
        return False, "Box has no readable transform"
    if not isinstance(basis, Constructor) or len(basis.args) != 12:
        return False, "Box has no readable transform"
    m = [_number(a) or 0.0 for a in basis.args]
    yaw = math.atan2(m[2], m[0])
    upright = abs(m[4] - 1) < 1e-3  # the Y axis did not tilt: a turn about Y only
    # 59 or 60 steps of 1/60 s have run when the tree is read
    ok = upright and 0.9 <= abs(yaw) <= 1.1
    return ok, f"after 1 s Box turned {yaw:.3f} rad about Y (upright: {upright})"


def _target_parts(world: World) -> tuple[float, str]:
    scene = _scene(world)
    if scene is None:
        return 0.0, f"{MAIN} is missing"
    types = {n.type for n in scene.nodes}
    parts = {
        "Target": any(n.name == "Target" for n in scene.nodes),
        "a camera": "Camera" in types,
        "a light": bool(types & {"DirectionalLight", "OmniLight", "SpotLight"}),
    }
    missing = [k for k, ok in parts.items() if not ok]
    return sum(parts.values()) / 3, "missing: " + ", ".join(missing) if missing else "all there"


async def _target_in_frame(world: World) -> CheckResult:
    scene = _scene(world)
    if scene is None or not any(n.name == "Target" for n in scene.nodes):
        return CheckResult(name="", score=0.0, passed=False, reason="no Target to look at")
    try:
        look = await _toolkit(world).look(MAIN, frames=2, width=256, height=256)
    except ToolError as err:
        return CheckResult(name="", score=0.0, passed=False, reason=str(err))
    seen = look.report.object("Target")
    if seen is None or not seen.visible:
        return CheckResult(name="", score=0.0, passed=False, reason=look.report.to_text())
    parts = [
        seen.colour in ("red", "dark red"),
        (seen.cut_off or 0.0) < 0.01,
        seen.coverage >= 0.30,
    ]
    why = f"Target: {seen.coverage:.0%} of the frame, colour {seen.colour}, cut off {seen.cut_off or 0:.0%}"
    score = sum(parts) / 3
    return CheckResult(name="", score=score, passed=score == 1, reason=why)


def _title_label(world: World) -> tuple[bool, str]:
    scene = _scene(world, "res://title.tscn")
    if scene is None:
        return False, "res://title.tscn is missing"
    try:
        title = scene.node("Title")
    except SceneError:
        return False, "no node Title"
    return (
        title.type == "Label" and title.properties.get("text") == "Score: 0",
        f"Title is a {title.type} with text {title.properties.get('text')!r}",
    )


async def _title_in_engine(world: World) -> tuple[bool, str]:
    toolkit = _toolkit(world)
    if not toolkit.project.file("res://title.tscn").exists():
        return False, "res://title.tscn is missing"
    run = await toolkit.engine.run_harness(
        toolkit.project.path, HarnessJob(scene="res://title.tscn", frames=1), timeout=60
    )
    title = _node(run.tree, "Title")
    text = title.properties.get("text") if title else None
    return text == '"Score: 0"', f"the engine shows Title.text = {text}"


# ---------- the suite

GODOT = ToolkitSpec("godot")
CHECKING = ToolkitSpec("godot", settings={"groups": ["core", "check"]})


def suite() -> Suite:
    """The Godot suite (10 tasks)."""
    cube = {"mesh": "CubeMesh()"}
    return Suite(
        name="godot",
        description="Godot 3 scenes, scripts, runs and screenshots, checked on the project.",
        instructions=INSTRUCTIONS,
        tasks=[
            Task(
                id="godot/box-node",
                prompt=(
                    "Create a 3D scene res://main.tscn (root type Spatial) with a MeshInstance "
                    "child named Box that shows a cube (a CubeMesh)."
                ),
                toolkits=[GODOT],
                checks=[
                    Check("the scene file has a MeshInstance Box", _has_box),
                    Check("the engine builds Box with a CubeMesh", _engine_box_cube),
                ],
                reference=[
                    call("create_scene", path=MAIN, root_type="Spatial"),
                    call("add_node", scene=MAIN, name="Box", type="MeshInstance", properties=cube),
                    "res://main.tscn has a MeshInstance Box with a CubeMesh.",
                ],
                max_turns=6,
                tags=("one-tool",),
                description="Two authoring calls; the file and the engine's tree are checked.",
            ),
            Task(
                id="godot/label-text",
                prompt=(
                    "Create a 2D user-interface scene res://title.tscn whose root is a Control, "
                    "with a Label named Title that shows the text Score: 0"
                ),
                toolkits=[GODOT],
                checks=[
                    Check("the file has Label Title with 'Score: 0'", _title_label),
                    Check("the engine shows the text", _title_in_engine),
                ],
                reference=[
                    call("create_scene", path="res://title.tscn", root_type="Control"),
                    call(
                        "add_node",
                        scene="res://title.tscn",
                        name="Title",
                        type="Label",
                        properties={"text": "Score: 0"},
                    ),
                    "res://title.tscn has a Label Title showing 'Score: 0'.",
                ],
                max_turns=6,
                tags=("one-tool",),
                description="Text in a String property (bare or quoted), checked in the file and the engine.",
            ),
            Task(
                id="godot/move-box",
                prompt="In res://main.tscn, move the node Box so that its centre is at x=2, y=1, z=-3.",
                toolkits=[GODOT],
                setup=_box_scene,
                checks=[Check("the engine measures Box's centre at (2, 1, -3)", _box_at)],
                reference=[
                    call(
                        "set_property",
                        scene=MAIN,
                        node="Box",
                        property="translation",
                        value="Vector3( 2, 1, -3 )",
                    ),
                    "Box is now centred at (2, 1, -3).",
                ],
                max_turns=6,
                tags=("one-tool",),
                description="One set_property; the centre is measured by the engine (AABB).",
            ),
            Task(
                id="godot/red-material",
                prompt="Make the Box in res://main.tscn red: give it a material whose albedo colour is pure red.",
                toolkits=[GODOT],
                setup=_box_scene,
                checks=[
                    Check("Box draws with a red material", _box_red),
                    Check("the scene loads without errors", _loads_cleanly),
                ],
                reference=[
                    call(
                        "set_property",
                        scene=MAIN,
                        node="Box",
                        property="mesh/material/albedo_color",
                        value="Color( 1, 0, 0, 1 )",
                    ),
                    "Box now has a red SpatialMaterial.",
                ],
                max_turns=8,
                tags=("multi-step",),
                description="A field of a material the mesh does not have yet (made on the way); material_override, material/0 or the mesh's material all count.",
            ),
            Task(
                id="godot/hello-script",
                prompt=(
                    "Write a GDScript res://hello.gd that prints exactly Hello from Godot when the "
                    "scene starts, attach it to the root of res://main.tscn (a Node; create the "
                    "scene first) and run the project to see it work."
                ),
                toolkits=[GODOT],
                checks=[
                    Check("a headless run prints 'Hello from Godot'", _prints_hello, weight=2),
                    Check("res://hello.gd is the root's script", _hello_attached),
                ],
                reference=[
                    call("create_scene", path=MAIN, root_type="Node", main=True),
                    call(
                        "write_script",
                        path="res://hello.gd",
                        source='extends Node\n\nfunc _ready():\n\tprint("Hello from Godot")\n',
                    ),
                    call("attach_script", scene=MAIN, node=".", script="res://hello.gd"),
                    call("run_project", frames=3),
                    "The main scene prints 'Hello from Godot'.",
                ],
                max_turns=10,
                tags=("multi-step", "script"),
                description="Write, attach and run a script; the verifier runs the game itself.",
            ),
            Task(
                id="godot/fix-parse-error",
                prompt=(
                    "The main scene's script does not parse. Run the project, fix the error the "
                    "engine reports, and run it again: it must run cleanly and print the total "
                    "of the numbers 1 to 4."
                ),
                toolkits=[GODOT],
                setup=lambda world: _script_scene(world, "Node", "res://score.gd", BROKEN_SUM),
                checks=[Check("a headless run prints 'total: 10' with no errors", _prints_total)],
                reference=[
                    call("run_project", frames=3),
                    call("write_script", path="res://score.gd", source=FIXED_SUM),
                    call("run_project", frames=3),
                    "Fixed the missing colon in res://score.gd:5; it prints total: 10.",
                ],
                max_turns=10,
                tags=("multi-step", "script", "fix"),
                description="Read a parse error with file and line, fix it, run again.",
            ),
            Task(
                id="godot/fix-runtime-error",
                prompt=(
                    "Running the main scene stops with an error. Find and fix it: the scene has a "
                    "Label that should show the text ready once the scene starts."
                ),
                toolkits=[GODOT],
                setup=lambda world: _script_scene(
                    world, "Control", "res://main.gd", WRONG_NODE, label=True
                ),
                checks=[Check("the Label shows 'ready' and the run has no errors", _label_ready)],
                reference=[
                    call("run_project", frames=3),
                    call("scene_tree", scene=MAIN),
                    call("write_script", path="res://main.gd", source=RIGHT_NODE),
                    call("run_project", frames=3),
                    "The script looked up a node Scoreboard; the Label is called Score. Fixed.",
                ],
                max_turns=12,
                tags=("multi-step", "script", "fix"),
                description="A runtime error (a missing node) found from the engine's message and the tree.",
            ),
            Task(
                id="godot/crate-on-floor",
                prompt=(
                    "res://main.tscn has a Floor. Add a MeshInstance named Crate with a 1 x 1 x 1 "
                    "cube mesh that rests on top of the Floor: touching it, not floating above it "
                    "or sinking into it."
                ),
                toolkits=[CHECKING],
                setup=_floor_scene,
                checks=[Check("Crate is a unit cube resting on Floor", _crate_on_floor)],
                reference=[
                    call(
                        "add_node",
                        scene=MAIN,
                        name="Crate",
                        type="MeshInstance",
                        properties={"mesh": "CubeMesh()"},
                        size=[1, 1, 1],
                        rest_on="Floor",
                    ),
                    call("assert_rests_on", node="Crate", support="Floor"),
                    "Crate (1 x 1 x 1) sits on the Floor, whose top is at y = 0.25.",
                ],
                max_turns=12,
                tags=("multi-step", "measure"),
                description="Contact measured by the engine's bounds (tolerance 0.01) and the crate's size.",
            ),
            Task(
                id="godot/spin-script",
                prompt=(
                    "Make the node Box in res://main.tscn spin around the Y axis at 1 radian per "
                    "second, using a script."
                ),
                toolkits=[GODOT],
                setup=_box_scene,
                checks=[Check("Box turns 1 rad about Y in one second of game time", _spins)],
                reference=[
                    call(
                        "attach_script",
                        scene=MAIN,
                        node="Box",
                        script="res://spin.gd",
                        source="extends MeshInstance\n\nfunc _process(delta):\n\trotate_y(delta)\n",
                    ),
                    call("run_project", frames=10),
                    "Box spins at 1 rad/s around Y.",
                ],
                max_turns=10,
                tags=("multi-step", "script"),
                description="Motion checked after 60 frames at a fixed 60 fps: the same answer on any machine.",
            ),
            Task(
                id="godot/red-target-in-frame",
                prompt=(
                    "Build res://main.tscn with a red object named Target, a camera and a light, "
                    "so that a screenshot shows Target entirely in the frame and covering at least "
                    "30% of the picture. Take a screenshot to check."
                ),
                toolkits=[GODOT],
                checks=[
                    Check("the scene has Target, a camera and a light", _target_parts),
                    Check(
                        "a screenshot shows a red Target fully in frame, over 30%",
                        _target_in_frame,
                        weight=3,
                    ),
                ],
                reference=[
                    call("create_scene", path=MAIN, root_type="Spatial"),
                    call(
                        "add_node", scene=MAIN, name="Target", type="MeshInstance", properties=cube
                    ),
                    call(
                        "set_property",
                        scene=MAIN,
                        node="Target",
                        property="mesh/material/albedo_color",
                        value="red",
                    ),
                    call(
                        "add_node",
                        scene=MAIN,
                        name="Camera",
                        type="Camera",
                        properties={"translation": "Vector3( 0, 0, 3.2 )"},
                    ),
                    call("add_node", scene=MAIN, name="Sun", type="DirectionalLight"),
                    call("screenshot", frames=2, width=256, height=256),
                    "Target fills about half of the frame and is fully in view.",
                ],
                max_turns=14,
                timeout=400,
                tags=("multi-step", "visual"),
                description="Judged by the visibility report of a screenshot the verifier takes.",
            ),
        ],
    )
