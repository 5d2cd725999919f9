"""Calling the Godot toolkit's tools as a model would, for the Godot tests (imported by name:
conftest puts this folder on sys.path)."""

from __future__ import annotations

from agentsdk.tools import ToolOutcome
from agentsdk_godot import GodotToolkit


async def call(toolkit: GodotToolkit, tool_name: str, /, **args: object) -> ToolOutcome:
    """One tool call with these arguments, validated as the model's would be."""
    [found] = [t for t in toolkit.tools() if t.name == tool_name]
    outcome: ToolOutcome = await found.call(dict(args))
    return outcome
