"""An MCP server's resources: listed and read as an API, and as two tools for the model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from ..artifacts import ArtifactStore
from ..messages import ImagePart, TextPart
from ..tools import Tool, ToolContext, ToolError
from ._content import from_resource_contents

if TYPE_CHECKING:  # pragma: no cover
    from .client import MCPToolkit

__all__ = ["MCPResource", "any_resources", "list_resources", "read_resource", "resource_tools"]

_PAGES = 100  # a server whose listing never ends cannot hang the toolkit


class MCPResource(BaseModel):
    """A resource (or resource template) an MCP server offers."""

    uri: str
    """The URI to read; for a template, the URI template (RFC 6570) to fill in."""
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    template: bool = False


async def list_resources(client: Client) -> list[MCPResource]:
    """The server's resources (every page), then its resource templates."""
    found: list[MCPResource] = []
    cursor: str | None = None
    for _ in range(_PAGES):
        page = await client.list_resources(cursor=cursor)
        found.extend(
            MCPResource(
                uri=str(r.uri),
                name=r.name,
                title=r.title,
                description=r.description,
                mime_type=r.mime_type,
                size=r.size,
            )
            for r in page.resources
        )
        cursor = page.next_cursor
        if cursor is None:
            break
    try:
        templates = await client.list_resource_templates()
    except MCPError:  # optional for servers
        return found
    found.extend(
        MCPResource(
            uri=t.uri_template,
            name=t.name,
            title=t.title,
            description=t.description,
            mime_type=t.mime_type,
            template=True,
        )
        for t in templates.resource_templates
    )
    return found


async def read_resource(
    client: Client, uri: str, artifacts: ArtifactStore | None, label: str
) -> list[TextPart | ImagePart]:
    """One resource's contents as message parts."""
    try:
        result = await client.read_resource(uri)
    except MCPError as exc:
        raise ToolError(f"MCP server {label!r} could not read {uri!r}: {exc.message}") from None
    return from_resource_contents(result.contents, artifacts, server=label)


async def any_resources(client: Client) -> bool:
    """Whether the server lists at least one resource or template (first pages only)."""
    try:
        if (await client.list_resources()).resources:
            return True
        return bool((await client.list_resource_templates()).resource_templates)
    except MCPError:
        return False


def resource_tools(toolkit: MCPToolkit, stem: str) -> list[Tool]:
    """``<stem>_list_resources`` and ``<stem>_read_resource`` for the model."""
    label = toolkit.label

    async def listing(arguments: dict[str, Any]) -> str:
        items = await toolkit.list_resources()
        if not items:
            return f"{label} has no resources."
        lines = []
        for r in items:
            about = ", ".join(x for x in (r.mime_type, r.description) if x)
            kind = "template " if r.template else ""
            lines.append(f"- {kind}{r.uri} ({r.name}){': ' + about if about else ''}")
        return "\n".join(lines)

    async def reading(arguments: dict[str, Any], ctx: ToolContext | None) -> Any:
        return await toolkit.read_resource(arguments["uri"], ctx.artifacts if ctx else None)

    return [
        Tool.from_schema(
            f"{stem}_list_resources",
            f"List the resources (documents, data) the {label} MCP server offers, "
            "with their URIs; templates have {placeholders} to fill in.",
            {"type": "object", "properties": {}, "additionalProperties": False},
            listing,
        ),
        Tool.from_schema(
            f"{stem}_read_resource",
            f"Read one resource of the {label} MCP server by its URI.",
            {
                "type": "object",
                "properties": {"uri": {"type": "string", "description": "The resource URI."}},
                "required": ["uri"],
                "additionalProperties": False,
            },
            reading,
        ),
    ]
