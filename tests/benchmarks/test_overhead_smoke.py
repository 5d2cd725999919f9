"""Smoke test: benchmarks/overhead.py still runs end to end (tiny configuration, agentsdk only).

No timing is asserted; the numbers only have to exist and the run has to be correct.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "overhead.py"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow
def test_overhead_quick_run_reports_agentsdk_and_floor(tmp_path: Path) -> None:
    output = tmp_path / "overhead.json"
    argv = [sys.executable, str(SCRIPT), "--quick", "--no-bench-venv"]
    argv += ["--frameworks", "floor", "agentsdk", "--transports", "httpx", "--output", str(output)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]

    report = json.loads(output.read_text())
    inprocess = report["inprocess"]["agentsdk"]
    assert "error" not in inprocess, inprocess
    assert inprocess["cpu_us_per_turn"] > 0 and inprocess["peak_rss_mb"] > 0
    assert inprocess["turn_first_us"] > 0 and inprocess["turn_last_us"] > 0

    for name in ("agentsdk", "floor"):
        http = report["http"][name]
        assert "error" not in http, http
        assert http["c1"]["ms_per_turn"] > 0 and http["c1_stream"]["ms_per_turn"] > 0
        assert http["c10"]["errors"] == 0, http["c10"]["first_error"]
    assert report["transports"]["httpx"]["c10"]["errors"] == 0

    # What a reader sees: the tables with a row per framework, and the machine line.
    assert "| in-process | CPU µs/turn |" in done.stdout
    assert "| agentsdk |" in done.stdout and "| floor |" in done.stdout
    assert "Machine:" in done.stdout
    # The fake server was stopped.
    assert not _alive(report["server_pid"])
