"""MCP servers named in a configuration file, and the ``"mcp:..."`` toolkit strings.

The file is the JSON MCP clients already use (Claude Desktop, Cursor: an
``mcpServers`` object; VS Code: ``servers``), so one file can serve both::

    {"mcpServers": {
        "time": {"command": "uvx", "args": ["mcp-server-time"]},
        "docs": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ..."}}
    }}

It is looked for at ``$AGENTSDK_MCP_CONFIG``, then ``./mcp.json``, then
``mcp.json`` in the user config folder (``~/.config/agentsdk/`` on Linux).
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any, Literal

from platformdirs import user_config_path
from pydantic import BaseModel, ConfigDict, ValidationError

from .client import MCPToolkit

__all__ = ["MCPServerConfig", "config_paths", "load_config", "toolkit_from_string"]


class MCPServerConfig(BaseModel):
    """One server entry: a ``command`` (stdio) or a ``url`` (streamable HTTP)."""

    model_config = ConfigDict(extra="ignore")  # other clients' keys (disabled, autoApprove ...)

    type: Literal["stdio", "http", "streamable-http", "streamableHttp"] | None = None
    command: str | None = None
    args: list[str] = []
    env: dict[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] | None = None
    prefix: str | None = None
    """agentsdk's own: put ``prefix_`` before the server's tool names."""
    tools: list[str] | None = None
    """agentsdk's own: offer only these tools."""

    def toolkit(self, label: str) -> MCPToolkit:
        """The toolkit for this entry."""
        options: dict[str, Any] = {"label": label, "prefix": self.prefix, "tools": self.tools}
        if self.command:
            return MCPToolkit.stdio(self.command, self.args, env=self.env, cwd=self.cwd, **options)
        if self.url:
            return MCPToolkit.http(self.url, headers=self.headers, **options)
        raise ValueError(f"MCP server {label!r} needs a 'command' or a 'url'")


def config_paths() -> list[Path]:
    """Where a configuration file is looked for, in order."""
    paths = []
    if os.environ.get("AGENTSDK_MCP_CONFIG"):
        paths.append(Path(os.environ["AGENTSDK_MCP_CONFIG"]).expanduser())
    paths.append(Path("mcp.json"))
    paths.append(user_config_path("agentsdk") / "mcp.json")
    return paths


def load_config(path: str | Path) -> dict[str, MCPServerConfig]:
    """The servers of one configuration file, by name.

    Raises:
        ValueError: The file is not JSON or an entry is malformed (the message
            names the file and the entry).
    """
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{p}: not JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{p}: expected a JSON object with 'mcpServers'")
    servers = data.get("mcpServers", data.get("servers"))
    if not isinstance(servers, dict):
        raise ValueError(f"{p}: expected an 'mcpServers' (or 'servers') object")
    out: dict[str, MCPServerConfig] = {}
    for name, entry in servers.items():
        try:
            out[name] = MCPServerConfig.model_validate(entry)
        except ValidationError as exc:
            raise ValueError(f"{p}: server {name!r}: {exc}") from exc
        if not out[name].command and not out[name].url:
            raise ValueError(f"{p}: server {name!r} needs a 'command' or a 'url'")
    return out


def toolkit_from_string(spec: str) -> MCPToolkit:
    """The toolkit ``"mcp:<spec>"`` names (``Agent(tools=["mcp:time"])``,
    ``agentsdk run --tools mcp:time``):

    - ``NAME``: the server called NAME in the first configuration file that has it;
    - ``FILE.json#NAME``: the server NAME in that file;
    - ``http://...`` or ``https://...``: a streamable-HTTP server;
    - anything else: a command line (``"uvx mcp-server-time"``) started over stdio.
    """
    spec = spec.strip()
    if spec.startswith("mcp:"):
        spec = spec[4:]
    if not spec:
        raise ValueError(
            "an MCP toolkit string needs a server: 'mcp:NAME', 'mcp:URL' or 'mcp:COMMAND'"
        )
    if spec.startswith(("http://", "https://")):
        return MCPToolkit.http(spec)
    if "#" in spec and spec.split("#", 1)[0].endswith(".json"):
        file, name = spec.split("#", 1)
        servers = load_config(file)
        if name not in servers:
            raise ValueError(f"{file} has no MCP server {name!r} (it has: {', '.join(servers)})")
        return servers[name].toolkit(name)
    if " " not in spec:
        for path in config_paths():
            if path.is_file():
                servers = load_config(path)
                if spec in servers:
                    return servers[spec].toolkit(spec)
    words = shlex.split(spec)
    return MCPToolkit.stdio(words[0], words[1:])
