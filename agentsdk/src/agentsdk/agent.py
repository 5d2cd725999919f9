"""``Agent``: configuration plus ``run``, ``run_sync``, ``stream`` and ``resume``."""

from __future__ import annotations

import functools
import os
import re
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager, AsyncExitStack, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import anyio
import anyio.from_thread

from ._held import HeldOpen
from .artifacts import ArtifactStore, default_runs_dir
from .errors import RunTimeout
from .events import Event, RunFailed, RunFinished, RunPaused
from .loop import RunConfig, first_request, run_events
from .loopguard import LoopGuard
from .messages import Message
from .models import Model, ModelRequest, ModelSettings, Tiers, warm_up_soon
from .output import OutputSpec
from .plugins import load_toolkit, resolve_model
from .result import RunResult
from .stream import RunStream
from .tools import (
    Tool,
    Toolkit,
    collect_tools,
    instructions_of,
    tools_can_change,
    tools_version,
)
from .tracing import JsonlTracer, observe_run

if TYPE_CHECKING:  # pragma: no cover
    from .state import Decision, RunState, RunStore, Session

__all__ = ["Agent", "RunResult", "RunStream"]

EventHook = Callable[[Event], None]
Prepare = Callable[[RunConfig], Awaitable[None]]
"""Runs once the toolkits are open, before the loop: sets up step hooks, a resume."""
_T = TypeVar("_T")


def _new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S-") + os.urandom(3).hex()


