"""The default backend: aiohttp directly, one capped pool per event loop.

On a loopback server it costs ~0.4 ms of client CPU per request where every httpx variant
(its own pool, HTTP/2, over an aiohttp transport) costs 1.0-1.8 ms, and its connector does
not slow down with the number of requests waiting for a connection the way httpx's pool
does (benchmarks/overhead.py measures them side by side).
"""

from __future__ import annotations

import asyncio
import urllib.request
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ._reply import (
    BODY_CUT,
    CONNECT_TIMED_OUT,
    CONNECT_TIMEOUT,
    DROPPED,
    MAX_CONNECTIONS,
    Backend,
    CannotSend,
    Reply,
    TransportFailure,
    cut_short,
    no_connect,
    silence,
)
from ._tls import tls_context

if TYPE_CHECKING:
    import aiohttp

__all__ = ["AiohttpBackend"]

_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
MISSING = (
    "agentsdk.http talks through aiohttp, which is not installed: "
    "pip install 'agentsdk[http]' (or pass an httpx transport with transport=)"
)


def _os_reason(exc: BaseException) -> str:
    cause = getattr(exc, "os_error", None) or exc
    return str(getattr(cause, "strerror", None) or cause or type(exc).__name__)


def _failure(
    aiohttp: Any, exc: BaseException, read_timeout: float, *, answered: bool = False
) -> TransportFailure:
    """Plain words for what aiohttp raised (its own messages name its internals)."""
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return TransportFailure(CONNECT_TIMED_OUT, timed_out=True)
    if isinstance(exc, TimeoutError):  # aiohttp's read timeouts are TimeoutErrors too
        return TransportFailure(silence(read_timeout, answered), timed_out=True)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return TransportFailure(no_connect(f" at {exc.host}:{exc.port}", _os_reason(exc)))
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        if answered:
            return TransportFailure(BODY_CUT)
        return TransportFailure(DROPPED, dropped=True)
    if isinstance(exc, aiohttp.ClientPayloadError):
        return TransportFailure(BODY_CUT)
    if isinstance(exc, aiohttp.ClientOSError | OSError):
        return TransportFailure(f"the connection failed ({_os_reason(exc)})", dropped=not answered)
    return TransportFailure(f"the connection failed ({type(exc).__name__}: {exc})")


