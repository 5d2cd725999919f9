"""Real Godot 3: scenes written here open in the engine, engine-saved scenes round-trip,
script errors come back with the right line, hangs are killed."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from agentsdk_godot import (
    Constructor,
    GodotEngine,
    GodotProject,
    HarnessJob,
    SceneFile,
    parse_resource_text,
)

SAVE_SCRIPT = """\
extends SceneTree

func _init():
	var root = Spatial.new()
	root.name = "Main"
	var box = MeshInstance.new()
	box.name = "Box"
	var mesh = CubeMesh.new()
	mesh.size = Vector3(1, 2, 3)
	var material = SpatialMaterial.new()
	material.albedo_color = Color(1, 0.2, 0.1, 1)
	mesh.material = material
	box.mesh = mesh
	box.transform = Transform(Basis(Vector3(0, 1, 0), 0.5), Vector3(1, 2, 3))
	box.set_script(load("res://spin.gd"))
	box.add_to_group("spinners", true)
	root.add_child(box)
	box.owner = root
	var label = Label.new()
	label.name = "Label"
	label.text = "he said \\"hi\\"\\nline two \\\\ é"
	root.add_child(label)
	label.owner = root
	var deep = Spatial.new()
	deep.name = "Deep"
	box.add_child(deep)
	deep.owner = root
	var timer = Timer.new()
	timer.name = "Timer"
	root.add_child(timer)
	timer.owner = root
	timer.connect("timeout", box, "rotate_y", [0.5], CONNECT_PERSIST)
	var packed = PackedScene.new()
	packed.pack(root)
	print("saved ", ResourceSaver.save("res://by_godot.tscn", packed))
	print("saved ", ResourceSaver.save("res://material.tres", material))
	ProjectSettings.set_setting("application/run/main_scene", "res://by_godot.tscn")
	var key = InputEventKey.new()
	key.scancode = KEY_SPACE
	ProjectSettings.set_setting("input/jump", {"deadzone": 0.5, "events": [key]})
	print("saved ", ProjectSettings.save())
	quit()
