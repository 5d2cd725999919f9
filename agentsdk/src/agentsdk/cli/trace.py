"""``agentsdk trace view run.jsonl``: a JSONL trace as one self-contained HTML page."""

from __future__ import annotations

import argparse
import sys
import webbrowser
from typing import Any


def cmd_view(args: argparse.Namespace) -> int:
    """Write the viewer page for a trace (and open it with ``--open``)."""
    from ..viewer import write_html

    out = write_html(args.trace, args.output)
    print(out)
    if args.open and not webbrowser.open(out.resolve().as_uri()):
        print(f"no browser could be started; open {out} yourself", file=sys.stderr)
    return 0


def register(sub: Any) -> None:
    """Add ``trace`` to the ``agentsdk`` command."""
    p_trace = sub.add_parser("trace", help="look at JSONL traces (Agent(trace=...), --trace)")
    trace_sub = p_trace.add_subparsers(dest="trace_command", required=True)
    p_view = trace_sub.add_parser(
        "view",
        help="write a trace as one self-contained HTML page",
        description=(
            "Write a timeline of the runs in a JSONL trace (turns, model requests, tool calls "
            "with durations, arguments and results, images, tokens and cost, errors) as one "
            "HTML file that needs no network."
        ),
    )
    p_view.add_argument("trace", help="the JSONL trace file")
    p_view.add_argument(
        "-o", "--output", default=None, help="where to write the page (default: TRACE.html)"
    )
    p_view.add_argument("--open", action="store_true", help="open the page in a browser")
    p_view.set_defaults(func=cmd_view)
