"""A scripted HTTP/1.1 server on 127.0.0.1 for exercising the connector's real HTTP stack.

Each request gets the next scripted behaviour (the last one repeats). A behaviour writes
whatever bytes it likes, well-formed or not, and says whether the connection stays open::

    async with LoopbackServer(reply_json(429, {...}, headers={"Retry-After": "1"}),
                              reply_json(200, completion("ok"))) as server:
        model = OpenAIChatModel("m", base_url=server.base_url, ...)
"""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

__all__ = [
    "Behaviour",
    "LoopbackServer",
    "RecordedRequest",
    "hang_up_midway",
    "never_answer",
    "reply_json",
    "reply_raw",
    "reply_sse",
    "unused_port",
]


@dataclass
class RecordedRequest:
    """One request as the server read it off the socket."""

    method: str
    path: str
    headers: dict[str, str]
    """Lower-cased names."""
    body: bytes
    connection: int
    """Which accepted TCP connection (1-based) carried it."""

    def json(self) -> Any:
        return json.loads(self.body)


Behaviour = Callable[[RecordedRequest, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[bool]]
"""Answers one request; returns True to keep the connection open for the next one."""


def head(status: int, headers: dict[str, str]) -> bytes:
    """A status line and header block."""
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def reply_json(
    status: int,
    body: Any | Callable[[RecordedRequest], Any],
    *,
    headers: dict[str, str] | None = None,
    delay: float = 0.0,
) -> Behaviour:
    """A JSON answer with Content-Length, after ``delay`` seconds; ``body`` may be built per request."""

    async def behaviour(
        request: RecordedRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        if delay:
            await asyncio.sleep(delay)
        value = body(request) if callable(body) else body
        data = json.dumps(value).encode()
        fields = {"Content-Type": "application/json", "Content-Length": str(len(data))}
        writer.write(head(status, {**fields, **(headers or {})}) + data)
        await writer.drain()
        return True

    return behaviour


def reply_raw(
    status: int, body: bytes, *, content_type: str = "text/plain", close: bool = False
) -> Behaviour:
    """Any bytes as the body, with Content-Length."""

    async def behaviour(
        request: RecordedRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        fields = {"Content-Type": content_type, "Content-Length": str(len(body))}
        writer.write(head(status, fields) + body)
        await writer.drain()
        return not close

    return behaviour


def reply_sse(
    events: Sequence[str],
    *,
    framing: str = "chunked",
    line_ending: str = "\n",
    piece: int | None = None,
    complete: bool = True,
) -> Behaviour:
    """A ``text/event-stream`` answer.

    ``framing`` is "chunked" (Transfer-Encoding) or "close" (the body ends when the server
    closes). ``piece`` splits the bytes into writes of that size, so lines and events cross
    TCP segments. ``complete=False`` hangs up before the body's proper end (no final chunk).
    """
    if framing not in ("chunked", "close"):
        raise ValueError(framing)

    async def behaviour(
        request: RecordedRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        fields = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        if framing == "chunked":
            fields["Transfer-Encoding"] = "chunked"
        else:
            fields["Connection"] = "close"
        writer.write(head(200, fields))
        data = "".join(events).replace("\n", line_ending).encode()
        size = piece or len(data) or 1
        for start in range(0, len(data), size):
            part = data[start : start + size]
            writer.write(b"%x\r\n%s\r\n" % (len(part), part) if framing == "chunked" else part)
            await writer.drain()
            if piece:
                await asyncio.sleep(0)  # let each piece go out on its own
        if framing == "chunked" and complete:
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        return False

    return behaviour


def hang_up_midway(
    status: int, body: bytes, *, content_type: str = "application/json"
) -> Behaviour:
    """Announce the whole body's length, send the first half, then close the connection."""

    async def behaviour(
        request: RecordedRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        fields = {"Content-Type": content_type, "Content-Length": str(len(body))}
        writer.write(head(status, fields) + body[: len(body) // 2])
        await writer.drain()
        return False

    return behaviour


def hang_up() -> Behaviour:
    """Read the request and close the connection without a word (a keep-alive timeout)."""

    async def behaviour(
        request: RecordedRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        return False

    return behaviour


def never_answer() -> Behaviour:
    """Read the request and say nothing, until the client gives up and closes."""

    async def behaviour(
        request: RecordedRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        await reader.read()  # returns at EOF, or is cancelled when the server stops
        return False

    return behaviour


def unused_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LoopbackServer:
    """A scripted HTTP/1.1 server in the current event loop; use ``async with``.

    ``requests`` holds every request read, ``connections`` counts TCP connections accepted
    and ``open_connections`` those neither side has closed yet.
    """

    def __init__(
        self,
        *behaviours: Behaviour,
        sock: socket.socket | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        if not behaviours:
            raise ValueError("script at least one behaviour")
        self.behaviours = list(behaviours)
        self.sock = sock
        """A listening socket to serve on instead of a new one (the server closes it)."""
        self.tls = tls
        """Serve https with this server-side context."""
        self.requests: list[RecordedRequest] = []
        self.connections = 0
        self.open_connections = 0
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._changed = asyncio.Event()

    @property
    def port(self) -> int:
        assert self._server is not None, "the server is not started"
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def base_url(self) -> str:
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://127.0.0.1:{self.port}/v1"

    async def __aenter__(self) -> LoopbackServer:
        if self.sock is not None:
            self._server = await asyncio.start_server(self._serve, sock=self.sock, ssl=self.tls)
        else:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        for writer in list(self._writers):
            writer.transport.abort()
        await self._server.wait_closed()

    async def wait_until_all_closed(self, timeout: float) -> bool:
        """True once every accepted connection has been closed, False after ``timeout``."""
        try:
            async with asyncio.timeout(timeout):
                while self.open_connections:
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            return False
        return True

    def _next(self) -> Behaviour:
        return self.behaviours.pop(0) if len(self.behaviours) > 1 else self.behaviours[0]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self._writers.add(writer)
        self.connections += 1
        self.open_connections += 1
        number = self.connections
        try:
            while True:
                request = await _read_request(reader, number)
                if request is None:
                    break  # the client closed the connection
                self.requests.append(request)
                keep_open = await self._next()(request, reader, writer)
                if not keep_open or request.headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self.open_connections -= 1
            self._changed.set()
            self._writers.discard(writer)
            self._handlers.discard(task)
            writer.close()


async def _read_request(reader: asyncio.StreamReader, connection: int) -> RecordedRequest | None:
    """The next request on the connection, or None at a clean end of stream."""
    try:
        block = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise
        return None
    request_line, *header_lines = block.decode("latin-1").split("\r\n")
    method, path, _version = request_line.split(" ", 2)
    headers: dict[str, str] = {}
    for line in header_lines:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            body += (await reader.readexactly(size + 2))[:size]
            if size == 0:
                break
    else:
        body = await reader.readexactly(int(headers.get("content-length", "0")))
    return RecordedRequest(method, path, headers, body, connection)
