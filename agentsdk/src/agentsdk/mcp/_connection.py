"""One MCP client session, owned by a task of its own.

anyio's cancel scopes must be entered and left by the same task, and the MCP
SDK's ``Client`` is a stack of them (its transport, its dispatcher). A toolkit
is opened by whichever run enters it first and closed by whichever leaves
last, often two different tasks, which is where the well-known "exit cancel
scope in a different task" error on stdio teardown comes from. So the session
lives in a dedicated owner task that enters and leaves it; every other task
only sends requests through it (the SDK allows any task to do that).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
from collections.abc import Awaitable, Callable
from typing import IO, Any, cast

import anyio
import httpx2
import mcp.types as mt
from mcp import Client, StdioServerParameters
from mcp.client.session import IncomingMessage
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..errors import AgentError

__all__ = ["Connection", "MCPConnectionError"]

log = logging.getLogger("agentsdk.mcp")

_STDERR_TAIL = 1500  # characters of a server's stderr quoted in an error


class MCPConnectionError(AgentError):
    """An MCP server could not be started or reached, or did not answer its handshake."""


class Connection:
    """A connected MCP ``Client`` whose whole life is spent in one owner task.

    ``open()`` starts the owner and waits for the handshake; ``close()`` ends it
    and waits until the transport is down (the stdio server reaped).
    """

    def __init__(
        self,
        label: str,
        server: StdioServerParameters | str,
        *,
        headers: dict[str, str] | None,
        stderr: IO[Any] | None,
        protocol: str,
        on_ready: Callable[[Client], Awaitable[None]],
        on_change: Callable[[], Awaitable[None]],
    ):
        self.label = label
        self.server = server
        self.headers = headers
        self.protocol = protocol
        self.on_ready = on_ready
        self.on_change = on_change
        self.client: Client | None = None
        self.error: BaseException | None = None
        self.alive = False
        self.garbage: list[str] = []  # stdout lines that were not JSON-RPC
        self._errlog = stderr
        self._own_errlog = False
        self._ready = anyio.Event()
        self._done = anyio.Event()
        self._scope = anyio.CancelScope()
        self._task: asyncio.Task[None] | None = None

    # -- what other tasks call --------------------------------------------------

    async def open(self, timeout: float) -> Client:
        """Start the owner task; return the client once the server has answered."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError as exc:  # trio, or no loop at all
            raise RuntimeError("agentsdk.mcp runs on anyio's asyncio backend") from exc
        if isinstance(self.server, StdioServerParameters) and self._errlog is None:
            self._errlog = tempfile.TemporaryFile("w+b")
            self._own_errlog = True
        self._task = loop.create_task(self._own(), name=f"mcp session {self.label}")
        try:
            with anyio.fail_after(timeout):
                await self._ready.wait()
        except TimeoutError:
            await self.close()
            raise MCPConnectionError(
                f"MCP server {self.label!r} did not answer the initialize handshake within "
                f"{timeout:g} s{self.why()}"
            ) from None
        except BaseException:
            await self.close()
            raise
        if self.client is None:
            error = _leaf(self.error)
            await self.close()
            if isinstance(error, MCPConnectionError):
                raise error
            hint = ""
            if not isinstance(self.server, StdioServerParameters) and "error response" in str(
                error
            ):
                hint = " (the server answered with an HTTP error: check the URL and the headers)"
            raise MCPConnectionError(
                f"could not connect to MCP server {self.label!r}: "
                f"{type(error).__name__}: {error}{hint}{self.why()}"
            ) from error
        return self.client

    async def close(self) -> None:
        """End the session and wait (bounded) until its transport is down. Idempotent."""
        self._scope.cancel()
        if self._task is not None:
            # shielded: a cancelled run must still reap its server process
            with anyio.CancelScope(shield=True), anyio.move_on_after(20):
                await self._done.wait()
        if self._own_errlog and self._errlog is not None:
            with contextlib.suppress(OSError):
                self._errlog.close()
            self._own_errlog = False

    def lost(self) -> None:
        """The transport failed under a request: end the session (without waiting)."""
        self.alive = False
        self._scope.cancel()

    def stderr_tail(self) -> str:
        """The end of what the stdio server wrote to stderr (captured ones only)."""
        if not self._own_errlog or self._errlog is None or self._errlog.closed:
            return ""
        try:
            size = self._errlog.seek(0, 2)
            self._errlog.seek(max(0, size - _STDERR_TAIL * 4))
            raw = self._errlog.read()
        except (OSError, ValueError):
            return ""
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        return text.strip()[-_STDERR_TAIL:]

    def why(self) -> str:
        """What the server said that explains a failure, as a suffix for a message."""
        notes = []
        if self.garbage:
            notes.append(
                f"it wrote {len(self.garbage)} line(s) to stdout that are not JSON-RPC, "
                f"e.g. {self.garbage[0]!r} (an MCP stdio server must log to stderr)"
            )
        tail = self.stderr_tail()
        if tail:
            notes.append(f"its stderr ends with: {tail}")
        return "; " + "; ".join(notes) if notes else ""

    # -- the owner task ---------------------------------------------------------

    def _transport(self, http: httpx2.AsyncClient | None) -> Any:
        if isinstance(self.server, StdioServerParameters):
            return stdio_client(self.server, errlog=cast("Any", self._errlog))
        return streamable_http_client(self.server, http_client=http)

    async def _own(self) -> None:
        try:
            with self._scope:
                async with contextlib.AsyncExitStack() as stack:
                    http = None
                    if not isinstance(self.server, StdioServerParameters):
                        http = await stack.enter_async_context(
                            httpx2.AsyncClient(
                                headers=self.headers,
                                timeout=httpx2.Timeout(30.0, read=300.0),
                            )
                        )
                    client = Client(
                        self._transport(http),
                        message_handler=self._on_message,
                        mode=self.protocol,
                        cache=None,  # the toolkit keeps its own tool list
                    )
                    await stack.enter_async_context(client)
                    self.client = client
                    self.alive = True
                    await self.on_ready(client)
                    await self._serve(client)
        except Exception as exc:  # reported by open(), or to the next call
            self.error = exc
            log.debug("MCP session %s ended: %r", self.label, exc)
        finally:
            self.client = None
            self.alive = False
            self._ready.set()
            self._done.set()

    async def _serve(self, client: Client) -> None:
        tools = client.server_capabilities.tools
        if (
            client.protocol_version in MODERN_PROTOCOL_VERSIONS
            and tools is not None
            and tools.list_changed
        ):
            # 2026 servers announce changes only on a subscription stream, opened before
            # the toolkit is ready so that no change is missed
            try:
                async with client.listen(tools_list_changed=True) as subscription:
                    self._ready.set()
                    async for _ in subscription:
                        await self.on_change()
            except (ListenNotSupportedError, SubscriptionLost, MCPError) as exc:
                log.debug("MCP server %s: no change subscription: %r", self.label, exc)
        self._ready.set()
        await anyio.sleep_forever()

    async def _on_message(self, message: IncomingMessage | Exception) -> None:
        if isinstance(message, Exception):
            # the stdio transport hands over lines it could not parse
            if len(self.garbage) < 20:
                self.garbage.append(_bad_line(message))
            log.warning("MCP server %s wrote something that is not JSON-RPC", self.label)
        elif isinstance(message, mt.ToolListChangedNotification):
            await self.on_change()


def _bad_line(error: Exception) -> str:
    """The line a stdio server sent that did not parse (pydantic keeps it as the input)."""
    errors = getattr(error, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):
            return str(errors()[0]["input"])[:200]
    return str(error)[:200]


def _leaf(error: BaseException | None) -> BaseException | None:
    """The first real error inside task-group exception groups (what went wrong)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error
