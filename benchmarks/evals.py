"""Eval harness benchmark (issue #13): what the runner itself costs per rollout, and how
many rollouts a minute a whole suite gets through with local workers and with Ray.

    uv run python benchmarks/evals.py                 # everything (~5 min on 2 cores)
    uv run python benchmarks/evals.py --quick         # a smoke run
    uv run python benchmarks/evals.py --skip-ray

1. Overhead: one task of 20 tool calls and an answer, played by the same FunctionModel
   (no network, no engine, an async tool), run as (a) a bare ``Agent.run``, (b)
   ``run_task`` (toolkit pool and reset, the verifier, the run folder) and (c) a whole
   ``evaluate`` (queue, trajectory file, ``rollouts.jsonl`` append + fsync, summary and
   report). CPU µs of this process per rollout (``time.process_time``) and wall ms, median
   of several batches; the harness's cost is (b) - (a) and (c) - (a), also per tool call.
2. Throughput: rollouts per minute for a whole suite with 1, 2 and 4 local workers and
   with Ray on a local cluster (2 and 4 actors), for two workloads: ``waiting`` (the test
   fixture's tally suite, every mark sleeps 50 ms in a worker thread: an engine's latency)
   and ``finance`` (the finance suite's reference solutions on real data: CPU-bound
   pandas work). The Ray cluster is started once (its start-up time is reported apart);
   each eval still creates its actors, which is part of what an eval costs.

Prints the tables and writes benchmarks/results/evals.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from agentsdk.plugins import load_suite
from agentsdk.tasks import Check, Suite, Task, ToolkitPool, ToolkitSpec, World, run_task
from agentsdk.tasks.runner import EvalResults, evaluate, trajectory
from agentsdk.testing import FunctionModel

from agentsdk import Agent, ModelRequest, ToolCallPart, Toolkit, tool

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "core"))
from eval_fixture import suite as tally_suite  # noqa: E402

CALLS = 20


class Counter(Toolkit):
    """The overhead task's world: one async tool, no thread hop, no I/O."""

    name = "counter"

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    async def reset(self) -> None:
        self.count = 0

    @tool
    async def bump(self) -> str:
        """Add one."""
        self.count += 1
        return str(self.count)


def _policy(request: ModelRequest) -> ToolCallPart | str:
    made = sum(1 for m in request.messages if m.role == "tool")
    return ToolCallPart(name="bump", arguments={}) if made < CALLS else f"Bumped {CALLS} times."


def _count(world: World) -> bool:
    toolkit = world.toolkit("counter")
    assert isinstance(toolkit, Counter)
    return toolkit.count == CALLS


TASK = Task(
    id="bench/bump",
    prompt=f"Bump exactly {CALLS} times.",
    toolkits=[ToolkitSpec("counter", factory=Counter)],
    checks=[Check("count", _count)],
    max_turns=CALLS + 5,
)


async def _batch(run: Callable[[], Awaitable[Any]], n: int) -> tuple[float, float]:
    """CPU µs and wall ms per call of ``run``, over ``n`` calls."""
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(n):
        await run()
    return (
        (time.process_time() - cpu) / n * 1e6,
        (time.perf_counter() - wall) / n * 1e3,
    )


async def overhead(batches: int, per_batch: int) -> dict[str, Any]:
    model = FunctionModel(_policy, name="policy")
    bare_toolkit = Counter()
    rows: dict[str, list[tuple[float, float]]] = {
        "bare Agent.run": [],
        "run_task": [],
        "evaluate": [],
        "record (trajectory + fsync)": [],
    }
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        async with bare_toolkit, ToolkitPool() as pool:

            async def bare() -> None:
                await bare_toolkit.reset()
                agent = Agent(model, tools=[bare_toolkit], max_turns=CALLS + 5)
                result = await agent.run(TASK.prompt)
                assert result.output == f"Bumped {CALLS} times."

            async def harness() -> None:
                rollout = await run_task(TASK, model, pool=pool, workdir=root / "rt")
                assert rollout.passed

            batch = 0

            async def whole() -> None:
                nonlocal batch
                batch += 1
                summary = await evaluate(
                    Suite("bench", [TASK]), model, out=root / f"ev{batch}", k=per_batch
                )
                assert summary.pass_rate == 1.0

            rollout = await run_task(TASK, model, pool=pool, workdir=root / "sample")
            record = trajectory(rollout, [], [])
            results = EvalResults(root / "records")

            async def write() -> None:
                results.record(rollout, record)

            for fn in (bare, harness, write):  # warm-up
                await _batch(fn, 3)
            for _ in range(batches):  # interleaved, so drift in load hits every row alike
                rows["bare Agent.run"].append(await _batch(bare, per_batch))
                rows["run_task"].append(await _batch(harness, per_batch))
                cpu, wall = await _batch(whole, 1)
                rows["evaluate"].append((cpu / per_batch, wall / per_batch))
                rows["record (trajectory + fsync)"].append(await _batch(write, per_batch))
    out: dict[str, Any] = {}
    for name, values in rows.items():
        out[name] = {
            "cpu_us_per_rollout": statistics.median(v[0] for v in values),
            "wall_ms_per_rollout": statistics.median(v[1] for v in values),
        }
    base = out["bare Agent.run"]
    for name in ("run_task", "evaluate"):
        extra_cpu = out[name]["cpu_us_per_rollout"] - base["cpu_us_per_rollout"]
        extra_wall = out[name]["wall_ms_per_rollout"] - base["wall_ms_per_rollout"]
        out[name]["harness_cpu_us_per_rollout"] = extra_cpu
        out[name]["harness_cpu_us_per_tool_call"] = extra_cpu / CALLS
        out[name]["harness_wall_ms_per_rollout"] = extra_wall
    base["cpu_us_per_tool_call"] = base["cpu_us_per_rollout"] / (CALLS + 1)
    return {"tool_calls": CALLS, "batches": batches, "rollouts_per_batch": per_batch, "rows": out}


