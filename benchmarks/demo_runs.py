"""How often the whole demo passes, and how long it takes (issue #20's measure).

    uv run python benchmarks/demo_runs.py                     # 10 runs of `agentsdk demo`
    uv run python benchmarks/demo_runs.py --runs 3 --model local:qwen2.5-coder-1.5b

Each run is a fresh `agentsdk demo` process (engines started anew, the prefix cache warm
after the first run unless --cold), its wall time from the start of the command, and the
verdict of each task from the results folder's rollouts.jsonl (the verifiers', not the
demo's words). Prints a table and writes benchmarks/results/demo_runs.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "demo_runs.json"


def one_run(model: str | None, out: Path, env: dict[str, str]) -> dict[str, object]:
    command = [sys.executable, "-m", "agentsdk.cli", "demo", "--out", str(out)]
    if model:
        command += ["--model", model]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800)
    seconds = time.perf_counter() - started
    verdicts = {}
    rollouts = out / "rollouts.jsonl"
    if rollouts.is_file():
        for line in rollouts.read_text().splitlines():
            r = json.loads(line)
            verdicts[r["task_id"]] = {
                "status": r["status"],
                "score": (r.get("verdict") or {}).get("score", 0.0),
                "seconds": round(r["seconds"], 1),
                "tool_calls": r["tool_calls"],
            }
    return {
        "seconds": round(seconds, 1),
        "exit": done.returncode,
        "tasks": verdicts,
        "all_passed": bool(verdicts) and all(v["status"] == "passed" for v in verdicts.values()),
        "load_after": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--model", default=None, help="default: the demo's own (local:default)")
    parser.add_argument("--cold", action="store_true", help="a new prefix-cache folder per run")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as scratch:
        for n in range(args.runs):
            env = dict(os.environ)
            if args.cold:
                env["AGENTSDK_KV_CACHE_DIR"] = str(Path(scratch) / f"kv{n}")
            run = one_run(args.model, Path(scratch) / f"run{n}", env)
            runs.append(run)
            tasks = ", ".join(f"{t} {v['status']}" for t, v in run["tasks"].items())  # type: ignore[union-attr]
            print(f"run {n + 1}/{args.runs}: {run['seconds']} s, exit {run['exit']}: {tasks}")
    seconds = [r["seconds"] for r in runs]
    result = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average_at_end": os.getloadavg(),
        },
        "model": args.model or "local:default",
        "cold": args.cold,
        "runs": runs,
        "all_passed": sum(bool(r["all_passed"]) for r in runs),
        "median_s": statistics.median(seconds),  # type: ignore[type-var]
        "max_s": max(seconds),  # type: ignore[type-var]
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"{result['all_passed']} of {len(runs)} runs passed both tasks; "
        f"median {result['median_s']} s, max {result['max_s']} s -> {args.out}"
    )


if __name__ == "__main__":
    main()
