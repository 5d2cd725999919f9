"""The agent loop: ask the model, run the tools it asks for, repeat.

``run_events`` is an async generator of events; ``Agent.run`` and
``Agent.stream`` consume it. Per turn it does work proportional to that
turn's new messages only, never to the whole history.

Its progress lives in a ``Progress`` object, so a saved run can continue from any
step boundary; what happens at those boundaries (saving state, waiting for
approvals) is a ``StepHooks`` object the loop awaits and knows nothing else about.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

from ._tool_results import ImageBudget, route_outcome
from .artifacts import ArtifactStore
from .errors import (
    MaxTurnsExceeded,
    OutputValidationError,
    ToolRetriesExceeded,
    UnexpectedModelBehavior,
)
from .events import (
    Event,
    ModelRequestStarted,
    RunFinished,
    RunPaused,
    RunStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolFinishedLate,
    TurnFinished,
)
from .loopguard import LoopDetected, LoopGuard
from .messages import (
    ImagePart,
    Message,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
    _trusted,
)
from .models import (
    Model,
    ModelProfile,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    Tiers,
    TokenTrace,
    TurnInfo,
)
from .output import OutputSpec
from .result import RunResult
from .tools import Tool, ToolContext, ToolOutcome, ToolSpec


@dataclass(slots=True)
class PendingTurn:
    """A turn whose model answer asked for tool calls that have not all been answered."""

    turn: int
    served_by: str
    tier: str | None
    usage: Usage
    finish_reason: str | None
    calls: list[ToolCallPart]
    """The calls as they run (a person may have edited their arguments)."""
    done: dict[str, tuple[ToolOutcome, float]] = field(default_factory=dict)
    """Outcomes (and durations) already known by call id: run before a crash, or
    decided without running (a rejected call)."""
    token_trace: TokenTrace | None = None


@dataclass
class Progress:
    """How far a run has got: what a saved run state holds besides its messages."""

    budget: ImageBudget
    turn: int = 0
    """Model answers so far."""
    usages: list[tuple[str, Usage]] = field(default_factory=list)
    """(model name, usage) per turn (or per model, for a resumed run), summed on demand."""
    arg_failures: dict[str, int] = field(default_factory=dict)
    """Invalid-argument calls in a row, per tool."""
    output_failures: int = 0
    pending: PendingTurn | None = None


_NOTHING_DONE: dict[str, tuple[ToolOutcome, float]] = {}  # a run without hooks records none


class StepHooks(Protocol):
    """What happens at the loop's step boundaries: state saving and approvals
    (``agentsdk.state``). The loop awaits each hook before it goes on."""

    async def started(self, cfg: RunConfig) -> None:
        """The prompt is in the messages (or a saved run is about to continue)."""

    async def answered(self, cfg: RunConfig) -> list[Any]:
        """The model's answer is in the messages and ``progress.pending`` holds its
        calls. Returns what must wait for a person (the run then pauses), else ``[]``."""
        ...

    async def call_starting(self, cfg: RunConfig, call: ToolCallPart) -> None:
        """A call is about to run."""

    async def call_finished(self, cfg: RunConfig, call: ToolCallPart) -> None:
        """A call's outcome is in ``progress.pending.done``."""

    async def turn_finished(self, cfg: RunConfig) -> None:
        """The turn's tool results are in the messages."""

    async def finished(self, cfg: RunConfig, result: RunResult) -> RunResult:
        """The run ends: with its answer, or paused (``result.status``)."""
        ...


@dataclass
class RunConfig:
    """Everything one run needs, prepared by ``Agent``."""

    run_id: str
    agent_name: str
    model: Model | Tiers
    tools: dict[str, Tool]
    settings: ModelSettings
    output: OutputSpec | None
    max_turns: int
    max_concurrency: int
    max_tool_output_chars: int
    keep_images: int
    artifacts: ArtifactStore
    deps: Any
    stream: bool
    messages: list[Message] = field(default_factory=list)
    reset_tool_choice: bool = True
    """After a turn that called tools, a forced tool_choice becomes "auto"."""
    guard: LoopGuard | None = None
    """Loop and stall detection for this run (``None``: off)."""
    answer_hooks: list[Callable[[str, list[Message]], str]] = field(default_factory=list)
    """Toolkits' ``on_answer``: each may complete the final text answer."""
    refresh_tools: Callable[[], dict[str, Tool] | None] | None = None
    """Called before each later turn: the new tools when a toolkit's changed, else None."""
    progress: Progress | None = None
    """Where the run starts (a resumed run's); a fresh run gets an empty one."""
    hooks: StepHooks | None = None
    """State saving and approvals at the step boundaries; ``None``: nothing to do there."""
    late: list[Event] = field(default_factory=list)
    """Events that happened off the loop (a timed-out tool returning), emitted at the
    next step boundary."""
    warming: Awaitable[None] | None = None
    """The model's warm-up, started while the toolkits did (``models.warm_up_soon``):
    the first request waits for it to end."""


