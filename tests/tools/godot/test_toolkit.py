"""GodotToolkit through its tools, the way a model calls them (real Godot 3)."""

from __future__ import annotations

import io
import re
from collections.abc import AsyncIterator

import pytest
from agentsdk.testing import ScriptedModel
from agentsdk_godot import GodotEngine, GodotToolkit
from godot_calls import call
from PIL import Image as PILImage

from agentsdk import Agent, ToolCallPart

SPIN = "extends Spatial\n\nfunc _process(delta):\n\trotate_y(delta)\n"


@pytest.fixture
async def toolkit(engine: GodotEngine) -> AsyncIterator[GodotToolkit]:
    async with GodotToolkit(engine=GodotEngine(renderer="GLES2"), groups="all") as tk:
        yield tk


def test_tool_names() -> None:
    names = {t.name for t in GodotToolkit(groups="all").tools()}
    assert {
        "create_scene",
        "add_node",
        "set_property",
        "attach_script",
        "write_script",
        "import_asset",
        "scene_tree",
        "run_project",
        "screenshot",
        "game_tree",
        "game_set",
        "game_input",
        "game_screenshot",
    } <= names


@pytest.mark.anyio
async def test_authoring_tools_build_a_scene_the_engine_opens(toolkit: GodotToolkit) -> None:
    created = await call(toolkit, "create_scene", path="res://main.tscn", root_type="Spatial")
    assert not created.is_error, created.text
    added = await call(
        toolkit,
        "add_node",
        scene="res://main.tscn",
        name="Ball",
        type="MeshInstance",
        properties={"mesh": "SphereMesh()", "translation": "Vector3( 0, 1, 0 )"},
    )
    assert not added.is_error and '"Ball"' in added.text
    bad_value = await call(
        toolkit,
        "set_property",
        scene="res://main.tscn",
        node="Ball",
        property="translation",
        value="Vector3( 0, 1",
    )
    assert bad_value.is_error and "translation is a Vector3: write e.g." in bad_value.text
    missing = await call(
        toolkit,
        "set_property",
        scene="res://main.tscn",
        node="Nope",
        property="visible",
        value="false",
    )
    assert missing.is_error and "no node 'Nope'" in missing.text
    radius = await call(
        toolkit,
        "set_property",
        scene="res://main.tscn",
        node="Ball",
        property="mesh/radius",
        value="0.25",
    )
    assert not radius.is_error, radius.text

    broken = await call(
        toolkit,
        "write_script",
        path="res://spin.gd",
        source="extends Spatial\n\nfunc _process(delta)\n\trotate_y(delta)\n",
    )
    assert broken.is_error and "res://spin.gd:3" in broken.text
    fixed = await call(toolkit, "write_script", path="res://spin.gd", source=SPIN)
    assert not fixed.is_error, fixed.text
    attached = await call(
        toolkit, "attach_script", scene="res://main.tscn", node="Ball", script="res://spin.gd"
    )
    assert not attached.is_error

    tree = await call(toolkit, "scene_tree", scene="res://main.tscn")
    assert not tree.is_error, tree.text
    assert "Ball (MeshInstance) [res://spin.gd]" in tree.text
    assert "SphereMesh" in tree.text


