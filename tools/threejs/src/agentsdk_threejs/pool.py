"""RendererPool: one headless Chromium, N warm pages each holding a three.js scene."""

from __future__ import annotations

import base64
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio
from playwright.async_api import (
    Browser,
    BrowserContext,
    CDPSession,
    Page,
    Playwright,
    async_playwright,
)
from playwright.async_api import Error as PlaywrightError

from agentsdk_threejs import _browser
from agentsdk_threejs._server import AssetServer, find_three_root
from agentsdk_threejs.report import (
    CameraInfo,
    ConsoleEntry,
    RendererInfo,
    RenderReport,
    RenderResult,
    SceneStats,
    ScriptError,
    ViewSummary,
    decode_data_url,
    hex_color,
    is_failure,
    is_software_renderer,
)

PAGE_READY_TIMEOUT = 30.0


class RendererError(RuntimeError):
    """The renderer itself failed (no browser, no WebGL, page crashed): the user must act."""


class RenderTimeoutError(RendererError):
    """Scene code ran longer than the per-render timeout and was stopped."""


@dataclass
class GlbData:
    """A scene exported as binary glTF."""

    data: bytes
    stats: SceneStats
    replaced_materials: int = 0


class RendererPage:
    """One warm page with its own scene; calls on it are serialised.

    Get one from :meth:`RendererPool.page` (or :meth:`RendererPool.acquire` to keep it, e.g.
    for a session whose scene persists across calls).
    """

    def __init__(
        self, pool: RendererPool, context: BrowserContext, page: Page, devtools: CDPSession
    ) -> None:
        self.pool = pool
        self.context = context
        self.playwright_page = page
        self._devtools = devtools
        self.broken = False
        self.renders = 0
        self._lock = anyio.Lock()
        page.on("crash", lambda _page: self._mark_broken())
        page.on("close", lambda _page: self._mark_broken())

    def _mark_broken(self) -> None:
        self.broken = True

    async def run(
        self,
        code: str,
        *,
        reset: bool = False,
        size: tuple[int, int] = (512, 512),
        views: Sequence[str] = ("camera",),
        timeout: float | None = None,
    ) -> RenderResult:
        """Run scene code (against the page's scene, fresh when ``reset``) and render ``views``."""
        arg = {
            "code": code,
            "reset": reset,
            "width": size[0],
            "height": size[1],
            "views": list(views),
        }
        return await self._render("run", arg, timeout)

    async def render_views(
        self, views: Sequence[str], size: tuple[int, int] = (512, 512), timeout: float | None = None
    ) -> RenderResult:
        """Render the current scene from ``views`` without running any code."""
        return await self.run("", size=size, views=views, timeout=timeout)

    async def load_model(
        self,
        url: str,
        *,
        name: str | None = None,
        size: tuple[int, int] = (512, 512),
        views: Sequence[str] = ("iso",),
        timeout: float | None = None,
    ) -> RenderResult:
        """Add a glTF/GLB/OBJ model (a URL on the asset server) to the scene and render it."""
        arg = {"url": url, "name": name, "width": size[0], "height": size[1], "views": list(views)}
        return await self._render("load", arg, timeout)

    async def export_glb(self, timeout: float | None = None) -> GlbData:
        """The current scene as GLB bytes (three's GLTFExporter) and its statistics."""
        raw = await self._call("window.__agentsdk.exportGLB()", None, timeout)
        if raw.get("error"):
            raise RendererError(f"GLTFExporter failed: {raw['error']}")
        return GlbData(
            data=base64.b64decode(raw["glb"]),
            stats=SceneStats.model_validate(raw["stats"]),
            replaced_materials=raw["replaced_materials"],
        )

    async def evaluate(self, expression: str, arg: Any = None, timeout: float | None = None) -> Any:
        """Evaluate a JavaScript expression in the page (with the render timeout)."""
        return await self._call(expression, arg, timeout)

    async def _render(
        self, function: str, arg: dict[str, Any], timeout: float | None
    ) -> RenderResult:
        limit = self.pool.timeout if timeout is None else timeout
        arg["timeout_ms"] = limit * 1000
        started = time.perf_counter()
        raw = await self._call(f"arg => window.__agentsdk.{function}(arg)", arg, limit)
        self.renders += 1
        return _to_result(raw, (time.perf_counter() - started) * 1000)

    async def _call(self, expression: str, arg: Any, timeout: float | None) -> Any:
        limit = self.pool.timeout if timeout is None else timeout
        async with self._lock:
            if self.broken:
                raise RendererError("this renderer page crashed or was closed; get a new one")
            try:
                with anyio.fail_after(limit):
                    if arg is None:
                        return await self.playwright_page.evaluate(expression)
                    return await self.playwright_page.evaluate(expression, arg)
            except TimeoutError:
                await self._interrupt()
                raise RenderTimeoutError(
                    f"the scene code did not finish within {limit:g} s (an endless loop?) and was stopped"
                ) from None
            except PlaywrightError as error:
                if self.playwright_page.is_closed() or not self.pool.browser_connected:
                    self.broken = True
                message = error.message.splitlines()[0] if error.message else "unknown error"
                if self.pool.server is not None:
                    message = message.replace(self.pool.server.base_url, "")
                raise RendererError(f"the renderer page failed: {message}") from None

    async def _interrupt(self) -> None:
        """Stop runaway script; keep the page (and its scene) if it answers again, else retire it."""
        with anyio.CancelScope(shield=True):
            try:
                with anyio.fail_after(3):
                    # Attached in advance: attaching to a page stuck in a loop would hang.
                    await self._devtools.send("Runtime.terminateExecution")
                    await self.playwright_page.evaluate("1")
            except Exception:
                self.broken = True

    async def close(self) -> None:
        """Close the page and its browser context (idempotent)."""
        self.broken = True
        with anyio.CancelScope(shield=True):
            try:
                with anyio.fail_after(10):
                    await self.context.close()
            except Exception:
                pass


