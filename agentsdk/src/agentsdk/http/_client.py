"""``HttpClient``: the pool a model connector POSTs through, one per event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ._reply import MAX_CONNECTIONS, Backend, Reply

if TYPE_CHECKING:
    import httpx

__all__ = ["HttpClient"]


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # no asyncio loop (trio): only an httpx transport can run there
        return None


class HttpClient:
    """POSTs for one model connector: answered whole, or as a stream of lines.

    Args:
        timeout: the default read timeout in seconds: the longest the server may stay silent
            (a per-request ``timeout`` overrides it). Connecting is bounded by 10 s; waiting
            for a free pooled connection is not bounded (the run's own timeout covers it).
        transport: an ``httpx.AsyncBaseTransport`` (``httpx.MockTransport`` in tests, a
            custom proxy or HTTP/2 transport); without one, aiohttp does the work
            (``pip install 'agentsdk[http]'``).
        max_connections: the pool's cap, per event loop.

    Pooled connections belong to the event loop that opened them: a client used from a new
    loop (a second ``asyncio.run`` / ``Agent.run_sync``) opens a fresh pool and lets go of
    the old one, and a loop that finishes closes its pool on the way out. ``aclose()``
    closes the pool; the client stays usable (the next request opens a new one).
    """

    def __init__(
        self,
        timeout: float,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self.timeout = timeout
        self._transport = transport
        self._max_connections = max_connections
        self._backend: Backend | None = None
        self._backend_loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        through = "httpx transport" if self._transport is not None else "aiohttp"
        return f"HttpClient(timeout={self.timeout:g}, through {through})"

    def _current(self) -> Backend:
        loop = _running_loop()
        if self._backend is None or self._backend_loop is not loop:
            if self._backend is not None:
                self._backend.abandon()
            self._backend = self._open()
            self._backend_loop = loop
        return self._backend

    def _open(self) -> Backend:
        if self._transport is not None:
            from ._httpx import HttpxBackend

            return HttpxBackend(self._transport, self.timeout)
        if _running_loop() is None:
            raise RuntimeError(
                "agentsdk.http's default backend (aiohttp) needs an asyncio event loop; "
                "pass transport= (an httpx transport) to run under another one"
            )
        from ._aiohttp import AiohttpBackend

        return AiohttpBackend(self.timeout, max_connections=self._max_connections)

    async def post(
        self,
        url: str,
        body: bytes,
        headers: Mapping[str, str],
        timeout: float | None = None,
        stream: bool = False,
    ) -> Reply:
        """POST ``body`` to ``url``.

        Returns the reply whatever its status (read whole), or, with ``stream=True`` and a
        2xx status, a reply whose ``lines()`` are read as they arrive (``aclose()`` it).
        Raises ``TransportFailure`` when the request or its answer did not get through
        (worth another attempt) and ``CannotSend`` when it cannot be sent at all.
        """
        return await self._current().post(url, body, headers, timeout, stream)

    async def aclose(self) -> None:
        """Close the pooled connections (idempotent). A pool opened by another event loop is
        let go of without awaiting: its sockets cannot be closed from this loop."""
        backend, self._backend = self._backend, None
        if backend is None:
            return
        if self._backend_loop is _running_loop():
            await backend.aclose()
        else:
            backend.abandon()
