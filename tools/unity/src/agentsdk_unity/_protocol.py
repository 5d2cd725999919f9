"""Wire format of the Unity bridge: a hello line, then 8-byte big-endian length-prefixed JSON frames."""

from __future__ import annotations

import json
import struct
from typing import Literal

import anyio.abc
from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError

PROTOCOL_VERSION = 1
HEADER = struct.Struct(">Q")
MAX_WELCOME_BYTES = 1_000_000


class BridgeErrorInfo(BaseModel):
    """A typed error as the bridge sends it."""

    code: str
    message: str
    retryable: bool = False


class Welcome(BaseModel):
    """The bridge's answer to a valid hello: protocol version and what it can do."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["welcome"]
    protocol: int
    server: str
    session: str
    state: str
    max_frame_bytes: int
    capabilities: list[str]


class HandshakeRefusal(BaseModel):
    """The bridge's answer to a bad hello (wrong token, wrong protocol)."""

    type: Literal["error"]
    error: BridgeErrorInfo


class BridgeResponse(BaseModel):
    """One response frame; ``id`` is None only for connection-level errors."""

    id: str | None
    ok: bool
    result: JsonValue = None
    error: BridgeErrorInfo | None = None


class JournalEntry(BaseModel):
    """Result of the built-in ``bridge.result`` lookup."""

    request_id: str
    state: Literal["done", "pending", "unknown"]
    response: BridgeResponse | None = None


def hello_line(token: str, client: str) -> bytes:
    """The first line a client sends."""
    doc = {"protocol": PROTOCOL_VERSION, "token": token, "client": client}
    return json.dumps(doc).encode() + b"\n"


def encode_frame(payload: bytes) -> bytes:
    """Length prefix + payload, ready for one send."""
    return HEADER.pack(len(payload)) + payload


class UnsendableRequestError(ValueError):
    """The arguments cannot be written as JSON (NaN, Infinity, or a value JSON has no type for)."""


def encode_request(request_id: str, command: str, args: dict[str, JsonValue]) -> bytes:
    """A request frame; raises UnsendableRequestError for arguments that are not JSON."""
    try:
        # ASCII with \u escapes: a lone surrogate stays sendable, and the bridge refuses it by name.
        body = json.dumps(
            {"id": request_id, "command": command, "args": args},
            separators=(",", ":"),
            allow_nan=False,
        )
    except ValueError as exc:
        raise UnsendableRequestError(
            f"NaN and Infinity have no JSON form ({exc}); send finite numbers"
        ) from None
    except TypeError as exc:
        raise UnsendableRequestError(f"not a JSON value: {exc}") from None
    return encode_frame(body.encode("ascii"))


def decode_response(payload: bytes) -> BridgeResponse:
    """A response frame. Text the editor holds with half a surrogate pair arrives as a \\u escape:
    pydantic's parser refuses those, Python's json keeps them, so the slow path takes over then."""
    try:
        return BridgeResponse.model_validate_json(payload)
    except ValidationError as fast_error:
        try:
            document = json.loads(payload)
        except ValueError:
            raise fast_error from None
        return BridgeResponse.model_validate(document)


class FrameTooLargeError(Exception):
    """The peer announced a frame above our cap."""


class FrameReader:
    """Reads lines and frames from a byte stream.

    Cancel-safe: bytes are only taken out of the buffer once a whole line or frame is there,
    so a timeout while waiting never leaves the stream in the middle of a frame.
    """

    def __init__(self, stream: anyio.abc.ByteReceiveStream, max_frame_bytes: int) -> None:
        self._stream = stream
        self._buffer = bytearray()
        self.max_frame_bytes = max_frame_bytes

    async def _fill(self) -> None:
        chunk = await self._stream.receive(1 << 16)
        self._buffer.extend(chunk)

    async def read_line(self, limit: int = MAX_WELCOME_BYTES) -> bytes:
        """Bytes up to (not including) the next newline."""
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                return line
            if len(self._buffer) > limit:
                raise FrameTooLargeError(f"handshake line longer than {limit} bytes")
            await self._fill()

    async def read_frame(self) -> bytes:
        """The next frame's payload; raises anyio.EndOfStream when the peer closes."""
        while True:
            if len(self._buffer) >= HEADER.size:
                (size,) = HEADER.unpack_from(self._buffer)
                if size > self.max_frame_bytes:
                    raise FrameTooLargeError(
                        f"bridge sent a frame of {size} bytes (limit {self.max_frame_bytes})"
                    )
                if len(self._buffer) >= HEADER.size + size:
                    payload = bytes(self._buffer[HEADER.size : HEADER.size + size])
                    del self._buffer[: HEADER.size + size]
                    return payload
            await self._fill()
