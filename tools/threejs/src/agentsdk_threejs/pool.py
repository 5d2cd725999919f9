"""RendererPool: one headless Chromium, N warm pages each holding a three.js scene."""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from types import TracebackType

import anyio
from agentsdk.sandbox import pid_alive
from playwright.async_api import Browser, Page, Playwright, async_playwright

from agentsdk_threejs import _browser
from agentsdk_threejs._server import AssetServer, find_three_root
from agentsdk_threejs.page import (
    PAGE_READY_TIMEOUT,
    RendererError,
    RendererPage,
    RenderTimeoutError,
)
from agentsdk_threejs.report import RendererInfo, RenderResult, is_software_renderer

__all__ = ["RenderTimeoutError", "RendererError", "RendererPage", "RendererPool"]


async def _wait_until_ready(page: Page, timeout: float) -> None:
    """Poll the page's ready flag through DevTools evaluation. Not ``wait_for_function``: it
    compiles its predicate inside the page, which the page's CSP (no ``unsafe-eval``)
    refuses whenever the flag is not already set on the first look, e.g. under load."""
    deadline = time.monotonic() + timeout
    while not await page.evaluate("() => Boolean(window.__agentsdk && window.__agentsdk.ready)"):
        if time.monotonic() > deadline:
            raise RendererError(f"the render page did not get ready within {timeout:.0f} s")
        await anyio.sleep(0.05)


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
        # Chromium ignores unknown switches; this one tells our browser from any other.
        self._marker = f"--agentsdk-renderer-pool={secrets.token_hex(8)}"
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
            executable_path=self.executable_path,
            args=[*self.launch_args, self._marker],
            headless=True,
        )
        self._remember_pids()

    def _remember_pids(self) -> None:
        self._known_pids.update(_browser.browser_pids(self._marker))

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
            await _wait_until_ready(page, PAGE_READY_TIMEOUT)
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
        return [pid for pid in sorted(self._known_pids) if pid_alive(pid)]

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
            while any(pid_alive(pid) for pid in pids) and time.monotonic() < deadline:  # noqa: ASYNC110
                await anyio.sleep(0.05)
            _browser.kill_pids(pids)
        self._known_pids.clear()
        if self.server is not None:
            self.server.close()
            self.server = None