class AiohttpBackend(Backend):
    """One ``aiohttp.ClientSession`` with a capped connection pool (create inside the loop)."""

    def __init__(self, timeout: float, *, max_connections: int = MAX_CONNECTIONS):
        try:
            import aiohttp
        except ImportError:
            raise ImportError(MISSING) from None

        self._aiohttp = aiohttp
        self._failures: tuple[type[BaseException], ...] = (
            aiohttp.ClientError,
            asyncio.TimeoutError,
            OSError,
        )
        self._timeouts: dict[float, aiohttp.ClientTimeout] = {}
        self._default_timeout = timeout
        self._proxies: dict[tuple[str, str], str | None] = {}
        self._loop = asyncio.get_running_loop()
        self._guard: AsyncGenerator[None] | None = None
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=max_connections),
            timeout=self._timeout(timeout),
        )

    def _timeout(self, seconds: float) -> aiohttp.ClientTimeout:
        # Like httpx.Timeout(seconds, connect=10): a bound on each wait, not on the whole body,
        # so a long stream that keeps producing is never cut off.
        hit = self._timeouts.get(seconds)
        if hit is None:
            hit = self._timeouts[seconds] = self._aiohttp.ClientTimeout(
                total=None, sock_connect=CONNECT_TIMEOUT, sock_read=seconds
            )
        return hit

    def _proxy(self, url: str) -> str | None:
        """The proxy from the environment (HTTPS_PROXY, NO_PROXY...), looked up once per origin.

        aiohttp's ``trust_env`` would look it up in a worker thread on every request.
        Loopback servers (a local engine) are never proxied.
        """
        parts = urlsplit(url)
        key = (parts.scheme, parts.netloc)
        if key in self._proxies:
            return self._proxies[key]
        host = parts.hostname or ""
        proxy = None
        if host not in _LOOPBACK and not urllib.request.proxy_bypass(host):
            proxy = urllib.request.getproxies().get(parts.scheme)
        self._proxies[key] = proxy
        return proxy

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str], timeout: float | None, stream: bool
    ) -> Reply:
        options: dict[str, Any] = {"allow_redirects": False}
        if timeout:
            options["timeout"] = self._timeout(timeout)
        if self._guard is None:
            guard = self._guard = self._close_with_loop()
            await anext(guard)
        if url.startswith("https:"):
            options["ssl"] = tls_context()
        try:
            proxy = self._proxy(url)
        except ValueError as exc:  # urllib cannot even split it (say, "http://[::1/x")
            raise CannotSend(f"cannot request {url!r} ({exc})") from None
        if proxy:
            options["proxy"] = proxy
        read_timeout = timeout or self._default_timeout
        try:
            response = await self._session.post(url, data=body, headers=headers, **options)
        except (self._aiohttp.InvalidURL, self._aiohttp.NonHttpUrlClientError) as exc:
            raise CannotSend(f"cannot request {str(exc) or url!r}") from None
        except self._aiohttp.ClientConnectorCertificateError as exc:
            raise CannotSend(
                f"the server's TLS certificate was not trusted ({exc.certificate_error}); "
                "point SSL_CERT_FILE at the CA bundle that signed it"
            ) from None
        except ValueError as exc:  # e.g. a newline in a header value
            raise CannotSend(str(exc)) from None
        except self._failures as exc:
            if self._session.closed:  # aclose() under a request in flight: do not reopen
                raise CannotSend(
                    "the connection pool was closed (aclose) while this request was in flight"
                ) from None
            raise _failure(self._aiohttp, exc, read_timeout) from None
        if stream and 200 <= response.status < 300:
            count = [0]
            return Reply(
                response.status,
                response.headers,
                lines=self._lines(response, count, read_timeout),
                close=lambda: self._release(response),
                received=lambda: count[0],
            )
        pieces: list[bytes] = []
        got = 0
        try:
            async for piece in response.content.iter_any():
                pieces.append(piece)
                got += len(piece)
        except self._failures as exc:
            failure = _failure(self._aiohttp, exc, read_timeout, answered=True)
            if not failure.timed_out:
                failure = TransportFailure(cut_short(got, response.content_length))
            else:
                failure = TransportFailure(
                    f"{failure} after {got} bytes of the body", timed_out=True
                )
            raise failure from None
        finally:
            response.release()
        return Reply(response.status, response.headers, b"".join(pieces))

    async def _lines(
        self, response: aiohttp.ClientResponse, count: list[int], read_timeout: float
    ) -> AsyncIterator[str]:
        # An unfinished line is kept as pieces, so a long line is not quadratic.
        pieces: list[bytes] = []
        try:
            async for chunk in response.content.iter_any():
                count[0] += len(chunk)
                lines = chunk.split(b"\n")
                if pieces:
                    pieces.append(lines[0])
                    lines[0] = b"".join(pieces)
                    pieces = []
                if lines[-1]:
                    pieces.append(lines[-1])
                del lines[-1]
                for line in lines:
                    yield line.rstrip(b"\r").decode("utf-8", "replace")
        except self._failures as exc:
            raise _failure(self._aiohttp, exc, read_timeout, answered=True) from None
        if pieces:
            yield b"".join(pieces).rstrip(b"\r").decode("utf-8", "replace")

    async def _release(self, response: aiohttp.ClientResponse) -> None:
        # A fully read body hands its connection back to the pool; a stream we stopped
        # reading early (say, right after [DONE]) must not be reused half-read.
        if response.content.at_eof():
            response.release()
        else:
            response.close()

    async def _close_with_loop(self) -> AsyncGenerator[None]:
        # asyncio.run (and anyio.run) close every unfinished async generator of their loop
        # before closing it: this one closes the pool there, politely, so a client used
        # from run_sync or successive asyncio.run calls leaves no sockets behind.
        try:
            yield
        finally:
            await self._session.close()

    async def aclose(self) -> None:
        guard, self._guard = self._guard, None
        if guard is not None:
            await guard.aclose()
        await self._session.close()

    def abandon(self) -> None:
        session, loop = self._session, self._loop
        if session.closed:
            return
        if not loop.is_closed() and loop.is_running():
            # Still running in another thread: let it close its own connections.
            loop.call_soon_threadsafe(lambda: loop.create_task(session.close()))
            return
        connector = session.connector
        session.detach()
        # The loop is gone, and so is any way to close its sockets politely; mark the pool
        # closed so that it does not warn when collected (the sockets go with it).
        close = getattr(connector, "_close", None)
        if callable(close):
            close()
