"""``MCPToolkit``: any MCP server's tools (and resources) as an agentsdk toolkit."""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, ClassVar

import anyio
import mcp.types as mt
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, HEADER_MISMATCH, REQUEST_TIMEOUT
from pydantic import ValidationError

from ..artifacts import ArtifactStore
from ..messages import Image, ImagePart, TextPart
from ..tools import Tool, ToolContext, ToolError, Toolkit
from ._connection import Connection, MCPConnectionError
from ._content import from_mcp_content
from ._resources import MCPResource, any_resources, list_resources, read_resource, resource_tools

__all__ = ["MCPConnectionError", "MCPResource", "MCPToolkit"]

log = logging.getLogger("agentsdk.mcp")

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_-]")
_PAGES = 100  # a server whose listing never ends cannot hang the toolkit


class MCPToolkit(Toolkit):
    """The tools of an MCP server, for ``Agent(tools=[...])`` like any toolkit.

    Build it with :meth:`stdio` (a command the toolkit starts and stops) or
    :meth:`http` (a streamable-HTTP URL), or from a string such as
    ``"mcp:time"`` (see :func:`agentsdk.mcp.toolkit_from_string`). The server's
    tools keep their names (``prefix`` adds ``prefix_``), descriptions and
    JSON schemas; arguments are checked against the schema before the call.
    Images the server returns reach the model as images. When the server says
    its tool list changed, the agent sees the new list on its next turn.

    One connection serves every agent and run that uses the toolkit at the same
    time. An agent opens it for a run when needed; ``async with toolkit:``
    around many runs keeps one server for all of them.

    Args:
        server: Stdio parameters, or the URL of a streamable-HTTP endpoint.
        label: How errors and resource tools name this server.
        prefix: Put ``prefix_`` before every tool name (to tell servers apart).
        headers: HTTP headers (e.g. ``Authorization``) for an HTTP server.
        tools: Offer only these tools (the server's names).
        resources: Offer ``<label>_list_resources`` and ``<label>_read_resource``
            tools when the server lists resources (or templates) at start.
        connect_timeout: Seconds allowed for starting the server and its handshake.
        call_timeout: Seconds allowed for one tool call (None: no limit).
        stderr: Where a stdio server's stderr goes; by default it is kept in a
            temporary file and its end is quoted in errors.
        protocol: ``"auto"`` (the newest the server speaks) or ``"legacy"``
            (the initialize handshake, what pre-2026 servers expect).
        restart: After the server went away, start it again on the next call.
        needs_approval: ``True``: every call waits for a person's approval; a list:
            calls of these tools (the server's names) do (see ``agentsdk.state``).
    """

    name: ClassVar[str] = "mcp"

    def __init__(
        self,
        server: StdioServerParameters | str,
        *,
        label: str | None = None,
        prefix: str | None = None,
        headers: Mapping[str, str] | None = None,
        tools: Sequence[str] | None = None,
        resources: bool = True,
        connect_timeout: float = 30.0,
        call_timeout: float | None = None,
        stderr: IO[Any] | None = None,
        protocol: str = "auto",
        restart: bool = True,
        needs_approval: bool | Sequence[str] = False,
    ):
        super().__init__(prefix=prefix)
        if isinstance(server, str) and not re.match(r"^https?://", server):
            raise ValueError(
                f"an MCP server URL must start with http:// or https://, not {server!r}"
            )
        self.server = server
        self.label = label or _default_label(server)
        self.headers = dict(headers) if headers else None
        self.tool_names = list(tools) if tools is not None else None
        self.offer_resources = resources
        self.connect_timeout = connect_timeout
        self.call_timeout = call_timeout
        self.stderr = stderr
        self.protocol = protocol
        self.restart = restart
        self.needs_approval = needs_approval
        self.tools_version = 0
        """Grows each time the tool list changes (the agent re-reads the tools then)."""
        self.server_info: mt.Implementation | None = None
        self.instructions: str | None = None
        self._conn: Connection | None = None
        self._open = False
        self._lock = anyio.Lock()
        self._refresh_lock = anyio.Lock()
        self._stale = False
        self._listing: list[tuple[str, str, str]] = []
        self._server_tools: list[Tool] = []
        self._resource_tools: list[Tool] = []

    # -- building ---------------------------------------------------------------

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        **options: Any,
    ) -> MCPToolkit:
        """A server this toolkit starts as ``command args...`` and talks to over stdio.

        ``env`` is added to a minimal environment (PATH, HOME, ...): the server does
        not see this process's secrets unless they are passed here.
        """
        params = StdioServerParameters(
            command=command, args=list(args), env=dict(env) if env else None, cwd=cwd
        )
        return cls(params, **options)

    @classmethod
    def http(
        cls, url: str, *, headers: Mapping[str, str] | None = None, **options: Any
    ) -> MCPToolkit:
        """A server at a streamable-HTTP ``url`` (``headers`` go with every request)."""
        return cls(url, headers=headers, **options)

    @classmethod
    def from_string(cls, spec: str) -> MCPToolkit:
        """What ``"mcp:<spec>"`` names: a configured server, a URL, or a command line."""
        from .config import toolkit_from_string

        return toolkit_from_string(spec)

    def only(self, *names: str) -> Toolkit:
        """This server offering just the named tools. Before the toolkit has started
        (when the names are not known yet) this is a new toolkit with ``tools=names``."""
        if self.tools_version:
            return super().only(*names)
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin.tool_names = list(names)
        twin._lock, twin._refresh_lock = anyio.Lock(), anyio.Lock()
        return twin

    # -- lifecycle ----------------------------------------------------------------

    async def start(self) -> None:
        """Start (or reach) the server, shake hands and list its tools. Safe to call
        from many tasks at once: they share one connection."""
        async with self._lock:
            self._open = True
            if self._conn is None or not self._conn.alive:
                try:
                    await self._connect()
                except BaseException:
                    self._open = False
                    raise

    async def close(self) -> None:
        """Close the connection; a stdio server is stopped and reaped. Idempotent."""
        self._open = False
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    async def _connect(self) -> None:
        if self._conn is not None:
            await self._conn.close()
        self._conn = Connection(
            self.label,
            self.server,
            headers=self.headers,
            stderr=self.stderr,
            protocol=self.protocol,
            on_ready=self._on_ready,
            on_change=self._on_change,
        )
        await self._conn.open(self.connect_timeout)

    async def _on_ready(self, client: Client) -> None:
        self.server_info = client.server_info
        self.instructions = client.instructions
        caps = client.server_capabilities
        has_resources = caps.resources is not None and self.offer_resources
        # resource tools only for a server that has some: two idle tools cost a small model
        stem = self.prefix or _UNSAFE_NAME.sub("_", self.label)[:40] or "mcp"
        self._resource_tools = (
            resource_tools(self, stem) if has_resources and await any_resources(client) else []
        )
        self._install(await self._list_tools(client))

    async def _on_change(self) -> None:
        self._stale = True
        await self.refresh_tools()

    # -- tools ----------------------------------------------------------------------

    def tools(self) -> list[Tool]:
        """The server's tools (empty until the toolkit has started)."""
        return [*self._server_tools, *self._resource_tools]

    async def refresh_tools(self) -> bool:
        """List the server's tools again; True if they changed."""
        async with self._refresh_lock:
            conn = self._conn
            if conn is None or conn.client is None:
                return False
            self._stale = False
            try:
                listed = await self._list_tools(conn.client)
            except (MCPError, ValidationError, anyio.BrokenResourceError) as exc:
                log.warning("MCP server %s: could not list its tools again: %s", self.label, exc)
                return False
            return self._install(listed)

    async def _list_tools(self, client: Client) -> list[mt.Tool]:
        listed: list[mt.Tool] = []
        cursor: str | None = None
        for _ in range(_PAGES):
            page = await client.list_tools(cursor=cursor)
            listed.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        return listed

    def _install(self, listed: list[mt.Tool]) -> bool:
        chosen = [t for t in listed if self.tool_names is None or t.name in self.tool_names]
        signature = [
            (t.name, t.description or "", json.dumps(t.input_schema, sort_keys=True))
            for t in chosen
        ]
        if signature == self._listing:
            return False
        names: set[str] = set()
        built = []
        for t in chosen:
            built.append(self._make_tool(t, names))
        self._listing, self._server_tools = signature, built
        self.tools_version += 1
        return True

    def _model_name(self, name: str, taken: set[str]) -> str:
        # model APIs accept [A-Za-z0-9_-]{1,64}; MCP names may also hold dots and slashes
        base = _UNSAFE_NAME.sub("_", name)
        if self.prefix:
            base = f"{self.prefix}_{base}"
        base = base[:64] or "tool"
        candidate, n = base, 2
        while candidate in taken:
            candidate, n = f"{base[:60]}_{n}", n + 1
        taken.add(candidate)
        return candidate

    def _make_tool(self, listed: mt.Tool, taken: set[str]) -> Tool:
        # a partial, not a wrapper coroutine: one frame less on every resumption of a call
        call = functools.partial(self._call, listed.name)
        server_name = listed.name

        name = self._model_name(server_name, taken)
        description = listed.description or listed.title or server_name
        schema = dict(listed.input_schema) or {"type": "object"}
        rule = self.needs_approval
        asks = rule if isinstance(rule, bool) else server_name in rule
        try:
            return Tool.from_schema(
                name, description, schema, call, timeout=self.call_timeout, needs_approval=asks
            )
        except ValueError as exc:  # the server checks its own arguments then
            log.warning(
                "MCP server %s: tool %s: %s; not checking its arguments",
                self.label,
                server_name,
                exc,
            )
            return Tool.from_schema(
                name,
                description,
                schema,
                call,
                timeout=self.call_timeout,
                validate=False,
                needs_approval=asks,
            )

    async def _client(self) -> Client:
        conn = self._conn
        if conn is not None and conn.alive and conn.client is not None:
            return conn.client
        if not self._open:
            raise ToolError(
                f"MCP server {self.label!r} is not connected: start the toolkit first "
                "(`async with toolkit:`, or give it to an Agent)"
            )
        why = conn.why() if conn is not None else ""
        if not self.restart:
            raise ToolError(f"MCP server {self.label!r} has gone away{why}")
        try:
            async with self._lock:
                if self._conn is None or not self._conn.alive:
                    log.info("MCP server %s has gone away; starting it again", self.label)
                    await self._connect()
        except MCPConnectionError as exc:
            raise ToolError(f"{exc} (it had gone away{why})") from exc
        assert self._conn is not None and self._conn.client is not None
        return self._conn.client

    async def _call(self, name: str, arguments: dict[str, Any], ctx: ToolContext | None) -> Any:
        client = await self._client()
        conn = self._conn
        progress = None
        if ctx is not None and ctx.report_progress is not None:
            progress = ctx.progress  # a served proxy passes the server's progress on
        try:
            result = await _call_tool(client, name, arguments, progress)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                if conn is not None:
                    conn.lost()
                raise ToolError(
                    f"MCP server {self.label!r} closed the connection during the call to "
                    f"{name!r}{conn.why() if conn else ''}. "
                    + ("It is started again on the next call." if self.restart else "")
                ) from None
            if exc.code == REQUEST_TIMEOUT:
                raise ToolError(
                    f"MCP server {self.label!r} did not answer in time: {exc.message}"
                ) from None
            raise ToolError(
                f"MCP server {self.label!r} refused the call to {name!r}: {exc.message} "
                f"(error {exc.code})"
            ) from None
        except (ValidationError, RuntimeError) as exc:
            raise ToolError(
                f"MCP server {self.label!r} answered {name!r} with something that is not an "
                f"MCP tool result: {exc}"
            ) from None
        # A change the server announced before this result is listed before the result is
        # returned, so the agent's next turn sees the new tools. The notification's handler
        # was scheduled before this task was woken, and it marks the list stale first thing.
        if self._stale or self._refresh_lock.locked():
            async with self._refresh_lock:
                pass  # a refresh under way
            if self._stale:
                await self.refresh_tools()
        content = result.content
        if len(content) == 1 and type(content[0]) is mt.TextContent and not result.is_error:
            return content[0].text  # the common one-text answer, without building parts
        parts = from_mcp_content(
            result.content,
            result.structured_content,
            ctx.artifacts if ctx is not None else None,
            server=self.label,
        )
        if result.is_error:
            text = "\n".join(p.text for p in parts if isinstance(p, TextPart)) or "the tool failed"
            images = [Image(p.data, p.media_type) for p in parts if isinstance(p, ImagePart)]
            raise ToolError(text, images=images)
        return parts

    # -- resources (agentsdk/mcp/_resources.py) ----------------------------------------

    async def list_resources(self) -> list[MCPResource]:
        """The server's resources, then its resource templates."""
        return await list_resources(await self._client())

    async def read_resource(
        self, uri: str, artifacts: ArtifactStore | None = None
    ) -> list[TextPart | ImagePart]:
        """A resource's contents: text as text, images as images, other binary data
        saved to ``artifacts`` (when given) and named.

        Raises:
            ToolError: The server could not read it (the message says why).
        """
        return await read_resource(await self._client(), uri, artifacts, self.label)

    def __repr__(self) -> str:
        return f"MCPToolkit({self.label!r})"


