"""The agent loop: ask the model, run the tools it asks for, repeat.

``run_events`` is an async generator of events; ``Agent.run`` and
``Agent.stream`` consume it. Per turn it does work proportional to that
turn's new messages only, never to the whole history.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from .artifacts import ArtifactStore
from .errors import (
    MaxTurnsExceeded,
    OutputValidationError,
    ToolRetriesExceeded,
    UnexpectedModelBehavior,
)
from .events import (
    Event,
    ImageProduced,
    ModelRequestStarted,
    RunFinished,
    RunStarted,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
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
    _text_part,
    _trusted,
)
from .models import Model, ModelProfile, ModelRequest, ModelResponse, ModelSettings, Tiers, TurnInfo
from .output import OutputSpec
from .result import RunResult
from .tools import Tool, ToolContext, ToolOutcome


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
    refresh_tools: Callable[[], dict[str, Tool] | None] | None = None
    """Called before each later turn: the new tools when a toolkit's changed, else None."""


class _ImageBudget:
    """Keeps only the most recent K tool images in the context."""

    def __init__(self, keep: int, artifacts: ArtifactStore):
        self.keep = keep
        self.artifacts = artifacts
        self.paths: dict[int, str] = {}
        self.order: deque[tuple[int, int]] = deque()  # (message index, id(image part))

    def saved_path(self, part: ImagePart, name: str) -> str:
        path = self.paths.get(id(part))
        if path is None:
            path = str(self.artifacts.save_image(part, name))
            self.paths[id(part)] = path
        return path

    def track(self, index: int, images: list[ImagePart]) -> None:
        for img in images:
            self.order.append((index, id(img)))

    def enforce(self, messages: list[Message]) -> None:
        excess = len(self.order) - self.keep
        if excess <= 0:
            return
        victims: dict[int, set[int]] = {}
        for _ in range(excess):
            index, part_id = self.order.popleft()
            victims.setdefault(index, set()).add(part_id)
        for index, ids in victims.items():
            messages[index] = self._strip(messages[index], ids)

    def _placeholder(self, part: ImagePart) -> TextPart:
        where = self.paths.get(id(part), "(not saved)")
        return TextPart(text=f"[older image removed from context; saved at {where}]")

    def _strip(self, message: Message, victims: set[int]) -> Message:
        new_parts: list[Any] = []
        for part in message.parts:
            if isinstance(part, ImagePart) and id(part) in victims:
                new_parts.append(self._placeholder(part))
            elif isinstance(part, ToolResultPart) and any(id(p) in victims for p in part.parts):
                inner = [
                    self._placeholder(p) if isinstance(p, ImagePart) and id(p) in victims else p
                    for p in part.parts
                ]
                new_parts.append(part.model_copy(update={"parts": inner}))
            else:
                new_parts.append(part)
        return Message.model_construct(role=message.role, parts=new_parts)


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


def _truncate(text: str, limit: int, artifacts: ArtifactStore, name: str) -> str:
    if len(text) <= limit:
        return text
    path = artifacts.save_text(f"{name}-output.txt", text)
    return (
        text[:limit] + f"\n[output truncated: showing {limit} of {len(text)} characters; "
        f"the full output is saved at {path}]"
    )


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