@pytest.mark.anyio
async def test_a_script_is_run_when_attached_or_rewritten_and_its_runtime_error_shows(
    toolkit: GodotToolkit,
) -> None:
    await call(toolkit, "create_scene", path="res://main.tscn", root_type="Spatial")
    await call(toolkit, "add_node", scene="res://main.tscn", name="Box", type="MeshInstance")
    # Parses, fails on the first frame: the local `rotation` hides the node's own (it is Nil).
    shadowed = (
        "extends Spatial\n\nfunc _process(delta):\n"
        "\tvar rotation = rotation + Vector3(0, delta, 0)\n\tset_rotation(rotation)\n"
    )
    attached = await call(
        toolkit,
        "attach_script",
        scene="res://main.tscn",
        node="Box",
        script="res://spin.gd",
        source=shadowed,
    )
    assert attached.is_error, attached.text
    assert "res://spin.gd is saved and it is attached to Box, but it fails when" in attached.text
    assert "res://spin.gd:4: error:" in attached.text and "Nil" in attached.text
    assert "> 4 | \tvar rotation = rotation + Vector3(0, delta, 0)" in attached.text
    assert "hint: res://spin.gd:4 `var rotation = ...rotation...` makes a new" in attached.text
    assert "without `var` the line reads `rotation = rotation + Vector3(0, delta, 0)`" in (
        attached.text
    )
    assert 'call write_script(path="res://spin.gd"' in attached.text
    # it is attached all the same: the fix is to rewrite the script, not to attach it again
    assert "res://spin.gd" in toolkit.project.read_text("res://main.tscn")

    fixed = await call(toolkit, "write_script", path="res://spin.gd", source=SPIN)
    assert not fixed.is_error, fixed.text
    assert '"ran":"ran res://main.tscn for 10 frames: no errors"' in fixed.text

    # A rewrite that breaks it again is caught the same way, naming the scene that runs it.
    broken = await call(toolkit, "write_script", path="res://spin.gd", source=shadowed)
    assert broken.is_error
    assert "res://spin.gd is saved and res://main.tscn runs it on Box, but" in broken.text

    # A script that never returns: the short run is stopped and says why.
    toolkit.run_timeout = 8.0
    endless = await call(
        toolkit,
        "write_script",
        path="res://spin.gd",
        source="extends Spatial\n\nfunc _ready():\n\twhile true:\n\t\tpass\n",
    )
    assert endless.is_error and "did not finish in time" in endless.text, endless.text
    assert "hint:" not in endless.text

    # Errors of another script are named but do not make this call fail.
    toolkit.run_timeout = 60.0
    await call(toolkit, "write_script", path="res://spin.gd", source=shadowed)
    calm = await call(
        toolkit,
        "attach_script",
        scene="res://main.tscn",
        node=".",
        script="res://calm.gd",
        source="extends Spatial\n\nfunc _ready():\n\tpass\n",
    )
    assert not calm.is_error, calm.text
    assert "errors elsewhere: res://spin.gd:4" in calm.text

    # script_check_frames=0 turns the run off.
    toolkit.script_check_frames = 0
    quiet = await call(toolkit, "write_script", path="res://spin.gd", source=shadowed)
    assert not quiet.is_error and '"ran":""' in quiet.text.replace(" ", "")


@pytest.mark.anyio
async def test_a_new_scene_points_at_a_script_no_scene_uses_yet(toolkit: GodotToolkit) -> None:
    # godot/hello-script: the script written first, then the scene; told only "next: add
    # children with add_node(... MeshInstance)", the 1.5B model added a MeshInstance with
    # the script as its mesh. The next step now names the script waiting to be attached.
    source = "extends Node\n\nfunc _ready():\n\tprint('hi')\n"
    await call(toolkit, "write_script", path="res://hello.gd", source=source)
    created = await call(toolkit, "create_scene", path="res://main.tscn", root_type="Node")
    assert not created.is_error, created.text
    attach = 'attach_script(scene=\\"res://main.tscn\\", node=\\".\\", script=\\"res://hello.gd\\")'
    assert (
        "res://hello.gd is written but no scene uses it: attach it with " + attach in created.text
    )
    assert "or add children with add_node(" in created.text
    attached = await call(
        toolkit, "attach_script", scene="res://main.tscn", node=".", script="res://hello.gd"
    )
    assert not attached.is_error, attached.text
    other = await call(toolkit, "create_scene", path="res://level.tscn", root_type="Spatial")
    assert "attach_script" not in other.text and "next: add children with add_node(" in other.text


@pytest.mark.anyio
async def test_run_project_reports_runtime_errors_with_line(toolkit: GodotToolkit) -> None:
    await call(toolkit, "create_scene", path="res://main.tscn", root_type="Node")
    await call(
        toolkit,
        "write_script",
        path="res://boom.gd",
        source="extends Node\n\nfunc _ready():\n\tvar n = null\n\tn.go()\n",
    )
    await call(toolkit, "attach_script", scene="res://main.tscn", node=".", script="res://boom.gd")
    outcome = await call(toolkit, "run_project", frames=5)
    assert outcome.is_error
    assert "res://boom.gd:5: error:" in outcome.text and "go" in outcome.text
    await call(
        toolkit,
        "write_script",
        path="res://boom.gd",
        source="extends Node\n\nfunc _ready():\n\tprint('fine')\n",
    )
    fine = await call(toolkit, "run_project", frames=5)
    assert not fine.is_error and '"ok":true' in fine.text.replace(" ", "")


