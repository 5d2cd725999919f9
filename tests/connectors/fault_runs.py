"""Drive many real ``Agent`` runs against the fault server and hold them to the rules:

* every run ends with the right answer or a documented error that the faults it met explain;
* no run succeeds with an empty or a wrong answer;
* no run outlives its timeout;
* nothing leaks: no connection left open, no task left running, no error nobody saw.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from agentsdk.events import RunFailed, RunFinished
from fault_server import FaultServer, Injected
from fault_shapes import TRANSIENT

from agentsdk import (
    Agent,
    ContentFilteredError,
    EmptyResponseError,
    MalformedResponseError,
    ModelAuthError,
    ModelError,
    ResponseTruncatedError,
    RunTimeout,
    ToolRetriesExceeded,
    tool,
)

__all__ = [
    "LATE",
    "Outcome",
    "add",
    "check_rules",
    "drive",
    "loop_errors",
    "new_tasks",
    "prompt",
    "running_tasks",
]


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First number.
        b: Second number.
    """
    return a + b


def prompt(run: str, a: int, b: int) -> str:
    """The task the fault server scripts: it answers ``The sum is <a+b>.``"""
    return f"run {run}: add {a} and {b}"


@dataclass
class Outcome:
    """How one run ended."""

    run: str
    a: int
    b: int
    stream: bool
    seconds: float
    output: Any = None
    error: BaseException | None = None
    events: list[str] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return "ok" if self.error is None else type(self.error).__name__


async def _one(agent: Agent, outcome: Outcome) -> None:
    started = time.monotonic()
    text = prompt(outcome.run, outcome.a, outcome.b)
    try:
        if outcome.stream:
            async for event in agent.stream(text):
                outcome.events.append(type(event).__name__)
                if isinstance(event, RunFinished):
                    outcome.output = event.output
        else:
            outcome.output = (await agent.run(text)).output
    except Exception as exc:  # every failure is recorded and judged by check_rules
        outcome.error = exc
    outcome.seconds = time.monotonic() - started


async def drive(
    make_agent: Callable[[], Agent],
    *,
    runs: int,
    stream: bool,
    concurrency: int,
    tag: str = "",
) -> list[Outcome]:
    """``runs`` runs, ``concurrency`` at a time, each with its own numbers to add."""
    outcomes = [
        Outcome(f"{tag}{'s' if stream else 'w'}{i}", 3 * i + 1, 1000 - 7 * i, stream, 0.0)
        for i in range(runs)
    ]
    limit = anyio.Semaphore(concurrency)
    agent = make_agent()

    async def guarded(outcome: Outcome) -> None:
        async with limit:
            await _one(agent, outcome)

    async with anyio.create_task_group() as group:
        for outcome in outcomes:
            group.start_soon(guarded, outcome)
    return outcomes


LATE = frozenset({"cut_stream_late", "error_event_late"})
"""Faults that break a stream after some deltas (a whole answer is cut or answers 5xx)."""


def _retried(met: Injected) -> bool:
    """Whether a connector retries what this request met (were attempts left)."""
    if met.fault in TRANSIENT:
        return True
    # A late break is retried unless the stream had shown text: a whole answer cannot fail
    # "late", and a stream of only tool-call deltas had shown the user nothing.
    return met.fault in LATE and (not met.stream or met.calls)


def _explains(error: BaseException, met: list[Injected], stream: bool, attempts: int) -> bool:
    """Whether what a run met (request by request, in order) explains the error it ended with."""
    last = met[-1].fault if met else "none"
    faults = [m.fault for m in met]
    if isinstance(error, ModelAuthError):
        return last == "401"
    if isinstance(error, ContentFilteredError):
        return last in ("content_filter", "refusal")
    if isinstance(error, ResponseTruncatedError):
        return last in ("length", "max_tokens")
    if isinstance(error, ToolRetriesExceeded):
        return faults.count("bad_args") >= 3
    if isinstance(error, RunTimeout):
        return "stall" in faults or "429" in faults
    if not isinstance(error, ModelError):
        return False
    if "gave up after" in str(error):  # the retry policy ran out: the last attempts all failed
        tail = met[-attempts:]
        if len(tail) < attempts or not all(_retried(m) for m in tail):
            return False
        if isinstance(error, EmptyResponseError):
            return last == "empty"
        if isinstance(error, MalformedResponseError):
            return last in ("bad_json", "malformed_shape")
        return True
    # raised at once: a stream that failed after showing text (nothing is replayed)
    return stream and last in LATE and not met[-1].calls


def check_rules(
    outcomes: list[Outcome], server: FaultServer, *, timeout: float, attempts: int
) -> Counter[str]:
    """Assert the rules for every run; returns how many runs ended each way."""
    problems: list[str] = []
    for o in outcomes:
        met = server.met_by(o.run)
        faults = [m.fault for m in met]
        where = f"run {o.run} ({'streamed' if o.stream else 'whole'}, faults {faults})"
        if o.seconds > timeout + 2.0:
            problems.append(f"{where} took {o.seconds:.1f} s, past its {timeout} s timeout")
        if o.error is None:
            if o.output != f"The sum is {o.a + o.b}.":
                problems.append(f"{where} succeeded with a wrong answer: {o.output!r}")
            if o.stream and o.events[-1:] != ["RunFinished"]:
                problems.append(f"{where} streamed {o.events[-1:]} last, not RunFinished")
            continue
        if isinstance(o.error, ValueError | AttributeError | KeyError | IndexError | TypeError):
            problems.append(f"{where} raised a bare {o.kind}: {o.error}")
        elif not _explains(o.error, met, o.stream, attempts):
            problems.append(
                f"{where} ended with {o.kind} that its faults do not explain: {o.error}"
            )
        if o.stream and o.events[-1:] != [RunFailed.__name__]:
            problems.append(f"{where} failed without a RunFailed event last: {o.events[-3:]}")
        if not str(o.error).strip():
            problems.append(f"{where} ended with an empty {o.kind} message")
    assert not problems, "\n".join(problems[:20])
    return Counter(o.kind for o in outcomes)


def loop_errors() -> tuple[list[dict[str, Any]], Callable[[], None]]:
    """Collect what the event loop reports (unretrieved task errors, unclosed sessions,
    cancel scopes left in the wrong task); call the second value to stop collecting."""
    loop = asyncio.get_running_loop()
    seen: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: seen.append(context))
    return seen, lambda: loop.set_exception_handler(previous)


def running_tasks() -> set[asyncio.Task[Any]]:
    """The unfinished tasks of this loop."""
    return {t for t in asyncio.all_tasks() if not t.done()}


def new_tasks(before: set[asyncio.Task[Any]]) -> list[asyncio.Task[Any]]:
    """Unfinished tasks that were not running ``before`` (the test's own are)."""
    return sorted(running_tasks() - before, key=lambda t: t.get_name())
