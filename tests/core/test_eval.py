"""agentsdk eval: tasks x samples with concurrency, durable results, resume after a
kill, summaries and reports."""

from __future__ import annotations

import itertools
import json
import math
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from agentsdk.models import ModelRequest
from agentsdk.tasks import Check, Suite, Task, ToolkitSpec, call
from agentsdk.tasks.runner import EvalResults, evaluate
from agentsdk.tasks.summary import pass_at_k
from agentsdk.testing import FunctionModel

from agentsdk import ToolCallPart

sys.path.insert(0, str(Path(__file__).parent))
from eval_fixture import Tally, suite

pytestmark = pytest.mark.anyio


async def test_the_reference_model_passes_everything_with_records(tmp_path: Path) -> None:
    summary = await evaluate(suite(), "reference", out=tmp_path / "r", k=2, concurrency=2)
    assert summary.rollouts == 8 and summary.pass_rate == 1.0 and summary.pass_at_k == 1.0
    results = EvalResults(tmp_path / "r")
    lines = results.rollouts_path.read_text().splitlines()
    assert len(lines) == 8
    trajectory = json.loads((results.trajectories / "tally-marks-3.s1.json").read_text())
    assert trajectory["schema"] == "agentsdk.trajectory/1" and trajectory["reward"] == 1.0
    assert [t["tool_calls"] for t in trajectory["turns"]] == [1, 1, 1, 0]
    roles = [m["role"] for m in trajectory["messages"]]
    assert roles[:3] == ["system", "user", "assistant"] and roles.count("tool") == 3
    report = (tmp_path / "r" / "report.md").read_text()
    assert "| `tally/marks-4` | 2 | 100% | 100% |" in report
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["pass_rate"] == 1.0


async def test_a_model_that_stops_early_is_measured(tmp_path: Path) -> None:
    def two_marks_then_stop(request: ModelRequest) -> ToolCallPart | str:
        made = sum(1 for m in request.messages if m.role == "tool")
        return ToolCallPart(name="mark", arguments={}) if made < 2 else "done"

    model = FunctionModel(two_marks_then_stop, name="lazy")
    summary = await evaluate(suite(), model, out=tmp_path / "e", k=3, concurrency=3)
    by_task = {t.task_id: t for t in summary.tasks}
    assert by_task["tally/marks-2"].pass_rate == 1.0
    assert by_task["tally/marks-3"].pass_rate == 0.0
    assert summary.pass_rate == pytest.approx(3 / 12)
    assert summary.failure_reasons == {
        "failed check: 1 marks": 3,
        "failed check: 3 marks": 3,
        "failed check: 4 marks": 3,
    }
    text = summary.to_text()
    assert text.startswith("tally on lazy: 12 rollouts, pass rate 25%, pass@3 25%")


async def test_a_crashing_engine_fails_its_rollout_and_the_eval_goes_on(tmp_path: Path) -> None:
    class Flaky(Tally):
        resets = 0

        async def reset(self) -> None:
            Flaky.resets += 1
            if Flaky.resets == 1:
                raise ConnectionError("the engine process died")
            await super().reset()

    spec = ToolkitSpec("tally", factory=Flaky)
    tasks = [
        Task(
            id=f"flaky/{n}",
            prompt="Mark once.",
            toolkits=[spec],
            checks=[Check("one mark", lambda w: w.toolkit("tally").marks == 1)],  # type: ignore[attr-defined]
            reference=[call("mark"), "ok"],
        )
        for n in range(3)
    ]
    summary = await evaluate(Suite("flaky", tasks), "reference", out=tmp_path / "f")
    statuses = [t.statuses for t in summary.tasks]
    assert statuses == [{"passed": 1}, {"broken": 1}, {"passed": 1}]
    assert summary.broken == ["flaky/1"]
    rollout = next(r for r in EvalResults(tmp_path / "f").load() if r.task_id == "flaky/1")
    assert "the environment failed to start: ConnectionError: the engine process died" in (
        rollout.broken or ""
    )


async def test_an_existing_results_folder_needs_resume(tmp_path: Path) -> None:
    await evaluate(suite(tasks=1), "reference", out=tmp_path / "x")
    with pytest.raises(FileExistsError, match="--resume"):
        await evaluate(suite(tasks=1), "reference", out=tmp_path / "x")


def test_killed_eval_resumes_without_losing_or_repeating_rollouts(tmp_path: Path) -> None:
    out, log = tmp_path / "killed", tmp_path / "calls.log"
    env = {**os.environ, "TALLY_LOG": str(log)}
    script = [sys.executable, str(Path(__file__).parent / "eval_fixture.py"), str(out)]
    process = subprocess.Popen(script, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    rollouts = out / "rollouts.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if rollouts.is_file() and len(rollouts.read_text().splitlines()) >= 3:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    before = EvalResults(out).load()
    assert 3 <= len(before) < 8, "the eval should have been killed in the middle"
    finished = {f"{r.task_id.replace('/', '-')}.s{r.sample}" for r in before}

    completed = subprocess.run(
        [*script, "--resume"], env=env, capture_output=True, text=True, timeout=240
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    after = EvalResults(out).load()
    assert len(after) == 8 and all(r.passed for r in after)
    lines = [json.loads(line) for line in rollouts.read_text().splitlines() if line.strip()]
    assert Counter((r["task_id"], r["sample"]) for r in lines).most_common(1)[0][1] == 1
    calls = Counter(log.read_text().split())
    for run in finished:  # a finished rollout's tool calls happened once, before the kill
        n = int(run.split("-")[2].split(".")[0])
        assert calls[run] == n, (run, calls[run])


@pytest.mark.parametrize(
    ("n", "c", "k"), [(4, 0, 1), (4, 1, 1), (4, 1, 2), (4, 2, 4), (5, 3, 2), (3, 3, 3)]
)
def test_pass_at_k_is_the_chance_that_some_draw_of_k_passes(n: int, c: int, k: int) -> None:
    outcomes = [True] * c + [False] * (n - c)
    draws = list(itertools.combinations(range(n), k))
    expected = sum(any(outcomes[i] for i in d) for d in draws) / len(draws)
    assert math.isclose(pass_at_k(n, c, k), expected)
