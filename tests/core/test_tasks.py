"""agentsdk.tasks: tasks whose verifiers read the world a real toolkit keeps, reference
solutions, shared toolkits reset between tasks, and the quality check catching
verifiers that can be gamed."""

from __future__ import annotations

from pathlib import Path

import pytest
from agentsdk.tasks import (
    Check,
    Suite,
    Task,
    ToolkitPool,
    ToolkitSpec,
    World,
    call,
    check_suite,
    check_task,
    run_task,
)
from agentsdk.testing import ScriptedModel

from agentsdk import ToolCallPart, ToolContext, Toolkit, tool

pytestmark = pytest.mark.anyio


class Shelf(Toolkit):
    """A tiny world: named jars holding counts, and a file the agent may write."""

    name = "shelf"
    starts = 0
    resets = 0

    def __init__(self) -> None:
        super().__init__()
        self.jars: dict[str, int] = {}

    async def start(self) -> None:
        Shelf.starts += 1

    async def reset(self) -> None:
        Shelf.resets += 1
        self.jars.clear()

    @tool
    def add(self, jar: str, count: int) -> str:
        """Put marbles in a jar.

        Args:
            jar: The jar's name.
            count: How many marbles.
        """
        self.jars[jar] = self.jars.get(jar, 0) + count
        return f"{jar} now holds {self.jars[jar]}"

    @tool
    def label(self, text: str, ctx: ToolContext) -> str:
        """Write a label file in the run folder.

        Args:
            text: The label.
        """
        ctx.artifacts.dir.mkdir(parents=True, exist_ok=True)
        (ctx.artifacts.dir / "label.txt").write_text(text)
        return "labelled"


def shelf(world: World) -> Shelf:
    toolkit = world.toolkit("shelf")
    assert isinstance(toolkit, Shelf)
    return toolkit


def _jar_task(**kwargs: object) -> Task:
    defaults: dict[str, object] = dict(
        id="shelf/red-jar",
        prompt="Put 3 marbles in the red jar and label the shelf 'red'.",
        toolkits=[ToolkitSpec("shelf", factory=Shelf)],
        checks=[
            Check("red jar holds 3", lambda w: (shelf(w).jars.get("red") == 3, str(shelf(w).jars))),
            Check(
                "label file says red",
                lambda w: (
                    (w.workdir / "label.txt").is_file()
                    and (w.workdir / "label.txt").read_text() == "red"
                ),
                weight=0.5,
            ),
        ],
        reference=[call("add", jar="red", count=3), call("label", text="red"), "Done: 3 in red."],
    )
    defaults.update(kwargs)
    return Task(**defaults)  # type: ignore[arg-type]


async def test_the_reference_solution_passes_on_the_world_it_built(tmp_path: Path) -> None:
    rollout = await run_task(_jar_task(), "reference", workdir=tmp_path)
    assert rollout.status == "passed" and rollout.verdict is not None
    assert rollout.verdict.score == 1.0
    assert rollout.tool_calls == ["add", "label"]
    assert (Path(rollout.workdir) / "label.txt").read_text() == "red"
    assert rollout.verdict.reasons[0].startswith("pass red jar holds 3: {'red': 3}")


async def test_a_partial_world_scores_by_weight_and_fails(tmp_path: Path) -> None:
    model = ScriptedModel([ToolCallPart(name="add", arguments={"jar": "red", "count": 3}), "ok"])
    rollout = await run_task(_jar_task(), model, workdir=tmp_path)
    assert rollout.status == "failed" and rollout.verdict is not None
    assert rollout.verdict.score == pytest.approx(1 / 1.5)
    assert [c.name for c in rollout.verdict.failed] == ["label file says red"]


async def test_a_run_that_cannot_finish_is_an_error_and_still_verified(tmp_path: Path) -> None:
    looping = ScriptedModel([ToolCallPart(name="add", arguments={"jar": "blue", "count": 1})] * 3)
    rollout = await run_task(_jar_task(max_turns=3), looping, workdir=tmp_path)
    assert rollout.status == "error" and rollout.error is not None
    assert rollout.error.startswith("MaxTurnsExceeded")
    assert rollout.verdict is not None and not rollout.verdict.passed


