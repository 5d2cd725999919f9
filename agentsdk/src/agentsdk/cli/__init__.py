"""The ``agentsdk`` command. Each subcommand lives in its own module with a
``register(subparsers)`` function; add a module's name to ``COMMANDS`` to add one."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ._progress import Progress

__all__ = ["COMMANDS", "Progress", "build_parser", "main"]

COMMANDS = ("run", "demo", "tasks", "mcp", "trace")
"""Modules of this package that add subcommands, in the order ``--help`` lists them."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``agentsdk`` command."""
    parser = argparse.ArgumentParser(
        prog="agentsdk", description="Run and inspect agentsdk agents."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``agentsdk`` command."""
    args = build_parser().parse_args(argv)
    setup = getattr(args, "setup", None)
    if setup is not None:
        setup()
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        print(f"agentsdk: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
