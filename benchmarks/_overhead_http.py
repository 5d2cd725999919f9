"""Over-HTTP part of the overhead benchmark, run in one process per framework or transport.

* c=1: runs one after another, streaming and not; wall time and client CPU per model call;
* c=N: N runs started at once on one shared client; runs/s, model calls/s, errors;
* memory: RSS before the concurrent phases and the peak after them, per concurrent run.
"""

from __future__ import annotations

import asyncio
import resource
import statistics
import time
from dataclasses import dataclass
from typing import Any

from _overhead_clients import CLIENTS, HttpClient, raw_floor


@dataclass
class HttpPlan:
    """What one HTTP worker runs."""

    turns: int = 20
    c1_runs: int = 10
    concurrency: tuple[tuple[int, int], ...] = ((100, 20), (1000, 5))  # (runs at once, turns)
    streaming: bool = True
    run_timeout: float = 300.0  # a run still unfinished after this counts as an error


def current_rss_mb() -> float:
    """Resident set size of this process now, in MB."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _sequential(client: HttpClient, turns: int, runs: int, stream: bool) -> dict[str, Any]:
    expected = f"Done after {turns} additions."
    for _ in range(2):
        output = await client.run(turns, stream)
        if output != expected:
            raise AssertionError(f"unexpected final output {output!r}")
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        await client.run(turns, stream)
        walls.append((time.perf_counter() - wall) * 1000 / (turns + 1))
        cpus.append((time.process_time() - cpu) * 1000 / (turns + 1))
    return {
        "ms_per_turn": round(statistics.median(walls), 3),
        "cpu_ms_per_turn": round(statistics.median(cpus), 3),
    }


async def _concurrent(client: HttpClient, runs: int, turns: int, timeout: float) -> dict[str, Any]:
    async def one() -> str:
        return await asyncio.wait_for(client.run(turns, False), timeout)

    started, cpu = time.perf_counter(), time.process_time()
    outcomes = await asyncio.gather(*(one() for _ in range(runs)), return_exceptions=True)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    failures = [o for o in outcomes if isinstance(o, BaseException)]
    completed = runs - len(failures)  # only finished runs count as throughput
    return {
        "runs": runs,
        "turns": turns,
        "seconds": round(elapsed, 2),
        "runs_per_s": round(completed / elapsed, 2),
        "calls_per_s": round(completed * (turns + 1) / elapsed, 1),
        "cpu_s": round(cpu, 2),
        "calls_per_cpu_s": round(completed * (turns + 1) / cpu, 1) if cpu else None,
        "errors": len(failures),
        "first_error": f"{type(failures[0]).__name__}: {failures[0]}"[:300] if failures else None,
    }


async def _measure(client: HttpClient, plan: HttpPlan) -> dict[str, Any]:
    result: dict[str, Any] = {"transport": client.transport}
    try:
        result["c1"] = await _sequential(client, plan.turns, plan.c1_runs, stream=False)
        if plan.streaming:
            result["c1_stream"] = await _sequential(client, plan.turns, plan.c1_runs, stream=True)
        baseline = current_rss_mb()
        result["rss_before_concurrency_mb"] = round(baseline, 1)
        for runs, turns in plan.concurrency:
            result[f"c{runs}"] = await _concurrent(client, runs, turns, plan.run_timeout)
        if plan.concurrency:
            widest = max(runs for runs, _ in plan.concurrency)
            result["peak_rss_mb"] = round(peak_rss_mb(), 1)
            result["kb_per_concurrent_run"] = round((peak_rss_mb() - baseline) * 1024 / widest, 1)
    finally:
        await client.close()
    return result


def measure(name: str, base_url: str, plan: HttpPlan) -> dict[str, Any]:
    """Measure framework ``name`` (or ``transport:<variant>`` for a raw floor) over HTTP."""
    if name.startswith("transport:"):
        client = raw_floor(name.split(":", 1)[1])(base_url)
    else:
        client = CLIENTS[name](base_url)
    return asyncio.run(_measure(client, plan))
