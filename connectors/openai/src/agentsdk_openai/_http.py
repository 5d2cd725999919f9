"""The HTTP seam under the connector: one POST, answered whole or as a stream of lines.

Two backends, one shape (``Reply``):

* ``AiohttpBackend`` (the default) talks aiohttp directly. On a loopback server it costs
  ~0.4 ms of client CPU per request where every httpx variant (its own pool, HTTP/2, over
  an aiohttp transport) costs 1.0-1.8 ms, and its connector does not slow down with the number of requests
  waiting for a connection the way httpx's pool does (benchmarks/overhead.py measures all
  of them side by side).
* ``HttpxBackend`` runs any ``httpx.AsyncBaseTransport``: the ``transport=`` option, used
  for ``httpx.MockTransport`` in tests and for custom transports (proxies, HTTP/2).

Both turn connection failures, broken bodies and timeouts into ``TransportFailure`` (worth
retrying), and a request that cannot be sent at all (a bad URL or header) into
``CannotSend`` (not), so the caller never sees a library's own exception types. A backend
and its pooled connections belong to the event loop that made it.
"""

from __future__ import annotations

import asyncio
import functools
import os
import ssl
import urllib.request
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

if TYPE_CHECKING:
    import aiohttp

__all__ = ["AiohttpBackend", "Backend", "CannotSend", "HttpxBackend", "Reply", "TransportFailure"]

CONNECT_TIMEOUT = 10.0
MAX_CONNECTIONS = (
    100  # per model and event loop; at c=1000 this beat "unlimited" on memory and speed
)
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


class TransportFailure(Exception):
    """The request or its answer did not get through (connect, read or write error, timeout),
    said in plain words (never a library's exception text).

    ``dropped`` means the server closed the connection before answering at all: most often a
    pooled keep-alive connection it had just closed, which a new connection fixes at once.
    ``timed_out`` means the server said nothing for a whole read timeout.
    """

    def __init__(self, message: str, *, dropped: bool = False, timed_out: bool = False):
        super().__init__(message)
        self.dropped = dropped
        self.timed_out = timed_out


class CannotSend(Exception):
    """The request cannot be sent at all (a malformed URL or header); retrying won't help."""


class Reply:
    """A response: its status and headers, plus either the whole body or a stream of lines."""

    __slots__ = ("_close", "_lines", "_received", "body", "headers", "status")

    def __init__(
        self,
        status: int,
        headers: Mapping[str, str],
        body: bytes = b"",
        lines: AsyncIterator[str] | None = None,
        close: Callable[[], Awaitable[None]] | None = None,
        received: Callable[[], int] | None = None,
    ):
        self.status = status
        self.headers = headers
        self.body = body
        self._lines = lines
        self._close = close
        self._received = received

    @property
    def received(self) -> int:
        """Bytes of the body read so far."""
        return self._received() if self._received is not None else len(self.body)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def lines(self) -> AsyncIterator[str]:
        """The body's lines without their endings (streamed replies only)."""
        if self._lines is None:
            raise RuntimeError("this reply was read whole; it has no stream of lines")
        return self._lines

    async def aclose(self) -> None:
        close, self._close = self._close, None
        if close is not None:
            await close()


class Backend:
    """POSTs bytes; a streamed reply stays open until ``Reply.aclose``."""

    async def post(
        self, url: str, body: bytes, headers: dict[str, str], timeout: float | None, stream: bool
    ) -> Reply:
        raise NotImplementedError

    async def aclose(self) -> None:
        raise NotImplementedError

    def abandon(self) -> None:
        """Drop the pool without awaiting (its event loop is gone)."""


# --- aiohttp ---------------------------------------------------------------------------


@functools.cache
def tls_context() -> ssl.SSLContext:
    """Certificates to trust for https: ``SSL_CERT_FILE``/``SSL_CERT_DIR`` when set, else certifi's.

    What httpx does. aiohttp alone would use the system store, which is empty on some
    installs (python.org builds on macOS, slim containers).
    """
    if os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context()  # OpenSSL reads both variables
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


def _os_reason(exc: BaseException) -> str:
    cause = getattr(exc, "os_error", None) or exc
    return str(getattr(cause, "strerror", None) or cause or type(exc).__name__)


def _silence(read_timeout: float, answered: bool) -> str:
    if answered:
        return f"no data from the server for {read_timeout:g} s (the read timeout)"
    return f"no answer from the server within {read_timeout:g} s (the read timeout)"


def _cut_short(got: int, length: int | None) -> str:
    of = f" of {length}" if length is not None else ""
    return f"the server closed the connection after {got}{of} bytes of the body"


