"""The connector's client cost over real sockets: ``agentsdk.http`` on aiohttp (the default)
against the httpx pool this connector used before (``transport=`` an ``httpx.AsyncHTTPTransport``
with the same 100 connections, all kept alive, no pool timeout).

Run from the repository root: ``uv run python connectors/anthropic/measure_http.py``
(``--quick`` for a short run). The server is ``tests/connectors/fault_server.py`` in its own
process with no faults (``{"ok": 1}``): every run is ``Agent`` + one ``add`` tool, two model
calls (the call, then the answer). Each cell runs in a fresh interpreter; *client CPU* is that
process's ``time.process_time`` over the cell, so the server's work is not in it. Prints a
table and writes ``benchmarks/results/anthropic_http.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "tests" / "connectors" / "fault_server.py"
OUTPUT = ROOT / "benchmarks" / "results" / "anthropic_http.json"
sys.path.append(str(ROOT / "benchmarks"))  # appended: its mcp.py must not shadow the package
from _server_process import ServerProcess  # noqa: E402

VARIANTS = {"aiohttp": "agentsdk.http on aiohttp (now)", "httpx": "httpx pool (before)"}


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First number.
        b: Second number.
    """
    return a + b


async def _cell(
    base: str, variant: str, stream: bool, runs: int, concurrency: int
) -> dict[str, Any]:
    from agentsdk_anthropic import AnthropicModel

    from agentsdk import Agent, ModelSettings, tool

    options: dict[str, Any] = {}
    if variant == "httpx":
        import httpx

        limits = httpx.Limits(max_connections=100, max_keepalive_connections=100)
        options["transport"] = httpx.AsyncHTTPTransport(limits=limits)
    model = AnthropicModel("claude-bench", api_key="bench", base_url=base, **options)
    agent = Agent(model, tools=[tool(add)], settings=ModelSettings(timeout=60.0), max_turns=4)
    limit = asyncio.Semaphore(concurrency)
    seconds: list[float] = []
    errors: list[str] = []

    async def one(i: int) -> None:
        a, b = i, 1000 - i
        async with limit:
            started = time.perf_counter()
            try:
                text = f"run {variant}{i}: add {a} and {b}"
                if stream:
                    output = ""
                    async for event in agent.stream(text):
                        output = getattr(event, "output", output)
                else:
                    output = (await agent.run(text)).output
                if output != f"The sum is {a + b}.":
                    errors.append(f"wrong: {output!r}")
            except Exception as exc:  # counted, with the first message kept
                errors.append(f"{type(exc).__name__}: {str(exc)[:120]}")
            seconds.append(time.perf_counter() - started)

    for i in range(min(3, runs)):  # warm up: imports, the pool's first connections
        await one(-1 - i)
    seconds.clear()
    errors.clear()
    wall, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(i) for i in range(runs)))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    await model.aclose()
    calls = 2 * runs
    return {
        "variant": variant,
        "stream": stream,
        "runs": runs,
        "concurrency": concurrency,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 3),
        "cpu_ms_per_call": round(1000 * cpu / calls, 3),
        "calls_per_cpu_s": round(calls / cpu, 1) if cpu else None,
        "p50_s": round(statistics.median(seconds), 3),
        "max_s": round(max(seconds), 3),
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
    }


def _server() -> ServerProcess:
    """The fault server with no faults, in its own process."""
    return ServerProcess(SERVER, "--weights", '{"ok": 1}')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a few runs per cell")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds per cell")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        import logging

        logging.disable(logging.WARNING)
        print(json.dumps(asyncio.run(_cell(**json.loads(args.worker)))))
        return
    plan = [
        (1, 10 if args.quick else 100),
        (100, 20 if args.quick else 500),
        (500, 20 if args.quick else 1000),
    ]
    report: dict[str, Any] = {
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "cells": [],
    }
    with _server() as base:
        for concurrency, runs in plan:
            for stream in (False, True):
                for _round in range(1 if args.quick else args.rounds):
                    for variant in VARIANTS:  # interleaved, so both see the same load
                        config = {"base": base, "variant": variant, "stream": stream}
                        config |= {"runs": runs, "concurrency": concurrency}
                        done = subprocess.run(
                            [sys.executable, __file__, "--worker", json.dumps(config)],
                            capture_output=True,
                            text=True,
                            timeout=1800,
                            cwd=ROOT,
                        )
                        if done.returncode != 0:
                            raise RuntimeError(done.stderr.strip().splitlines()[-1])
                        cell = json.loads(done.stdout.strip().splitlines()[-1])
                        report["cells"].append(cell)
                        print(
                            f"  {VARIANTS[variant]:32} {'stream' if stream else 'whole '} "
                            f"c={concurrency:<4} {cell['cpu_ms_per_call']:7.3f} ms CPU/call  "
                            f"wall {cell['wall_s']:6.2f} s  p50 {cell['p50_s']:.3f} s  "
                            f"errors {cell['errors']}",
                            flush=True,
                        )
    report["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print("\n" + table(report["cells"]))
    if not args.quick:
        OUTPUT.parent.mkdir(parents=True, exist_ok=True)
        OUTPUT.write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {OUTPUT}")


def table(cells: list[dict[str, Any]]) -> str:
    """Medians over the rounds of each cell, as a markdown table."""
    groups: dict[tuple[str, bool, int], list[dict[str, Any]]] = {}
    for cell in cells:
        groups.setdefault((cell["variant"], cell["stream"], cell["concurrency"]), []).append(cell)
    rows = [
        "| client | mode | runs @ c | client CPU ms per call | model calls per CPU-s | wall s | p50 s | errors |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for (variant, stream, concurrency), group in sorted(
        groups.items(), key=lambda g: (g[0][2], g[0][1], g[0][0])
    ):

        def med(key: str, group: list[dict[str, Any]] = group) -> float:
            return statistics.median(c[key] for c in group)

        rows.append(
            f"| {VARIANTS[variant]} | {'stream' if stream else 'whole'} | {group[0]['runs']} @ {concurrency} | "
            f"{med('cpu_ms_per_call'):.3f} | {med('calls_per_cpu_s'):,.0f} | {med('wall_s'):.2f} | "
            f"{med('p50_s'):.3f} | {sum(c['errors'] for c in group)} |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    main()