def _workload(name: str, k: int) -> tuple[Suite, int]:
    if name == "waiting":
        suite = tally_suite(delay=0.05)
    else:
        suite = load_suite("finance")
    return suite, len(suite) * k


async def _throughput_once(
    suite: Suite, k: int, backend: str, concurrency: int
) -> tuple[float, float, float]:
    """Wall seconds of the eval, seconds to its first finished rollout (workers and
    engines coming up), and the steady rate after that (rollouts/min)."""
    done: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        summary = await evaluate(
            suite,
            "reference",
            out=Path(tmp) / "r",
            k=k,
            concurrency=concurrency,
            backend=backend,
            on_rollout=lambda *_: done.append(time.perf_counter()),
        )
        seconds = time.perf_counter() - started
    if summary.pass_rate != 1.0:
        raise RuntimeError(f"{suite.name} reference did not pass everything: {summary.to_text()}")
    steady = (len(done) - 1) / (done[-1] - done[0]) * 60 if done[-1] > done[0] else 0.0
    return seconds, done[0] - started, steady


async def throughput(
    configs: list[tuple[str, int]], workloads: dict[str, int], repeats: int
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for workload, k in workloads.items():
        suite, rollouts = _workload(workload, k)
        rows: dict[str, Any] = {}
        for backend, concurrency in configs:
            runs = [await _throughput_once(suite, k, backend, concurrency) for _ in range(repeats)]
            wall = statistics.median(r[0] for r in runs)
            rows[f"{backend} x{concurrency}"] = {
                "backend": backend,
                "concurrency": concurrency,
                "rollouts": rollouts,
                "seconds": wall,
                "rollouts_per_min": rollouts / wall * 60,
                "first_rollout_s": statistics.median(r[1] for r in runs),
                "steady_rollouts_per_min": statistics.median(r[2] for r in runs),
                "runs_s": [r[0] for r in runs],
                "load_after": os.getloadavg()[0],
            }
            print(
                f"  {workload:8s} {backend:5s} x{concurrency}: {rollouts / wall * 60:7.0f}/min",
                file=sys.stderr,
            )
        first = next(iter(rows.values()))["rollouts_per_min"]
        for row in rows.values():
            row["speedup_vs_first"] = row["rollouts_per_min"] / first
        out[workload] = {"k": k, "rows": rows}
    return out


def _print(result: dict[str, Any]) -> None:
    o = result["overhead"]
    print(
        f"\nHarness overhead: one task of {o['tool_calls']} tool calls + an answer, FunctionModel"
    )
    print(
        f"{'row':30s} {'CPU µs/rollout':>15s} {'wall ms/rollout':>16s} {'harness µs/rollout':>19s} {'µs/tool call':>13s}"
    )
    for name, row in o["rows"].items():
        extra = row.get("harness_cpu_us_per_rollout")
        per_call = row.get("harness_cpu_us_per_tool_call")
        print(
            f"{name:30s} {row['cpu_us_per_rollout']:15.0f} {row['wall_ms_per_rollout']:16.2f} "
            f"{'' if extra is None else f'{extra:19.0f}'} {'' if per_call is None else f'{per_call:13.1f}'}"
        )
    for workload, data in result["throughput"].items():
        print(f"\nThroughput, {workload} (k={data['k']})")
        print(
            f"{'config':12s} {'rollouts':>8s} {'seconds':>8s} {'per min':>8s} {'speedup':>8s}"
            f" {'1st done s':>10s} {'steady/min':>10s}"
        )
        for name, row in data["rows"].items():
            print(
                f"{name:12s} {row['rollouts']:8d} {row['seconds']:8.1f} "
                f"{row['rollouts_per_min']:8.0f} {row['speedup_vs_first']:8.2f}"
                f" {row['first_rollout_s']:10.1f} {row['steady_rollouts_per_min']:10.0f}"
            )
    if result.get("ray_start_s") is not None:
        print(f"\nRay local cluster start: {result['ray_start_s']:.1f} s (not in the rates above)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny configuration")
    parser.add_argument("--skip-ray", action="store_true")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "evals.json"))
    args = parser.parse_args()

    batches, per_batch = (2, 5) if args.quick else (7, 40)
    workloads = {"waiting": 1, "finance": 1} if args.quick else {"waiting": 10, "finance": 6}
    repeats = 1 if args.quick else 2
    configs = [("local", 1), ("local", 2)] + ([] if args.quick else [("local", 4)])
    result: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_before": os.getloadavg()[0],
        },
    }
    print("overhead ...", file=sys.stderr)
    result["overhead"] = anyio.run(overhead, batches, per_batch)
    cluster = None
    if not args.skip_ray:
        from agentsdk.tasks.ray_backend import start_ray

        started = time.perf_counter()
        cluster = start_ray(num_cpus=4)
        result["ray_start_s"] = time.perf_counter() - started
        configs += [("ray", 2)] + ([] if args.quick else [("ray", 4)])
    try:
        print("throughput ...", file=sys.stderr)
        result["throughput"] = anyio.run(throughput, configs, workloads, repeats)
    finally:
        if cluster is not None:
            cluster.stop()
    result["machine"]["load_after"] = os.getloadavg()[0]
    _print(result)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
