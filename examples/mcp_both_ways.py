"""MCP both ways: an agent uses agentsdk's finance toolkit *through* an MCP server (the same
``agentsdk mcp serve finance`` an MCP client such as Claude Desktop would start), together
with any third-party MCP server you name.

Runs offline by default: a scripted planner (``FunctionModel``) asks the served finance
tools for MSFT's 2010 prices and answers from them. ``--model`` lets a real model plan;
``--server`` adds another MCP server's tools (a command line or an http(s) URL), e.g.::

    uv run python examples/mcp_both_ways.py
    uv run python examples/mcp_both_ways.py --server "uvx mcp-server-time" --model openai:gpt-4.1
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import anyio
from agentsdk.mcp import MCPToolkit, toolkit_from_string
from agentsdk.testing import FunctionModel

from agentsdk import Agent, ModelRequest, TextPart, ToolCallPart

QUESTION = "How did MSFT's price move in 2010? Give the first and last close."
INSTRUCTIONS = "Use the tools for every number. Answer in one or two sentences."


def planner(request: ModelRequest) -> ToolCallPart | str:
    """The offline stand-in for a model: ask the served tool once, then answer from it."""
    results = [r for m in request.messages for r in m.tool_results]
    if not results:
        return ToolCallPart(
            name="finance_price_history",
            arguments={"symbol": "MSFT", "start": "2010-01-01", "end": "2010-12-31"},
        )
    data = json.loads("".join(p.text for p in results[0].parts if isinstance(p, TextPart)))
    first, last = data["first"], data["last"]
    change = (last["close"] / first["close"] - 1) * 100
    return (
        f"MSFT closed at {first['close']:.2f} on {first['date']} and {last['close']:.2f} on "
        f"{last['date']} ({change:+.1f}%), according to the finance tools served over MCP."
    )


def served_finance() -> MCPToolkit:
    """agentsdk's finance toolkit behind our own MCP server, started as a child process."""
    return MCPToolkit.stdio(
        sys.executable,
        ["-m", "agentsdk.cli", "mcp", "serve", "finance"],
        prefix="finance",
        label="agentsdk finance",
        connect_timeout=120,
    )


async def run(model: Any = None, servers: list[str] | None = None) -> dict[str, Any]:
    """One run; returns the answer and which tools the agent had and used."""
    toolkits = [served_finance(), *(toolkit_from_string(s) for s in servers or [])]
    agent = Agent(model or FunctionModel(planner), INSTRUCTIONS, tools=toolkits, max_turns=8)
    result = await agent.run(QUESTION)
    called = [c.name for m in result.messages for c in m.tool_calls]
    offered = sorted({t.name for k in toolkits for t in k.tools()})
    await agent.aclose()
    return {"answer": result.output, "tools_called": called, "tools_offered": offered}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="a model string; scripted by default")
    parser.add_argument(
        "--server", action="append", default=[], help="another MCP server (command line or URL)"
    )
    args = parser.parse_args()
    outcome = anyio.run(run, args.model, args.server)
    print(outcome["answer"])
    print(f"(tools called: {', '.join(outcome['tools_called'])})", file=sys.stderr)


if __name__ == "__main__":
    main()
