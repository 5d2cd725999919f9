"""``World``: what setup, reference solutions and checks see of one run."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..messages import Message, ToolCallPart, ToolResultPart

if TYPE_CHECKING:  # pragma: no cover
    from ..result import RunResult
    from ..tools import Toolkit
    from .task import Task

__all__ = ["World"]


@dataclass
class World:
    """The toolkits of one run (started and reset), its folder, and — once the run
    is over — its result. Checks query the engines through ``toolkit(name)``."""

    task: Task
    toolkits: dict[str, Toolkit]
    workdir: Path
    """The run's artifacts folder: where tools save renders, exports and reports."""
    messages: list[Message] = field(default_factory=list)
    """The transcript: so far (in a reference solution), or the whole run (in checks)."""
    result: RunResult | None = None
    error: str | None = None
    """Why the run ended without an answer (max turns, timeout, a model error)."""
    data: dict[str, Any] = field(default_factory=dict)
    """Scratch space a task's setup can leave for its checks (expected values ...)."""

    def toolkit(self, name: str) -> Toolkit:
        """The toolkit the task asked for under ``name``."""
        try:
            return self.toolkits[name]
        except KeyError:
            known = ", ".join(self.toolkits) or "none"
            raise KeyError(
                f"task {self.task.id!r} has no toolkit {name!r} (it has: {known})"
            ) from None

    @property
    def answer(self) -> str:
        """The final answer as text ("" when the run gave none)."""
        if self.result is None or self.result.output is None:
            return ""
        output = self.result.output
        if isinstance(output, str):
            return output
        dump = getattr(output, "model_dump_json", None)
        return str(dump()) if callable(dump) else json.dumps(output, default=str)

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        """Every tool call the model made, in order."""
        return [c for m in self.messages if m.role == "assistant" for c in m.tool_calls]

    @property
    def tool_results(self) -> list[ToolResultPart]:
        """Every tool result, in order."""
        return [r for m in self.messages if m.role == "tool" for r in m.tool_results]

    def results_of(self, tool: str, *, ok: bool = True) -> list[ToolResultPart]:
        """The results of calls to ``tool`` (only the successful ones by default)."""
        return [r for r in self.tool_results if r.name == tool and not (ok and r.is_error)]

    @property
    def tool_texts(self) -> str:
        """The text of every tool result, joined by newlines."""
        return "\n".join(r.text for r in self.tool_results)

    def called(self, tool: str) -> bool:
        """Whether the model called ``tool`` at least once."""
        return any(c.name == tool for c in self.tool_calls)
