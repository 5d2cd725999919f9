"""What a finished run hands back."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .messages import Message, Usage


@dataclass
class RunResult:
    """The output of a run and how it got there."""

    output: Any
    """The final text, or an instance of the agent's ``output_type``."""
    messages: list[Message]
    usage: Usage
    usage_by_model: dict[str, Usage] = field(default_factory=dict)
    turns: int = 0
    run_id: str = ""
    artifacts_dir: Path | None = None
    finish_reason: str | None = None
    """Why the model stopped its last turn, as the connector reported it (``stop``,
    ``tool_calls``, ``length`` ...); ``None`` when it did not say."""

    @property
    def tool_calls(self) -> list[str]:
        """Names of the tools called, in order."""
        return [c.name for m in self.messages if m.role == "assistant" for c in m.tool_calls]