def _profile(model: Model | Tiers) -> ModelProfile:
    """The capabilities every model that may serve a turn has."""
    if isinstance(model, Tiers):
        fast, std = model.model("fast").profile, model.model("standard").profile
        return ModelProfile(
            images_in_tool_results=fast.images_in_tool_results and std.images_in_tool_results,
            image_input=fast.image_input and std.image_input,
            json_schema_output=fast.json_schema_output and std.json_schema_output,
        )
    return model.profile


async def _stream(
    model: Model, request: ModelRequest, cfg: RunConfig, turn: int
) -> AsyncIterator[Event | ModelResponse]:
    async for item in model.stream(request):
        if isinstance(item, ModelResponse):
            yield item
            return
        if item.text:
            yield TextDelta(cfg.run_id, turn, item.text)
    raise UnexpectedModelBehavior(f"model {model.name} ended its stream without a response")


def _request(
    cfg: RunConfig,
    messages: list[Message],
    specs: list[ToolSpec],
    settings: ModelSettings,
    turn: int = 1,
) -> ModelRequest:
    """The request for one turn (values the loop holds are valid: built unvalidated)."""
    output = cfg.output
    return _trusted(
        ModelRequest,
        {
            "messages": list(messages),
            "tools": specs,
            "settings": settings,
            "output_schema": output.schema if output else None,
            "output_name": output.name if output else None,
            "last_turn": turn >= cfg.max_turns,
        },
        {"messages", "tools", "settings", "output_schema", "output_name", "last_turn"},
    )


def first_request(cfg: RunConfig, prompt: str | Message) -> ModelRequest:
    """The request a new run's first turn makes: what a model can warm up for while the
    toolkits start (``models.warm_up_soon``)."""
    user = prompt if isinstance(prompt, Message) else Message.user(prompt)
    specs = [t.spec() for t in cfg.tools.values()]
    return _request(cfg, [*cfg.messages, user], specs, cfg.settings)


