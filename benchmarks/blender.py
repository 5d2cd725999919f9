"""Blender worker latency: warm round trips vs starting bpy per command, and render time per engine.

Side by side in one run:

* ``warm ping`` / ``warm scene_info`` / ``warm create_primitive`` - one command on the warm
  ``BlenderWorker`` (create_primitive also pays the snapshot that makes it atomic).
* ``cold start + ping`` - what a command costs when bpy is started per command: a new worker
  process (import bpy, factory settings, handshake), one ping, kill.
* ``render <engine>`` - one 320x240 camera render of a lit, bevelled cube and a sphere:
  workbench, cycles (CPU, 16 samples), eevee (1 sample: eevee runs on llvmpipe here and 16
  samples took ~2 minutes a frame under load; the first render includes the shader compile and
  is reported separately as ``render eevee (first)``). ``engine s`` is the time
  Blender spent in ``render.render``; ``round trip`` adds the protocol and PNG transfer.

Prints a table (median and p95 in ms) and writes benchmarks/results/blender.json.

    uv run python benchmarks/blender.py [--runs 30] [--cold-runs 3] [--render-runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import anyio
from agentsdk_blender import BlenderWorker
from agentsdk_blender import protocol as p

RESULTS = Path(__file__).parent / "results" / "blender.json"


def percentile(samples: list[float], q: float) -> float:
    """Nearest-rank percentile of ``samples`` (q in 0..100)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def row(
    name: str, seconds: list[float], engine_seconds: list[float] | None = None
) -> dict[str, object]:
    """One table row in milliseconds."""
    return {
        "case": name,
        "runs": len(seconds),
        "median_ms": round(statistics.median(seconds) * 1000, 1),
        "p95_ms": round(percentile(seconds, 95) * 1000, 1),
        "engine_median_ms": round(statistics.median(engine_seconds) * 1000, 1)
        if engine_seconds
        else None,
    }


async def timed(
    worker: BlenderWorker, command: str, args: p.BaseModel | None, result: type
) -> float:
    started = time.perf_counter()
    await worker.call(command, args, result, timeout=600)
    return time.perf_counter() - started


async def build_scene(worker: BlenderWorker) -> None:
    await worker.call("reset", None, p.ResetResult)
    await worker.call(
        "create_primitive",
        p.CreatePrimitiveArgs(kind="cube", name="Crate", location=(0, 0, 1)),
        p.ObjectInfo,
    )
    await worker.call(
        "add_modifier", p.AddModifierArgs(name="Crate", kind="bevel", segments=3), p.ObjectInfo
    )
    await worker.call(
        "set_material",
        p.SetMaterialArgs(name="Crate", base_color=(0.8, 0.1, 0.1, 1)),
        p.MaterialResult,
    )
    await worker.call(
        "create_primitive",
        p.CreatePrimitiveArgs(kind="uv_sphere", name="Ball", size=1.2, location=(2, 0, 0.6)),
        p.ObjectInfo,
    )
    await worker.call(
        "set_material",
        p.SetMaterialArgs(name="Ball", base_color=(0.1, 0.2, 0.9, 1), metallic=0.5),
        p.MaterialResult,
    )
    await worker.call(
        "place_camera", p.PlaceCameraArgs(location=(6, -6, 5), look_at=(1, 0, 0.8)), p.ObjectInfo
    )
    await worker.call(
        "place_light", p.PlaceLightArgs(location=(4, -3, 8), energy=4.0), p.ObjectInfo
    )


async def measure(runs: int, cold_runs: int, render_runs: int) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    async with BlenderWorker() as worker:
        await build_scene(worker)
        for name, command, args, result in [
            ("warm ping", "ping", None, p.PingResult),
            ("warm scene_info", "scene_info", p.SceneInfoArgs(), p.SceneInfo),
        ]:
            rows.append(
                row(name, [await timed(worker, command, args, result) for _ in range(runs)])
            )
        creates = []
        for index in range(runs):
            args = p.CreatePrimitiveArgs(
                kind="cube", name=f"Box{index}", size=0.2, location=(0, 5 + index, 0)
            )
            creates.append(await timed(worker, "create_primitive", args, p.ObjectInfo))
        rows.append(row("warm create_primitive (atomic)", creates))
        await build_scene(worker)
        for engine in ("workbench", "cycles", "eevee"):
            walls, engine_times = [], []
            for attempt in range(render_runs + (1 if engine == "eevee" else 0)):
                samples = 1 if engine == "eevee" else 16
                args = p.RenderArgs(engine=engine, resolution=(320, 240), samples=samples)
                started = time.perf_counter()
                rendered = await worker.call("render", args, p.RenderResult, timeout=900)
                wall = time.perf_counter() - started
                if engine == "eevee" and attempt == 0:
                    rows.append(row("render eevee (first)", [wall], [rendered.images[0].seconds]))
                    continue
                walls.append(wall)
                engine_times.append(rendered.images[0].seconds)
            rows.append(row(f"render {engine}", walls, engine_times))
    colds = []
    for _ in range(cold_runs):
        started = time.perf_counter()
        async with BlenderWorker() as fresh:
            await fresh.call("ping", None, p.PingResult)
        colds.append(time.perf_counter() - started)
    rows.insert(3, row("cold start + ping (bpy per command)", colds))
    return rows


def main() -> None:
    """Measure, print the table, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--render-runs", type=int, default=3)
    args = parser.parse_args()
    rows = anyio.run(measure, args.runs, args.cold_runs, args.render_runs)
    print(f"{'case':<38} {'runs':>4} {'median ms':>10} {'p95 ms':>10} {'engine ms':>10}")
    for r in rows:
        engine = "" if r["engine_median_ms"] is None else r["engine_median_ms"]
        print(f"{r['case']:<38} {r['runs']:>4} {r['median_ms']:>10} {r['p95_ms']:>10} {engine:>10}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "blender",
                "resolution": [320, 240],
                "samples": {"workbench": None, "cycles": 16, "eevee": 1},
                "machine": {
                    "python": platform.python_version(),
                    "cpus": os.cpu_count(),
                    "load_average": load,
                },
                "rows": rows,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"wrote {RESULTS} (load average at the end: {load[0]:.1f})")


if __name__ == "__main__":
    main()
