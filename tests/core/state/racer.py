"""Resume one paused run from a separate process, in step with a rival process.

``python racer.py DB RUN_ID JOURNAL BARRIER_DIR NAME``: loads the run's state,
waits until every racer has loaded it (files in BARRIER_DIR), then resumes with the
waiting call approved. Prints ``WON <output>`` or ``LOST <ErrorType>: <message>``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio
from agentsdk.state import SQLiteStore, StateError, load_state
from agentsdk.testing import ScriptedModel

from agentsdk import Agent, ToolContext, tool

DB, RUN_ID, JOURNAL, BARRIER, NAME = sys.argv[1:6]


@tool(needs_approval=True, side_effects=True)
def transfer(cents: int, ctx: ToolContext) -> str:
    """Move money."""
    with open(JOURNAL, "a") as f:
        f.write(f"{NAME} {ctx.idempotency_key} {cents}\n")
    return f"moved {cents}"


async def main() -> None:
    store = SQLiteStore(DB)
    agent = Agent(ScriptedModel(["Moved it."]), tools=[transfer], store=store)
    state = await load_state(store, RUN_ID)
    barrier = Path(BARRIER)
    (barrier / NAME).touch()
    while len(list(barrier.iterdir())) < 2:
        time.sleep(0.01)
    try:
        result = await agent.resume(state, approvals={state.waiting[0].call_id: True})
    except StateError as exc:
        print(f"LOST {type(exc).__name__}: {exc}", flush=True)
        return
    print(f"WON {result.output}", flush=True)


anyio.run(main)
