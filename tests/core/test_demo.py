"""`agentsdk demo`, the README's main job, on the real embedded local model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from agentsdk.tracing import read_trace


@pytest.mark.slow
def test_demo_answers_with_real_data_on_the_local_model(tmp_path: Path) -> None:
    trace = tmp_path / "demo.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "agentsdk.cli", "demo", "--trace", str(trace)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip(), "the demo prints the answer on stdout"
    assert "turn 1: asking local:qwen2.5-coder-0.5b" in done.stderr
    events = read_trace(trace)
    calls = [e for e in events if e["event"] == "ToolCallStarted"]
    finished = [e for e in events if e["event"] == "ToolCallFinished"]
    assert calls and calls[0]["name"] in {"performance", "price_history"}
    assert calls[0]["arguments"]["symbol"] == "MSFT"
    assert finished and not finished[0]["is_error"]
    assert events[-1]["event"] == "RunFinished"
