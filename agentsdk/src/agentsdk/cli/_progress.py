"""Live progress lines for the ``agentsdk`` commands that run agents."""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any, TextIO

from ..agent import Agent
from ..events import (
    Event,
    ImageProduced,
    ModelRequestStarted,
    RunFailed,
    RunFinished,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)

__all__ = ["Progress", "run_with_progress", "show_plugin_logs"]


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


async def run_with_progress(agent: Agent, prompt: str, progress: Progress) -> Any:
    """Stream one run of ``agent`` through ``progress``; the ``RunResult``."""
    result = None
    try:
        async for event in agent.stream(prompt):
            progress(event)
            if isinstance(event, RunFinished):
                result = event.result
    finally:
        await agent.aclose()
    return result


def show_plugin_logs() -> None:
    """Engines say what they are doing (starting, ready) through ``logging``;
    the CLI shows those messages as progress lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("         %(name)s: %(message)s"))
    for name in ("agentsdk", "agentsdk_openai", "agentsdk_anthropic"):
        logger = logging.getLogger(name)
        if not logger.handlers:
            logger.addHandler(handler)
            logger.setLevel(logging.INFO)
