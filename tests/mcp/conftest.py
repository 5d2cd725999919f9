"""Real MCP counterparts for the tests, and a way to see which processes we left behind.

server-everything (npm) and mcp-server-time / mcp-server-git (PyPI, own venv) are
installed by scripts/setup.d/mcp.sh; tests/mcp/servers/ holds small servers written
with the official SDK for the faults no public server shows on demand.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .helpers import EVERYTHING, SERVER_BIN, cmdline, descendants


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.fail(f"{path} is missing: run ./scripts/setup (scripts/setup.d/mcp.sh installs it)")
    return path


@pytest.fixture
def everything() -> list[str]:
    """The command line of @modelcontextprotocol/server-everything over stdio."""
    return ["node", str(_need(EVERYTHING)), "stdio"]


@pytest.fixture
def time_server() -> str:
    return str(_need(SERVER_BIN / "mcp-server-time"))


@pytest.fixture
def git_server() -> str:
    return str(_need(SERVER_BIN / "mcp-server-git"))


@pytest.fixture
def no_leftovers() -> Iterator[None]:
    """Fail if a test leaves an MCP server (or anything else) running below us."""
    before = descendants()
    yield
    left = {p: cmdline(p) for p in descendants() - before}
    # the sandbox warden (one per agent process) is meant to outlive a test
    left = {p: c for p, c in left.items() if "agentsdk-warden" not in c and "-S -c" not in c}
    assert left == {}, f"processes left running: {left}"
