"""A real MCP server (the official SDK's MCPServer) for the lifecycle and fault tests.

Tools: ``pid`` (this process's pid), ``echo``, ``slow`` (sleeps; writes "started" and
then "finished" or "cancelled" as lines on stderr), ``die`` (exits mid-call, like a crash),
``unlock`` (adds the tool ``secret`` and announces the change, on both protocol eras).
Run: python dynamic.py
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer

app = MCPServer("dynamic")


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@app.tool()
def pid() -> int:
    """This server's process id."""
    return os.getpid()


@app.tool()
def echo(message: str) -> str:
    """Say the message back."""
    return message


@app.tool()
async def slow(seconds: float) -> str:
    """Sleep for some seconds."""
    _log("started")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        _log("cancelled")
        raise
    _log("finished")
    return f"slept {seconds:g} s"


@app.tool()
def die() -> str:
    """Exit at once, without answering."""
    os._exit(3)


def secret(word: str) -> str:
    """Only here after unlock."""
    return word[::-1]


@app.tool()
async def unlock(ctx: Context) -> str:
    """Add the tool 'secret'."""
    app.add_tool(secret, name="secret")
    await ctx.notify_tools_changed()  # 2026-07-28 clients: their subscriptions/listen stream
    try:  # handshake-era clients: the list_changed notification
        await ctx.request_context.session.send_tool_list_changed()
    except Exception as exc:  # not deliverable on a modern connection
        print(f"list_changed notification not sent: {exc!r}", file=sys.stderr)
    return "unlocked"


if __name__ == "__main__":
    app.run("stdio")