@pytest.mark.slow
@pytest.mark.anyio
async def test_screenshot_and_live_game_tools(toolkit: GodotToolkit) -> None:
    await call(toolkit, "create_scene", path="res://main.tscn", root_type="Spatial")
    empty = await call(toolkit, "screenshot", frames=2, width=96, height=96)
    assert not empty.is_error and "WARNING: the frame is blank" in empty.text  # no camera yet
    await call(
        toolkit,
        "add_node",
        scene="res://main.tscn",
        name="Box",
        type="MeshInstance",
        properties={"mesh": "CubeMesh()"},
    )
    await call(
        toolkit,
        "set_property",
        scene="res://main.tscn",
        node="Box",
        property="mesh/material",
        value="SpatialMaterial()",
    )
    await call(
        toolkit,
        "add_node",
        scene="res://main.tscn",
        name="Cam",
        type="Camera",
        properties={"translation": "Vector3( 0, 0, 4 )"},
    )
    await call(
        toolkit,
        "add_node",
        scene="res://main.tscn",
        name="Sun",
        type="DirectionalLight",
        properties={"rotation_degrees": "Vector3( -45, 30, 0 )"},
    )
    shot = await call(toolkit, "screenshot", frames=2, width=96, height=96)
    assert not shot.is_error and "blank" not in shot.text
    [image] = shot.images
    assert PILImage.open(io.BytesIO(image.data)).size == (96, 96)
    # the report: the box fills the middle of the frame (a unit cube 4 units away)
    assert "1 of 1 objects visible" in shot.text and "Box: " in shot.text, shot.text
    first, second = (re.search(r"saved as (\S+)", r.text).group(1) for r in (empty, shot))  # type: ignore[union-attr]
    compared = await call(toolkit, "compare_screenshots", first=first, second=second)
    assert not compared.is_error and "similarity (SSIM)" in compared.text
    assert "Box: new, visible" in compared.text and "the frame is no longer blank" in compared.text
    unknown = await call(toolkit, "compare_screenshots", first="nope.png", second=second)
    assert unknown.is_error and "no picture 'nope.png'" in unknown.text

    live = await call(toolkit, "game_tree")
    assert not live.is_error and "Box (MeshInstance)" in live.text
    moved = await call(
        toolkit, "game_set", node="Box", property="translation", value="Vector3( 1, 0, 0 )"
    )
    assert not moved.is_error and "Vector3( 1, 0, 0 )" in moved.text
    unknown = await call(toolkit, "game_input", action="fly", seconds=0.1)
    assert unknown.is_error and "unknown input action fly" in unknown.text
    frame = await call(toolkit, "game_screenshot")
    assert not frame.is_error and len(frame.images) == 1
    assert "blank" not in frame.text  # the lit box is in the live frame
    assert "1 of 1 objects visible" in frame.text and "Box: " in frame.text, frame.text
    # the game runs on after the passes, with its materials back
    assert "material_override" not in (await call(toolkit, "game_tree")).text
    pid = toolkit._game.pid if toolkit._game else None
    assert pid is not None
    await toolkit.close()
    from agentsdk.sandbox import pid_alive

    assert not pid_alive(pid)


@pytest.mark.anyio
async def test_agent_run_with_scripted_model(engine: GodotEngine) -> None:
    model = ScriptedModel(
        [
            ToolCallPart(
                name="create_scene", arguments={"path": "res://level.tscn", "root_type": "Spatial"}
            ),
            ToolCallPart(
                name="add_node",
                arguments={
                    "scene": "res://level.tscn",
                    "name": "Crate",
                    "type": "MeshInstance",
                    "properties": {"mesh": "CubeMesh()"},
                },
            ),
            ToolCallPart(name="scene_tree", arguments={"scene": "res://level.tscn"}),
            "The level has a crate.",
        ]
    )
    agent = Agent(model=model, tools=[GodotToolkit(engine=GodotEngine())])
    result = await agent.run("Make a level with a crate")
    assert result.output == "The level has a crate."
    tool_texts = [
        p.parts[0].text  # type: ignore[union-attr]
        for m in result.messages
        if m.role == "tool"
        for p in m.parts
    ]
    assert "Crate (MeshInstance)" in tool_texts[-1]


