"""Serve agentsdk tools and toolkits to any MCP client, over stdio or streamable HTTP.

The served toolkits live as long as the server: their engines (a browser, a
Blender worker) start once when it starts and close when the client goes away
(stdio) or the server stops (HTTP).
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import mcp.types as mt
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.stdio import stdio_server

from ..artifacts import ArtifactStore, default_runs_dir
from ..plugins import load_toolkit
from ..tools import (
    Tool,
    ToolContext,
    Toolkit,
    collect_tools,
    instructions_of,
    tools_can_change,
    tools_version,
)
from ._content import to_mcp_result

__all__ = ["ToolServer", "create_server", "serve_http", "serve_stdio"]

log = logging.getLogger("agentsdk.mcp")

Servable = Tool | Toolkit | Callable[..., Any] | str
"""A tool, a toolkit, a plain function, or the name of an installed toolkit."""


class ToolServer:
    """The tools behind one MCP server, and the toolkits whose lifetime it owns.

    Args:
        items: Tools, toolkits, functions or installed toolkit names.
        artifacts_dir: Where tools save files (renders, reports); a fresh folder
            under the user cache by default.
        deps: Given to tools as ``ctx.deps``.
        tools: Offer only the tools with these names.
    """

    def __init__(
        self,
        items: Sequence[Servable],
        *,
        artifacts_dir: str | Path | None = None,
        deps: Any = None,
        tools: Sequence[str] | None = None,
    ):
        self.items = [load_toolkit(i) if isinstance(i, str) else i for i in items]
        self.only = set(tools) if tools is not None else None
        self.toolkits = [i for i in self.items if isinstance(i, Toolkit)]
        self.run_id = time.strftime("mcp-%Y%m%d-%H%M%S-") + os.urandom(3).hex()
        where = Path(artifacts_dir) if artifacts_dir else default_runs_dir() / self.run_id
        self.artifacts = ArtifactStore(where)
        self.deps = deps
        self._versions: tuple[int, ...] | None = None
        self._tools: dict[str, Tool] = {}
        self._listed: list[mt.Tool] = []
        self.tools()  # duplicate names are an error now, not at the first call

    def tools(self) -> dict[str, Tool]:
        """The tools by name, re-read when a toolkit's tool list changed."""
        versions = tuple(tools_version(t) for t in self.toolkits)
        if versions != self._versions:
            found: dict[str, Tool] = {}
            for t in collect_tools(self.items):
                if self.only is not None and t.name not in self.only:
                    continue
                if t.name in found:
                    raise ValueError(
                        f"two tools are named {t.name!r}; give one toolkit a prefix, "
                        "e.g. MyToolkit(prefix='mine')"
                    )
                found[t.name] = t
            self._tools, self._versions = found, versions
            self._listed = [
                mt.Tool(name=t.name, description=t.description, input_schema=t.parameters)
                for t in found.values()
            ]
        return self._tools

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[ToolServer]:
        """Start the toolkits; close them on exit (even when cancelled)."""
        stack = contextlib.AsyncExitStack()
        try:
            for toolkit in self.toolkits:
                await stack.enter_async_context(toolkit)
            missing = sorted((self.only or set()) - set(self.tools()))
            if missing:
                raise ValueError(f"no tool named {', '.join(missing)} among the served toolkits")
            yield self
        finally:
            # a signal or a cancelled host must still close the engines, within bounds
            with anyio.CancelScope(shield=True), anyio.move_on_after(60):
                await stack.aclose()

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: mt.PaginatedRequestParams | None
    ) -> mt.ListToolsResult:
        """``tools/list``: every tool with its name, description and JSON schema."""
        self.tools()
        return mt.ListToolsResult(tools=self._listed)

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: mt.CallToolRequestParams
    ) -> mt.CallToolResult:
        """``tools/call``: run the tool; its errors come back as ``isError`` results."""
        tools = self.tools()
        tool = tools.get(params.name)
        if tool is None:
            names = ", ".join(sorted(tools)) or "(none)"
            text = f"Unknown tool '{params.name}'. Available tools: {names}."
            return mt.CallToolResult(
                content=[mt.TextContent(type="text", text=text)], is_error=True
            )
        tool_ctx = ToolContext(
            run_id=self.run_id,
            call_id=str(ctx.request_id),
            tool_name=tool.name,
            turn=0,
            artifacts=self.artifacts,
            deps=self.deps,
            report_progress=ctx.session.report_progress,
        )
        outcome = await tool.call(params.arguments or {}, tool_ctx)
        return to_mcp_result(outcome)


