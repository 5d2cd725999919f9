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

from agentsdk.sandbox import ProcessResult, run_process, start_process
from pydantic import BaseModel, Field

from agentsdk_godot.diagnostics import Diagnostic, parse_diagnostics
from agentsdk_godot.versions import GodotDialect, GodotVersion, dialect_for, parse_version

__all__ = [
    "EngineRun",
    "GodotEngine",
    "GodotNotFoundError",
    "HarnessJob",
    "ImportReport",
    "NodeInfo",
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
    frames_png: list[str] = Field(default_factory=list, description="paths of captured frames")

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
    ):
        found = server or os.environ.get("GODOT_BIN") or _which(_SERVER_NAMES)
        self.runner = runner or os.environ.get("GODOT_RUNNER_BIN") or _which(_RUNNER_NAMES)
        if not found:
            raise GodotNotFoundError(
                "no Godot binary found: install `godot3-server godot3-runner` (apt) "
                "or set GODOT_BIN to a Godot 3/4 executable"
            )
        self.server: str = found
        self._version: GodotVersion | None = None
        self._home = Path(tempfile.mkdtemp(prefix="agentsdk-godot-home-"))
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
        env.update(extra or {})
        return env

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
    ) -> EngineRun:
        """Run a scene through the bundled harness (headless, or windowed under Xvfb)."""
        dialect = await self.dialect()
        with tempfile.TemporaryDirectory(prefix="agentsdk-godot-run-") as tmp:
            work = Path(tmp)
            script = work / "harness.gd"
            script.write_text(dialect.helper_script("harness.gd"), encoding="utf-8")
            if job.capture_frames and not job.capture_dir:
                job = job.model_copy(update={"capture_dir": str(work)})
            if not job.tree_out:
                job = job.model_copy(update={"tree_out": str(work / "tree.json")})
            job_file = work / "job.json"
            job_file.write_text(job.model_dump_json(), encoding="utf-8")
            if window:
                argv = self.display_argv(
                    dialect.window_argv(self._runner(), project, script, width, height, debug=True),
                    width,
                    height,
                )
            else:
                argv = dialect.headless_argv(self.server, project, script, debug=True)
            env = self.env({"AGENTSDK_GODOT_JOB": str(job_file)})
            result = await self._run(
                argv, env=env, timeout=timeout, input=dialect.debugger_answers()
            )
            tree_file = Path(job.tree_out)
            tree = None
            if tree_file.exists() and tree_file.stat().st_size:  # noqa: ASYNC240
                tree = NodeInfo.model_validate(json.loads(tree_file.read_text(encoding="utf-8")))  # noqa: ASYNC240
            frames = sorted(Path(job.capture_dir).glob("frame_*.png")) if job.capture_dir else []  # noqa: ASYNC240
            kept: list[str] = []
            if frames:
                keep_dir = Path(tempfile.mkdtemp(prefix="agentsdk-godot-frames-"))
                for frame in frames:
                    kept.append(str(shutil.copy(frame, keep_dir / frame.name)))
        return _engine_run(result, tree, kept)

    async def _run(
        self, argv: list[str], *, env: dict[str, str], timeout: float, input: bytes | None = None
    ) -> ProcessResult:
        for attempt in range(2):
            result = await run_process(argv, timeout=timeout, env=env, input=input)
            # xvfb-run -a can race for a display number when runs start together
            if "Xvfb failed to start" not in result.stderr or attempt:
                return result
        return result

    def _runner(self) -> str:
        if not self.runner:
            raise GodotNotFoundError(
                "screenshots need a windowed Godot: install `godot3-runner` (apt) or set GODOT_RUNNER_BIN"
            )
        return self.runner

    @staticmethod
    def display_argv(argv: list[str], width: int, height: int) -> list[str]:
        """Wrap a windowed command in a private virtual X display (xvfb-run)."""
        if not shutil.which("xvfb-run"):
            raise GodotNotFoundError("screenshots need Xvfb: install `xvfb xauth` (apt)")
        screen = f"-screen 0 {max(width, 64)}x{max(height, 64)}x24"
        return ["xvfb-run", "-a", "-s", screen, *argv]

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


def _engine_run(result: ProcessResult, tree: NodeInfo | None, frames: list[str]) -> EngineRun:
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
    )


def _which(names: tuple[str, ...]) -> str | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None
