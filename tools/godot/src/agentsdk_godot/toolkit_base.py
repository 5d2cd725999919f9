"""What the Godot tool groups share: the project, the engine, tool groups, where pictures go,
and the engine runs behind the tools (headless runs, screenshots with reports, measurements)."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, ClassVar

from agentsdk.tools import check_groups
from agentsdk.vision import VisibilityReport
from pydantic import BeforeValidator, WithJsonSchema

from agentsdk import Tool, ToolContext, ToolError, Toolkit
from agentsdk_godot.bridge import GameSession
from agentsdk_godot.diagnostics import Diagnostic
from agentsdk_godot.engine import EngineRun, GodotEngine, HarnessJob
from agentsdk_godot.measure import SceneMeasurements
from agentsdk_godot.project import GodotProject, ProjectPathError
from agentsdk_godot.properties import maybe_literal
from agentsdk_godot.reports import (
    SceneChange,
    problems,
    script_hints,
    shadowing_hints,
    source_lines,
)
from agentsdk_godot.scene import SceneError, SceneFile
from agentsdk_godot.validation import ClassCatalog
from agentsdk_godot.values import resource_name
from agentsdk_godot.variant import Constructor, ExtResource, VariantSyntaxError, format_variant
from agentsdk_godot.versions import GodotDialect, dialect_for

__all__ = [
    "TOOL_GROUPS",
    "GodotToolkitBase",
    "Look",
    "OptColour",
    "OptInt",
    "OptNames",
    "OptNumber",
    "OptPoint",
    "OptProperties",
    "OptSize",
    "OptText",
]

# Optional arguments as the model sees them: the same validation, without pydantic's
# `anyOf [..., null]` branch (the schemas go into a small model's prompt; omitted means None).
OptText = Annotated[str | None, WithJsonSchema({"type": "string"})]
OptInt = Annotated[int | None, WithJsonSchema({"type": "integer"})]
OptNumber = Annotated[float | None, WithJsonSchema({"type": "number"})]
OptNames = Annotated[
    list[str] | None, WithJsonSchema({"type": "array", "items": {"type": "string"}})
]


def _as_texts(value: object) -> object:
    """Property values written as JSON numbers, booleans or lists ({"size": [1, 1, 1]}) as the
    text the tools read (a model not held to the schema writes them so)."""
    if not isinstance(value, dict):
        return value
    return {key: item if isinstance(item, str) else json.dumps(item) for key, item in value.items()}


OptProperties = Annotated[
    dict[str, str] | None,
    BeforeValidator(_as_texts),
    WithJsonSchema({"type": "object", "additionalProperties": {"type": "string"}}),
]
# a shape's size: [x, y, z] as the schema says; a number or a text ("1 x 1 x 1") is read too
OptSize = Annotated[
    list[float] | float | str | None,
    WithJsonSchema({"type": "array", "items": {"type": "number"}}),
]

# a point, [x, y, z] or [x, y] as the schema says; a text ("0, 2, 6", "Vector3( 0, 2, 6 )") too
OptPoint = Annotated[
    list[float] | str | None,
    WithJsonSchema({"type": "array", "items": {"type": "number"}}),
]


def _colour_text(value: object) -> object:
    """A colour written as a JSON list ([1, 0, 0]) as the text the tools read."""
    return json.dumps(value) if isinstance(value, list | tuple) else value


OptColour = Annotated[str | None, BeforeValidator(_colour_text), WithJsonSchema({"type": "string"})]

TOOL_GROUPS: dict[str, tuple[str, ...]] = {
    "core": (
        "create_scene",
        "add_node",
        "set_property",
        "remove_node",
        "write_script",
        "attach_script",
        "scene_tree",
        "run_project",
        "screenshot",
        "fit_view",
    ),
    "check": (
        "measure",
        "assert_in_frame",
        "assert_rests_on",
        "assert_overlap",
        "assert_distance",
        "compare_screenshots",
    ),
    "assets": ("import_asset",),
    "live": ("game_tree", "game_set", "game_input", "game_screenshot", "game_stop"),
}
"""Tool groups: ``core`` is on by default; the others are opt-in (``groups=[...]`` or ``"all"``)."""


_GODOT3_ONLY = (
    "visibility reports and measurements are implemented in the Godot 3 harness only; "
    "this project runs on Godot 4"
)


class Look:
    """A screenshot and what it shows (with `measurements` of the same run when asked)."""

    def __init__(
        self,
        png: bytes,
        report: VisibilityReport,
        run: EngineRun,
        measurements: SceneMeasurements | None = None,
    ):
        self.png = png
        self.report = report
        self.run = run
        self.measurements = measurements


def instructions_for(dialect: GodotDialect) -> str:
    """What the toolkit tells the model, in the engine generation's class names and literal
    spelling (on Godot 3, the text the Godot suite was measured with)."""
    name, major = dialect.class_name, dialect.major
    vector = format_variant(Constructor("Vector3", (0, 1, 0)), dialect.style)
    colour = format_variant(Constructor("Color", (1, 0, 0, 1)), dialect.style)
    nodes = ", ".join(name(c) for c in ("Spatial", "MeshInstance", "Camera", "DirectionalLight"))
    return (
        f"You build Godot {major} games with the godot tools. Values are Godot literals such as "
        f"{vector}, {colour}, 2.5, true; text is written as it is; a new "
        f"resource is written {name('CubeMesh')}() or SphereMesh(), and a field of a resource is set "
        f"with a path such as mesh/size or mesh/material/albedo_color. Godot {major} 3D nodes are "
        f"{nodes}; scripts start with `extends <Class>`. "
        "When a tool reports an error, read the file and line, fix it and try again. "
        "Finish with a short plain-text answer."
    )


class GodotToolkitBase(Toolkit):
    """Shared state of the Godot tool groups (see ``GodotToolkit``)."""

    name = "godot"
    instructions = instructions_for(dialect_for(3))  # Godot 4 speaks its own once found
    groups_available: ClassVar[dict[str, tuple[str, ...]]] = TOOL_GROUPS

    def __init__(
        self,
        project_dir: str | Path | None = None,
        *,
        engine: GodotEngine | None = None,
        groups: Sequence[str] | str = ("core",),
        run_timeout: float = 60.0,
        output_dir: str | Path | None = None,
        renderer: str | None = "GLES2",
        script_check_frames: int = 10,
        prefix: str | None = None,
    ):
        super().__init__(prefix=prefix)
        self.groups = check_groups(groups, TOOL_GROUPS)
        self._project_dir = Path(project_dir) if project_dir else None
        self._engine = engine
        self._owns_engine = engine is None
        self._temp: Path | None = None
        self._project: GodotProject | None = None
        self._game: GameSession | None = None
        self._scratch: Path | None = None
        self._shots = 0
        self._reports: dict[Path, VisibilityReport] = {}
        self._catalog: ClassCatalog | None = None  # the engine's classes, asked lazily
        self.run_timeout = run_timeout
        self.output_dir = Path(output_dir) if output_dir is not None else None
        self.renderer = renderer
        # Frames a scene runs headless after a script it uses is attached or rewritten, so a
        # runtime error (a null instance, a bad operand) shows in that call's result; 0: off.
        self.script_check_frames = script_check_frames

    def tools(self) -> list[Tool]:
        """The tools of the chosen groups, in group order."""
        return self.tools_of_groups(self.groups)

    # ---------- lifecycle

    async def start(self) -> None:
        """Find Godot and open (or create) the project."""
        if self._engine is None:
            self._engine = GodotEngine(renderer=self.renderer)
        major = (await self._engine.version()).major
        if self._project_dir is None or self._temp is not None:
            self._temp = Path(tempfile.mkdtemp(prefix="agentsdk-godot-project-"))
            self._project_dir = self._temp
        self._project = GodotProject.create(self._project_dir, major=major)
        self.instructions = instructions_for(self._project.dialect)

    async def close(self) -> None:
        """Stop a running game, restore the project, remove temporary folders. Idempotent."""
        await self._stop_game()
        if self._temp is not None:
            shutil.rmtree(self._temp, ignore_errors=True)
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
        if self._engine is not None and self._owns_engine:
            self._engine.close()
            self._engine = None

    async def reset(self) -> None:
        """A fresh, empty project with the same engine: stops the game, forgets screenshots
        and the engine's user data; a temporary project is replaced by an empty one (a project
        folder you gave is kept as it is: its files are never deleted)."""
        await self._stop_game()
        self._reports.clear()
        self._shots = 0
        if self._catalog is not None:
            self._catalog.forget_scripts()
        if self._engine is not None:
            self._engine.clear_user_data()
        if self._temp is not None:
            shutil.rmtree(self._temp, ignore_errors=True)
            self._temp.mkdir(parents=True)
            assert self._engine is not None
            major = (await self._engine.version()).major
            self._project = GodotProject.create(self._temp, major=major)

    async def _stop_game(self) -> None:
        if self._game is not None:
            await self._game.close()
            self._game = None

    @property
    def project(self) -> GodotProject:
        """The project the tools work on (after start)."""
        if self._project is None:
            raise RuntimeError("GodotToolkit is not started: use `async with GodotToolkit()`")
        return self._project

    @property
    def engine(self) -> GodotEngine:
        """The engine used for runs (after start)."""
        if self._engine is None:
            raise RuntimeError("GodotToolkit is not started: use `async with GodotToolkit()`")
        return self._engine

    # ---------- scene files

    def _scene(self, path: str) -> SceneFile:
        try:
            missing = path.endswith(".tscn") and not self.project.file(path).exists()
            if missing:
                others = ", ".join(self.project.scenes()) or "none yet"
                raise ToolError(
                    f"{self.project.res_path(self.project.file(path))} does not exist: create it "
                    f'first with create_scene(path="{path}") (scenes: {others})'
                )
            return self.project.read_scene(path)
        except (ProjectPathError, SceneError, VariantSyntaxError) as err:
            raise ToolError(str(err)) from None

    def _bytes_of(self, path: str) -> bytes | None:
        """The file as it is on disk, or None when there is none (or no such path)."""
        try:
            return self.project.file(path).read_bytes()
        except (ProjectPathError, OSError):
            return None

    def _save(self, path: str, scene: SceneFile, node: str, detail: str) -> SceneChange:
        saved = self.project.write_scene(path, scene)
        return SceneChange(
            scene=saved, node=node, detail=detail, nodes=[n.path for n in scene.nodes]
        )

    def _scene_or_main(self, scene: str | None) -> str:
        chosen = scene or self.project.main_scene
        if not chosen:
            found = self.project.scenes()
            if found:
                raise ToolError(
                    f'no scene given and the project has no main scene: name one, e.g. scene="{found[0]}" '
                    f"(scenes: {', '.join(found)})"
                )
            raise ToolError(
                "the project has no scene yet: create one first with "
                'create_scene(path="res://main.tscn", main=true)'
            )
        if not self.project.file(chosen).exists():
            raise ToolError(f"{chosen} does not exist (scenes: {', '.join(self.project.scenes())})")
        return chosen

    async def _known(self, doc: SceneFile, classes: list[str], values: list[str]) -> ClassCatalog:
        """The class catalog, with every class these edits may touch loaded."""
        if self._catalog is None or self._catalog.project != self.project.path:
            self._catalog = ClassCatalog(self.engine, self.project.path)
        wanted = list(classes) + [s.type for s in doc.sub_resources]
        wanted += [n.type for n in doc.nodes if n.type]
        for text in values:
            value = maybe_literal(text)
            if isinstance(value, Constructor) and not value.args:
                wanted.append(self.project.dialect.class_name(value.name))
            elif value is None and resource_name(text):  # CubeMesh, CubeMesh.new()
                wanted.append(self.project.dialect.class_name(resource_name(text) or ""))
        scripts = [
            e.path
            for n in doc.nodes
            for e in doc.ext_resources
            if n.properties.get("script") == ExtResource(e.id)
            and self.project.file(e.path).exists()
        ]
        await self._catalog.load(wanted, scripts)
        return self._catalog

    async def _about_errors(self, errors: list[Diagnostic], *, whole: bool) -> str:
        """What follows script errors in a result: hint lines (`reports.script_hints`,
        `reports.shadowing_hints`) and the numbered lines they are about (`source_lines`)."""
        catalog = await self._known(self.project.new_scene("Probe", "Node"), [], [])
        hints = script_hints(errors, set(catalog.all_classes), self.project.dialect.class_name)
        hints += shadowing_hints(self.project, errors)
        return hints + source_lines(self.project, errors, whole=whole)

    # ---------- engine runs (also the Python API verifiers use)

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

    async def look(
        self,
        scene: str | None = None,
        frames: int = 10,
        width: int = 512,
        height: int = 512,
        *,
        measure: bool = False,
    ) -> Look:
        """Render `scene` at `frames` and measure what the picture shows (a `Look`); with
        `measure`, the same run also measures the scene (after the picture)."""
        chosen = self._scene_or_main(scene)
        if not (16 <= width <= 4096 and 16 <= height <= 4096):
            raise ToolError(f"width and height must be 16..4096 pixels, not {width}x{height}")
        frames = max(1, frames)
        if self.project.dialect.major != 3:
            raise ToolError(_GODOT3_ONLY)
        with tempfile.TemporaryDirectory(prefix="agentsdk-godot-look-") as tmp:
            job = HarnessJob(scene=chosen, frames=frames, report_frame=frames)
            if measure:
                job.measure_out = str(Path(tmp) / "measure.json")
            run = await self._run(
                job, timeout=self.run_timeout, window=True, width=width, height=height
            )
        if run.report is None or run.report_image is None:
            raise ToolError("no frame was captured:\n" + problems(run))
        found = SceneMeasurements.from_dump(run.measurements) if run.measurements else None
        return Look(run.report_image, run.report, run, found)

    async def measurements(
        self, scene: str | None = None, width: int = 512, height: int = 512, frames: int = 1
    ) -> SceneMeasurements:
        """World bounds of every node after `frames` frames, and the camera's view at that size."""
        chosen = self._scene_or_main(scene)
        if self.project.dialect.major != 3:
            raise ToolError(_GODOT3_ONLY)
        with tempfile.TemporaryDirectory(prefix="agentsdk-godot-measure-") as tmp:
            job = HarnessJob(
                scene=chosen,
                frames=max(1, frames),
                measure_out=str(Path(tmp) / "measure.json"),
                view_width=width,
                view_height=height,
            )
            run = await self._run(job, timeout=self.run_timeout)
        if run.measurements is None:
            raise ToolError(f"the engine could not open {chosen}:\n" + problems(run))
        return SceneMeasurements.from_dump(run.measurements)

    # ---------- where pictures go

    def _keep(self, data: bytes, name: str, ctx: ToolContext | None) -> Path:
        """Save a picture: `output_dir` if set, else the run's artifacts, else a scratch folder."""
        self._shots += 1
        if self.output_dir is None and ctx is not None:
            return ctx.artifacts.save_bytes(name, data)
        folder = self.output_dir
        if folder is None:
            if self._scratch is None:
                self._scratch = Path(tempfile.mkdtemp(prefix="agentsdk-godot-shots-"))
            folder = self._scratch
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self._shots:03d}-{name}"
        path.write_bytes(data)
        return path

    def _picture_folders(self, ctx: ToolContext | None) -> list[Path]:
        found = [p for p in (self.output_dir, self._scratch) if p is not None]
        if ctx is not None:
            found.append(ctx.artifacts.dir)
        return found
