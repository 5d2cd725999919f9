"""``agentsdk mcp serve`` (installed toolkits to any MCP client) and ``agentsdk mcp tools``
(what an MCP server offers)."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import sys
from typing import Any

import anyio

from ..tools import Tool, Toolkit


def _parse_address(value: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``PORT``; IPv6 hosts in brackets."""
    host, _, port = value.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}") from None
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"port {number} is out of range")
    return host, number


def _load_python(spec: str) -> list[Any]:
    """``package.module:name``: a Toolkit, a tool, or a list of them (or a function
    returning one of those)."""
    module_name, _, attr = spec.partition(":")
    try:
        value: Any = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise SystemExit(f"agentsdk mcp: cannot load {spec!r}: {exc}") from exc
    if isinstance(value, type) and issubclass(value, Toolkit):
        value = value()
    elif callable(value) and not isinstance(value, Tool | Toolkit):
        value = value()
    return list(value) if isinstance(value, list | tuple) else [value]


def _items(names: list[str]) -> list[Any]:
    items: list[Any] = []
    for name in names:
        if ":" in name and not name.startswith("mcp:"):
            items.extend(_load_python(name))
        else:
            items.append(name)  # an installed toolkit, or "mcp:..." to pass one through
    return items


def cmd_serve(args: argparse.Namespace) -> int:
    """``agentsdk mcp serve``."""
    from ..mcp import serve_http, serve_stdio

    only = [n.strip() for n in (args.tools or "").split(",") if n.strip()]
    with contextlib.redirect_stdout(sys.stderr):  # over stdio, stdout is the protocol's
        items = _items(args.toolkits)
    options: dict[str, Any] = {
        "name": args.name,
        "artifacts_dir": args.artifacts,
        "tools": only or None,
    }
    if args.http is None:
        anyio.run(lambda: serve_stdio(items, **options))
        return 0
    host, port = args.http
    token = args.token or os.environ.get("AGENTSDK_MCP_TOKEN") or None
    try:
        anyio.run(lambda: serve_http(items, host=host, port=port, token=token, **options))
    except ValueError as exc:
        print(f"agentsdk mcp: {exc}", file=sys.stderr)
        return 2
    return 0


def cmd_tools(args: argparse.Namespace) -> int:
    """``agentsdk mcp tools SERVER``: connect, list the tools, disconnect."""
    from ..mcp import MCPToolkit

    async def listing() -> list[dict[str, Any]]:
        async with MCPToolkit.from_string(args.server) as toolkit:
            return [t.spec().model_dump() for t in toolkit.tools()]

    specs = anyio.run(listing)
    if args.json:
        print(json.dumps(specs, indent=2))
        return 0
    for spec in specs:
        params = ", ".join(spec["parameters"].get("properties", {}))
        first = spec["description"].splitlines()[0] if spec["description"] else ""
        print(f"{spec['name']}({params}) - {first}")
    return 0


def register(sub: Any) -> None:
    """Add ``mcp serve`` and ``mcp tools`` to the ``agentsdk`` command."""
    p_mcp = sub.add_parser("mcp", help="serve toolkits over MCP, or inspect an MCP server")
    mcp_sub = p_mcp.add_subparsers(dest="mcp_command", required=True)

    p_serve = mcp_sub.add_parser(
        "serve",
        help="serve toolkits to MCP clients (stdio by default)",
        description="Serve installed toolkits (e.g. threejs finance), Python objects "
        "(package.module:name) or other MCP servers (mcp:NAME) to any MCP client.",
    )
    p_serve.add_argument(
        "toolkits",
        nargs="+",
        metavar="TOOLKIT",
        help="an installed toolkit name, package.module:name, or mcp:NAME",
    )
    p_serve.add_argument(
        "--http",
        type=_parse_address,
        default=None,
        metavar="HOST:PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (host 127.0.0.1 "
        "by default; port 0 picks a free one)",
    )
    p_serve.add_argument(
        "--token",
        default=None,
        help="bearer token every HTTP request must send (required off loopback; "
        "default: $AGENTSDK_MCP_TOKEN)",
    )
    p_serve.add_argument("--tools", default="", help="offer only these tools (comma-separated)")
    p_serve.add_argument("--name", default="agentsdk", help="the server name clients see")
    p_serve.add_argument("--artifacts", default=None, help="folder for files the tools save")
    p_serve.set_defaults(func=cmd_serve)

    p_tools = mcp_sub.add_parser("tools", help="list the tools of an MCP server")
    p_tools.add_argument("server", help="mcp:NAME, a URL, or a command line in quotes")
    p_tools.add_argument("--json", action="store_true", help="print the full schemas as JSON")
    p_tools.set_defaults(func=cmd_tools)