async def run_events(cfg: RunConfig, prompt: str | Message | None) -> AsyncGenerator[Event, None]:
    """Run the loop, yielding events; the last one is ``RunFinished`` (or ``RunPaused``).
    ``prompt=None`` continues ``cfg.progress`` (a resumed run)."""
    messages = cfg.messages
    if prompt is not None:
        messages.append(prompt if isinstance(prompt, Message) else Message.user(prompt))
    if cfg.progress is None:
        cfg.progress = Progress(ImageBudget(cfg.keep_images, cfg.artifacts))
    p = cfg.progress
    hooks = cfg.hooks
    specs = [t.spec() for t in cfg.tools.values()]
    profile = _profile(cfg.model)
    budget = p.budget
    usages = p.usages
    run_id, max_chars, artifacts = cfg.run_id, cfg.max_tool_output_chars, cfg.artifacts
    arg_failures = p.arg_failures
    first = next((m.text for m in reversed(messages) if m.role == "user"), "")
    yield RunStarted(
        cfg.run_id, cfg.agent_name, first, cfg.model.name, list(cfg.tools), prompt is None
    )
    if hooks is not None:
        await hooks.started(cfg)
    turn = p.turn
    previous_tier: str | None = None

    while True:
        pending = p.pending
        if pending is None:  # ask the model
            turn += 1
            if turn > cfg.max_turns:
                raise MaxTurnsExceeded(
                    f"the run used all {cfg.max_turns} turns without a final answer",
                    _result(cfg, None, usages, cfg.max_turns),
                )
            if cfg.refresh_tools is not None and turn > 1:
                fresh = cfg.refresh_tools()
                if fresh is not None:  # e.g. an MCP server said its tool list changed
                    cfg.tools = fresh
                    specs = [t.spec() for t in fresh.values()]
            settings = cfg.settings
            if cfg.guard is not None and cfg.guard.answer_now and specs:
                # One more looping turn ends the run: ask for the answer instead of a call.
                settings = settings.model_copy(update={"tool_choice": "none"})
            request = _request(cfg, messages, specs, settings, turn)
            tier: str | None = None
            model: Model
            info: TurnInfo | None = None
            if isinstance(cfg.model, Tiers):
                info = TurnInfo(turn, request, previous_tier)
                tier, model = cfg.model.pick(info)
                previous_tier = tier
            else:
                model = cfg.model
            yield ModelRequestStarted(cfg.run_id, turn, model.name, tier)
            if cfg.warming is not None:
                warming, cfg.warming = cfg.warming, None
                await warming  # the engine it started and the prefix it read serve this turn
            response: ModelResponse | None = None
            if not cfg.stream:
                response = await model.request(request)
            else:
                async for item in _stream(model, request, cfg, turn):
                    if isinstance(item, ModelResponse):
                        response = item
                    else:
                        yield item
            assert response is not None
            turn_usage = _counted(response.usage)
            served_by = response.model_name or model.name
            if (
                info is not None
                and tier == "fast"
                and not cfg.stream
                and isinstance(cfg.model, Tiers)
                and cfg.model.escalate is not None
                and (instead := cfg.model.escalate(info, response)) is not False
            ):
                # The fast tier's answer will not do: the standard tier gets the request.
                usages.append((served_by, turn_usage))
                tier = previous_tier = "standard"
                model = cfg.model.model("standard")
                yield ModelRequestStarted(cfg.run_id, turn, model.name, tier)
                response = await model.request(request if instead is True else instead)
                served_by = response.model_name or model.name
                fast_usage, turn_usage = turn_usage, _counted(response.usage)
                usages.append((served_by, turn_usage))
                turn_usage = fast_usage + turn_usage
            else:
                usages.append((served_by, turn_usage))
            p.turn = turn
            finish, tokens = response.finish_reason, response.token_trace
            messages.append(_message("assistant", list(response.parts)))
            calls = response.tool_calls

            if not calls:
                text = response.text
                if cfg.output is not None:
                    ok, value, problem = cfg.output.validate(text)
                    if not ok:
                        p.output_failures += 1
                        if p.output_failures > cfg.output.retries:
                            raise OutputValidationError(
                                problem, _result(cfg, None, usages, turn, finish)
                            )
                        messages.append(Message.user(cfg.output.retry_prompt(problem)))
                        if hooks is not None:
                            await hooks.answered(cfg)
                        yield TurnFinished(
                            cfg.run_id, turn, served_by, tier, turn_usage, 0, finish, tokens
                        )
                        continue
                else:
                    value = text
                    for hook in cfg.answer_hooks:
                        value = hook(value, messages)
                yield TurnFinished(cfg.run_id, turn, served_by, tier, turn_usage, 0, finish, tokens)
                while cfg.late:
                    yield cfg.late.pop(0)
                result = _result(cfg, value, usages, turn, finish)
                if hooks is not None:
                    result = await hooks.finished(cfg, result)
                yield RunFinished(cfg.run_id, value, turn, result.usage, result)
                return

            settings = cfg.settings
            if cfg.reset_tool_choice and settings.tool_choice not in (None, "auto", "none"):
                # Forced once and obeyed: let the model answer from here on.
                cfg.settings = settings.model_copy(update={"tool_choice": "auto"})
            done = _NOTHING_DONE
            if hooks is not None:  # the boundary: the answer is saved, approvals decided
                pending = p.pending = PendingTurn(turn, served_by, tier, turn_usage, finish, calls)
                pending.token_trace, done = tokens, pending.done
                if waiting := await hooks.answered(cfg):
                    result = await hooks.finished(cfg, _result(cfg, None, usages, turn, finish))
                    yield RunPaused(cfg.run_id, turn, waiting, result)
                    return
        else:  # a resumed run continues the turn it stopped in
            calls, served_by, tier = pending.calls, pending.served_by, pending.tier
            turn_usage, finish, tokens = pending.usage, pending.finish_reason, pending.token_trace
            done = pending.done

        for call in calls:
            if call.id not in done:
                yield ToolCallStarted(cfg.run_id, turn, call.id, call.name, call.arguments)
        guard = cfg.guard
        outcomes = await _run_calls(cfg, calls, turn)
        if guard is not None:
            reviewed = guard.after(calls, [o for o, _ in outcomes])
            outcomes = [(o, d) for o, (_, d) in zip(reviewed, outcomes, strict=True)]

        result_parts: list[ToolResultPart] = []
        trailing: list[TextPart | ImagePart] = []
        new_images: list[ImagePart] = []
        for call, (outcome, duration) in zip(calls, outcomes, strict=True):
            if outcome.kind == "invalid_arguments":
                arg_failures[call.name] = arg_failures.get(call.name, 0) + 1
                allowed = cfg.tools[call.name].retries if call.name in cfg.tools else 2
                if arg_failures[call.name] > allowed:
                    raise ToolRetriesExceeded(
                        f"the model gave invalid arguments to tool '{call.name}' "
                        f"{arg_failures[call.name]} times in a row: {outcome.text}",
                        _result(cfg, None, usages, turn),
                    )
            else:
                arg_failures.pop(call.name, None)
            attached = sum(isinstance(p, ImagePart) for p in trailing) if trailing else 0
            tool_result, images, shown, events = route_outcome(
                run_id, max_chars, artifacts, profile, budget, call, outcome, turn, attached
            )
            for event in events:
                yield event
            yield ToolCallFinished(
                cfg.run_id,
                turn,
                call.id,
                call.name,
                duration,
                outcome.is_error,
                outcome.text[:200],
                tool_result.text,
            )
            result_parts.append(tool_result)
            trailing.extend(shown)
            new_images.extend(images)
        messages.append(_message("tool", list[Any](result_parts)))
        if profile.images_in_tool_results:
            budget.track(len(messages) - 1, new_images)
        if trailing:
            messages.append(_message("user", list[Any](trailing)))
            budget.track(len(messages) - 1, new_images)
        budget.enforce(messages)
        p.pending = None
        if hooks is not None:
            await hooks.turn_finished(cfg)
        yield TurnFinished(
            cfg.run_id, turn, served_by, tier, turn_usage, len(calls), finish, tokens
        )
        while cfg.late:
            yield cfg.late.pop(0)
        if guard is not None and (why := guard.stuck) is not None:
            raise LoopDetected(f"the run was stopped: {why}", _result(cfg, None, usages, turn))


