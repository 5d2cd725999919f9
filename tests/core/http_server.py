"""A scripted HTTP/1.1 server on 127.0.0.1 for ``test_http.py``: each request gets the next
behaviour (answer whole, stream in chunks, cut short, hang up, stay silent); it records what
it read and how many connections came and went."""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio

__all__ = [
    "JSON",
    "Seen",
    "Server",
    "answer",
    "chunked",
    "cut",
    "first_then_silent",
    "hang_up",
    "head",
    "silent",
    "unused_port",
]

JSON = {"Content-Type": "application/json"}


@dataclass
class Seen:
    """One request as the server read it (``target`` is absolute when sent to a proxy)."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes


Behaviour = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[bool]]


def head(status: int, fields: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} X", *(f"{k}: {v}" for k, v in fields.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def answer(status: int, body: bytes, **extra: str) -> Behaviour:
    """The whole reply at once; ``X_Request_Id="r1"`` adds an ``X-Request-Id`` header."""
    fields = {
        "Content-Length": str(len(body)),
        **{k.replace("_", "-"): v for k, v in extra.items()},
    }

    async def behave(_r: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(head(status, fields) + body)
        await writer.drain()
        return True

    return behave


def chunked(pieces: list[bytes], *, complete: bool = True) -> Behaviour:
    """Each piece in its own chunk and TCP write; without the last chunk when not complete."""

    async def behave(_r: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(
            head(200, {"Content-Type": "text/event-stream", "Transfer-Encoding": "chunked"})
        )
        for piece in pieces:
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
        if complete:
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        return complete

    return behave


def cut(body: bytes, keep: int) -> Behaviour:
    async def behave(_r: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(head(200, {"Content-Length": str(len(body)), **JSON}) + body[:keep])
        await writer.drain()
        return False

    return behave


async def hang_up(_r: asyncio.StreamReader, _w: asyncio.StreamWriter) -> bool:
    return False


async def silent(reader: asyncio.StreamReader, _w: asyncio.StreamWriter) -> bool:
    await reader.read()  # until the client gives up and closes
    return False


class Server:
    """Answers each request with the next behaviour (the last one repeats)."""

    def __init__(self, *behaviours: Behaviour, tls: ssl.SSLContext | None = None) -> None:
        self.behaviours = list(behaviours)
        self.tls = tls
        self.seen: list[Seen] = []
        self.connections = 0
        self.open = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._changed = asyncio.Event()

    def url(self, path: str = "/v1/x") -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{port}{path}"

    async def __aenter__(self) -> Server:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._writers:  # a silent handler waits on its client: end it
            writer.close()
        await self._server.wait_closed()

    async def all_closed(self, timeout: float = 5.0) -> bool:
        with anyio.move_on_after(timeout):
            while self.open:
                self._changed.clear()
                await self._changed.wait()
        return self.open == 0

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.open += 1
        self._writers.add(writer)
        try:
            while True:
                try:
                    block = await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError:
                    break
                line, *rest = block.decode("latin-1").split("\r\n")
                method, target, _ = line.split(" ", 2)
                headers = {
                    k.strip().lower(): v.strip()
                    for k, _, v in (h.partition(":") for h in rest if h)
                }
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                self.seen.append(Seen(method, target, headers, body))
                behave = self.behaviours.pop(0) if len(self.behaviours) > 1 else self.behaviours[0]
                if not await behave(reader, writer):
                    break
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            self.open -= 1
            self._changed.set()
            self._writers.discard(writer)
            writer.close()


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def first_then_silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    """One event of a stream, then nothing more until the client closes."""
    writer.write(head(200, {"Transfer-Encoding": "chunked"}) + b"9\r\ndata: a\n\n\r\n")
    await writer.drain()
    return await silent(reader, writer)
