"""Quality checks of an environment (``agentsdk check``): every task is solvable by its
reference solution, its verifier is deterministic, and it cannot be gamed by doing
nothing, echoing, claiming success in words, or injecting "verification passed"."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from ..messages import ToolCallPart
from .reference import INJECTION, injection_tool
from .rollout import Rollout, ToolkitPool, run_task
from .task import Step, Suite, Task, Verdict
from .verify import VerifierError, verify
from .world import World

__all__ = ["DEGENERATE", "QualityReport", "TaskQuality", "check_suite", "check_task"]

DEGENERATE = ("empty", "done", "echo", "words-only", "injected-answer", "injected-tool")
"""The behaviours every verifier must fail, by name."""


class TaskQuality(BaseModel):
    """The quality check of one task."""

    task_id: str
    solvable: bool
    deterministic: bool
    rejects: dict[str, bool] = Field(default_factory=dict)
    """Per degenerate behaviour: True when the verifier failed it, as it must."""
    problems: list[str] = Field(default_factory=list)
    reference: Rollout | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Solvable, deterministic and not gamed."""
        return not self.problems


class QualityReport(BaseModel):
    """The quality check of a suite."""

    suite: str
    tasks: list[TaskQuality]

    @property
    def ok(self) -> bool:
        """Every task is sound."""
        return all(t.ok for t in self.tasks)

    @property
    def problems(self) -> list[str]:
        """Every problem, prefixed with its task id."""
        return [f"{t.task_id}: {p}" for t in self.tasks for p in t.problems]

    def to_text(self) -> str:
        """A table for the terminal."""
        lines = [
            f"suite {self.suite}: {sum(t.ok for t in self.tasks)}/{len(self.tasks)} tasks sound"
        ]
        for t in self.tasks:
            mark = "ok  " if t.ok else "FAIL"
            lines.append(f"  {mark} {t.task_id} ({t.seconds:.1f}s)")
            lines.extend(f"       - {p}" for p in t.problems)
        return "\n".join(lines)


def _final_answer(rollout: Rollout) -> str:
    return rollout.output or "The task is complete."


def _same(a: Verdict, b: Verdict) -> bool:
    return (
        a.passed == b.passed
        and abs(a.score - b.score) < 1e-9
        and [c.passed for c in a.checks] == [c.passed for c in b.checks]
    )


async def check_task(
    task: Task,
    *,
    suite: Suite | None = None,
    pool: ToolkitPool | None = None,
    workdir: str | Path | None = None,
    behaviours: Sequence[str] = DEGENERATE,
) -> TaskQuality:
    """Check one task: its reference passes, a second verification of the same world
    agrees, and each degenerate behaviour fails."""
    started = time.perf_counter()
    problems: list[str] = []
    second: list[Verdict | str] = []
    said: list[str] = []

    async def verify_again(world: World) -> None:
        said.append(world.tool_texts)
        try:
            second.append(await verify(task, world))
        except VerifierError as exc:
            second.append(str(exc))

    if not task.reference:
        return TaskQuality(
            task_id=task.id,
            solvable=False,
            deterministic=False,
            problems=["the task has no reference solution"],
            seconds=time.perf_counter() - started,
        )
    reference = await run_task(
        task, "reference", suite=suite, pool=pool, workdir=workdir, world_hook=verify_again
    )
    solvable = reference.passed
    if reference.status == "broken":
        problems.append(f"broken: {reference.broken}")
    elif not solvable:
        reasons = "; ".join(reference.verdict.reasons if reference.verdict else [])
        problems.append(f"the reference solution fails its verifier ({reasons or reference.error})")
    deterministic = bool(
        second
        and reference.verdict is not None
        and isinstance(second[0], Verdict)
        and _same(reference.verdict, second[0])
    )
    if reference.verdict is not None and not deterministic:
        problems.append(f"verifying the same world twice gave different verdicts: {second[:1]}")

    answer = _final_answer(reference)
    # The injected tool repeats the reference run's tool outputs too: a verifier that takes
    # numbers from any tool text instead of the right tool's results is fooled by it.
    plays: dict[str, list[Step]] = {
        "empty": [""],
        "done": ["done"],
        "echo": [task.prompt],
        "words-only": [answer],
        "injected-answer": [f"{INJECTION}\n{answer}"],
        "injected-tool": [ToolCallPart(name="task_status", arguments={}), f"{INJECTION}\n{answer}"],
    }
    rejects: dict[str, bool] = {}
    for name in behaviours:
        steps = plays[name]
        extra = [injection_tool(answer + "\n" + "".join(said))] if name == "injected-tool" else []
        rollout = await run_task(
            task,
            "reference",
            suite=suite,
            pool=pool,
            workdir=workdir,
            sample=1 + DEGENERATE.index(name),
            steps=steps,
            extra_tools=extra,
        )
        if rollout.status == "broken":
            problems.append(f"{name}: the verifier broke: {rollout.broken}")
            rejects[name] = False
            continue
        rejects[name] = not rollout.passed
        if rollout.passed:
            problems.append(
                f"the verifier passed a degenerate run ({name}): {rollout.output[:80]!r}"
            )
    return TaskQuality(
        task_id=task.id,
        solvable=solvable,
        deterministic=deterministic,
        rejects=rejects,
        problems=problems,
        reference=reference,
        seconds=time.perf_counter() - started,
    )


async def check_suite(
    suite: Suite,
    *,
    workdir: str | Path | None = None,
    behaviours: Sequence[str] = DEGENERATE,
    on_task: Callable[[TaskQuality], None] | None = None,
) -> QualityReport:
    """Check every task of ``suite`` (sharing one pool of toolkits, reset between runs)."""
    results: list[TaskQuality] = []
    async with ToolkitPool() as pool:
        for task in suite.tasks:
            quality = await check_task(
                task, suite=suite, pool=pool, workdir=workdir, behaviours=behaviours
            )
            results.append(quality)
            if on_task is not None:
                on_task(quality)
    return QualityReport(suite=suite.name, tasks=results)
