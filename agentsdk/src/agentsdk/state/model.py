"""The run state: plain, versioned data with everything a run needs to continue.

A ``RunState`` is what a store saves at every step boundary and what
``Agent.resume`` continues from. It round-trips through JSON
(``model_dump_json`` / ``model_validate_json``; images travel as base64 there,
while a store keeps them as files). ``version`` says which layout it has.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..messages import ImagePart, Message, TextPart, ToolCallPart, Usage
from ..models import ModelSettings

__all__ = [
    "STATE_VERSION",
    "ApprovalRequest",
    "Approve",
    "CallRecord",
    "Decision",
    "Edit",
    "Owner",
    "PendingTurnState",
    "Reject",
    "RunState",
    "RunStatus",
]

STATE_VERSION = 1
"""The layout of ``RunState`` this agentsdk writes (and the newest it reads)."""

RunStatus = Literal["running", "awaiting_approval", "finished", "failed"]


class Owner(BaseModel):
    """The process that runs (or last ran) a run: how a resume tells a live run from
    one whose process died."""

    pid: int
    host: str
    started: int = 0
    """The process's start time in clock ticks after boot (``/proc/<pid>/stat``), so a
    recycled pid is not taken for the same process; 0 when unknown."""


class CallRecord(BaseModel):
    """One tool call of the turn in progress and what is known about it."""

    call: ToolCallPart
    """The call as it runs (with edited arguments, if a person edited them)."""
    approval: Literal["none", "required", "approved", "rejected", "edited"] = "none"
    reason: str | None = None
    """Why a person rejected it (the model is told)."""
    original_arguments: dict[str, Any] | None = None
    """The model's arguments, when a person edited them."""
    started: bool = False
    """A call of a side-effecting tool was recorded as starting (it may have acted)."""
    outcome: list[TextPart | ImagePart] | None = None
    """Its result, once it ran (or was rejected)."""
    is_error: bool = False
    kind: Literal["ok", "invalid_arguments", "error", "timeout"] = "ok"
    instead: dict[str, Any] | None = None
    """The call its refusal offered (``ToolError(instead=...)``)."""
    unchanged: bool = False
    """The call changed nothing (its tool returned ``Unchanged``)."""
    duration: float = 0.0


class PendingTurnState(BaseModel):
    """A turn whose model answer asked for tool calls not all answered yet."""

    turn: int
    model: str
    tier: str | None = None
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None
    calls: list[CallRecord]


class ApprovalRequest(BaseModel):
    """A tool call waiting for a person: approve, reject (with a reason) or edit it."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    call_id: str
    tool: str
    arguments: dict[str, Any]
    turn: int


class Approve(BaseModel):
    """Run the call as the model asked."""

    model_config = ConfigDict(frozen=True)

    decision: Literal["approve"] = "approve"


class Reject(BaseModel):
    """Do not run the call; the model is told it was rejected, and why."""

    model_config = ConfigDict(frozen=True)

    decision: Literal["reject"] = "reject"
    reason: str = ""

    def __init__(self, reason: str = "", **data: Any) -> None:
        super().__init__(reason=reason, **data)


class Edit(BaseModel):
    """Run the call with these arguments instead (the transcript then shows them)."""

    model_config = ConfigDict(frozen=True)

    decision: Literal["edit"] = "edit"
    arguments: dict[str, Any]

    def __init__(self, arguments: dict[str, Any], **data: Any) -> None:
        super().__init__(arguments=arguments, **data)


Decision = bool | Approve | Reject | Edit
"""``True`` approves, ``False`` rejects without a reason."""


class RunState(BaseModel):
    """Everything needed to continue a run, saved at each step boundary."""

    version: int = STATE_VERSION
    run_id: str
    agent: str = "agent"
    status: RunStatus = "running"
    revision: int = 0
    """The store's revision this state was read at (0: never saved); saving again
    expects the store to still be at it (optimistic concurrency)."""
    messages: list[Message] = Field(default_factory=list)
    turn: int = 0
    """Model answers so far."""
    usage_by_model: dict[str, Usage] = Field(default_factory=dict)
    pending: PendingTurnState | None = None
    retries: dict[str, int] = Field(default_factory=dict)
    """Invalid-argument calls in a row, per tool (bounded by each tool's ``retries``)."""
    output_retries: int = 0
    guard: dict[str, Any] | None = None
    """What the loop guard remembers (``LoopGuard.snapshot()``)."""
    settings: ModelSettings = Field(default_factory=ModelSettings)
    """The settings in use (a forced ``tool_choice`` already reset, if it was)."""
    max_turns: int = 20
    tools: list[str] = Field(default_factory=list)
    """The tools the run had when it was saved."""
    artifacts_dir: str | None = None
    artifacts_count: int = 0
    """Files the run's artifact folder had numbered, so a resumed run numbers on."""
    images: list[tuple[int, int, int, str]] = Field(default_factory=list)
    """The images in context the image budget tracks (message, part, inner, path)."""
    session: str | None = None
    thread: str | None = None
    """Where the store keeps the messages (the session's, or the run's own)."""
    output: Any = None
    """The final answer (JSON form), once finished."""
    finish_reason: str | None = None
    error: str | None = None
    """Why the run failed, once failed."""
    owner: Owner | None = None
    created: float = 0.0
    updated: float = 0.0

    @property
    def waiting(self) -> list[ApprovalRequest]:
        """The calls that wait for a person's decision."""
        if self.pending is None:
            return []
        return [
            ApprovalRequest(
                run_id=self.run_id,
                call_id=r.call.id,
                tool=r.call.name,
                arguments=r.call.arguments,
                turn=self.pending.turn,
            )
            for r in self.pending.calls
            if r.approval == "required"
        ]
