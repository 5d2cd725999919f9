"""`GodotToolkit`: the tools an agent uses to build, run and look at a Godot game."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from agentsdk import Image, ToolError, Toolkit, tool
from agentsdk_godot.bridge import BridgeError, GameSession
from agentsdk_godot.diagnostics import format_diagnostics
from agentsdk_godot.engine import EngineRun, GodotEngine, HarnessJob, NodeInfo
from agentsdk_godot.project import GodotProject, ProjectPathError
from agentsdk_godot.reports import (
    RunReport,
    SceneChange,
    ScriptCheck,
    blank_frame,
    describe_report,
    problems,
    run_report,
)
from agentsdk_godot.scene import SceneError, SceneFile
from agentsdk_godot.variant import (
    Constructor,
    SubResource,
    Variant,
    VariantSyntaxError,
    format_variant,
    parse_variant,
)

__all__ = ["GodotToolkit"]


_VALUE_TYPES = (
    "Vector",
    "Color",
    "Transform",
    "Basis",
    "Quat",
    "Rect",
    "Plane",
    "AABB",
    "Pool",
    "Packed",
    "NodePath",
)


def _value(text: str) -> Variant:
    try:
        return parse_variant(text)
    except VariantSyntaxError as err:
        raise ToolError(
            f'value {text!r} is not a Godot literal ({err}). Examples: 1.5, true, "text", '
            "Vector3( 0, 1, 0 ), Color( 1, 0, 0, 1 ), Transform( 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 5 )"
        ) from None


class GodotToolkit(Toolkit):
    """Author scenes and scripts, run the game headless, take screenshots, drive a live game."""

    name = "godot"

    def __init__(
        self,
        project_dir: str | Path | None = None,
        *,
        engine: GodotEngine | None = None,
        run_timeout: float = 60.0,
        prefix: str | None = None,
    ):
        super().__init__(prefix=prefix)
        self._project_dir = Path(project_dir) if project_dir else None
        self._engine = engine
        self._temp: Path | None = None
        self._project: GodotProject | None = None
        self._game: GameSession | None = None
        self.run_timeout = run_timeout

    # ---------- lifecycle

    async def start(self) -> None:
        """Find Godot and open (or create) the project."""
        if self._engine is None:
            self._engine = GodotEngine()
        major = (await self._engine.version()).major
        if self._project_dir is None:
            self._temp = Path(tempfile.mkdtemp(prefix="agentsdk-godot-project-"))
            self._project_dir = self._temp
        self._project = GodotProject.create(self._project_dir, major=major)

    async def close(self) -> None:
        """Stop a running game, restore the project, remove temporary folders. Idempotent."""
        if self._game is not None:
            await self._game.close()
            self._game = None
        if self._temp is not None:
            shutil.rmtree(self._temp, ignore_errors=True)
            self._temp = None
        if self._engine is not None:
            self._engine.close()

    @property
    def project(self) -> GodotProject:
        """The project the tools work on (after start)."""
        if self._project is None:
            raise RuntimeError("GodotToolkit is not started: use `async with GodotToolkit()`")
        return self._project

    @property
    def engine(self) -> GodotEngine:
        """The engine used for runs (after start)."""
        assert self._engine is not None
        return self._engine

    def _scene(self, path: str) -> SceneFile:
        try:
            return self.project.read_scene(path)
        except (ProjectPathError, SceneError, VariantSyntaxError) as err:
            raise ToolError(str(err)) from None

    def _save(self, path: str, scene: SceneFile, node: str, detail: str) -> SceneChange:
        saved = self.project.write_scene(path, scene)
        return SceneChange(
            scene=saved, node=node, detail=detail, nodes=[n.path for n in scene.nodes]
        )

    # ---------- authoring

    @tool
    async def create_scene(
        self,
        path: str,
        root_type: str = "Spatial",
        root_name: str | None = None,
        main: bool = False,
    ) -> SceneChange:
        """Create a new scene file with a single root node.

        Args:
            path: Where to save it, e.g. "res://main.tscn".
            root_type: Class of the root node (Spatial, Node2D, Control, Node ...).
            root_name: Name of the root node (defaults to the file name).
            main: Make it the project's main scene (what run_project runs).
        """
        name = root_name or Path(path).stem.title().replace("_", "")
        scene = self.project.new_scene(name, root_type)
        try:
            change = self._save(path, scene, ".", f"created with root {name} ({root_type})")
        except ProjectPathError as err:
            raise ToolError(str(err)) from None
        if main or not self.project.main_scene:
            self.project.main_scene = change.scene
        return change

    @tool
    async def add_node(
        self,
        scene: str,
        name: str,
        type: str,
        parent: str = ".",
        properties: dict[str, str] | None = None,
    ) -> SceneChange:
        """Add a node to a scene. Meshes: give `mesh` a new resource as "CubeMesh()", "SphereMesh()".

        Args:
            scene: The scene file, e.g. "res://main.tscn".
            name: Name of the new node.
            type: Its class, e.g. MeshInstance, Camera, DirectionalLight, Label.
            parent: Path of the parent node ("." is the root, "Player/Arm" deeper).
            properties: Property name -> Godot literal, e.g. {"translation": "Vector3( 0, 1, 0 )"}.
        """
        doc = self._scene(scene)
        try:
            node = doc.add_node(name, self.project.dialect.class_name(type), parent)
            for key, text in (properties or {}).items():
                node.properties[key] = self._property_value(doc, text)
        except SceneError as err:
            raise ToolError(str(err)) from None
        return self._save(scene, doc, node.path, f"added {type} {node.path}")

    def _property_value(self, doc: SceneFile, text: str) -> Variant:
        value = _value(text)
        # "CubeMesh()" / "SpatialMaterial()" with no arguments: a new sub-resource of that class
        if (
            isinstance(value, Constructor)
            and not value.args
            and not value.name.startswith(_VALUE_TYPES)
        ):
            return doc.add_sub_resource(self.project.dialect.class_name(value.name), {})
        return value

    @tool
    async def set_property(self, scene: str, node: str, property: str, value: str) -> SceneChange:
        """Set a node property in a scene file.

        Args:
            scene: The scene file.
            node: Node path ("." for the root).
            property: e.g. "translation", "transform", "text", "mesh". A field of a resource stored
                in the scene is "<property>/<field>", e.g. "mesh/size", "mesh/material/albedo_color".
            value: A Godot literal: 2.5, true, "hi", Vector3( 0, 1, 0 ), Color( 1, 0, 0, 1 ), CubeMesh().
        """
        doc = self._scene(scene)
        try:
            target = doc.node(node)
            first = property.split("/")[0]
            if "/" in property and isinstance(target.properties.get(first), SubResource):
                # "mesh/material/albedo_color": walk the resources stored in the scene
                *chain, field = property.split("/")
                owner = target.properties
                for part in chain:
                    ref = owner.get(part)
                    if not isinstance(ref, SubResource):
                        raise SceneError(f"{part} is not a resource stored in this scene")
                    owner = doc.sub_resource(ref).properties
                owner[field] = self._property_value(doc, value)
            else:
                target.properties[property] = self._property_value(doc, value)
        except SceneError as err:
            raise ToolError(str(err)) from None
        return self._save(scene, doc, target.path, f"{property} = {value}")

    @tool
    async def write_script(self, path: str, source: str) -> ScriptCheck:
        """Write a GDScript file and check it with the engine (errors come back with file and line).

        Args:
            path: e.g. "res://player.gd".
            source: The full GDScript source (Godot 3: `extends Spatial`, `export var speed = 1.0`).
        """
        if not path.endswith(".gd"):
            raise ToolError("GDScript files end in .gd")
        res = self.project.write_text(path, source)
        found = await self.engine.check_script(self.project.path, res)
        errors = [d for d in found if d.severity == "error"]
        if errors:
            raise ToolError(f"{res} was saved but does not parse:\n" + format_diagnostics(errors))
        return ScriptCheck(path=res, ok=True, warnings=[d.describe() for d in found])

    @tool
    async def attach_script(self, scene: str, node: str, script: str) -> SceneChange:
        """Attach an existing GDScript file to a node of a scene.

        Args:
            scene: The scene file.
            node: Node path ("." for the root).
            script: The script, e.g. "res://spin.gd" (write it first with write_script).
        """
        if not self.project.file(script).exists():
            raise ToolError(f"{script} does not exist: write it first with write_script")
        doc = self._scene(scene)
        try:
            doc.attach_script(node, self.project.res_path(script))
        except SceneError as err:
            raise ToolError(str(err)) from None
        return self._save(scene, doc, doc.node(node).path, f"script {script}")

    @tool
    async def import_asset(
        self, source: str, scene: str | None = None, parent: str = ".", name: str | None = None
    ) -> SceneChange:
        """Import a glTF/GLB file into the project and optionally instance it in a scene.

        Args:
            source: Path of the .glb/.gltf on disk (outside or inside the project).
            scene: Scene to instance it in (optional).
            parent: Parent node path for the instance.
            name: Node name of the instance (defaults to the file name).
        """
        src = Path(source)
        if not src.exists():  # noqa: ASYNC240
            raise ToolError(f"{source} does not exist")
        dest = self.project.file(f"assets/{src.name}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.resolve() != dest:  # noqa: ASYNC240
            shutil.copy(src, dest)
        result = await self.engine.import_assets(self.project.path, [dest])
        if result.failed:
            why = "it timed out" if result.timed_out else format_diagnostics(result.diagnostics)
            raise ToolError(f"the engine could not import {src.name}: {why}")
        res = self.project.res_path(dest)
        if scene is None:
            return SceneChange(scene="", node="", detail=f"imported {res}")
        doc = self._scene(scene)
        try:
            ref = doc.ext_resource(res, "PackedScene")
            node = doc.add_node(name or src.stem, None, parent, instance=ref)
        except SceneError as err:
            raise ToolError(str(err)) from None
        return self._save(scene, doc, node.path, f"instanced {res}")

    # ---------- running and seeing

    @tool
    async def scene_tree(self, scene: str) -> str:
        """Load a scene in the engine and show the node tree it really builds (with properties).

        Args:
            scene: The scene file.
        """
        run = await self._run(HarnessJob(scene=scene, frames=1), timeout=self.run_timeout)
        if run.tree is None:
            raise ToolError(f"the engine could not open {scene}:\n" + problems(run))
        return run.tree.outline()

    @tool
    async def run_project(
        self, scene: str | None = None, seconds: float = 2.0, frames: int | None = None
    ) -> RunReport:
        """Run the game headless for some seconds (or frames); errors come back with file, line and stack.

        Args:
            scene: Scene to run (default: the main scene).
            seconds: How long to run.
            frames: Run this many frames instead of `seconds`.
        """
        job = HarnessJob(scene=scene or "", frames=frames or 0, seconds=0.0 if frames else seconds)
        run = await self._run(job, timeout=max(self.run_timeout, seconds * 3 + 10))
        report = run_report(scene or self.project.main_scene or "", run)
        if not report.ok:
            raise ToolError(describe_report(report))
        return report

    @tool
    async def screenshot(
        self, scene: str | None = None, frames: int = 10, width: int = 512, height: int = 512
    ) -> list[str | Image]:
        """Render a scene in a window (virtual display) and return the frame; blank frames are flagged.

        Args:
            scene: Scene to show (default: the main scene).
            frames: Frame to capture (lets scripts move things first).
            width: Image width.
            height: Image height.
        """
        job = HarnessJob(scene=scene or "", frames=frames, capture_frames=[frames])
        run = await self._run(
            job, timeout=self.run_timeout, window=True, width=width, height=height
        )
        if not run.images:
            raise ToolError("no frame was captured:\n" + problems(run))
        data = run.images[-1]
        text = f"frame {frames} of {scene or self.project.main_scene}, {width}x{height}"
        blank = blank_frame(data)
        if blank:
            text += f"\nWARNING: the frame is blank (one colour {blank}): no camera, no light, or nothing in view?"
        if run.errors:
            text += "\n" + format_diagnostics(run.errors)
        return [text, Image(data)]

    async def _run(
        self,
        job: HarnessJob,
        *,
        timeout: float,
        window: bool = False,
        width: int = 512,
        height: int = 512,
    ) -> EngineRun:
        return await self.engine.run_harness(
            self.project.path, job, timeout=timeout, window=window, width=width, height=height
        )

    # ---------- the live game

    async def _live(self) -> GameSession:
        if self._game is None or not self._game.alive:
            if self._game is not None:
                await self._game.close()
            self._game = GameSession(self.project, self.engine)
            try:
                await self._game.start()
            except BridgeError as err:
                self._game = None
                raise ToolError(str(err)) from None
        return self._game

    @tool
    async def game_tree(self, path: str = "") -> str:
        """Start the game if needed and show its live scene tree with property values.

        Args:
            path: Node path to start from (default: the current scene).
        """
        game = await self._live()
        try:
            tree: NodeInfo = await game.tree(path)
        except BridgeError as err:
            raise ToolError(str(err)) from None
        return tree.outline() + _errors_suffix(game)

    @tool
    async def game_set(self, node: str, property: str, value: str) -> str:
        """Set a property on a node of the running game.

        Args:
            node: Node path relative to the current scene.
            property: Property name.
            value: A Godot literal, e.g. Vector3( 0, 2, 0 ).
        """
        game = await self._live()
        _value(value)
        try:
            new = await game.set(node, property, value)
        except BridgeError as err:
            raise ToolError(str(err)) from None
        return (
            f"{node}.{property} = {format_variant(new, self.project.dialect.style)}"
            + _errors_suffix(game)
        )

    @tool
    async def game_input(self, action: str, seconds: float = 0.5) -> str:
        """Hold an input action (e.g. "ui_right", "jump") in the running game, then release it.

        Args:
            action: An action of the project's input map.
            seconds: How long to hold it.
        """
        import anyio

        game = await self._live()
        try:
            await game.input(action, True)
            await anyio.sleep(max(0.0, seconds))
            await game.input(action, False)
        except BridgeError as err:
            raise ToolError(str(err)) from None
        return f"held {action} for {seconds:.2f}s" + _errors_suffix(game)

    @tool
    async def game_screenshot(self) -> list[str | Image]:
        """The current frame of the running game."""
        game = await self._live()
        try:
            data = await game.screenshot()
        except BridgeError as err:
            raise ToolError(str(err)) from None
        blank = blank_frame(data)
        note = f"\nWARNING: the frame is blank (one colour {blank})" if blank else ""
        return ["live frame" + note + _errors_suffix(game), Image(data)]

    @tool
    async def game_stop(self) -> str:
        """Stop the running game."""
        if self._game is None:
            return "no game was running"
        await self._game.close()
        self._game = None
        return "stopped"


def _errors_suffix(game: GameSession) -> str:
    errors = [d for d in game.recent_errors() if d.severity == "error"]
    return "\nerrors so far:\n" + format_diagnostics(errors) if errors else ""
