"""A small toolkit to serve over MCP in the tests: it records when it starts and
closes (to $MCP_TEST_LOG), reports progress, and fails with a picture.

Served with ``agentsdk mcp serve counting:CountingToolkit`` (this folder on PYTHONPATH).
"""

from __future__ import annotations

import os
import struct
import zlib

from agentsdk import Image, ToolContext, ToolError, Toolkit, tool

print("counting: imported")  # stray prints, as real toolkits have: they must not reach the wire


def _log(line: str) -> None:
    path = os.environ.get("MCP_TEST_LOG")
    if path:
        with open(path, "a") as f:
            f.write(f"{line} {os.getpid()}\n")


def red_png(width: int = 4, height: int = 3) -> bytes:
    """A tiny all-red PNG, written by hand (no imaging library)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


class CountingToolkit(Toolkit):
    """Counts, reports progress, and fails on request."""

    name = "counting"

    async def start(self) -> None:
        print("counting: starting")
        os.system("echo counting: a child process writes to stdout too")
        _log("start")

    async def close(self) -> None:
        _log("close")

    @tool
    async def count_to(self, n: int, ctx: ToolContext) -> str:
        """Count from 1 to n, reporting each step as progress.

        Args:
            n: Where to stop (1 to 100).
        """
        if not 1 <= n <= 100:
            raise ToolError(f"n must be between 1 and 100, not {n}; try n=10")
        for i in range(1, n + 1):
            print(f"counting: {i}")
            await ctx.progress(i, n, f"counted {i}")
        return f"counted to {n}"

    @tool
    def broken_frame(self) -> str:
        """Fail, showing the frame that went wrong."""
        raise ToolError(
            "the frame is all red: the light is inside the box", images=[Image(red_png())]
        )

    @tool
    def save_note(self, text: str, ctx: ToolContext) -> str:
        """Save a note in the run's folder and say where."""
        return str(ctx.artifacts.save_text("note.txt", text))
