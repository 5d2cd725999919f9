"""Godot toolkit measurements: what the visibility report costs a screenshot, and what the tool
schemas cost the prompt per tool group.

``--report`` (default): a lit 5-object scene at 512x512, screenshots taken through the windowed
runner with and without the report, interleaved, `--runs` of each (each run is a fresh engine
process, so this is the cost a screenshot tool call pays). Prints p50 seconds and the ratio, the
report's text and its size in tokens, and writes benchmarks/results/godot_report.json.

``--tokens``: prompt tokens of the tool schemas per group as the embedded local model
(Qwen2.5-Coder-0.5B, its own chat template) counts them: ``usage.prompt_tokens`` of a
one-message request with the tools minus the same request without them. The "before" row is the
14 tools the toolkit offered before it had groups. Writes benchmarks/results/godot_tokens.json.

    uv run python benchmarks/godot.py [--runs 5] [--renderer GLES2]
    uv run python benchmarks/godot.py --tokens
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from agentsdk_godot import Constructor, GodotEngine, GodotProject, GodotToolkit, HarnessJob

RESULTS = Path(__file__).parent / "results"
BEFORE_GROUPS = [
    "create_scene",
    "add_node",
    "set_property",
    "write_script",
    "attach_script",
    "import_asset",
    "scene_tree",
    "run_project",
    "screenshot",
    "game_tree",
    "game_set",
    "game_input",
    "game_screenshot",
    "game_stop",
]
TOKEN_ROWS: dict[str, list[str] | None] = {
    "before: 14 tools, no groups": None,
    "core (default)": ["core"],
    "core + check": ["core", "check"],
    "all": ["all"],
}


def five_objects(project: GodotProject) -> None:
    """A floor, three coloured shapes and a box partly behind one, lit, with a camera."""
    scene = project.new_scene("Main", "Spatial")

    def mesh(
        name: str, kind: str, at: tuple[float, float, float], rgb: tuple[float, ...], **size: object
    ) -> None:
        material = scene.add_sub_resource(
            "SpatialMaterial", {"albedo_color": Constructor("Color", (*rgb, 1))}
        )
        shape = scene.add_sub_resource(kind, {"material": material, **size})  # type: ignore[dict-item]
        node = scene.add_node(name, "MeshInstance")
        node.properties.update({"mesh": shape, "translation": Constructor("Vector3", at)})

    mesh("Floor", "PlaneMesh", (0, -1, 0), (0.5, 0.5, 0.5), size=Constructor("Vector2", (9, 9)))
    mesh("Box", "CubeMesh", (-1.6, 0, 0), (0.9, 0.1, 0.1))
    mesh("Ball", "SphereMesh", (1.2, 0, 0), (0.1, 0.3, 0.9))
    mesh("Pillar", "CylinderMesh", (0, 0, -2), (0.1, 0.8, 0.2))
    mesh("Crate", "CubeMesh", (-1.0, 0, -4), (0.9, 0.6, 0.1))
    cam = scene.add_node("Cam", "Camera")
    cam.properties["translation"] = Constructor("Vector3", (0, 2.2, 6.5))
    cam.properties["rotation_degrees"] = Constructor("Vector3", (-20, 0, 0))
    sun = scene.add_node("Sun", "DirectionalLight")
    sun.properties["rotation_degrees"] = Constructor("Vector3", (-50, 30, 0))
    project.write_scene("res://main.tscn", scene)


async def report_cost(runs: int, renderer: str | None) -> dict[str, Any]:
    engine = GodotEngine(renderer=renderer)
    folder = Path(tempfile.mkdtemp(prefix="agentsdk-godot-bench-"))
    project = GodotProject.create(folder / "game")
    five_objects(project)
    plain: list[float] = []
    reported: list[float] = []
    text = ""
    try:
        for _ in range(runs):
            started = time.perf_counter()
            run = await engine.run_harness(
                project.path,
                HarnessJob(scene="res://main.tscn", frames=3, capture_frames=[3]),
                window=True,
                timeout=180,
            )
            plain.append(time.perf_counter() - started)
            assert run.images, run.stderr[-2000:]
            started = time.perf_counter()
            run = await engine.run_harness(
                project.path,
                HarnessJob(scene="res://main.tscn", frames=3, report_frame=3),
                window=True,
                timeout=180,
            )
            reported.append(time.perf_counter() - started)
            assert run.report is not None, run.stderr[-2000:]
            text = run.report.to_text()
    finally:
        engine.close()
    p50_plain, p50_report = statistics.median(plain), statistics.median(reported)
    return {
        "scene": "5 objects (floor, box, ball, pillar, crate partly hidden), lit, 512x512",
        "renderer": renderer or "project default (GLES3)",
        "runs": runs,
        "screenshot_p50_s": round(p50_plain, 3),
        "screenshot_with_report_p50_s": round(p50_report, 3),
        "ratio_p50": round(p50_report / p50_plain, 3),
        "report_text": text,
        "report_chars": len(text),
    }


def tools_json(groups: list[str] | None) -> list[dict[str, object]]:
    tools = GodotToolkit(groups="all" if groups is None else groups).tools()
    if groups is None:
        tools = [t for t in tools if t.name in BEFORE_GROUPS]
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in tools
    ]


async def count_tokens(
    report_text: str | None, model: str = "qwen2.5-coder-0.5b"
) -> dict[str, Any]:
    import httpx
    from agentsdk_openai.local.engine import LocalEngine

    rows: dict[str, dict[str, object]] = {}
    async with LocalEngine(model) as engine, httpx.AsyncClient(timeout=600) as client:
        headers = {"Authorization": f"Bearer {engine.token}"}

        async def prompt_tokens(
            tools: list[dict[str, object]], text: str = "Add a red box."
        ) -> int:
            body: dict[str, object] = {
                "model": engine.model,
                "messages": [{"role": "user", "content": text}],
                "max_tokens": 1,
            }
            if tools:
                body["tools"] = tools
            answer = await client.post(
                f"{engine.base_url}/chat/completions", json=body, headers=headers
            )
            answer.raise_for_status()
            return int(answer.json()["usage"]["prompt_tokens"])

        bare = await prompt_tokens([])
        for label, groups in TOKEN_ROWS.items():
            tools = tools_json(groups)
            rows[label] = {"tools": len(tools), "prompt_tokens": await prompt_tokens(tools) - bare}
        report_tokens = None
        if report_text:
            report_tokens = await prompt_tokens([], report_text) - await prompt_tokens([], "")
    return {
        "model": model,
        "counted": "prompt_tokens with tools - without",
        "rows": rows,
        "report_tokens": report_tokens,
    }


def machine() -> str:
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} cpu(s), load average {os.getloadavg()[0]:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--renderer", default="GLES2", help='"GLES2", "GLES3" or "project"')
    parser.add_argument("--tokens", action="store_true", help="count tool-schema prompt tokens")
    options = parser.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    if options.tokens:
        report = (
            json.loads((RESULTS / "godot_report.json").read_text())
            if (RESULTS / "godot_report.json").exists()
            else {}
        )
        summary = asyncio.run(count_tokens(report.get("report_text")))
        summary["machine"] = machine()
        print(f"tool schema tokens ({summary['model']})")
        for label, row in summary["rows"].items():
            print(f"{label:<32}{row['tools']:>4} tools{row['prompt_tokens']:>7} tokens")
        if summary["report_tokens"] is not None:
            print(
                f"visibility report text of the 5-object scene: {summary['report_tokens']} tokens"
            )
        (RESULTS / "godot_tokens.json").write_text(json.dumps(summary, indent=2) + "\n")
        print(f"wrote {RESULTS / 'godot_tokens.json'}")
        return
    renderer = None if options.renderer == "project" else options.renderer
    summary = asyncio.run(report_cost(options.runs, renderer))
    summary["machine"] = machine()
    print(f"Godot screenshot at 512x512 ({summary['renderer']}), {summary['runs']} runs each")
    print(f"  plain screenshot   p50 {summary['screenshot_p50_s']:.2f} s")
    print(f"  with the report    p50 {summary['screenshot_with_report_p50_s']:.2f} s")
    print(f"  ratio              {summary['ratio_p50']:.2f}x")
    print(summary["report_text"])
    (RESULTS / "godot_report.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"wrote {RESULTS / 'godot_report.json'}")


if __name__ == "__main__":
    main()
