"""`agentsdk demo`, the README's main job: the real embedded local model on the shipped
three.js and finance tasks, judged by their own verifiers; and what it says when a task
fails."""

from __future__ import annotations

import argparse
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from agentsdk.cli.demo import DEMO_TASKS, cmd_demo, run_demo
from agentsdk.testing import ScriptedModel
from agentsdk.tracing import read_trace


def _rollouts(out: Path) -> dict[str, dict[str, object]]:
    lines = (out / "rollouts.jsonl").read_text().splitlines()
    return {r["task_id"]: r for r in map(json.loads, lines)}


@pytest.mark.slow
def test_demo_on_the_default_local_model_reports_what_its_verifiers_found(
    tmp_path: Path,
) -> None:
    from agentsdk_openai.local import resident_engines, stop_resident_engines

    out, trace = tmp_path / "demo", tmp_path / "demo.jsonl"
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "agentsdk.cli",
                "demo",
                "--out",
                str(out),
                "--trace",
                str(trace),
            ],
            capture_output=True,
            text=True,
            timeout=1200,
        )
        # Both models stay loaded for the next command (--keep-alive's default, 300 s).
        kept = {(r["model"], r["keep_alive"]) for r in resident_engines()}
        assert {("qwen2.5-coder-1.5b", 300), ("qwen2.5-coder-0.5b", 300)} <= kept
    finally:
        stop_resident_engines()
    rollouts = _rollouts(out)
    assert list(rollouts) == list(DEMO_TASKS), done.stderr[-3000:]
    passed = [t for t, r in rollouts.items() if r["status"] == "passed"]
    # The exit status and the summary say exactly what the verifiers granted.
    assert done.returncode == (0 if len(passed) == len(DEMO_TASKS) else 1), done.stderr[-3000:]
    head = f"agentsdk demo on local:default: {len(passed)} of {len(DEMO_TASKS)} tasks passed in "
    assert done.stdout.startswith(head), done.stdout
    for task_id, r in rollouts.items():
        mark = "passed" if r["status"] == "passed" else f"FAILED ({r['status']}"
        assert f"  {task_id}: {mark}" in done.stdout
    # Live progress: the planning turn on the standard tier, tool calls with durations.
    assert "turn 1: asking local:qwen2.5-coder-1.5b, standard tier" in done.stderr
    assert re.search(r"<- add_object (ok|error) in \d+\.\d\ds", done.stderr), done.stderr[-3000:]
    # What the render showed reaches the progress lines (the box starts at x=3.2: cut off).
    scene = rollouts["threejs/place-and-frame"]
    if "add_object" in scene["tool_calls"]:  # type: ignore[operator]
        assert "sees: view camera:" in done.stderr
    # Saved files: a renders, the scene as GLB, a report with the image inline.
    runs = out / "runs" / "threejs-place-and-frame.s0"
    assert any(runs.glob("*.png")), sorted(runs.iterdir())
    assert (runs / "scene.glb").read_bytes()[:4] == b"glTF"
    report = (out / "report.md").read_text()
    assert all(t in report for t in DEMO_TASKS) and "](runs/threejs-place-and-frame.s0/" in report
    # The finance answer, when it passed, carries its figure and its source.
    if rollouts["finance/ibm-total-return"]["status"] == "passed":
        assert "64.8%" in done.stdout and "Sources: IBM" in done.stdout
    events = read_trace(trace)
    starts = [e for e in events if e["event"] == "ModelRequestStarted"]
    assert starts and starts[0]["tier"] == "standard"
    assert sum(e["event"] == "RunFinished" for e in events) == len(DEMO_TASKS)


def test_a_failed_task_is_said_plainly_and_the_demo_exits_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A model that answers without doing anything: the verifier must not pass it.
    model = ScriptedModel(["The IBM total return was 12%."], name="scripted:lazy")
    args = argparse.Namespace(
        list=False, task=["finance/ibm-total-return"], model=model, out=str(tmp_path), trace=None
    )
    assert cmd_demo(args) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith("agentsdk demo on scripted:lazy: 0 of 1 tasks passed")
    assert "finance/ibm-total-return: FAILED (failed, score 0." in captured.out
    assert "Not every task passed" in captured.out
    # The verifier's reasons, live and again in the summary.
    reason = "FAIL IBM: tool result over the right period: no performance/price_history result"
    assert reason in captured.err and reason in captured.out
    assert _rollouts(tmp_path)["finance/ibm-total-return"]["status"] == "failed"


def test_the_reference_solutions_pass_the_demo_tasks(tmp_path: Path) -> None:
    stream = io.StringIO()
    import anyio

    rollouts = anyio.run(run_demo, list(DEMO_TASKS), "reference", tmp_path, stream)
    assert [r.status for r in rollouts] == ["passed", "passed"], stream.getvalue()
    assert (tmp_path / "runs" / "threejs-place-and-frame.s0" / "scene.glb").is_file()
    assert "sees: hint: box is cut off on the right" in stream.getvalue()


def test_an_unknown_task_is_refused_before_anything_starts(tmp_path: Path) -> None:
    args = argparse.Namespace(
        list=False, task=["finance/no-such-task"], model="local:default", out=None, trace=None
    )
    with pytest.raises(SystemExit, match="has no task 'finance/no-such-task'"):
        cmd_demo(args)
    with pytest.raises(SystemExit, match="no task suite named 'nosuite'"):
        cmd_demo(argparse.Namespace(list=False, task=["nosuite/x"], model="x", out=None))
