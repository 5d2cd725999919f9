"""The runtime bridge: talk to a running game through an autoload added only for the session.

`GameSession.start()` copies the bridge script into `addons/agentsdk_bridge/`, registers it as an
autoload in project.godot, starts the game and, as soon as the bridge listens, puts project.godot
back exactly as it was and deletes the copied files (they are never left for an export).
Frames on the wire: 4-byte big-endian length + UTF-8 JSON object. Handshake first:
`{"op": "hello", "token": ..., "protocol": 1}`; the game drops a client that has not sent it
within `hello_timeout`, or whose first frame is over 4 KB (later frames: 16 MB).
"""

from __future__ import annotations

import collections
import json
import secrets
import shutil
import socket
import struct
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import anyio
from agentsdk.sandbox import ManagedProcess, start_process
from agentsdk.vision import VisibilityReport
from pydantic import BaseModel

from agentsdk_godot.diagnostics import Diagnostic, parse_diagnostics
from agentsdk_godot.display import VirtualDisplay
from agentsdk_godot.engine import GodotEngine, NodeInfo
from agentsdk_godot.project import GodotProject
from agentsdk_godot.variant import Variant, parse_variant
from agentsdk_godot.visibility import read_report

__all__ = ["PROTOCOL_VERSION", "BridgeError", "GameSession", "Handshake"]

PROTOCOL_VERSION = 1
_MAX_REPLY_BYTES = 64 * 1024 * 1024  # a whole scene tree is a few MB at most
_OUTPUT_CAP = 2_000_000  # characters of the game's output kept (the most recent)
_ADDON = "addons/agentsdk_bridge"
_AUTOLOAD = "AgentsdkBridge"


class BridgeError(RuntimeError):
    """The game refused a request or the connection failed."""


class Handshake(BaseModel):
    """What the game answered to `hello`."""

    protocol: int
    engine: str


class _OutputPump:
    """Reads the game's output, answers the local debugger, keeps recent text."""

    def __init__(self, proc: ManagedProcess):
        self.proc = proc
        self.text: collections.deque[str] = collections.deque()
        self.size = 0  # characters in `text`
        self.dropped = 0  # characters dropped from the front to stay under _OUTPUT_CAP
        self.lock = threading.Lock()
        self._prompts = 0
        self.threads = [
            threading.Thread(target=self._read, args=(proc.popen.stdout, True), daemon=True),
            threading.Thread(target=self._read, args=(proc.popen.stderr, False), daemon=True),
        ]
        for thread in self.threads:
            thread.start()

    def _read(self, stream: Any, answer: bool) -> None:
        import os

        fd = stream.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            text = chunk.decode(errors="replace")
            with self.lock:
                self.text.append(text)
                self.size += len(text)
                while self.size > _OUTPUT_CAP and len(self.text) > 1:
                    old = self.text.popleft()
                    self.size -= len(old)
                    self.dropped += len(old)
            if answer and "debug> " in text:
                self._answer(text.count("debug> "))

    def _answer(self, prompts: int) -> None:
        stdin = self.proc.popen.stdin
        if stdin is None:
            return
        for _ in range(prompts):
            # alternate "bt" (print the stack) and "c" (continue) at each debugger prompt
            line = b"bt\n" if self._prompts % 2 == 0 else b"c\n"
            self._prompts += 1
            try:
                stdin.write(line)
                stdin.flush()
            except (BrokenPipeError, ValueError, OSError):
                return

    def output(self) -> str:
        with self.lock:
            note = f"[{self.dropped} earlier characters dropped]\n" if self.dropped else ""
            return note + "".join(self.text)