_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class Agent(HeldOpen):
    """An agent: a model, instructions and tools.

    Args:
        model: A ``Model``, ``Tiers``, or a model string such as
            ``"openai:gpt-4.1"`` or ``"local:default"``.
        instructions: The system prompt.
        tools: Tools, toolkits, plain functions, or names of installed toolkits.
        toolkit_instructions: Add each toolkit's own ``instructions`` (how to work with
            its tools) to the system prompt, after ``instructions``; a toolkit's text that
            ``instructions`` already holds is not added again.
        output_type: Validate the final answer as this type (a pydantic model,
            dataclass, TypedDict, ...). ``None`` means plain text.
        max_turns: Model requests allowed in one run; ``run(max_turns=...)`` overrides it.
        settings: Model settings; ``run(settings=...)`` overrides per run.
        reset_tool_choice: A forced ``tool_choice`` (``"required"`` or a tool's name)
            applies until the model has called a tool; later turns use ``"auto"`` so the
            run can end with an answer. ``False`` forces every turn.
        timeout: Seconds allowed for a whole run.
        max_concurrency: Tool calls of one turn that may run at once.
        max_tool_output_chars: Longer tool text is truncated (the full text is saved).
        keep_images: How many recent tool images stay in the context.
        artifacts_dir: Where run folders go (default: the user cache dir).
        trace: A JSONL file the events of every run are appended to.
        deps: Any object tools receive as ``ctx.deps``.
        loop_guard: Loop and stall detection: a turn that only repeats the previous
            turn's calls is answered with an error instead of running them again, a
            repeated error says so, and ``max_strikes`` looping turns in a row end the
            run with ``LoopDetected``. ``None`` turns it off.
        store: Where runs are saved at every step boundary, so ``resume`` can continue
            them after a crash or a pause: a ``RunStore``, a SQLite file path, or a
            plugin URL (``agentsdk.stores``). ``None``: runs live in memory only.
        on_approval: What ``run`` does when a call needs approval: ``"return"`` the
            paused result (``status == "awaiting_approval"``), or ``"raise"``
            ``ApprovalRequired``.

    Toolkits are started when a run begins and closed when it ends, unless the
    agent is held open with ``async with agent:`` (or ``with agent:`` for
    ``run_sync``): then they stay open, with their state, across runs.
    """

    def __init__(
        self,
        model: Model | Tiers | str,
        instructions: str | None = None,
        tools: Sequence[Tool | Toolkit | Callable[..., Any] | str] = (),
        *,
        name: str = "agent",
        output_type: Any = None,
        output_retries: int = 2,
        max_turns: int = 20,
        settings: ModelSettings | None = None,
        reset_tool_choice: bool = True,
        timeout: float | None = None,
        max_concurrency: int = 8,
        max_tool_output_chars: int = 20_000,
        keep_images: int = 4,
        artifacts_dir: str | Path | None = None,
        trace: str | Path | None = None,
        deps: Any = None,
        loop_guard: LoopGuard | None = LoopGuard(),
        store: RunStore | str | Path | None = None,
        on_approval: Literal["return", "raise"] = "return",
        toolkit_instructions: bool = True,
    ):
        if on_approval not in ("return", "raise"):
            raise ValueError(f"on_approval is 'return' or 'raise', not {on_approval!r}")
        self.name = name
        self.instructions = instructions
        self.toolkit_instructions = toolkit_instructions
        self._model_spec = model
        self._model: Model | Tiers | None = None
        self.toolkits: list[Toolkit] = []
        self._items: list[Tool | Toolkit | Callable[..., Any]] = []
        for item in tools:
            resolved = load_toolkit(item) if isinstance(item, str) else item
            if isinstance(resolved, Toolkit):
                self.toolkits.append(resolved)
            self._items.append(resolved)
        self.tools: dict[str, Tool] = _tools_by_name(self._items)
        # Toolkits whose tools can change while they run (an MCP server's): runs re-read
        # their tools when one's version moves.
        self._changing = [t for t in self.toolkits if tools_can_change(t)]
        self.output = (
            OutputSpec(output_type, output_retries) if output_type not in (None, str) else None
        )
        self.max_turns = max_turns
        self.settings = settings or ModelSettings()
        self.reset_tool_choice = reset_tool_choice
        self.timeout = timeout
        self.max_concurrency = max_concurrency
        self.max_tool_output_chars = max_tool_output_chars
        self.keep_images = keep_images
        self.artifacts_dir = Path(artifacts_dir) if artifacts_dir else default_runs_dir()
        self.trace = Path(trace) if trace else None
        self.deps = deps
        self.loop_guard = loop_guard
        self.on_approval = on_approval
        self.store: RunStore | None = None
        if store is not None:
            from .state import open_store

            self.store = open_store(store)
        HeldOpen.__init__(self)

    @property
    def model(self) -> Model | Tiers:
        """The model, resolved from its string on first use."""
        if self._model is None:
            spec = self._model_spec
            self._model = spec if isinstance(spec, Tiers) else resolve_model(spec)
        return self._model

    def _system_prompt(self) -> str | None:
        """The agent's instructions, then each toolkit's that they do not already hold
        (a task suite passes its toolkit's text as its own), then the output type's."""
        parts = [self.instructions] if self.instructions else []
        if self.toolkit_instructions:
            parts += instructions_of(self.toolkits, besides=parts)
        if self.output is not None and (wanted := self.output.instructions()):
            parts.append(wanted)
        return "\n\n".join(parts) if parts else None

    def _config(
        self,
        message_history: Sequence[Message] | None,
        settings: ModelSettings | None,
        deps: Any,
        stream: bool,
        max_turns: int | None,
        run_id: str | None = None,
        system: bool = True,
    ) -> RunConfig:
        if max_turns is not None and max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, not {max_turns}")
        if run_id is None:
            run_id = _new_run_id()
        elif not _RUN_ID.match(run_id):
            raise ValueError(
                f"run_id {run_id!r} must be 1-128 letters, digits, '.', '_' or '-' "
                "(it names the run's folder)"
            )
        messages = list(message_history or [])
        prompt = self._system_prompt() if system else None
        if prompt and not _has_system(messages):
            messages.insert(0, Message.system(prompt))
        return RunConfig(
            run_id=run_id,
            agent_name=self.name,
            model=self.model,
            tools=self.tools,
            settings=self.settings.merged(settings),
            output=self.output,
            max_turns=self.max_turns if max_turns is None else max_turns,
            reset_tool_choice=self.reset_tool_choice,
            max_concurrency=self.max_concurrency,
            max_tool_output_chars=self.max_tool_output_chars,
            keep_images=self.keep_images,
            artifacts=ArtifactStore(self.artifacts_dir / run_id),
            deps=self.deps if deps is None else deps,
            stream=stream,
            messages=messages,
            refresh_tools=self._tool_refresher() if self._changing else None,
            guard=self.loop_guard.fresh() if self.loop_guard is not None else None,
            answer_hooks=[
                t.on_answer for t in self.toolkits if type(t).on_answer is not Toolkit.on_answer
            ],
        )

    def opening_request(
        self, prompt: str | Message, *, settings: ModelSettings | None = None
    ) -> ModelRequest | None:
        """The request a new run's first turn makes for ``prompt``: instructions, the
        prompt and every tool's schema. ``None`` when a toolkit's tools are known only
        once it runs (an MCP server's). A caller that starts a run's environment itself
        (``run_task``) warms the model up for it meanwhile (``models.warm_up_soon``)."""
        if self._changing:
            return None
        cfg = self._config(None, settings, None, False, None)
        return first_request(cfg, prompt)

    def _tool_refresher(self) -> Callable[[], dict[str, Tool] | None]:
        """For one run: the tools anew when a changing toolkit's version moved, else None."""
        seen: list[tuple[int, ...]] = []

        def refresh() -> dict[str, Tool] | None:
            versions = tuple(tools_version(t) for t in self._changing)
            if seen and seen[0] == versions:
                return None
            seen[:] = [versions]
            return _tools_by_name(self._items)

        return refresh

    async def _events(
        self,
        prompt: str | Message | None,
        message_history: Sequence[Message] | None,
        settings: ModelSettings | None,
        deps: Any,
        stream: bool,
        max_turns: int | None,
        run_id: str | None = None,
        prepare: Prepare | None = None,
    ) -> AsyncGenerator[Event, None]:
        cfg = self._config(
            message_history, settings, deps, stream, max_turns, run_id, system=prompt is not None
        )
        tracer = observe_run(self, cfg)  # the JSONL trace and OpenTelemetry, if any
        deadline = anyio.current_effective_deadline()
        warming = None
        if self.toolkits:  # the model (a local engine) gets ready while the toolkits start
            # Tools a changing toolkit lists once started are not known yet: engine only.
            opening = (
                first_request(cfg, prompt) if prompt is not None and not self._changing else None
            )
            warming = cfg.warming = warm_up_soon(cfg.model, opening)
        try:
            async with AsyncExitStack() as stack:
                for toolkit in self.toolkits:
                    await stack.enter_async_context(toolkit)
                if cfg.refresh_tools is not None:  # started toolkits may list more tools now
                    cfg.tools = cfg.refresh_tools() or cfg.tools
                if prompt is not None and not _has_system(message_history):
                    # a started toolkit may have instructions of its own now (an MCP server's)
                    _set_system(cfg.messages, self._system_prompt())
                if prepare is not None:
                    await prepare(cfg)
                elif self._wants_hooks(cfg):
                    from .state import Checkpointer

                    cfg.hooks = Checkpointer(self.store)
                events = run_events(cfg, prompt)
                try:
                    async for event in events:
                        if tracer is not None:
                            tracer.write(event)
                        yield event
                except Exception as exc:
                    fail = getattr(cfg.hooks, "failed", None)
                    if fail is not None:
                        await fail(cfg, exc)
                    failed = RunFailed(cfg.run_id, type(exc).__name__, str(exc))
                    if tracer is not None:
                        tracer.write(failed)
                    yield failed
                    raise
                except BaseException:  # cancelled (by the deadline or the caller)
                    if tracer is not None:
                        tracer.write(self._cancelled(cfg.run_id, deadline))
                    raise
                finally:
                    await events.aclose()
                    # a timed-out sync tool that returns after the run went to the trace
                    cfg.late = _LateEvents(self.trace)
        finally:
            if warming is not None and not warming.done():
                warming.cancel()  # the run ended before its first request needed it
            if tracer is not None:
                tracer.close()

    def _cancelled(self, run_id: str, deadline: float) -> RunFailed:
        """What a cancelled run's trace says: ``RunTimeout`` once its deadline passed."""
        if anyio.current_time() < deadline:
            return RunFailed(run_id, "Cancelled", "the run was cancelled")
        why = self._timeout_error() if self.timeout is not None else "the run's deadline passed"
        return RunFailed(run_id, "RunTimeout", str(why))

    def _wants_hooks(self, cfg: RunConfig) -> bool:
        """Step hooks are needed to save state or to hold calls for approval (tools of
        a changing toolkit may start needing it mid-run)."""
        return (
            self.store is not None
            or bool(self._changing)
            or any(t.needs_approval is not False for t in cfg.tools.values())
        )

    async def run(
        self,
        prompt: str | Message,
        *,
        message_history: Sequence[Message] | None = None,
        settings: ModelSettings | None = None,
        deps: Any = None,
        max_turns: int | None = None,
        run_id: str | None = None,
        on_event: EventHook | None = None,
    ) -> RunResult:
        """Run to a final answer and return it with the conversation and usage.

        Args:
            prompt: The user's message.
            message_history: Earlier messages to continue from.
            settings: Model settings for this run (merged over the agent's).
            deps: Given to tools as ``ctx.deps`` (overrides the agent's).
            max_turns: Model requests allowed in this run.
            run_id: Name this run (and its artifacts folder); a timestamp by default.
            on_event: Called with every event as it happens (progress, recording).
        """
        return await self._drive(
            lambda: self._events(prompt, message_history, settings, deps, False, max_turns, run_id),
            on_event,
        )

    async def _drive(
        self, make: Callable[[], AsyncGenerator[Event, None]], on_event: EventHook | None
    ) -> RunResult:
        """Consume a run's events under the agent's deadline; its result."""
        result: RunResult | None = None
        try:
            with self._deadline():
                events = make()
                try:
                    async for event in events:
                        if on_event is not None:
                            on_event(event)
                        if isinstance(event, RunFinished | RunPaused):
                            result = event.result
                finally:
                    await events.aclose()
        except TimeoutError as exc:
            if isinstance(exc, RunTimeout):
                raise
            raise self._timeout_error() from exc
        assert result is not None
        if result.status == "awaiting_approval" and self.on_approval == "raise":
            from .state import ApprovalRequired

            calls = ", ".join(f"{p.tool}({p.call_id})" for p in result.pending)
            raise ApprovalRequired(f"run {result.run_id!r} waits for approval of {calls}", result)
        return result

    async def resume(
        self,
        run: str | RunState,
        *,
        approvals: Mapping[str, Decision] | None = None,
        revision: int | None = None,
        deps: Any = None,
        max_turns: int | None = None,
        on_event: EventHook | None = None,
    ) -> RunResult:
        """Continue a saved run from where it stopped: after a crash, a failure, or a
        pause for approvals.

        Args:
            run: A run id in the agent's store, or a ``RunState`` (``result.state``).
            approvals: For a paused run, a decision per waiting call id: ``True`` (or
                ``Approve()``), ``False`` (or ``Reject(reason)``: the model is told),
                or ``Edit(arguments)``.
            revision: Continue from this checkpoint instead of the newest (past a
                corrupted one, see ``CorruptState``).
            deps: Given to tools as ``ctx.deps``.
            max_turns: Model requests allowed in all (the saved run's limit by default).
            on_event: Called with every event as it happens.

        Raises:
            ApprovalError: the decisions do not match the waiting calls.
            StateConflict: another process resumed or saved the run meanwhile.
            RunInProgress: a live process on this machine runs it now.
            StateError: the run finished already, or this agent lacks a tool it used.
        """
        from .state import apply_decisions, load_state
        from .state.resume import finished_result, prepare_resume

        if isinstance(run, str):
            if self.store is None:
                raise ValueError(
                    "resuming by run id needs a store: Agent(store='runs.db'), or pass the "
                    "RunState itself (result.state)"
                )
            state = await load_state(self.store, run, revision)
        else:
            state = run
        decided = apply_decisions(state, approvals)
        if decided.status == "finished":  # resuming is idempotent: the saved answer
            return finished_result(decided, self.output)
        return await self._drive(
            lambda: self._events(
                None,
                decided.messages,
                None,
                deps,
                False,
                max_turns,
                decided.run_id,
                prepare=functools.partial(prepare_resume, self, state, decided, max_turns),
            ),
            on_event,
        )

    def session(self, session_id: str) -> Session:
        """The conversation ``session_id`` in the agent's store (made on its first run):
        ``await agent.session("id").run(prompt)`` continues it, in any process."""
        from .state import Session

        if self.store is None:
            raise ValueError("sessions live in a store: Agent(store='runs.db')")
        if not _RUN_ID.match(session_id):
            raise ValueError(
                f"session id {session_id!r} must be 1-128 letters, digits, '.', '_' or '-'"
            )
        return Session(self, session_id, self.store)

    async def _run_session(
        self, session: Session, prompt: str | Message, **kwargs: Any
    ) -> RunResult:
        from .state.session import run_in_session

        return await run_in_session(self, session, prompt, **kwargs)

    def stream(
        self,
        prompt: str | Message,
        *,
        message_history: Sequence[Message] | None = None,
        settings: ModelSettings | None = None,
        deps: Any = None,
        max_turns: int | None = None,
        run_id: str | None = None,
    ) -> RunStream:
        """Run and yield events as they happen: ``async for event in agent.stream(...)``.

        The last event is ``RunFinished`` (its ``result`` is the ``RunResult``), or
        ``RunFailed`` followed by the exception (``RunTimeout`` when the agent's
        ``timeout`` passed). The run lives in a task of its own, which owns its
        deadline: the consumer may take its time between events, stop early
        (``break``, or ``async with agent.stream(...) as events`` to be explicit), or be
        cancelled, and the run is then cancelled with its tools and child processes.
        """

        run_id = run_id or _new_run_id()

        async def produce(emit: Callable[[Event], None]) -> None:
            try:
                with self._deadline():
                    events = self._events(
                        prompt, message_history, settings, deps, True, max_turns, run_id
                    )
                    try:
                        async for event in events:
                            emit(event)
                    finally:
                        await events.aclose()
            except TimeoutError as exc:
                if isinstance(exc, RunTimeout):
                    raise
                error = self._timeout_error()
                emit(RunFailed(run_id, "RunTimeout", str(error)))
                raise error from exc

        return RunStream(produce)

    def _timeout_error(self) -> RunTimeout:
        return RunTimeout(f"the run took longer than its {self.timeout:g} s timeout")

    def _deadline(self) -> AbstractContextManager[object]:
        # a cancel scope costs ~20 µs per run on a slow core; none is needed without a timeout
        return nullcontext() if self.timeout is None else anyio.fail_after(self.timeout)

    def run_sync(self, prompt: str | Message, **kwargs: Any) -> RunResult:
        """``run`` for scripts and notebooks.

        Without ``with agent:`` each call runs in an event loop of its own and starts
        and closes the toolkits (a browser, a bpy worker) for that one run. Inside a
        running event loop (a notebook cell) the run goes on a helper thread.
        """
        return self._sync(functools.partial(self.run, prompt, **kwargs))

    def resume_sync(self, run: str | RunState, **kwargs: Any) -> RunResult:
        """``resume`` for scripts and notebooks."""
        return self._sync(functools.partial(self.resume, run, **kwargs))

    async def aclose(self) -> None:
        """Close models this agent resolved from strings (their connections) and its
        store's connection (it opens again when needed)."""
        if self.store is not None:
            await self.store.aclose()
        model, self._model = self._model, None
        if model is None:
            return
        if isinstance(model, Tiers):
            await model.aclose()
        elif isinstance(self._model_spec, str):
            await model.aclose()
        else:
            self._model = model


