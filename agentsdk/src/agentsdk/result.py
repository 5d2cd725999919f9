"""What a finished run hands back."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .messages import Message, Usage

if TYPE_CHECKING:  # pragma: no cover
    from .pricing import Cost
    from .state import ApprovalRequest, RunState


@dataclass
class RunResult:
    """The output of a run and how it got there."""

    output: Any
    """The final text, or an instance of the agent's ``output_type``; ``None`` while
    the run waits for approvals."""
    messages: list[Message]
    usage: Usage
    usage_by_model: dict[str, Usage] = field(default_factory=dict)
    turns: int = 0
    run_id: str = ""
    artifacts_dir: Path | None = None
    finish_reason: str | None = None
    """Why the model stopped its last turn, as the connector reported it (``stop``,
    ``tool_calls``, ``length`` ...); ``None`` when it did not say."""
    status: Literal["finished", "awaiting_approval"] = "finished"
    """``awaiting_approval``: the run stopped before the calls in ``pending``."""
    pending: list[ApprovalRequest] = field(default_factory=list)
    """The tool calls waiting for a person's decision (``Agent.resume(approvals=...)``)."""
    state: RunState | None = None
    """Everything needed to continue the run, when it paused (saved in the agent's
    store too, when it has one)."""

    @property
    def tool_calls(self) -> list[str]:
        """Names of the tools called, in order."""
        return [c.name for m in self.messages if m.role == "assistant" for c in m.tool_calls]

    @property
    def cost(self) -> Cost:
        """What the run cost in US dollars, from ``usage_by_model`` and the price table
        (``agentsdk.pricing``; zero for local models, may be out of date)."""
        from .pricing import cost_of

        return cost_of(self.usage_by_model)
