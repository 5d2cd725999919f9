"""Typed run events: the only way the agent loop talks to the outside.

Events are small slotted dataclasses, cheap to make when nobody listens.
``event_to_dict`` gives the JSON form used by tracing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic_core import to_jsonable_python

from .messages import Usage

if TYPE_CHECKING:  # pragma: no cover
    from .agent import RunResult
    from .models import TokenTrace


@dataclass(slots=True, frozen=True)
class RunStarted:
    """A run began."""

    run_id: str
    agent: str
    prompt: str
    model: str
    tools: list[str]
    resumed: bool = False
    """The run continues from a saved state (``Agent.resume``)."""


@dataclass(slots=True, frozen=True)
class ModelRequestStarted:
    """The loop is asking a model; ``tier`` is ``fast``/``standard`` when tiers are used."""

    run_id: str
    turn: int
    model: str
    tier: str | None


@dataclass(slots=True, frozen=True)
class TextDelta:
    """A chunk of the model's text as it streams."""

    run_id: str
    turn: int
    text: str


@dataclass(slots=True, frozen=True)
class ToolCallStarted:
    """A tool call is about to run."""

    run_id: str
    turn: int
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(slots=True, frozen=True)
class ToolCallFinished:
    """A tool call ended; ``preview`` is the start of its text output, ``text`` all of
    it as the model got it (truncated like the tool result, images as notes)."""

    run_id: str
    turn: int
    call_id: str
    name: str
    duration: float
    is_error: bool
    preview: str
    text: str = field(default="", repr=False)


@dataclass(slots=True, frozen=True)
class ImageProduced:
    """A tool produced an image; it was saved at ``path``."""

    run_id: str
    turn: int
    call_id: str
    tool: str
    path: str
    media_type: str


@dataclass(slots=True, frozen=True)
class TurnFinished:
    """A model turn (and the tool calls it asked for) finished. ``token_trace`` is
    set when the run asked for ``ModelSettings(record_tokens=True)`` and the engine
    could give the tokens."""

    run_id: str
    turn: int
    model: str
    tier: str | None
    usage: Usage
    tool_calls: int
    finish_reason: str | None = None
    token_trace: TokenTrace | None = field(default=None, repr=False)


@dataclass(slots=True, frozen=True)
class RunFinished:
    """The run produced its answer."""

    run_id: str
    output: Any
    turns: int
    usage: Usage
    result: RunResult | None = field(default=None, repr=False, compare=False)


@dataclass(slots=True, frozen=True)
class RunPaused:
    """The run stopped before tool calls that need a person's approval; ``calls``
    are those calls (``ApprovalRequest``), ``result.state`` what resuming needs."""

    run_id: str
    turn: int
    calls: list[Any]
    result: RunResult | None = field(default=None, repr=False, compare=False)


@dataclass(slots=True, frozen=True)
class ToolFinishedLate:
    """A sync tool that had timed out returned anyway, ``late_by`` seconds after its
    timeout (its thread could not be stopped; its result was not used)."""

    run_id: str
    turn: int
    call_id: str
    name: str
    late_by: float


@dataclass(slots=True, frozen=True)
class RunFailed:
    """The run ended with an exception."""

    run_id: str
    error_type: str
    message: str


Event = (
    RunStarted
    | ModelRequestStarted
    | TextDelta
    | ToolCallStarted
    | ToolCallFinished
    | ImageProduced
    | TurnFinished
    | RunFinished
    | RunPaused
    | ToolFinishedLate
    | RunFailed
)

EVENT_TYPES: dict[str, type[Any]] = {
    cls.__name__: cls
    for cls in (
        RunStarted,
        ModelRequestStarted,
        TextDelta,
        ToolCallStarted,
        ToolCallFinished,
        ImageProduced,
        TurnFinished,
        RunFinished,
        RunPaused,
        ToolFinishedLate,
        RunFailed,
    )
}


_NOT_TRACED = frozenset({"result", "token_trace"})  # the whole result; token ids (kept by evals)


def event_to_dict(event: Event) -> dict[str, Any]:
    """The JSON-ready form of an event, with its type under ``"event"``."""
    data: dict[str, Any] = {"event": type(event).__name__}
    for f in dataclasses.fields(event):
        if f.name in _NOT_TRACED:
            continue
        data[f.name] = to_jsonable_python(getattr(event, f.name), fallback=str)
    return data
