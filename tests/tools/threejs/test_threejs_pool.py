"""RendererPool against real Chromium and WebGL: pixels, errors with lines, hangs, crashes, processes."""

from __future__ import annotations

import os
import signal

import anyio
import pytest
from agentsdk_threejs import RendererPool, RenderResult, RenderTimeoutError
from playwright.async_api import Error as PlaywrightError

from .conftest import TWO_BOXES, close_to, pixel

pytestmark = pytest.mark.anyio

RED, GREEN, BLUE = (255, 0, 0), (0, 255, 0), (0, 0, 255)


async def test_known_scene_has_expected_colours_where_expected(pool: RendererPool) -> None:
    result = await pool.render(TWO_BOXES, size=(256, 256), views=["front"])
    assert result.report.ok, result.report
    front = result.images[0]
    assert close_to(pixel(front, 0.25, 0.5), RED)
    assert close_to(pixel(front, 0.75, 0.5), GREEN)
    assert close_to(pixel(front, 0.02, 0.02), BLUE)
    assert close_to(pixel(front, 0.5, 0.98), BLUE)
    stats = result.report.stats
    assert (stats.objects, stats.meshes, stats.triangles) == (2, 2, 24)
    assert stats.bbox_min == [-2.5, -1.0, -1.0] and stats.bbox_max == [2.5, 1.0, 1.0]


async def test_renderer_string_is_read_and_software_is_reported(pool: RendererPool) -> None:
    result = await pool.render(TWO_BOXES, size=(64, 64))
    renderer = result.report.renderer
    assert renderer.webgl and renderer.webgl_version == 2
    assert "SwiftShader" in renderer.renderer
    assert renderer.software
    assert any("software" in note for note in result.report.notes)
    assert pool.renderer_info is not None and pool.renderer_info.software


async def test_syntax_error_reports_its_line(pool: RendererPool) -> None:
    code = "const a = 1;\nconst b = 2;\nconst c = ;\nscene.add(new THREE.Object3D());\n"
    result = await pool.render(code)
    assert not result.report.ok
    [error] = result.report.errors
    assert error.kind == "syntax"
    assert error.line == 3
    assert "Unexpected token" in error.text
    assert result.images == []


async def test_runtime_error_and_console_lines_are_relative_to_the_code(pool: RendererPool) -> None:
    code = (
        "scene.add(new THREE.Mesh(new THREE.BoxGeometry(), new THREE.MeshNormalMaterial()));\n"
        "console.warn('about to fail');\n"
        "\n"
        "scene.getObjectByName('missing').position.x = 1;\n"
    )
    result = await pool.render(code)
    assert not result.report.ok
    [error] = result.report.errors
    assert error.kind == "exception"
    assert error.line == 4
    assert "TypeError" in error.text
    [warning] = result.report.console
    assert (warning.level, warning.text, warning.line) == ("warn", "about to fail", 2)


async def test_missing_asset_is_an_error_with_the_line(pool: RendererPool) -> None:
    result = await pool.render("const x = 1;\nawait loadModel('no/such/model.glb');\n")
    assert not result.report.ok
    exception = next(error for error in result.report.errors if error.kind == "exception")
    assert "asset not found" in exception.text and "no/such/model.glb" in exception.text
    assert exception.line == 2
    assert pool.server is not None and pool.server.token not in exception.text


async def test_blank_scene_is_flagged(pool: RendererPool) -> None:
    empty = await pool.render("", size=(64, 64))
    assert empty.report.blank and not empty.report.ok
    assert empty.report.views[0].uniform and empty.report.views[0].color == "#000000"
    # A lit material without any light renders black on black: also blank.
    unlit = await pool.render(
        "scene.add(new THREE.Mesh(new THREE.SphereGeometry(), new THREE.MeshStandardMaterial()));",
        size=(64, 64),
    )
    assert unlit.report.blank and unlit.report.stats.meshes == 1


async def test_twenty_renders_in_a_row_on_a_warm_pool(pool: RendererPool) -> None:
    pids_before = pool.browser_pids()
    for index in range(20):
        shade = 40 + index * 10
        code = (
            f"scene.background = new THREE.Color('rgb({shade}, 0, 0)');\n"
            + TWO_BOXES.split("\n", 1)[1]
        )
        result = await pool.render(code, size=(128, 128), views=["front"])
        assert result.report.ok
        assert close_to(pixel(result.images[0], 0.02, 0.02), (shade, 0, 0), tolerance=3)
        assert close_to(pixel(result.images[0], 0.75, 0.5), GREEN)
    assert pool.browser_restarts == 0 and pool.pages_replaced == 0
    assert set(pids_before) <= set(pool.browser_pids())


async def test_infinite_loop_times_out_and_the_next_render_works(pool: RendererPool) -> None:
    with pytest.raises(RenderTimeoutError, match="did not finish within 2 s"):
        await pool.render("let n = 0;\nwhile (true) { n += 1; }\n", timeout=2)
    results: list[RenderResult] = []

    async def render_one() -> None:
        results.append(await pool.render(TWO_BOXES, size=(128, 128), views=["front"]))

    async with anyio.create_task_group() as group:  # all pages at once, the stopped one included
        for _ in range(pool.size):
            group.start_soon(render_one)
    assert len(results) == pool.size
    for result in results:
        assert result.report.ok
        assert close_to(pixel(result.images[0], 0.25, 0.5), RED)


@pytest.mark.slow
async def test_crashed_page_is_replaced_and_dead_browser_restarted() -> None:
    async with RendererPool(pages=1, timeout=5) as pool:
        async with pool.page() as page:
            with pytest.raises(PlaywrightError):
                await page.playwright_page.goto("chrome://crash", timeout=5000)
            await anyio.sleep(0.5)
            assert page.broken
        result = await pool.render(TWO_BOXES, size=(64, 64), views=["front"])
        assert result.report.ok and pool.pages_replaced == 1

        first_pids = pool.browser_pids()
        for pid in first_pids:
            os.kill(pid, signal.SIGKILL)
        with anyio.fail_after(10):
            while pool.browser_connected:  # noqa: ASYNC110 - the disconnect has no public event here
                await anyio.sleep(0.05)
        result = await pool.render(TWO_BOXES, size=(64, 64), views=["front"])
        assert result.report.ok and pool.browser_restarts == 1
        assert not set(first_pids) & set(pool.browser_pids())
