"""The text resource parser/serializer, without the engine (Godot 3 and Godot 4 formats)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from agentsdk_godot import (
    Constructor,
    ExtResource,
    GodotObject,
    SceneFile,
    StringName,
    SubResource,
    VariantSyntaxError,
    dialect_for,
    format_variant,
    parse_resource_text,
    parse_variant,
    parse_version,
)
from agentsdk_godot.variant import GODOT4_STYLE


def test_variant_literals_parse_to_typed_values() -> None:
    assert parse_variant("Vector3( 1, -2.5, 3e+2 )") == Constructor("Vector3", (1, -2.5, 300.0))
    assert parse_variant('"he said \\"hi\\"\nline2 \\\\ é"') == 'he said "hi"\nline2 \\ é'
    assert parse_variant("ExtResource( 3 )") == ExtResource(3)
    assert parse_variant('SubResource("2_ab3cd")') == SubResource("2_ab3cd")
    assert parse_variant('[ 1, 2.0, "x", null, true, { "k": [  ] } ]') == [
        1,
        2.0,
        "x",
        None,
        True,
        {"k": []},
    ]
    assert parse_variant('&"jump"') == StringName("jump")
    assert parse_variant("inf_neg") == -math.inf
    obj = parse_variant('Object(InputEventKey,"scancode":65,"pressed":false)')
    assert obj == GodotObject("InputEventKey", {"scancode": 65, "pressed": False})


def test_variant_errors_say_where() -> None:
    with pytest.raises(VariantSyntaxError) as err:
        parse_variant("Vector3( 1, 2\n 3 )")
    assert err.value.line == 2


def test_godot3_and_godot4_spelling() -> None:
    value = [Constructor("Vector3", (1, 0.5, 0)), ExtResource(1)]
    assert format_variant(value) == "[ Vector3( 1, 0.5, 0 ), ExtResource( 1 ) ]"
    four = [Constructor("Vector3", (1, 0.5, 0)), ExtResource("1_abcde")]
    assert format_variant(four, GODOT4_STYLE) == '[Vector3(1, 0.5, 0), ExtResource("1_abcde")]'
    assert (
        format_variant(1.0) == "1.0"
        and format_variant(Constructor("Color", (1.0, 0.2, 0.0, 1.0))) == "Color( 1, 0.2, 0, 1 )"
    )


GODOT4_SCENE = """[gd_scene load_steps=4 format=3 uid="uid://c3k2m4w1r8q7x"]

[ext_resource type="Script" uid="uid://b8k1x2" path="res://player.gd" id="1_q2w3e"]

[sub_resource type="StandardMaterial3D" id="StandardMaterial3D_a1b2c"]
albedo_color = Color(1, 0, 0, 1)

[sub_resource type="BoxMesh" id="BoxMesh_d3e4f"]
material = SubResource("StandardMaterial3D_a1b2c")
size = Vector3(1, 2, 1)

[node name="Main" type="Node3D"]

[node name="Player" type="MeshInstance3D" parent="."]
transform = Transform3D(1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0)
mesh = SubResource("BoxMesh_d3e4f")
script = ExtResource("1_q2w3e")
tags = PackedStringArray("a", "b")
target = NodePath("../Camera")
groups_typed = Array[int]([1, 2])

[node name="Camera" type="Camera3D" parent="."]
"""


def test_godot4_format3_round_trip() -> None:
    scene = SceneFile.parse(GODOT4_SCENE)
    assert scene.format == 3 and scene.header_extra["uid"] == "uid://c3k2m4w1r8q7x"
    player = scene.node("Player")
    assert player.properties["script"] == ExtResource("1_q2w3e")
    assert player.properties["groups_typed"] == Constructor("Array[int]", ([1, 2],))
    text = scene.to_text(GODOT4_STYLE)
    assert text == GODOT4_SCENE
    added = SceneFile.parse(text)
    ref = added.ext_resource("res://enemy.gd", "Script")
    assert isinstance(ref.id, str) and ref.id.startswith("2_")


def test_godot4_command_lines_and_version() -> None:
    four = dialect_for(4)
    project, script = Path("/p"), Path("/tmp/h.gd")
    assert four.headless_argv("godot", project, script, debug=False) == [
        "godot",
        "--headless",
        "--path",
        "/p",
        "--script",
        "/tmp/h.gd",
    ]
    assert four.check_argv("godot", project, "res://a.gd") == [
        "godot",
        "--headless",
        "--path",
        "/p",
        "--check-only",
        "--script",
        "res://a.gd",
    ]
    assert four.import_argv("godot", project) == (
        ["godot", "--headless", "--path", "/p", "--import"],
        True,
    )
    assert (
        four.class_name("Spatial") == "Node3D" and dialect_for(3).class_name("Node3D") == "Spatial"
    )
    version = parse_version("4.3.stable.official.77dcf97d8\n")
    assert (version.major, version.minor) == (4, 3)


def test_project_godot_config_round_trip() -> None:
    text = (
        "; Engine configuration file.\n\nconfig_version=4\n\n[application]\n\n"
        'config/name="T"\nrun/main_scene="res://main.tscn"\n\n[input]\n\n'
        'jump={\n"deadzone": 0.5,\n"events": [ Object(InputEventKey,"scancode":32) ]\n}\n'
    )
    doc = parse_resource_text(text)
    assert doc.section("application").properties["run/main_scene"] == "res://main.tscn"  # type: ignore[union-attr]
    assert parse_resource_text(doc.to_text(config=True)) == doc


def test_sub_resources_are_written_before_their_users() -> None:
    scene = SceneFile.new_scene("Main", "Spatial")
    mesh = scene.add_sub_resource("CubeMesh", {})
    scene.add_node("Box", "MeshInstance").properties["mesh"] = mesh
    material = scene.add_sub_resource("SpatialMaterial", {})
    scene.sub_resource(mesh).properties["material"] = material
    text = scene.to_text()
    assert text.index('type="SpatialMaterial" id=2') < text.index('type="CubeMesh" id=1')


def test_godot4_helper_scripts_are_gdscript2() -> None:
    four, three = dialect_for(4), dialect_for(3)
    assert "TCPServer.new()" in four.helper_script("bridge.gd")
    assert "func _initialize()" in four.helper_script("harness.gd")
    assert "TCP_Server.new()" in three.helper_script("bridge.gd")
    # class info: the same answer from each generation's own API (types by type_string in 4)
    info4, info3 = four.helper_script("classinfo.gd"), three.helper_script("classinfo.gd")
    assert "func _initialize()" in info4 and 'type_string(prop["type"])' in info4
    assert "ClassDB.can_instantiate" in info4 and "ClassDB.can_instance" in info3
    for key in ('"types"', '"resources"', '"enums"', '"inherits"', '"colours"'):
        assert key in info4 and key in info3
    assert four.game_argv("godot", Path("/p"), debug=True) == [
        "godot",
        "--headless",
        "--path",
        "/p",
        "--debug",
    ]
