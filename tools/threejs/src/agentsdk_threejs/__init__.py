"""agentsdk-threejs: three.js scenes rendered in headless Chromium, with the pictures back to the model.

from agentsdk_threejs import ThreeJSToolkit, RendererPool
"""

from agentsdk_threejs._browser import BrowserNotFoundError
from agentsdk_threejs.file_tools import GlbExport
from agentsdk_threejs.measure import ObjectBounds
from agentsdk_threejs.page import RendererError, RendererPage, RenderTimeoutError
from agentsdk_threejs.pool import RendererPool
from agentsdk_threejs.report import (
    ConsoleEntry,
    RendererInfo,
    RenderReport,
    RenderResult,
    SceneCamera,
    SceneLight,
    SceneObject,
    SceneStats,
    SceneSummary,
    ScriptError,
    ViewSummary,
)
from agentsdk_threejs.toolkit import TOOL_GROUPS, ThreeJSToolkit

__all__ = [
    "TOOL_GROUPS",
    "BrowserNotFoundError",
    "ConsoleEntry",
    "GlbExport",
    "ObjectBounds",
    "RenderReport",
    "RenderResult",
    "RenderTimeoutError",
    "RendererError",
    "RendererInfo",
    "RendererPage",
    "RendererPool",
    "SceneCamera",
    "SceneLight",
    "SceneObject",
    "SceneStats",
    "SceneSummary",
    "ScriptError",
    "ThreeJSToolkit",
    "ViewSummary",
]