class GameSession:
    """A running game with the bridge autoload. Use `async with GameSession(...) as game:`."""

    def __init__(
        self,
        project: GodotProject,
        engine: GodotEngine,
        *,
        scene: str | None = None,
        window: bool = True,
        width: int = 512,
        height: int = 512,
        start_timeout: float = 30.0,
        hello_timeout: float = 5.0,
    ):
        """`hello_timeout`: seconds a connection may take to authenticate before the game drops it."""
        self.project = project
        self.engine = engine
        self.scene = scene
        self.window = window
        self.width, self.height = width, height
        self.start_timeout = start_timeout
        self.hello_timeout = hello_timeout
        self.token = secrets.token_urlsafe(24)
        self.port = 0
        self.handshake: Handshake | None = None
        self._proc: ManagedProcess | None = None
        self._display: VirtualDisplay | None = None
        self._pump: _OutputPump | None = None
        self._sock: socket.socket | None = None
        self._saved_settings: bytes | None = None
        self._addon_existed = False
        self._next_id = 0
        self._lock = anyio.Lock()
        self._shots = Path(tempfile.mkdtemp(prefix="agentsdk-godot-shots-", dir=engine.temp_dir))

    @property
    def pid(self) -> int | None:
        """Process id of the game (group leader), while it runs."""
        return self._proc.pid if self._proc else None

    @property
    def display_number(self) -> int | None:
        """The X display number of a windowed game, while it runs."""
        return self._display.number if self._display else None

    @property
    def alive(self) -> bool:
        """True while the game process runs."""
        return self._proc is not None and self._proc.alive

    async def __aenter__(self) -> GameSession:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ---------- lifecycle

    def _install(self) -> None:
        dialect = self.project.dialect
        addon = self.project.file(_ADDON)
        self._addon_existed = addon.exists()
        addon.mkdir(parents=True, exist_ok=True)
        (addon / "bridge.gd").write_text(dialect.helper_script("bridge.gd"), encoding="utf-8")
        (addon / "harness.gd").write_text(dialect.helper_script("harness.gd"), encoding="utf-8")
        settings_file = self.project.path / "project.godot"
        self._saved_settings = settings_file.read_bytes()
        self.project.set_setting("autoload", _AUTOLOAD, f"*res://{_ADDON}/bridge.gd")
        if self.scene:
            self.project.set_setting(
                "application", "run/main_scene", self.project.res_path(self.scene)
            )

    def _uninstall(self) -> None:
        if self._saved_settings is not None:
            (self.project.path / "project.godot").write_bytes(self._saved_settings)
            self._saved_settings = None
        addon = self.project.file(_ADDON)
        if addon.exists() and not self._addon_existed:
            shutil.rmtree(addon, ignore_errors=True)
            parent = addon.parent
            if parent.exists() and not any(parent.iterdir()):
                parent.rmdir()

    async def start(self) -> Handshake:
        """Install the bridge, launch the game, connect and shake hands (cleans up on failure)."""
        try:
            return await self._start()
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.close()
            raise

    async def _start(self) -> Handshake:
        dialect = await self.engine.dialect()
        self.port = _free_port()
        self._install()
        try:
            env = self.engine.env(
                {
                    "AGENTSDK_GODOT_BRIDGE_PORT": str(self.port),
                    "AGENTSDK_GODOT_BRIDGE_TOKEN": self.token,
                    "AGENTSDK_GODOT_BRIDGE_HELLO_MS": str(int(self.hello_timeout * 1000)),
                }
            )
            if self.window:
                argv = dialect.window_argv(
                    self.engine._runner(),
                    self.project.path,
                    None,
                    self.width,
                    self.height,
                    debug=True,
                )
                self._display = self.engine.display(self.width, self.height)
                await self._display.start()
                env.update(self._display.env)
            else:
                argv = dialect.game_argv(self.engine.server, self.project.path, debug=True)
            if shutil.which("stdbuf"):
                # the engine's stdout is block-buffered on a pipe; the debugger prompt must arrive now
                argv = ["stdbuf", "-o0", "-e0", *argv]
            self._proc = start_process(argv, env=env)
            self._pump = _OutputPump(self._proc)
            await self._wait_listening()
        finally:
            self._uninstall()  # the game has read project.godot: put it back right away
        self._sock = await anyio.to_thread.run_sync(self._connect)
        reply = await self._exchange(
            {"op": "hello", "token": self.token, "protocol": PROTOCOL_VERSION}
        )
        if not reply.get("ok"):
            raise BridgeError(f"handshake refused: {reply.get('error')}")
        self.handshake = Handshake(protocol=int(reply["protocol"]), engine=str(reply["engine"]))
        return self.handshake

    async def _wait_listening(self) -> None:
        assert self._proc is not None and self._pump is not None
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if f"AGENTSDK_BRIDGE_LISTENING {self.port}" in self._pump.output():
                return
            if not self._proc.alive:
                break
            await anyio.sleep(0.05)
        output = self._pump.output()[-3000:]
        self._proc.kill()
        raise BridgeError(
            f"the game did not start its bridge in {self.start_timeout:.0f}s:\n{output}"
        )

    def _connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        sock.settimeout(60)  # a screenshot with its passes takes a few frames
        return sock

    async def close(self) -> None:
        """Stop the game (whole process group) and make sure the project is clean. Idempotent."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._proc is not None:
            self._proc.kill()
            await self._proc.wait(5)
        if self._display is not None:
            await self._display.stop()
            self._display = None
        self._uninstall()
        shutil.rmtree(self._shots, ignore_errors=True)

    # ---------- wire

    async def _exchange(self, message: dict[str, Any]) -> dict[str, Any]:
        async with self._lock:
            return await anyio.to_thread.run_sync(self._exchange_sync, message)

    def _exchange_sync(self, message: dict[str, Any]) -> dict[str, Any]:
        try:
            return self._exchange_frames(message)
        except TimeoutError:
            raise BridgeError("the game did not answer in 60 s (is it stuck in a loop?)") from None
        except OSError as err:
            raise BridgeError(f"the connection to the game failed: {err}") from None

    def _exchange_frames(self, message: dict[str, Any]) -> dict[str, Any]:
        if self._sock is None:
            raise BridgeError("not connected")
        body = json.dumps(message).encode()
        self._sock.sendall(struct.pack(">I", len(body)) + body)
        size = struct.unpack(">I", _recv_exact(self._sock, 4))[0]
        if size > _MAX_REPLY_BYTES:
            raise BridgeError(f"the game sent a {size}-byte frame (limit {_MAX_REPLY_BYTES})")
        try:
            reply = json.loads(_recv_exact(self._sock, size))
        except (ValueError, UnicodeDecodeError) as err:
            raise BridgeError(f"the game sent a frame that is not JSON: {err}") from None
        if not isinstance(reply, dict):
            raise BridgeError("the game sent a frame that is not an object")
        return reply

    async def request(self, op: str, **fields: Any) -> Any:
        """Send one request; returns its `result` or raises BridgeError with the game's message."""
        self._next_id += 1
        reply = await self._exchange({"op": op, "id": self._next_id, **fields})
        if not reply.get("ok"):
            raise BridgeError(str(reply.get("error")))
        return reply.get("result")

    # ---------- operations

    async def tree(self, path: str = "", depth: int = 32) -> NodeInfo:
        """The live scene tree (from the current scene, or `path`) with non-default properties."""
        return NodeInfo.model_validate(await self.request("tree", path=path, depth=depth))

    async def get(self, path: str, prop: str) -> Variant:
        """A property of a live node, parsed from its Godot literal."""
        return _parse(await self.request("get", path=path, property=prop))

    async def set(self, path: str, prop: str, value_literal: str) -> Variant:
        """Set a property from a Godot literal (e.g. `Vector3( 0, 2, 0 )`); returns the new value."""
        parse_variant(value_literal)  # fail early, with line/column, on a malformed literal
        return _parse(await self.request("set", path=path, property=prop, value=value_literal))

    async def call(self, path: str, method: str, *args_literals: str) -> str:
        """Call a method with literal arguments; returns the result as a literal."""
        return str(await self.request("call", path=path, method=method, args=list(args_literals)))

    async def input(self, action: str, pressed: bool = True, strength: float = 1.0) -> str:
        """Press or release an input action (as if the player did)."""
        return str(await self.request("input", action=action, pressed=pressed, strength=strength))

    async def screenshot(self) -> bytes:
        """The current frame as PNG bytes (needs the windowed runner)."""
        file = self._shots / f"shot_{self._next_id + 1}.png"
        await self.request("screenshot", file=str(file))
        return file.read_bytes()

    async def look(self, alone_limit: int = 32) -> tuple[bytes, VisibilityReport]:
        """The current frame and its visibility report (the game is paused for the few frames
        the object-ID passes take, then resumes)."""
        folder = self._shots / f"look_{self._next_id + 1}"
        folder.mkdir()
        try:
            file = folder / "beauty.png"
            await self.request(
                "screenshot",
                file=str(file),
                report=True,
                report_dir=str(folder),
                alone_limit=alone_limit,
            )
            return file.read_bytes(), read_report(folder, frame_tool=None)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def output(self) -> str:
        """What the game printed (stdout and stderr as they arrived; the last ~2 MB)."""
        return self._pump.output() if self._pump else ""

    def recent_errors(self) -> list[Diagnostic]:
        """Errors the game printed so far (Godot 3 has no in-game error hook: read from its output)."""
        return parse_diagnostics(self._pump.output() if self._pump else "")


def _parse(literal: Any) -> Variant:
    try:
        return parse_variant(str(literal))
    except ValueError:
        return str(literal)


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise BridgeError("the game closed the connection")
        data += chunk
    return bytes(data)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
