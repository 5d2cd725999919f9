"""A 6-turn scripted agent run with two side-effecting tools, for the SIGKILL tests.

Run as a script: ``python crash_agent.py DB RUN_ID JOURNAL (run|resume) [STOP]``.
Every save prints ``SAVED <n> <kind>`` (``started``: the write-ahead record of a
side-effecting call about to run; ``step`` otherwise); with ``STOP`` = n the process
prints ``STOPPED <n>``
right after the n-th save and waits to be killed (``STOP`` = ``in-tool`` stops inside
the first side-effecting call, after it acted). At the end it prints ``RESULT <json>``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import ClassVar

import anyio
from agentsdk.state import SQLiteStore
from agentsdk.state.store import Checkpoint
from agentsdk.testing import FunctionModel

from agentsdk import Agent, ModelRequest, ToolCallPart, ToolContext, tool

DB, RUN_ID, JOURNAL, MODE = sys.argv[1:5]
STOP = sys.argv[5] if len(sys.argv) > 5 else ""


def step(request: ModelRequest) -> str | ToolCallPart | list[ToolCallPart]:
    """The answer depends only on the transcript, as a deterministic model's would."""
    turn = sum(m.role == "assistant" for m in request.messages) + 1
    script: dict[int, str | ToolCallPart | list[ToolCallPart]] = {
        1: ToolCallPart(id="t1", name="write_note", arguments={"text": "alpha"}),
        2: ToolCallPart(id="t2", name="add", arguments={"a": 2, "b": 3}),
        3: [
            ToolCallPart(id="t3a", name="write_note", arguments={"text": "beta"}),
            ToolCallPart(id="t3b", name="charge", arguments={"cents": 250}),
        ],
        4: ToolCallPart(id="t4", name="charge", arguments={"cents": 100}),
        5: ToolCallPart(id="t5", name="add", arguments={"a": 250, "b": 100}),
        6: "Charged 350 cents and wrote two notes.",
    }
    return script[turn]


def _journal(kind: str, ctx: ToolContext, what: str) -> None:
    with open(JOURNAL, "a") as f:
        f.write(json.dumps({"kind": kind, "key": ctx.idempotency_key, "what": what}) + "\n")
        f.flush()
    if STOP == "in-tool":
        print("STOPPED in-tool", flush=True)
        time.sleep(600)


@tool(side_effects=True)
def write_note(text: str, ctx: ToolContext) -> str:
    """Append a note to the journal."""
    _journal("note", ctx, text)
    return f"noted {text}"


@tool(side_effects=True, sequential=True)  # after the note in turn 3: one boundary order
async def charge(cents: int, ctx: ToolContext) -> str:
    """Charge a card."""
    _journal("charge", ctx, str(cents))
    return f"charged {cents}"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class CountingStore(SQLiteStore):
    """The real SQLite store, saying when each save is done (and maybe stopping there)."""

    saves = 0
    recorded: ClassVar[set[str]] = set()

    async def save(self, checkpoint: Checkpoint) -> None:
        await super().save(checkpoint)
        CountingStore.saves += 1
        pending = json.loads(checkpoint.head)["pending"] or {"calls": []}
        recorded = {c["call"]["id"] for c in pending["calls"] if c["started"]}
        started = bool(recorded - CountingStore.recorded)  # this save recorded a new start
        CountingStore.recorded = recorded
        print(f"SAVED {CountingStore.saves} {'started' if started else 'step'}", flush=True)
        if STOP == str(CountingStore.saves):
            print(f"STOPPED {CountingStore.saves}", flush=True)
            time.sleep(600)  # blocks the whole process right at the boundary


async def main() -> None:
    agent = Agent(
        FunctionModel(step),
        "Do the chores.",
        tools=[write_note, charge, add],
        store=CountingStore(Path(DB)),
        artifacts_dir=Path(DB).parent / "artifacts",
    )
    if MODE == "run":
        result = await agent.run("Write two notes and charge 250 then 100 cents.", run_id=RUN_ID)
    else:
        result = await agent.resume(RUN_ID)
    print(
        "RESULT "
        + json.dumps(
            {
                "output": result.output,
                "turns": result.turns,
                "usage": result.usage.model_dump(),
                "messages": [m.model_dump(mode="json") for m in result.messages],
            }
        ),
        flush=True,
    )


anyio.run(main)
