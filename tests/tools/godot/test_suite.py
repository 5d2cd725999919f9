"""The `godot` task suite passes the environment quality checks with real Godot 3: every
reference solution passes, verifying twice agrees, and degenerate or injected runs fail."""

from __future__ import annotations

import pytest
from agentsdk.plugins import load_suite
from agentsdk.tasks import DEGENERATE, check_suite


def test_the_suite_is_registered_and_big_enough() -> None:
    suite = load_suite("godot")
    assert suite.name == "godot" and len(suite) >= 8
    assert all(task.reference for task in suite)
    tags = {tag for task in suite for tag in task.tags}
    assert {"one-tool", "multi-step", "script", "visual", "fix"} <= tags


@pytest.mark.slow
@pytest.mark.anyio
async def test_check_suite_passes_with_real_godot(tmp_path) -> None:  # type: ignore[no-untyped-def]
    report = await check_suite(load_suite("godot"), workdir=tmp_path)
    assert report.ok, report.to_text()
    for task in report.tasks:
        assert task.solvable and task.deterministic
        assert task.rejects == dict.fromkeys(DEGENERATE, True), (task.task_id, task.rejects)
