"""``agentsdk demo`` as a user runs it: time to its first tool call, cold and warm.

Runs ``agentsdk demo`` in a fresh process twice with a new, empty KV folder
(``AGENTSDK_KV_CACHE_DIR``): the first run finds no saved prefix (cold: it evaluates the
system turn and tools, and saves them), the second restores them (warm). Seconds are
wall time from starting the command to the first tool-call line it prints, and to its
exit. Prints a table and writes benchmarks/results/demo_latency.json.

    uv run --no-sync python benchmarks/demo_latency.py [--rounds 1]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "demo_latency.json"
_CALL = re.compile(r"^\[\s*[\d.]+s\]\s+(->|→) ")  # a tool-call line of the demo's progress
_KEPT = ("<- ", "← ", "prefix cache", "engine ready", "turn 1:")


def run_demo(kv_dir: Path, timeout: float) -> dict[str, Any]:
    """One ``agentsdk demo``; the seconds to its first tool call and to its end."""
    env = {**os.environ, "AGENTSDK_KV_CACHE_DIR": str(kv_dir)}
    started = time.perf_counter()
    process = subprocess.Popen(
        ["uv", "run", "--no-sync", "agentsdk", "demo"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    first_call: float | None = None
    lines: list[str] = []
    assert process.stderr is not None
    for line in process.stderr:  # progress lines arrive as they happen
        lines.append(line.rstrip())
        if first_call is None and _CALL.search(line):
            first_call = time.perf_counter() - started
        if time.perf_counter() - started > timeout:
            process.kill()
            break
    output = process.stdout.read() if process.stdout else ""
    code = process.wait()
    return {
        "first_tool_call_s": round(first_call, 2) if first_call is not None else None,
        "total_s": round(time.perf_counter() - started, 2),
        "exit_code": code,
        "answer": output.strip()[:300],
        "progress": [line for line in lines if _CALL.search(line) or any(k in line for k in _KEPT)],
    }


def main(rounds: int, timeout: float) -> dict[str, Any]:
    runs = []
    for _ in range(rounds):
        kv_dir = Path(tempfile.mkdtemp(prefix="agentsdk-demo-kv-"))
        try:
            cold = run_demo(kv_dir, timeout)
            saved = sorted(p.name for p in kv_dir.glob("*.bin"))
            warm = run_demo(kv_dir, timeout)
        finally:
            shutil.rmtree(kv_dir, ignore_errors=True)
        runs.append({"cold": cold, "warm": warm, "saved_prefixes": saved})
        print(f"cold {cold['first_tool_call_s']} s, warm {warm['first_tool_call_s']} s", flush=True)
    return {
        "benchmark": "demo_latency",
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_1m_at_end": round(os.getloadavg()[0], 2),
        },
        "rounds": runs,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    result = main(args.rounds, args.timeout)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print("| run | first tool call (s) | whole demo (s) |\n|---|---|---|")
    for r in result["rounds"]:
        for kind in ("cold", "warm"):
            print(f"| {kind} | {r[kind]['first_tool_call_s']} | {r[kind]['total_s']} |")
    print(f"wrote {RESULTS}")
