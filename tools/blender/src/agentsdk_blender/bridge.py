"""BlenderBridge: drive a running Blender (with the agentsdk add-on) over 127.0.0.1."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream
from pydantic import BaseModel

from .framing import MAX_FRAME_BYTES, FrameError, decode_body, encode_frame
from .protocol import Auth, NoArgs, Response
from .worker import BlenderError, ResultT, check_hello, parse_response


class BridgeAuthError(BlenderError):
    """The live Blender refused the token (or the protocol version)."""


def default_connection_file() -> Path:
    """Where the add-on writes host, port and token (mirrors ``addon.connection_file``)."""
    import os

    base = os.environ.get("XDG_RUNTIME_DIR") or str(Path.home() / ".config")
    return Path(base) / "agentsdk-blender" / "bridge.json"


class BlenderBridge:
    """A connection to the agentsdk add-on inside a running Blender.

    Same commands and results as ``BlenderWorker``; pass it to ``BlenderToolkit``.
    A timeout or a dropped connection raises ``BlenderError`` (the user's Blender is
    never restarted from here); the next call reconnects.
    """

    def __init__(
        self, host: str = "127.0.0.1", port: int = 8765, token: str = "", *, timeout: float = 120.0
    ) -> None:
        if not token:
            raise ValueError("BlenderBridge needs the token the add-on was started with")
        self.host, self.port, self.timeout = host, port, timeout
        self._token = token
        self._stream: SocketStream | None = None
        self._reader: BufferedByteReceiveStream | None = None
        self._lock = anyio.Lock()
        self._next_id = 0
        self._notices: list[str] = []
        self.blender_version: str | None = None

    @classmethod
    def from_connection_file(cls, path: str | Path | None = None, **kwargs: Any) -> BlenderBridge:
        """Read host, port and token from the file the add-on wrote."""
        data = json.loads(Path(path or default_connection_file()).read_text())
        return cls(data["host"], int(data["port"]), data["token"], **kwargs)

    def __repr__(self) -> str:  # never show the token
        return f"BlenderBridge(host={self.host!r}, port={self.port})"

    async def _send(self, message: dict[str, Any]) -> None:
        assert self._stream is not None
        await self._stream.send(encode_frame(message))

    async def _receive(self) -> dict[str, Any]:
        assert self._reader is not None
        (length,) = struct.unpack(">I", await self._reader.receive_exactly(4))
        if length > MAX_FRAME_BYTES:
            raise FrameError(f"frame length {length} exceeds the limit")
        return decode_body(await self._reader.receive_exactly(length))

    async def start(self) -> None:
        """Connect, authenticate and check the protocol version."""
        async with self._lock:
            await self._connect()

    async def _connect(self) -> None:
        if self._stream is not None:
            return
        try:
            with anyio.fail_after(self.timeout):
                self._stream = await anyio.connect_tcp(self.host, self.port)
                self._reader = BufferedByteReceiveStream(self._stream)
                await self._send(Auth(token=self._token).model_dump())
                first = await self._receive()
        except (OSError, TimeoutError, anyio.EndOfStream, anyio.IncompleteRead, FrameError) as exc:
            await self.close()
            raise BlenderError(
                f"cannot reach Blender at {self.host}:{self.port}: {exc!r}"
            ) from None
        if first.get("ok") is False:
            await self.close()
            error = Response.model_validate(first).error
            raise BridgeAuthError(
                f"Blender refused the connection: {error.message if error else first}"
            )
        self.blender_version = check_hello(
            first, f"Blender at {self.host}:{self.port}"
        ).blender_version

    async def call(
        self,
        command: str,
        args: BaseModel | None,
        result_type: type[ResultT],
        *,
        timeout: float | None = None,
    ) -> ResultT:
        """Run one command in the live Blender and return its typed result."""
        limit = self.timeout if timeout is None else timeout
        async with self._lock:
            await self._connect()
            self._next_id += 1
            request = {
                "id": self._next_id,
                "command": command,
                "args": (args or NoArgs()).model_dump(mode="json"),
            }
            try:
                with anyio.fail_after(limit):
                    await self._send(request)
                    reply = await self._receive()
            except TimeoutError:
                await self.close()
                raise BlenderError(
                    f"{command}: Blender did not answer within {limit} s; the connection was closed "
                    "(Blender keeps running; the command may still finish there)"
                ) from None
            except (
                OSError,
                anyio.EndOfStream,
                anyio.IncompleteRead,
                anyio.BrokenResourceError,
                FrameError,
            ) as exc:
                await self.close()
                raise BlenderError(f"{command}: lost the connection to Blender: {exc!r}") from None
            except BaseException:
                await self.close()  # cancelled mid-command: the stream is out of step
                raise
            result, response = parse_response(command, self._next_id, reply, result_type)
            if response.notice:
                self._notices.append(response.notice)
            return result

    def take_notice(self) -> str | None:
        """A notice the live Blender sent with the last results, once (usually None)."""
        notices, self._notices = self._notices, []
        return "; ".join(notices) or None

    async def close(self) -> None:
        """Disconnect. Idempotent; Blender keeps running."""
        stream, self._stream, self._reader = self._stream, None, None
        if stream is not None:
            await stream.aclose()

    async def __aenter__(self) -> BlenderBridge:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
