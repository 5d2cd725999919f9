"""Three.js render latency at 512x512: warm pool vs a browser launched per render vs re-render.

Three paths, side by side in one run, same scene (two lit meshes, MeshStandardMaterial):

* ``launch-per-render`` - the naive way: launch Chromium, open a page, load three.js, run the
  scene code, render, close the browser. Playwright's driver stays up (its start is not counted).
* ``warm-pool`` - ``RendererPool.render``: a warm page resets its scene, runs the code, renders.
* ``re-render-warm-page`` - the scene already built on a warm page is rendered again (no code):
  what ``render_views`` and an agent iterating on one scene pay.

Prints a table (p50/p95 in ms) and writes benchmarks/results/render.json.

``--visibility`` measures what the visibility report adds to a warm 512x512 render of a lit
5-object scene: the same re-render with and without the report, interleaved (p50 ratio; goal
<= 1.3x), split into the page's ID passes and the Python side (decode + agentsdk.vision), and
writes benchmarks/results/render_visibility.json. ``--tokens`` also counts the report's text.

``--tokens`` measures instead what the toolkit's tool schemas cost in the prompt, per tool
group, as the local Qwen2.5-Coder-0.5B (the embedded engine, its own chat template) counts
them: the tokens of the prompt the chat template renders for a one-message request with the
tools, minus the same without them (llama.cpp's /apply-template and /tokenize: no inference). Writes benchmarks/results/render_tokens.json.

    uv run python benchmarks/render.py [--runs 20] [--launch-runs 8]
    uv run python benchmarks/render.py --visibility [--runs 30]
    uv run python benchmarks/render.py --tokens
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import time
from pathlib import Path

from agentsdk_threejs import RendererPool
from agentsdk_threejs._browser import DEFAULT_LAUNCH_ARGS, find_browser
from playwright.async_api import async_playwright

SIZE = (512, 512)
SCENE = """scene.background = new THREE.Color(0xbfd8ff);
scene.add(new THREE.AmbientLight(0xffffff, 0.6));
const sun = new THREE.DirectionalLight(0xffffff, 2.5);
sun.position.set(3, 6, 4);
scene.add(sun);
const box = new THREE.Mesh(new THREE.BoxGeometry(1.5, 1.5, 1.5), new THREE.MeshStandardMaterial({ color: 0xff2020 }));
box.position.y = 0.75;
const ball = new THREE.Mesh(new THREE.SphereGeometry(0.6, 48, 24), new THREE.MeshStandardMaterial({ color: 0x2050ff }));
ball.position.set(1.8, 0.6, 0.5);
const floor = new THREE.Mesh(new THREE.PlaneGeometry(8, 8), new THREE.MeshStandardMaterial({ color: 0x808080 }));
floor.rotation.x = -Math.PI / 2;
scene.add(box, ball, floor);
"""
RESULTS = Path(__file__).parent / "results" / "render.json"
VISIBILITY_RESULTS = Path(__file__).parent / "results" / "render_visibility.json"
FIVE_OBJECTS = """scene.background = new THREE.Color(0xbfd8ff);
scene.add(new THREE.AmbientLight(0xffffff, 0.6));
const sun = new THREE.DirectionalLight(0xffffff, 2.5);
sun.position.set(3, 6, 4);
scene.add(sun);
const add = (name, geometry, color, x, y, z) => {
  const mesh = new THREE.Mesh(geometry, new THREE.MeshStandardMaterial({ color }));
  mesh.name = name; mesh.position.set(x, y, z); scene.add(mesh); return mesh;
};
add('box', new THREE.BoxGeometry(1.5, 1.5, 1.5), 0xff2020, 0, 0.75, 0);
add('ball', new THREE.SphereGeometry(0.6, 48, 24), 0x2050ff, 1.8, 0.6, 0.5);
add('cone', new THREE.ConeGeometry(0.5, 1.2, 32), 0x20c040, -1.8, 0.6, 0.8);
add('ring', new THREE.TorusGeometry(0.5, 0.15, 16, 48), 0xffc020, 0.5, 0.5, 2);
add('floor', new THREE.PlaneGeometry(8, 8), 0x808080, 0, 0, 0).rotation.x = -Math.PI / 2;
"""
TOKEN_RESULTS = Path(__file__).parent / "results" / "render_tokens.json"
# "before": the toolkit's four tools as they were; "after": the default core group. A row lists
# tool groups, or tool names (the before row).
TOKEN_ROWS = {
    "before: render_scene, render_views, load_model, export_glb": [
        "render_scene",
        "render_views",
        "load_model",
        "export_glb",
    ],
    "after: default (core: 7 typed tools + measure)": ["core"],
    "check (4 assert tools)": ["check"],
    "views (render_views, compare_renders)": ["views"],
    "code (render_scene)": ["code"],
    "files (load_model, export_glb)": ["files"],
    "all groups": ["all"],
}


def percentile(samples: list[float], q: float) -> float:
    """Nearest-rank percentile of ``samples`` (q in 0..100)."""
    ordered = sorted(samples)
    rank = max(1, round(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


async def warm_pool(pool: RendererPool, runs: int) -> list[float]:
    """Fresh scene + code + render on a warm page, ``runs`` times."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        result = await pool.render(SCENE, size=SIZE)
        times.append((time.perf_counter() - started) * 1000)
        assert result.report.ok, result.report
    return times


