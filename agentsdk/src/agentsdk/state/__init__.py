"""Durable runs: run state, stores, approvals and sessions.

``Agent(store="runs.db")`` saves every run at each step boundary (after the model
answers, before and after each side-effecting call, after each tool result) in a
SQLite file; ``agent.resume(run_id)`` continues one after a crash, in any process.
Tools marked ``@tool(needs_approval=True)`` (or wrapped in ``require_approval``)
pause the run: it returns with ``result.status == "awaiting_approval"`` and the
calls in ``result.pending``, and ``agent.resume(run_id, approvals={...})`` goes on.
``agent.session("id")`` keeps a conversation across runs.
"""

from .approvals import require_approval
from .checkpoint import Checkpointer
from .errors import (
    ApprovalError,
    ApprovalRequired,
    CorruptState,
    RunInProgress,
    RunNotFound,
    SessionBusy,
    StateConflict,
    StateError,
)
from .model import (
    STATE_VERSION,
    ApprovalRequest,
    Approve,
    CallRecord,
    Decision,
    Edit,
    Owner,
    PendingTurnState,
    Reject,
    RunState,
    RunStatus,
)
from .resume import apply_decisions, load_state
from .session import Session, SessionInfo, list_sessions
from .sqlite import SQLiteStore
from .store import STORES_GROUP, Checkpoint, RunInfo, RunStore, StoredCheckpoint, open_store

__all__ = [
    "STATE_VERSION",
    "STORES_GROUP",
    "ApprovalError",
    "ApprovalRequest",
    "ApprovalRequired",
    "Approve",
    "CallRecord",
    "Checkpoint",
    "Checkpointer",
    "CorruptState",
    "Decision",
    "Edit",
    "Owner",
    "PendingTurnState",
    "Reject",
    "RunInProgress",
    "RunInfo",
    "RunNotFound",
    "RunState",
    "RunStatus",
    "RunStore",
    "SQLiteStore",
    "Session",
    "SessionBusy",
    "SessionInfo",
    "StateConflict",
    "StateError",
    "StoredCheckpoint",
    "apply_decisions",
    "list_sessions",
    "load_state",
    "open_store",
    "require_approval",
]
