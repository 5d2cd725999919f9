"""The threejs task suite passes its own quality check on real Chromium: every reference solution
passes, verdicts repeat, and doing nothing, echoing, claiming success or injecting "verification
passed" fails every task."""

from __future__ import annotations

import pytest
from agentsdk.plugins import load_suite
from agentsdk.tasks import ToolkitPool, check_suite, run_task
from agentsdk_threejs.tasks import suite

pytestmark = pytest.mark.anyio


def test_the_suite_is_registered_and_has_at_least_twelve_tasks() -> None:
    registered = load_suite("threejs")
    assert [t.id for t in registered] == [t.id for t in suite()]
    assert len(registered) >= 12
    assert {"one-tool", "visual", "multi-step"} <= {tag for t in registered for tag in t.tags}


async def test_check_suite_passes_for_every_task(tmp_path) -> None:  # type: ignore[no-untyped-def]
    report = await check_suite(suite(), workdir=tmp_path)
    assert report.ok, report.to_text()


async def test_visual_tasks_fail_when_the_correction_is_skipped(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The visual tasks need the correction the report asks for: rendering alone fails them."""
    tasks = suite()
    async with ToolkitPool() as pool:
        for task_id in (
            "threejs/frame-the-box",
            "threejs/see-the-ball",
            "threejs/find-the-lamp",
            "threejs/light-it",
        ):
            task = tasks.get(task_id)
            rollout = await run_task(
                task, "reference", pool=pool, workdir=tmp_path, steps=[task.reference[0], "Done."]
            )
            assert not rollout.passed, (task_id, rollout.verdict)
