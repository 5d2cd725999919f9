"""UnityToolkit: typed tools over the Unity bridge commands."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Annotated, ClassVar, Literal, TypeVar

import anyio
from agentsdk.tools import check_groups
from pydantic import BaseModel, Field, JsonValue

from agentsdk import Image, Tool, ToolContext, ToolError, Toolkit, tool

from .bridge import UnityBridge
from .csharp import (
    UNITY_LANGUAGE_VERSION,
    CSharpCompilerMissingError,
    LanguageVersion,
    check_csharp,
)
from .errors import UnityBridgeError
from .results import (
    CompileReport,
    ConsoleLogs,
    EditModeTestRun,
    FieldValue,
    GameObjectInfo,
    GameObjectMatches,
    PlayModeStatus,
    PrefabSaved,
    SceneInfo,
    Screenshot,
    ScriptContent,
    ScriptWrite,
    whole_characters,
)
from .settings import BridgeSettings

Finite = Annotated[float, Field(allow_inf_nan=False)]
Vector3 = Annotated[list[Finite], Field(min_length=3, max_length=3, description="[x, y, z]")]
Pixels = Annotated[int, Field(ge=1, le=4096)]
Primitive = Literal["Cube", "Sphere", "Capsule", "Cylinder", "Plane", "Quad"]
FieldInput = bool | int | Finite | str | list[Finite] | None

# Error codes that describe something the model asked for and can correct.
_MODEL_FIXABLE = frozenset({"not_found", "invalid_args", "precondition_failed", "unknown_command"})

ResultT = TypeVar("ResultT", bound=BaseModel)

TOOL_GROUPS: dict[str, tuple[str, ...]] = {
    "core": (
        "create_gameobject",
        "find_gameobjects",
        "set_transform",
        "add_component",
        "set_field",
        "delete_gameobject",
        "write_script",
        "read_script",
        "compile_status",
        "save_prefab",
        "scene_info",
        "save_scene",
        "screenshot",
    ),
    "scenes": ("open_scene", "new_scene"),
    "diagnostics": ("check_script", "console_logs", "run_editmode_tests", "play_mode"),
}
"""Tool groups: ``core`` (on by default) builds GameObjects, writes and compiles scripts,
saves prefabs and the scene, and looks at it; ``scenes`` (open or start another scene) and
``diagnostics`` (a syntax check alone, the console, EditMode tests, play mode) are opt-in:
``UnityToolkit(groups=["core", "diagnostics"])`` or ``groups="all"``."""


class ScriptWriteReport(BaseModel):
    """What write_script did: the file's new hash and, when waited for, the compilation outcome."""

    write: ScriptWrite
    syntax_checked: bool
    compile: CompileReport | None = None
    note: str = ""


def _same_asset(reported: str, asset: str) -> bool:
    """A compiler message's file is the asset (Unity reports project-relative paths, with
    backslashes on Windows; some tools report absolute ones)."""
    reported, asset = reported.replace("\\", "/"), asset.replace("\\", "/").lstrip("/")
    return reported == asset or reported.endswith("/" + asset)


