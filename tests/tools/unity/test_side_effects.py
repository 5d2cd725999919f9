"""Which unity tools change the world: ``@tool(side_effects=True)`` tells a resumed run
never to repeat them, and the local tier policy to let the stronger model judge the step
after them. Every tool is in one of the two lists, so a new tool must be classified."""

from __future__ import annotations

from agentsdk.plugins import load_toolkit_class
from agentsdk.tools import Tool

CHANGES = {
    "write_script",
    "create_gameobject",
    "set_transform",
    "add_component",
    "set_field",
    "delete_gameobject",
    "save_prefab",
    "open_scene",
    "new_scene",
    "save_scene",
    "play_mode",
}
READS = {
    "check_script",
    "read_script",
    "compile_status",
    "console_logs",
    "find_gameobjects",
    "scene_info",
    "run_editmode_tests",
    "screenshot",
}


def test_every_tool_is_classified() -> None:
    klass = load_toolkit_class("unity")
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
