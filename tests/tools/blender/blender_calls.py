"""Calling the toolkit's tools as a model would, for the Blender tests (imported by name:
conftest puts this folder on sys.path)."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
from agentsdk.tools import ToolOutcome
from agentsdk_blender import BlenderToolkit


async def call(kit: BlenderToolkit, tool_name: str, /, **arguments: Any) -> ToolOutcome:
    """One tool call with these arguments, validated as the model's would be."""
    tool = next(t for t in kit.tools() if t.name == tool_name)
    return await tool.call(arguments, ctx=None)


async def ok(kit: BlenderToolkit, tool_name: str, /, **arguments: Any) -> dict[str, Any]:
    """A call that must succeed: its JSON result (after any notice line)."""
    outcome = await call(kit, tool_name, **arguments)
    assert not outcome.is_error, outcome.text
    return json.loads(outcome.parts[-1].text)  # type: ignore[union-attr]


async def objects(kit: BlenderToolkit) -> dict[str, dict[str, Any]]:
    """scene_info's objects by name."""
    return {o["name"]: o for o in (await ok(kit, "scene_info"))["objects"]}


def rotation(degrees: list[float]) -> np.ndarray:
    """Blender's XYZ Euler as a matrix: X applied first, then Y, then Z."""
    x, y, z = (math.radians(a) for a in degrees)
    rx = np.array([[1, 0, 0], [0, math.cos(x), -math.sin(x)], [0, math.sin(x), math.cos(x)]])
    ry = np.array([[math.cos(y), 0, math.sin(y)], [0, 1, 0], [-math.sin(y), 0, math.cos(y)]])
    rz = np.array([[math.cos(z), -math.sin(z), 0], [math.sin(z), math.cos(z), 0], [0, 0, 1]])
    return rz @ ry @ rx
