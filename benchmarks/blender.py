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

``--part report`` measures the visual feedback and prompt size instead (results in
benchmarks/results/blender_report.json):

* the visibility report's cost per render: a 5-object scene, workbench at 512x512, warm,
  renders alternating with and without the report (ID pass + facts + report maths); the
  ratio of the medians (goal <= 1.3x);
* the report's size in the tool result for that scene, in characters and in tokens counted
  as characters / 4 (no tokenizer of a hosted model is installed here);
* the tool schemas' prompt size (JSON of every tool spec, characters / 4) per tool group
  choice: the default ``core`` group against every group (the old default offered all tools
  but ``execute_python``);
* validate_asset on a 1,310,720-triangle GLB: seconds and peak memory (in a child process).

    uv run python benchmarks/blender.py [--runs 30] [--cold-runs 3] [--render-runs 3]
    uv run python benchmarks/blender.py --part report [--runs 10]
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


REPORT_RESULTS = Path(__file__).parent / "results" / "blender_report.json"
FIVE = [
    ("cube", "Crate", (0.0, 0.0, 1.0), (0.8, 0.1, 0.1, 1.0)),
    ("uv_sphere", "Ball", (2.5, 0.0, 1.0), (0.1, 0.2, 0.9, 1.0)),
    ("cone", "Cone", (-2.5, 0.0, 1.0), (0.1, 0.7, 0.2, 1.0)),
    ("torus", "Ring", (0.0, 2.5, 0.5), (0.9, 0.7, 0.1, 1.0)),
    ("monkey", "Suzanne", (0.0, -2.2, 1.0), (0.6, 0.6, 0.6, 1.0)),
]


def _tokens(text: str) -> int:
    return round(len(text) / 4)


def _schema_chars(groups: list[str]) -> tuple[int, int]:
    from agentsdk_blender import BlenderToolkit

    tools = BlenderToolkit(groups=groups).tools()
    return len(tools), len(
        json.dumps(
            [t.spec().model_dump(include={"name", "description", "parameters"}) for t in tools]
        )
    )


