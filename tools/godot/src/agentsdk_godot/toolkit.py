"""`GodotToolkit`: the tools an agent uses to build, run and look at a Godot game."""

from __future__ import annotations

from agentsdk_godot.toolkit_base import TOOL_GROUPS, Look
from agentsdk_godot.tools_authoring import AuthoringTools
from agentsdk_godot.tools_framing import FramingTools
from agentsdk_godot.tools_inspect import InspectionTools
from agentsdk_godot.tools_live import LiveGameTools

__all__ = ["TOOL_GROUPS", "GodotToolkit", "Look"]


class GodotToolkit(AuthoringTools, InspectionTools, FramingTools, LiveGameTools):
    """Author scenes and scripts, run the game headless, take screenshots that say what they
    show, measure the scene, drive a live game.

    Args:
        project_dir: The project folder (created if missing); default: a temporary project.
        engine: A `GodotEngine` to share; default: the installed Godot, found on start.
        groups: Tool groups to offer: ``core`` (default: scenes, nodes, scripts, runs,
            screenshots, fit_view), ``check`` (measure, assert_*, compare_screenshots), ``assets``
            (import_asset), ``live`` (game_*), or ``all``.
        run_timeout: Seconds an engine run may take before it is killed.
        output_dir: Where screenshots are saved (default: the run's artifacts folder).
        renderer: Renderer of windowed runs: ``"GLES2"`` (default: ~2.5x faster to start on a
            software GL than GLES3), ``"GLES3"``, or ``None`` for the project's own setting.
        prefix: Prefix for the tool names.
    """
