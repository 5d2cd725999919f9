"""Continuing a saved run: read its state from a store, apply a person's decisions
on the calls that wait, check the tools are still there, and set up the loop's
``Progress`` exactly where the run stopped."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from .._tool_results import ImageBudget
from ..artifacts import ArtifactStore
from ..loop import PendingTurn, Progress, RunConfig, _totals
from ..messages import Message, TextPart, ToolCallPart
from ..output import OutputSpec
from ..result import RunResult
from ..tools import Tool, ToolOutcome
from .checkpoint import CallMeta, Checkpointer, owner_alive
from .codec import StateCodec
from .errors import ApprovalError, CorruptState, RunInProgress, RunNotFound, StateError
from .model import STATE_VERSION, Approve, CallRecord, Decision, Edit, Reject, RunState
from .store import RunStore

if TYPE_CHECKING:  # pragma: no cover
    from ..agent import Agent

__all__ = ["apply_decisions", "finished_result", "load_state", "prepare_resume", "resume_into"]


async def load_state(store: RunStore, run_id: str, revision: int | None = None) -> RunState:
    """The saved state of ``run_id`` (its newest checkpoint, or ``revision``).

    Its ``revision`` is the store's newest, so resuming from an older checkpoint
    (past a corrupted one) saves on top of everything stored.
    """
    stored = await store.load(run_id, revision)
    if stored is None:
        raise RunNotFound(f"no run {run_id!r} in {store!r}")
    where = f"checkpoint {stored.revision} of run {run_id!r}"
    try:
        head = json.loads(stored.head)
    except ValueError as exc:
        raise CorruptState(f"{where} is not JSON: {exc}", revision=stored.revision) from exc
    if not isinstance(head, dict):
        raise CorruptState(f"{where} is not a JSON object", revision=stored.revision)
    version = head.get("version")
    if isinstance(version, int) and version > STATE_VERSION:
        raise StateError(
            f"{where} has state version {version}, written by a newer agentsdk (this one "
            f"reads up to {STATE_VERSION}): upgrade agentsdk to resume it"
        )
    codec = StateCodec(store)
    head["messages"] = [
        await codec.load_message(text, f"message {i} of {where}")
        for i, text in enumerate(stored.messages)
    ]
    pending = head.get("pending")
    if isinstance(pending, dict):
        for record in pending.get("calls", []):
            if isinstance(record, dict) and isinstance(record.get("outcome"), list):
                record["outcome"] = await codec.load_parts(record["outcome"])
    head["revision"] = stored.latest
    try:
        return RunState.model_validate(head)
    except ValidationError as exc:
        raise CorruptState(f"{where} does not hold a run state: {exc}") from exc


def _decision(value: Decision) -> Approve | Reject | Edit:
    if value is True:
        return Approve()
    if value is False:
        return Reject()
    if isinstance(value, Approve | Reject | Edit):
        return value
    raise ApprovalError(
        f"a decision is True, False, Approve(), Reject(reason) or Edit(arguments), not {value!r}"
    )


def _rejection(call: ToolCallPart, reason: str) -> list[TextPart]:
    why = f": {reason}" if reason else "."
    return [
        TextPart(
            text=f"The user rejected this call of {call.name}, so it did not run{why} "
            "Do not repeat it unchanged: take the reason into account, or ask the user."
        )
    ]


def apply_decisions(state: RunState, decisions: Mapping[str, Decision] | None) -> RunState:
    """A copy of ``state`` with each waiting call approved, rejected or edited.

    Raises:
        ApprovalError: a decision names a call that does not wait (unknown, or already
            decided), a waiting call has no decision, or there are decisions for a run
            that waits for none.
    """
    waiting = [
        r for r in (state.pending.calls if state.pending else []) if r.approval == "required"
    ]
    ids = [r.call.id for r in waiting]
    listing = ", ".join(f"{r.call.id} ({r.call.name})" for r in waiting) or "none"
    decisions = dict(decisions or {})
    if not waiting:
        if decisions:
            raise ApprovalError(
                f"run {state.run_id!r} has no calls waiting for approval (status "
                f"{state.status}): no call {next(iter(decisions))!r} to decide"
            )
        return state
    unknown = [key for key in decisions if key not in ids]
    if unknown:
        raise ApprovalError(
            f"no call {unknown[0]!r} waits for approval in run {state.run_id!r} (it never "
            f"existed, or was already decided); waiting: {listing}"
        )
    missing = [i for i in ids if i not in decisions]
    if missing:
        raise ApprovalError(
            f"run {state.run_id!r} waits for a decision on every call; none given for "
            f"{', '.join(missing)} (waiting: {listing})"
        )
    assert state.pending is not None  # messages are immutable: only the records are copied
    new = state.model_copy(update={"pending": state.pending.model_copy(deep=True)})
    assert new.pending is not None
    messages = list(new.messages)
    for record in new.pending.calls:
        if record.approval != "required":
            continue
        decision = _decision(decisions[record.call.id])
        if isinstance(decision, Approve):
            record.approval = "approved"
        elif isinstance(decision, Reject):
            record.approval, record.reason = "rejected", decision.reason
            record.outcome = list(_rejection(record.call, decision.reason))
            record.is_error, record.kind = True, "error"
        else:
            record.approval = "edited"
            record.original_arguments = record.call.arguments
            edited = record.call.model_copy(update={"arguments": dict(decision.arguments)})
            _rewrite_call(messages, edited)
            record.call = edited
    new.messages = messages
    new.status = "running"
    return new


def _rewrite_call(messages: list[Message], edited: ToolCallPart) -> None:
    """Put the edited call in the assistant message that made it (the transcript shows
    what ran)."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if message.role == "assistant" and any(c.id == edited.id for c in message.tool_calls):
            parts: list[Any] = [
                edited if isinstance(p, ToolCallPart) and p.id == edited.id else p
                for p in message.parts
            ]
            messages[i] = Message(role=message.role, parts=parts)
            return


