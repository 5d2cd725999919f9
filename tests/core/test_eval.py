"""agentsdk eval: tasks x samples with concurrency, durable results, resume after a
kill, summaries and reports."""

from __future__ import annotations

import dataclasses
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
from typing import Any

import pytest
from agentsdk.models import ModelRequest
from agentsdk.tasks import Check, Suite, Task, ToolkitSpec, call, run_task
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


async def test_a_model_that_raises_ends_its_rollout_not_the_eval(tmp_path: Path) -> None:
    def flaky(request: ModelRequest) -> ToolCallPart | str:
        if "3 marks" in request.messages[1].text:
            raise KeyError("choices")  # e.g. a connector reading a reply it did not expect
        made = sum(1 for m in request.messages if m.role == "tool")
        wanted = int(request.messages[1].text.split()[2])
        return ToolCallPart(name="mark", arguments={}) if made < wanted else "done"

    summary = await evaluate(suite(), FunctionModel(flaky, name="flaky"), out=tmp_path / "k")
    statuses = {t.task_id: t.statuses for t in summary.tasks}
    assert statuses["tally/marks-3"] == {"error": 1}
    assert [statuses[f"tally/marks-{n}"] for n in (1, 2, 4)] == [{"passed": 1}] * 3
    (crashed,) = [r for r in EvalResults(tmp_path / "k").load() if r.status == "error"]
    assert crashed.error == "KeyError: 'choices'" and crashed.verdict is not None


async def test_an_existing_results_folder_needs_resume(tmp_path: Path) -> None:
    await evaluate(suite(tasks=1), "reference", out=tmp_path / "x")
    with pytest.raises(FileExistsError, match="--resume"):
        await evaluate(suite(tasks=1), "reference", out=tmp_path / "x")


@pytest.mark.parametrize("concurrency", [1, 2])
def test_killed_eval_resumes_without_losing_or_repeating_rollouts(
    tmp_path: Path, concurrency: int
) -> None:
    out, log = tmp_path / "killed", tmp_path / "calls.log"
    env = {**os.environ, "TALLY_LOG": str(log)}
    script = [
        sys.executable,
        str(Path(__file__).parent / "eval_fixture.py"),
        str(out),
        "--concurrency",
        str(concurrency),
    ]
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


