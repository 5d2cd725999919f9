"""Files Godot wrote keep their bytes: an edit changes the edited lines and nothing else
(the engine's float spelling, empty dictionaries, a key it writes twice, comments, CRLF)."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from agentsdk.sandbox import run_process
from agentsdk_godot import (
    Constructor,
    GodotEngine,
    GodotProject,
    GodotToolkit,
    HarnessJob,
    SceneFile,
    format_variant,
    parse_resource_text,
)

# A tool script whose _get_property_list() repeats an exported name: the engine then writes
# that key twice in the node's section. Values the engine spells in its own way (%g floats:
# 1.23457e+06, 1e-07; an empty dictionary over three lines) are set by the saver below.
THING = """\
tool
extends Spatial

export var big = 1234567.0
export var small = 0.000012345
export var empty = {}
export var nested = {"a": {}, "b": [ {} ]}
export var speed = 1.5
export var tags = []

func _get_property_list():
\treturn [{"name": "speed", "type": TYPE_REAL, "usage": PROPERTY_USAGE_DEFAULT}]
"""

SAVER = """\
extends SceneTree

func _init():
\tvar root = Spatial.new()
\troot.name = "Main"
\tvar thing = Spatial.new()
\tthing.name = "Thing"
\tthing.set_script(load("res://thing.gd"))
\tthing.translation = Vector3(1e6, 0, 0)
\tthing.scale = Vector3(1.23456789, 1e-7, 100000000)
\troot.add_child(thing)
\tthing.owner = root
\tvar box = MeshInstance.new()
\tbox.name = "Box"
\tvar mesh = CubeMesh.new()
\tmesh.size = Vector3(1234567.0, 0.1, 3)
\tbox.mesh = mesh
\troot.add_child(box)
\tbox.owner = root
\tvar label = Label.new()
\tlabel.name = "Label"
\tlabel.text = "two\\nlines"
\troot.add_child(label)
\tlabel.owner = root
\tvar packed = PackedScene.new()
\tpacked.pack(root)
\tprint("saved ", ResourceSaver.save("res://saved.tscn", packed))
\tProjectSettings.set_setting("physics/3d/default_gravity", 1234567.0)
\tProjectSettings.set_setting("agentsdk/empty", {})
\tProjectSettings.set_setting("agentsdk/vec", Vector3(1e6, 0.5, -2e-5))
\tprint("saved ", ProjectSettings.save())
\tquit()
"""


def changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    """(lines only in `before`, lines only in `after`), in order, from a line diff."""
    gone: list[str] = []
    new: list[str] = []
    old_lines, new_lines = before.split("\n"), after.split("\n")  # a \r stays on its line
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "equal":
            gone += old_lines[i1:i2]
            new += new_lines[j1:j2]
    return gone, new


@pytest.fixture
async def saved(engine: GodotEngine, project: GodotProject, tmp_path: Path) -> GodotProject:
    """A project whose scene and project.godot were written by Godot itself."""
    project.write_text("res://thing.gd", THING)
    script = tmp_path / "save.gd"
    script.write_text(SAVER)
    done = await run_process(
        [engine.server, "--path", str(project.path), "-s", str(script)],
        env=engine.env(),
        timeout=60,
    )
    assert done.stdout.count("saved 0") == 2, done.stderr[-2000:]
    text = project.file("res://saved.tscn").read_text()
    # the material this test is about is really in the engine's output
    for spelled in (
        "big = 1.23457e+06",
        "1e-07",
        "Vector3( 1.23457e+06, 0.1, 3 )",
        "empty = {\n\n}",
    ):
        assert spelled in text, text
    assert text.count("\nspeed = 1.5\n") == 2, text
    return project


@pytest.mark.anyio
async def test_engine_written_files_round_trip_byte_for_byte(saved: GodotProject) -> None:
    for name in ("res://saved.tscn", "project.godot"):
        original = saved.file(name).read_bytes().decode()
        doc = parse_resource_text(original)
        assert doc.to_text(config=name == "project.godot") == original
    scene_text = saved.file("res://saved.tscn").read_text()
    assert SceneFile.parse(scene_text).to_text() == scene_text
    # values written new are spelled as the engine spells them, except floats: those keep
    # every digit (the engine's %g would round 1234567.0 to 1.23457e+06)
    [thing] = [
        s for s in parse_resource_text(scene_text).find("node") if s.attrs["name"] == "Thing"
    ]
    assert thing.origin is not None
    spelled_alike = [
        line.key
        for line in thing.origin.lines
        if f"{line.key} = {format_variant(line.value)}" == line.text
    ]
    assert spelled_alike == ["script", "small", "empty", "nested", "speed", "tags", "speed"]
    assert format_variant(1234567.0) == "1234567.0"


@pytest.mark.anyio
async def test_an_edit_changes_only_its_own_lines(engine: GodotEngine, saved: GodotProject) -> None:
    original = saved.file("res://saved.tscn").read_text()
    scene = saved.read_scene("res://saved.tscn")
    scene.node("Thing").properties["tags"] = ["red"]
    scene.add_node("Extra", "Spatial")
    saved.write_scene("res://saved.tscn", scene)
    edited = saved.file("res://saved.tscn").read_text()
    gone, new = changed_lines(original, edited)
    assert gone == ["tags = [  ]"]
    assert sorted(new) == sorted(
        ['tags = [ "red" ]', "", '[node name="Extra" type="Spatial" parent="."]']
    )
    assert edited.endswith('"\n\n[node name="Extra" type="Spatial" parent="."]\n')
    assert edited.count("\nspeed = 1.5\n") == 2  # the key the engine wrote twice is still twice

    settings_before = saved.file("project.godot").read_text()
    saved.main_scene = "res://saved.tscn"
    gone, new = changed_lines(settings_before, saved.file("project.godot").read_text())
    assert (gone, new) == ([], ['run/main_scene="res://saved.tscn"'])

    run = await engine.run_harness(saved.path, HarnessJob(scene="res://saved.tscn", frames=1))
    assert run.tree is not None, run.stderr[-2000:]
    thing = run.tree.find("Thing")
    assert thing is not None and thing.properties["big"] == "1.23457e+06"
    assert thing.properties["tags"] == '[ "red" ]' and run.tree.find("Extra") is not None


@pytest.mark.anyio
async def test_setting_a_key_written_twice_leaves_one_line(saved: GodotProject) -> None:
    async with GodotToolkit(saved.path, engine=GodotEngine()) as toolkit:
        [tool] = [t for t in toolkit.tools() if t.name == "set_property"]
        result = await tool.call(
            {"scene": "res://saved.tscn", "node": "Thing", "property": "speed", "value": "4.0"}
        )
        assert not result.is_error, result.text
    text = saved.file("res://saved.tscn").read_text()
    assert text.count("speed = ") == 1 and "\nspeed = 4.0\n" in text
    assert SceneFile.parse(text).node("Thing").properties["speed"] == 4.0


HAND_WRITTEN = (
    "[gd_scene load_steps=2 format=2]\r\n"
    "\r\n"
    "; a comment the engine would drop, but we do not\r\n"
    '[sub_resource type="CubeMesh" id=1]\r\n'
    "size = Vector3( 2.50000, 1e+03, 1.0 )\r\n"
    "\r\n"
    '[node   name="Main" type="Spatial"]\r\n'
    "  # indented comment\r\n"
    "transform = Transform( 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0 )\r\n"
    "\r\n\r\n"
    '[node name="Box" type="MeshInstance" parent="."]\r\n'
    "mesh = SubResource( 1 )\r\n"
    "visible = true\r\n"
)


def test_hand_written_layout_survives_an_edit() -> None:
    scene = SceneFile.parse(HAND_WRITTEN)
    assert scene.to_text() == HAND_WRITTEN
    scene.node("Box").properties["visible"] = False
    scene.sub_resource(scene.node("Box").properties["mesh"]).properties["size"] = Constructor(  # type: ignore[arg-type]
        "Vector3", (2.5, 1000.0, 2.0)
    )
    edited = scene.to_text()
    gone, new = changed_lines(HAND_WRITTEN, edited)
    assert gone == ["size = Vector3( 2.50000, 1e+03, 1.0 )\r", "visible = true\r"]
    assert new == ["size = Vector3( 2.5, 1000, 2 )\r", "visible = false\r"]
    del scene.node(".").properties["transform"]
    gone, _ = changed_lines(HAND_WRITTEN, scene.to_text())
    assert "transform = Transform( 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0 )\r" in gone
    assert "  # indented comment\r" in scene.to_text().split("\n")


def test_a_renamed_node_takes_its_children_and_signal_connections_along() -> None:
    text = (
        '[gd_scene format=2]\n\n[node name="Main" type="Spatial"]\n\n'
        '[node name="Box" type="Spatial" parent="."]\n\n'
        '[node name="Button" type="Button" parent="Box"]\n\n'
        '[node name="Boxer" type="Spatial" parent="."]\n\n'
        '[connection signal="pressed" from="Box/Button" to="." method="_on_pressed"]\n'
        '[connection signal="ready" from="Boxer" to="Box" method="_on_ready"]\n'
    )
    doc = SceneFile.parse(text)
    doc.rename_node("Box", "Panel")
    out = doc.to_text()
    assert '[node name="Panel" type="Spatial" parent="."]' in out
    assert '[node name="Button" type="Button" parent="Panel"]' in out
    assert '[node name="Boxer" type="Spatial" parent="."]' in out  # a longer name is not moved
    assert 'from="Panel/Button" to="."' in out and 'from="Boxer" to="Panel"' in out
    assert "Box" not in out.replace("Boxer", "")
