"""Three.js render latency at 512x512: warm pool vs a browser launched per render vs re-render.

Three paths, side by side in one run, same scene (two lit meshes, MeshStandardMaterial):

* ``launch-per-render`` - the naive way: launch Chromium, open a page, load three.js, run the
  scene code, render, close the browser. Playwright's driver stays up (its start is not counted).
* ``warm-pool`` - ``RendererPool.render``: a warm page resets its scene, runs the code, renders.
* ``re-render-warm-page`` - the scene already built on a warm page is rendered again (no code):
  what ``render_views`` and an agent iterating on one scene pay.

Prints a table (p50/p95 in ms) and writes benchmarks/results/render.json.

``--tokens`` measures instead what the toolkit's tool schemas cost in the prompt, per tool
group, as the local Qwen2.5-Coder-0.5B (the embedded engine, its own chat template) counts
them: ``usage.prompt_tokens`` of a one-message request with the tools minus the same request
without them. Writes benchmarks/results/render_tokens.json.

    uv run python benchmarks/render.py [--runs 20] [--launch-runs 8]
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
TOKEN_RESULTS = Path(__file__).parent / "results" / "render_tokens.json"
# "before": the toolkit as it was (raw JS, montage, files); "after": the default core group.
TOKEN_ROWS = {
    "before: render_scene, render_views, load_model, export_glb": ["code", "views", "files"],
    "after: default (core)": ["core"],
    "code (render_scene)": ["code"],
    "views (render_views)": ["views"],
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


async def schema_tokens(model: str = "qwen2.5-coder-0.5b") -> dict[str, object]:
    """Prompt tokens the tool schemas of each group add, counted by the local model."""
    import httpx
    from agentsdk_openai.local.engine import LocalEngine
    from agentsdk_threejs import ThreeJSToolkit

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
            for t in ThreeJSToolkit(groups=groups).tools()
        ]

    rows: dict[str, dict[str, object]] = {}
    async with LocalEngine(model) as engine, httpx.AsyncClient(timeout=300) as client:
        headers = {"Authorization": f"Bearer {engine.token}"}

        async def prompt_tokens(tools: list[dict[str, object]]) -> int:
            body: dict[str, object] = {
                "model": engine.model,
                "messages": [{"role": "user", "content": "Add a red box."}],
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
    summary: dict[str, object] = {
        "model": model,
        "counted": "prompt_tokens with tools - without",
        "rows": rows,
    }
    print(f"tool schema tokens ({model})")
    for label, row in rows.items():
        print(f"{label:<62}{row['tools']:>4}{row['prompt_tokens']:>7}")
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
    options = parser.parse_args()
    if options.tokens:
        asyncio.run(schema_tokens())
    else:
        asyncio.run(main(options.runs, options.launch_runs))
