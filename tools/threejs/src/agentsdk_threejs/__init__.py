"""agentsdk-threejs: three.js scenes rendered in headless Chromium, with the pictures back to the model.

from agentsdk_threejs import ThreeJSToolkit, RendererPool
"""

from agentsdk_threejs._browser import BrowserNotFoundError
from agentsdk_threejs.page import RendererError, RendererPage, RenderTimeoutError
from agentsdk_threejs.pool import RendererPool
from agentsdk_threejs.report import (
    ConsoleEntry,
    RendererInfo,
    RenderReport,
    RenderResult,
    SceneStats,
    ScriptError,
    ViewSummary,
)
from agentsdk_threejs.toolkit import GlbExport, ThreeJSToolkit

__all__ = [
    "BrowserNotFoundError",
    "ConsoleEntry",
    "GlbExport",
    "RenderReport",
    "RenderResult",
    "RenderTimeoutError",
    "RendererError",
    "RendererInfo",
    "RendererPage",
    "RendererPool",
    "SceneStats",
    "ScriptError",
    "ThreeJSToolkit",
    "ViewSummary",
]
