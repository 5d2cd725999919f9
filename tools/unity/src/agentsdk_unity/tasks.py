"""The ``unity`` task suite (entry point ``agentsdk.suites``): Unity work checked in the editor's world.

Each task runs against the mono-hosted stub editor (``stub_editor.StubEditorToolkit``: the
package's real bridge and handlers on stub engines, a fresh project per run). The checks ask the
bridge for the scene (objects, transforms, components), read the project's files (scripts,
prefabs, scenes) and run ``check_csharp`` on the scripts, against the stub ``UnityEngine.dll``.
Nothing is taken from the agent's words. ``tools/unity/TASKS.md`` describes each task.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import cast

from agentsdk.tasks import Check, CheckValue, Suite, Task, ToolkitSpec, World, call

from agentsdk import ToolCallPart

from . import _csharp_tree
from .csharp import check_csharp
from .results import CompileReport, GameObjectInfo, GameObjectMatches, ScriptContent
from .stub_editor import StubEditorToolkit, cached_build

__all__ = ["INSTRUCTIONS", "suite"]

INSTRUCTIONS = StubEditorToolkit.instructions  # what the toolkit tells any agent
TOLERANCE = 1e-4
UNITY = ToolkitSpec("unity", factory=StubEditorToolkit)

SPINNER = """using UnityEngine;

public class Spinner : MonoBehaviour
{
    public float speed = 90f;

    void Update()
    {
        transform.Rotate(0f, speed * Time.deltaTime, 0f);
    }
}
"""


def _kit(world: World) -> StubEditorToolkit:
    return cast(StubEditorToolkit, world.toolkit("unity"))


async def _objects(world: World, query: str) -> list[GameObjectInfo]:
    raw = await _kit(world).bridge.request("gameobject.find", {"query": query, "limit": 100})
    return GameObjectMatches.model_validate(raw).matches


async def _one(world: World, query: str) -> GameObjectInfo | str:
    """The single object at this path or name, or why there is not exactly one."""
    found = await _objects(world, query)
    if len(found) != 1:
        return f"{len(found)} objects named {query!r} in the scene"
    return found[0]


def _near(got: list[float], want: list[float]) -> bool:
    return len(got) == len(want) and all(
        abs(g - w) <= TOLERANCE for g, w in zip(got, want, strict=True)
    )


def _has(query: str) -> Check:
    async def fn(world: World) -> CheckValue:
        found = await _one(world, query)
        return (False, found) if isinstance(found, str) else (True, found.path)

    return Check(f"{query} exists", fn)


def _vector(query: str, field: str, want: list[float]) -> Check:
    async def fn(world: World) -> CheckValue:
        found = await _one(world, query)
        if isinstance(found, str):
            return False, found
        got = cast(list[float], getattr(found, field))
        return _near(got, want), f"{field} {got}, want {want} (±{TOLERANCE})"

    return Check(f"{query} {field.replace('_', ' ')}", fn)


def _mesh(query: str, mesh: str) -> Check:
    async def fn(world: World) -> CheckValue:
        found = await _one(world, query)
        if isinstance(found, str):
            return False, found
        ok = found.mesh == mesh and "MeshRenderer" in found.components
        return ok, f"mesh {found.mesh!r}, components {found.components}"

    return Check(f"{query} is a {mesh}", fn)


def _component(query: str, component: str) -> Check:
    async def fn(world: World) -> CheckValue:
        found = await _one(world, query)
        if isinstance(found, str):
            return False, found
        return component in found.components, f"components {found.components}"

    return Check(f"{query} has {component}", fn)


async def _script(world: World, path: str) -> ScriptContent | None:
    file = _kit(world).project / path
    if not file.is_file():
        return None
    raw = await _kit(world).bridge.request("script.read", {"path": path})
    return ScriptContent.model_validate(raw)


def _script_compiles(path: str) -> Check:
    """The file is in the project, Unity's last compile has no errors, and it type-checks."""

    async def fn(world: World) -> CheckValue:
        script = await _script(world, path)
        if script is None:
            return False, f"no {path} in the project"
        status = CompileReport.model_validate(await _kit(world).bridge.request("compile.status"))
        if status.errors:
            return False, "the editor reports: " + "; ".join(str(e) for e in status.errors)
        engine = cached_build().parent / "UnityEngine.dll"
        checked = await check_csharp(script.content, file_name=path, references=[engine])
        return checked.ok, checked.report()

    return Check(f"{path} compiles", fn, weight=2.0)


def _declares(path: str, class_name: str, field: str, value: float, *, calls: str = "") -> Check:
    """The script declares ``public <number> field = value`` in class_name (and calls ``calls``)."""

    async def fn(world: World) -> CheckValue:
        script = await _script(world, path)
        if script is None:
            return False, f"no {path} in the project"
        found = _field_value(script.content, class_name, field)
        if found is None:
            return False, f"no public field {field} with a number in class {class_name}"
        if abs(found - value) > TOLERANCE:
            return False, f"{field} = {found}, want {value}"
        if calls and not re.search(rf"\b{calls}\s*\(", script.content):
            return False, f"{class_name} never calls {calls}()"
        return True, f"{class_name}.{field} = {found}"

    return Check(f"{class_name}.{field} is {value:g}", fn)


