"""The mono-hosted stand-in for a Unity Editor: the package's real bridge and handlers on stub engines.

There is no Unity Editor on a CI machine. The package's Core and Unity handler sources are
compiled with mcs against small behavioural stubs of UnityEngine/UnityEditor (``stubs/``: an
in-memory scene, scripts "compiled" by the real mcs and loaded, prefabs and scenes as text files)
and served by ``mono``. Tests and the ``unity`` task suite drive it exactly as they would an editor.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import anyio
from agentsdk.sandbox import ManagedProcess, start_process

from .csharp import find_mcs
from .settings import BridgeSettings
from .toolkit import UnityToolkit

HERE = Path(__file__).parent
STUBS = HERE / "stubs"


def package_dir() -> Path:
    """The editor package (``unity-package``): inside the wheel, or beside the sources in a checkout."""
    for candidate in (HERE / "unity-package", HERE.parents[1] / "unity-package"):
        if (candidate / "package.json").exists():
            return candidate
    raise FileNotFoundError("the com.agentsdk.unity-bridge sources (unity-package) are missing")


def _mcs(
    out: Path, sources: list[Path], references: tuple[Path, ...] = (), exe: bool = False
) -> str:
    argv = [
        find_mcs(),
        f"-target:{'exe' if exe else 'library'}",
        f"-out:{out}",
        *(f"-r:{r}" for r in references),
        *map(str, sources),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=180, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"mcs failed to build {out.name}:\n{done.stdout}\n{done.stderr}")
    return done.stdout + done.stderr


def build_stub_editor(out_dir: Path) -> dict[str, str]:
    """Builds the stub engine assemblies, the package's Core and Unity handlers against them, and the host.

    The same assembly split as inside Unity (UnityEngine.dll, UnityEditor.dll,
    UnityEditor.TestRunner.dll, AgentSdk.Unity.Bridge.Core.dll, AgentSdk.Unity.Bridge.Editor.dll)
    plus ``stub-editor.exe``. Returns mcs's output per assembly (warnings included).
    """
    package = package_dir()
    core_sources = sorted((package / "Editor" / "Core").glob("*.cs"))
    unity_sources = sorted((package / "Editor" / "Unity").glob("*.cs"))
    out_dir.mkdir(parents=True, exist_ok=True)
    engine, editor = out_dir / "UnityEngine.dll", out_dir / "UnityEditor.dll"
    runner, core = (
        out_dir / "UnityEditor.TestRunner.dll",
        out_dir / "AgentSdk.Unity.Bridge.Core.dll",
    )
    handlers = out_dir / "AgentSdk.Unity.Bridge.Editor.dll"
    output = {
        engine.name: _mcs(engine, [STUBS / "UnityEngine.cs"]),
        editor.name: _mcs(editor, [STUBS / "UnityEditor.cs"], (engine,)),
        runner.name: _mcs(runner, [STUBS / "TestRunner.cs"], (engine,)),
        core.name: _mcs(core, core_sources),
    }
    output[handlers.name] = _mcs(handlers, unity_sources, (engine, editor, runner, core))
    exe = out_dir / "stub-editor.exe"
    output[exe.name] = _mcs(
        exe, [STUBS / "StubEditorHost.cs"], (engine, editor, core, handlers), exe=True
    )
    return output


def cached_build() -> Path:
    """``stub-editor.exe``, built once per version of its sources in the user cache."""
    sources = sorted(STUBS.glob("*.cs")) + sorted(package_dir().glob("Editor/*/*.cs"))
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = cache / "agentsdk" / "unity-stub-editor" / digest.hexdigest()[:16]
    exe = folder / "stub-editor.exe"
    if not exe.exists():
        # Built beside and renamed into place: a concurrent build never sees half a folder.
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix="build-", dir=folder.parent))
        build_stub_editor(staging)
        try:
            staging.rename(folder)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)  # another process won the race
    return exe


class StubEditor:
    """One stub editor process serving a project folder (``Library/AgentSdkBridge`` like Unity's)."""

    def __init__(self, project: Path, exe: Path | None = None) -> None:
        self.project = project
        self.exe = exe
        self.process: ManagedProcess | None = None

    @property
    def bridge_dir(self) -> Path:
        """Where connection.json, status.json and the journal are."""
        return self.project / "Library" / "AgentSdkBridge"

    def settings(self, **overrides: object) -> BridgeSettings:
        """Client settings that find this editor through its connection.json."""
        return BridgeSettings(bridge_dir=self.bridge_dir, **overrides)

    async def start(self, timeout: float = 60.0) -> None:
        """Starts mono and waits until the bridge listens."""
        exe = self.exe or await anyio.to_thread.run_sync(cached_build)
        mono = shutil.which("mono")
        if mono is None:
            raise RuntimeError("'mono' is not installed: run scripts/setup.d/unity.sh")
        self.project.mkdir(parents=True, exist_ok=True)
        argv = [mono, "--debug", str(exe), "--project", str(self.project)]
        self.process = start_process(argv, env={"LANG": "C.UTF-8"})
        stdout = self.process.popen.stdout
        assert stdout is not None
        line = b""
        with anyio.move_on_after(timeout):
            while not line.endswith(b"\n"):
                chunk = await anyio.to_thread.run_sync(stdout.read, 1)
                if not chunk:
                    break
                line += chunk
        if not line.startswith(b"LISTENING "):
            await self.stop()
            raise RuntimeError(f"the stub editor did not start: {line!r}")

    async def stop(self) -> None:
        """Closes its stdin (it quits like an editor, writing status 'stopped'), then kills the group."""
        process, self.process = self.process, None
        if process is None:
            return
        stdin = process.popen.stdin
        if stdin is not None and not stdin.closed:
            stdin.close()
        try:
            await anyio.to_thread.run_sync(lambda: process.popen.wait(timeout=5))
        except subprocess.TimeoutExpired:
            pass  # killed below with its group
        process.kill()


class StubEditorToolkit(UnityToolkit):
    """UnityToolkit on its own stub editor with a fresh, empty project; ``reset()`` starts a new one.

    For tests and the ``unity`` task suite. A real editor would reset by opening a new scene and
    deleting the task's assets; here a new process on a new project folder is cheaper and cleaner.
    """

    def __init__(
        self,
        *,
        groups: Sequence[str] | str = ("core",),
        check_scripts: bool = True,
        compile_timeout: float = 120.0,
    ) -> None:
        super().__init__(
            groups=groups, check_scripts=check_scripts, compile_timeout=compile_timeout
        )
        self._root: Path | None = None
        self._editor: StubEditor | None = None
        self._generation = 0

    @property
    def project(self) -> Path:
        """The current project folder (Assets/, Library/)."""
        if self._editor is None:
            raise RuntimeError("the stub editor is not running: enter the toolkit first")
        return self._editor.project

    async def start(self) -> None:
        """Starts a stub editor on an empty project."""
        await super().start()
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="agentsdk-unity-"))
        self._generation += 1
        editor = StubEditor(self._root / f"Project{self._generation}")
        await editor.start()
        self._editor = editor
        await self.bridge.aclose()
        self.bridge = type(self.bridge)(editor.settings())

    async def reset(self) -> None:
        """A new editor on a new empty project: nothing of the last task is left."""
        await self._stop_editor()
        await self.start()

    async def close(self) -> None:
        """Stops the editor and deletes its projects."""
        await self._stop_editor()
        await super().close()
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None

    async def _stop_editor(self) -> None:
        editor, self._editor = self._editor, None
        await self.bridge.aclose()
        if editor is not None:
            await editor.stop()
            shutil.rmtree(editor.project, ignore_errors=True)
