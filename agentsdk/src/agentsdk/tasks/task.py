"""What a task is: a prompt, the toolkits it needs, a rubric of checks on the world
the tools changed, and a reference solution that must pass them."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from ..messages import ToolCallPart
from ..models import ModelSettings
from ..plugins import load_toolkit_class

if TYPE_CHECKING:  # pragma: no cover
    from ..tools import Toolkit
    from .world import World

__all__ = [
    "Check",
    "CheckResult",
    "CheckValue",
    "Step",
    "Suite",
    "Task",
    "ToolkitSpec",
    "Verdict",
    "call",
]


class CheckResult(BaseModel):
    """One check of a rubric, as it came out."""

    name: str
    weight: float = 1.0
    score: float
    """0..1; 1 is a full pass."""
    passed: bool
    reason: str = ""


class Verdict(BaseModel):
    """What the verifier decided about one run: a score in [0, 1], pass or fail, and why."""

    score: float
    passed: bool
    checks: list[CheckResult] = Field(default_factory=list)

    @property
    def reasons(self) -> list[str]:
        """One human-readable line per check: ``"pass box exists: ..."``."""
        return [
            f"{'pass' if c.passed else 'FAIL'} {c.name}" + (f": {c.reason}" if c.reason else "")
            for c in self.checks
        ]

    @property
    def failed(self) -> list[CheckResult]:
        """The checks that did not pass."""
        return [c for c in self.checks if not c.passed]


CheckValue = bool | float | tuple[bool | float, str] | CheckResult
"""What a check function returns: pass/fail, a score in [0, 1], either with a reason,
or a whole ``CheckResult``."""


@dataclass(frozen=True)
class Check:
    """One weighted check of a task's rubric. ``fn(world)`` (sync or async) inspects
    the world the run left behind: the scene, files, numbers recomputed from the data."""

    name: str
    fn: Callable[[World], CheckValue | Awaitable[CheckValue]]
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not self.weight > 0:
            raise ValueError(f"check {self.name!r}: weight must be positive, not {self.weight}")


@dataclass(frozen=True)
class ToolkitSpec:
    """A toolkit a task needs: an installed toolkit's entry-point name with constructor
    settings, or a ``factory`` for toolkits that are not installed as plugins; ``tools``
    narrows it to the named tools. Runs that ask for equal specs share one instance
    (one browser, one worker), reset between tasks."""

    name: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    tools: tuple[str, ...] | None = None
    factory: Callable[..., Toolkit] | None = None

    def key(self) -> str:
        """Runs with the same key may share one toolkit instance."""
        factory = "" if self.factory is None else f"{self.factory!r}"
        settings = json.dumps(dict(self.settings), sort_keys=True, default=repr)
        return f"{self.name}|{factory}|{settings}"

    def build(self) -> Toolkit:
        """A new, unstarted toolkit."""
        make = self.factory or load_toolkit_class(self.name)
        return make(**dict(self.settings))


Step = (
    ToolCallPart
    | list[ToolCallPart]
    | str
    | Callable[["World"], "ToolCallPart | list[ToolCallPart] | str"]
    | Callable[["World"], Awaitable["ToolCallPart | list[ToolCallPart] | str"]]
)
"""One turn of a reference solution: a tool call, several (one turn), the final answer,
or a function of the world (``world.messages`` is the transcript so far) returning one."""


def call(name: str, /, **arguments: Any) -> ToolCallPart:
    """A tool call for a reference solution: ``call("render", views=["front"])``."""
    return ToolCallPart(name=name, arguments=arguments)


@dataclass
class Task:
    """A verifiable task.

    Args:
        id: ``"<suite>/<name>"``, unique in its suite.
        prompt: What the agent is asked to do.
        toolkits: Toolkit names or ``ToolkitSpec``s the agent gets.
        checks: The rubric; the score is the weighted mean of the checks' scores.
        reference: A scripted solution that must pass the checks.
        setup: Prepares the world before the run (a starting scene, files), sync or async.
        instructions: The system prompt; the suite's when ``None``.
        max_turns: Model requests allowed.
        timeout: Seconds allowed for the whole run.
        pass_score: The run passes when its score reaches this.
        tags: Free labels (``one-tool``, ``visual``, ``multi-step`` ...).
        description: What the task checks, for reports and docs.
        settings: Model settings for this task (e.g. a larger ``max_tokens``).
    """

    id: str
    prompt: str
    toolkits: Sequence[str | ToolkitSpec]
    checks: Sequence[Check]
    reference: Sequence[Step] = ()
    setup: Callable[[World], Awaitable[None] | None] | None = None
    instructions: str | None = None
    max_turns: int = 12
    timeout: float = 300.0
    pass_score: float = 1.0
    tags: tuple[str, ...] = ()
    description: str = ""
    settings: ModelSettings | None = None

    def __post_init__(self) -> None:
        if not self.checks:
            raise ValueError(f"task {self.id!r} has no checks: a task needs a verifier")
        if not 0 < self.pass_score <= 1:
            raise ValueError(f"task {self.id!r}: pass_score must be in (0, 1]")
        self.toolkits = [ToolkitSpec(t) if isinstance(t, str) else t for t in self.toolkits]
        names = [c.name for c in self.checks]
        if len(set(names)) != len(names):
            raise ValueError(f"task {self.id!r} has two checks with the same name")

    @property
    def specs(self) -> list[ToolkitSpec]:
        """The toolkits as specs."""
        return [t if isinstance(t, ToolkitSpec) else ToolkitSpec(t) for t in self.toolkits]


@dataclass
class Suite:
    """A named set of tasks, shipped by a toolkit through the ``agentsdk.suites`` entry
    point (a ``Suite`` or a function returning one)."""

    name: str
    tasks: list[Task]
    description: str = ""
    instructions: str | None = None
    """The default system prompt of its tasks."""

    def __post_init__(self) -> None:
        ids = [t.id for t in self.tasks]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"suite {self.name!r} has duplicate task ids: {duplicates}")

    def __iter__(self) -> Iterator[Task]:
        return iter(self.tasks)

    def __len__(self) -> int:
        return len(self.tasks)

    def get(self, task_id: str) -> Task:
        """The task with this id (or with this name after the ``suite/`` prefix)."""
        for task in self.tasks:
            if task.id == task_id or task.id == f"{self.name}/{task_id}":
                return task
        known = ", ".join(t.id for t in self.tasks)
        raise KeyError(f"suite {self.name!r} has no task {task_id!r} (tasks: {known})")

    def select(self, ids: Sequence[str] = (), tags: Sequence[str] = ()) -> Suite:
        """This suite narrowed to some task ids and/or tags (all tasks when both are empty)."""
        tasks = [self.get(i) for i in ids] if ids else list(self.tasks)
        if tags:
            tasks = [t for t in tasks if set(tags) & set(t.tags)]
        return Suite(self.name, tasks, self.description, self.instructions)

    def instructions_for(self, task: Task) -> str | None:
        """The system prompt ``task`` runs with."""
        return task.instructions if task.instructions is not None else self.instructions
