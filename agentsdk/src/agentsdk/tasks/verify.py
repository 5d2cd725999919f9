"""Running a task's rubric on a world."""

from __future__ import annotations

import inspect
import math
import traceback

from .task import CheckResult, CheckValue, Task, Verdict
from .world import World

__all__ = ["VerifierError", "verify"]


class VerifierError(Exception):
    """A check raised or returned something that is not a verdict: the task is broken
    (this is never the model's fault and never shown to the model)."""

    def __init__(self, message: str, details: str):
        super().__init__(message)
        self.details = details


def _as_result(name: str, weight: float, value: object) -> CheckResult:
    reason = ""
    if isinstance(value, CheckResult):
        return value.model_copy(update={"name": name, "weight": weight})
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], str):
        value, reason = value
    if isinstance(value, bool):
        return CheckResult(
            name=name, weight=weight, score=float(value), passed=value, reason=reason
        )
    if isinstance(value, int | float) and math.isfinite(value) and 0 <= value <= 1:
        score = float(value)
        return CheckResult(name=name, weight=weight, score=score, passed=score >= 1, reason=reason)
    raise TypeError(
        f"check {name!r} returned {value!r}: return a bool, a score in [0, 1], "
        "either with a reason as a (value, 'reason') tuple, or a CheckResult"
    )


async def verify(task: Task, world: World) -> Verdict:
    """Run every check of ``task`` on ``world``.

    Raises:
        VerifierError: a check raised or returned something that is not a verdict.
    """
    results: list[CheckResult] = []
    for check in task.checks:
        try:
            value: CheckValue | object = check.fn(world)
            if inspect.isawaitable(value):
                value = await value
            results.append(_as_result(check.name, check.weight, value))
        except Exception as exc:
            raise VerifierError(
                f"check {check.name!r} of task {task.id!r} raised {type(exc).__name__}: {exc}",
                traceback.format_exc(),
            ) from exc
    total = sum(r.weight for r in results)
    score = sum(r.weight * r.score for r in results) / total if total else 0.0
    score = round(score, 12)  # weighted sums of exact passes should read as exactly 1
    return Verdict(score=score, passed=score >= task.pass_score, checks=results)
