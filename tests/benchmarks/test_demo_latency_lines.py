"""benchmarks/demo_latency.py finds the first tool call in the progress lines the demo writes.

It once looked for a "  → " arrow after the demo's lines had become "  -> ", and reported
no first call at all; this reads the lines the demo's own progress printer makes.
"""

from __future__ import annotations

import io
import runpy
from pathlib import Path

from agentsdk.cli._progress import Progress
from agentsdk.cli.demo import DemoProgress
from agentsdk.events import ModelRequestStarted, ToolCallStarted

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "demo_latency.py"


def test_the_first_tool_call_line_of_either_progress_printer_is_found() -> None:
    call_line = runpy.run_path(str(SCRIPT))["_CALL"]  # the script's globals, main() not run
    for printer in (DemoProgress, Progress):
        out = io.StringIO()
        progress = printer(out)
        progress(ModelRequestStarted(run_id="r", turn=1, model="local:m", tier="standard"))
        progress(ToolCallStarted(run_id="r", turn=1, call_id="c", name="add", arguments={"a": 1}))
        lines = out.getvalue().splitlines()
        assert len(lines) == 2
        found = [line for line in lines if call_line.search(line)]
        assert found == [lines[1]], printer  # the call, never the turn line
