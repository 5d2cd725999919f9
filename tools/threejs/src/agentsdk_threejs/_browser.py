"""Finding a Chromium to drive and the processes it runs as."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

from agentsdk.sandbox import pid_alive

# Without these Chromium tries to reach Google services and logs refused connections.
DEFAULT_LAUNCH_ARGS: tuple[str, ...] = (
    "--headless",
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
)

SYSTEM_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


class BrowserNotFoundError(RuntimeError):
    """No Chromium could be found; the message says how to get one."""


def find_browser(playwright_default: str | None = None) -> str:
    """Playwright's own Chromium when installed, else a system chromium / google-chrome.

    Args:
        playwright_default: ``playwright.chromium.executable_path`` (may not exist on disk).
    """
    if playwright_default and Path(playwright_default).is_file():
        return playwright_default
    for name in SYSTEM_BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    raise BrowserNotFoundError(
        "No Chromium found for the three.js renderer. Install one (Debian/Ubuntu: "
        "`apt-get install chromium`; elsewhere `playwright install chromium`) or pass "
        "executable_path= to RendererPool/ThreeJSToolkit."
    )


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ... ; comm may contain spaces and parentheses
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    return children


def descendant_pids(root: int) -> list[int]:
    """All live descendants of ``root`` (Linux /proc; empty elsewhere)."""
    if not Path("/proc/self/stat").exists():
        return []
    children = _children_map()
    found: list[int] = []
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def command_line(pid: int) -> str:
    """The command line of ``pid`` ('' when it is gone)."""
    try:
        return (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:
        return ""


def browser_pids(marker: str, root: int | None = None) -> list[int]:
    """The browser whose command line holds ``marker`` and all its child processes.

    Only descendants of this process (or ``root``) are searched, and only the browser launched
    with ``marker`` counts, so two pools in one process never see each other's processes.
    """
    found: list[int] = []
    for pid in descendant_pids(os.getpid() if root is None else root):
        if marker in command_line(pid).split(" "):
            found.append(pid)
            found.extend(descendant_pids(pid))
    return found


def kill_pids(pids: list[int]) -> None:
    """SIGKILL whatever of ``pids`` still runs a browser (a reused pid is left alone)."""
    for pid in pids:
        if pid_alive(pid) and "chrom" in command_line(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
