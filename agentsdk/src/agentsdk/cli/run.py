"""``agentsdk tools`` and ``agentsdk run``."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import textwrap
from typing import TYPE_CHECKING, Any, TextIO

import anyio

from .. import plugins
from ..agent import Agent
from ..models import ModelSettings
from ..result import RunResult
from ..tools import Toolkit
from ._keep_alive import add_keep_alive_option, engine_keep_alive
from ._progress import Progress, show_plugin_logs

if TYPE_CHECKING:  # pragma: no cover
    from ..state import ApprovalRequest

DEFAULT_MODEL = "local:default"
PAUSED = 3
"""Exit status of ``agentsdk run`` when a run stays paused for approval."""


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
    width = max(60, min(shutil.get_terminal_size((100, 24)).columns, 120))
    for entry in listing:
        print(f"{entry['toolkit']}:")
        if "error" in entry:
            print(f"  (failed to load: {entry['error']})")
        for spec in entry["tools"]:
            params = ", ".join(spec["parameters"].get("properties", {}))
            print(_wrapped(f"{spec['name']}({params})", spec["description"] or "", width))
    print(f"model schemes: {', '.join(plugins.model_schemes()) or 'none'}")
    return 0


def _wrapped(signature: str, description: str, width: int) -> str:
    """A tool's line: its signature, then its description's first paragraph wrapped
    under it (whole words, never cut mid-sentence)."""
    paragraph = " ".join(description.strip().split("\n\n")[0].split())
    if not paragraph:
        return f"  {signature}"
    head = f"  {signature} - "
    if len(head) > width // 2:  # a long signature gets its own line
        return f"  {signature}\n" + textwrap.fill(
            paragraph, width=width, initial_indent="      ", subsequent_indent="      "
        )
    return textwrap.fill(
        paragraph,
        width=width,
        initial_indent=head,
        subsequent_indent="      ",
        break_on_hyphens=False,
    )


def cmd_run(args: argparse.Namespace) -> int:
    """``agentsdk run``: one run with live progress; the answer on stdout. A call that
    needs approval is asked about on the terminal (y/n/edit)."""
    with engine_keep_alive(args):  # the model's engine is made with the Agent
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    if not args.prompt and not args.resume:
        raise SystemExit("agentsdk run: give a prompt, or --resume RUN_ID with --store")
    if args.resume and not args.store:
        raise SystemExit("agentsdk run: --resume needs the --store the run was saved in")
    names = [n.strip() for n in (args.tools or "").split(",") if n.strip()]
    ask = {n.strip() for n in (args.ask or "").split(",") if n.strip()}
    settings = ModelSettings(temperature=args.temperature, max_tokens=args.max_tokens)
    agent = Agent(
        args.model,
        args.instructions,
        tools=_toolkits(names, ask),
        max_turns=args.max_turns,
        settings=settings,
        trace=args.trace,
        store=args.store,
    )
    progress = Progress()

    async def main() -> RunResult | None:
        try:
            if args.resume:
                from ..state import load_state

                assert agent.store is not None
                waiting = (await load_state(agent.store, args.resume)).waiting
                decisions = ask_approvals(waiting, sys.stdin, sys.stderr) if waiting else None
                if waiting and decisions is None:
                    return None
                result = await agent.resume(args.resume, approvals=decisions, on_event=progress)
            else:
                result = await agent.run(args.prompt, run_id=args.run_id, on_event=progress)
            while result.status == "awaiting_approval":
                decisions = ask_approvals(result.pending, sys.stdin, sys.stderr)
                if decisions is None:
                    return result
                target = result.run_id if agent.store is not None else result.state
                assert target is not None
                result = await agent.resume(target, approvals=decisions, on_event=progress)
            return result
        finally:
            await agent.aclose()

    result = anyio.run(main)
    if result is None or result.status == "awaiting_approval":
        run_id = args.resume if result is None else result.run_id
        where = (
            f"resume it with: agentsdk run --resume {run_id} --store {args.store}"
            if args.store
            else "it was not saved (no --store), so it cannot be resumed"
        )
        print(f"run {run_id} is waiting for approval; {where}", file=sys.stderr)
        return PAUSED
    print(result.output)
    print(
        f"(turns: {result.turns}, tokens: {result.usage.total_tokens}, cost: {result.cost})",
        file=sys.stderr,
    )
    return 0


def _toolkits(names: list[str], ask: set[str]) -> list[Toolkit | str]:
    """The named toolkits, with the ``--ask`` tools needing approval."""
    if not ask:
        return list(names)
    from ..state import require_approval

    loaded = [plugins.load_toolkit(n) for n in names]
    known = {t.name for tk in loaded for t in tk.tools()}
    unknown = sorted(ask - known) if all(tk.tools() for tk in loaded) else []
    if unknown:
        raise SystemExit(
            f"agentsdk run: --ask names {', '.join(unknown)}, which no toolkit given has "
            f"(tools: {', '.join(sorted(known)) or 'none'})"
        )
    out: list[Toolkit | str] = []
    for tk in loaded:
        listed = {t.name for t in tk.tools()}
        mine = ask & listed if listed else ask  # an MCP server lists its tools once started
        out.append(require_approval(tk, *sorted(mine)) if mine else tk)
    return out


def ask_approvals(
    pending: list[ApprovalRequest], answers: TextIO, out: TextIO
) -> dict[str, Any] | None:
    """Ask about each waiting call: ``y`` approves, ``n`` rejects (with an optional
    reason the model is told), ``e`` edits the arguments (JSON). ``None`` when the
    answers ran out (the run stays paused)."""
    from ..state import Edit, Reject

    decisions: dict[str, Any] = {}
    for call in pending:
        shown = json.dumps(call.arguments, ensure_ascii=False)
        while True:
            out.write(f"approve {call.tool}({shown})? [y]es / [n]o / [e]dit: ")
            out.flush()
            line = answers.readline()
            if not line:
                out.write("\n")
                return None
            answer = line.strip().lower()
            if answer in ("y", "yes"):
                decisions[call.call_id] = True
                break
            if answer in ("n", "no"):
                out.write("reason (told to the model, optional): ")
                out.flush()
                decisions[call.call_id] = Reject(answers.readline().strip())
                break
            if answer in ("e", "edit"):
                edited = _read_arguments(answers, out)
                if edited is None:
                    return None
                decisions[call.call_id] = Edit(edited)
                break
            out.write("please answer y, n or e\n")
    return decisions


def _read_arguments(answers: TextIO, out: TextIO) -> dict[str, Any] | None:
    while True:
        out.write("new arguments as a JSON object: ")
        out.flush()
        line = answers.readline()
        if not line:
            return None
        try:
            value = json.loads(line)
        except ValueError as exc:
            out.write(f"not JSON ({exc}); try again\n")
            continue
        if isinstance(value, dict):
            return value
        out.write('the arguments are a JSON object, like {"path": "a.txt"}\n')


def register(sub: Any) -> None:
    """Add ``tools`` and ``run`` to the ``agentsdk`` command."""
    p_tools = sub.add_parser("tools", help="list installed toolkits and their tools")
    p_tools.add_argument("--json", action="store_true", help="print JSON with the full schemas")
    p_tools.set_defaults(func=cmd_tools)

    p_run = sub.add_parser("run", help="run an agent once with live progress")
    p_run.add_argument("prompt", nargs="?", default=None, help="what to ask the agent")
    p_run.add_argument(
        "--model",
        default=DEFAULT_MODEL,
        help="model string, e.g. openai:gpt-4.1 (default: %(default)s, the embedded local model)",
    )
    p_run.add_argument("--tools", default="", help="comma-separated toolkit names")
    p_run.add_argument("--instructions", default=None, help="the system prompt")
    p_run.add_argument(
        "--max-turns", type=int, default=10, help="model requests allowed (default: %(default)s)"
    )
    p_run.add_argument(
        "--temperature", type=float, default=None, help="sampling temperature (model default)"
    )
    p_run.add_argument("--max-tokens", type=int, default=None, help="cap on tokens per model turn")
    p_run.add_argument("--trace", default=None, help="append events to this JSONL file")
    p_run.add_argument("--store", default=None, help="save the run in this SQLite file")
    p_run.add_argument("--run-id", default=None, help="name the run (default: a timestamp)")
    p_run.add_argument("--resume", default=None, metavar="RUN_ID", help="continue a saved run")
    p_run.add_argument(
        "--ask", default="", help="comma-separated tools to ask about (y/n/edit) before they run"
    )
    add_keep_alive_option(p_run)
    p_run.set_defaults(func=cmd_run, setup=show_plugin_logs)
