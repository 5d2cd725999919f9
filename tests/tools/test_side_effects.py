"""Which tools of the three.js, Godot and Unity toolkits change the world:
``@tool(side_effects=True)`` tells a resumed run never to repeat them, and the local tier
policy to let the stronger model judge the step after them. Every tool is in one of the two
lists, so a new tool must be classified (Blender's own test also runs every tool on bpy)."""

from __future__ import annotations

import pytest
from agentsdk.plugins import load_toolkit_class
from agentsdk.tools import Tool

# toolkit -> (tools that change the world, tools that only read it)
CLASSIFIED: dict[str, tuple[set[str], set[str]]] = {
    "threejs": (
        {
            "add_light",
            "add_object",
            "export_glb",
            "fit_view",
            "load_model",
            "remove_object",
            "render_scene",
            "set_camera",
            "update_object",
        },
        {
            "assert_distance",
            "assert_in_frame",
            "assert_not_overlapping",
            "assert_rests_on",
            "compare_renders",
            "measure",
            "render",
            "render_views",
        },
    ),
    "godot": (
        {
            "add_node",
            "attach_script",
            "create_scene",
            "fit_view",
            "game_input",
            "game_set",
            "game_stop",
            "import_asset",
            "remove_node",
            "set_property",
            "write_script",
        },
        {
            "assert_distance",
            "assert_in_frame",
            "assert_overlap",
            "assert_rests_on",
            "compare_screenshots",
            "game_screenshot",
            "game_tree",
            "measure",
            "run_project",
            "scene_tree",
            "screenshot",
        },
    ),
    "unity": (
        {
            "add_component",
            "create_gameobject",
            "delete_gameobject",
            "new_scene",
            "open_scene",
            "play_mode",
            "save_prefab",
            "save_scene",
            "set_field",
            "set_transform",
            "write_script",
        },
        {
            "check_script",
            "compile_status",
            "console_logs",
            "find_gameobjects",
            "read_script",
            "run_editmode_tests",
            "scene_info",
            "screenshot",
        },
    ),
}


@pytest.mark.parametrize("toolkit", sorted(CLASSIFIED))
def test_every_tool_is_classified(toolkit: str) -> None:
    changes, reads = CLASSIFIED[toolkit]
    klass = load_toolkit_class(toolkit)
    tools = {v.name: v for k in klass.__mro__ for v in vars(k).values() if isinstance(v, Tool)}
    assert set(tools) == changes | reads and not changes & reads, set(tools) ^ (changes | reads)
    assert {name for name, t in tools.items() if t.side_effects} == changes
    assert all(tools[n].spec().side_effects for n in changes)
