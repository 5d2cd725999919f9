"""What every backend returns and raises: one reply shape, two errors, plain-words messages."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping

__all__ = [
    "CONNECT_TIMEOUT",
    "MAX_CONNECTIONS",
    "Backend",
    "CannotSend",
    "Reply",
    "TransportFailure",
]

CONNECT_TIMEOUT = 10.0
"""Seconds to wait for a TCP (and TLS) connection, whatever the read timeout."""
MAX_CONNECTIONS = 100
"""Per client and event loop; at 1,000 concurrent runs this beat "unlimited" on memory and speed."""


class TransportFailure(Exception):
    """The request or its answer did not get through (connect, read or write error, timeout),
    said in plain words (never a library's exception text). Worth another attempt.

    ``dropped`` means the server closed the connection before answering at all: most often a
    pooled keep-alive connection it had just closed, which a new connection fixes at once.
    ``timed_out`` means the server said nothing for a whole read timeout (or never let us
    connect).
    """

    def __init__(self, message: str, *, dropped: bool = False, timed_out: bool = False):
        super().__init__(message)
        self.dropped = dropped
        self.timed_out = timed_out


class CannotSend(Exception):
    """The request cannot be sent at all (a malformed URL or header, an untrusted TLS
    certificate, a client closed under it); retrying won't help."""


class Reply:
    """An HTTP response: its status and headers, plus either the whole body or a stream of lines.

    ``headers`` look names up case-insensitively. A streamed reply (``post(..., stream=True)``
    answered 2xx) holds its connection until ``aclose()``; every other reply is read whole.
    """

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

    def __repr__(self) -> str:
        kind = "streamed" if self._lines is not None else f"{len(self.body)} bytes"
        return f"Reply(status={self.status}, {kind})"

    @property
    def received(self) -> int:
        """Bytes of the body read so far."""
        return self._received() if self._received is not None else len(self.body)

    @property
    def ok(self) -> bool:
        """True for a 2xx status."""
        return 200 <= self.status < 300

    @property
    def text(self) -> str:
        """The whole body as text (undecodable bytes replaced)."""
        return self.body.decode("utf-8", "replace")

    def lines(self) -> AsyncIterator[str]:
        """The body's lines without their endings (streamed replies only). A connection that
        breaks or goes silent mid-way raises ``TransportFailure``."""
        if self._lines is None:
            raise RuntimeError("this reply was read whole; it has no stream of lines")
        return self._lines

    async def aclose(self) -> None:
        """Give the connection back to the pool (or drop it, when read half-way). Idempotent."""
        close, self._close = self._close, None
        if close is not None:
            await close()


class Backend:
    """POSTs bytes through one library; a streamed reply stays open until ``Reply.aclose``."""

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str], timeout: float | None, stream: bool
    ) -> Reply:
        raise NotImplementedError

    async def aclose(self) -> None:
        raise NotImplementedError

    def abandon(self) -> None:
        """Drop the pool without awaiting (its event loop is gone or is another one)."""


def silence(read_timeout: float, answered: bool) -> str:
    if answered:
        return f"no data from the server for {read_timeout:g} s (the read timeout)"
    return f"no answer from the server within {read_timeout:g} s (the read timeout)"


def cut_short(got: int, length: int | None) -> str:
    of = f" of {length}" if length is not None else ""
    return f"the server closed the connection after {got}{of} bytes of the body"


def no_connect(where: str, reason: str) -> str:
    return f"cannot connect to the server{where} ({reason})"


CONNECT_TIMED_OUT = f"could not connect within {CONNECT_TIMEOUT:g} s"
DROPPED = "the server closed the connection without answering"
BODY_CUT = "the server closed the connection before the body was complete"