async def test_a_line_cut_short_by_a_kill_loses_nothing_on_resume(tmp_path: Path) -> None:
    out = tmp_path / "cut"
    await evaluate(suite(tasks=2), "reference", out=out)
    path = EvalResults(out).rollouts_path
    first, second = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(first + second[: len(second) // 2])  # killed in the middle of a write
    assert [r.task_id for r in EvalResults(out).load()] == ["tally/marks-1"]
    summary = await evaluate(suite(tasks=2), "reference", out=out, resume=True)
    assert summary.rollouts == 2 and summary.pass_rate == 1.0
    lines = path.read_bytes().splitlines()
    assert len(lines) == 3  # the fragment stays on its own line, ignored
    assert sorted(r.task_id for r in EvalResults(out).load()) == ["tally/marks-1", "tally/marks-2"]


async def test_broken_tasks_are_reported_with_tracebacks_the_model_never_sees(
    tmp_path: Path,
) -> None:
    secret = "verifier-internal-detail-4242"

    def broken_check(world: object) -> bool:
        raise ZeroDivisionError(f"{secret}: the expected value could not be computed")

    def broken_setup(world: object) -> None:
        raise FileNotFoundError(f"{secret}: starting scene missing")

    spec = ToolkitSpec("tally", factory=Tally)
    mark_once = dict(toolkits=[spec], reference=[call("mark"), "ok"])
    tasks = [
        Task(
            id="b/verifier",
            prompt="Mark once (a).",
            checks=[Check("raises", broken_check)],
            **mark_once,
        ),  # type: ignore[arg-type]
        Task(
            id="b/setup",
            prompt="Mark once (b).",
            setup=broken_setup,
            checks=[Check("one", lambda w: True)],
            **mark_once,
        ),  # type: ignore[arg-type]
        Task(
            id="b/sound",
            prompt="Mark once (c).",
            checks=[Check("one mark", lambda w: w.toolkit("tally").marks == 1)],
            **mark_once,
        ),  # type: ignore[arg-type,attr-defined]
    ]
    seen: list[str] = []

    def mark_then_answer(request: ModelRequest) -> ToolCallPart | str:
        seen.append(json.dumps([m.model_dump(mode="json") for m in request.messages]))
        done = any(m.role == "tool" for m in request.messages)
        return "Marked once." if done else ToolCallPart(name="mark", arguments={})

    model = FunctionModel(mark_then_answer, name="marker")
    summary = await evaluate(Suite("b", tasks), model, out=tmp_path / "b", k=2)

    assert summary.broken == ["b/setup", "b/verifier"]
    statuses = {t.task_id: t.statuses for t in summary.tasks}
    assert statuses == {
        "b/verifier": {"broken": 2},
        "b/setup": {"broken": 2},
        "b/sound": {"passed": 2},
    }
    assert summary.failure_reasons == {
        "broken: check 'raises' of task 'b/verifier' raised ZeroDivisionError: "
        f"{secret}: the expected value could not be computed": 2,
        f"broken: setup failed: FileNotFoundError: {secret}: starting scene missing": 2,
    }
    report = (tmp_path / "b" / "report.md").read_text()
    assert report.count("Traceback (most recent call last)") == 4
    assert "in broken_check\n    raise ZeroDivisionError" in report
    assert "in broken_setup" in report
    # The model ran the sound task and the verifier task (twice each), never the setup
    # task, and no request it was sent holds a word of what broke.
    assert len(seen) == 2 * 2 * 2
    assert not any("Mark once (b)." in text for text in seen)
    assert not any(secret in text or "Traceback" in text for text in seen)
    trajectories = (tmp_path / "b" / "trajectories").glob("*.json")
    assert not any(
        secret in json.dumps(json.loads(p.read_text())["messages"]) for p in trajectories
    )


@pytest.mark.parametrize(
    ("n", "c", "k"), [(4, 0, 1), (4, 1, 1), (4, 1, 2), (4, 2, 4), (5, 3, 2), (3, 3, 3)]
)
def test_pass_at_k_is_the_chance_that_some_draw_of_k_passes(n: int, c: int, k: int) -> None:
    outcomes = [True] * c + [False] * (n - c)
    draws = list(itertools.combinations(range(n), k))
    expected = sum(any(outcomes[i] for i in d) for d in draws) / len(draws)
    assert math.isclose(pass_at_k(n, c, k), expected)


def _eval_table(results: Path) -> tuple[dict[str, Any], str]:
    """benchmarks/eval_table.py run on one results folder: its suite row and its table."""
    out = results.parent / "table.json"
    script = Path(__file__).parents[2] / "benchmarks" / "eval_table.py"
    shown = subprocess.run(
        [sys.executable, str(script), str(results), "--out", str(out)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    (row,) = json.loads(out.read_text())["suites"]
    return row, shown.stdout


async def test_the_eval_table_sums_up_a_results_folder(tmp_path: Path) -> None:
    # benchmarks/eval_table.py reads what `agentsdk eval` wrote; a lazy model stops after 2 marks.
    def two_marks_then_stop(request: ModelRequest) -> ToolCallPart | str:
        made = sum(1 for m in request.messages if m.role == "tool")
        return ToolCallPart(name="mark", arguments={}) if made < 2 else "done"

    await evaluate(suite(), FunctionModel(two_marks_then_stop, name="lazy"), out=tmp_path / "e")
    row, shown = _eval_table(tmp_path / "e")
    passed = {t for t, r in row["tasks"].items() if r["status"] == "passed"}
    assert row["rollouts"] == len(suite().tasks) and row["passed"] == len(passed)
    assert passed == {"tally/marks-2"}  # exactly two marks, as the lazy model makes
    assert row["tool_calls"] == sum(len(r["tool_calls"]) for r in row["tasks"].values())
    assert row["refused_calls"] == 0 and f"| {row['passed']}/{row['rollouts']} " in shown
    seconds = sum(r["seconds"] for r in row["tasks"].values())  # every task's time, 1 solved
    assert row["s_per_solved"] == pytest.approx(seconds / len(passed), abs=0.1 * len(row["tasks"]))


async def test_the_eval_table_gives_pass_at_k_and_every_sample(tmp_path: Path) -> None:
    # Per task, this model's first rollout makes two marks and its second one, so with
    # k = 2 "make exactly 2 marks" passes in one sample of two: pass@2 100%, and so does
    # "make exactly 1 mark"; 3 and 4 marks never pass.
    seen: Counter[str] = Counter()

    def alternating(request: ModelRequest) -> ToolCallPart | str:
        made = sum(1 for m in request.messages if m.role == "tool")
        prompt = next(m.text for m in request.messages if m.role == "user")
        if made == 0:
            seen[prompt] += 1
        return ToolCallPart(name="mark", arguments={}) if made < 1 + seen[prompt] % 2 else "done"

    await evaluate(suite(), FunctionModel(alternating, name="alt"), out=tmp_path / "e", k=2)
    row, shown = _eval_table(tmp_path / "e")
    assert row["k"] == 2 and row["rollouts"] == 2 * len(row["tasks"])
    two = row["tasks"]["tally/marks-2"]
    assert (two["runs"], two["passed"], two["pass_at_k"]) == (2, 1, 1.0)
    assert sorted(s["status"] for s in two["samples"]) == ["failed", "passed"]
    assert sorted(len(s["tool_calls"]) for s in two["samples"]) == [1, 2]
    assert row["tasks"]["tally/marks-1"]["passed"] == 1 and row["tasks_passed_at_k"] == 2
    assert row["passed"] == 2 and row["pass_at_k"] == 0.5  # 2 of 4 tasks, each surely
    expected = sum(pass_at_k(t["runs"], t["passed"], 2) for t in row["tasks"].values())
    assert row["pass_at_k"] == pytest.approx(expected / len(row["tasks"]), abs=1e-3)
    assert row["tasks_passed_at_k"] == sum(t["passed"] > 0 for t in row["tasks"].values())
    assert f"pass@2 {100 * row['pass_at_k']:.0f}%" in shown


async def test_a_timed_out_rollout_keeps_the_calls_it_made(tmp_path: Path) -> None:
    # A run stopped by its timeout has no RunResult; its calls and results come from its
    # events, so the verdict, the rollout record and the trajectory still show the work.
    base = suite(delay=0.3).tasks[1]  # "make exactly 2 marks"
    task = dataclasses.replace(base, id="tally/slow", timeout=1.5)

    def keeps_marking(request: ModelRequest) -> ToolCallPart:
        return ToolCallPart(name="mark", arguments={})

    rollout = await run_task(task, FunctionModel(keeps_marking, name="busy"), workdir=tmp_path)
    assert rollout.error is not None and rollout.error.startswith("RunTimeout")
    made = len(rollout.tool_calls)
    assert made >= 2 and set(rollout.tool_calls) == {"mark"}  # ~1.5 s / 0.3 s per mark
    assert rollout.status == "error" and not rollout.verdict.passed  # more than 2 marks
