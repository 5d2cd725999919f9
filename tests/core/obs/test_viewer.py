"""The trace viewer: ``agentsdk trace view`` on a real trace, opened in headless
Chromium (Playwright): no console errors, every tool call shown, the tool's image
drawn, the failed call in red."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest
from agentsdk.cli import main
from agentsdk.testing import ScriptedModel
from agentsdk.tracing import read_trace
from agentsdk.viewer import render_html

from agentsdk import Agent, Image, ModelResponse, TextPart, ToolCallPart, ToolError, Usage, tool

pytestmark = pytest.mark.anyio

DOCS_SCREENSHOT = Path(__file__).parents[3] / "docs" / "assets" / "trace-viewer.png"


def scene_png(width: int = 160, height: int = 120) -> bytes:
    from PIL import Image as PILImage
    from PIL import ImageDraw

    img = PILImage.new("RGB", (width, height), (235, 238, 245))
    draw = ImageDraw.Draw(img)
    draw.rectangle((20, 40, 80, 100), fill=(220, 40, 40))
    draw.ellipse((95, 30, 145, 80), fill=(40, 90, 220))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


async def make_trace(tmp_path: Path) -> Path:
    """A real run: a render that returns an image, two measurements at once, one
    failing call, and the answer."""

    @tool
    def render_scene(width: int, height: int) -> Image:
        """Render the scene."""
        return Image(scene_png(width, height), label="render")

    @tool
    def measure(name: str) -> str:
        """Measure an object."""
        if name == "box":
            return "box: 0.6 x 0.6 x 0.6 m at (-1.0, 0.3, 0.0), 12 triangles"
        return (  # longer than the event's 200-character preview
            "ball: 0.6 m sphere at (1.0, 0.3, 0.0), 482 triangles, material 'blue_plastic' "
            "(base colour #2850d2, roughness 0.35, metallic 0.0); bounding box min "
            "(0.7, 0.0, -0.3) max (1.3, 0.6, 0.3); 31% of the frame, not occluded"
        )

    @tool
    def load_asset(path: str) -> str:
        """Load an asset file."""
        raise ToolError(f"no asset at {path}; list assets with list_assets()")

    def turn(parts: list[TextPart | ToolCallPart], i: int, o: int) -> ModelResponse:
        usage = Usage(input_tokens=i, output_tokens=o, cache_read_tokens=i // 2, requests=1)
        return ModelResponse(parts=parts, usage=usage, model_name="openai:gpt-4.1-mini")

    model = ScriptedModel(
        [
            turn(
                [ToolCallPart(name="render_scene", arguments={"width": 160, "height": 120})],
                900,
                30,
            ),
            turn(
                [
                    ToolCallPart(name="measure", arguments={"name": "box"}),
                    ToolCallPart(name="measure", arguments={"name": "ball"}),
                    ToolCallPart(name="load_asset", arguments={"path": "chair.glb"}),
                ],
                1400,
                60,
            ),
            turn(
                [TextPart(text="The red box is left of the blue ball; chair.glb is missing.")],
                1700,
                20,
            ),
        ],
        name="openai:gpt-4.1-mini",
    )
    trace = tmp_path / "run.jsonl"
    agent = Agent(
        model,
        "You inspect 3D scenes.",
        tools=[render_scene, measure, load_asset],
        trace=trace,
        artifacts_dir=tmp_path / "runs",
    )
    await agent.run("Where is the box relative to the ball? Also load chair.glb.")
    return trace


def test_the_page_holds_every_call_and_embeds_the_image(tmp_path: Path) -> None:
    import anyio

    trace = anyio.run(make_trace, tmp_path)
    events = read_trace(trace)
    page = render_html(trace)
    for e in (e for e in events if e["event"] == "ToolCallStarted"):
        assert f'data-call="{e["call_id"]}"' in page
    assert page.count("data:image/png;base64,") == 1
    assert "http://" not in page and "https://" not in page  # nothing fetched from anywhere
    assert "no asset at chair.glb" in page
    assert "$0.00" in page  # cost per turn
    assert "(1 image, below)" in page
    assert "31% of the frame, not occluded" in page  # whole results, not their previews


def test_a_missing_image_and_a_killed_run_are_shown_as_such(tmp_path: Path) -> None:
    events = [
        {"event": "RunStarted", "run_id": "r", "agent": "a", "prompt": "p", "model": "m", "tools": []},
        {"event": "ModelRequestStarted", "run_id": "r", "turn": 1, "model": "m", "tier": None},
        {"event": "ToolCallStarted", "run_id": "r", "turn": 1, "call_id": "c1", "name": "shot", "arguments": {}},
        {"event": "ImageProduced", "run_id": "r", "turn": 1, "call_id": "c1", "tool": "shot",
         "path": str(tmp_path / "gone.png"), "media_type": "image/png"},
    ]  # fmt: skip
    page = render_html(events)
    assert "image not found" in page and "did not finish" in page


def find_chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium installed (apt-get install chromium)")


@pytest.mark.slow
def test_the_page_works_in_a_real_browser(tmp_path: Path) -> None:
    import anyio
    from playwright.sync_api import sync_playwright

    trace = anyio.run(make_trace, tmp_path)
    out = tmp_path / "view.html"
    assert main(["trace", "view", str(trace), "-o", str(out)]) == 0
    calls = [e for e in read_trace(trace) if e["event"] == "ToolCallStarted"]
    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=find_chromium(), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            page.on(
                "console",
                lambda m: problems.append(m.text) if m.type in ("error", "warning") else None,
            )
            page.on("pageerror", lambda exc: problems.append(str(exc)))
            page.on(
                "request",
                lambda r: None if r.url.startswith(("file:", "data:")) else problems.append(r.url),
            )
            page.goto(out.as_uri())
            page.wait_for_load_state("load")
            shown = page.locator("details.call")
            assert shown.count() == len(calls)
            for call in calls:
                row = page.locator(f'details.call[data-call="{call["call_id"]}"]')
                assert row.is_visible() and call["name"] in row.inner_text()
            img = page.locator("img.tool-image")
            assert img.count() == 1 and img.is_visible()
            assert img.evaluate("i => [i.complete, i.naturalWidth, i.naturalHeight]") == [
                True,
                160,
                120,
            ]
            failed = page.locator("details.call.error")
            assert failed.count() == 1 and "load_asset" in failed.inner_text()
            colour = failed.locator(".label").evaluate("e => getComputedStyle(e).color")
            assert colour == "rgb(217, 45, 32)"
            page.check("#only-errors")
            assert [r.is_visible() for r in shown.all()].count(True) == 1
            page.uncheck("#only-errors")
            shot = tmp_path / "viewer.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 10_000
            if os.environ.get("AGENTSDK_UPDATE_SCREENSHOTS"):
                from PIL import Image as PILImage

                DOCS_SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
                small = PILImage.open(shot).convert("RGB").quantize(colors=48)
                small.save(DOCS_SCREENSHOT, optimize=True)
        finally:
            browser.close()
    assert problems == []


def test_a_paused_and_resumed_run_is_one_timeline(tmp_path: Path) -> None:
    @tool(needs_approval=True)
    def publish(channel: str) -> str:
        """Publish the release."""
        return f"published to {channel}"

    model = ScriptedModel(
        [ToolCallPart(name="publish", arguments={"channel": "stable"}, id="p1"), "Released."]
    )
    trace = tmp_path / "run.jsonl"
    agent = Agent(model, tools=[publish], trace=trace, store=tmp_path / "runs.db")
    assert agent.run_sync("release it", run_id="rel-1").status == "awaiting_approval"
    assert agent.resume_sync("rel-1", approvals={"p1": True}).output == "Released."
    page = render_html(trace)
    assert page.count('data-run="rel-1"') == 1  # one run, not two
    assert page.count('data-call="p1"') == 1 and "published to stable" in page
    assert "Released." in page and "release it" in page
