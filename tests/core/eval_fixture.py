"""A small suite for eval tests, importable by a subprocess: each tool call is logged
to a file so a test can tell which rollouts ran, and how many times."""

from __future__ import annotations

import os
import time
from pathlib import Path

from agentsdk.tasks import Check, Suite, Task, ToolkitSpec, World, call

from agentsdk import ToolContext, Toolkit, tool


class Tally(Toolkit):
    """Counts marks per run; ``mark`` logs each call to $TALLY_LOG and can be slow."""

    name = "tally"

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__()
        self.delay = delay
        self.marks = 0

    async def reset(self) -> None:
        self.marks = 0

    @tool
    def mark(self, ctx: ToolContext) -> str:
        """Make a mark."""
        log = os.environ.get("TALLY_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(f"{ctx.run_id}\n")
        crash = os.environ.get("TALLY_CRASH_ONCE")  # a file: the first call that makes it dies
        if crash and ctx.run_id.startswith("tally-marks-2") and not os.path.exists(crash):
            open(crash, "w").close()
            os._exit(1)
        time.sleep(self.delay)
        self.marks += 1
        return f"{self.marks} mark(s)"

    @tool
    def crash(self, ctx: ToolContext) -> str:
        """Crash the process this tool runs in (only inside a test's Ray worker)."""
        log = os.environ.get("TALLY_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(f"{ctx.run_id}\n")
        if os.environ.get("TALLY_CRASH_ALLOWED"):  # never the test process itself
            os._exit(1)
        return "not crashed: TALLY_CRASH_ALLOWED is not set"


def _tally(world: World) -> Tally:
    toolkit = world.toolkit("tally")
    assert isinstance(toolkit, Tally)
    return toolkit


def suite(delay: float = 0.0, tasks: int = 4) -> Suite:
    spec = ToolkitSpec("tally", settings={"delay": delay}, factory=Tally)
    return Suite(
        "tally",
        [
            Task(
                id=f"tally/marks-{n}",
                prompt=f"Make exactly {n} marks.",
                toolkits=[spec],
                checks=[Check(f"{n} marks", lambda w, n=n: _tally(w).marks == n)],
                reference=[*[call("mark") for _ in range(n)], f"Made {n} marks."],
            )
            for n in range(1, tasks + 1)
        ],
        instructions="Use the mark tool.",
    )


def crashing_suite() -> Suite:
    """One sound task and one whose tool kills every worker that runs it."""
    spec = ToolkitSpec("tally", factory=Tally)
    return Suite(
        "tally",
        [
            Task(
                id="tally/marks-1",
                prompt="Make exactly 1 mark.",
                toolkits=[spec],
                checks=[Check("1 marks", lambda w: _tally(w).marks == 1)],
                reference=[call("mark"), "Made 1 mark."],
            ),
            Task(
                id="tally/doomed",
                prompt="Crash.",
                toolkits=[spec],
                checks=[Check("never reached", lambda w: False)],
                reference=[call("crash"), "Crashed."],
            ),
        ],
        instructions="Use the tools.",
    )


if __name__ == "__main__":  # python eval_fixture.py OUT [--resume] [--concurrency N]
    import sys

    import anyio
    from agentsdk.tasks.runner import evaluate

    out = Path(sys.argv[1])
    at_once = (
        int(sys.argv[sys.argv.index("--concurrency") + 1]) if "--concurrency" in sys.argv else 1
    )
    summary = anyio.run(
        lambda: evaluate(
            suite(delay=0.4),
            "reference",
            out=out,
            k=2,
            concurrency=at_once,
            resume="--resume" in sys.argv,
        )
    )
    print(f"pass rate {summary.pass_rate}")
