"""benchmarks/demo_latency.py finds the first tool call in the progress lines the demo writes.

It once looked for a "  → " arrow after the demo's lines had become "  -> ", and reported
no first call at all; this reads the lines the demo's own progress printer makes.
"""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

from agentsdk.cli._progress import Progress
from agentsdk.cli.demo import DemoProgress
from agentsdk.events import ModelRequestStarted, ToolCallStarted

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "demo_latency.py"


def _latency_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("demo_latency", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_first_tool_call_line_of_either_progress_printer_is_found() -> None:
    latency = _latency_module()
    for printer in (DemoProgress, Progress):
        out = io.StringIO()
        progress = printer(out)
        progress(ModelRequestStarted(run_id="r", turn=1, model="local:m", tier="standard"))
        progress(ToolCallStarted(run_id="r", turn=1, call_id="c", name="add", arguments={"a": 1}))
        lines = out.getvalue().splitlines()
        assert len(lines) == 2
        found = [line for line in lines if latency._CALL.search(line)]
        assert found == [lines[1]], printer  # the call, never the turn line
