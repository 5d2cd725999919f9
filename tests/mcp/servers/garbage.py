"""An MCP server that first writes lines that are not JSON-RPC to stdout (a stray print,
a banner), then either serves properly (``python garbage.py then-serve``) or only
ever writes garbage (``python garbage.py``)."""

import sys

print("Starting awesome server v1.0 ...", flush=True)
print("{not json", flush=True)

if sys.argv[1:] == ["then-serve"]:
    from mcp.server.mcpserver import MCPServer

    app = MCPServer("garbage-then-serve")

    @app.tool()
    def echo(message: str) -> str:
        """Say the message back."""
        return message

    app.run("stdio")
else:
    for line in sys.stdin:
        print(f"you said {line.strip()[:20]}... but I only speak garbage", flush=True)