class RendererPool:
    """One headless Chromium with ``pages`` warm three.js pages and a loopback asset server.

    Use as ``async with RendererPool() as pool: result = await pool.render(code)``. A page whose
    code hangs is interrupted (or replaced), a crashed page is replaced, a dead browser is
    restarted, and closing the pool kills every Chromium process it started.

    Args:
        pages: number of warm pages (renders that can run at the same time).
        asset_dirs: folders the pages may load models and textures from.
        timeout: per-render limit in seconds.
        executable_path: Chromium to use; default: Playwright's own if installed, else a system one.
        launch_args: Chromium flags (default: headless, no sandbox, no background networking).
        three_dir: a ``node_modules/three`` folder; default: the one installed with this package.
        allow_software: accept a CPU WebGL rasteriser (SwiftShader); it is still reported.
    """

    def __init__(
        self,
        pages: int = 2,
        *,
        asset_dirs: Sequence[str | Path] = (),
        timeout: float = 15.0,
        executable_path: str | Path | None = None,
        launch_args: Sequence[str] = _browser.DEFAULT_LAUNCH_ARGS,
        three_dir: str | Path | None = None,
        allow_software: bool = True,
    ) -> None:
        if pages < 1:
            raise ValueError("pages must be at least 1")
        self.size = pages
        self.timeout = timeout
        self.asset_dirs = [Path(directory) for directory in asset_dirs]
        self.executable_path = str(executable_path) if executable_path else None
        self.launch_args = list(launch_args)
        self.three_dir = Path(three_dir) if three_dir else None
        self.allow_software = allow_software
        self.server: AssetServer | None = None
        self.renderer_info: RendererInfo | None = None
        self.browser_restarts = 0
        self.pages_replaced = 0
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._idle: list[RendererPage] = []
        self._slots = anyio.Semaphore(pages)
        self._lock = anyio.Lock()
        self._known_pids: set[int] = set()
        self._closed = False

    async def __aenter__(self) -> RendererPool:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def browser_connected(self) -> bool:
        """True while the browser process is alive and connected."""
        return self._browser is not None and self._browser.is_connected()

    @property
    def executable(self) -> str:
        """The Chromium binary in use (after start)."""
        if self.executable_path is None:
            raise RendererError("the pool is not started")
        return self.executable_path

    async def start(self) -> None:
        """Start the asset server and the browser, and warm every page."""
        if self._browser is not None:
            return
        self._closed = False
        three_dir = find_three_root() if self.three_dir is None else self.three_dir
        self.server = AssetServer(three_dir, self.asset_dirs)
        self.server.start()
        try:
            self._playwright = await async_playwright().start()
            if self.executable_path is None:
                self.executable_path = _browser.find_browser(
                    self._playwright.chromium.executable_path
                )
            await self._launch()
            first = await self._new_page()
            self._idle.append(first)
            self.renderer_info = await self._check_webgl(first)
            for _ in range(self.size - 1):
                self._idle.append(await self._new_page())
        except BaseException:
            await self.close()
            raise

    async def _launch(self) -> None:
        assert self._playwright is not None
        self._browser = await self._playwright.chromium.launch(
            executable_path=self.executable_path, args=self.launch_args, headless=True
        )
        self._remember_pids()

    def _remember_pids(self) -> None:
        if self.executable_path:
            self._known_pids.update(_browser.browser_pids(self.executable_path))

    async def _check_webgl(self, page: RendererPage) -> RendererInfo:
        raw = await page.evaluate("window.__agentsdk.info()", timeout=PAGE_READY_TIMEOUT)
        info = RendererInfo.model_validate(
            {**raw, "software": is_software_renderer(raw["renderer"])}
        )
        if not info.webgl:
            raise RendererError(
                f"Chromium has no WebGL here ({info.error or info.renderer}); three.js cannot render"
            )
        if info.software and not self.allow_software:
            raise RendererError(
                f"WebGL runs on a software rasteriser ({info.renderer}) and allow_software=False"
            )
        return info

    async def _new_page(self) -> RendererPage:
        if self._browser is None or not self._browser.is_connected():
            raise RendererError("the browser is not running")
        assert self.server is not None
        # A context each: pages never share a renderer process, so one hang stalls one page.
        context = await self._browser.new_context(viewport={"width": 512, "height": 512})
        try:
            page = await context.new_page()
            await page.goto(self.server.page_url, timeout=PAGE_READY_TIMEOUT * 1000)
            await page.wait_for_function(
                "window.__agentsdk && window.__agentsdk.ready", timeout=PAGE_READY_TIMEOUT * 1000
            )
            devtools = await context.new_cdp_session(page)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await context.close()
            raise
        self._remember_pids()
        return RendererPage(self, context, page, devtools)

    async def _ensure_browser(self) -> None:
        if self._closed:
            raise RendererError("the renderer pool is closed")
        if self._browser is None:
            raise RendererError(
                "the renderer pool is not started (use `async with RendererPool()`)"
            )
        if self._browser.is_connected():
            return
        # The browser died: its pages are gone with it.
        for page in self._idle:
            page.broken = True
        self._idle.clear()
        _browser.kill_pids(sorted(self._known_pids))
        self._known_pids.clear()
        await self._launch()
        self.browser_restarts += 1

    async def acquire(self) -> RendererPage:
        """Take a page for exclusive use; give it back with :meth:`release`."""
        await self._slots.acquire()
        try:
            async with self._lock:
                await self._ensure_browser()
                while self._idle:
                    page = self._idle.pop()
                    if not page.broken:
                        return page
                    await page.close()
                    self.pages_replaced += 1
                return await self._new_page()
        except BaseException:
            self._slots.release()
            raise

    async def release(self, page: RendererPage) -> None:
        """Return a page; a broken one is closed and replaced on the next acquire."""
        try:
            if page.broken or self._closed:
                await page.close()
                if not self._closed:
                    self.pages_replaced += 1
            else:
                self._idle.append(page)
        finally:
            self._slots.release()

    @asynccontextmanager
    async def page(self) -> AsyncIterator[RendererPage]:
        """``async with pool.page() as page:`` borrow a warm page for a few calls."""
        page = await self.acquire()
        try:
            yield page
        finally:
            await self.release(page)

    async def render(
        self,
        code: str,
        *,
        size: tuple[int, int] = (512, 512),
        views: Sequence[str] = ("camera",),
        timeout: float | None = None,
    ) -> RenderResult:
        """Run ``code`` on a fresh scene on any warm page and render ``views``."""
        async with self.page() as page:
            return await page.run(code, reset=True, size=size, views=views, timeout=timeout)

    def browser_pids(self) -> list[int]:
        """Pids of the live Chromium processes this pool started (Linux)."""
        if not self.executable_path:
            return []
        self._remember_pids()
        return [pid for pid in sorted(self._known_pids) if _browser.pid_alive(pid)]

    async def close(self) -> None:
        """Close pages, browser, driver and server; no Chromium process outlives this. Idempotent."""
        self._closed = True
        pids = self.browser_pids()
        with anyio.CancelScope(shield=True):
            for page in self._idle:
                await page.close()
            self._idle.clear()
            browser, self._browser = self._browser, None
            if browser is not None:
                try:
                    with anyio.fail_after(10):
                        await browser.close()
                except Exception:
                    pass
            driver, self._playwright = self._playwright, None
            if driver is not None:
                try:
                    with anyio.fail_after(10):
                        await driver.stop()
                except Exception:
                    pass
            # Belt and braces: anything still alive from this browser is killed by pid.
            deadline = time.monotonic() + 3
            # Process exit has no event to wait on: poll /proc.
            while any(_browser.pid_alive(pid) for pid in pids) and time.monotonic() < deadline:  # noqa: ASYNC110
                await anyio.sleep(0.05)
            _browser.kill_pids(pids)
        self._known_pids.clear()
        if self.server is not None:
            self.server.close()
            self.server = None


