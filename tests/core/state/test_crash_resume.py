"""SIGKILL at every step boundary of a 6-turn run, then resume in a new process.

Real subprocesses killed by pid, a real SQLite file: the transcript after the
resume equals the uninterrupted run's, and no side-effecting call ran twice.
(``charge`` is sequential so turn 3's boundaries come in one order: with two
side-effecting calls running at once, a kill at one's result is a kill inside the
other, which the second test covers.)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

AGENT = Path(__file__).with_name("crash_agent.py")


def _start(workdir: Path, mode: str, stop: str = "") -> subprocess.Popen[str]:
    args = [
        sys.executable,
        str(AGENT),
        str(workdir / "runs.db"),
        "chores",
        str(workdir / "journal"),
    ]
    return subprocess.Popen(
        [*args, mode, *([stop] if stop else [])],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=workdir,
    )


def _finish(proc: subprocess.Popen[str]) -> tuple[dict[str, Any], list[str]]:
    """The run's result and the kind of each save it made."""
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-3000:]
    lines = out.splitlines()
    result = json.loads(next(line for line in lines if line.startswith("RESULT "))[7:])
    return result, [line.split()[2] for line in lines if line.startswith("SAVED ")]


def _kill_when_stopped(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("STOPPED"):
            os.kill(proc.pid, signal.SIGKILL)  # by pid, while it waits at the boundary
            proc.wait(timeout=60)
            return line.split()[1]
    raise AssertionError(f"the run ended without stopping: {proc.wait()} {proc.stderr}")


def _journal(workdir: Path) -> list[dict[str, str]]:
    path = workdir / "journal"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[str]]:
    """The uninterrupted run: its result and the kinds of the saves it made."""
    workdir = tmp_path_factory.mktemp("reference")
    result, saves = _finish(_start(workdir, "run"))
    assert result["turns"] == 6 and result["output"].startswith("Charged 350")
    assert len(_journal(workdir)) == 4  # two notes, two charges
    return result, saves


def _kill_and_resume(base: Path, stop: int) -> tuple[int, dict[str, Any], list[dict[str, str]]]:
    workdir = base / f"stop-{stop}"
    workdir.mkdir()
    proc = _start(workdir, "run", str(stop))
    assert _kill_when_stopped(proc) == str(stop)
    assert proc.returncode == -signal.SIGKILL
    result, _ = _finish(_start(workdir, "resume"))
    return stop, result, _journal(workdir)


def test_sigkill_at_every_step_boundary_then_resume_gives_the_same_transcript(
    reference: tuple[dict[str, Any], list[str]], tmp_path: Path
) -> None:
    expected, kinds = reference
    steps = [k for k, kind in enumerate(kinds, 1) if kind == "step"]
    # the prompt, 6 answers, 6 tool results, 5 turn ends, the final answer
    assert len(steps) == 18 and kinds.count("started") == 4
    with ThreadPoolExecutor(2) as pool:  # two cores
        outcomes = list(pool.map(lambda k: _kill_and_resume(tmp_path, k), steps))
    for stop, result, journal in outcomes:
        assert result["messages"] == expected["messages"], f"killed after save {stop}"
        assert result["usage"] == expected["usage"], f"killed after save {stop}"
        assert result["output"] == expected["output"]
        # every side effect happened exactly once, under a key stable across the resume
        keys = Counter(entry["key"] for entry in journal)
        assert sorted(keys) == ["chores/t1", "chores/t3a", "chores/t3b", "chores/t4"], stop
        assert set(keys.values()) == {1}, f"killed after save {stop}: {journal}"


def test_sigkill_after_a_side_effect_was_recorded_never_runs_it_twice(
    reference: tuple[dict[str, Any], list[str]], tmp_path: Path
) -> None:
    """Killed between "about to run" and its result, the call may have acted: it is
    reported as interrupted instead of being run again."""
    _, kinds = reference
    started = [k for k, kind in enumerate(kinds, 1) if kind == "started"]
    with ThreadPoolExecutor(2) as pool:
        outcomes = list(pool.map(lambda k: _kill_and_resume(tmp_path, k), started))
    for stop, result, journal in outcomes:
        keys = Counter(entry["key"] for entry in journal)
        assert set(keys.values()) <= {1}, f"killed after save {stop}: {journal}"
        interrupted = [
            part["call_id"]
            for m in result["messages"]
            if m["role"] == "tool"
            for part in m["parts"]
            if "interrupted" in part["parts"][0]["text"]
        ]
        assert len(interrupted) == 1, stop  # the recorded call is reported, never run again
        assert all(keys[f"chores/{call}"] <= 1 for call in interrupted)
        assert result["turns"] == 6


def test_killed_inside_a_side_effecting_call_it_is_not_run_again(tmp_path: Path) -> None:
    proc = _start(tmp_path, "run", "in-tool")
    assert _kill_when_stopped(proc) == "in-tool"
    assert [e["key"] for e in _journal(tmp_path)] == ["chores/t1"]  # it acted, then died

    result, _ = _finish(_start(tmp_path, "resume"))

    assert [e["key"] for e in _journal(tmp_path)].count("chores/t1") == 1
    first_result = next(m for m in result["messages"] if m["role"] == "tool")["parts"][0]
    text = first_result["parts"][0]["text"]
    assert first_result["is_error"] and "interrupted" in text and "may or may not" in text
    assert result["turns"] == 6  # the run went on to its answer