def _totals(usages: list[tuple[str, Usage]]) -> tuple[Usage, dict[str, Usage]]:
    """The run's usage and the usage of each model: what adding the turns up with
    ``+`` gives, without an object per addition."""
    sums: dict[str, list[int]] = {}
    for name, u in usages:
        s = sums.get(name)
        if s is None:
            s = sums[name] = [0, 0, 0, 0, 0]
        s[0] += u.input_tokens
        s[1] += u.output_tokens
        s[2] += u.cache_read_tokens
        s[3] += u.cache_write_tokens
        s[4] += u.requests
    total = (
        _usage([sum(column) for column in zip(*sums.values(), strict=True)]) if sums else Usage()
    )
    return total, {name: _usage(s) for name, s in sums.items()}


_USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "requests",
)


def _usage(counts: list[int]) -> Usage:
    return _trusted(
        Usage,
        dict(zip(_USAGE_FIELDS, counts, strict=True)),
        {"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "requests"},
    )


def _message(role: str, parts: list[Any]) -> Message:
    """A message from parts the loop made or a model already returned as valid objects."""
    return _trusted(Message, {"role": role, "parts": parts}, {"role", "parts"})


def _result(
    cfg: RunConfig,
    output: Any,
    usages: list[tuple[str, Usage]],
    turns: int,
    finish_reason: str | None = None,
) -> RunResult:
    usage, usage_by_model = _totals(usages)
    return RunResult(
        output=output,
        messages=cfg.messages,
        usage=usage,
        usage_by_model=usage_by_model,
        turns=turns,
        run_id=cfg.run_id,
        artifacts_dir=cfg.artifacts.dir,
        finish_reason=finish_reason,
    )


async def _run_calls(
    cfg: RunConfig, calls: list[ToolCallPart], turn: int
) -> list[tuple[ToolOutcome, float]]:
    if cfg.hooks is not None:
        return await _run_calls_hooked(cfg, calls, turn, cfg.hooks)
    if len(calls) == 1:  # the common turn: no bookkeeping for order or concurrency
        start = time.perf_counter()
        outcome = await _call(cfg, calls[0], turn)
        return [(outcome, time.perf_counter() - start)]
    results: list[tuple[ToolOutcome, float] | None] = [None] * len(calls)

    async def one(i: int, call: ToolCallPart) -> None:
        start = time.perf_counter()
        results[i] = (await _call(cfg, call, turn), time.perf_counter() - start)

    await _schedule(cfg, calls, results, one)
    return [r for r in results if r is not None]


async def _run_calls_hooked(
    cfg: RunConfig, calls: list[ToolCallPart], turn: int, hooks: StepHooks
) -> list[tuple[ToolOutcome, float]]:
    """``_run_calls`` with a hook before and after each call, and outcomes already
    known (a resumed turn's) taken instead of running the call again."""
    assert cfg.progress is not None and cfg.progress.pending is not None
    done = cfg.progress.pending.done
    results: list[tuple[ToolOutcome, float] | None] = [done.get(c.id) for c in calls]
    failures: list[BaseException] = []

    async def one(i: int, call: ToolCallPart) -> None:
        try:
            await hooks.call_starting(cfg, call)
        except Exception as exc:  # e.g. another process took the run over: do not run it
            failures.append(exc)
            return
        start = time.perf_counter()
        outcome = await _call(cfg, call, turn)
        results[i] = done[call.id] = (outcome, time.perf_counter() - start)
        try:
            await hooks.call_finished(cfg, call)
        except Exception as exc:
            failures.append(exc)

    todo = [(i, c) for i, c in enumerate(calls) if results[i] is None]
    if len(todo) == 1:
        await one(*todo[0])
    elif todo:
        await _schedule(cfg, calls, results, one)
    if failures:
        raise failures[0]
    return [r for r in results if r is not None]


async def _schedule(
    cfg: RunConfig,
    calls: list[ToolCallPart],
    results: list[Any],
    one: Callable[[int, ToolCallPart], Any],
) -> None:
    """Run ``one(i, call)`` for each call without a result: concurrently (capped),
    then the sequential tools one at a time, in order."""
    concurrent: list[tuple[int, ToolCallPart]] = []
    sequential: list[tuple[int, ToolCallPart]] = []
    for i, c in enumerate(calls):
        if results[i] is None:
            tool = cfg.tools.get(c.name)
            (sequential if tool is not None and tool.sequential else concurrent).append((i, c))
    if len(concurrent) == 1:
        await one(*concurrent[0])
    elif concurrent:
        limiter = anyio.CapacityLimiter(cfg.max_concurrency)

        async def limited(i: int, call: ToolCallPart) -> None:
            async with limiter:
                await one(i, call)

        async with anyio.create_task_group() as tg:
            for i, c in concurrent:
                tg.start_soon(limited, i, c)
    for i, c in sequential:
        await one(i, c)


async def _call(cfg: RunConfig, call: ToolCallPart, turn: int) -> ToolOutcome:
    tool = cfg.tools.get(call.name)
    if tool is None:
        names = ", ".join(sorted(cfg.tools)) or "(none)"
        text = f"Unknown tool '{call.name}'. Available tools: {names}."
        return ToolOutcome([TextPart(text=text)], is_error=True, kind="invalid_arguments")
    if call.raw_arguments is not None:
        try:
            json.loads(call.raw_arguments)
            problem = "the arguments must be a JSON object"
        except ValueError as exc:
            problem = f"invalid JSON ({exc})"
        text = (
            f"The arguments for tool '{call.name}' could not be read: {problem}. "
            f"You sent: {call.raw_arguments[:500]}. Call it again with a JSON object."
        )
        return ToolOutcome([TextPart(text=text)], is_error=True, kind="invalid_arguments")
    ctx = ToolContext(
        run_id=cfg.run_id,
        call_id=call.id,
        tool_name=call.name,
        turn=turn,
        artifacts=cfg.artifacts,
        deps=cfg.deps,
    )
    if tool.timeout is not None and not tool._is_async:
        ctx.finished_late = _late_reporter(cfg, call, turn)
    return await tool.call(call.arguments, ctx)


def _late_reporter(cfg: RunConfig, call: ToolCallPart, turn: int) -> Callable[[float], None]:
    def report(late_by: float) -> None:  # runs in the tool's thread: a list append is atomic
        cfg.late.append(ToolFinishedLate(cfg.run_id, turn, call.id, call.name, late_by))

    return report


def _counted(usage: Usage) -> Usage:
    """``usage`` with its request counted (a connector may not count it)."""
    return usage if usage.requests >= 1 else usage + Usage.model_construct(requests=1)