def _field_value(source: str, class_name: str, field: str) -> float | None:
    """The numeric initial value of ``public ... field = N`` inside ``class class_name``."""
    tree = _csharp_tree.parse(source, ())
    if tree.errors:
        return None
    pattern = re.compile(
        rf"class\s+{class_name}\b[^{{]*\{{.*?public\s+(?:float|int|double)\s+{field}\s*=\s*"
        r"(-?\d+(?:\.\d+)?)f?\s*;",
        re.S,
    )
    match = pattern.search(source)
    return float(match[1]) if match else None


def _asset_lists(path: str, *needles: str) -> Check:
    """An asset file (prefab, scene) in the project mentions each needle (regex)."""

    async def fn(world: World) -> CheckValue:
        file = _kit(world).project / path
        if not file.is_file():
            return False, f"no {path} in the project"
        text = file.read_text("utf-8", "replace")
        missing = [n for n in needles if not re.search(n, text)]
        return not missing, f"{path} lacks {missing}" if missing else f"{path} holds {needles}"

    return Check(f"{Path(path).name} saved", fn, weight=2.0)


def _created(name: str, primitive: str | None = None, **where: list[float]) -> ToolCallPart:
    args: dict[str, object] = {"name": name, **where}
    if primitive:
        args["primitive"] = primitive
    return call("create_gameobject", **args)


# ---------- tasks


def _crate() -> Task:
    return Task(
        id="unity/crate-at-position",
        prompt="Create a cube named Crate at position (2, 0.5, -3) in the open scene.",
        toolkits=[UNITY],
        checks=[
            _has("Crate"),
            _mesh("Crate", "Cube"),
            _vector("Crate", "position", [2, 0.5, -3]),
        ],
        reference=[_created("Crate", "Cube", position=[2, 0.5, -3]), "Crate is at (2, 0.5, -3)."],
        tags=("one-tool",),
        description="One call: a primitive cube with a name and a position.",
    )


def _hierarchy() -> Task:
    return Task(
        id="unity/turret-hierarchy",
        prompt=(
            "Build a turret: an empty GameObject named Turret at (0, 1, 0), and under it a cube "
            "named Barrel at local position (0, 0, 0.6) with scale (0.2, 0.2, 1)."
        ),
        toolkits=[UNITY],
        checks=[
            _has("Turret/Barrel"),
            _vector("Turret", "position", [0, 1, 0]),
            _vector("Turret/Barrel", "position", [0, 0, 0.6]),
            _vector("Turret/Barrel", "scale", [0.2, 0.2, 1]),
            _mesh("Turret/Barrel", "Cube"),
        ],
        reference=[
            _created("Turret", position=[0, 1, 0]),
            call(
                "create_gameobject",
                name="Barrel",
                primitive="Cube",
                parent="Turret",
                position=[0, 0, 0.6],
                scale=[0.2, 0.2, 1],
            ),
            "The turret has a barrel.",
        ],
        tags=("multi-step", "hierarchy"),
        description="Parenting: the child's transform is local to its parent.",
    )


async def _place_target(world: World) -> None:
    bridge = _kit(world).bridge
    await bridge.request(
        "gameobject.create", {"name": "Target", "primitive": "Sphere", "position": [3, 1.25, -2]}
    )
    await bridge.request("gameobject.create", {"name": "Ground", "primitive": "Plane"})


def _lift_found(world: World) -> ToolCallPart:
    """The reference reads the position it was shown, as an agent must."""
    [found] = json.loads(world.results_of("find_gameobjects")[-1].text)
    x, y, z = found["position"]
    return call("set_transform", path="Target", position=[x, y + 2, z])


def _move_target() -> Task:
    return Task(
        id="unity/lift-target",
        prompt="Move the object named Target 2 units up (along +Y) from where it is now.",
        toolkits=[UNITY],
        setup=_place_target,
        checks=[
            _vector("Target", "position", [3, 3.25, -2]),
            _vector("Ground", "position", [0, 0, 0]),
        ],
        reference=[call("find_gameobjects", query="Target"), _lift_found, "Target moved up."],
        tags=("multi-step", "read-then-act"),
        description="The start position is only in the scene: the agent has to look it up.",
    )


def _spinner() -> Task:
    path = "Assets/Scripts/Spinner.cs"
    return Task(
        id="unity/spinner-script",
        prompt=(
            f"Write {path}: a MonoBehaviour class Spinner with a public float field speed "
            "(default 90) that rotates its transform around the Y axis by speed degrees per "
            "second in Update."
        ),
        toolkits=[UNITY],
        checks=[
            _script_compiles(path),
            _declares(path, "Spinner", "speed", 90, calls="Rotate"),
        ],
        reference=[call("write_script", path=path, content=SPINNER), "Spinner.cs compiles."],
        tags=("one-tool", "script"),
        description="A script that compiles in the editor and type-checks against UnityEngine.",
    )


