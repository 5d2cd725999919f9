"""Property values as a model writes them, read as the type the engine says the property has
(real Godot 3): bare text for a String, a NodePath or an enum name, colour names and codes,
lists of numbers for vectors; what cannot be that type is refused with the type and an example,
and nothing is written. Also: resources made on the way of a property path, attach_script with
its source, and errors that show the script lines they are about."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator

import numpy as np
import pytest
from agentsdk_godot import GodotEngine, GodotToolkit, HarnessJob
from agentsdk_godot.values import ValueTypeError, hex_colour, typed_value
from agentsdk_godot.variant import Constructor, format_variant, parse_variant
from godot_calls import call
from PIL import Image as PILImage

MAIN = "res://main.tscn"
UI = "res://ui.tscn"


@pytest.fixture
async def toolkit(engine: GodotEngine) -> AsyncIterator[GodotToolkit]:
    async with GodotToolkit(engine=engine, groups="all") as tk:
        yield tk


async def engine_says(tk: GodotToolkit, scene: str, expressions: list[str]) -> list[str]:
    """What the engine prints for GDScript expressions about `scene` (its root is `s`), from a
    probe scene that instances it: the scene itself is left as the tools wrote it."""
    project = tk.project
    probe = project.new_scene("Probe", "Node")
    probe.add_node("S", None, ".", instance=probe.ext_resource(scene, "PackedScene"))
    body = "".join(f'\tprint("SAYS ", {e})\n' for e in expressions)
    project.write_text("res://probe.gd", f"extends Node\n\nfunc _ready():\n\tvar s = $S\n{body}")
    probe.attach_script(".", "res://probe.gd")
    project.write_scene("res://probe.tscn", probe)
    run = await tk.engine.run_harness(
        project.path, HarnessJob(scene="res://probe.tscn", frames=2), timeout=60
    )
    assert not run.errors, run.errors
    return [line.split("SAYS ", 1)[1] for line in run.stdout.splitlines() if "SAYS " in line]


# ---------- strings, node paths, enums


@pytest.mark.anyio
async def test_bare_text_of_a_string_property_is_that_text_in_the_engine(
    toolkit: GodotToolkit,
) -> None:
    await call(toolkit, "create_scene", path=UI, root_type="Control")
    texts = {
        "Bare": "Score: 0",  # what the 0.5B model sent, refused before as 'unknown identifier'
        "Number": "42",  # stored as 42 before: a Label shows nothing for a number
        "Quotes": 'He said "hi" \\o/',
        "Lines": "Line 1\nLine 2",
    }
    for name, text in texts.items():
        added = await call(
            toolkit, "add_node", scene=UI, name=name, type="Label", properties={"text": text}
        )
        assert not added.is_error, added.text
    quoted = await call(
        toolkit,
        "add_node",
        scene=UI,
        name="Quoted",
        type="Label",
        properties={"text": '"Score: 0"'},
    )
    assert not quoted.is_error and 'text = \\"Score: 0\\"' in quoted.text  # a literal still works
    said = await engine_says(
        toolkit, UI, [f"s.get_node('{n}').text.c_escape()" for n in [*texts, "Quoted"]]
    )
    expected = [
        t.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") for t in texts.values()
    ]
    assert said == [*expected, "Score: 0"]


@pytest.mark.anyio
async def test_the_label_draws_the_bare_text(toolkit: GodotToolkit) -> None:
    await call(toolkit, "create_scene", path=UI, root_type="Control")
    for name, text in (("Shown", "Score: 0"), ("Empty", "")):
        await call(
            toolkit,
            "add_node",
            scene=UI,
            name=name,
            type="Label",
            properties={"text": text, "rect_position": "[8, 8]" if name == "Shown" else "[8, 40]"},
        )
    run = await toolkit.engine.run_harness(
        toolkit.project.path,
        HarnessJob(scene=UI, frames=3, capture_frames=[2]),
        window=True,
        width=128,
        height=64,
        timeout=90,
    )
    with PILImage.open(io.BytesIO(run.images[0])) as img:
        light = np.asarray(img.convert("L")) > 160
    top, bottom = int(light[:32].sum()), int(light[32:].sum())
    assert top > 30, "the label with 'Score: 0' draws light text pixels"
    assert bottom == 0, "the label with no text draws nothing"


@pytest.mark.anyio
async def test_node_paths_enum_names_and_vectors_from_plain_values(toolkit: GodotToolkit) -> None:
    await call(toolkit, "create_scene", path=MAIN, root_type="Spatial")
    await call(
        toolkit,
        "add_node",
        scene=MAIN,
        name="Box",
        type="MeshInstance",
        properties={"mesh": "CubeMesh()", "translation": "2, 1, -3"},
    )
    follow = await call(
        toolkit,
        "add_node",
        scene=MAIN,
        name="Follow",
        type="RemoteTransform",
        properties={"remote_path": "../Box", "scale": "[1, 2, 3]"},
    )
    assert not follow.is_error, follow.text
    assert 'remote_path = NodePath(\\"../Box\\")' in follow.text
    label = await call(
        toolkit,
        "add_node",
        scene=MAIN,
        name="Hud",
        type="Label",
        properties={"align": "center", "valign": "Bottom"},
    )
    assert not label.is_error and "align = 1" in label.text, label.text
    shadow = await call(
        toolkit,
        "set_property",
        scene=MAIN,
        node="Box",
        property="cast_shadow",
        value="shadows only",
    )
    assert not shadow.is_error, shadow.text
    said = await engine_says(
        toolkit,
        MAIN,
        [
            "s.get_node('Box').translation",
            "s.get_node('Follow').remote_path",
            "s.get_node('Follow').get_node(s.get_node('Follow').remote_path).name",
            "s.get_node('Follow').scale",
            "s.get_node('Hud').align == Label.ALIGN_CENTER",
            "s.get_node('Hud').valign == Label.VALIGN_BOTTOM",
            "s.get_node('Box').cast_shadow == GeometryInstance.SHADOW_CASTING_SETTING_SHADOWS_ONLY",
        ],
    )
    assert said == ["(2, 1, -3)", "../Box", "Box", "(1, 2, 3)", "True", "True", "True"]


@pytest.mark.anyio
async def test_values_of_the_wrong_type_are_refused_and_nothing_is_written(
    toolkit: GodotToolkit,
) -> None:
    await call(toolkit, "create_scene", path=MAIN, root_type="Spatial")
    await call(
        toolkit,
        "add_node",
        scene=MAIN,
        name="Box",
        type="MeshInstance",
        properties={"mesh": "CubeMesh()"},
    )
    await call(toolkit, "add_node", scene=MAIN, name="Hud", type="Label")
    before = toolkit.project.file(MAIN).read_bytes()

    # the engine would drop each of these silently when it loads the scene
    refused = [
        ("Box", "translation", "up", "translation is a Vector3: write e.g. Vector3( 0, 1, 0 )"),
        ("Box", "translation", "[1, 2]", "translation is a Vector3 of 3 numbers, not 2"),
        ("Box", "translation", "Color( 1, 0, 0, 1 )", "translation is a Vector3, not a Color"),
        ("Box", "visible", "maybe", "visible is a bool"),
        ("Hud", "max_lines_visible", "many", "max_lines_visible is an int, not 'many'"),
        ("Hud", "align", "middle", "one of Left, Center, Right, Fill"),
        ("Hud", "custom_colors/font_color", "blurple", "Godot knows no colour named 'blurple'"),
        ("Box", "material_override", "SphereMesh()", "cannot hold a SphereMesh"),
        ("Box", "mesh", "cube", "mesh is a resource"),
        ("Box", "script", "res://spin.gd", "with attach_script("),
    ]
    for node, prop, value, says in refused:
        outcome = await call(
            toolkit, "set_property", scene=MAIN, node=node, property=prop, value=value
        )
        assert outcome.is_error, f"{prop} = {value} was accepted: {outcome.text}"
        assert says in outcome.text, (prop, value, outcome.text)
    assert toolkit.project.file(MAIN).read_bytes() == before


@pytest.mark.anyio
async def test_literals_the_engine_cannot_load_are_refused(toolkit: GodotToolkit) -> None:
    await call(toolkit, "create_scene", path=MAIN, root_type="Spatial")
    # what the 1.5B model sent: the engine cannot load a scene holding it at all
    bad = "Transform( Vector3( 0, 0, 0 ), Quaternion( 0, 0, 0, 1 ) )"
    crate = await call(
        toolkit,
        "add_node",
        scene=MAIN,
        name="Crate",
        type="MeshInstance",
        properties={"mesh": "CubeMesh()", "transform": bad},
    )
    # it names one transform (an origin and no rotation), so it is stored as the 12 numbers
    assert not crate.is_error, crate.text
    assert "transform = Transform( 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0 )" in crate.text
    # what names none is refused with the form and the simpler way to move a node
    for nothing in ("Transform( Vector3( 0, 2, 0 ) )", "Transform( 1, 0, 0 )"):
        moved = await call(
            toolkit, "set_property", scene=MAIN, node="Crate", property="transform", value=nothing
        )
        assert moved.is_error and "a Transform is 12 numbers" in moved.text
        assert "set translation (Godot 4: position) = Vector3( x, y, z )" in moved.text
    by_hand = toolkit.project.read_scene(MAIN)
    by_hand.add_node("Raw", "MeshInstance").properties["transform"] = parse_variant(
        bad.replace("Quaternion", "Quat")
    )
    toolkit.project.write_scene("res://by_hand.tscn", by_hand)
    run = await toolkit.engine.run_harness(
        toolkit.project.path, HarnessJob(scene="res://by_hand.tscn", frames=1), timeout=60
    )
    assert run.tree is None and any("Expected float" in d.message for d in run.errors)
    # a colour with three numbers gets its alpha (the engine wants four), also in a list
    tinted = await call(
        toolkit,
        "add_node",
        scene=MAIN,
        name="Tint",
        type="MeshInstance",
        properties={"material_override": "SpatialMaterial()"},
    )
    assert not tinted.is_error
    three = await call(
        toolkit,
        "set_property",
        scene=MAIN,
        node="Tint",
        property="material_override/albedo_color",
        value="Color( 1, 0.5, 0 )",
    )
    assert not three.is_error and "Color( 1, 0.5, 0, 1 )" in three.text
    said = await engine_says(toolkit, MAIN, ["s.get_node('Tint').material_override.albedo_color"])
    assert said == ["1,0.5,0,1"]


@pytest.mark.anyio
async def test_script_errors_say_what_they_usually_mean(toolkit: GodotToolkit) -> None:
    async def written(source: str) -> str:
        outcome = await call(toolkit, "write_script", path="res://m.gd", source=source)
        assert outcome.is_error
        return outcome.text

    called = await written("extends Spatial\n\nfunc _ready():\n\tvar m = SpatialMaterial()\n")
    assert "hint: SpatialMaterial is a class: make one with SpatialMaterial.new()" in called
    assert "> 4 | \tvar m = SpatialMaterial()" in called
    assert "hint: Node3D is Spatial in this Godot version" in await written("extends Node3D\n")
    assert "hint: Godot 3 has no @ annotations" in await written(
        "extends Node\n\n@export var speed = 1.0\n"
    )


# ---------- colours


@pytest.mark.anyio
async def test_colour_names_codes_and_lists(toolkit: GodotToolkit) -> None:
    await call(toolkit, "create_scene", path=UI, root_type="Control")
    given = {"Named": "dark green", "Code": "#ff8000", "Short": "#0af", "Listed": "[0.2, 0.4, 0.6]"}
    for name, value in given.items():
        added = await call(
            toolkit, "add_node", scene=UI, name=name, type="ColorRect", properties={"color": value}
        )
        assert not added.is_error, added.text
    said = await engine_says(
        toolkit,
        UI,
        [f"s.get_node('{n}').color.to_html(false)" for n in given]
        + ["s.get_node('Named').color.is_equal_approx(ColorN('darkgreen'))"],
    )
    # 8-bit codes computed here: ff8000 as is, #0af doubled to 00aaff, 0.2/0.4/0.6 * 255 rounded
    listed = "".join(f"{round(c * 255):02x}" for c in (0.2, 0.4, 0.6))
    assert said[1:4] == ["ff8000", "00aaff", listed]
    assert said[4] == "True"


def test_hex_codes_and_lists_without_the_engine() -> None:
    assert hex_colour("#ff8000") == Constructor("Color", (1, round(128 / 255, 6), 0, 1))
    assert hex_colour("00000080") == Constructor("Color", (0, 0, 0, round(128 / 255, 6)))
    assert hex_colour("red") is None and hex_colour("#12345") is None
    assert format_variant(typed_value("(2, 1, -3)", "p", "Vector3")) == "Vector3( 2, 1, -3 )"
    assert format_variant(typed_value("[1, 0, 0]", "c", "Color")) == "Color( 1, 0, 0, 1 )"
    assert typed_value("bright", "light", "int", enum="Off:0,Dim:2,Bright:4") == 4
    assert typed_value("dim", "light", "int", enum="Off:0,Dim:2,Bright:4") == 2
    with pytest.raises(ValueTypeError, match="one of Off:0, Dim:2, Bright:4"):
        typed_value("max", "light", "int", enum="Off:0,Dim:2,Bright:4")
    # Godot 4 spellings on Godot 3
    moved = typed_value(
        "Transform3D( 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 5 )",
        "transform",
        "Transform",
        translate={"Transform3D": "Transform"}.get,  # type: ignore[arg-type]
    )
    assert isinstance(moved, Constructor) and moved.name == "Transform"


# ---------- resources made on the way


@pytest.mark.anyio
async def test_a_material_is_made_on_the_way_to_its_colour(toolkit: GodotToolkit) -> None:
    await call(toolkit, "create_scene", path=MAIN, root_type="Spatial")
    for name in ("Box", "Ball"):
        await call(
            toolkit,
            "add_node",
            scene=MAIN,
            name=name,
            type="MeshInstance",
            properties={"mesh": "CubeMesh()" if name == "Box" else "SphereMesh()"},
        )
    red = await call(
        toolkit,
        "set_property",
        scene=MAIN,
        node="Box",
        property="mesh/material/albedo_color",
        value="red",
    )
    assert not red.is_error, red.text
    assert "mesh/material is a new SpatialMaterial" in red.text
    blue = await call(
        toolkit,
        "set_property",
        scene=MAIN,
        node="Ball",
        property="material_override/albedo_color",
        value="Color( 0, 0, 1, 1 )",
    )
    assert not blue.is_error and "material_override is a new SpatialMaterial" in blue.text
    said = await engine_says(
        toolkit,
        MAIN,
        [
            "s.get_node('Box').mesh.material.get_class()",
            "s.get_node('Box').mesh.material.albedo_color",
            "s.get_node('Ball').material_override.get_class()",
            "s.get_node('Ball').material_override.albedo_color",
        ],
    )
    assert said == ["SpatialMaterial", "1,0,0,1", "SpatialMaterial", "0,0,1,1"]


@pytest.mark.anyio
async def test_what_cannot_be_made_on_the_way_says_what_to_choose(toolkit: GodotToolkit) -> None:
    await call(toolkit, "create_scene", path=MAIN, root_type="Spatial")
    await call(toolkit, "add_node", scene=MAIN, name="Empty", type="MeshInstance")
    await call(
        toolkit,
        "add_node",
        scene=MAIN,
        name="Box",
        type="MeshInstance",
        properties={"mesh": "CubeMesh()"},
    )
    before = toolkit.project.file(MAIN).read_bytes()

    async def set_(node: str, prop: str) -> str:
        outcome = await call(
            toolkit,
            "set_property",
            scene=MAIN,
            node=node,
            property=prop,
            value="Vector3( 1, 1, 1 )",
        )
        assert outcome.is_error, outcome.text
        return outcome.text

    # several meshes have a size: which shape is the user's choice
    many = await set_("Empty", "mesh/size")
    assert "mesh is empty and 4 kinds of resource have size" in many
    assert '"CubeMesh()", "PlaneMesh()", "PrismMesh()", "QuadMesh()"' in many
    typo = await set_("Box", "mesh/material/albedo_colour")
    assert "none has a property 'albedo_colour'. Did you mean albedo_color" in typo
    assert "translation is a Vector3, not a resource" in await set_("Box", "translation/x")
    assert toolkit.project.file(MAIN).read_bytes() == before  # no half-made material left


# ---------- scripts


@pytest.mark.anyio
async def test_attach_script_writes_its_source_and_refuses_a_script_of_another_class(
    toolkit: GodotToolkit,
) -> None:
    await call(toolkit, "create_scene", path=MAIN, root_type="Spatial")
    await call(
        toolkit,
        "add_node",
        scene=MAIN,
        name="Box",
        type="MeshInstance",
        properties={"mesh": "CubeMesh()"},
    )
    missing = await call(toolkit, "attach_script", scene=MAIN, node="Box", script="res://spin.gd")
    assert missing.is_error and "give its GDScript as source" in missing.text
    broken = await call(
        toolkit,
        "attach_script",
        scene=MAIN,
        node="Box",
        script="res://spin.gd",
        source="extends MeshInstance\n\nfunc _process(delta)\n\trotate_y(delta)\n",
    )
    assert broken.is_error and "res://spin.gd:3" in broken.text and "Not attached" in broken.text
    assert "> 3 | func _process(delta)" in broken.text
    assert "script" not in toolkit.project.read_text(MAIN)
    spin = await call(
        toolkit,
        "attach_script",
        scene=MAIN,
        node="Box",
        script="res://spin.gd",
        source="extends MeshInstance\n\nfunc _process(delta):\n\trotate_y(delta)\n",
    )
    assert not spin.is_error and "written and attached" in spin.text, spin.text
    said = await engine_says(toolkit, MAIN, ["s.get_node('Box').get_script().resource_path"])
    assert said == ["res://spin.gd"]

    flat = "extends Node2D\n\nfunc _ready():\n\tprint('flat')\n"
    refused = await call(
        toolkit, "attach_script", scene=MAIN, node="Box", script="res://flat.gd", source=flat
    )
    assert refused.is_error
    assert "res://flat.gd cannot run on Box (a MeshInstance): it extends Node2D" in refused.text
    # rewriting a script a node runs into one of another class is refused the same way
    rewrite = await call(toolkit, "write_script", path="res://spin.gd", source=flat)
    assert rewrite.is_error
    assert "res://main.tscn runs it on Box (a MeshInstance) and it extends Node2D" in rewrite.text
    # what the engine itself does with it: attached by hand, the scene fails when it is played
    by_hand = toolkit.project.read_scene(MAIN)
    by_hand.attach_script("Box", "res://flat.gd")
    toolkit.project.write_scene("res://by_hand.tscn", by_hand)
    run = await toolkit.engine.run_harness(
        toolkit.project.path, HarnessJob(scene="res://by_hand.tscn", frames=2), timeout=60
    )
    assert any("inherits from native type 'Node2D'" in d.message for d in run.errors), run.errors


@pytest.mark.anyio
async def test_run_errors_show_the_lines_they_are_about(toolkit: GodotToolkit) -> None:
    project = toolkit.project
    scene = project.new_scene("Main", "Control")
    scene.add_node("Score", "Label")
    project.write_text(
        "res://main.gd",
        'extends Control\n\nfunc _ready():\n\tget_node("Scoreboard").text = "ready"\n',
    )
    scene.attach_script(".", "res://main.gd")
    project.write_scene(MAIN, scene)
    project.main_scene = MAIN
    missing_node = await call(toolkit, "run_project", frames=3)
    assert missing_node.is_error
    assert '> 4 | \tget_node("Scoreboard").text = "ready"' in missing_node.text
    assert "nodes of res://main.tscn: ., Score" in missing_node.text
    by_class = await call(
        toolkit, "set_property", scene=MAIN, node="Label", property="text", value="ready"
    )  # what the 1.5B model sent four times
    assert by_class.is_error
    assert "no node 'Label' in the scene (nodes: ., Score); the only Label is node=\"Score\"" in (
        by_class.text
    )

    project.write_text("res://main.gd", "extends Control\n\nfunc _ready()\n\tprint('x')\n")
    parse = await call(toolkit, "run_project", frames=3)
    assert parse.is_error
    errors = [line for line in parse.text.splitlines() if ": error:" in line]
    assert errors == ["res://main.gd:3: error: ':' expected at end of line."]  # once, not twice
    assert "  1 | extends Control" in parse.text and "> 3 | func _ready()" in parse.text
    # the result ends with the call that fixes a script
    assert parse.text.rstrip().endswith(
        'To fix it, call write_script(path="res://main.gd", source="...") with the whole '
        "corrected script."
    ), parse.text


# ---------- scenes


@pytest.mark.anyio
async def test_scene_calls_say_the_next_call_that_fits(toolkit: GodotToolkit) -> None:
    empty = await call(toolkit, "run_project")
    assert empty.is_error and 'create_scene(path="res://main.tscn", main=true)' in empty.text
    first = await call(toolkit, "create_scene", path=UI, root_type="Control")
    assert 'type=\\"Label\\"' in first.text  # a Control scene's child example is a Label
    again = await call(toolkit, "create_scene", path=UI, root_type="Control")
    assert not again.is_error and "unchanged" in again.text
    await call(toolkit, "add_node", scene=UI, name="Title", type="Label")
    taken = await call(toolkit, "create_scene", path=UI, root_type="Control")
    assert taken.is_error and "already exists (nodes: ., Title)" in taken.text
    twice = await call(toolkit, "add_node", scene=UI, name="Title", type="Label")
    assert twice.is_error and "Title already exists (a Label)" in twice.text
    assert 'set_property(scene="res://ui.tscn", node="Title", ...)' in twice.text  # an error: plain
    source = "extends Control\n\nfunc _ready():\n\tprint('hi')\n"
    unused = await call(toolkit, "write_script", path="res://hi.gd", source=source)
    hint = json.loads(unused.text)["next"]
    assert hint.endswith('attach_script(scene="res://ui.tscn", node=".", script="res://hi.gd")')
    await call(toolkit, "attach_script", scene=UI, node=".", script="res://hi.gd")
    used = await call(toolkit, "write_script", path="res://hi.gd", source=source)
    assert not used.is_error and json.loads(used.text)["next"] == ""
    nowhere = await call(toolkit, "add_node", scene="res://game.tscn", name="X", type="Node")
    assert nowhere.is_error
    for path in ("res://level.tres", "res://level"):  # a scene's file is a .tscn, nothing else
        refused = await call(toolkit, "create_scene", path=path, root_type="Spatial")
        assert refused.is_error and "e.g. res://level.tscn" in refused.text, refused.text
    assert not (toolkit.project.path / "level.tres").exists()
    assert 'create it first with create_scene(path="res://game.tscn")' in nowhere.text
    assert "scenes: res://ui.tscn" in nowhere.text
