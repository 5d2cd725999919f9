"""``--keep-alive``: how long a local engine stays loaded for the next command.

A command-line run is short, and loading a local model (and restoring its prompt) is a
good part of it. Engine plugins read ``AGENTSDK_ENGINE_KEEP_ALIVE`` (seconds) when they
make an engine; the command sets it for its own run only, so a program that calls these
commands in-process keeps its own setting.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator
from typing import Any

KEEP_ALIVE_ENV = "AGENTSDK_ENGINE_KEEP_ALIVE"
DEFAULT_KEEP_ALIVE = 300.0


def add_keep_alive_option(parser: Any) -> None:
    """Add ``--keep-alive SECONDS`` to a subcommand's parser."""
    parser.add_argument(
        "--keep-alive",
        type=float,
        default=None,
        metavar="SECONDS",
        help="how long a local engine stays loaded after this command, so the next one "
        f"starts at once (default: ${KEEP_ALIVE_ENV} or {DEFAULT_KEEP_ALIVE:g}; 0 stops it "
        "with this command)",
    )


@contextlib.contextmanager
def engine_keep_alive(args: argparse.Namespace) -> Iterator[None]:
    """Set the engines' keep-alive for the duration of one command."""
    chosen = getattr(args, "keep_alive", None)
    before = os.environ.get(KEEP_ALIVE_ENV)
    if chosen is None:
        chosen = float(before) if before else DEFAULT_KEEP_ALIVE
    if chosen < 0:
        raise ValueError(f"--keep-alive must be 0 or more seconds, not {chosen:g}")
    os.environ[KEEP_ALIVE_ENV] = f"{chosen:g}"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(KEEP_ALIVE_ENV, None)
        else:
            os.environ[KEEP_ALIVE_ENV] = before
