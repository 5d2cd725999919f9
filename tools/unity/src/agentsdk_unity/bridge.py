"""UnityBridge: the async client of the editor's framed TCP bridge."""

from __future__ import annotations

import errno
import uuid
from types import TracebackType

import anyio
import anyio.abc
from pydantic import JsonValue, ValidationError

from ._protocol import (
    BridgeResponse,
    FrameReader,
    FrameTooLargeError,
    HandshakeRefusal,
    JournalEntry,
    UnsendableRequestError,
    Welcome,
    decode_response,
    encode_request,
    hello_line,
)
from .errors import (
    BridgeAuthError,
    BridgeConnectionLost,
    BridgeTooManyConnectionsError,
    BridgeUnavailableError,
    UnityBridgeError,
)
from .settings import BridgeSettings

_STREAM_ERRORS = (
    anyio.EndOfStream,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    OSError,
)


class _Connection:
    """One authenticated connection; several requests share it and whoever waits reads frames."""

    def __init__(self, stream: anyio.abc.ByteStream, reader: FrameReader, welcome: Welcome) -> None:
        self.stream = stream
        self.reader = reader
        self.welcome = welcome
        self.waiting: set[str] = set()
        self.responses: dict[str, BridgeResponse] = {}
        self.read_lock = anyio.Lock()
        self.write_lock = anyio.Lock()
        self.broken = False

    async def close(self) -> None:
        self.broken = True
        await self.stream.aclose()

    async def send(self, frame: bytes) -> None:
        if self.broken:
            raise BridgeConnectionLost
        async with self.write_lock:
            try:
                await self.stream.send(frame)
            except _STREAM_ERRORS as exc:
                self.broken = True
                raise BridgeConnectionLost from exc

    async def wait_for(self, request_id: str) -> BridgeResponse:
        """The response with this id, reading (and filing) other requests' responses meanwhile."""
        self.waiting.add(request_id)
        try:
            while True:
                if request_id in self.responses:
                    return self.responses.pop(request_id)
                if self.broken:
                    raise BridgeConnectionLost
                async with self.read_lock:
                    if request_id in self.responses or self.broken:
                        continue
                    await self._read_one()
        finally:
            self.waiting.discard(request_id)
            self.responses.pop(request_id, None)

    async def _read_one(self) -> None:
        try:
            payload = await self.reader.read_frame()
            response = decode_response(payload)
        except _STREAM_ERRORS as exc:
            self.broken = True
            raise BridgeConnectionLost from exc
        except FrameTooLargeError as exc:
            await self.close()
            raise UnityBridgeError("frame_too_large", str(exc)) from exc
        except ValidationError as exc:
            await self.close()
            raise UnityBridgeError(
                "protocol_error", f"unreadable frame from the bridge: {exc}"
            ) from exc
        if response.id is None:
            # A connection-level complaint about a frame we sent; the server closes if it cannot go on.
            return
        if response.id in self.waiting:
            self.responses[response.id] = response