BROKEN_HEALTH = """using UnityEngine;

public class Health : MonoBehaviour
{
    public int hp = "full";

    public void Hit(int damage)
    {
        hp -= damage;
    }
}
"""


async def _write_broken_health(world: World) -> None:
    await _kit(world).bridge.request(
        "script.write", {"path": "Assets/Scripts/Health.cs", "content": BROKEN_HEALTH}
    )


def _fix_health(world: World) -> ToolCallPart:
    content = json.loads(world.results_of("read_script")[-1].text)
    fixed = str(content["content"]).replace('public int hp = "full";', "public int hp = 100;")
    return call(
        "write_script",
        path="Assets/Scripts/Health.cs",
        content=fixed,
        expected_hash=content["hash"],
    )


def _fix_compile_error() -> Task:
    path = "Assets/Scripts/Health.cs"
    return Task(
        id="unity/fix-compile-error",
        prompt=(
            "The project does not compile. Find the compile error and fix it so that Health keeps "
            "its public int hp field, starting at 100. Keep the Hit method."
        ),
        toolkits=[UNITY],
        setup=_write_broken_health,
        checks=[
            _script_compiles(path),
            _declares(path, "Health", "hp", 100, calls=""),
            Check("Hit is kept", _keeps_hit),
        ],
        reference=[
            call("compile_status"),
            call("read_script", path=path),
            _fix_health,
            "Health.cs compiles: hp starts at 100.",
        ],
        tags=("multi-step", "script", "debug"),
        description="Read the editor's compile error, then edit the file with its hash.",
    )


async def _keeps_hit(world: World) -> CheckValue:
    script = await _script(world, "Assets/Scripts/Health.cs")
    if script is None:
        return False, "Health.cs is gone"
    kept = re.search(r"void\s+Hit\s*\(\s*int\s+\w+\s*\)", script.content) is not None
    return kept, "Hit(int) is there" if kept else "Hit(int) was removed"


def _prefab() -> Task:
    script, prefab = "Assets/Scripts/Spinner.cs", "Assets/Prefabs/Turret.prefab"
    return Task(
        id="unity/spinning-turret-prefab",
        prompt=(
            f"Make a prefab {prefab} of a cube named Turret that spins: write a Spinner "
            f"MonoBehaviour in {script} with a public float speed field that rotates the object "
            "around Y, add it to Turret, set its speed to 180, and save Turret as the prefab."
        ),
        toolkits=[UNITY],
        checks=[
            _script_compiles(script),
            _component("Turret", "Spinner"),
            _asset_lists(prefab, r"(?m)^component Spinner$|m_Script:", r"speed\s*[=:]\s*180\b"),
        ],
        reference=[
            call("write_script", path=script, content=SPINNER),
            _created("Turret", "Cube"),
            call("add_component", path="Turret", component="Spinner"),
            call("set_field", path="Turret", component="Spinner", field="speed", value=180),
            call("save_prefab", path="Turret", asset_path=prefab),
            "Turret.prefab spins at 180°/s.",
        ],
        max_turns=14,
        tags=("multi-step", "script", "prefab"),
        description="Script, compile, component, serialized field, prefab: the whole loop.",
    )


def _scene() -> Task:
    scene = "Assets/Scenes/Level1.unity"
    return Task(
        id="unity/save-scene",
        prompt=f"Add a sphere named Ball at (0, 1, 0) and save the open scene as {scene}.",
        toolkits=[UNITY],
        checks=[
            _vector("Ball", "position", [0, 1, 0]),
            _asset_lists(scene, r"(?m)^Ball$|m_Name: Ball\b"),
            Check("scene saved to its file", _scene_saved),
        ],
        reference=[
            _created("Ball", "Sphere", position=[0, 1, 0]),
            call("save_scene", path=scene),
            "Level1 is saved with the ball.",
        ],
        tags=("multi-step", "scene"),
        description="The saved file holds the object, and the editor has no unsaved changes.",
    )


async def _scene_saved(world: World) -> CheckValue:
    info = await _kit(world).bridge.request("scene.info")
    assert isinstance(info, dict)
    ok = info.get("path") == "Assets/Scenes/Level1.unity" and info.get("dirty") is False
    return ok, f"scene {info.get('path')!r}, unsaved changes: {info.get('dirty')}"


def suite() -> Suite:
    """The unity suite: its tasks and the instructions they run with."""
    return Suite(
        name="unity",
        description=(
            "Unity editor work (objects, hierarchy, scripts, compile errors, prefabs, scenes) "
            "against the mono-hosted bridge; checked in the editor's world and files."
        ),
        instructions=INSTRUCTIONS,
        tasks=[
            _crate(),
            _hierarchy(),
            _move_target(),
            _spinner(),
            _fix_compile_error(),
            _prefab(),
            _scene(),
        ],
    )