@pytest.mark.slow
@pytest.mark.anyio
async def test_import_asset_tool_instances_a_glb(toolkit: GodotToolkit) -> None:
    await call(toolkit, "create_scene", path="res://level.tscn", root_type="Spatial")
    source = "/usr/share/assimp/models/glTF2/BoxTextured-glTF-Binary/BoxTextured.glb"
    done = await call(
        toolkit, "import_asset", source=source, scene="res://level.tscn", name="Crate"
    )
    assert not done.is_error, done.text
    assert "res://assets/BoxTextured.glb" in done.text
    tree = await call(toolkit, "scene_tree", scene="res://level.tscn")
    assert "Crate (Spatial)" in tree.text and "(MeshInstance)" in tree.text
    missing = await call(toolkit, "import_asset", source="/nonexistent/thing.glb")
    assert missing.is_error and "does not exist" in missing.text


@pytest.mark.anyio
async def test_toolkit_found_by_entry_point_name() -> None:
    model = ScriptedModel(
        [
            ToolCallPart(
                name="create_scene", arguments={"path": "res://a.tscn", "root_type": "Node2D"}
            ),
            "done",
        ]
    )
    result = await Agent(model=model, tools=["godot"]).run("make a 2D scene")
    [tool_message] = [m for m in result.messages if m.role == "tool"]
    [part] = tool_message.parts
    assert not part.is_error and '"scene":"res://a.tscn"' in part.parts[0].text  # type: ignore[union-attr]


def test_tool_groups_core_by_default() -> None:
    core = [t.name for t in GodotToolkit().tools()]
    assert core == [
        "create_scene",
        "add_node",
        "set_property",
        "remove_node",
        "write_script",
        "attach_script",
        "scene_tree",
        "run_project",
        "screenshot",
        "fit_view",
    ]
    checked = [t.name for t in GodotToolkit(groups=["core", "check"]).tools()]
    assert checked[len(core) :] == [
        "measure",
        "assert_in_frame",
        "assert_rests_on",
        "assert_overlap",
        "assert_distance",
        "compare_screenshots",
    ]
    assert len(GodotToolkit(groups="all").tools()) == 22
    with pytest.raises(ValueError, match="unknown tool group 'physics'; groups: core, check"):
        GodotToolkit(groups=["physics"])


def test_optional_arguments_are_plain_types_in_the_schemas() -> None:
    # no `anyOf [..., null]`: the schemas go into a small model's prompt; omitted means None
    for found in GodotToolkit(groups="all").tools():
        for name, schema in found.parameters["properties"].items():
            assert "anyOf" not in schema, (found.name, name, schema)
    [attach] = [t for t in GodotToolkit().tools() if t.name == "attach_script"]
    assert attach.parameters["properties"]["source"]["type"] == "string"
    assert "source" not in attach.parameters["required"]


@pytest.mark.anyio
async def test_reset_gives_a_fresh_empty_project(engine: GodotEngine, tmp_path) -> None:  # type: ignore[no-untyped-def]
    async with GodotToolkit(engine=engine) as toolkit:
        await call(toolkit, "create_scene", path="res://main.tscn")
        saves = engine.user_data_dir / "xdg_data_home" / "godot" / "app_userdata" / "x"
        saves.mkdir(parents=True)
        (saves / "save.dat").write_text("progress")
        folder = toolkit.project.path
        await toolkit.reset()
        assert toolkit.project.path == folder and toolkit.project.scenes() == []
        assert toolkit.project.main_scene is None and not saves.exists()
        created = await call(toolkit, "create_scene", path="res://level.tscn")
        assert not created.is_error and toolkit.project.main_scene == "res://level.tscn"
    mine = tmp_path / "mine"
    async with GodotToolkit(mine, engine=engine) as toolkit:
        await call(toolkit, "create_scene", path="res://keep.tscn")
        await toolkit.reset()
        assert (mine / "keep.tscn").exists()  # a folder you gave is never emptied


