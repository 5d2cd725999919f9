"""MCP both ways: serve agentsdk tools to any MCP client, and give an agent any
MCP server's tools. Needs the ``mcp`` extra (``pip install 'agentsdk[mcp]'``).

Serve::

    from agentsdk.mcp import serve_stdio, serve_http
    anyio.run(serve_stdio, ["threejs"])               # or: agentsdk mcp serve threejs

Consume::

    from agentsdk.mcp import MCPToolkit
    time = MCPToolkit.stdio("uvx", ["mcp-server-time"])
    agent = Agent(model, tools=[time])                 # or tools=["mcp:uvx mcp-server-time"]
"""

from ._connection import MCPConnectionError
from ._content import from_mcp_content, from_resource_contents, to_mcp_result
from .client import MCPResource, MCPToolkit
from .config import MCPServerConfig, config_paths, load_config, toolkit_from_string
from .server import ToolServer, create_server, is_loopback, serve_http, serve_stdio

__all__ = [
    "MCPConnectionError",
    "MCPResource",
    "MCPServerConfig",
    "MCPToolkit",
    "ToolServer",
    "config_paths",
    "create_server",
    "from_mcp_content",
    "from_resource_contents",
    "is_loopback",
    "load_config",
    "serve_http",
    "serve_stdio",
    "to_mcp_result",
    "toolkit_from_string",
]
