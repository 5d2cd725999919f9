"""The README quickstart, run as a user would, N times: is the answer right every time?

Takes the first ```python block under "## Quickstart" in the top-level README.md as it
stands, runs it N times, each in a fresh Python process (so each run starts the embedded
engine, as a first-time user's script does), and checks the printed answer against
1234.5 + 4321 computed here. Prints a table and writes benchmarks/results/quickstart.json.

    uv run --no-sync python benchmarks/quickstart.py [--runs 10]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "quickstart.json"
EXPECTED = 1234.5 + 4321


def quickstart_code() -> str:
    """The quickstart block of the README, exactly as a reader copies it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quickstart", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    if match is None:
        raise SystemExit("README.md has no ```python block under ## Quickstart")
    return match.group(1)


def _numbers(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in re.findall(r"-?\d[\d,]*(?:\.\d+)?", text)]


def run_once(code: str, timeout: float) -> dict[str, Any]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=False,
    )
    seconds = time.perf_counter() - started
    lines = done.stdout.strip().splitlines()
    answer = lines[0] if lines else ""
    right = any(abs(n - EXPECTED) < 1e-6 for n in _numbers(answer))
    return {
        "seconds": round(seconds, 2),
        "exit_code": done.returncode,
        "answer": answer[:300],
        "tool_calls": lines[1][:200] if len(lines) > 1 else "",
        "right": right and done.returncode == 0,
        "stderr_tail": done.stderr[-400:] if done.returncode else "",
    }


def main(runs: int, timeout: float) -> dict[str, Any]:
    code = quickstart_code()
    samples = []
    for index in range(runs):
        sample = run_once(code, timeout)
        samples.append(sample)
        mark = "right" if sample["right"] else "WRONG"
        print(
            f"run {index + 1}: {mark} in {sample['seconds']} s: {sample['answer'][:100]}",
            flush=True,
        )
    return {
        "benchmark": "quickstart",
        "expected": EXPECTED,
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "load_average_1m_at_end": round(os.getloadavg()[0], 2),
        },
        "runs": runs,
        "right": sum(s["right"] for s in samples),
        "median_seconds": sorted(s["seconds"] for s in samples)[runs // 2],
        "samples": samples,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    result = main(args.runs, args.timeout)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(
        f"| runs | right | median seconds per run |\n|---|---|---|\n| {result['runs']} | {result['right']} | {result['median_seconds']} |"
    )
    print(f"wrote {RESULTS}")