@pytest.mark.slow
@pytest.mark.anyio
async def test_framing_an_imported_model_from_its_measured_bounds(toolkit: GodotToolkit) -> None:
    """A third-party glTF (Debian's assimp test models): measure it, aim a camera at it from its
    bounds alone, and the screenshot's report sees it as one object, whole, in frame."""
    import json
    import math

    source = "/usr/share/assimp/models/glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb"
    await call(toolkit, "create_scene", path="res://main.tscn", root_type="Spatial")
    done = await call(
        toolkit, "import_asset", source=source, scene="res://main.tscn", name="Engine"
    )
    assert not done.is_error, done.text
    bounds = await toolkit.measurements("res://main.tscn")
    engine = bounds.node("Engine")
    size, centre = engine.size, engine.centre
    assert min(size) > 0 and len([n for n in bounds.nodes if n.path.startswith("Engine/")]) > 10
    # back off along +z until the bounding sphere fits the vertical field of view (70 degrees)
    radius = math.dist(engine.min, engine.max) / 2  # type: ignore[arg-type]
    distance = radius / math.sin(math.radians(30))
    eye = (centre[0], centre[1], centre[2] + distance)
    await call(
        toolkit,
        "add_node",
        scene="res://main.tscn",
        name="Cam",
        type="Camera",
        properties={
            "translation": f"Vector3( {eye[0]}, {eye[1]}, {eye[2]} )",
            "far": str(distance * 4),
            "current": "true",  # the glTF brings a camera of its own
        },
    )
    await call(toolkit, "add_node", scene="res://main.tscn", name="Sun", type="DirectionalLight")
    framed = json.loads((await call(toolkit, "assert_in_frame", node="Engine")).text)
    assert framed["passed"], framed
    shot = await call(toolkit, "screenshot", frames=2, width=160, height=160)
    assert not shot.is_error, shot.text
    line = next(x for x in shot.text.splitlines() if x.startswith("Engine:"))
    assert "cut off" not in line and "1 of 1 objects visible" in shot.text, shot.text
    assert shot.text.splitlines()[1].startswith("view Cam:")


@pytest.mark.anyio
async def test_what_the_engine_would_ignore_is_refused_and_nothing_is_written(
    toolkit: GodotToolkit,
) -> None:
    await call(toolkit, "create_scene", path="res://main.tscn", root_type="Spatial")
    again = await call(toolkit, "create_scene", path="res://main.tscn")  # the same: no change
    assert not again.is_error and "unchanged" in again.text
    other = await call(toolkit, "create_scene", path="res://main.tscn", root_type="Node")
    assert other.is_error and "already exists" in other.text
    cube = await call(toolkit, "add_node", scene="res://main.tscn", name="Box", type="Cube")
    assert (
        cube.is_error and "Godot has no class 'Cube'" in cube.text and "MeshInstance" in cube.text
    )
    mesh = await call(toolkit, "add_node", scene="res://main.tscn", name="Box", type="CubeMesh")
    assert mesh.is_error and 'give it mesh = "CubeMesh()"' in mesh.text
    await call(
        toolkit,
        "add_node",
        scene="res://main.tscn",
        name="Box",
        type="MeshInstance",
        properties={"mesh": "CubeMesh()"},
    )
    before = toolkit.project.file("res://main.tscn").read_bytes()

    async def set_(node: str, prop: str, value: str):  # type: ignore[no-untyped-def]
        return await call(
            toolkit, "set_property", scene="res://main.tscn", node=node, property=prop, value=value
        )

    colour = await set_("Box", "base_color", "Color( 1, 0, 0, 1 )")
    assert colour.is_error and "MeshInstance has no property 'base_color'" in colour.text
    assert "mesh/material/albedo_color" in colour.text
    radius = await set_("Box", "mesh/radius", "0.5")
    assert radius.is_error and "CubeMesh has no property 'radius'" in radius.text
    typo = await set_("Box", "translaton", "Vector3( 0, 1, 0 )")
    assert typo.is_error and "Did you mean translation" in typo.text
    wrong_kind = await set_("Box", "material_override", "CubeMesh()")
    assert wrong_kind.is_error and "material_override cannot hold a CubeMesh" in wrong_kind.text
    number = await set_("Box", "translation", "5")
    assert number.is_error and "translation is a Vector3 of 3 numbers, not 1" in number.text
    bogus = await set_("Box", "mesh", "Cube()")
    assert bogus.is_error and "Godot has no class 'Cube' for a new resource" in bogus.text
    assert toolkit.project.file("res://main.tscn").read_bytes() == before  # nothing written

    # what the engine does take: surface slots, slashed theme properties, a script's variables
    assert not (await set_("Box", "material/0", "SpatialMaterial()")).is_error
    await call(toolkit, "add_node", scene="res://main.tscn", name="Hud", type="Label")
    assert not (await set_("Hud", "custom_colors/font_color", "Color( 1, 1, 0, 1 )")).is_error
    await call(
        toolkit,
        "write_script",
        path="res://spin.gd",
        source="extends MeshInstance\n\nexport var speed = 1.0\n",
    )
    await call(
        toolkit, "attach_script", scene="res://main.tscn", node="Box", script="res://spin.gd"
    )
    assert not (await set_("Box", "speed", "2.5")).is_error
    sped = await set_("Box", "sped", "2.5")
    assert sped.is_error and "MeshInstance (with its script) has no property 'sped'" in sped.text
    assert "Did you mean speed" in sped.text
    tree = await call(toolkit, "scene_tree", scene="res://main.tscn")
    assert ".speed = 2.5" in tree.text and "custom_colors/font_color" in tree.text


