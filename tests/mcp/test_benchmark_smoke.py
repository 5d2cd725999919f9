"""benchmarks/mcp.py keeps working: a tiny run of the official client and ours (the peers
live in the benchmark venv and are measured by the full run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "mcp.py"


def test_mcp_benchmark_quick_run() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--no-bench-venv", "--clients", "sdk", "agentsdk"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| agentsdk |")]
    assert len(rows) == 2  # stdio and HTTP
    for row in rows:
        added = row.rstrip(" |").rsplit("|", 1)[1].strip()
        assert added.lstrip("+-").isdigit()
