"""Which threejs tools change the world: ``@tool(side_effects=True)`` tells a resumed run
never to repeat them, and the local tier policy to let the stronger model judge the step
after them. Every tool is in one of the two lists, so a new tool must be classified."""

from __future__ import annotations

from agentsdk.plugins import load_toolkit_class
from agentsdk.tools import Tool

CHANGES = {
    "add_object",
    "update_object",
    "remove_object",
    "add_light",
    "set_camera",
    "fit_view",
    "render_scene",
    "load_model",
    "export_glb",
}
READS = {
    "render",
    "render_views",
    "measure",
    "assert_rests_on",
    "assert_not_overlapping",
    "assert_distance",
    "assert_in_frame",
    "compare_renders",
}


def test_every_tool_is_classified() -> None:
    klass = load_toolkit_class("threejs")
    tools = {
        value.name: value
        for k in klass.__mro__
        for value in vars(k).values()
        if isinstance(value, Tool)
    }
    assert set(tools) == CHANGES | READS and not CHANGES & READS, set(tools) ^ (CHANGES | READS)
    marked = {name for name, t in tools.items() if t.side_effects}
    assert marked == CHANGES
    assert all(tools[n].spec().side_effects for n in CHANGES)
