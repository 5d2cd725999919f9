"""Model faults under load, side by side: agentsdk, openai-agents and pydantic-ai against the
same fault-injecting server, streamed and not, at 50 and 500 concurrent runs.

Run from the repository root::

    uv run python benchmarks/faults.py            # 500 runs at c=50 and at c=500
    uv run python benchmarks/faults.py --quick    # 20 runs at c=10

The server is ``tests/connectors/fault_server.py`` in its own process (the CI tests use the
same one in-process): per request it draws a fault from a weighted table, seeded by the run
id and the request number, so run ``i`` meets the same faults in every framework. Every
framework runs in a fresh interpreter per cell, in ``.venv-bench`` (built as by
``overhead.py``, plus agentsdk-anthropic). Prints a table, writes
``benchmarks/results/faults.json``.

A run asks "run <i>: add <a> and <b>"; the scripted model calls ``add`` and answers
``The sum is <a+b>.`` once the right tool result came back. ``correct`` is that exact
answer; ``wrong`` is any other *successful* output (empty, cut, a stale text...): the one
outcome a fault must never produce. Errors are counted by class name.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from _server_process import ServerProcess

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SERVER = ROOT / "tests" / "connectors" / "fault_server.py"
OUTPUT = HERE / "results" / "faults.json"
READ_TIMEOUT = 2.0  # per read, the same for every framework
STALL = 4.0  # a stalled answer stays silent this long (past the read timeout)
RUN_TIMEOUT = 60.0


# --- the worker (one framework, one cell, in its own interpreter) --------------------------


def _get(base: str, path: str) -> Any:
    with urllib.request.urlopen(f"{base}{path}", timeout=10) as reply:
        return json.loads(reply.read())


async def _cell(name: str, base: str, stream: bool, runs: int, concurrency: int) -> dict[str, Any]:
    client = _clients().CLIENTS[name][1](base, READ_TIMEOUT, RUN_TIMEOUT)
    limit = asyncio.Semaphore(concurrency)
    records: list[tuple[int, str, float, BaseException | None]] = []
    wrong: list[str] = []
    examples: dict[str, str] = {}  # one message per error kind, to see what users get

    async def one(i: int) -> None:
        a, b = 3 * i + 1, 1000 - 7 * i
        async with limit:
            started = time.monotonic()
            try:
                coro = client.run(f"run {i}: add {a} and {b}", stream)
                # a framework without a run timeout of its own gets one from outside
                output = await (coro if client.own_timeout else asyncio.wait_for(coro, RUN_TIMEOUT))
                kind, error = ("correct" if output == f"The sum is {a + b}." else "wrong"), None
                if kind == "wrong" and len(wrong) < 5:
                    wrong.append(f"run {i}: {output!r}")
            except asyncio.TimeoutError as exc:  # noqa: UP041 (what wait_for raises, by name)
                kind, error = ("RunTimeout" if client.own_timeout else "timeout (wait_for)"), exc
            except Exception as exc:  # every failure is counted by its class
                kind, error = type(exc).__name__, exc
            records.append((i, kind, time.monotonic() - started, error))
            if error is not None and kind not in examples:
                examples[kind] = str(error)[:300]

    before = {t for t in asyncio.all_tasks() if not t.done()}
    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(i) for i in range(runs)))
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    await client.close()
    await asyncio.sleep(0.2)
    leftover = [t for t in asyncio.all_tasks() if not t.done() and t not in before]
    stats = _get(base, "/v1/stats")
    seconds = sorted(r[2] for r in records)
    kinds = Counter(r[1] for r in records)
    result: dict[str, Any] = {
        "framework": client.label,
        "retries": client.retries,
        "stream": stream,
        "runs": runs,
        "concurrency": concurrency,
        "correct": kinds.get("correct", 0),
        "wrong": kinds.get("wrong", 0),
        "errors": {k: v for k, v in kinds.most_common() if k not in ("correct", "wrong")},
        "p50_s": round(statistics.median(seconds), 3),
        "p99_s": round(seconds[min(len(seconds) - 1, int(len(seconds) * 0.99))], 3),
        "max_s": round(seconds[-1], 3),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "requests": stats["requests"],
        "connections_left_open": stats["open_connections"],
        "tasks_left": len(leftover),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "wrong_examples": wrong,
        "error_examples": examples,
    }
    if name.startswith("agentsdk"):
        result["unexplained"] = _unexplained(base, records, stream)
    return result


def _unexplained(base: str, records: list[Any], stream: bool) -> list[str]:
    """agentsdk's errors that the faults their runs met do not explain (should be none)."""
    sys.path.append(str(SERVER.parent))
    from fault_runs import _explains
    from fault_server import Injected

    met_by: dict[str, list[Injected]] = {}
    for entry in _get(base, "/v1/faults"):
        met_by.setdefault(entry["run"], []).append(Injected(**entry))
    out = []
    for i, kind, _seconds, error in records:
        met = met_by.get(str(i), [])
        if error is not None and not _explains(error, met, stream, 4):
            faults = [m.fault for m in met]
            out.append(f"run {i}: {kind} after {faults}: {str(error)[:160]}")
    return out