async def test_broken_setup_and_broken_verifier_are_the_tasks_fault(tmp_path: Path) -> None:
    def bad_setup(world: World) -> None:
        raise OSError("the starting scene is missing")

    rollout = await run_task(_jar_task(setup=bad_setup), "reference", workdir=tmp_path)
    assert rollout.status == "broken" and "the starting scene is missing" in (rollout.broken or "")

    def raises(world: World) -> bool:
        return 1 / 0 > 0

    task = _jar_task(checks=[Check("divides", raises)])
    rollout = await run_task(task, "reference", workdir=tmp_path)
    assert rollout.status == "broken"
    assert "ZeroDivisionError" in (rollout.broken or "") and "Traceback" in (rollout.broken or "")

    task = _jar_task(checks=[Check("returns junk", lambda w: "yes")])  # type: ignore[arg-type,return-value]
    rollout = await run_task(task, "reference", workdir=tmp_path)
    assert rollout.status == "broken" and "return a bool" in (rollout.broken or "")

    short = _jar_task(reference=[call("add", jar="red", count=3)])
    rollout = await run_task(short, "reference", workdir=tmp_path)
    assert rollout.status == "broken" and "reference solution" in (rollout.broken or "")


async def test_a_pool_starts_a_toolkit_once_and_resets_it_between_tasks(tmp_path: Path) -> None:
    Shelf.starts = Shelf.resets = 0
    task = _jar_task()
    async with ToolkitPool() as pool:
        first = await run_task(task, "reference", pool=pool, workdir=tmp_path)
        second = await run_task(task, "reference", pool=pool, workdir=tmp_path, sample=1)
    assert first.passed and second.passed  # 3, not 6: the second run began on an empty shelf
    assert Shelf.starts == 1 and Shelf.resets == 1


async def test_reference_steps_can_read_what_the_tools_said(tmp_path: Path) -> None:
    def answer(world: World) -> str:
        said = world.results_of("add")[-1].text
        return f"The tool said: {said}"

    task = _jar_task(
        reference=[call("add", jar="red", count=3), call("label", text="red"), answer],
        checks=[Check("answer quotes the tool", lambda w: "red now holds 3" in w.answer)],
    )
    rollout = await run_task(task, "reference", workdir=tmp_path)
    assert rollout.passed and rollout.output == "The tool said: red now holds 3"


async def test_the_quality_check_passes_a_sound_task(tmp_path: Path) -> None:
    quality = await check_task(_jar_task(), workdir=tmp_path)
    assert quality.ok, quality.problems
    assert quality.solvable and quality.deterministic
    assert all(quality.rejects.values()) and len(quality.rejects) == 6


async def test_the_quality_check_catches_verifiers_that_can_be_gamed(tmp_path: Path) -> None:
    words = Check("answer mentions 3", lambda w: "3" in w.answer)
    quality = await check_task(_jar_task(checks=[words]), workdir=tmp_path)
    assert not quality.ok
    assert quality.rejects["words-only"] is False and quality.rejects["empty"] is True
    assert any("words-only" in p for p in quality.problems)

    claims = Check("tool said so", lambda w: "red now holds 3" in w.tool_texts)
    quality = await check_task(_jar_task(checks=[claims]), workdir=tmp_path)
    assert quality.rejects["injected-tool"] is False and quality.rejects["words-only"] is True

    flips: list[int] = []

    def unstable(world: World) -> bool:
        flips.append(1)
        return shelf(world).jars.get("red") == 3 and len(flips) % 2 == 1

    quality = await check_task(_jar_task(checks=[Check("unstable", unstable)]), workdir=tmp_path)
    assert not quality.deterministic
    assert any("twice" in p for p in quality.problems)


async def test_check_suite_reports_each_task(tmp_path: Path) -> None:
    suite = Suite(
        "shelf",
        [
            _jar_task(),
            _jar_task(id="shelf/lazy", checks=[Check("said done", lambda w: bool(w.answer))]),
        ],
        instructions="Use the tools.",
    )
    report = await check_suite(suite, workdir=tmp_path)
    assert [t.ok for t in report.tasks] == [True, False]
    text = report.to_text()
    assert text.startswith("suite shelf: 1/2 tasks sound") and "FAIL shelf/lazy" in text
    with pytest.raises(ValueError, match="duplicate task ids"):
        Suite("x", [_jar_task(), _jar_task()])
    with pytest.raises(ValueError, match="no checks"):
        _jar_task(checks=[])
