"""``agentsdk tools`` and ``agentsdk run``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import anyio

from .. import plugins
from ..agent import Agent
from ..models import ModelSettings
from ._progress import Progress, run_with_progress, show_plugin_logs

DEFAULT_MODEL = "local:default"


def _toolkit_listing() -> list[dict[str, Any]]:
    listing: list[dict[str, Any]] = []
    for name in plugins.toolkit_names():
        entry: dict[str, Any] = {"toolkit": name, "tools": []}
        try:
            toolkit = plugins.load_toolkit(name)
            entry["tools"] = [t.spec().model_dump() for t in toolkit.tools()]
        except Exception as exc:  # a broken plugin should not hide the others
            entry["error"] = f"{type(exc).__name__}: {exc}"
        listing.append(entry)
    return listing


def cmd_tools(args: argparse.Namespace) -> int:
    """``agentsdk tools``: installed toolkits, their tools and schemas."""
    listing = _toolkit_listing()
    if args.json:
        print(json.dumps(listing, indent=2))
        return 0
    if not listing:
        print("no toolkits installed")
    for entry in listing:
        print(f"{entry['toolkit']}:")
        if "error" in entry:
            print(f"  (failed to load: {entry['error']})")
        for spec in entry["tools"]:
            params = ", ".join(spec["parameters"].get("properties", {}))
            first = spec["description"].splitlines()[0] if spec["description"] else ""
            print(f"  {spec['name']}({params}) - {first}")
    print(f"model schemes: {', '.join(plugins.model_schemes()) or 'none'}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """``agentsdk run``: one run with live progress; the answer on stdout."""
    names = [n.strip() for n in (args.tools or "").split(",") if n.strip()]
    settings = ModelSettings(temperature=args.temperature, max_tokens=args.max_tokens)
    agent = Agent(
        args.model,
        args.instructions,
        tools=names,
        max_turns=args.max_turns,
        settings=settings,
        trace=args.trace,
    )
    result = anyio.run(run_with_progress, agent, args.prompt, Progress())
    print(result.output)
    print(f"(turns: {result.turns}, tokens: {result.usage.total_tokens})", file=sys.stderr)
    return 0


def register(sub: Any) -> None:
    """Add ``tools`` and ``run`` to the ``agentsdk`` command."""
    p_tools = sub.add_parser("tools", help="list installed toolkits and their tools")
    p_tools.add_argument("--json", action="store_true", help="print JSON with the full schemas")
    p_tools.set_defaults(func=cmd_tools)

    p_run = sub.add_parser("run", help="run an agent once with live progress")
    p_run.add_argument("prompt")
    p_run.add_argument("--model", default=DEFAULT_MODEL, help="model string, e.g. openai:gpt-4.1")
    p_run.add_argument("--tools", default="", help="comma-separated toolkit names")
    p_run.add_argument("--instructions", default=None)
    p_run.add_argument("--max-turns", type=int, default=10)
    p_run.add_argument("--temperature", type=float, default=None)
    p_run.add_argument("--max-tokens", type=int, default=None)
    p_run.add_argument("--trace", default=None, help="append events to this JSONL file")
    p_run.set_defaults(func=cmd_run, setup=show_plugin_logs)
