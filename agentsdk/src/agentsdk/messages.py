"""Messages and their parts: what the agent and the model say to each other.

Every type here is a pydantic model that round-trips through JSON; image bytes
travel as base64.
"""

from __future__ import annotations

import base64
import itertools
import mimetypes
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, PlainValidator

if TYPE_CHECKING:  # pragma: no cover
    from PIL.Image import Image as PILImage


def _b64_decode(value: Any) -> bytes:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):
        return base64.b64decode(value)
    raise TypeError("expected bytes or a base64 string")


Base64Bytes = Annotated[
    bytes,
    PlainValidator(_b64_decode),
    PlainSerializer(
        lambda b: base64.b64encode(b).decode("ascii"), return_type=str, when_used="json"
    ),
]
"""Raw bytes in Python, base64 text in JSON."""


_CALL_PREFIX = "call_" + uuid.uuid4().hex[:12]
_call_counter = itertools.count(1)


def _new_call_id() -> str:
    # Unique per process run: a random prefix once, then a counter (uuid4 per call costs more).
    return f"{_CALL_PREFIX}{next(_call_counter):08x}"


_M = TypeVar("_M", bound=BaseModel)
_set = object.__setattr__


def _trusted(cls: type[_M], values: dict[str, Any], fields_set: set[str]) -> _M:
    """An instance of ``cls`` from values already known to be valid.

    What ``model_construct`` makes, without its per-field alias and default lookups
    (it costs several µs, and the loop makes a few objects per turn): ``values`` must
    hold every field in declaration order, and ``fields_set`` the ones
    ``model_construct`` would record as set. Only for the plain models in this
    package (no private attributes, no ``model_post_init``, no extra fields).
    """
    m = cls.__new__(cls)
    _set(m, "__dict__", values)
    _set(m, "__pydantic_fields_set__", fields_set)
    _set(m, "__pydantic_extra__", None)
    _set(m, "__pydantic_private__", None)
    return m


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextPart(_Frozen):
    """Plain text."""

    kind: Literal["text"] = "text"
    text: str


def _text_part(text: str) -> TextPart:
    """A ``TextPart`` of a ``str`` the caller made (validation would only copy it)."""
    return _trusted(TextPart, {"kind": "text", "text": text}, {"text"})


class ImagePart(_Frozen):
    """An image: raw bytes plus a media type such as ``image/png``."""

    kind: Literal["image"] = "image"
    data: Base64Bytes
    media_type: str = "image/png"
    label: str | None = None
    """A short name for the image (e.g. the file it was saved to)."""

    def __repr__(self) -> str:
        return f"ImagePart(media_type={self.media_type!r}, bytes={len(self.data)}, label={self.label!r})"


class ToolCallPart(_Frozen):
    """The model asks for a tool to be called."""

    kind: Literal["tool_call"] = "tool_call"
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str = Field(default_factory=_new_call_id)
    raw_arguments: str | None = None
    """Set by a connector when the model's argument text was not valid JSON."""


class ToolResultPart(_Frozen):
    """What a tool call produced, sent back to the model."""

    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str
    parts: list[TextPart | ImagePart] = Field(default_factory=list)
    is_error: bool = False
    instead: dict[str, Any] | None = None
    """For a refusal: the arguments of the call the tool offered in its place
    (``ToolError(instead=...)``). Connectors do not send it as such (the error's text says
    the call); the local model's connector sends it for a refused call resent unchanged."""

    @property
    def text(self) -> str:
        """All text parts joined by newlines."""
        return "\n".join([p.text for p in self.parts if isinstance(p, TextPart)])


Part = Annotated[TextPart | ImagePart | ToolCallPart | ToolResultPart, Field(discriminator="kind")]
Role = Literal["system", "user", "assistant", "tool"]