def _to_result(raw: dict[str, Any], elapsed_ms: float) -> RenderResult:
    info = raw["renderer"]
    renderer = RendererInfo.model_validate(
        {**info, "software": is_software_renderer(info["renderer"])}
    )
    errors = [ScriptError.model_validate(error) for error in raw["errors"]]
    if not renderer.webgl:
        errors.append(
            ScriptError(
                kind="webgl", text=f"no WebGL context: {renderer.error or renderer.renderer}"
            )
        )
    frames = raw["frames"]
    views = [
        ViewSummary(view=f["view"], uniform=f["uniform"], color=hex_color(f["color"]))
        for f in frames
    ]
    notes = []
    if renderer.software:
        notes.append(
            f"Rendered in software ({renderer.renderer}): correct pictures, slower than a GPU."
        )
    report = RenderReport(
        ok=True,
        errors=errors,
        console=[ConsoleEntry.model_validate(entry) for entry in raw["log"]],
        renderer=renderer,
        stats=SceneStats.model_validate(raw["stats"]),
        camera=CameraInfo.model_validate(raw["camera"]) if raw.get("camera") else None,
        views=views,
        blank=any(v.uniform for v in views),
        render_ms=round(elapsed_ms, 1),
        notes=notes,
    )
    report.ok = not is_failure(report)
    return RenderResult(report=report, images=[decode_data_url(f["png"]) for f in frames])
