"""The ``agentsdk`` command: list tools, run an agent, run the offline demo."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

import anyio

from . import plugins
from .agent import Agent
from .events import (
    Event,
    ImageProduced,
    ModelRequestStarted,
    RunFailed,
    RunFinished,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from .models import ModelSettings
from .tools import Tool, tool

DEMO_MODEL = "local:default"


class Progress:
    """Prints run events as live progress lines on a stream (stderr by default)."""

    def __init__(self, out: TextIO | None = None, *, show_text: bool = False):
        self.out = out or sys.stderr
        self.show_text = show_text
        self.started = time.perf_counter()

    def _line(self, text: str) -> None:
        elapsed = time.perf_counter() - self.started
        self.out.write(f"[{elapsed:6.1f}s] {text}\n")
        self.out.flush()

    def __call__(self, event: Event) -> None:
        if isinstance(event, ModelRequestStarted):
            tier = f" ({event.tier} tier)" if event.tier else ""
            self._line(f"turn {event.turn}: asking {event.model}{tier}")
        elif isinstance(event, ToolCallStarted):
            args = json.dumps(event.arguments, ensure_ascii=False)
            self._line(f"  → {event.name}({args[:120]})")
        elif isinstance(event, ToolCallFinished):
            mark = "error" if event.is_error else "ok"
            preview = event.preview.replace("\n", " ")[:100]
            self._line(f"  ← {event.name} {mark} in {event.duration:.2f}s: {preview}")
        elif isinstance(event, ImageProduced):
            self._line(f"  image from {event.tool}: {event.path}")
        elif isinstance(event, TextDelta) and self.show_text:
            self.out.write(event.text)
        elif isinstance(event, RunFailed):
            self._line(f"run failed: {event.error_type}: {event.message}")


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


async def _run_with_progress(agent: Agent, prompt: str, progress: Progress) -> Any:
    result = None
    try:
        async for event in agent.stream(prompt):
            progress(event)
            if isinstance(event, RunFinished):
                result = event.result
    finally:
        await agent.aclose()
    return result


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
    result = anyio.run(_run_with_progress, agent, args.prompt, Progress())
    print(result.output)
    print(f"(turns: {result.turns}, tokens: {result.usage.total_tokens})", file=sys.stderr)
    return 0


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
    result = anyio.run(_run_with_progress, agent, prompt, Progress())
    print(result.output)
    print(
        f"(turns: {result.turns}; tools called: {', '.join(result.tool_calls) or 'none'}; "
        f"artifacts: {result.artifacts_dir})",
        file=sys.stderr,
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``agentsdk`` command."""
    parser = argparse.ArgumentParser(
        prog="agentsdk", description="Run and inspect agentsdk agents."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p_tools = sub.add_parser("tools", help="list installed toolkits and their tools")
    p_tools.add_argument("--json", action="store_true", help="print JSON with the full schemas")
    p_tools.set_defaults(func=cmd_tools)

    p_run = sub.add_parser("run", help="run an agent once with live progress")
    p_run.add_argument("prompt")
    p_run.add_argument("--model", default=DEMO_MODEL, help="model string, e.g. openai:gpt-4.1")
    p_run.add_argument("--tools", default="", help="comma-separated toolkit names")
    p_run.add_argument("--instructions", default=None)
    p_run.add_argument("--max-turns", type=int, default=10)
    p_run.add_argument("--temperature", type=float, default=None)
    p_run.add_argument("--max-tokens", type=int, default=None)
    p_run.add_argument("--trace", default=None, help="append events to this JSONL file")
    p_run.set_defaults(func=cmd_run)

    p_demo = sub.add_parser("demo", help="the offline demo on the embedded local model")
    p_demo.add_argument("--model", default=DEMO_MODEL)
    p_demo.add_argument("--toolkit", default="auto", help="finance, builtin, or auto")
    p_demo.add_argument("--prompt", default=None)
    p_demo.add_argument("--max-turns", type=int, default=6)
    p_demo.add_argument("--trace", default=None)
    p_demo.set_defaults(func=cmd_demo)
    return parser


def _show_plugin_logs() -> None:
    """Engines say what they are doing (starting, ready) through ``logging``;
    the CLI shows those messages as progress lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("         %(name)s: %(message)s"))
    for name in ("agentsdk", "agentsdk_openai", "agentsdk_anthropic"):
        logger = logging.getLogger(name)
        if not logger.handlers:
            logger.addHandler(handler)
            logger.setLevel(logging.INFO)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``agentsdk`` command."""
    args = build_parser().parse_args(argv)
    if args.command in ("run", "demo"):
        _show_plugin_logs()
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        print(f"agentsdk: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
