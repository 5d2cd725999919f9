"""agentsdk live-Blender bridge: a Blender add-on serving the worker protocol on 127.0.0.1.

Install the zip made by ``python -m agentsdk_blender.addon_zip`` (Edit > Preferences >
Add-ons > Install from Disk). On enable it listens on 127.0.0.1 (port 8765 unless
AGENTSDK_BLENDER_PORT is set) and requires a token: AGENTSDK_BLENDER_TOKEN, or a random one
written with the port to a connection file readable only by the user
(``BlenderBridge.from_connection_file()`` reads it). Requests are executed on Blender's main
thread through a timer; in background mode (``blender -b``) ``serve_forever`` runs them
directly. Stdlib + bpy only: stock Blender has no pydantic.
"""

from __future__ import annotations

import hmac
import json
import os
import queue
import secrets
import socket
import threading
from pathlib import Path
from typing import Any

from . import engine
from .engine import error_response, hello_frame
from .framing import PROTOCOL_VERSION, FrameError, encode_frame, read_frame

bl_info = {
    "name": "agentsdk bridge",
    "author": "agentsdk",
    "version": (0, 1, 0),
    "blender": (4, 2, 0),
    "location": "runs in the background once enabled",
    "description": "Lets an agentsdk agent drive this Blender over 127.0.0.1 with a token",
    "category": "System",
}

DEFAULT_PORT = 8765
JSON = dict[str, Any]


def connection_file() -> Path:
    """Where the add-on writes host, port and token for local clients."""
    base = os.environ.get("XDG_RUNTIME_DIR") or str(Path.home() / ".config")
    return Path(base) / "agentsdk-blender" / "bridge.json"


class _Pending:
    """A request handed from a connection thread to Blender's main thread."""

    def __init__(self, command: str, args: JSON) -> None:
        self.command, self.args = command, args
        self.reply: JSON | None = None
        self.done = threading.Event()


class BridgeServer:
    """Accepts authenticated clients on 127.0.0.1 and runs their commands in Blender."""

    def __init__(self, token: str, port: int = DEFAULT_PORT, host: str = "127.0.0.1") -> None:
        if not token:
            raise ValueError("the bridge needs a non-empty token")
        self._token = token.encode("utf-8")
        self._listener = socket.create_server((host, port))
        self.host, self.port = self._listener.getsockname()[:2]
        self._pending: queue.Queue[_Pending] = queue.Queue()
        self._stopped = threading.Event()

    # -- one connection -------------------------------------------------------------

    def _authenticate(self, conn: socket.socket, read: Any) -> bool:
        try:
            first = read_frame(read)
        except FrameError as exc:
            conn.sendall(encode_frame(error_response("FrameError", str(exc))))
            return False
        if first is None:
            return False  # the client left without a word
        token = first.get("token")
        if not isinstance(token, str) or not hmac.compare_digest(
            token.encode("utf-8"), self._token
        ):
            conn.sendall(encode_frame(error_response("AuthError", "wrong or missing token")))
            return False
        if first.get("protocol_version") != PROTOCOL_VERSION:
            message = f"this Blender speaks protocol {PROTOCOL_VERSION}, the client {first.get('protocol_version')}"
            conn.sendall(encode_frame(error_response("ProtocolMismatch", message)))
            return False
        conn.sendall(encode_frame(hello_frame()))
        return True

    def _serve_connection(self, conn: socket.socket, run: Any) -> None:
        reader = conn.makefile("rb")
        try:
            conn.settimeout(10.0)  # a client that never authenticates cannot hold the bridge
            if not self._authenticate(conn, reader.read):
                return
            conn.settimeout(None)
            while not self._stopped.is_set():
                try:
                    frame = read_frame(reader.read)
                except FrameError as exc:  # out of step: answer once, then hang up
                    conn.sendall(
                        encode_frame({"id": None, **error_response("FrameError", str(exc))})
                    )
                    return
                if frame is None:
                    return
                command, args = frame.get("command"), frame.get("args") or {}
                if not isinstance(command, str) or not isinstance(args, dict):
                    reply = error_response(
                        "InvalidRequest", "a request needs a string 'command' and an object 'args'"
                    )
                else:
                    reply = run(command, args)
                conn.sendall(encode_frame({"id": frame.get("id"), **reply}))
        except OSError:
            return  # the client went away
        finally:
            reader.close()
            conn.close()

    # -- background mode: everything on the calling (main) thread -------------------

    def serve_forever(self) -> None:
        """Serve clients one after another, running commands directly (``blender -b``)."""
        while not self._stopped.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self._serve_connection(conn, engine.handle)

    # -- UI mode: sockets on threads, commands on the main thread via a timer --------

    def start_threaded(self) -> None:
        """Accept clients on a thread; commands wait for ``run_pending`` on the main thread."""
        threading.Thread(target=self._accept_loop, name="agentsdk-bridge", daemon=True).start()

    def _accept_loop(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(
                target=self._serve_connection, args=(conn, self._via_main_thread), daemon=True
            ).start()

    def _via_main_thread(self, command: str, args: JSON) -> JSON:
        pending = _Pending(command, args)
        self._pending.put(pending)
        while not pending.done.wait(0.5):
            if self._stopped.is_set():
                return error_response(
                    "BridgeStopped", "the bridge was stopped before the command ran"
                )
        assert pending.reply is not None
        return pending.reply

    def run_pending(self) -> float | None:
        """Run queued commands; registered with ``bpy.app.timers`` (returns the next delay)."""
        while True:
            try:
                pending = self._pending.get_nowait()
            except queue.Empty:
                break
            pending.reply = engine.handle(pending.command, pending.args)
            pending.done.set()
        return None if self._stopped.is_set() else 0.05

    def stop(self) -> None:
        """Stop accepting clients and close the listening socket."""
        self._stopped.set()
        self._listener.close()


_server: BridgeServer | None = None


def register() -> None:
    """Blender calls this when the add-on is enabled: start listening."""
    global _server
    import bpy

    token = os.environ.get("AGENTSDK_BLENDER_TOKEN") or secrets.token_urlsafe(24)
    port = int(os.environ.get("AGENTSDK_BLENDER_PORT", DEFAULT_PORT))
    _server = BridgeServer(token, port)
    target = connection_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        json.dump({"host": _server.host, "port": _server.port, "token": token}, handle)
    _server.start_threaded()
    bpy.app.timers.register(_server.run_pending, persistent=True)
    print(f"agentsdk bridge listening on {_server.host}:{_server.port} (token in {target})")


def unregister() -> None:
    """Blender calls this when the add-on is disabled: stop listening."""
    global _server
    import bpy

    if _server is not None:
        if bpy.app.timers.is_registered(_server.run_pending):
            bpy.app.timers.unregister(_server.run_pending)
        _server.stop()
        _server = None