class UnityToolkit(Toolkit):
    """Drive a live Unity Editor: C# scripts, GameObjects, scenes, play mode, EditMode tests, screenshots.

    Works with the com.agentsdk.unity-bridge package inside the editor. Connects lazily on the
    first tool call, from ``settings`` (default: env vars, then the project's
    Library/AgentSdkBridge/connection.json), so ``UnityToolkit()`` needs no arguments.
    ``groups`` picks the tool groups offered (``TOOL_GROUPS``; ``core`` by default, ``"all"``
    for every tool): each offered tool's schema is in the model's prompt on every turn.
    """

    name = "unity"
    instructions = (
        "You work in an open Unity project through tools. Make every change with the tools (the "
        "scene, scripts, prefabs and scenes are checked afterwards), then answer in one sentence."
    )
    groups_available: ClassVar[dict[str, tuple[str, ...]]] = TOOL_GROUPS

    def __init__(
        self,
        bridge: UnityBridge | None = None,
        *,
        settings: BridgeSettings | None = None,
        groups: Sequence[str] | str = ("core",),
        check_scripts: bool = True,
        compile_timeout: float = 180.0,
        language_version: LanguageVersion = UNITY_LANGUAGE_VERSION,
        prefix: str | None = None,
    ) -> None:
        super().__init__(prefix=prefix)
        self.groups = check_groups(groups, TOOL_GROUPS)
        self.bridge = bridge or UnityBridge(settings)
        self.check_scripts = check_scripts
        self.compile_timeout = compile_timeout
        self.language_version: LanguageVersion = language_version

    def tools(self) -> list[Tool]:
        """The tools of the chosen groups (``groups``; default ``core``), in group order."""
        return self.tools_of_groups(self.groups)

    async def close(self) -> None:
        """Closes the connection to the editor (the editor keeps running). Idempotent."""
        await self.bridge.aclose()

    async def reset(self) -> None:
        """A new default scene, discarding the open one's unsaved changes (for eval runs).

        Assets earlier tasks wrote stay in the project: run suites in a scratch project.
        """
        await self.bridge.request("scene.new", {"discard_changes": True})

    async def _call(
        self,
        result_type: type[ResultT],
        command: str,
        args: dict[str, JsonValue] | None = None,
        *,
        timeout: float | None = None,
    ) -> ResultT:
        try:
            raw = await self.bridge.request(
                command, {k: v for k, v in (args or {}).items() if v is not None}, timeout=timeout
            )
        except UnityBridgeError as exc:
            if exc.code in _MODEL_FIXABLE:
                raise ToolError(f"{command} failed ({exc.code}): {exc.message}") from None
            raise
        return result_type.model_validate(whole_characters(raw))

    # ---------- scripts

    @tool
    async def check_script(self, source: str, file_name: str = "Script.cs") -> str:
        """Check C# source for syntax errors without touching the editor (Mono's mcs, and
        tree-sitter's C# grammar for syntax newer than mcs knows).

        Args:
            source: The full C# file.
            file_name: Name used in the diagnostics.
        """
        result = await check_csharp(
            source, file_name=file_name, language_version=self.language_version
        )
        if not result.ok:
            raise ToolError("C# syntax errors:\n" + result.report())
        return result.report()

    @tool(side_effects=True)
    async def write_script(
        self,
        path: str,
        content: str,
        expected_hash: str | None = None,
        wait_for_compile: bool = True,
    ) -> ScriptWriteReport:
        """Create or replace a C# script under Assets/ and wait for Unity to compile it.

        Args:
            path: Asset path such as Assets/Scripts/Spinner.cs.
            content: The whole file.
            expected_hash: The hash you got when you last read or wrote this file; the write is refused
                if the file changed since. Use "" to require that the file does not exist yet.
            wait_for_compile: Wait for the compilation and report its errors.
        """
        checked = False
        note = ""
        if self.check_scripts:
            try:
                syntax = await check_csharp(
                    content, file_name=path, language_version=self.language_version
                )
            except CSharpCompilerMissingError as missing:
                note = f"not syntax-checked locally: {missing}"
            else:
                checked = True
                if not syntax.ok:
                    raise ToolError(f"Not written: {path} has C# syntax errors:\n{syntax.report()}")
                if syntax.diagnostics or syntax.newer_syntax:
                    note = syntax.report()
        write = await self._call(
            ScriptWrite,
            "script.write",
            {"path": path, "content": content, "expected_hash": expected_hash},
        )
        report = ScriptWriteReport(write=write, syntax_checked=checked, note=note)
        if write.changed and wait_for_compile:
            report.compile = await self._wait_for_compile(after=write.written_unix)
            if report.compile.errors:
                lines = "\n".join(str(e) for e in report.compile.errors)
                raise ToolError(
                    f"Written {path} (hash {write.hash}), but Unity reports compile errors:\n{lines}"
                )
            if not report.compile.compiling:
                # Said outright: a small model otherwise repeated an older read's "does not
                # compile" as its answer after the fix had compiled.
                done = f"{path} is written and the project compiles without errors."
                report.note = f"{done} {note}".strip()
        return report

    async def _wait_for_compile(self, *, after: float) -> CompileReport:
        with anyio.move_on_after(self.compile_timeout):
            while True:
                status = await self._call(CompileReport, "compile.status")
                if not status.compiling and status.finished_unix >= after:
                    return status
                await anyio.sleep(0.25)
        raise ToolError(f"Unity did not finish compiling within {self.compile_timeout:g} s")

    @tool
    async def read_script(self, path: str) -> ScriptContent:
        """Read a C# script and its hash.

        Args:
            path: Asset path such as Assets/Scripts/Spinner.cs.
        """
        script = await self._call(ScriptContent, "script.read", {"path": path})
        # A small model read a file that did not compile, read it again, and never wrote it
        # (unity/fix-compile-error): the file's errors and the call that fixes them, here.
        status = await self._call(CompileReport, "compile.status")
        mine = [e for e in status.errors if _same_asset(e.file, script.path)]
        if mine:
            script.compile_errors = [str(error) for error in mine]
            script.next = (
                f'This file does not compile. Fix it with write_script(path="{script.path}", '
                f'content=<the whole corrected file>, expected_hash="{script.hash}").'
            )
        return script

    @tool
    async def compile_status(self) -> CompileReport:
        """Whether Unity is compiling, and the errors and warnings of the last compilation."""
        return await self._call(CompileReport, "compile.status")

    @tool
    async def console_logs(
        self,
        since: Annotated[int, Field(ge=0)] = 0,
        limit: Annotated[int, Field(ge=1)] = 50,
        type: Literal["Log", "Warning", "Error", "Exception", "Assert"] | None = None,
    ) -> ConsoleLogs:
        """Messages from the Unity console.

        Args:
            since: Only messages after this sequence number (use last_seq from the previous call).
            limit: At most this many (the newest).
            type: Only this kind of message.
        """
        return await self._call(
            ConsoleLogs, "console.logs", {"since": since, "limit": limit, "type": type}
        )

    # ---------- GameObjects

    @tool(side_effects=True, creates="name")
    async def create_gameobject(
        self,
        name: str,
        primitive: Primitive | None = None,
        parent: str | None = None,
        position: Vector3 | None = None,
        rotation_euler: Vector3 | None = None,
        scale: Vector3 | None = None,
    ) -> GameObjectInfo:
        """Create a GameObject (empty, or a primitive mesh) in the open scene.

        Args:
            name: Name of the new object.
            primitive: A built-in mesh to create, or none for an empty object.
            parent: Hierarchy path of the parent.
            position: Local position.
            rotation_euler: Local rotation in degrees.
            scale: Local scale.
        """
        args: dict[str, JsonValue] = {"name": name, "primitive": primitive, "parent": parent}
        args.update(_vectors(position, rotation_euler, scale))
        return await self._call(GameObjectInfo, "gameobject.create", args)

    @tool
    async def find_gameobjects(
        self, query: str, limit: Annotated[int, Field(ge=1)] = 20
    ) -> list[GameObjectInfo]:
        """Find GameObjects by hierarchy path ('Turret/Barrel') or by name.

        Args:
            query: A path or a name.
            limit: At most this many.
        """
        return (
            await self._call(GameObjectMatches, "gameobject.find", {"query": query, "limit": limit})
        ).matches

    @tool(side_effects=True)
    async def set_transform(
        self,
        path: str,
        position: Vector3 | None = None,
        rotation_euler: Vector3 | None = None,
        scale: Vector3 | None = None,
    ) -> GameObjectInfo:
        """Move, rotate or scale a GameObject (local space).

        Args:
            path: Hierarchy path or name.
            position: Local position.
            rotation_euler: Local rotation in degrees.
            scale: Local scale.
        """
        args: dict[str, JsonValue] = {"path": path, **_vectors(position, rotation_euler, scale)}
        return await self._call(GameObjectInfo, "gameobject.set_transform", args)

    @tool(side_effects=True)
    async def add_component(self, path: str, component: str) -> GameObjectInfo:
        """Add a component (built-in or one of your compiled scripts) to a GameObject.

        Args:
            path: Hierarchy path or name.
            component: Type name such as Rigidbody or Spinner.
        """
        return await self._call(
            GameObjectInfo, "gameobject.add_component", {"path": path, "component": component}
        )

    @tool(side_effects=True)
    async def set_field(
        self, path: str, component: str, field: str, value: FieldInput
    ) -> FieldValue:
        """Set a serialized field of a component (numbers, booleans, strings, enums by name,
        vectors and colours as lists, object references as a hierarchy path or an Assets/ path).

        Args:
            path: Hierarchy path or name of the GameObject.
            component: Component type name.
            field: Serialized field name.
            value: The new value.
        """
        json_value: JsonValue = [float(v) for v in value] if isinstance(value, list) else value
        args: dict[str, JsonValue] = {
            "path": path,
            "component": component,
            "field": field,
            "value": json_value,
        }
        return await self._call(FieldValue, "gameobject.set_field", args)

    @tool(side_effects=True)
    async def delete_gameobject(self, path: str) -> str:
        """Delete a GameObject and its children.

        Args:
            path: Hierarchy path or name.
        """
        await self.bridge.request("gameobject.delete", {"path": path})
        return f"deleted {path}"

    @tool(side_effects=True)
    async def save_prefab(self, path: str, asset_path: str) -> PrefabSaved:
        """Save a GameObject (with its children and components) as a prefab asset.

        Args:
            path: Hierarchy path or name of the GameObject.
            asset_path: Where to save, such as Assets/Prefabs/Turret.prefab.
        """
        return await self._call(
            PrefabSaved, "prefab.save", {"path": path, "asset_path": asset_path}
        )

    # ---------- scenes, play mode, tests

    @tool
    async def scene_info(self) -> SceneInfo:
        """The active scene: name, path, unsaved changes, root objects."""
        return await self._call(SceneInfo, "scene.info")

    @tool(side_effects=True)
    async def open_scene(self, path: str, discard_changes: bool = False) -> SceneInfo:
        """Open a scene file.

        Args:
            path: Such as Assets/Scenes/Main.unity.
            discard_changes: Throw away unsaved changes of the open scene.
        """
        return await self._call(
            SceneInfo, "scene.open", {"path": path, "discard_changes": discard_changes}
        )

    @tool(side_effects=True)
    async def new_scene(self, discard_changes: bool = False, empty: bool = False) -> SceneInfo:
        """Open a new, unsaved scene (with a camera and a light unless ``empty``).

        Args:
            discard_changes: Throw away unsaved changes of the open scene.
            empty: No default camera and light.
        """
        return await self._call(
            SceneInfo, "scene.new", {"discard_changes": discard_changes, "empty": empty}
        )

    @tool(side_effects=True)
    async def save_scene(self, path: str | None = None) -> SceneInfo:
        """Save the active scene (to its own file, or to ``path``).

        Args:
            path: Such as Assets/Scenes/Main.unity; needed the first time.
        """
        return await self._call(SceneInfo, "scene.save", {"path": path})

    @tool(side_effects=True)
    async def play_mode(self, action: Literal["enter", "exit", "status"]) -> PlayModeStatus:
        """Enter or leave play mode, or ask whether the editor is playing.

        Args:
            action: What to do.
        """
        return await self._call(PlayModeStatus, f"playmode.{action}")

    @tool
    async def run_editmode_tests(
        self,
        test_names: list[str] | None = None,
        group: str | None = None,
        timeout_seconds: float = 600,
    ) -> EditModeTestRun:
        """Run EditMode tests with Unity's Test Framework and report each result.

        Args:
            test_names: Full names of the tests to run (all when omitted).
            group: A regular expression over test names (Test Framework group filter).
            timeout_seconds: Give up after this long.
        """
        args: dict[str, JsonValue] = {
            "test_names": list(test_names) if test_names else None,
            "group": group,
        }
        args["timeout_seconds"] = timeout_seconds
        return await self._call(EditModeTestRun, "tests.run", args, timeout=timeout_seconds + 30)

    @tool
    async def screenshot(
        self,
        camera: str | None = None,
        width: Pixels = 512,
        height: Pixels = 512,
        ctx: ToolContext | None = None,
    ) -> list[str | Image]:
        """Render a scene camera and look at the picture.

        Args:
            camera: Name of the GameObject holding the camera (the main camera when omitted).
            width: Pixels.
            height: Pixels.
        """
        shot = await self._call(
            Screenshot, "camera.screenshot", {"camera": camera, "width": width, "height": height}
        )
        image = Image(base64.b64decode(shot.png_base64), media_type="image/png")
        caption = f"Camera '{shot.camera}' at {shot.width}x{shot.height}"
        if ctx is not None:
            saved = ctx.artifacts.save_image(image, name=f"unity-{shot.camera}.png")
            caption += f" (saved to {saved})"
        return [caption, image]


def _vectors(
    position: list[float] | None, rotation: list[float] | None, scale: list[float] | None
) -> dict[str, JsonValue]:
    found: dict[str, JsonValue] = {}
    for key, value in (("position", position), ("rotation_euler", rotation), ("scale", scale)):
        if value is not None:
            found[key] = [float(v) for v in value]
    return found