def _clients() -> Any:
    """``_faults_clients``, loaded by path: this folder is kept off ``sys.path``, where a
    benchmark script named like a package (``mcp.py``) would shadow that package."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_faults_clients", HERE / "_faults_clients.py")
    assert spec is not None and spec.loader is not None
    module = sys.modules.get(spec.name)
    if module is None:
        module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


def worker(name: str, config: dict[str, Any]) -> None:
    """Measure one cell in this process; print its result as the last stdout line."""
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    import logging

    logging.disable(logging.WARNING)  # every retry logs a warning; thousands of them here
    result = asyncio.run(_cell(name, **config))
    print(json.dumps(result))


# --- orchestration ------------------------------------------------------------------------


class FaultServerProcess(ServerProcess):
    """The fault server in its own process, fresh for each cell (its counts start at zero)."""

    def __init__(self, seed: int) -> None:
        super().__init__(
            SERVER, "--seed", str(seed), "--stall", str(STALL), what="the fault server"
        )


def run_cell(name: str, base: str, config: dict[str, Any]) -> dict[str, Any]:
    argv = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        name,
        json.dumps({"base": base, **config}),
    ]
    started = time.perf_counter()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=1800, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"framework": name, "error": "the cell took over 30 minutes", **config}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"framework": name, "error": f"exit {done.returncode}: {tail}", **config}
    result: dict[str, Any] = json.loads(lines[-1])
    rate = 100 * result["correct"] / result["runs"]
    print(
        f"  {name:22} {'stream' if config['stream'] else 'whole ':6} c={config['concurrency']:<4} "
        f"{time.perf_counter() - started:6.1f} s  correct {rate:5.1f}%  wrong {result['wrong']}  "
        f"errors {result['errors']}",
        flush=True,
    )
    return result


def table(results: list[dict[str, Any]]) -> str:
    """The markdown table of every cell."""
    head = (
        "| framework | mode | runs @ c | correct | wrong answers | errors | p50 s | p99 s | "
        "wall s | open sockets after | unexplained |\n|---|---|---|---|---|---|---|---|---|---|---|"
    )
    rows = [head]
    for r in results:
        mode = "stream" if r.get("stream") else "whole"
        if "error" in r:
            rows.append(
                f"| {r['framework']} | {mode} | {r['runs']} @ {r['concurrency']} | {r['error']} |||||||"
            )
            continue
        errors = ", ".join(f"{k} {v}" for k, v in r["errors"].items()) or "none"
        unexplained = len(r["unexplained"]) if "unexplained" in r else "n/a"
        rows.append(
            f"| {r['framework']} | {mode} | {r['runs']} @ {r['concurrency']} | "
            f"{100 * r['correct'] / r['runs']:.1f}% | {r['wrong']} | {errors} | {r['p50_s']} | "
            f"{r['p99_s']} | {r['wall_s']} | {r['connections_left_open']} | {unexplained} |"
        )
    return "\n".join(rows)


def ensure_environment() -> None:
    """Enter .venv-bench (overhead.py builds it), with agentsdk-anthropic installed too."""
    sys.path.insert(0, str(HERE))
    from overhead import ensure_bench_venv, in_bench_venv

    if in_bench_venv():
        return
    python = ensure_bench_venv()
    probe = subprocess.run(
        [str(python), "-c", "import agentsdk_anthropic, anthropic"], capture_output=True
    )
    if probe.returncode != 0:
        uv = "uv"
        install = [uv, "pip", "install", "--quiet", "--python", str(python)]
        subprocess.run(
            [*install, "-e", str(ROOT / "connectors" / "anthropic")], check=True, cwd=ROOT
        )
    os.execv(str(python), [str(python), str(Path(__file__).resolve()), *sys.argv[1:]])


def main() -> None:
    """Parse arguments, enter the benchmark venv, run every cell, report."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="20 runs at c=10")
    parser.add_argument("--frameworks", nargs="+", help="a subset (default: all)")
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[50, 500])
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--no-bench-venv", action="store_true", help="run in this interpreter")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--worker", nargs=2, metavar=("NAME", "CONFIG"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], json.loads(args.worker[1]))
        return
    if not args.no_bench_venv:
        ensure_environment()
    CLIENTS = _clients().CLIENTS
    runs, levels = (20, [10]) if args.quick else (args.runs, args.concurrency)
    names = args.frameworks or list(CLIENTS)
    started = time.perf_counter()
    results: list[dict[str, Any]] = []
    report: dict[str, Any] = {
        "seed": args.seed,
        "read_timeout_s": READ_TIMEOUT,
        "stall_s": STALL,
        "run_timeout_s": RUN_TIMEOUT,
        "cpus": os.cpu_count(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "cells": results,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    for concurrency in levels:
        for stream in (False, True):
            for name in names:
                with FaultServerProcess(args.seed) as base:
                    config = {"stream": stream, "runs": runs, "concurrency": concurrency}
                    results.append(run_cell(name, base, config))
                args.output.write_text(
                    json.dumps(report, indent=2) + "\n"
                )  # partial results survive
    report["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    report["seconds"] = round(time.perf_counter() - started, 1)
    print("\n" + table(results))
    print(f"\nWhole run: {report['seconds']:.0f} s.")
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
