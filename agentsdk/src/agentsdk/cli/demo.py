"""``agentsdk demo``: the offline demo on the embedded local model."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import anyio

from .. import plugins
from ..agent import Agent
from ..models import ModelSettings
from ..tools import Tool, tool
from ._progress import Progress, run_with_progress, show_plugin_logs

DEMO_MODEL = "local:default"


@tool
def word_stats(text: str) -> dict[str, int]:
    """Count the words, characters and sentences in a text.

    Args:
        text: The text to measure.
    """
    sentences = sum(text.count(c) for c in ".!?") or 1
    return {"words": len(text.split()), "characters": len(text), "sentences": sentences}


# The demo's small local model picks better among a few tools.
DEMO_TOOLS: dict[str, tuple[str, ...]] = {"finance": ("performance", "price_history")}

DEMO_TASKS: dict[str, tuple[str, str]] = {
    "finance": (
        "You are a financial research assistant. Use the tools to get real numbers; "
        "never invent figures. Answer in two or three sentences.",
        "Using the sample data, what was MSFT's total return and maximum drawdown "
        "from 2000-01-01 to 2013-12-31?",
    ),
    "builtin": (
        "You are a helpful assistant. Use the word_stats tool to measure text.",
        "How many words are in this sentence: 'Agents that look at what they make build better things.'",
    ),
}


def _demo_tools(choice: str) -> tuple[str, list[Tool | str]]:
    installed = plugins.toolkit_names()
    if choice == "auto":
        choice = "finance" if "finance" in installed else "builtin"
    if choice == "builtin":
        return choice, [word_stats]
    if choice not in installed:
        raise SystemExit(
            f"toolkit {choice!r} is not installed (installed: {', '.join(installed) or 'none'})"
        )
    return choice, [choice]


def cmd_demo(args: argparse.Namespace) -> int:
    """``agentsdk demo``: the offline demo on the embedded local model."""
    choice, tools = _demo_tools(args.toolkit)
    instructions, prompt = DEMO_TASKS.get(choice, DEMO_TASKS["builtin"])
    prompt = args.prompt or prompt
    print(f"agentsdk demo: model {args.model}, tools: {choice}", file=sys.stderr)
    print(f"question: {prompt}", file=sys.stderr)
    agent = Agent(
        args.model,
        instructions,
        tools=tools,
        max_turns=args.max_turns,
        settings=ModelSettings(temperature=0, max_tokens=400),
        trace=args.trace,
    )
    result = anyio.run(run_with_progress, agent, prompt, Progress())
    print(result.output)
    print(
        f"(turns: {result.turns}; tools called: {', '.join(result.tool_calls) or 'none'}; "
        f"artifacts: {result.artifacts_dir})",
        file=sys.stderr,
    )
    return 0


def register(sub: Any) -> None:
    """Add ``demo`` to the ``agentsdk`` command."""
    p_demo = sub.add_parser("demo", help="the offline demo on the embedded local model")
    p_demo.add_argument("--model", default=DEMO_MODEL, help="model string (default: %(default)s)")
    p_demo.add_argument(
        "--toolkit", default="auto", help="finance, builtin, or auto (default: %(default)s)"
    )
    p_demo.add_argument("--prompt", default=None, help="ask this instead of the demo's question")
    p_demo.add_argument(
        "--max-turns", type=int, default=6, help="model requests allowed (default: %(default)s)"
    )
    p_demo.add_argument("--trace", default=None, help="append events to this JSONL file")
    p_demo.set_defaults(func=cmd_demo, setup=show_plugin_logs)
