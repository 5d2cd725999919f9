"""Builds and runs the bridge core under mono (the console host in ./host) for the tests."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import time
from pathlib import Path

from agentsdk.sandbox import ManagedProcess, start_process
from agentsdk_unity import stub_editor
from agentsdk_unity.settings import BridgeSettings

HERE = Path(__file__).parent
PACKAGE = HERE.parents[2] / "tools" / "unity" / "unity-package"
CORE_SOURCES = sorted((PACKAGE / "Editor" / "Core").glob("*.cs"))
HOST_SOURCES = sorted((HERE / "host").glob("*.cs"))


def require(binary: str) -> str:
    """The binary's path; a missing engine fails loudly (CI installs it via scripts/setup.d/unity.sh)."""
    found = shutil.which(binary)
    if found is None:
        raise RuntimeError(
            f"'{binary}' is not installed: run scripts/setup.d/unity.sh (apt mono-mcs mono-runtime)"
        )
    return found


def mcs(
    out: Path, sources: list[Path], *, target: str = "library", references: tuple[Path, ...] = ()
) -> str:
    """Runs mcs; returns its output (warnings included); raises with the output on failure."""
    argv = [
        require("mcs"),
        f"-target:{target}",
        f"-out:{out}",
        *(f"-r:{r}" for r in references),
        *map(str, sources),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"mcs failed to build {out.name}:\n{done.stdout}\n{done.stderr}")
    return done.stdout + done.stderr


def build_host(out_dir: Path) -> Path:
    """Compiles the bridge core and the console host with mcs into host.exe."""
    exe = out_dir / "host.exe"
    mcs(exe, CORE_SOURCES + HOST_SOURCES, target="exe")
    return exe


def build_stub_editor(out_dir: Path) -> dict[str, str]:
    """The stub editor as the package builds it (agentsdk_unity.stub_editor), into ``out_dir``."""
    return stub_editor.build_stub_editor(out_dir)


class MonoHost:
    """A running bridge core (mono host.exe) with its bridge folder; lives as long as its stdin."""

    def __init__(
        self, exe: Path, bridge_dir: Path, *args: str, project: Path | None = None
    ) -> None:
        self.bridge_dir = bridge_dir
        env = {"LANG": "C.UTF-8"}
        where = ["--project", str(project)] if project else ["--dir", str(bridge_dir)]
        argv = [require("mono"), "--debug", str(exe), *where, *args]
        self.process: ManagedProcess = start_process(argv, env=env)
        self.port = self._wait_listening()

    @property
    def pid(self) -> int:
        """The mono process id."""
        return self.process.pid

    def _wait_listening(self, timeout: float = 20.0) -> int:
        stdout = self.process.popen.stdout
        assert stdout is not None
        deadline = time.monotonic() + timeout
        line = b""
        while time.monotonic() < deadline and not line.endswith(b"\n"):
            ready, _, _ = select.select([stdout], [], [], 0.1)
            if ready:
                chunk = os.read(stdout.fileno(), 1)
                if not chunk:
                    break
                line += chunk
        if not line.startswith(b"LISTENING "):
            self.stop()
            raise RuntimeError(f"mono host did not start: {line!r}")
        return int(line.split()[1])

    def settings(self, **overrides: object) -> BridgeSettings:
        """Client settings that find this host through its connection.json."""
        return BridgeSettings(bridge_dir=self.bridge_dir, **overrides)  # type: ignore[arg-type]

    def token(self) -> str:
        """The token the host wrote to connection.json."""
        return self.settings().endpoint()[1]

    def stderr(self) -> str:
        """What the host logged (after stop)."""
        err = self.process.popen.stderr
        return err.read().decode(errors="replace") if err is not None and not err.closed else ""

    def stop(self) -> None:
        """Closes stdin (the host exits by itself), then kills the group if it lingers."""
        stdin = self.process.popen.stdin
        if stdin is not None and not stdin.closed:
            stdin.close()
        try:
            self.process.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.process.kill()


def start_stub_editor(exe: Path, project: Path) -> MonoHost:
    """The stub editor for a project folder; its bridge files land in Library/AgentSdkBridge like Unity's."""
    return MonoHost(exe, project / "Library" / "AgentSdkBridge", project=project)


def process_gone(pid: int) -> bool:
    """True when no process with this pid exists (zombies reaped by Popen.wait count as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False