def _interrupted(record: CallRecord) -> ToolOutcome:
    text = (
        f"The call of {record.call.name} was interrupted: the agent's process stopped while it "
        "ran, so it may or may not have taken effect. It was not run again because the tool "
        "has side effects; check the result before calling it again."
    )
    return ToolOutcome([TextPart(text=text)], is_error=True, kind="error")


def resume_into(
    cfg: RunConfig,
    state: RunState,
    tools: dict[str, Tool],
    checkpointer: Checkpointer,
    keep_images: int,
    max_turns: int | None = None,
    saved_status: str = "running",
) -> None:
    """Point ``cfg`` (made for this agent) at where ``state`` stopped (``saved_status``
    is its status as read, before any decisions).

    Raises:
        StateError: the run finished already, or the agent lacks a tool the run used.
        RunInProgress: a live process on this machine is running it now.
    """
    if state.status == "finished":  # Agent.resume answers these from the state
        raise StateError(f"run {state.run_id!r} has finished already; nothing to resume")
    if state.status == "awaiting_approval":
        waiting = ", ".join(f"{r.call_id} ({r.tool})" for r in state.waiting)
        raise ApprovalError(
            f"run {state.run_id!r} waits for approval of {waiting}: pass "
            "approvals={call_id: True | False | Reject(reason) | Edit(arguments)}"
        )
    if saved_status == "running" and state.owner is not None and owner_alive(state.owner):
        raise RunInProgress(
            f"run {state.run_id!r} is being run by process {state.owner.pid} on this machine; "
            "wait for it to end (or stop it) before resuming"
        )
    missing = [name for name in state.tools if name not in tools]
    if missing:
        have = ", ".join(sorted(tools)) or "none"
        raise StateError(
            f"run {state.run_id!r} used tool(s) {', '.join(repr(m) for m in missing)} that this "
            f"agent does not have (it has: {have}); resume it with an agent that has them"
        )
    cfg.run_id = state.run_id
    cfg.messages = list(state.messages)
    cfg.settings = state.settings
    cfg.max_turns = state.max_turns if max_turns is None else max_turns
    if state.artifacts_dir:
        cfg.artifacts = ArtifactStore(Path(state.artifacts_dir), numbered=state.artifacts_count)
    if cfg.guard is not None and state.guard is not None:
        cfg.guard = cfg.guard.restored(state.guard)
    budget = ImageBudget(keep_images, cfg.artifacts)
    budget.restore(cfg.messages, [tuple(s) for s in state.images])  # type: ignore[misc]
    progress = Progress(
        budget,
        turn=state.turn,
        usages=list(state.usage_by_model.items()),
        arg_failures=dict(state.retries),
        output_failures=state.output_retries,
    )
    if state.pending is not None:
        records = state.pending.calls
        done: dict[str, tuple[ToolOutcome, float]] = {}
        for r in records:
            if r.outcome is not None:
                done[r.call.id] = (
                    ToolOutcome(list(r.outcome), r.is_error, r.kind, r.instead, r.unchanged),
                    r.duration,
                )
            elif r.started and (tool := tools.get(r.call.name)) is not None and tool.side_effects:
                done[r.call.id] = (_interrupted(r), 0.0)
            checkpointer.records[r.call.id] = CallMeta(
                r.approval, r.reason, r.original_arguments, r.started
            )
        progress.pending = PendingTurn(
            state.pending.turn,
            state.pending.model,
            state.pending.tier,
            state.pending.usage,
            state.pending.finish_reason,
            [r.call for r in records],
            done,
        )
    cfg.progress = progress


def finished_result(state: RunState, output_spec: OutputSpec | None) -> RunResult:
    """The result of a run that finished already, from its saved state."""
    output: Any = state.output
    last = next((m for m in reversed(state.messages) if m.role == "assistant"), None)
    if output_spec is not None and last is not None:
        ok, value, _ = output_spec.validate(last.text)
        output = value if ok else output
    usage, by_model = _totals(list(state.usage_by_model.items()))
    return RunResult(
        output=output,
        messages=list(state.messages),
        usage=usage,
        usage_by_model=by_model,
        turns=state.turn,
        run_id=state.run_id,
        artifacts_dir=Path(state.artifacts_dir) if state.artifacts_dir else None,
        finish_reason=state.finish_reason,
    )


async def prepare_resume(
    agent: Agent, saved: RunState, state: RunState, max_turns: int | None, cfg: RunConfig
) -> None:
    """Once the agent's toolkits are open: point ``cfg`` at the saved run (``state``
    is ``saved`` with the decisions applied) and give it step hooks that save on top."""
    from .session import Session

    store = agent.store
    session = Session(agent, state.session, store) if state.session and store else None
    hooks = Checkpointer(
        store,
        thread=state.thread,
        session=state.session,
        revision=state.revision,
        created=state.created or None,
        saved=saved.messages,
        on_session_end=session.release if session is not None else None,
    )
    hooks.dirty = {
        i for i, (a, b) in enumerate(zip(state.messages, saved.messages, strict=True)) if a is not b
    }
    resume_into(cfg, state, cfg.tools, hooks, agent.keep_images, max_turns, saved.status)
    cfg.hooks = hooks