@pytest.mark.anyio
async def test_set_property_name_renames_the_node_and_what_follows_it(
    toolkit: GodotToolkit,
) -> None:
    # red-target-in-frame, 1.5B model: set_property(node="Box", property="name", value="Target")
    # wrote a `name = "Target"` line under Box, which renamed nothing.
    scene = "res://main.tscn"
    await call(toolkit, "create_scene", path=scene, root_type="Spatial", root_name="Main")
    await call(toolkit, "add_node", scene=scene, name="Box", type="MeshInstance",
               properties={"mesh": "CubeMesh()"})  # fmt: skip
    await call(toolkit, "add_node", scene=scene, name="Arm", type="Spatial", parent="Box")
    await call(toolkit, "add_node", scene=scene, name="Hand", type="Spatial", parent="Box/Arm")
    renamed = await call(
        toolkit, "set_property", scene=scene, node="Box", property="name", value="Target"
    )
    assert not renamed.is_error, renamed.text
    assert "renamed Box to Target" in renamed.text
    doc = toolkit.project.read_scene(scene)
    assert [n.path for n in doc.nodes] == [".", "Target", "Target/Arm", "Target/Arm/Hand"]
    assert "name" not in doc.node("Target").properties
    tree = await call(toolkit, "scene_tree", scene=scene)  # the engine opens it that way
    assert not tree.is_error and "\n  Target (MeshInstance)\n" in tree.text, tree.text
    assert "\n    Arm (Spatial)\n      Hand (Spatial)" in tree.text and "Box" not in tree.text
    taken = await call(
        toolkit, "set_property", scene=scene, node="Target/Arm", property="name", value="Arm"
    )
    assert not taken.is_error  # the same name: nothing moves
    await call(toolkit, "add_node", scene=scene, name="Other", type="Spatial")
    clash = await call(
        toolkit, "set_property", scene=scene, node="Other", property="name", value="Target"
    )
    assert clash.is_error and "a node 'Target' already exists" in clash.text
    bad = await call(
        toolkit, "set_property", scene=scene, node="Other", property="name", value="a/b"
    )
    assert bad.is_error and "invalid node name" in bad.text
    root = await call(
        toolkit, "set_property", scene=scene, node=".", property="name", value="World"
    )
    assert not root.is_error and toolkit.project.read_scene(scene).root.name == "World"