def create_server(
    items: Sequence[Servable],
    *,
    name: str = "agentsdk",
    instructions: str | None = None,
    artifacts_dir: str | Path | None = None,
    deps: Any = None,
    tools: Sequence[str] | None = None,
) -> Server[Any]:
    """An MCP server (the official SDK's lowlevel ``Server``) offering ``items``.

    Run it with :func:`serve_stdio` or :func:`serve_http`, or with the SDK
    directly (``mcp.Client(server)`` connects to it in-process). ``instructions``
    (the server's, sent when a client connects) default to the toolkits' own.
    """
    served = ToolServer(items, artifacts_dir=artifacts_dir, deps=deps, tools=tools)
    if instructions is None:
        own = instructions_of(served.toolkits)
        instructions = "\n\n".join(text.strip() for text in own) or None

    @contextlib.asynccontextmanager
    async def lifespan(_: Server[Any]) -> AsyncIterator[ToolServer]:
        async with served.running():
            yield served

    from importlib.metadata import version

    server: Server[Any] = Server(
        name,
        version=version("agentsdk"),
        instructions=instructions,
        lifespan=lifespan,
        on_list_tools=served.list_tools,
        on_call_tool=served.call_tool,
    )
    server.tool_server = served  # type: ignore[attr-defined]  # for tests and embedders
    return server


def _options(server: Server[Any]) -> Any:
    tools: ToolServer = server.tool_server  # type: ignore[attr-defined]
    changing = any(tools_can_change(t) for t in tools.toolkits)
    return server.create_initialization_options(NotificationOptions(tools_changed=changing))


async def _until_signalled(scope: anyio.CancelScope) -> None:
    # SIGTERM/SIGINT end the server cleanly, so the toolkits' engines are closed
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for _ in signals:
            scope.cancel()
            return


async def serve_stdio(items: Sequence[Servable] | Server[Any], **options: Any) -> None:
    """Serve over this process's stdin and stdout until the client disconnects.

    ``items`` are tools, toolkits or installed toolkit names (``options`` go to
    :func:`create_server`), or a server made by it. While serving, anything
    written to stdout (a stray ``print``, an engine's log) goes to stderr instead,
    so it cannot corrupt the protocol.
    """
    with contextlib.redirect_stdout(sys.stderr):  # what loading a toolkit prints is not protocol
        server = items if isinstance(items, Server) else create_server(items, **options)
    async with anyio.create_task_group() as tg:
        if threading.current_thread() is threading.main_thread():  # signals reach only that one
            tg.start_soon(_until_signalled, tg.cancel_scope)
        async with stdio_server() as (read, write):
            # the transport holds its own copy of the wire; Python-level prints go to stderr
            with contextlib.redirect_stdout(sys.stderr):
                await server.run(read, write, _options(server))
        tg.cancel_scope.cancel()


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class _RequireBearer:
    """ASGI wrapper: every HTTP request must carry ``Authorization: Bearer <token>``."""

    def __init__(self, app: Any, token: str):
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
            if not hmac.compare_digest(given, self.expected):
                # a JSON-RPC error body, so MCP clients show the reason, not only "401"
                body = (
                    b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": '
                    b'"unauthorized: this MCP server needs the header Authorization: Bearer <token>"}}'
                )
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer"),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


async def serve_http(
    items: Sequence[Servable] | Server[Any],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    path: str = "/mcp",
    on_ready: Callable[[str], None] | None = None,
    **options: Any,
) -> None:
    """Serve over streamable HTTP at ``http://host:port/mcp`` until cancelled or signalled.

    Loopback by default. Listening on any other address needs a ``token``, which
    every request must then send as ``Authorization: Bearer <token>`` (a token is
    honoured on loopback too). ``port=0`` picks a free port; ``on_ready`` gets the
    URL once the server accepts connections.

    Raises:
        ValueError: A non-loopback ``host`` without a token.
    """
    import uvicorn

    if not token and not is_loopback(host):
        raise ValueError(
            f"serving MCP on {host} (not loopback) needs a bearer token: pass --token "
            "or set AGENTSDK_MCP_TOKEN; every client then sends Authorization: Bearer <token>"
        )
    server = items if isinstance(items, Server) else create_server(items, **options)
    app: Any = server.streamable_http_app(streamable_http_path=path, host=host)
    if token:
        app = _RequireBearer(app, token)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    listening = anyio.Event()

    class _Web(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started:  # False when the port could not be bound
                listening.set()

    web = _Web(config)

    async def announce() -> None:
        await listening.wait()
        bound = web.servers[0].sockets[0].getsockname()
        shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        url = f"http://{shown}:{bound[1]}{path}"
        print(f"agentsdk mcp: serving on {url}", file=sys.stderr, flush=True)
        if on_ready is not None:
            on_ready(url)

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        await web.serve()
        tg.cancel_scope.cancel()
