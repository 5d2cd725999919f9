"""Typed shapes of the Anthropic Messages API wire format (request, response, stream events).

Only the fields this connector reads or writes are modelled; unknown fields the API adds later
are ignored on the way in (``extra="ignore"``) so a new server field never breaks parsing.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Lenient(BaseModel):
    """Base for shapes read from the server: unknown fields are ignored, and a number where
    a string belongs (an id) is read as its text."""

    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True)


# ---------------------------------------------------------------- request blocks


class WireImageSource(BaseModel):
    """An inline base64 image."""

    type: Literal["base64"] = "base64"
    media_type: str
    data: str


class WireTextBlock(BaseModel):
    """A text content block."""

    type: Literal["text"] = "text"
    text: str


class WireImageBlock(BaseModel):
    """An image content block (user turns and inside tool results)."""

    type: Literal["image"] = "image"
    source: WireImageSource


class WireToolUseBlock(BaseModel):
    """A tool call the assistant made, replayed in history."""

    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any]


class WireToolResultBlock(BaseModel):
    """The result of a tool call; text and image blocks may sit inside it."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: list[WireTextBlock | WireImageBlock] | None = None
    is_error: bool | None = None


WireContentBlock = Annotated[
    WireTextBlock | WireImageBlock | WireToolUseBlock | WireToolResultBlock,
    Field(discriminator="type"),
]


class WireMessage(BaseModel):
    """One turn of the conversation; roles alternate user/assistant."""

    role: Literal["user", "assistant"]
    content: list[WireContentBlock]


class WireTool(BaseModel):
    """A client tool the model may call."""

    name: str
    description: str | None = None
    input_schema: dict[str, Any]


class WireToolChoice(BaseModel):
    """How the model must use tools: auto, any (some tool), tool (that one) or none."""

    type: Literal["auto", "any", "tool", "none"]
    name: str | None = None
    disable_parallel_tool_use: bool | None = None


class WireRequest(BaseModel):
    """The body of ``POST /v1/messages``."""

    model: str
    max_tokens: int
    messages: list[WireMessage]
    system: list[WireTextBlock] | None = None
    tools: list[WireTool] | None = None
    tool_choice: WireToolChoice | None = None
    temperature: float | None = None
    stream: bool | None = None


# ---------------------------------------------------------------- response


class WireUsage(_Lenient):
    """Token counts; in streams ``message_delta`` carries cumulative values."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None


class WireResponseBlock(_Lenient):
    """A content block of a response (text, tool_use, or a kind we skip such as thinking)."""

    type: str
    text: str | None = None
    id: str | None = None
    name: str | None = None
    input: Any = None
    """The call's arguments: an object, or (from some gateways) that object as JSON text."""


class WireResponse(_Lenient):
    """A complete (non-streamed) Message."""

    type: str = "message"
    id: str = ""
    model: str = ""
    content: list[WireResponseBlock] | None = None
    stop_reason: str | None = None
    usage: WireUsage = Field(default_factory=WireUsage)


class WireErrorCode(_Lenient):
    """``error.details`` of some errors (e.g. ``enforced_spend_limit_reached`` on a 429)."""

    error_code: str | None = None


class WireErrorDetail(_Lenient):
    """``error`` object of an error body or stream ``error`` event."""

    type: str = "api_error"
    message: str = ""
    details: WireErrorCode | None = None


class WireErrorBody(_Lenient):
    """``{"type": "error", "error": {...}, "request_id": ...}``."""

    error: WireErrorDetail = Field(default_factory=WireErrorDetail)
    request_id: str | None = None


# ---------------------------------------------------------------- stream events


class WireDelta(_Lenient):
    """``delta`` of content_block_delta (text_delta / input_json_delta) or message_delta."""

    type: str | None = None
    text: str | None = None
    partial_json: str | None = None
    stop_reason: str | None = None


class WireStreamEvent(_Lenient):
    """Any SSE event payload; which fields are set depends on ``type``."""

    type: str
    index: int | None = None
    message: WireResponse | None = None
    content_block: WireResponseBlock | None = None
    delta: WireDelta | None = None
    usage: WireUsage | None = None
    error: WireErrorDetail | None = None
