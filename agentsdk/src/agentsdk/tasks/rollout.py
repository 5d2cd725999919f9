"""Running one task once: toolkits from a pool (reset between tasks), setup, the agent
run, then the verifier on the world it left."""

from __future__ import annotations

import inspect
import shutil
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..agent import Agent
from ..errors import AgentError
from ..events import Event, ToolCallFinished, ToolCallStarted, TurnFinished
from ..messages import Message, TextPart, ToolCallPart, ToolResultPart, Usage
from ..models import Model, ModelError, ModelSettings, Tiers, warm_up_soon
from ..plugins import resolve_model
from ..result import RunResult
from ..tools import Tool, Toolkit, tools_can_change
from .reference import ReferenceMissing, ReferenceModel
from .task import Step, Suite, Task, ToolkitSpec, Verdict
from .verify import VerifierError, verify
from .world import World

__all__ = ["Rollout", "ToolkitPool", "run_task"]

REFERENCE = "reference"
"""The model string that plays each task's own reference solution."""


class ToolkitPool:
    """Started toolkits kept for many tasks: one instance per distinct ``ToolkitSpec``,
    reset (not restarted) before it is handed out again. ``async with`` closes them."""

    def __init__(self) -> None:
        self._toolkits: dict[str, Toolkit] = {}
        self._started: set[str] = set()
        self._used: set[str] = set()

    def build(self, specs: Sequence[ToolkitSpec]) -> dict[str, Toolkit]:
        """The toolkits for one run, by spec name, not necessarily started yet: what the
        run's agent is made with while ``acquire`` starts them (their tools are known)."""
        out: dict[str, Toolkit] = {}
        for spec in specs:
            key = spec.key()
            toolkit = self._toolkits.get(key)
            if toolkit is None:
                toolkit = self._toolkits[key] = spec.build()
            out[spec.name] = toolkit
        return out

    async def acquire(self, specs: Sequence[ToolkitSpec]) -> dict[str, Toolkit]:
        """The toolkits for one run, by spec name: started, and reset if used before."""
        out = self.build(specs)
        for spec in specs:
            key = spec.key()
            toolkit = out[spec.name]
            if key not in self._started:
                await toolkit.__aenter__()
                self._started.add(key)
            elif key in self._used:
                await toolkit.reset()
            self._used.add(key)
        return out

    async def discard(self, specs: Sequence[ToolkitSpec]) -> None:
        """Close and forget these toolkits (after a crash); the next run gets new ones."""
        for spec in specs:
            key = spec.key()
            toolkit = self._toolkits.pop(key, None)
            self._used.discard(key)
            if toolkit is not None and key in self._started:
                self._started.discard(key)
                try:
                    await toolkit.__aexit__(None, None, None)
                except Exception:  # a crashed engine may fail to close; it is gone either way
                    pass

    async def aclose(self) -> None:
        """Close every toolkit."""
        toolkits, self._toolkits = self._toolkits, {}
        started, self._started = self._started, set()
        self._used.clear()
        for key, toolkit in toolkits.items():
            if key not in started:
                continue
            try:
                await toolkit.__aexit__(None, None, None)
            except Exception:
                pass

    async def __aenter__(self) -> ToolkitPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class TurnRecord(BaseModel):
    """One model turn of a rollout."""

    turn: int
    model: str
    tier: str | None = None
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    finish_reason: str | None = None


class Rollout(BaseModel):
    """One run of one task: what happened and what the verifier decided.

    ``status`` is ``passed`` or ``failed`` (the verifier's word on a run that ended,
    with or without an answer), ``error`` (the run could not finish: max turns,
    timeout, a model error; still verified on what it left) or ``broken`` (the task
    itself failed: its setup, environment or verifier — never the model's fault)."""

    task_id: str
    sample: int = 0
    model: str
    status: Literal["passed", "failed", "error", "broken"]
    verdict: Verdict | None = None
    output: str = ""
    error: str | None = None
    broken: str | None = None
    seconds: float = 0.0
    turns: int = 0
    usage: Usage = Field(default_factory=Usage)
    tool_calls: list[str] = Field(default_factory=list)
    turn_records: list[TurnRecord] = Field(default_factory=list)
    workdir: str = ""
    worker: str = ""
    """Where it ran: ``local:N`` (worker N of an eval in this process) or ``ray:PID``."""
    retries: list[str] = Field(default_factory=list)
    """Why earlier attempts were lost (a Ray worker that died mid-task), oldest first."""

    @property
    def passed(self) -> bool:
        """Whether the verifier passed the run."""
        return self.verdict is not None and self.verdict.passed

    @property
    def score(self) -> float:
        """The verifier's score (0 when there is no verdict)."""
        return self.verdict.score if self.verdict is not None else 0.0


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in name).strip("-.") or "task"