async def rerender(pool: RendererPool, runs: int) -> list[float]:
    """Render the already-built scene again on the same warm page."""
    times = []
    async with pool.page() as page:
        await page.run(SCENE, reset=True, size=SIZE)
        for _ in range(runs):
            started = time.perf_counter()
            result = await page.render_views(["camera"], size=SIZE)
            times.append((time.perf_counter() - started) * 1000)
            assert result.report.ok, result.report
    return times


async def launch_per_render(pool: RendererPool, runs: int) -> list[float]:
    """Launch a browser for every render (the server stays up: only the browser is naive)."""
    assert pool.server is not None
    times = []
    async with async_playwright() as driver:
        executable = find_browser(driver.chromium.executable_path)
        for _ in range(runs):
            started = time.perf_counter()
            browser = await driver.chromium.launch(
                executable_path=executable, args=list(DEFAULT_LAUNCH_ARGS)
            )
            page = await browser.new_page()
            await page.goto(pool.server.page_url)
            await page.wait_for_function("window.__agentsdk && window.__agentsdk.ready")
            raw = await page.evaluate(
                "arg => window.__agentsdk.run(arg)",
                {
                    "code": SCENE,
                    "reset": True,
                    "width": SIZE[0],
                    "height": SIZE[1],
                    "views": ["camera"],
                    "timeout_ms": 30000,
                },
            )
            await browser.close()
            times.append((time.perf_counter() - started) * 1000)
            assert not raw["errors"] and not raw["frames"][0]["uniform"]
    return times


async def main(runs: int, launch_runs: int) -> dict[str, object]:
    """Run the three paths and return the summary written to JSON."""
    async with RendererPool(pages=1, timeout=60) as pool:
        await pool.render(SCENE, size=SIZE)  # first-use shader compile, not part of any path
        samples = {
            "launch-per-render": await launch_per_render(pool, launch_runs),
            "warm-pool": await warm_pool(pool, runs),
            "re-render-warm-page": await rerender(pool, runs),
        }
        renderer = pool.renderer_info.renderer if pool.renderer_info else "?"
    rows = {
        name: {
            "runs": len(times),
            "p50_ms": round(statistics.median(times), 1),
            "p95_ms": round(percentile(times, 95), 1),
            "mean_ms": round(statistics.fmean(times), 1),
        }
        for name, times in samples.items()
    }
    naive = rows["launch-per-render"]["p50_ms"]
    for row in rows.values():
        row["speedup_vs_launch_p50"] = round(naive / row["p50_ms"], 1)
    summary: dict[str, object] = {
        "size": f"{SIZE[0]}x{SIZE[1]}",
        "renderer": renderer,
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cpu(s), load average {os.getloadavg()[0]:.1f}",
        "results": rows,
    }
    print(f"three.js render latency at {summary['size']} ({renderer})")
    print(f"{'path':<22}{'runs':>6}{'p50 ms':>10}{'p95 ms':>10}{'x vs launch':>13}")
    for name, row in rows.items():
        print(
            f"{name:<22}{row['runs']:>6}{row['p50_ms']:>10}{row['p95_ms']:>10}{row['speedup_vs_launch_p50']:>13}"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"wrote {RESULTS}")
    return summary


