"""The unity task suite (issue #13): solvable, deterministic, and not fooled by words.

Everything runs against the mono-hosted stub editor (the package's real bridge and handlers on
stub engines), one fresh project per run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from agentsdk.plugins import load_suite
from agentsdk.tasks import ToolkitPool, call, check_suite, run_task
from agentsdk_unity.tasks import suite

pytestmark = pytest.mark.anyio


async def test_check_suite_passes_for_the_whole_suite(tmp_path: Path) -> None:
    report = await check_suite(suite(), workdir=tmp_path)
    assert report.ok, report.to_text()
    assert len(report.tasks) >= 5
    for task in report.tasks:
        assert task.solvable and task.deterministic, task.task_id
        assert task.rejects and all(task.rejects.values()), (task.task_id, task.rejects)


def test_the_suite_is_registered_as_unity() -> None:
    loaded = load_suite("unity")
    assert loaded.name == "unity"
    assert [t.id for t in loaded.tasks] == [t.id for t in suite().tasks]
    assert all(t.reference for t in loaded.tasks), "every task has a reference solution"


async def test_a_near_miss_fails_with_the_reason(tmp_path: Path) -> None:
    """The right object in the wrong place, and a claim in words, fail on what the scene holds."""
    crate = next(t for t in suite().tasks if t.id == "unity/crate-at-position")
    async with ToolkitPool() as pool:
        wrong = await run_task(
            crate,
            "reference",
            pool=pool,
            workdir=tmp_path,
            steps=[
                call("create_gameobject", name="Crate", primitive="Sphere", position=[2, 0.5, 3]),
                "Crate is a cube at (2, 0.5, -3).",
            ],
        )
        assert wrong.verdict is not None and not wrong.verdict.passed
        failed = {c.name: c.reason for c in wrong.verdict.failed}
        assert set(failed) == {"Crate is a Cube", "Crate position"}
        assert "mesh 'Sphere'" in failed["Crate is a Cube"]
        assert "[2.0, 0.5, 3.0]" in failed["Crate position"]
        # The pool resets the world: the next run starts on an empty project again.
        right = await run_task(crate, "reference", pool=pool, workdir=tmp_path)
        assert right.verdict is not None and right.verdict.passed, right.verdict.reasons


async def test_a_script_that_does_not_compile_fails(tmp_path: Path) -> None:
    spinner = next(t for t in suite().tasks if t.id == "unity/spinner-script")
    broken = "using UnityEngine;\npublic class Spinner : MonoBehaviour\n{\n    public float speed = 90f;\n    void Update() { transform.Rotate(0f, speed * Time.deltaTime); }\n}\n"
    rollout = await run_task(
        spinner,
        "reference",
        workdir=tmp_path,
        steps=[call("write_script", path="Assets/Scripts/Spinner.cs", content=broken), "Done."],
    )
    assert rollout.verdict is not None and not rollout.verdict.passed
    reason = next(c.reason for c in rollout.verdict.failed if c.name.endswith("compiles"))
    assert "CS1501" in reason  # Rotate has no overload with 2 arguments, per the editor's compile


def test_the_default_tools_are_the_core_group_and_cover_the_suite() -> None:
    import json

    from agentsdk_unity import TOOL_GROUPS, UnityToolkit

    def size(kit: UnityToolkit) -> int:
        return sum(len(json.dumps(t.spec().model_dump())) for t in kit.tools())

    core, every = UnityToolkit(), UnityToolkit(groups="all")
    assert [t.name for t in core.tools()] == list(TOOL_GROUPS["core"])
    assert len(every.tools()) == sum(map(len, TOOL_GROUPS.values())) == 19
    assert size(core) < 0.75 * size(every)  # the schemas a small model reads every turn
    # Every call of every reference solution is a core tool: the suite needs no opt-in.
    used = {
        part.name
        for task in suite()
        for step in task.reference
        for part in (step if isinstance(step, list) else [step])
        if hasattr(part, "arguments")
    }
    assert used and used <= set(TOOL_GROUPS["core"]), used - set(TOOL_GROUPS["core"])
    kit = UnityToolkit(groups=["diagnostics", "core", "diagnostics"], prefix="u")
    assert kit.groups == ("diagnostics", "core")
    assert kit.tools()[0].name == "u_check_script"
    with pytest.raises(ValueError, match="unknown tool group 'look'; groups: core, scenes"):
        UnityToolkit(groups=["look"])
