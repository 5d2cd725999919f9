"""Tool results in both directions: our message parts and MCP content blocks.

Pictures stay pictures both ways (an MCP image becomes an ``ImagePart`` the
loop routes like any tool's image, and ours become MCP image content); what a
model cannot read (audio, binary blobs) is saved to the run's folder and named.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from typing import Any

import mcp.types as mt

from ..artifacts import ArtifactStore
from ..messages import ImagePart, TextPart, _text_part
from ..tools import ToolOutcome

__all__ = ["from_mcp_content", "from_resource_contents", "to_mcp_result"]

_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_TEXT_TYPES = ("application/json", "application/xml", "application/javascript", "application/yaml")


def to_mcp_result(outcome: ToolOutcome) -> mt.CallToolResult:
    """Our tool's outcome as an MCP result: text and image content, ``is_error`` kept."""
    content: list[mt.ContentBlock] = []
    for part in outcome.parts:
        if isinstance(part, ImagePart):
            data = base64.b64encode(part.data).decode("ascii")
            content.append(mt.ImageContent(type="image", data=data, mime_type=part.media_type))
        else:
            content.append(mt.TextContent(type="text", text=part.text))
    return mt.CallToolResult(content=content, is_error=outcome.is_error)


def _decode(data: str, what: str) -> bytes | None:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _binary(
    data: bytes, mime: str | None, label: str, artifacts: ArtifactStore | None
) -> TextPart | ImagePart:
    mime = mime or "application/octet-stream"
    if mime in _IMAGE_TYPES:
        return ImagePart(data=data, media_type=mime, label=label)
    if mime.startswith("text/") or mime.split(";")[0] in _TEXT_TYPES:
        try:  # text sent as a blob is still text the model can read
            return TextPart(text=data.decode("utf-8"))
        except UnicodeDecodeError:
            pass
    if artifacts is None:
        return TextPart(text=f"[{label}: {mime}, {len(data)} bytes, not shown]")
    ext = mime.split("/")[-1].split(";")[0].split("+")[0] or "bin"
    path = artifacts.save_bytes(f"{label}.{ext}", data)
    return TextPart(text=f"[{label}: {mime}, {len(data)} bytes, saved at {path}]")


def from_mcp_content(
    blocks: Sequence[mt.ContentBlock],
    structured: dict[str, Any] | None = None,
    artifacts: ArtifactStore | None = None,
    *,
    server: str = "server",
) -> list[TextPart | ImagePart]:
    """An MCP tool result's content as our parts.

    Images become ``ImagePart`` (so the model sees them); embedded text resources
    become text; audio and other binary content is saved to ``artifacts`` and
    named; resource links are listed with their URI so the model can read them.
    Structured content is given as JSON when the server sent no other content.
    """
    parts: list[TextPart | ImagePart] = []
    for block in blocks:
        if isinstance(block, mt.TextContent):
            parts.append(_text_part(block.text))  # a str the SDK already validated
        elif isinstance(block, mt.ImageContent | mt.AudioContent):
            kind = "image" if isinstance(block, mt.ImageContent) else "audio"
            data = _decode(block.data, kind)
            if data is None:
                parts.append(TextPart(text=f"[{server} sent {kind} content that is not base64]"))
            else:
                parts.append(_binary(data, block.mime_type, f"{server}-{kind}", artifacts))
        elif isinstance(block, mt.EmbeddedResource):
            parts.extend(from_resource_contents([block.resource], artifacts, server=server))
        elif isinstance(block, mt.ResourceLink):
            about = ", ".join(x for x in (block.mime_type, block.description) if x)
            parts.append(
                TextPart(
                    text=f"[resource {block.name}: {block.uri}{f' ({about})' if about else ''}]"
                )
            )
    if structured is not None and not parts:
        parts.append(TextPart(text=json.dumps(structured, ensure_ascii=False)))
    return parts or [TextPart(text="(no output)")]


def from_resource_contents(
    contents: Sequence[mt.TextResourceContents | mt.BlobResourceContents],
    artifacts: ArtifactStore | None = None,
    *,
    server: str = "server",
) -> list[TextPart | ImagePart]:
    """What ``resources/read`` returned (or a tool embedded), as our parts."""
    parts: list[TextPart | ImagePart] = []
    for item in contents:
        if isinstance(item, mt.TextResourceContents):
            parts.append(TextPart(text=item.text))
            continue
        data = _decode(item.blob, "blob")
        if data is None:
            parts.append(TextPart(text=f"[{item.uri}: the server sent a blob that is not base64]"))
        else:
            name = str(item.uri).rstrip("/").rsplit("/", 1)[-1] or "resource"
            parts.append(_binary(data, item.mime_type, f"{server}-{name}", artifacts))
    return parts
