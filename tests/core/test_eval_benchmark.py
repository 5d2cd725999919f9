"""benchmarks/evals.py --quick runs (without Ray), so the benchmark does not rot."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "evals.py"


@pytest.mark.slow
def test_the_eval_benchmark_measures_overhead_and_throughput(tmp_path: Path) -> None:
    out = tmp_path / "evals.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--skip-ray", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    rows = result["overhead"]["rows"]
    assert set(rows) == {"bare Agent.run", "run_task", "evaluate", "record (trajectory + fsync)"}
    assert all(r["cpu_us_per_rollout"] > 0 for r in rows.values())
    assert rows["evaluate"]["harness_cpu_us_per_tool_call"] == pytest.approx(
        (rows["evaluate"]["cpu_us_per_rollout"] - rows["bare Agent.run"]["cpu_us_per_rollout"]) / 20
    )
    for workload in ("waiting", "finance"):
        configs = result["throughput"][workload]["rows"]
        assert set(configs) == {"local x1", "local x2"}
        assert all(c["rollouts_per_min"] > 0 for c in configs.values())
    assert "Throughput, finance (k=1)" in done.stdout