async def run_events(cfg: RunConfig, prompt: str | Message) -> AsyncGenerator[Event, None]:
    """Run the loop, yielding events; the last one is ``RunFinished``."""
    messages = cfg.messages
    user = prompt if isinstance(prompt, Message) else Message.user(prompt)
    messages.append(user)
    specs = [t.spec() for t in cfg.tools.values()]
    output_schema = cfg.output.schema if cfg.output else None
    output_name = cfg.output.name if cfg.output else None
    profile = _profile(cfg.model)
    budget = _ImageBudget(cfg.keep_images, cfg.artifacts)
    usages: list[tuple[str, Usage]] = []  # (model name, usage) per turn, summed on demand
    arg_failures: dict[str, int] = {}
    output_failures = 0
    settings = cfg.settings
    yield RunStarted(cfg.run_id, cfg.agent_name, user.text, cfg.model.name, list(cfg.tools))

    for turn in range(1, cfg.max_turns + 1):
        if cfg.refresh_tools is not None and turn > 1:
            fresh = cfg.refresh_tools()
            if fresh is not None:  # e.g. an MCP server said its tool list changed
                cfg.tools = fresh
                specs = [t.spec() for t in fresh.values()]
        request = _trusted(
            ModelRequest,
            {
                "messages": list(messages),
                "tools": specs,
                "settings": settings,
                "output_schema": output_schema,
                "output_name": output_name,
            },
            {"messages", "tools", "settings", "output_schema", "output_name"},
        )
        tier: str | None = None
        model: Model
        if isinstance(cfg.model, Tiers):
            tier, model = cfg.model.pick(TurnInfo(turn=turn, request=request))
        else:
            model = cfg.model
        yield ModelRequestStarted(cfg.run_id, turn, model.name, tier)
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
        turn_usage = response.usage
        if turn_usage.requests < 1:  # a connector that did not count its request
            turn_usage = turn_usage + Usage.model_construct(requests=1)
        served_by = response.model_name or model.name
        usages.append((served_by, turn_usage))
        finish, tokens = response.finish_reason, response.token_trace
        messages.append(_message("assistant", list(response.parts)))
        calls = response.tool_calls

        if not calls:
            text = response.text
            if cfg.output is not None:
                ok, value, problem = cfg.output.validate(text)
                if not ok:
                    output_failures += 1
                    if output_failures > cfg.output.retries:
                        raise OutputValidationError(
                            problem, _result(cfg, None, usages, turn, finish)
                        )
                    messages.append(Message.user(cfg.output.retry_prompt(problem)))
                    yield TurnFinished(
                        cfg.run_id, turn, served_by, tier, turn_usage, 0, finish, tokens
                    )
                    continue
            else:
                value = text
            yield TurnFinished(cfg.run_id, turn, served_by, tier, turn_usage, 0, finish, tokens)
            result = _result(cfg, value, usages, turn, finish)
            yield RunFinished(cfg.run_id, value, turn, result.usage, result)
            return

        if cfg.reset_tool_choice and settings.tool_choice not in (None, "auto", "none"):
            # Forced once and obeyed: let the model answer from here on.
            settings = settings.model_copy(update={"tool_choice": "auto"})
        for call in calls:
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
            tool_result, images, shown, events = _route_outcome(
                cfg, profile, budget, call, outcome, turn, attached
            )
            for event in events:
                yield event
            yield ToolCallFinished(
                cfg.run_id, turn, call.id, call.name, duration, outcome.is_error, outcome.text[:200]
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
        yield TurnFinished(
            cfg.run_id, turn, served_by, tier, turn_usage, len(calls), finish, tokens
        )
        if guard is not None and (why := guard.stuck) is not None:
            raise LoopDetected(f"the run was stopped: {why}", _result(cfg, None, usages, turn))

    raise MaxTurnsExceeded(
        f"the run used all {cfg.max_turns} turns without a final answer",
        _result(cfg, None, usages, cfg.max_turns),
    )


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


def _route_outcome(
    cfg: RunConfig,
    profile: ModelProfile,
    budget: _ImageBudget,
    call: ToolCallPart,
    outcome: ToolOutcome,
    turn: int,
    attached_before: int,
) -> tuple[ToolResultPart, list[ImagePart], list[TextPart | ImagePart], list[Event]]:
    """The tool result for one call, the images kept in context, what goes in the
    trailing user message (for models that cannot take images in tool results),
    and the ImageProduced events. ``attached_before`` counts images earlier calls of
    this turn already put in the trailing message."""
    parts: list[TextPart | ImagePart] = []
    images: list[ImagePart] = []
    trailing: list[TextPart | ImagePart] = []
    events: list[Event] = []
    for part in outcome.parts:
        if not isinstance(part, ImagePart):
            text = _truncate(part.text, cfg.max_tool_output_chars, cfg.artifacts, call.name)
            # a TextPart is immutable: an untouched one is shared, not copied
            parts.append(part if text is part.text and type(part) is TextPart else _text_part(text))
            continue
        path = budget.saved_path(part, f"{call.name}.png")
        events.append(ImageProduced(cfg.run_id, turn, call.id, call.name, path, part.media_type))
        if not profile.image_input:
            parts.append(TextPart(text=f"[image saved at {path}; this model cannot view images]"))
            continue
        images.append(part)
        if profile.images_in_tool_results:
            parts.append(part)
            continue
        if not trailing:  # first image of this call: say where the images come from
            trailing.append(TextPart(text=f"Image(s) from tool call {call.name} (id {call.id}):"))
        trailing.append(part)
        n = attached_before + len(images)
        parts.append(TextPart(text=f"[image {n} is attached in the next user message]"))
    tool_result = _trusted(
        ToolResultPart,
        {
            "kind": "tool_result",
            "call_id": call.id,
            "name": call.name,
            "parts": parts,
            "is_error": outcome.is_error,
        },
        {"call_id", "name", "parts", "is_error"},
    )
    return tool_result, images, trailing, events


async def _run_calls(
    cfg: RunConfig, calls: list[ToolCallPart], turn: int
) -> list[tuple[ToolOutcome, float]]:
    if len(calls) == 1:  # the common turn: no bookkeeping for order or concurrency
        start = time.perf_counter()
        outcome = await _call(cfg, calls[0], turn)
        return [(outcome, time.perf_counter() - start)]
    results: list[tuple[ToolOutcome, float] | None] = [None] * len(calls)

    async def one(i: int, call: ToolCallPart) -> None:
        start = time.perf_counter()
        results[i] = (await _call(cfg, call, turn), time.perf_counter() - start)

    concurrent = [
        (i, c)
        for i, c in enumerate(calls)
        if not (c.name in cfg.tools and cfg.tools[c.name].sequential)
    ]
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
    for i, c in enumerate(calls):
        if results[i] is None:  # sequential tools, one at a time, in order
            await one(i, c)
    return [r for r in results if r is not None]


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
    return await tool.call(call.arguments, ctx)
