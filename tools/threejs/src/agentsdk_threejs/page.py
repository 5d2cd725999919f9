"""RendererPage: one warm page holding a three.js scene, and what its calls return."""

from __future__ import annotations

import base64
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from playwright.async_api import BrowserContext, CDPSession, Page
from playwright.async_api import Error as PlaywrightError

from agentsdk_threejs.report import (
    CameraInfo,
    ConsoleEntry,
    RendererInfo,
    RenderReport,
    RenderResult,
    SceneStats,
    SceneSummary,
    ScriptError,
    ViewSummary,
    decode_data_url,
    hex_color,
    is_failure,
    is_software_renderer,
    software_note,
)
from agentsdk_threejs.visibility import view_report

if TYPE_CHECKING:
    from agentsdk_threejs.pool import RendererPool

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
        visibility: bool = True,
    ) -> RenderResult:
        """Run scene code (against the page's scene, fresh when ``reset``) and render ``views``.

        With ``visibility`` each view also gets its visibility report (an object-ID pass).
        """
        arg = {
            "code": code,
            "reset": reset,
            "width": size[0],
            "height": size[1],
            "views": list(views),
            "visibility": visibility,
        }
        return await self._render("run", arg, timeout)

    async def apply(
        self,
        ops: Sequence[dict[str, Any]],
        *,
        reset: bool = False,
        size: tuple[int, int] = (512, 512),
        views: Sequence[str] = ("camera",),
        timeout: float | None = None,
        visibility: bool = True,
    ) -> RenderResult:
        """Apply typed scene operations (``{"op": "add", ...}``, see static/ops.js) and render.

        A bad operation changes nothing: the result has ``op_error`` set and no frames.
        """
        arg = {
            "ops": list(ops),
            "reset": reset,
            "width": size[0],
            "height": size[1],
            "views": list(views),
            "visibility": visibility,
        }
        return await self._render("apply", arg, timeout)

    async def render_views(
        self,
        views: Sequence[str],
        size: tuple[int, int] = (512, 512),
        timeout: float | None = None,
        visibility: bool = True,
    ) -> RenderResult:
        """Render the current scene from ``views`` without running any code."""
        return await self.run("", size=size, views=views, timeout=timeout, visibility=visibility)

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
                if "Execution context was destroyed" in error.message or not await self._healthy():
                    self.broken = True  # navigated away, closed or crashed: the scene is gone
                message = error.message.splitlines()[0] if error.message else "unknown error"
                if self.pool.server is not None:
                    message = message.replace(self.pool.server.base_url, "")
                raise RendererError(f"the renderer page failed: {message}") from None

    async def _healthy(self) -> bool:
        """The page is still our harness and answers."""
        server = self.pool.server
        if self.playwright_page.is_closed() or not self.pool.browser_connected or server is None:
            return False
        if self.playwright_page.url != server.page_url:
            return False
        try:
            with anyio.CancelScope(shield=True), anyio.fail_after(2):
                ready = await self.playwright_page.evaluate(
                    "!!(window.__agentsdk && window.__agentsdk.ready)"
                )
        except Exception:
            return False
        return bool(ready)

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
    notes = [software_note(renderer)] if renderer.software else []
    notes.extend(raw.get("notes") or [])
    images = [decode_data_url(f["png"]) for f in frames]
    passes = [f.get("visibility") for f in frames]
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
        visibility_ms=round(sum(p["ms"] for p in passes if p), 1) if any(passes) else None,
        notes=notes,
    )
    report.ok = not is_failure(report)
    return RenderResult(
        report=report,
        images=images,
        visibility=[
            view_report(p, png, f["view"])
            for f, p, png in zip(frames, passes, images, strict=True)
            if p is not None
        ],
        scene=SceneSummary.model_validate(raw["scene"]) if raw.get("scene") else None,
        changes=list(raw.get("changes") or []),
        op_error=raw.get("op_error"),
        unchanged=bool(raw.get("unchanged")),
    )
