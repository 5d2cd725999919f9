"""Length-prefixed JSON frames: the wire format shared by the worker and the add-on bridge.

Stdlib only, because this module also runs inside a user's Blender (whose bundled
Python has no pydantic). A frame is a 4-byte big-endian length followed by that many
bytes of UTF-8 JSON holding one object.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from typing import Any, BinaryIO

PROTOCOL_VERSION = 5
"""Bumped whenever a command or frame shape changes incompatibly (2: ``create_primitive``
takes ``base_color`` and ``rest_on``, ``set_transform`` takes ``rest_on``: an add-on of
version 1 in a Blender without pydantic would ignore them and place objects wrongly;
3: ``create_primitive`` refuses a name that is taken, where an add-on of version 2 would
make ``Crate.001``, the name drift that kept small models re-sending the call;
4: ``look_at`` takes an object's name and ``delete`` takes ``keep``, which an add-on of
version 3 would fail on with a bare TypeError or KeyError)."""

SYNC_MARKER = b"\x00agentsdk-blender-frames\x00"
"""Written by the worker just before its greeting, so a host can skip any banner."""

MAX_FRAME_BYTES = 128 * 1024 * 1024
"""Frames larger than this are refused (renders travel base64-encoded inside frames)."""

_HEADER = struct.Struct(">I")

ByteReader = Callable[[int], bytes]


class FrameError(Exception):
    """The peer sent something that is not a valid frame (bad length, bad JSON, not an object)."""


def encode_frame(message: dict[str, Any]) -> bytes:
    """Serialise one JSON object into a frame (header plus body)."""
    body = json.dumps(message, separators=(",", ":"), allow_nan=False).encode("utf-8")
    if len(body) > MAX_FRAME_BYTES:
        raise FrameError(f"frame of {len(body)} bytes exceeds the {MAX_FRAME_BYTES} byte limit")
    return _HEADER.pack(len(body)) + body


def decode_body(body: bytes) -> dict[str, Any]:
    """Parse a frame body; raise FrameError unless it is one JSON object."""
    try:
        message = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise FrameError(f"frame body is not valid UTF-8 JSON: {exc}") from None
    if not isinstance(message, dict):
        raise FrameError(f"frame body must be a JSON object, got {type(message).__name__}")
    return message


def read_exact(read: ByteReader, n: int) -> bytes | None:
    """Read exactly n bytes with ``read``; None on a clean end of stream before any byte."""
    chunks: list[bytes] = []
    remaining = n
    while remaining:
        chunk = read(remaining)
        if not chunk:
            if remaining == n:
                return None
            raise FrameError(f"stream ended inside a frame ({n - remaining}/{n} bytes)")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frame(read: ByteReader) -> dict[str, Any] | None:
    """Read one frame with a ``read(n)`` callable; None when the stream closed cleanly."""
    header = read_exact(read, _HEADER.size)
    if header is None:
        return None
    (length,) = _HEADER.unpack(header)
    if length > MAX_FRAME_BYTES:
        raise FrameError(f"frame length {length} exceeds the {MAX_FRAME_BYTES} byte limit")
    body = read_exact(read, length)
    if body is None:
        raise FrameError("stream ended after a frame header")
    return decode_body(body)


def write_frame(stream: BinaryIO, message: dict[str, Any]) -> None:
    """Write one frame to a binary stream and flush it."""
    stream.write(encode_frame(message))
    stream.flush()