@pytest.mark.anyio
async def test_a_mesh_node_s_colour_is_its_material_s(toolkit: GodotToolkit) -> None:
    """ "color" on a mesh node (which has none) is its material's albedo colour, said so in
    the result; a node with a colour of its own, or none at all, is left to the checks."""
    await call(toolkit, "create_scene", path="res://main.tscn", root_type="Spatial")
    ball = await call(
        toolkit,
        "add_node",
        scene="res://main.tscn",
        name="Ball",
        type="MeshInstance",
        properties={
            "color": "Color( 0, 1, 0, 1 )",  # before the mesh: the order does not matter
            "mesh": "SphereMesh()",
            "translation": "Vector3( 0, 2, 0 )",
        },
    )
    assert not ball.is_error, ball.text
    assert "color was read as material_override/albedo_color" in ball.text
    await call(
        toolkit,
        "add_node",
        scene="res://main.tscn",
        name="Box",
        type="MeshInstance",
        properties={"mesh": "CubeMesh()"},
    )
    red = await call(
        toolkit, "set_property", scene="res://main.tscn", node="Box", property="Colour", value="red"
    )
    assert not red.is_error and "material_override/albedo_color = Color( 1, 0, 0, 1 )" in red.text
    # the engine draws them in those colours
    await call(
        toolkit,
        "add_node",
        scene="res://main.tscn",
        name="Sun",
        type="DirectionalLight",
        properties={"rotation_degrees": "Vector3( -50, 30, 0 )"},
    )
    await call(toolkit, "fit_view", scene="res://main.tscn")
    shot = await call(toolkit, "screenshot", scene="res://main.tscn")
    seen = {line.split(":")[0]: line for line in shot.text.splitlines() if ":" in line}
    assert "green" in seen["Ball"] and "red" in seen["Box"], shot.text
    # a Label's font colour belongs to no material: still refused, with the checks' words
    await call(toolkit, "add_node", scene="res://main.tscn", name="Hud", type="Label")
    font = await call(
        toolkit, "set_property", scene="res://main.tscn", node="Hud", property="color", value="red"
    )
    assert font.is_error and "Label has no property 'color'" in font.text

    # add_node with a property its class lacks adds nothing and gives the call without it
    # (the 1.5B model's Camera "direction", then set_property on the camera never made)
    eye = await call(
        toolkit,
        "add_node",
        scene="res://main.tscn",
        name="Eye",
        type="Camera",
        properties={"direction": "front", "translation": "Vector3( 0, 1, 6 )"},
    )
    assert eye.is_error and eye.text.startswith("Camera has no property 'direction'."), eye.text
    offered = eye.text.split("Nothing was added. To add Eye without direction: ")[1]
    assert offered == (
        'add_node(scene="res://main.tscn", name="Eye", type="Camera", parent=".", '
        'properties={"translation": "Vector3( 0, 1, 6 )"}) (Did you mean projection, '
        "editor_description?)"
    )
    tree = await call(toolkit, "scene_tree", scene="res://main.tscn")
    assert "Eye" not in tree.text
    # made as written, the offered call adds it
    made = await call(
        toolkit,
        "add_node",
        scene="res://main.tscn",
        name="Eye",
        type="Camera",
        parent=".",
        properties={"translation": "Vector3( 0, 1, 6 )"},
    )
    assert not made.is_error and "added Camera Eye: translation = Vector3( 0, 1, 6 )" in made.text


class _Godot4Version:
    """Only what starting the toolkit asks of its engine: the version of a real Godot 4."""

    async def version(self):  # type: ignore[no-untyped-def]
        from agentsdk_godot.versions import parse_version

        return parse_version("4.2.1.stable.official.b09f793f5")


@pytest.mark.anyio
async def test_instructions_speak_of_the_godot_the_toolkit_found(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from agentsdk_godot.toolkit_base import instructions_for
    from agentsdk_godot.versions import dialect_for

    GODOT4_INSTRUCTIONS = instructions_for(dialect_for(4))

    assert "Godot 3" in str(GodotToolkit.instructions)
    toolkit = GodotToolkit(tmp_path, engine=_Godot4Version())  # type: ignore[arg-type]
    model = ScriptedModel(["Done."])
    await Agent(model, tools=[toolkit]).run("Add a box.")
    assert toolkit.instructions == GODOT4_INSTRUCTIONS
    assert model.requests[0].messages[0].text == GODOT4_INSTRUCTIONS  # what the model read
    assert "config_version=5" in (tmp_path / "project.godot").read_text()  # a Godot 4 project