class UnityBridge:
    """Async client of the agentsdk bridge inside the Unity Editor.

    Connects lazily on the first request (``async with`` connects eagerly), multiplexes concurrent
    requests on one connection, retries while the editor is compiling or reloading scripts, and
    after a dropped connection fetches the response from the editor's result journal by request id
    instead of running the command twice.

    Example::

        async with UnityBridge() as bridge:  # reads Library/AgentSdkBridge/connection.json
            info = await bridge.request("gameobject.create", {"name": "Cube", "primitive": "cube"})
    """

    def __init__(
        self, settings: BridgeSettings | None = None, *, client_name: str = "agentsdk-unity"
    ) -> None:
        self.settings = settings or BridgeSettings()
        self.client_name = client_name
        self._connection: _Connection | None = None
        self._connect_lock: anyio.Lock | None = None
        self._welcome: Welcome | None = None

    @property
    def welcome(self) -> Welcome | None:
        """The last handshake answer (protocol, capabilities, editor state), once connected."""
        return self._welcome

    async def __aenter__(self) -> UnityBridge:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Closes the connection (idempotent). The editor keeps running."""
        connection, self._connection = self._connection, None
        if connection is not None:
            with anyio.CancelScope(shield=True):
                await connection.close()

    async def connect(self) -> Welcome:
        """Connects and authenticates now instead of on the first request."""
        deadline = anyio.current_time() + self.settings.request_timeout
        connection = await self._ensure_connection(deadline)
        return connection.welcome

    async def request(
        self,
        command: str,
        args: dict[str, JsonValue] | None = None,
        *,
        timeout: float | None = None,
    ) -> JsonValue:
        """Runs one bridge command and returns its JSON result.

        Raises UnityBridgeError with the editor's error code when the command fails,
        BridgeUnavailableError when no editor is listening, and UnityBridgeError("timeout")
        when no answer came in time (the editor may still finish the command).
        """
        request_id = uuid.uuid4().hex
        try:
            frame = encode_request(request_id, command, args or {})
        except UnsendableRequestError as exc:
            raise UnityBridgeError("invalid_args", f"'{command}': {exc}") from None
        limit = self._welcome.max_frame_bytes if self._welcome else self.settings.max_frame_bytes
        if len(frame) - 8 > limit:
            raise UnityBridgeError(
                "frame_too_large",
                f"request of {len(frame) - 8} bytes exceeds the bridge limit of {limit}",
            )
        budget = self.settings.request_timeout if timeout is None else timeout
        deadline = anyio.current_time() + budget
        maybe_received = False
        backoff = 0.1
        while True:
            connection = await self._ensure_connection(deadline)
            try:
                with anyio.fail_after(max(0.0, deadline - anyio.current_time())):
                    response = None
                    if maybe_received:
                        response = await self._journal_lookup(connection, request_id)
                    if response is None:
                        maybe_received = True
                        await connection.send(frame)
                        response = await connection.wait_for(request_id)
            except BridgeConnectionLost:
                await self._drop(connection)
                continue
            except TimeoutError:
                raise UnityBridgeError(
                    "timeout",
                    f"'{command}' got no answer within {budget:g} s (request id {request_id}); "
                    "the editor may still finish it",
                    retryable=True,
                ) from None
            if response.ok:
                return response.result
            error = response.error
            if error is None:
                raise UnityBridgeError("protocol_error", "response with ok=false and no error")
            if error.retryable and anyio.current_time() + backoff < deadline:
                # Retryable answers are never journaled, so the same id simply runs again.
                maybe_received = False
                await anyio.sleep(backoff)
                backoff = min(backoff * 2, 1.0)
                continue
            raise UnityBridgeError(error.code, error.message, retryable=error.retryable)

    async def _journal_lookup(
        self, connection: _Connection, request_id: str
    ) -> BridgeResponse | None:
        """The response the editor journaled for a request whose answer we lost, if it finished."""
        lookup_id = uuid.uuid4().hex
        await connection.send(
            encode_request(lookup_id, "bridge.result", {"request_id": request_id})
        )
        answer = await connection.wait_for(lookup_id)
        if not answer.ok or answer.result is None:
            return None
        entry = JournalEntry.model_validate(answer.result)
        # "pending" and "unknown" both mean: send it again; a pending id attaches to the running command.
        return entry.response if entry.state == "done" else None

    async def _drop(self, connection: _Connection) -> None:
        if self._connection is connection:
            self._connection = None
        with anyio.CancelScope(shield=True):
            await connection.close()

    async def _ensure_connection(self, deadline: float) -> _Connection:
        if self._connect_lock is None:
            self._connect_lock = anyio.Lock()
        async with self._connect_lock:
            if self._connection is not None and not self._connection.broken:
                return self._connection
            self._connection = await self._open(deadline)
            self._welcome = self._connection.welcome
            return self._connection

    async def _open(self, deadline: float) -> _Connection:
        settings = self.settings
        started = anyio.current_time()
        had_session = self._welcome is not None
        while True:
            try:
                port, token = settings.endpoint()
            except FileNotFoundError as exc:
                raise BridgeUnavailableError(str(exc)) from None
            # The status is read before the attempt as well as after it: the editor writes
            # 'reloading' before it stops listening and 'ready' once it listens again, so a
            # status read only after a refusal can already be the 'ready' of a bridge that came
            # back meanwhile (a client descheduled for a moment on a loaded machine). Only a
            # status that said idle before the attempt and did not change since means "gone".
            before = settings.read_status()
            try:
                return await self._handshake(port, token)
            except (
                _HelloUnanswered,
                OSError,
                TimeoutError,
                anyio.EndOfStream,
                anyio.BrokenResourceError,
            ) as exc:
                unanswered = isinstance(exc, _HelloUnanswered)
                reason = str(exc) if unanswered else _reason(exc)
                now = anyio.current_time()
                status = settings.read_status()
                busy_now = status is not None and status.busy
                changed = status != before
                if busy_now or changed or (before is not None and before.busy):
                    wait_until = min(deadline, started + settings.busy_timeout)
                elif unanswered:
                    # Something is listening: a bridge shedding idle sockets, or one shutting down.
                    wait_until = min(deadline, started + settings.connect_timeout)
                elif status is None and had_session:
                    wait_until = min(deadline, started + settings.reconnect_timeout)
                else:
                    wait_until = now
                # A status that just turned idle means the bridge is back: retry almost at once.
                delay = 0.02 if changed and not busy_now else 0.2
                if now + delay < wait_until:
                    await anyio.sleep(delay)
                    continue
                state = f" The editor's last status was '{status.state}'." if status else ""
                if unanswered:
                    raise UnityBridgeError(
                        "handshake_failed",
                        f"Something on 127.0.0.1:{port} accepted the connection but {reason}.{state} "
                        "If it is the Unity bridge, see the editor console for '[agentsdk bridge]' "
                        "messages; otherwise point AGENTSDK_UNITY_PORT at the editor's port.",
                    ) from None
                raise BridgeUnavailableError(
                    f"No Unity editor is listening on 127.0.0.1:{port} ({reason}).{state} Open the "
                    "project in the Unity Editor with the com.agentsdk.unity-bridge package installed "
                    "(or point AGENTSDK_UNITY_PROJECT / AGENTSDK_UNITY_PORT at the right one)."
                ) from None

    async def _handshake(self, port: int, token: str) -> _Connection:
        timeout = self.settings.connect_timeout
        with anyio.fail_after(timeout):
            stream = await anyio.connect_tcp("127.0.0.1", port)
        local = stream.extra(anyio.abc.SocketAttribute.local_address)
        if local == stream.extra(anyio.abc.SocketAttribute.remote_address):
            # TCP self-connect: retrying a loopback port that nobody listens on (a reload) can get
            # that very port as the ephemeral source port. Nobody is there: treat it as refused.
            await stream.aclose()
            raise ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")
        reader = FrameReader(stream, self.settings.max_frame_bytes)
        try:
            with anyio.fail_after(timeout):
                await stream.send(hello_line(token, self.client_name))
                line = await reader.read_line()
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                await stream.aclose()
            if isinstance(exc, TimeoutError):
                raise _HelloUnanswered(f"did not answer the hello within {timeout:g} s") from None
            if isinstance(exc, (anyio.EndOfStream, anyio.BrokenResourceError, OSError)):
                raise _HelloUnanswered("closed it before answering the hello") from None
            raise
        try:
            welcome = Welcome.model_validate_json(line)
        except ValidationError:
            await stream.aclose()
            try:
                refusal = HandshakeRefusal.model_validate_json(line)
            except ValidationError:
                raise UnityBridgeError(
                    "protocol_error", f"not an agentsdk bridge on port {port}"
                ) from None
            if refusal.error.code == "too_many_connections":
                raise BridgeTooManyConnectionsError(refusal.error.message) from None
            raise BridgeAuthError(refusal.error.code, refusal.error.message) from None
        reader.max_frame_bytes = self.settings.max_frame_bytes
        return _Connection(stream, reader, welcome)


class _HelloUnanswered(Exception):
    """The TCP connection was accepted but no hello answer came (internal)."""


def _reason(exc: BaseException) -> str:
    """A short cause: anyio wraps refused connects in 'All connection attempts failed'."""
    cause = exc.__cause__
    if isinstance(cause, BaseExceptionGroup) and cause.exceptions:
        exc = cause.exceptions[0]
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__