class Message(_Frozen):
    """One message in a conversation. Immutable once made, so connectors may cache
    their wire form per message."""

    role: Role
    parts: list[Part]

    @classmethod
    def user(cls, *content: str | Image | ImagePart) -> Message:
        """A user message from text and images."""
        return cls(role="user", parts=[_as_part(c) for c in content])

    @classmethod
    def system(cls, text: str) -> Message:
        """A system message."""
        return cls(role="system", parts=[TextPart(text=text)])

    @property
    def text(self) -> str:
        """All text parts joined by newlines."""
        return "\n".join([p.text for p in self.parts if isinstance(p, TextPart)])

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        """The tool calls in this message."""
        return [p for p in self.parts if isinstance(p, ToolCallPart)]

    @property
    def tool_results(self) -> list[ToolResultPart]:
        """The tool results in this message."""
        return [p for p in self.parts if isinstance(p, ToolResultPart)]


def _as_part(content: str | Image | ImagePart) -> TextPart | ImagePart:
    if isinstance(content, str):
        return TextPart(text=content)
    if isinstance(content, Image):
        return content.to_part()
    return content


class Usage(BaseModel):
    """Token and request counts; add two together with ``+``."""

    model_config = ConfigDict(extra="forbid")

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    requests: int = 0

    def __add__(self, other: Usage) -> Usage:
        return _trusted(
            Usage,
            {
                "input_tokens": self.input_tokens + other.input_tokens,
                "output_tokens": self.output_tokens + other.output_tokens,
                "cache_read_tokens": self.cache_read_tokens + other.cache_read_tokens,
                "cache_write_tokens": self.cache_write_tokens + other.cache_write_tokens,
                "requests": self.requests + other.requests,
            },
            {
                "input_tokens",
                "output_tokens",
                "cache_read_tokens",
                "cache_write_tokens",
                "requests",
            },
        )

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


_MAGIC = {
    b"\x89PNG": "image/png",
    b"\xff\xd8\xff": "image/jpeg",
    b"GIF8": "image/gif",
    b"RIFF": "image/webp",
}


def _sniff_media_type(data: bytes) -> str | None:
    for magic, media in _MAGIC.items():
        if data.startswith(magic):
            return media
    return None


class Image:
    """A picture a tool returns to show the model what it made.

    Build it from bytes, a file or a PIL image::

        Image(png_bytes)
        Image.from_path("render.png")
        Image.from_pil(pil_image)
    """

    __slots__ = ("data", "label", "media_type")

    def __init__(self, data: bytes, media_type: str | None = None, *, label: str | None = None):
        if not isinstance(data, bytes | bytearray):
            raise TypeError(f"Image data must be bytes, not {type(data).__name__}")
        self.data = bytes(data)
        self.media_type = media_type or _sniff_media_type(self.data) or "image/png"
        self.label = label

    @classmethod
    def from_path(cls, path: str | Path) -> Image:
        """Read an image file; the media type comes from its content or extension."""
        p = Path(path)
        data = p.read_bytes()
        media = _sniff_media_type(data) or mimetypes.guess_type(p.name)[0] or "image/png"
        return cls(data, media, label=p.name)

    @classmethod
    def from_pil(cls, image: PILImage, format: str = "PNG") -> Image:
        """Encode a PIL image (PNG by default)."""
        import io

        buf = io.BytesIO()
        image.save(buf, format=format)
        return cls(buf.getvalue(), f"image/{format.lower()}")

    def to_pil(self) -> PILImage:
        """Decode into a PIL image (needs pillow)."""
        import io

        from PIL import Image as PILImageModule

        return PILImageModule.open(io.BytesIO(self.data))

    def save(self, path: str | Path) -> Path:
        """Write the bytes to ``path`` and return it."""
        p = Path(path)
        p.write_bytes(self.data)
        return p

    def to_part(self) -> ImagePart:
        """The message part for this image."""
        return ImagePart(data=self.data, media_type=self.media_type, label=self.label)

    def __repr__(self) -> str:
        return f"Image(media_type={self.media_type!r}, bytes={len(self.data)})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Image) and other.data == self.data

    def __hash__(self) -> int:
        return hash(self.data)
