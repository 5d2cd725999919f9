"""Which godot tools change the world: ``@tool(side_effects=True)`` tells a resumed run
never to repeat them, and the local tier policy to let the stronger model judge the step
after them. Every tool is in one of the two lists, so a new tool must be classified."""

from __future__ import annotations

from agentsdk.plugins import load_toolkit_class
from agentsdk.tools import Tool

CHANGES = {
    "create_scene",
    "add_node",
    "set_property",
    "remove_node",
    "write_script",
    "attach_script",
    "import_asset",
    "game_set",
    "game_input",
    "game_stop",
}
READS = {
    "scene_tree",
    "run_project",
    "screenshot",
    "compare_screenshots",
    "measure",
    "assert_in_frame",
    "assert_rests_on",
    "assert_overlap",
    "assert_distance",
    "game_tree",
    "game_screenshot",
}


def test_every_tool_is_classified() -> None:
    klass = load_toolkit_class("godot")
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