"""


@pytest.mark.anyio
async def test_scene_saved_by_godot_round_trips(
    engine: GodotEngine, project: GodotProject, tmp_path: Path
) -> None:
    project.write_text("res://spin.gd", "extends MeshInstance\n\nexport var speed = 2.0\n")
    script = tmp_path / "save.gd"
    script.write_text(SAVE_SCRIPT)
    from agentsdk.sandbox import run_process

    saved = await run_process(
        [engine.server, "--path", str(project.path), "-s", str(script)],
        env=engine.env(),
        timeout=30,
    )
    assert saved.stdout.count("saved 0") == 3, saved.stderr
    original = project.file("res://by_godot.tscn").read_text()

    # the .tres and project.godot the engine wrote read back to the same values and text
    material = SceneFile.parse(project.file("res://material.tres").read_text())
    assert material.resource_type == "SpatialMaterial"
    assert material.resource_properties["albedo_color"] == Constructor("Color", (1, 0.2, 0.1, 1))
    written_by_godot = project.file("res://material.tres").read_text()
    assert material.to_text().rstrip("\n") == written_by_godot.rstrip("\n")
    settings = project.settings()
    jump = settings.section("input").properties["jump"]  # type: ignore[union-attr]
    assert jump["events"][0].properties["scancode"] == 32  # type: ignore[index]
    assert parse_resource_text(settings.to_text(config=True)) == settings
    assert project.main_scene == "res://by_godot.tscn"

    scene = SceneFile.parse(original)
    assert [n.path for n in scene.nodes] == [".", "Box", "Box/Deep", "Label", "Timer"]
    assert scene.node("Label").properties["text"] == 'he said "hi"\nline two \\ é'
    rewritten = scene.to_text()
    assert SceneFile.parse(rewritten) == scene
    assert rewritten == original  # byte for byte, groups, binds and escapes included
    project.write_text("res://rewritten.tscn", rewritten)

    first = await engine.run_harness(
        project.path, HarnessJob(scene="res://by_godot.tscn", frames=1)
    )
    second = await engine.run_harness(
        project.path, HarnessJob(scene="res://rewritten.tscn", frames=1)
    )
    assert first.tree is not None and second.tree is not None
    # same nodes, classes, scripts and non-default values (sub-resources are named after their file)
    assert second.tree.outline().replace("rewritten.tscn", "by_godot.tscn") == first.tree.outline()
    box = second.tree.find("Box")
    assert box is not None and box.script == "res://spin.gd"
    assert box.properties["transform"].startswith("Transform( 0.877583, 0, 0.479426")


@pytest.mark.anyio
async def test_scene_written_here_opens_with_matching_tree(
    engine: GodotEngine, project: GodotProject
) -> None:
    scene = project.new_scene("World", "Spatial")
    mesh = scene.add_sub_resource("CubeMesh", {"size": Constructor("Vector3", (2, 1, 1))})
    scene.add_node("Player", "MeshInstance").properties.update(
        {"mesh": mesh, "translation": Constructor("Vector3", (0, 1.5, 0))}
    )
    scene.add_node("Hand", "Spatial", "Player")
    scene.add_node("Cam", "Camera").properties["current"] = True
    project.write_text("res://player.gd", "extends MeshInstance\n\nexport var speed = 3.5\n")
    scene.attach_script("Player", "res://player.gd")
    project.write_scene("res://world.tscn", scene)

    run = await engine.run_harness(project.path, HarnessJob(scene="res://world.tscn", frames=2))
    assert run.tree is not None, run.stderr
    assert [c.name for c in run.tree.children] == ["Player", "Cam"]
    player = run.tree.find("Player")
    assert (
        player is not None and player.type == "MeshInstance" and player.script == "res://player.gd"
    )
    assert player.properties["speed"] == "3.5"
    assert player.properties["transform"] == "Transform( 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1.5, 0 )"
    assert [c.name for c in player.children] == ["Hand"]
    assert run.errors == []


@pytest.mark.anyio
async def test_syntax_error_comes_back_with_file_and_line(
    engine: GodotEngine, project: GodotProject
) -> None:
    project.write_text(
        "res://bad.gd", "extends Node\n\nfunc _ready():\n\tvar x = 1\n\tif x == 1\n\t\tprint(x)\n"
    )
    errors = await engine.check_script(project.path, "res://bad.gd")
    assert errors[0].kind == "parse_error"
    assert (errors[0].file, errors[0].line) == ("res://bad.gd", 5)
    project.write_text("res://good.gd", "extends Node\n\nfunc _ready():\n\tprint(1)\n")
    assert [
        d for d in await engine.check_script(project.path, "res://good.gd") if d.severity == "error"
    ] == []


@pytest.mark.anyio
async def test_runtime_error_has_line_and_stack(engine: GodotEngine, project: GodotProject) -> None:
    project.write_text(
        "res://crash.gd",
        textwrap.dedent(
            """\
            extends Node

            func _ready():
            \tprint("starting")
            \thelper()

            func helper():
            \tvar thing = null
            \tthing.explode()
            """
        ),
    )
    scene = project.new_scene("Crash", "Node")
    scene.attach_script(".", "res://crash.gd")
    project.write_scene("res://crash.tscn", scene)
    run = await engine.run_harness(project.path, HarnessJob(scene="res://crash.tscn", frames=5))
    assert not run.timed_out
    [error] = run.errors
    assert (error.file, error.line, error.function) == ("res://crash.gd", 9, "helper")
    assert "explode" in error.message
    assert [(f.function, f.line) for f in error.stack] == [("helper", 9), ("_ready", 5)]


@pytest.mark.anyio
async def test_script_that_never_quits_is_killed(
    engine: GodotEngine, project: GodotProject
) -> None:
    project.write_text(
        "res://forever.gd", "extends Node\n\nfunc _ready():\n\twhile true:\n\t\tpass\n"
    )
    scene = project.new_scene("Forever", "Node")
    scene.attach_script(".", "res://forever.gd")
    project.write_scene("res://forever.tscn", scene)
    run = await engine.run_harness(
        project.path, HarnessJob(scene="res://forever.tscn", frames=5), timeout=3
    )
    assert run.timed_out and run.frames is None
    from agentsdk.sandbox import run_process

    # the process group is gone: no godot3-server of this project is left
    left = await run_process(["pgrep", "-f", str(project.path)], timeout=5)
    assert left.stdout.strip() == ""


@pytest.mark.slow
@pytest.mark.anyio
async def test_glb_import_and_instance(engine: GodotEngine, project: GodotProject) -> None:
    source = Path("/usr/share/assimp/models/glTF2/BoxTextured-glTF-Binary/BoxTextured.glb")
    assert source.exists(), "install the Debian package assimp-testmodels"
    target = project.file("assets/box.glb")
    target.parent.mkdir(parents=True)
    target.write_bytes(source.read_bytes())
    broken = project.file("assets/broken.glb")
    broken.write_bytes(b"not a glb file" * 100)
    imported = await engine.import_assets(project.path, [target, broken], timeout=90)
    assert not imported.timed_out
    assert (imported.imported, imported.failed) == ([str(target)], [str(broken)])
    assert any(
        "broken.glb" in d.message or "_parse_glb" in (d.function or "")
        for d in imported.diagnostics
    )
    scene = project.new_scene("Level", "Spatial")
    scene.add_node(
        "Crate", None, instance=scene.ext_resource("res://assets/box.glb", "PackedScene")
    )
    project.write_scene("res://level.tscn", scene)
    run = await engine.run_harness(project.path, HarnessJob(scene="res://level.tscn", frames=1))
    assert run.tree is not None, run.stderr
    crate = run.tree.find("Crate")
    assert crate is not None and crate.type == "Spatial"

    def meshes(node):  # type: ignore[no-untyped-def]
        return (
            [node.type]
            if node.type == "MeshInstance"
            else [m for c in node.children for m in meshes(c)]
        )

    assert meshes(crate) == ["MeshInstance"]