async def _call_tool(
    client: Client, name: str, arguments: dict[str, Any], progress: Any
) -> mt.CallToolResult:
    """``tools/call`` through the session (what ``Client.call_tool`` wraps); the Client's
    fuller path only when the server asks for more (input rounds, a stale tool header)."""
    try:
        result = await client.session.call_tool(name, arguments, progress_callback=progress)
    except MCPError as exc:
        if exc.code != HEADER_MISMATCH:
            raise
        return await client.call_tool(name, arguments, progress_callback=progress)
    except RuntimeError:  # an input-required result: the Client drives those rounds
        return await client.call_tool(name, arguments, progress_callback=progress)
    assert isinstance(result, mt.CallToolResult)
    return result


_LAUNCHERS = {"node", "python", "python3", "uv", "uvx", "npx", "bunx", "deno", "pipx", "docker"}
_GENERIC = {"index", "main", "server", "cli", "dist", "build", "src", "lib", "bin", "run"}


def _default_label(server: StdioServerParameters | str) -> str:
    """A short name for messages: the URL's host, or what the command runs."""
    if isinstance(server, str):
        return re.sub(r"^https?://", "", server).split("/")[0]
    command = Path(server.command).name
    if command not in _LAUNCHERS and not command.startswith("python"):
        return command
    target = next((a for a in server.args if not a.startswith("-") and a != "run"), command)
    # "@scope/pkg@1.2" -> "pkg"; ".../server-everything/dist/index.js" -> "server-everything"
    target = re.sub(r"@[^/]*$", "", target.removeprefix("@"))
    stems: list[str] = [w.rsplit(".", 1)[0] or w for w in re.split(r"[/\\]", target) if w]
    for stem in reversed(stems):
        if stem not in _GENERIC:
            return stem
    return stems[-1] if stems else command