def _aiohttp_failure(
    aiohttp: Any, exc: BaseException, read_timeout: float, *, answered: bool = False
) -> TransportFailure:
    """Plain words for what aiohttp raised (its own messages name its internals)."""
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return TransportFailure(f"could not connect within {CONNECT_TIMEOUT:g} s", timed_out=True)
    if isinstance(exc, TimeoutError):  # aiohttp's read timeouts are TimeoutErrors too
        return TransportFailure(_silence(read_timeout, answered), timed_out=True)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return TransportFailure(f"cannot connect to {exc.host}:{exc.port} ({_os_reason(exc)})")
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        if answered:
            return TransportFailure("the server closed the connection before the body was complete")
        return TransportFailure("the server closed the connection without answering", dropped=True)
    if isinstance(exc, aiohttp.ClientPayloadError):
        return TransportFailure("the server closed the connection before the body was complete")
    if isinstance(exc, aiohttp.ClientOSError | OSError):
        return TransportFailure(f"the connection failed ({_os_reason(exc)})", dropped=not answered)
    return TransportFailure(f"the connection failed ({type(exc).__name__}: {exc})")


class AiohttpBackend(Backend):
    """One ``aiohttp.ClientSession`` with a capped connection pool (create inside the loop)."""

    def __init__(self, timeout: float, *, max_connections: int = MAX_CONNECTIONS):
        import aiohttp

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
        Loopback servers (the local engine) are never proxied.
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
        self, url: str, body: bytes, headers: dict[str, str], timeout: float | None, stream: bool
    ) -> Reply:
        options: dict[str, Any] = {"allow_redirects": False}
        if timeout:
            options["timeout"] = self._timeout(timeout)
        if self._guard is None:
            guard = self._guard = self._close_with_loop()
            await anext(guard)
        if url.startswith("https:"):
            options["ssl"] = tls_context()
        proxy = self._proxy(url)
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
                raise CannotSend("the model was closed while this request was in flight") from None
            raise _aiohttp_failure(self._aiohttp, exc, read_timeout) from None
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
            failure = _aiohttp_failure(self._aiohttp, exc, read_timeout, answered=True)
            if not failure.timed_out:
                failure = TransportFailure(_cut_short(got, response.content_length))
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
            raise _aiohttp_failure(self._aiohttp, exc, read_timeout, answered=True) from None
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
        # before closing it: this one closes the pool there, politely, so a model used
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


# --- httpx -----------------------------------------------------------------------------


class HttpxBackend(Backend):
    """An ``httpx.AsyncClient`` over the given transport."""

    def __init__(self, transport: httpx.AsyncBaseTransport, timeout: float):
        self._timeout = timeout
        self._client = httpx.AsyncClient(
            transport=transport, timeout=httpx.Timeout(timeout, connect=CONNECT_TIMEOUT)
        )

    async def post(
        self, url: str, body: bytes, headers: dict[str, str], timeout: float | None, stream: bool
    ) -> Reply:
        client = self._client
        try:
            request = client.build_request(
                "POST",
                url,
                content=body,
                headers=headers,
                timeout=httpx.Timeout(timeout, connect=CONNECT_TIMEOUT)
                if timeout
                else httpx.USE_CLIENT_DEFAULT,
            )
        except httpx.InvalidURL as exc:
            raise CannotSend(str(exc)) from None
        read_timeout = timeout or self._timeout
        answered = False
        try:
            response = await client.send(request, stream=True)
            answered = True
            if stream and response.is_success:
                count = [0]
                return Reply(
                    response.status_code,
                    response.headers,
                    lines=_httpx_lines(response, count, read_timeout),
                    close=response.aclose,
                    received=lambda: count[0],
                )
            try:
                await response.aread()
            finally:
                await response.aclose()
        except (httpx.UnsupportedProtocol, httpx.LocalProtocolError) as exc:
            raise CannotSend(str(exc)) from None
        except httpx.RequestError as exc:  # transport errors, and bodies that do not decode
            failure = _httpx_failure(exc, read_timeout, answered=answered)
            if answered and isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
                length = response.headers.get("content-length")
                total = int(length) if length and length.isdigit() else None
                failure = TransportFailure(_cut_short(response.num_bytes_downloaded, total))
            raise failure from None
        return Reply(response.status_code, response.headers, response.content)

    async def aclose(self) -> None:
        await self._client.aclose()


def _httpx_failure(
    exc: httpx.RequestError, read_timeout: float, *, answered: bool
) -> TransportFailure:
    """Plain words for what httpx (or the transport under it) raised."""
    if isinstance(exc, httpx.ConnectTimeout):
        return TransportFailure(f"could not connect within {CONNECT_TIMEOUT:g} s", timed_out=True)
    if isinstance(exc, httpx.TimeoutException):
        return TransportFailure(_silence(read_timeout, answered), timed_out=True)
    if isinstance(exc, httpx.ConnectError):
        return TransportFailure(f"cannot connect to the server ({exc or 'refused'})")
    if isinstance(exc, httpx.RemoteProtocolError) and not answered:
        return TransportFailure("the server closed the connection without answering", dropped=True)
    if isinstance(exc, httpx.RemoteProtocolError):
        return TransportFailure("the server closed the connection before the body was complete")
    return TransportFailure(f"the connection failed ({type(exc).__name__}: {exc or 'no detail'})")


async def _httpx_lines(
    response: httpx.Response, count: list[int], read_timeout: float
) -> AsyncIterator[str]:
    try:
        async for line in response.aiter_lines():
            count[0] += len(line.encode()) + 1  # its line ending, near enough
            yield line
    except httpx.RequestError as exc:
        raise _httpx_failure(exc, read_timeout, answered=True) from None
