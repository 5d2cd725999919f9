"""Running Godot: find the binaries, run helper scripts headless or under a virtual display,
validate GDScript, import assets. Every run is a child process group that is killed on timeout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from agentsdk.sandbox import ProcessResult, run_process, start_process
from agentsdk.vision import VisibilityReport
from pydantic import BaseModel, Field

from agentsdk_godot.diagnostics import Diagnostic, parse_diagnostics
from agentsdk_godot.display import VirtualDisplay
from agentsdk_godot.versions import GodotDialect, GodotVersion, dialect_for, parse_version
from agentsdk_godot.visibility import read_report

__all__ = [
    "ClassInfo",
    "ClassReport",
    "EngineRun",
    "GodotEngine",
    "GodotNotFoundError",
    "HarnessJob",
    "ImportReport",
    "NodeInfo",
    "ScriptInfo",
]

_SERVER_NAMES = ("godot3-server", "godot", "godot4", "godot3")
_RUNNER_NAMES = ("godot3-runner", "godot", "godot4", "godot3")


class GodotNotFoundError(RuntimeError):
    """No Godot binary was found (install godot3-server/godot3-runner or set GODOT_BIN)."""


class NodeInfo(BaseModel):
    """A node as the engine sees it: class, script, non-default properties, children."""

    name: str
    type: str
    script: str = ""
    properties: dict[str, str] = Field(
        default_factory=dict, description="non-default properties as Godot literals"
    )
    children: list[NodeInfo] = Field(default_factory=list)

    def find(self, path: str) -> NodeInfo | None:
        """The descendant at a relative path like "Box/Child"."""
        node: NodeInfo | None = self
        for part in [p for p in path.split("/") if p and p != "."]:
            node = next((c for c in node.children if c.name == part), None) if node else None
        return node

    def outline(self, indent: int = 0) -> str:
        """An indented text tree."""
        script = f" [{self.script}]" if self.script else ""
        lines = [f"{'  ' * indent}{self.name} ({self.type}){script}"]
        lines += [f"{'  ' * indent}  .{k} = {v}" for k, v in self.properties.items()]
        lines += [c.outline(indent + 1) for c in self.children]
        return "\n".join(lines)


class HarnessJob(BaseModel):
    """What the bundled harness script should do in one engine run."""

    scene: str = Field("", description="res:// scene; empty = the project's main scene")
    frames: int = 0
    seconds: float = 0.0
    capture_frames: list[int] = Field(default_factory=list)
    capture_dir: str = ""
    tree_out: str = ""
    tree_depth: int = 32
    report_frame: int = Field(0, description="frame whose picture gets a visibility report")
    report_dir: str = ""
    report_scale: int = Field(3, description="odd: the passes cover this many frames across")
    alone_limit: int = Field(32, description="objects rendered alone (occlusion, cut-off)")
    measure_out: str = Field("", description="write world bounds and projections here")
    view_width: int = 0
    view_height: int = 0


class EngineRun(BaseModel):
    """The outcome of one engine process."""

    argv: list[str]
    exit_code: int | None
    timed_out: bool
    duration_s: float
    frames: int | None = None
    stdout: str
    stderr: str
    diagnostics: list[Diagnostic]
    tree: NodeInfo | None = None
    frames_png: list[str] = Field(
        default_factory=list, description="captured frames on disk (when the job named a folder)"
    )
    images: list[bytes] = Field(
        default_factory=list, description="PNG bytes of the captured frames, in frame order"
    )
    display: int | None = Field(None, description="X display number of a windowed run")
    report: VisibilityReport | None = None
    report_image: bytes | None = Field(None, description="the picture the report describes")
    measurements: dict[str, Any] | None = None

    @property
    def errors(self) -> list[Diagnostic]:
        """Only the error diagnostics."""
        return [d for d in self.diagnostics if d.severity == "error"]


class GodotEngine:
    """The installed Godot: a headless binary, optionally a windowed one for screenshots."""

    def __init__(
        self,
        server: str | None = None,
        runner: str | None = None,
        *,
        isolate_user_data: bool = True,
        temp_dir: str | Path | None = None,
        renderer: str | None = None,
    ):
        """`temp_dir`: where runs keep their scratch folders (default: the system's).
        `renderer`: the windowed runs' renderer (Godot 3: "GLES2" or "GLES3"; default: the
        project's own setting)."""
        found = server or os.environ.get("GODOT_BIN") or _which(_SERVER_NAMES)
        self.runner = runner or os.environ.get("GODOT_RUNNER_BIN") or _which(_RUNNER_NAMES)
        if not found:
            raise GodotNotFoundError(
                "no Godot binary found: install `godot3-server godot3-runner` (apt) "
                "or set GODOT_BIN to a Godot 3/4 executable"
            )
        self.server: str = found
        self._version: GodotVersion | None = None
        self.temp_dir = Path(temp_dir) if temp_dir is not None else None
        self.renderer = renderer
        self._home = Path(tempfile.mkdtemp(prefix="agentsdk-godot-home-", dir=self.temp_dir))
        self.isolate_user_data = isolate_user_data

    async def version(self) -> GodotVersion:
        """`--version` of the headless binary (cached)."""
        if self._version is None:
            result = await run_process([self.server, "--version"], timeout=30, env=self.env())
            self._version = parse_version(result.stdout + result.stderr)
        return self._version

    async def dialect(self) -> GodotDialect:
        """The version-specific behaviour for the installed engine."""
        return dialect_for((await self.version()).major)

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """Environment for engine processes (UTF-8 locale, software GL, private user data)."""
        env = {"LANG": "en_US.UTF-8", "LC_ALL": "en_US.UTF-8", "LIBGL_ALWAYS_SOFTWARE": "1"}
        if self.isolate_user_data:
            for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
                env[name] = str(self._home / name.lower())
                Path(env[name]).mkdir(parents=True, exist_ok=True)
        if self.temp_dir is not None:
            env["TMPDIR"] = str(self.temp_dir)
        env.update(extra or {})
        return env

    @property
    def user_data_dir(self) -> Path:
        """The private folder that holds `user://` and editor settings while the engine lives."""
        return self._home

    def clear_user_data(self) -> None:
        """Empty the private user-data folder (`user://` saves, editor settings) between tasks."""
        if self.isolate_user_data:
            for child in self._home.iterdir():
                shutil.rmtree(child, ignore_errors=True)

    def close(self) -> None:
        """Remove the private user-data folder."""
        shutil.rmtree(self._home, ignore_errors=True)

    # ---------- runs

    async def run_harness(
        self,
        project: Path,
        job: HarnessJob,
        *,
        window: bool = False,
        width: int = 512,
        height: int = 512,
        timeout: float = 30.0,
        fixed_fps: int | None = None,
    ) -> EngineRun:
        """Run a scene through the bundled harness (headless, or windowed under Xvfb).

        `fixed_fps`: every frame advances the game by exactly 1/fixed_fps seconds, however long
        it took (deterministic motion for checks)."""
        dialect = await self.dialect()
        with tempfile.TemporaryDirectory(prefix="agentsdk-godot-run-", dir=self.temp_dir) as tmp:
            work = Path(tmp)
            script = work / "harness.gd"
            script.write_text(dialect.helper_script("harness.gd"), encoding="utf-8")
            if job.capture_frames and not job.capture_dir:
                job = job.model_copy(update={"capture_dir": str(work)})
            if not job.tree_out:
                job = job.model_copy(update={"tree_out": str(work / "tree.json")})
            if job.report_frame and not job.report_dir:
                (work / "report").mkdir()
                job = job.model_copy(update={"report_dir": str(work / "report")})
            job_file = work / "job.json"
            job_file.write_text(job.model_dump_json(), encoding="utf-8")
            env = self.env({"AGENTSDK_GODOT_JOB": str(job_file)})
            answers = dialect.debugger_answers()
            timing = ["--fixed-fps", str(fixed_fps)] if fixed_fps else []
            if window:
                argv = dialect.window_argv(
                    self._runner(),
                    project,
                    script,
                    width,
                    height,
                    debug=True,
                    renderer=self.renderer,
                )
                argv[1:1] = timing
                async with self.display(width, height) as display:
                    env.update(display.env)
                    result = await run_process(argv, env=env, timeout=timeout, input=answers)
                    number = display.number
            else:
                number = None
                argv = dialect.headless_argv(self.server, project, script, debug=True)
                argv[1:1] = timing
                result = await run_process(argv, env=env, timeout=timeout, input=answers)
            tree_file = Path(job.tree_out)
            tree = None
            if tree_file.exists() and tree_file.stat().st_size:  # noqa: ASYNC240
                dumped = json.loads(tree_file.read_text(encoding="utf-8"))  # noqa: ASYNC240
                # null: the harness had no tree to dump (the main scene failed to load or
                # has no root); the run's output says why, so it is a run without a tree.
                tree = NodeInfo.model_validate(dumped) if dumped is not None else None
            found = Path(job.capture_dir).glob("frame_*.png") if job.capture_dir else []  # noqa: ASYNC240
            frames = sorted(found, key=lambda p: int(p.stem.split("_")[1]))
            images = [frame.read_bytes() for frame in frames]
            extra: dict[str, Any] = {"display": number}
            report_dir = Path(job.report_dir) if job.report_dir else None
            if report_dir is not None and (report_dir / "report.json").exists():
                extra["report"] = read_report(report_dir)
                extra["report_image"] = (report_dir / "beauty.png").read_bytes()
            if job.measure_out and Path(job.measure_out).exists():  # noqa: ASYNC240
                extra["measurements"] = json.loads(Path(job.measure_out).read_text())  # noqa: ASYNC240
            # frames stay on disk only in a folder the caller chose
            kept = [str(f) for f in frames] if job.capture_dir != str(work) else []
        return _engine_run(result, tree, kept, images).model_copy(update=extra)

    def _runner(self) -> str:
        if not self.runner:
            raise GodotNotFoundError(
                "screenshots need a windowed Godot: install `godot3-runner` (apt) or set GODOT_RUNNER_BIN"
            )
        return self.runner

    def display(self, width: int, height: int) -> VirtualDisplay:
        """A private virtual X display for a windowed run (`async with`)."""
        return VirtualDisplay(width, height, temp_dir=self.temp_dir)

    async def class_info(
        self,
        project: Path,
        classes: list[str],
        scripts: list[str] | None = None,
        *,
        all_classes: bool = False,
        colours: list[str] | None = None,
        timeout: float = 30.0,
    ) -> ClassReport | None:
        """Ask the engine which classes exist, their properties and the properties' types, and
        what named colours are (None: no helper for this engine generation, or the engine could
        not answer)."""
        dialect = await self.dialect()
        try:
            helper = dialect.helper_script("classinfo.gd")
        except FileNotFoundError:
            return None
        with tempfile.TemporaryDirectory(
            prefix="agentsdk-godot-classes-", dir=self.temp_dir
        ) as tmp:
            work = Path(tmp)
            (work / "classinfo.gd").write_text(helper, encoding="utf-8")
            out = work / "classes.json"
            job = {
                "classes": classes,
                "scripts": scripts or [],
                "all_classes": all_classes,
                "colours": colours or [],
                "out": str(out),
            }
            (work / "job.json").write_text(json.dumps(job), encoding="utf-8")
            argv = dialect.headless_argv(self.server, project, work / "classinfo.gd", debug=False)
            await run_process(
                argv, timeout=timeout, env=self.env({"AGENTSDK_GODOT_JOB": str(work / "job.json")})
            )
            if not out.exists():
                return None
            return ClassReport.model_validate_json(out.read_text(encoding="utf-8"))

    async def check_script(
        self, project: Path, res_path: str, timeout: float = 30.0
    ) -> list[Diagnostic]:
        """Parse a GDScript file with the engine; parse errors come back with file and line."""
        dialect = await self.dialect()
        argv = dialect.check_argv(self.server, project, res_path)
        result = await run_process(argv, timeout=timeout, env=self.env())
        found = parse_diagnostics(result.stderr + "\n" + result.stdout)
        errors = [d for d in found if d.severity == "error"]
        if result.timed_out:
            errors.append(
                Diagnostic(
                    severity="error",
                    kind="engine_error",
                    message="the check timed out",
                    file=res_path,
                )
            )
        elif result.returncode != 0 and not errors:
            errors.append(
                Diagnostic(
                    severity="error",
                    kind="parse_error",
                    message=f"the engine rejected the script (exit {result.returncode})",
                    file=res_path,
                )
            )
        return errors + [d for d in found if d.severity == "warning"]

    async def import_assets(
        self, project: Path, sources: list[Path], timeout: float = 90.0
    ) -> ImportReport:
        """Run the engine's import step so `sources` (glTF/GLB, images...) can be loaded."""
        dialect = await self.dialect()
        argv, exits = dialect.import_argv(self.server, project)
        started = time.monotonic()
        if exits:
            result = await run_process(argv, timeout=timeout, env=self.env())
            output, timed_out = result.stderr + "\n" + result.stdout, result.timed_out
        else:
            output, timed_out = await self._import_by_editor(argv, project, sources, timeout)
        imported = [s for s in sources if _import_state(project, s) == "imported"]
        return ImportReport(
            imported=[str(s) for s in imported],
            failed=[str(s) for s in sources if s not in imported],
            timed_out=timed_out,
            duration_s=time.monotonic() - started,
            diagnostics=[d for d in parse_diagnostics(output) if d.severity == "error"],
        )

    async def _import_by_editor(
        self, argv: list[str], project: Path, sources: list[Path], timeout: float
    ) -> tuple[str, bool]:
        # Godot 3: the editor imports on its first scan; the `.import/<name>-<hash>.md5` file is
        # written last (also when the import failed), so wait for it, then stop the editor.
        # Output goes to a file: the editor prints a lot and a full pipe would stall it.
        started = time.monotonic()
        with tempfile.TemporaryFile() as log:
            with start_process(
                argv, env=self.env(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
            ) as proc:
                while time.monotonic() - started < timeout and proc.alive:
                    if all(_import_state(project, s) != "pending" for s in sources):
                        break
                    await _sleep(0.2)
                await _sleep(0.3)
                proc.kill()
                await proc.wait(5)
            log.seek(0)
            output = log.read().decode(errors="replace")
        timed_out = any(_import_state(project, s) == "pending" for s in sources)
        return output, timed_out


class ClassInfo(BaseModel):
    """What the engine's ClassDB says about a class."""

    exists: bool
    node: bool = False
    resource: bool = False
    instantiable: bool = False
    inherits: list[str] = Field(default_factory=list, description="parent classes, nearest first")
    properties: list[str] = Field(default_factory=list)
    types: dict[str, str] = Field(
        default_factory=dict, description='property -> Variant type name ("String", "Vector3")'
    )
    resources: dict[str, list[str]] = Field(
        default_factory=dict,
        description="resource property -> the classes a new value of it can be made from",
    )
    enums: dict[str, str] = Field(
        default_factory=dict, description='int property -> its names, "Left,Center,Right"'
    )


class ScriptInfo(BaseModel):
    """A script's base class and its own (exported and member) properties."""

    ok: bool
    base: str = ""
    properties: list[str] = Field(default_factory=list)
    types: dict[str, str] = Field(default_factory=dict)


class ClassReport(BaseModel):
    """The answer of one class-info run."""

    classes: dict[str, ClassInfo] = Field(default_factory=dict)
    scripts: dict[str, ScriptInfo] = Field(default_factory=dict)
    all_classes: list[str] = Field(default_factory=list)
    colours: dict[str, list[float] | None] = Field(
        default_factory=dict, description="named colour -> RGBA, None when it has no such name"
    )


class ImportReport(BaseModel):
    """Which assets the engine imported."""

    imported: list[str]
    failed: list[str]
    timed_out: bool
    duration_s: float
    diagnostics: list[Diagnostic]


def _import_state(project: Path, source: Path) -> str:
    """ "pending", "imported" or "failed" (an .md5 but no imported resource next to it)."""
    outputs = list((project / ".import").glob(f"{source.name}-*"))
    if not any(p.suffix == ".md5" for p in outputs):
        return "pending"
    return "imported" if any(p.suffix != ".md5" for p in outputs) else "failed"


async def _sleep(seconds: float) -> None:
    import anyio

    await anyio.sleep(seconds)


def _engine_run(
    result: ProcessResult, tree: NodeInfo | None, frames: list[str], images: list[bytes]
) -> EngineRun:
    import re

    finished = re.search(r"AGENTSDK_FINISHED frames=(\d+)", result.stdout)
    return EngineRun(
        argv=list(result.argv),
        exit_code=result.returncode,
        timed_out=result.timed_out,
        duration_s=result.duration,
        frames=int(finished.group(1)) if finished else None,
        stdout=result.stdout[-20000:],
        stderr=result.stderr[-20000:],
        diagnostics=parse_diagnostics(result.stderr + "\n" + result.stdout),
        tree=tree,
        frames_png=frames,
        images=images,
    )


def _which(names: tuple[str, ...]) -> str | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None
