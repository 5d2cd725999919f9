"""``agentsdk demo`` as a user runs it: time to its first tool call, cold, warm and resident.

Runs ``agentsdk demo`` in a fresh process three times with a new, empty KV folder
(``AGENTSDK_KV_CACHE_DIR``): the first run finds no saved prefix and no running engine
(cold: it loads the models, evaluates the system turn and tools, and saves them; its
engines stay loaded, ``--keep-alive``'s default); the second finds the engines still
loaded (resident); then those engines are stopped and the third starts them again and
restores the saved prefixes (warm, ``--keep-alive 0``). Seconds are wall time from
starting the command to the first tool-call line it prints, and to its exit. Prints a
table and writes benchmarks/results/demo_latency.json.

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


KINDS = ("cold", "resident", "warm")


def run_demo(kv_dir: Path, timeout: float, *options: str) -> dict[str, Any]:
    """One ``agentsdk demo``; the seconds to its first tool call and to its end."""
    env = {**os.environ, "AGENTSDK_KV_CACHE_DIR": str(kv_dir)}
    started = time.perf_counter()
    process = subprocess.Popen(
        ["uv", "run", "--no-sync", "agentsdk", "demo", *options],
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


def _stop_engines_of(kv_dir: Path) -> None:
    """Stop the resident engines this benchmark's runs left (those with its KV folder)."""
    code = (
        "import sys\n"
        "from agentsdk.sandbox import kill_process_group\n"
        "from agentsdk_openai.local import resident_engines\n"
        "for record in resident_engines():\n"
        "    if record['kv_cache_dir'] == sys.argv[1]:\n"
        "        kill_process_group(record['pid'])\n"
    )
    subprocess.run(
        ["uv", "run", "--no-sync", "python", "-c", code, str(kv_dir)], cwd=ROOT, check=True
    )
    time.sleep(1)


def main(rounds: int, timeout: float) -> dict[str, Any]:
    runs = []
    for _ in range(rounds):
        kv_dir = Path(tempfile.mkdtemp(prefix="agentsdk-demo-kv-"))
        try:
            cold = run_demo(kv_dir, timeout)
            saved = sorted(p.name for p in kv_dir.glob("*.bin"))
            kept = run_demo(kv_dir, timeout)
            _stop_engines_of(kv_dir)
            warm = run_demo(kv_dir, timeout, "--keep-alive", "0")
        finally:
            _stop_engines_of(kv_dir)
            shutil.rmtree(kv_dir, ignore_errors=True)
        runs.append({"cold": cold, "resident": kept, "warm": warm, "saved_prefixes": saved})
        print(
            ", ".join(
                f"{kind} {run['first_tool_call_s']} s"
                for kind, run in zip(KINDS, (cold, kept, warm), strict=True)
            ),
            flush=True,
        )
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
        for kind in KINDS:
            print(f"| {kind} | {r[kind]['first_tool_call_s']} | {r[kind]['total_s']} |")
    print(f"wrote {RESULTS}")
