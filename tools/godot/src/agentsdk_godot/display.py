"""A private virtual X display for windowed Godot runs, that leaves nothing behind.

`xvfb-run` cleans up only when it exits normally: a run killed with its process group leaves
Xvfb's lock and socket files and its `xvfb-run.*` folder. Here Xvfb is started directly: it picks
a free display itself (`-displayfd`), trusts only a random cookie written to a private folder,
and on stop it is asked to quit (it then removes its own socket); whatever a killed server left
is removed by us, after checking it is ours (the socket file's inode seen at start, the pid in a
lock file: with `-displayfd` Xvfb finds a free number by binding sockets and writes no lock).
"""

from __future__ import annotations

import os
import secrets
import shutil
import struct
import subprocess
import tempfile
import time
from pathlib import Path

import anyio
from agentsdk.sandbox import ManagedProcess, pid_alive, start_process

__all__ = ["DisplayError", "VirtualDisplay"]

# Xvfb's lock files and sockets are in folders compiled into the server, not under $TMPDIR.
_LOCK_DIR = Path("/tmp")
_SOCKET_DIR = Path("/tmp/.X11-unix")
_FAMILY_WILD = 0xFFFF  # an Xauthority entry that matches every host and display


class DisplayError(RuntimeError):
    """The virtual display could not be started (Xvfb missing or failing)."""


def _xauth_entry(cookie: bytes) -> bytes:
    """One Xauthority record: family, address, display number (empty = any), name, data."""

    def field(data: bytes) -> bytes:
        return struct.pack(">H", len(data)) + data

    return (
        struct.pack(">H", _FAMILY_WILD)
        + field(b"")
        + field(b"")
        + field(b"MIT-MAGIC-COOKIE-1")
        + field(cookie)
    )


class VirtualDisplay:
    """An Xvfb server only this run can use. `async with VirtualDisplay(w, h) as d: d.env`."""

    def __init__(
        self,
        width: int,
        height: int,
        *,
        temp_dir: Path | None = None,
        start_timeout: float = 30.0,
    ):
        self.width, self.height = max(width, 64), max(height, 64)
        self.temp_dir = temp_dir
        self.start_timeout = start_timeout
        self.number: int | None = None
        self._socket_inode: int | None = None
        self._folder: Path | None = None
        self._proc: ManagedProcess | None = None

    @property
    def env(self) -> dict[str, str]:
        """`DISPLAY` and `XAUTHORITY` for a client of this display."""
        if self.number is None or self._folder is None:
            raise DisplayError("the display is not started")
        return {"DISPLAY": f":{self.number}", "XAUTHORITY": str(self._folder / "Xauthority")}

    async def __aenter__(self) -> VirtualDisplay:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        with anyio.CancelScope(shield=True):
            await self.stop()

    async def start(self) -> None:
        """Start Xvfb and wait until it accepts clients (cleans up on failure)."""
        binary = shutil.which("Xvfb")
        if binary is None:
            raise DisplayError("screenshots need Xvfb: install `xvfb` (apt)")
        self._folder = Path(tempfile.mkdtemp(prefix="agentsdk-godot-x-", dir=self.temp_dir))
        auth = self._folder / "Xauthority"
        auth.write_bytes(_xauth_entry(secrets.token_bytes(16)))
        auth.chmod(0o600)
        log = (self._folder / "xvfb.log").open("wb")
        try:
            # -displayfd 1: the server writes its display number to stdout once it is ready
            self._proc = start_process(
                [
                    binary,
                    "-displayfd",
                    "1",
                    "-screen",
                    "0",
                    f"{self.width}x{self.height}x24",
                    "-auth",
                    str(auth),
                    "-nolisten",
                    "tcp",
                    "-noreset",
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
            )
        finally:
            log.close()
        try:
            self.number = await self._read_number()
            self._socket_inode = _inode(_SOCKET_DIR / f"X{self.number}")
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.stop()
            raise

    async def _read_number(self) -> int:
        assert self._proc is not None and self._proc.popen.stdout is not None
        fd = self._proc.popen.stdout.fileno()
        os.set_blocking(fd, False)
        text = b""
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            try:
                chunk = os.read(fd, 64)
            except BlockingIOError:
                chunk = None
            if chunk:
                text += chunk
                if text.endswith(b"\n"):
                    return int(text)
            elif chunk == b"" or not self._proc.alive:
                break  # the server exited
            await anyio.sleep(0.02)
        log = self._folder / "xvfb.log" if self._folder else None
        why = log.read_text(errors="replace")[-1500:] if log and log.exists() else ""
        raise DisplayError(f"Xvfb did not start in {self.start_timeout:.0f}s:\n{why}")

    async def stop(self) -> None:
        """Stop the server and remove its files and the private folder. Idempotent."""
        proc, self._proc = self._proc, None
        if proc is not None:
            # SIGTERM: Xvfb removes its own lock and socket; SIGKILL after a grace period
            await anyio.to_thread.run_sync(proc.terminate, 5.0)
            if self.number is not None:
                _remove_leftovers(self.number, proc.pid, self._socket_inode)
        self.number = self._socket_inode = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except OSError:
        return None


def _remove_leftovers(number: int, server_pid: int, socket_inode: int | None) -> None:
    """The lock and socket of display `number` that our (dead) server left."""
    lock = _LOCK_DIR / f".X{number}-lock"
    try:
        if int(lock.read_text().strip()) == server_pid and not pid_alive(server_pid):
            lock.unlink(missing_ok=True)
    except (OSError, ValueError):
        pass
    socket = _SOCKET_DIR / f"X{number}"
    # a server that took the number since made a new socket file (another inode): not ours
    if socket_inode is not None and _inode(socket) == socket_inode:
        socket.unlink(missing_ok=True)
