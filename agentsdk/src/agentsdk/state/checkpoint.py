"""``Checkpointer``: the loop's step hooks that save the run state and hold tool
calls that need approval.

At each boundary it writes one checkpoint: the small head (everything but the
messages) plus only the messages that changed since the last save (new ones,
and the few an image budget rewrote). Without a store it saves nothing and only
decides approvals; the paused run's state is then handed back in memory.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from ..loop import RunConfig, _totals
from ..messages import Message, ToolCallPart
from ..result import RunResult
from ..tools import Tool, ToolOutcome
from .errors import ApprovalError, StateConflict
from .model import STATE_VERSION, ApprovalRequest, Owner, RunState, RunStatus
from .store import Checkpoint, RunStore

__all__ = ["CallMeta", "Checkpointer", "this_process"]


def _start_ticks(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return 0


def this_process() -> Owner:
    """The owner record of this process."""
    pid = os.getpid()
    return Owner(pid=pid, host=socket.gethostname(), started=_start_ticks(pid))


def owner_alive(owner: Owner) -> bool:
    """True when ``owner`` is a live process on this machine other than this one."""
    if owner.host != socket.gethostname() or owner.pid == os.getpid():
        return False
    try:
        os.kill(owner.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, someone else's
    return owner.started == 0 or _start_ticks(owner.pid) == owner.started


@dataclass
class CallMeta:
    """What a person decided about a call, and whether a side-effecting call started."""

    approval: str = "none"
    reason: str | None = None
    original_arguments: dict[str, Any] | None = None
    started: bool = False


SessionEnd = Callable[[RunConfig, bool], Awaitable[None]]
"""Told when a run of a session ends: (its config, whether it finished)."""


class Checkpointer:
    """Step hooks that save each boundary to ``store`` (if any) and pause the run
    before calls whose tool needs approval."""

    def __init__(
        self,
        store: RunStore | None,
        *,
        thread: str | None = None,
        session: str | None = None,
        revision: int = 0,
        created: float | None = None,
        saved: list[Message] | None = None,
        records: dict[str, CallMeta] | None = None,
        on_session_end: SessionEnd | None = None,
    ):
        self.store = store
        self.thread = thread
        self.session = session
        self.revision = revision
        self.created = created or time.time()
        self.records = records or {}
        self.on_session_end = on_session_end
        self.status: RunStatus = "running"
        self.output: Any = None
        self.error: str | None = None
        self.finish_reason: str | None = None
        self.dirty: set[int] = set()
        """Message indexes changed in place that the next save must write."""
        self._saved: list[Message] = list(saved or [])
        self._watch: set[int] = set()
        self._lock = anyio.Lock()
        self._owner = this_process().model_dump()
        self._settings: tuple[object, Any] = (None, None)
        self._calls: dict[str, Any] = {}
        self._outcomes: dict[str, tuple[ToolOutcome, Any]] = {}
        from .codec import StateCodec

        self.codec = StateCodec(store) if store is not None else None

    # -- the hooks --------------------------------------------------------------------
    async def started(self, cfg: RunConfig) -> None:
        """Save the prompt (a resumed run: claim the run, or learn another did)."""
        await self._save(cfg)

    async def answered(self, cfg: RunConfig) -> list[ApprovalRequest]:
        """Mark the calls that need approval; save; the waiting calls (empty: go on)."""
        waiting = self._gate(cfg)
        if waiting:
            self.status = "awaiting_approval"
        await self._save(cfg)
        return waiting

    async def call_starting(self, cfg: RunConfig, call: ToolCallPart) -> None:
        """Record a side-effecting call before it runs, so it never runs twice."""
        tool = cfg.tools.get(call.name)
        if tool is not None and tool.side_effects:
            self.records.setdefault(call.id, CallMeta()).started = True
            await self._save(cfg)

    async def call_finished(self, cfg: RunConfig, call: ToolCallPart) -> None:
        """Save the call's outcome before the model sees it."""
        await self._save(cfg)

    async def turn_finished(self, cfg: RunConfig) -> None:
        """Save the turn's results, now in the messages."""
        self.records.clear()
        self._calls.clear()
        self._outcomes.clear()
        await self._save(cfg)

    async def finished(self, cfg: RunConfig, result: RunResult) -> RunResult:
        """The final save (or, for a paused run, the state handed back)."""
        if self.status == "awaiting_approval":
            result.status = "awaiting_approval"
            result.state = await self.snapshot(cfg)
            result.pending = result.state.waiting
            return result
        self.status = "finished"
        self.output = to_jsonable_python(result.output, fallback=str)
        self.finish_reason = result.finish_reason
        await self._save(cfg)
        if self.on_session_end is not None:
            await self.on_session_end(cfg, True)
        return result

    async def failed(self, cfg: RunConfig, error: BaseException) -> None:
        """Save the run as failed (a resume continues from its last boundary)."""
        self.status = "failed"
        self.error = f"{type(error).__name__}: {error}"
        if not isinstance(error, StateConflict):  # the run is someone else's now
            try:
                with anyio.CancelScope(shield=True):
                    await self._save(cfg)
            finally:
                if self.on_session_end is not None:
                    await self.on_session_end(cfg, False)

    # -- approvals --------------------------------------------------------------------
    def _gate(self, cfg: RunConfig) -> list[ApprovalRequest]:
        assert cfg.progress is not None
        pending = cfg.progress.pending
        if pending is None:
            return []
        waiting: list[ApprovalRequest] = []
        for call in pending.calls:
            tool = cfg.tools.get(call.name)
            if tool is None or tool.needs_approval is False or call.raw_arguments is not None:
                continue
            if not _needs_approval(tool, call):
                continue
            self.records.setdefault(call.id, CallMeta()).approval = "required"
            waiting.append(
                ApprovalRequest(
                    run_id=cfg.run_id,
                    call_id=call.id,
                    tool=call.name,
                    arguments=call.arguments,
                    turn=pending.turn,
                )
            )
        return waiting

    # -- the state ----------------------------------------------------------------------
    def _head(
        self, cfg: RunConfig, pending: dict[str, Any] | None, revision: int
    ) -> dict[str, Any]:
        p = cfg.progress
        assert p is not None
        _, by_model = _totals(p.usages)
        settings_key, settings = self._settings
        if settings_key is not cfg.settings:  # settings change at most once a run
            settings = cfg.settings.model_dump(mode="json", exclude_defaults=True)
            self._settings = (cfg.settings, settings)
        return {
            "version": STATE_VERSION,
            "run_id": cfg.run_id,
            "agent": cfg.agent_name,
            "status": self.status,
            "revision": revision,
            "turn": p.turn,
            "usage_by_model": {name: u.model_dump() for name, u in by_model.items()},
            "pending": pending,
            "retries": dict(p.arg_failures),
            "output_retries": p.output_failures,
            "guard": cfg.guard.snapshot() if cfg.guard is not None else None,
            "settings": settings,
            "max_turns": cfg.max_turns,
            "tools": list(cfg.tools),
            "artifacts_dir": str(cfg.artifacts.dir),
            "artifacts_count": cfg.artifacts.numbered,
            "images": p.budget.slots(cfg.messages),
            "session": self.session,
            "thread": self.thread or cfg.run_id,
            "output": self.output,
            "finish_reason": self.finish_reason,
            "error": self.error,
            "owner": self._owner,
            "created": self.created,
            "updated": time.time(),
        }

    async def _pending(self, cfg: RunConfig, stored: bool) -> dict[str, Any] | None:
        assert cfg.progress is not None
        pending = cfg.progress.pending
        if pending is None:
            return None
        calls: list[dict[str, Any]] = []
        for call in pending.calls:
            meta = self.records.get(call.id) or CallMeta()
            entry: dict[str, Any] = {
                "call": self._call_json(call) if stored else call,
                "approval": meta.approval,
                "reason": meta.reason,
                "original_arguments": meta.original_arguments,
                "started": meta.started,
            }
            done = pending.done.get(call.id)
            if done is not None:
                outcome, duration = done
                entry["outcome"] = (
                    await self._outcome_json(call.id, outcome) if stored else outcome.parts
                )
                entry.update(is_error=outcome.is_error, kind=outcome.kind, duration=duration)
                if outcome.instead is not None:
                    entry["instead"] = outcome.instead
                if outcome.unchanged:
                    entry["unchanged"] = True
            calls.append(entry)
        return {
            "turn": pending.turn,
            "model": pending.served_by,
            "tier": pending.tier,
            "usage": pending.usage.model_dump(),
            "finish_reason": pending.finish_reason,
            "calls": calls,
        }

    def _call_json(self, call: ToolCallPart) -> Any:
        known = self._calls.get(call.id)
        if known is None or known[0] is not call:
            known = self._calls[call.id] = (call, call.model_dump(mode="json"))
        return known[1]

    async def _outcome_json(self, call_id: str, outcome: ToolOutcome) -> Any:
        known = self._outcomes.get(call_id)
        if known is None or known[0] is not outcome:
            assert self.codec is not None
            known = self._outcomes[call_id] = (outcome, await self.codec.parts(list(outcome.parts)))
        return known[1]

    async def snapshot(self, cfg: RunConfig) -> RunState:
        """The run's state now, as objects (images in memory)."""
        head = self._head(cfg, await self._pending(cfg, stored=False), self.revision)
        head["messages"] = list(cfg.messages)
        return RunState.model_validate(head)

    async def _save(self, cfg: RunConfig) -> None:
        store, codec = self.store, self.codec
        if store is None or codec is None:
            return
        async with self._lock:
            revision = self.revision + 1
            head = self._head(cfg, await self._pending(cfg, stored=True), revision)
            messages = cfg.messages
            saved = self._saved
            check = self._watch | self.dirty
            check.update(range(len(saved), len(messages)))
            changed: dict[int, str] = {}
            for i in sorted(check):
                if i < len(messages) and (i >= len(saved) or saved[i] is not messages[i]):
                    changed[i] = await codec.message(messages[i])
            thread = self.thread or cfg.run_id
            try:
                await store.save(
                    Checkpoint(
                        key=cfg.run_id,
                        revision=revision,
                        status=self.status,
                        head=json.dumps(head, ensure_ascii=False, separators=(",", ":")),
                        thread=thread,
                        length=len(messages),
                        messages=changed,
                        session=self.session,
                    )
                )
            except StateConflict as exc:
                raise await self._conflict(cfg, exc) from exc
            self.revision = revision
            del saved[len(messages) :]
            for i in changed:
                if i < len(saved):
                    saved[i] = messages[i]
            saved.extend(messages[len(saved) :])
            self.dirty.clear()
            assert cfg.progress is not None
            self._watch = {index for index, _ in cfg.progress.budget.order}

    async def _conflict(self, cfg: RunConfig, exc: StateConflict) -> StateConflict:
        """The conflict, saying who saved the run meanwhile."""
        who = ""
        try:
            assert self.store is not None
            stored = await self.store.load(cfg.run_id)
            if stored is not None:
                head = json.loads(stored.head)
                owner = head.get("owner") or {}
                who = (
                    f" (revision {stored.revision}, status {stored.status}, by process "
                    f"{owner.get('pid')} on {owner.get('host')})"
                )
        except Exception:  # the conflict is the news; a failing lookup only loses detail
            pass
        if self.revision == 0:  # a new run under a name the store knows
            return StateConflict(
                f"a run named {cfg.run_id!r} is in the store already{who}: resume it with "
                f"agent.resume({cfg.run_id!r}), or give this run another run_id"
            )
        return StateConflict(
            f"run {cfg.run_id!r} was saved by another process since this one read it{who}: "
            "two processes resumed it at once, or another took it over. This process "
            f"stopped; the run goes on there. ({exc})"
        )


def _needs_approval(tool: Tool, call: ToolCallPart) -> bool:
    """Whether the call waits: its arguments are valid (an invalid call gets its error
    without bothering anyone) and the tool's rule says so."""
    try:
        tool._validate_args(call.arguments)
    except ValidationError:
        return False
    rule = tool.needs_approval
    if rule is True:
        return True
    if not callable(rule):
        return bool(rule)
    try:
        return bool(rule(dict(call.arguments)))
    except Exception as exc:
        raise ApprovalError(
            f"the needs_approval rule of tool {tool.name!r} raised {type(exc).__name__}: {exc}"
        ) from exc