async def run_task(
    task: Task,
    model: Model | Tiers | str,
    *,
    suite: Suite | None = None,
    pool: ToolkitPool | None = None,
    workdir: str | Path | None = None,
    sample: int = 0,
    settings: ModelSettings | None = None,
    steps: Sequence[Step] | None = None,
    extra_tools: Sequence[Tool] = (),
    on_event: Callable[[Event], None] | None = None,
    world_hook: Callable[[World], Any] | None = None,
    trace: str | Path | None = None,
) -> Rollout:
    """Run ``task`` once with ``model`` and verify the world it leaves.

    Args:
        task: The task.
        model: A model, tiers, a model string, or ``"reference"`` to play the task's
            reference solution (``steps`` plays other scripted steps instead).
        suite: The task's suite (its default instructions).
        pool: Toolkits to reuse across runs; a private pool (closed afterwards) if ``None``.
        workdir: Where rollout folders go (a temporary folder if ``None``).
        sample: The sample number (several runs of one task).
        settings: Model settings, merged under the task's own.
        steps: Scripted steps for a ``ReferenceModel`` instead of the task's reference.
        extra_tools: Tools offered besides the task's toolkits.
        on_event: Called with every run event.
        world_hook: Called with the world after the verdict, before toolkits are reset
            (e.g. to verify it a second time).
        trace: A JSONL file the run's events are appended to.
    """
    own_pool = pool is None
    pool = pool or ToolkitPool()
    root = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp(prefix="agentsdk-task-"))
    run_id = f"{_safe(task.id)}.s{sample}"
    rundir = root / run_id
    started = time.perf_counter()
    resolved: Model | Tiers | None = None
    label = model if isinstance(model, str) else model.name
    records: list[TurnRecord] = []

    def broken(reason: str) -> Rollout:
        return Rollout(
            task_id=task.id,
            sample=sample,
            model=label,
            status="broken",
            broken=reason,
            seconds=time.perf_counter() - started,
            workdir=str(rundir),
        )

    if rundir.is_dir():  # what an interrupted earlier attempt left behind
        shutil.rmtree(rundir, ignore_errors=True)
    warming = None
    try:
        try:
            toolkits = pool.build(task.specs)
        except Exception as exc:
            return broken(f"the environment failed to start: {type(exc).__name__}: {exc}")
        world = World(task=task, toolkits=toolkits, workdir=rundir)
        if steps is not None or (isinstance(model, str) and model == REFERENCE):
            resolved = ReferenceModel(task, world, steps)
        else:
            resolved = resolve_model(model) if isinstance(model, str) else model

        def make_agent() -> Agent:
            tools: list[Tool | Toolkit] = []
            for spec in task.specs:
                toolkit = toolkits[spec.name]
                tools.append(toolkit.only(*spec.tools) if spec.tools else toolkit)
            tools.extend(extra_tools)
            return Agent(
                resolved,
                suite.instructions_for(task) if suite is not None else task.instructions,
                tools=tools,
                max_turns=task.max_turns,
                timeout=task.timeout,
                settings=(settings or ModelSettings()).merged(task.settings),
                artifacts_dir=root,
                trace=trace,
            )

        # A toolkit whose tools are known only once it runs (an MCP server's) must start
        # before the agent is made; the others are listed now.
        listed = not any(tools_can_change(t) for t in toolkits.values())
        agent = make_agent() if listed else None
        if not isinstance(resolved, ReferenceModel):
            # The task's prompt does not depend on its environment: a local engine starts
            # and writes the first turn (``models.warm_up``) while the toolkits start and
            # the setup builds the scene.
            opening = agent.opening_request(task.prompt) if agent is not None else None
            warming = warm_up_soon(resolved, opening)
        try:
            await pool.acquire(task.specs)
        except Exception as exc:
            await pool.discard(task.specs)
            return broken(f"the environment failed to start: {type(exc).__name__}: {exc}")
        if agent is None:
            agent = make_agent()
        if task.setup is not None:
            try:
                value = task.setup(world)
                if inspect.isawaitable(value):
                    await value
            except Exception:
                await pool.discard(task.specs)
                return broken(f"setup failed:\n{traceback.format_exc()}")

        heard: list[ToolCallStarted | ToolCallFinished] = []

        def record(event: Event) -> None:
            if type(event) is ToolCallStarted or type(event) is ToolCallFinished:
                heard.append(event)  # the transcript of a run that ends without a result
            if type(event) is TurnFinished:
                # Values the loop already validated: built without a second validation.
                records.append(
                    TurnRecord.model_construct(
                        turn=event.turn,
                        model=event.model,
                        tier=event.tier,
                        tool_calls=event.tool_calls,
                        input_tokens=event.usage.input_tokens,
                        output_tokens=event.usage.output_tokens,
                        finish_reason=event.finish_reason,
                    )
                )
            if on_event is not None:
                on_event(event)

        result: RunResult | None = None
        error: str | None = None
        try:
            result = await agent.run(task.prompt, run_id=run_id, on_event=record)
        except ReferenceMissing as exc:
            await pool.discard(task.specs)
            return broken(f"the reference solution is incomplete: {exc}")
        except AgentError as exc:
            result = exc.result
            error = f"{type(exc).__name__}: {exc}"
        except ModelError as exc:
            error = f"{type(exc).__name__}: {exc}"
        except TimeoutError as exc:
            error = f"RunTimeout: {exc}"
        except Exception as exc:  # a model's own bug ends its rollout, not a long eval
            if isinstance(resolved, ReferenceModel):
                await pool.discard(task.specs)
                return broken(f"the reference solution raised:\n{traceback.format_exc()}")
            error = f"{type(exc).__name__}: {exc}"
        world.result = result
        if result is not None:
            world.messages = list(result.messages)
        elif heard:  # timed out or failed mid-run: what its events show
            world.messages = _heard_transcript(task.prompt, heard)
        world.error = error
        try:
            verdict = await verify(task, world)
        except VerifierError as exc:
            await pool.discard(task.specs)
            return broken(f"{exc}\n{exc.details}")
        if world_hook is not None:
            value = world_hook(world)
            if inspect.isawaitable(value):
                await value
        status: Literal["passed", "failed", "error"] = (
            "passed" if verdict.passed else "error" if error else "failed"
        )
        return Rollout(
            task_id=task.id,
            sample=sample,
            model=label,
            status=status,
            verdict=verdict,
            output=world.answer,
            error=error,
            seconds=time.perf_counter() - started,
            turns=result.turns if result is not None else len(records),
            usage=result.usage if result is not None else Usage(),
            tool_calls=[c.name for c in world.tool_calls],
            turn_records=records,
            workdir=str(rundir),
        )
    finally:
        if warming is not None and not warming.done():
            warming.cancel()
        if (
            resolved is not None
            and isinstance(model, str)
            and not isinstance(resolved, ReferenceModel)
        ):
            await resolved.aclose()
        if own_pool:
            await pool.aclose()


def _heard_transcript(
    prompt: str, heard: Sequence[ToolCallStarted | ToolCallFinished]
) -> list[Message]:
    """The calls and results of a run that ended without a ``RunResult`` (its timeout
    passed), rebuilt from its events, so its trajectory and checks still see what it did:
    the prompt, then per turn the calls and their results (the model's text is not in
    the events)."""
    messages = [Message.user(prompt)]
    turns: dict[int, tuple[list[ToolCallPart], list[ToolResultPart]]] = {}
    for event in heard:
        calls, results = turns.setdefault(event.turn, ([], []))
        if isinstance(event, ToolCallStarted):
            calls.append(ToolCallPart(id=event.call_id, name=event.name, arguments=event.arguments))
        else:
            text = [TextPart(text=event.text or event.preview)]
            results.append(
                ToolResultPart(
                    call_id=event.call_id, name=event.name, parts=text, is_error=event.is_error
                )
            )
    for _turn, (calls, results) in sorted(turns.items()):
        if calls:
            messages.append(Message(role="assistant", parts=calls))
        if results:
            messages.append(Message(role="tool", parts=results))
    return messages
