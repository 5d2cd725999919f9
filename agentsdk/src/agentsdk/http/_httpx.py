"""The backend for a caller's own ``httpx.AsyncBaseTransport`` (``httpx.MockTransport`` in
tests, proxies or HTTP/2 set up by hand). httpx is imported only here, only when used."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING

from ._reply import (
    BODY_CUT,
    CONNECT_TIMED_OUT,
    CONNECT_TIMEOUT,
    DROPPED,
    Backend,
    CannotSend,
    Reply,
    TransportFailure,
    cut_short,
    no_connect,
    silence,
)

if TYPE_CHECKING:
    import httpx

__all__ = ["HttpxBackend"]


class HttpxBackend(Backend):
    """An ``httpx.AsyncClient`` over the given transport."""

    def __init__(self, transport: httpx.AsyncBaseTransport, timeout: float):
        import httpx

        self._httpx = httpx
        self._timeout = timeout
        self._client = httpx.AsyncClient(transport=transport, timeout=self._timeouts(timeout))

    def _timeouts(self, seconds: float) -> httpx.Timeout:
        # No bound on waiting for a free pooled connection: that queue is ours, not the server
        # being slow (a pool timeout as short as a 2 s read timeout turned a burst of 500
        # runs into retries that never reached the server). aiohttp's pool waits the same.
        return self._httpx.Timeout(seconds, connect=CONNECT_TIMEOUT, pool=None)

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str], timeout: float | None, stream: bool
    ) -> Reply:
        httpx, client = self._httpx, self._client
        try:
            request = client.build_request(
                "POST",
                url,
                content=body,
                headers=headers,
                timeout=self._timeouts(timeout) if timeout else httpx.USE_CLIENT_DEFAULT,
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
                    lines=self._lines(response, count, read_timeout),
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
            failure = self._failure(exc, read_timeout, answered=answered)
            if answered and isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
                length = response.headers.get("content-length")
                total = int(length) if length and length.isdigit() else None
                failure = TransportFailure(cut_short(response.num_bytes_downloaded, total))
            raise failure from None
        return Reply(response.status_code, response.headers, response.content)

    def _failure(
        self, exc: httpx.RequestError, read_timeout: float, *, answered: bool
    ) -> TransportFailure:
        """Plain words for what httpx (or the transport under it) raised."""
        httpx = self._httpx
        if isinstance(exc, httpx.ConnectTimeout):
            return TransportFailure(CONNECT_TIMED_OUT, timed_out=True)
        if isinstance(exc, httpx.TimeoutException):
            return TransportFailure(silence(read_timeout, answered), timed_out=True)
        if isinstance(exc, httpx.ConnectError):
            return TransportFailure(no_connect("", str(exc) or "refused"))
        if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError) and not answered:
            return TransportFailure(DROPPED, dropped=True)
        if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
            return TransportFailure(BODY_CUT)
        return TransportFailure(
            f"the connection failed ({type(exc).__name__}: {exc or 'no detail'})"
        )

    async def _lines(
        self, response: httpx.Response, count: list[int], read_timeout: float
    ) -> AsyncIterator[str]:
        try:
            async for line in response.aiter_lines():
                count[0] += len(line.encode()) + 1  # its line ending, near enough
                yield line
        except self._httpx.RequestError as exc:
            raise self._failure(exc, read_timeout, answered=True) from None

    async def aclose(self) -> None:
        await self._client.aclose()
