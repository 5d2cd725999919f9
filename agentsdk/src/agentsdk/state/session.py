"""``Session``: one conversation kept in a store across runs and processes.

A session is the key ``session:<id>`` in the agent's store; its checkpoints hold
the conversation's length, its last run and the run in progress, and its messages
live in its own thread, which each run of the session extends in place (nothing
is copied per run). Starting a run claims the session with the store's
optimistic concurrency, so two processes cannot add to one conversation at once.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..events import Event
from ..loop import RunConfig
from ..messages import Message
from ..models import ModelSettings
from .checkpoint import Checkpointer
from .codec import StateCodec
from .errors import RunNotFound, SessionBusy, StateConflict
from .store import Checkpoint, RunStore

if TYPE_CHECKING:  # pragma: no cover
    from ..agent import Agent
    from ..result import RunResult

__all__ = ["Session", "SessionInfo", "list_sessions"]

PREFIX = "session:"


@dataclass(slots=True)
class SessionInfo:
    """A session as listed: its id, how long its conversation is, its runs."""

    id: str
    messages: int
    last_run: str | None
    active_run: str | None
    revision: int
    updated: float


async def list_sessions(store: RunStore) -> list[SessionInfo]:
    """The sessions in ``store``, most recently used first."""
    found: list[SessionInfo] = []
    for info in await store.scan(prefix=PREFIX):
        session = Session(None, info.key.removeprefix(PREFIX), store)
        head = await session._head()
        if head is not None:
            found.append(head[0])
    return found


class Session:
    """A conversation that outlives runs and processes: ``agent.session("id")``.

    ``await session.run(prompt)`` continues the conversation and saves it;
    ``fork(new_id)`` copies it; ``delete()`` forgets it and its runs.
    """

    def __init__(self, agent: Agent | None, session_id: str, store: RunStore):
        self.agent = agent
        self.id = session_id
        self.key = PREFIX + session_id
        self.store = store

    def __repr__(self) -> str:
        return f"Session({self.id!r})"

    async def _head(self) -> tuple[SessionInfo, dict[str, Any]] | None:
        stored = await self.store.load(self.key)
        if stored is None:
            return None
        head = json.loads(stored.head)
        info = SessionInfo(
            self.id,
            int(head.get("length", 0)),
            head.get("last_run"),
            head.get("active_run"),
            stored.latest,
            stored.updated,
        )
        return info, head

    async def info(self) -> SessionInfo | None:
        """The session as stored, ``None`` before its first run."""
        found = await self._head()
        return found[0] if found else None

    async def messages(self) -> list[Message]:
        """The conversation so far."""
        stored = await self.store.load(self.key)
        if stored is None:
            return []
        codec = StateCodec(self.store)
        return [
            await codec.load_message(text, f"message {i} of session {self.id!r}")
            for i, text in enumerate(stored.messages)
        ]

    async def _write(
        self, revision: int, length: int, last: str | None, active: str | None
    ) -> None:
        head = {"thread": self.key, "length": length, "last_run": last, "active_run": active}
        await self.store.save(
            Checkpoint(
                key=self.key,
                revision=revision,
                status="active" if active else "idle",
                head=json.dumps(head),
                thread=self.key,
                length=length,
            )
        )

    async def _run_status(self, run_id: str) -> tuple[str, int] | None:
        stored = await self.store.load(run_id)
        if stored is None:
            return None
        return stored.status, len(stored.messages)

    async def _claim(self, run_id: str) -> tuple[list[Message], int]:
        """Mark ``run_id`` as the session's run in progress; the history it continues."""
        found = await self._head()
        info = found[0] if found else None
        revision, length, last = (
            (info.revision, info.messages, info.last_run) if info else (0, 0, None)
        )
        if info is not None and info.active_run is not None:
            active = info.active_run
            status = await self._run_status(active)
            if status is not None and status[0] == "finished":  # it ended; the release was lost
                length, last = status[1], active
            elif status is not None and status[0] != "failed":
                raise SessionBusy(
                    f"session {self.id!r} has run {active!r} that has not ended "
                    f"({status[0]}): resume it with agent.resume({active!r}, ...), or "
                    "call session.abandon() to drop it"
                )
        try:
            await self._write(revision + 1, length, last, run_id)
        except StateConflict as exc:
            raise SessionBusy(
                f"another process started a run in session {self.id!r} at the same time"
            ) from exc
        return (await self.messages())[:length] if length else [], length

    async def release(self, cfg: RunConfig, finished: bool) -> None:
        """A run of this session ended: a finished one extends the conversation."""
        found = await self._head()
        if found is None or found[0].active_run != cfg.run_id:
            return  # abandoned meanwhile: the conversation is someone else's now
        info = found[0]
        length = len(cfg.messages) if finished else info.messages
        last = cfg.run_id if finished else info.last_run
        await self._write(info.revision + 1, length, last, None)

    def checkpointer(self, history: Sequence[Message], cfg: RunConfig) -> Checkpointer:
        """The step hooks of a run of this session (its messages go in the thread)."""
        hooks = Checkpointer(
            self.store,
            thread=self.key,
            session=self.id,
            saved=list(history),
            on_session_end=self.release,
        )
        hooks.dirty = {
            i
            for i, m in enumerate(cfg.messages)
            if i < len(history) and m is not history[i]  # e.g. a system prompt put first
        }
        return hooks

    async def run(self, prompt: str | Message, **kwargs: Any) -> RunResult:
        """Continue the conversation with ``prompt``; ``kwargs`` as for ``Agent.run``
        (except ``message_history``: the session is the history)."""
        if self.agent is None:
            raise RuntimeError(
                "this Session was listed from a store; get it with agent.session(id)"
            )
        return await self.agent._run_session(self, prompt, **kwargs)

    def run_sync(self, prompt: str | Message, **kwargs: Any) -> RunResult:
        """``run`` for scripts without an event loop."""
        if self.agent is None:
            raise RuntimeError(
                "this Session was listed from a store; get it with agent.session(id)"
            )
        agent = self.agent
        return agent._sync(lambda: agent._run_session(self, prompt, **kwargs))

    async def fork(self, new_id: str) -> Session:
        """A new session that starts with a copy of this conversation."""
        stored = await self.store.load(self.key)
        if stored is None:
            raise RunNotFound(f"no session {self.id!r} in {self.store!r}")
        new = Session(self.agent, new_id, self.store)
        if await new.info() is not None:
            raise SessionBusy(f"session {new_id!r} exists already; delete it or pick another id")
        head = json.loads(stored.head)
        length = int(head.get("length", 0))
        body = {"thread": new.key, "length": length, "last_run": None, "active_run": None}
        await self.store.save(
            Checkpoint(
                key=new.key,
                revision=1,
                status="idle",
                head=json.dumps(body),
                thread=new.key,
                length=length,
                messages=dict(enumerate(stored.messages[:length])),
            )
        )
        return new

    async def abandon(self) -> None:
        """Drop the session's unfinished run (paused or crashed): the conversation goes
        on from before it."""
        found = await self._head()
        if found is not None and found[0].active_run is not None:
            info = found[0]
            await self._write(info.revision + 1, info.messages, info.last_run, None)

    async def delete(self) -> None:
        """Forget the session, its conversation and its runs."""
        for run in await self.store.scan(session=self.id):
            await self.store.delete(run.key)
        await self.store.delete(self.key)


async def run_in_session(
    agent: Agent,
    session: Session,
    prompt: str | Message,
    *,
    settings: ModelSettings | None = None,
    deps: Any = None,
    max_turns: int | None = None,
    run_id: str | None = None,
    on_event: Callable[[Event], None] | None = None,
) -> RunResult:
    """One run of ``agent`` that continues ``session`` (what ``Session.run`` does)."""
    from ..agent import _new_run_id

    run_id = run_id or _new_run_id()
    history, _ = await session._claim(run_id)

    async def prepare(cfg: RunConfig) -> None:
        cfg.hooks = session.checkpointer(history, cfg)

    return await agent._drive(
        lambda: agent._events(
            prompt, history, settings, deps, False, max_turns, run_id, prepare=prepare
        ),
        on_event,
    )