class _LateEvents(list[Event]):
    """Where late events go once their run has ended: straight to the trace file."""

    def __init__(self, trace: Path | None):
        super().__init__()
        self.trace = trace

    def append(self, event: Event) -> None:
        if self.trace is not None:
            tracer = JsonlTracer(self.trace)
            try:
                tracer.write(event)
            finally:
                tracer.close()


def _tools_by_name(items: Sequence[Tool | Toolkit | Callable[..., Any]]) -> dict[str, Tool]:
    found: dict[str, Tool] = {}
    for t in collect_tools(items):
        if t.name in found:
            raise ValueError(
                f"two tools are named {t.name!r}; give one toolkit a prefix, "
                "e.g. MyToolkit(prefix='mine')"
            )
        found[t.name] = t
    return found


def _has_system(messages: Sequence[Message] | None) -> bool:
    """The conversation brings its own system message (the agent's is not added)."""
    return messages is not None and len(messages) > 0 and messages[0].role == "system"


def _set_system(messages: list[Message], prompt: str | None) -> None:
    """Make ``prompt`` the conversation's system message: a started MCP server's
    instructions are known only once it runs."""
    if messages and messages[0].role == "system":
        if messages[0].text == prompt:
            return
        del messages[0]
    if prompt:
        messages.insert(0, Message.system(prompt))