def _validate_big() -> dict[str, object]:
    """validate_asset on a 1.3M-triangle GLB in a child process (time and peak RSS)."""
    import subprocess
    import sys
    import tempfile

    code = """
import json, resource, sys, time
import numpy as np, trimesh
from agentsdk_blender import validate_asset
sphere = trimesh.creation.icosphere(subdivisions=8)
vertices = sphere.vertices[sphere.faces].reshape(-1, 3)
trimesh.Trimesh(vertices, np.arange(len(vertices)).reshape(-1, 3), process=False).export(sys.argv[1])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started, cpu = time.perf_counter(), time.process_time()
report = validate_asset(sys.argv[1])
seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"triangles": report.triangles, "seconds": round(seconds, 3),
                  "cpu_seconds": round(cpu, 3),
                  "peak_rss_mb": round(peak / 1024), "rss_before_mb": round(before / 1024)}))
"""
    with tempfile.TemporaryDirectory() as folder:
        out = subprocess.run(
            [sys.executable, "-c", code, f"{folder}/sphere.glb"],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


APART = [
    (kind, name, (-6.0 + 3.0 * i, 0.0, 1.0), colour)
    for i, (kind, name, _, colour) in enumerate(FIVE)
]


async def report_cost(kit: object, runs: int) -> tuple[list[float], list[float], str, int]:
    """Alternating renders without and with the report; the tool's text; extra passes."""
    from agentsdk_blender import BlenderToolkit

    assert isinstance(kit, BlenderToolkit)
    render = next(t for t in kit.tools() if t.name == "render")
    await kit.look(resolution=(512, 512))  # warm: first-render setup out of the timing
    plain, reported = [], []
    for _ in range(runs):
        started = time.perf_counter()
        await kit.look(resolution=(512, 512), report=False)
        plain.append(time.perf_counter() - started)
        started = time.perf_counter()
        outcome = await render.call({"resolution": [512, 512]})
        reported.append(time.perf_counter() - started)
    result = await kit.connection.call(
        "render", p.RenderArgs(resolution=(512, 512)), p.RenderResult, timeout=600
    )
    extra = result.images[0].report.extra_passes if result.images[0].report else 0
    return plain, reported, outcome.text, extra


async def measure_report(runs: int) -> dict[str, object]:
    from agentsdk_blender import BlenderToolkit

    kit = BlenderToolkit(BlenderWorker(timeout=300), groups=["core"])
    apart: dict[str, object] = {}
    async with kit:
        for kind, name, where, colour in APART:
            await kit.connection.call(
                "create_primitive",
                p.CreatePrimitiveArgs(kind=kind, name=name, location=where),
                p.ObjectInfo,
            )
            await kit.connection.call(
                "set_material", p.SetMaterialArgs(name=name, base_color=colour), p.MaterialResult
            )
        await kit.connection.call(
            "place_camera", p.PlaceCameraArgs(location=(0, -16, 4), look_at=(0, 0, 1)), p.ObjectInfo
        )
        plain, reported, _, extra = await report_cost(kit, runs)
        apart = {
            "render_plain_ms": row("apart: render, no report", plain),
            "render_with_report_ms": row("apart: render + report", reported),
            "report_cost_ratio": round(statistics.median(reported) / statistics.median(plain), 3),
            "extra_passes": extra,
        }
        await kit.reset()
        for kind, name, where, colour in FIVE:
            await kit.connection.call(
                "create_primitive",
                p.CreatePrimitiveArgs(kind=kind, name=name, location=where),
                p.ObjectInfo,
            )
            await kit.connection.call(
                "set_material", p.SetMaterialArgs(name=name, base_color=colour), p.MaterialResult
            )
        await kit.connection.call(
            "place_camera", p.PlaceCameraArgs(location=(9, -9, 6), look_at=(0, 0, 1)), p.ObjectInfo
        )
        await kit.connection.call(
            "place_light", p.PlaceLightArgs(location=(4, -3, 8)), p.ObjectInfo
        )
        plain, reported, tool_text, extra = await report_cost(kit, runs)
        [look] = await kit.look(resolution=(512, 512))
        assert look.report is not None
        text = look.report.to_text()
    core_tools, core_chars = _schema_chars(["core"])
    every = ["core", "measure", "assets", "passes", "python"]
    all_tools, all_chars = _schema_chars(every)
    old_tools, old_chars = _schema_chars(["core", "measure", "assets", "passes"])
    return {
        "scene": [name for _, name, _, _ in FIVE],
        "render_plain_ms": row("render 512x512 workbench, no report", plain),
        "render_with_report_ms": row("render 512x512 workbench + report (tool)", reported),
        "report_cost_ratio": round(statistics.median(reported) / statistics.median(plain), 3),
        "extra_passes": extra,
        "apart": apart,
        "report_text": text,
        "report_chars": len(text),
        "report_tokens_chars_div_4": _tokens(text),
        "tool_text_chars": len(tool_text),
        "tool_text_tokens_chars_div_4": _tokens(tool_text),
        "schemas": {
            "core (default)": {
                "tools": core_tools,
                "chars": core_chars,
                "tokens": _tokens("x" * core_chars),
            },
            "every group but python (the old default)": {
                "tools": old_tools,
                "chars": old_chars,
                "tokens": _tokens("x" * old_chars),
            },
            "every group": {
                "tools": all_tools,
                "chars": all_chars,
                "tokens": _tokens("x" * all_chars),
            },
        },
        "validate_1m_triangles": _validate_big(),
    }


def main() -> None:
    """Measure, print the table, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["latency", "report"], default="latency")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--render-runs", type=int, default=3)
    args = parser.parse_args()
    if args.part == "report":
        found = anyio.run(measure_report, min(args.runs, 10))
        found["machine"] = {"cpus": os.cpu_count(), "load_average": os.getloadavg()}
        REPORT_RESULTS.write_text(json.dumps(found, indent=2) + "\n")
        print(json.dumps({k: v for k, v in found.items() if k != "report_text"}, indent=2))
        print(found["report_text"])
        print(f"wrote {REPORT_RESULTS}")
        return
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