async def visibility_cost(runs: int) -> dict[str, object]:
    """Warm re-renders of the 5-object scene with and without the report, interleaved."""
    plain: list[float] = []
    reported: list[float] = []
    page_ms: list[float] = []
    async with RendererPool(pages=1, timeout=60) as pool, pool.page() as page:
        first = await page.run(FIVE_OBJECTS, reset=True, size=SIZE)
        assert first.report.ok and len(first.visibility[0].objects) == 5, first.report
        for _ in range(3):  # shader programs of both passes compiled, caches warm
            await page.render_views(["camera"], size=SIZE, visibility=True)
        for _ in range(runs):
            started = time.perf_counter()
            await page.render_views(["camera"], size=SIZE, visibility=False)
            plain.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            result = await page.render_views(["camera"], size=SIZE, visibility=True)
            reported.append((time.perf_counter() - started) * 1000)
            page_ms.append(result.report.visibility_ms or 0.0)
        text = result.visibility[0].to_text()
    p50_plain, p50_reported = statistics.median(plain), statistics.median(reported)
    summary: dict[str, object] = {
        "size": f"{SIZE[0]}x{SIZE[1]}",
        "objects": 5,
        "runs": runs,
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cpu(s), load average {os.getloadavg()[0]:.1f}",
        "render_p50_ms": round(p50_plain, 1),
        "render_with_report_p50_ms": round(p50_reported, 1),
        "ratio_p50": round(p50_reported / p50_plain, 2),
        "page_id_passes_p50_ms": round(statistics.median(page_ms), 1),
        "python_and_transfer_p50_ms": round(
            p50_reported - p50_plain - statistics.median(page_ms), 1
        ),
        "text": text,
        "text_chars": len(text),
    }
    print(f"visibility report cost at {summary['size']}, 5 objects, {runs} interleaved runs")
    for key in (
        "render_p50_ms",
        "render_with_report_p50_ms",
        "ratio_p50",
        "page_id_passes_p50_ms",
        "python_and_transfer_p50_ms",
    ):
        print(f"  {key:<28}{summary[key]}")
    print(text)
    VISIBILITY_RESULTS.parent.mkdir(parents=True, exist_ok=True)
    VISIBILITY_RESULTS.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"wrote {VISIBILITY_RESULTS}")
    return summary


async def schema_tokens(model: str = "qwen2.5-coder-0.5b") -> dict[str, object]:
    """Prompt tokens the tool schemas of each group add, counted by the local model."""
    import httpx
    from agentsdk_openai.local.engine import LocalEngine
    from agentsdk_threejs import TOOL_GROUPS, ThreeJSToolkit

    def tools_json(groups: list[str]) -> list[dict[str, object]]:
        return [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in ThreeJSToolkit(groups="all").tools()
            if t.name in groups
            or any(
                t.name in TOOL_GROUPS[g]
                for g in (TOOL_GROUPS if "all" in groups else groups)
                if g in TOOL_GROUPS
            )
        ]

    rows: dict[str, dict[str, object]] = {}
    async with LocalEngine(model) as engine, httpx.AsyncClient(timeout=300) as client:
        headers = {"Authorization": f"Bearer {engine.token}"}

        async def count(text: str) -> int:
            root = engine.base_url.removesuffix("/v1")
            answer = await client.post(f"{root}/tokenize", json={"content": text}, headers=headers)
            answer.raise_for_status()
            return len(answer.json()["tokens"])

        async def prompt_tokens(tools: list[dict[str, object]]) -> int:
            # The chat template renders the prompt (/apply-template) and the tokenizer counts
            # it: the same tokens a request would prefill, without running the model.
            body: dict[str, object] = {
                "model": engine.model,
                "messages": [{"role": "user", "content": "Add a red box."}],
            }
            if tools:
                body["tools"] = tools
            root = engine.base_url.removesuffix("/v1")
            answer = await client.post(f"{root}/apply-template", json=body, headers=headers)
            answer.raise_for_status()
            return await count(str(answer.json()["prompt"]))

        async with RendererPool(pages=1, timeout=60) as pool:
            result = await pool.render(FIVE_OBJECTS, size=SIZE)
        report_text = result.visibility[0].to_text()
        report_tokens = await count(report_text)
        bare = await prompt_tokens([])
        for label, groups in TOKEN_ROWS.items():
            tools = tools_json(groups)
            rows[label] = {"tools": len(tools), "prompt_tokens": await prompt_tokens(tools) - bare}
    summary: dict[str, object] = {
        "model": model,
        "counted": "tokens of the chat-template prompt with the tools minus without them",
        "rows": rows,
        "visibility_report_5_objects": {"tokens": report_tokens, "text": report_text},
    }
    print(f"tool schema tokens ({model})")
    for label, row in rows.items():
        print(f"{label:<62}{row['tools']:>4}{row['prompt_tokens']:>7}")
    print(f"visibility report of the 5-object scene at 512x512: {report_tokens} tokens")
    print(report_text)
    TOKEN_RESULTS.parent.mkdir(parents=True, exist_ok=True)
    TOKEN_RESULTS.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"wrote {TOKEN_RESULTS}")
    return summary


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description="three.js render latency: warm pool vs launch-per-render"
    )
    parser.add_argument("--runs", type=int, default=20, help="renders for the warm paths")
    parser.add_argument("--launch-runs", type=int, default=8, help="renders for launch-per-render")
    parser.add_argument("--tokens", action="store_true", help="measure tool-schema prompt tokens")
    parser.add_argument("--visibility", action="store_true", help="measure the report's cost")
    options = parser.parse_args()
    if options.visibility:
        asyncio.run(visibility_cost(options.runs))
    elif options.tokens:
        asyncio.run(schema_tokens())
    else:
        asyncio.run(main(options.runs, options.launch_runs))
