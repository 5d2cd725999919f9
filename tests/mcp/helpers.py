"""Helpers for the MCP tests: where the counterparts are, and which processes we left."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import anyio.to_thread

HERE = Path(__file__).resolve().parent
SERVERS = HERE / "servers"
EVERYTHING = HERE / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
SERVER_BIN = HERE / ".venv/bin"
PYTHON = sys.executable


def descendants(pid: int | None = None) -> set[int]:
    """Live (not zombie) processes below ``pid`` (this process by default), from /proc."""
    root = os.getpid() if pid is None else pid
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if fields[0] not in (b"Z", b"X"):
            parents[int(entry)] = int(fields[1])
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def servers_running(marker: str) -> set[int]:
    """Our descendant processes whose command line contains ``marker``."""
    return {p for p in descendants() if marker in cmdline(p)}


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height of a PNG, after checking it is a whole, uncorrupted one: the
    signature, every critical chunk's CRC, and image data that inflates to exactly the rows the
    header promises. (Pillow is not used: some versions refuse valid files.)"""
    import struct
    import zlib

    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos, chunks, idat = 8, [], b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        if kind[:1].isupper():  # critical chunks; server-everything's logo has a bad iCCP CRC
            assert zlib.crc32(kind + body) == crc, f"bad CRC in {kind!r}"
        chunks.append(kind)
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert chunks[0] == b"IHDR" and chunks[-1] == b"IEND"
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour]
    row = 1 + (width * channels * depth + 7) // 8
    assert len(zlib.decompress(idat)) == height * row, "image data does not fill the frame"
    return width, height


class StderrLines:
    """A pipe to give a server as its stderr, and a way to wait for a line it writes:
    the tests wait on what the server says, never on the clock."""

    def __init__(self) -> None:
        read, write = os.pipe()
        self.writer = os.fdopen(write, "wb")
        self._reader = os.fdopen(read, "rb")
        self.lines: list[str] = []

    async def wait_for(self, line: str, timeout: float = 60) -> None:
        with anyio.fail_after(timeout):
            while line not in self.lines:
                raw = await anyio.to_thread.run_sync(self._reader.readline, abandon_on_cancel=True)
                if not raw:
                    raise AssertionError(f"the server's stderr ended before {line!r}: {self.lines}")
                self.lines.append(raw.decode(errors="replace").strip())

    def close(self) -> None:
        self.writer.close()
        self._reader.close()
