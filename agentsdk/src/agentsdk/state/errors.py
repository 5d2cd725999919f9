"""What can go wrong with saved runs, each with a message that says what to do."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import AgentError

if TYPE_CHECKING:  # pragma: no cover
    from ..result import RunResult

__all__ = [
    "ApprovalError",
    "ApprovalRequired",
    "CorruptState",
    "RunInProgress",
    "RunNotFound",
    "SessionBusy",
    "StateConflict",
    "StateError",
]


class StateError(AgentError):
    """A saved run or session cannot be used as asked."""


class RunNotFound(StateError, LookupError):
    """The store has no run (or session) by that name."""


class CorruptState(StateError):
    """A saved checkpoint cannot be read (truncated, altered, or a missing image file).

    ``revision`` is the unreadable one; ``previous`` the newest earlier revision still
    stored (``None`` if there is none): ``agent.resume(run_id, revision=previous)``.
    """

    def __init__(self, message: str, *, revision: int | None = None, previous: int | None = None):
        super().__init__(message)
        self.revision = revision
        self.previous = previous


class StateConflict(StateError):
    """Another process saved the run (or session) since this one read it: it resumed
    the same run at the same time, or took it over. This process must stop."""


class RunInProgress(StateError):
    """The run is being run right now by a live process on this machine."""


class SessionBusy(StateError):
    """The session has a run that has not ended (running, paused for approval, or
    stopped by a crash): resume or abandon that run first."""


class ApprovalError(StateError):
    """The approval decisions do not match the calls that wait (an unknown or already
    answered call id, or a waiting call without a decision)."""


class ApprovalRequired(AgentError):
    """Raised instead of returning when the agent was made with
    ``on_approval="raise"``: ``pending`` holds the calls that wait, ``state`` what
    ``Agent.resume`` needs, ``result`` the paused ``RunResult``."""

    def __init__(self, message: str, result: RunResult) -> None:
        super().__init__(message, result)
        self.pending = result.pending
        self.state = result.state
