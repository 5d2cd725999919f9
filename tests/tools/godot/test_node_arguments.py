"""add_node's `shape`, `color` and `position` on the real Godot 3 engine: the calls new users'
prompts meant (the 1.5B model made a white cube and a camera at the origin of them) build the
scene they ask for, measured and rendered by the engine; 2D nodes take colour and position
by their own properties; what a class cannot take adds nothing and leaves the file as it was."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from agentsdk_godot import Constructor, GodotEngine, GodotToolkit, SubResource
from agentsdk_godot.variant import format_variant
from godot_calls import call

from agentsdk import ToolOutcome

pytestmark = pytest.mark.anyio

SCENE = "res://main.tscn"


async def add(toolkit: GodotToolkit, **args: object) -> ToolOutcome:
    done = await call(toolkit, "add_node", scene=SCENE, **args)
    assert not done.is_error, done.text
    return done


def refuser(toolkit: GodotToolkit, **fixed: object) -> Callable[..., Awaitable[str]]:
    """An add_node caller that asserts the call is refused, adds nothing and leaves the
    scene file as it is now; it returns the refusal."""
    before = toolkit.project.file(SCENE).read_bytes()

    async def refused(**args: object) -> str:
        done = await call(toolkit, "add_node", scene=SCENE, **fixed, **args)
        assert done.is_error, done.text
        assert "Nothing was added." in done.text
        assert toolkit.project.file(SCENE).read_bytes() == before
        return done.text

    return refused


def material_colour(toolkit: GodotToolkit, node: str) -> object:
    """The albedo colour of the node's material_override, as the scene file stores it."""
    doc = toolkit.project.read_scene(SCENE)
    ref = doc.node(node).properties["material_override"]
    assert isinstance(ref, SubResource)
    return doc.sub_resource(ref).properties["albedo_color"]


@pytest.fixture
async def toolkit(engine: GodotEngine) -> AsyncIterator[GodotToolkit]:
    async with GodotToolkit(engine=engine, groups=["core", "check"]) as tk:
        made = await call(tk, "create_scene", path=SCENE, main=True)
        assert not made.is_error, made.text
        yield tk


def test_the_schema_offers_them_as_plain_one_line_arguments() -> None:
    [found] = [t for t in GodotToolkit().tools() if t.name == "add_node"]
    props = found.parameters["properties"]
    assert props["shape"]["type"] == "string" and props["color"]["type"] == "string"
    assert props["position"] == {
        "type": "array",
        "items": {"type": "number"},
        "default": None,
        "description": "[x, y, z] in 3D, [x, y] pixels in 2D.",
    }
    assert "box, sphere, cylinder, cone, capsule or plane" in props["shape"]["description"]
    assert found.parameters["required"] == ["scene", "name", "type"]


async def test_a_red_sphere_and_a_camera_placed_as_asked(toolkit: GodotToolkit) -> None:
    # "Create a main scene with a Camera named Eye at (0, 2, 6), a DirectionalLight named Sun,
    # and a red sphere named Ball at the origin."
    eye = await add(toolkit, name="Eye", type="Camera", position=[0, 2, 6])
    assert "added Camera Eye: translation = Vector3( 0, 2, 6 )" in eye.text
    await add(toolkit, name="Sun", type="DirectionalLight")
    ball = await add(
        toolkit, name="Ball", type="MeshInstance", shape="sphere", color="red", position=[0, 0, 0]
    )
    assert (
        "added MeshInstance Ball: mesh = SphereMesh(), material_override/albedo_color = "
        "Color( 1, 0, 0, 1 ), translation = Vector3( 0, 0, 0 )"
    ) in ball.text, ball.text
    assert material_colour(toolkit, "Ball") == Constructor("Color", (1, 0, 0, 1))

    m = await toolkit.measurements(SCENE)
    assert m.node("Eye").origin == pytest.approx((0, 2, 6))
    assert m.bounded("Ball").centre == pytest.approx((0, 0, 0), abs=1e-4)
    # a SphereMesh of radius 1: 2 high, a little under 2 across (64 x 33 points)
    width, height, depth = m.bounded("Ball").size
    assert height == pytest.approx(2, abs=1e-4) and 1.99 < width <= 2 and 1.99 < depth <= 2
    # the engine draws it red, seen from Eye
    shot = await call(toolkit, "screenshot", frames=2, width=128, height=128)
    seen = {line.split(":")[0]: line for line in shot.text.splitlines() if ":" in line}
    assert "red" in seen["Ball"], shot.text


async def test_a_grey_floor_and_a_yellow_cube_resting_on_it(toolkit: GodotToolkit) -> None:
    # "Build a main scene with a grey box named Floor, 8 by 0.2 by 8, and a yellow cube named
    # Coin resting on it."
    floor = await add(
        toolkit, name="Floor", type="MeshInstance", shape="box", size=[8, 0.2, 8], color="grey"
    )
    # Godot 3 knows the colour as "gray" only: "grey" is read as that
    assert "material_override/albedo_color = Color( 0.75, 0.75, 0.75, 1 )" in floor.text
    assert "mesh/size = Vector3( 8, 0.2, 8 )" in floor.text and "measured size 8 x 0.2 x 8" in (
        floor.text
    )
    coin = await add(
        toolkit, name="Coin", type="MeshInstance", shape="box", color="yellow", rest_on="Floor"
    )
    assert "rests on Floor (top y=0.1)" in coin.text, coin.text
    assert material_colour(toolkit, "Floor") == Constructor("Color", (0.75, 0.75, 0.75, 1))
    assert material_colour(toolkit, "Coin") == Constructor("Color", (1, 1, 0, 1))
    # with a position, resting keeps its x and z; a cone is a cylinder with no top
    cone = await add(
        toolkit, name="Cone", type="MeshInstance", shape="cone", size=[1, 1.5, 1],
        color="#ff8800", position=[2.5, 5, -2], rest_on="Floor",
    )  # fmt: skip
    assert "mesh = CylinderMesh(), mesh/top_radius = 0" in cone.text, cone.text
    assert "mesh/bottom_radius = 0.5, mesh/height = 1.5" in cone.text
    # a shape given as a mesh property too, saying the same, is one mesh
    same = await add(
        toolkit, name="Ball", type="MeshInstance", shape="ball", position=[-2, 1, 0],
        properties={"mesh": "SphereMesh()"},
    )  # fmt: skip
    assert "mesh = SphereMesh(), translation = Vector3( -2, 1, 0 )" in same.text, same.text

    m = await toolkit.measurements(SCENE)
    assert m.bounded("Floor").size == pytest.approx((8, 0.2, 8), abs=1e-4)
    top = m.bounded("Floor").max
    coin_box, cone_box = m.bounded("Coin"), m.bounded("Cone")
    assert top is not None and coin_box.min is not None and cone_box.min is not None
    assert coin_box.min[1] == pytest.approx(top[1], abs=1e-3)  # its bottom at the floor's top
    assert coin_box.size == pytest.approx((2, 2, 2), abs=1e-4)  # a default CubeMesh
    assert coin_box.centre == pytest.approx((0, 1.1, 0), abs=1e-3)  # centred on the floor
    assert m.rests_on("Coin", "Floor", tolerance=0.01).passed
    assert cone_box.size == pytest.approx((1, 1.5, 1), abs=1e-4)
    assert cone_box.min[1] == pytest.approx(top[1], abs=1e-3)
    assert (cone_box.centre[0], cone_box.centre[2]) == pytest.approx((2.5, -2), abs=1e-3)


async def test_2d_nodes_and_lights_take_colour_and_position_by_their_own_properties(
    toolkit: GodotToolkit,
) -> None:
    hud = "res://hud.tscn"
    await call(toolkit, "create_scene", path=hud, root_type="Node")

    async def add_to_hud(**args: object) -> str:
        done = await call(toolkit, "add_node", scene=hud, **args)
        assert not done.is_error, done.text
        return done.text

    label = await add_to_hud(
        name="Score", type="Label", color="yellow", position=[20, 40],
        properties={"text": "Score: 0"},
    )  # fmt: skip
    assert "custom_colors/font_color = Color( 1, 1, 0, 1 ), rect_position = Vector2( 20, 40 )" in (
        label
    )
    panel = await add_to_hud(name="Panel", type="Control", position="10, 300")
    assert "rect_position = Vector2( 10, 300 )" in panel
    world = await add_to_hud(name="World", type="Node2D", position=[100, 200])
    assert "position = Vector2( 100, 200 )" in world
    sprite = await add_to_hud(name="Ship", type="Sprite", parent="World", color="#00ff00")
    assert "modulate = Color( 0, 1, 0, 1 )" in sprite
    lamp = await add_to_hud(name="Lamp", type="OmniLight", color="orange", position=[0, 3, 0])
    assert "light_color = Color( 1, 0.65, 0, 1 ), translation = Vector3( 0, 3, 0 )" in lamp

    # the tree the engine builds from the file (Godot 3 keeps a Control's position as margins)
    tree = await call(toolkit, "scene_tree", scene=hud)
    assert not tree.is_error, tree.text
    lines = tree.text.splitlines()

    def shown(node: str) -> list[str]:
        at = next(i for i, line in enumerate(lines) if line.strip().startswith(f"{node} ("))
        after = lines[at + 1 :]
        end = next((i for i, line in enumerate(after) if not line.strip().startswith(".")), None)
        return [line.strip() for line in after[:end]]

    assert ".custom_colors/font_color = Color( 1, 1, 0, 1 )" in shown("Score")
    assert {".margin_left = 20.0", ".margin_top = 40.0"} <= set(shown("Score"))
    assert {".margin_left = 10.0", ".margin_top = 300.0"} <= set(shown("Panel"))
    assert ".position = Vector2( 100, 200 )" in shown("World")
    assert ".modulate = Color( 0, 1, 0, 1 )" in shown("Ship")
    assert ".light_color = Color( 1, 0.65, 0, 1 )" in shown("Lamp")


async def test_position_as_a_property_is_where_the_class_keeps_it(toolkit: GodotToolkit) -> None:
    # add_node's `position` taught the 1.5B model the word: asked to move Box (godot/move-box)
    # it set "position" on the MeshInstance, which Godot 3 calls translation, turn after turn.
    await add(toolkit, name="Box", type="MeshInstance", shape="box")
    moved = await call(
        toolkit, "set_property", scene=SCENE, node="Box", property="position", value="[2, 1, -3]"
    )
    assert not moved.is_error, moved.text
    assert "translation = Vector3( 2, 1, -3 ) (position was read as translation" in moved.text
    await add(
        toolkit,
        name="Ball",
        type="MeshInstance",
        shape="sphere",
        properties={"position": "[0, 2, 0]"},
    )
    await add(toolkit, name="Panel", type="Control", properties={"position": "[10, 20]"})
    m = await toolkit.measurements(SCENE)
    assert m.bounded("Box").centre == pytest.approx((2, 1, -3), abs=1e-4)
    assert m.bounded("Ball").centre == pytest.approx((0, 2, 0), abs=1e-4)
    panel = toolkit.project.read_scene(SCENE).node("Panel").properties
    assert format_variant(panel["rect_position"], toolkit.project.dialect.style) == (
        "Vector2( 10, 20 )"
    )
    # A class that has a property of that name keeps it (a Node2D's position).
    await add(toolkit, name="Flat", type="Node2D", properties={"position": "[5, 6]"})
    flat = toolkit.project.read_scene(SCENE).node("Flat").properties
    assert "position" in flat and "translation" not in flat


async def test_what_a_class_cannot_take_adds_nothing(toolkit: GodotToolkit) -> None:
    await add(toolkit, name="Box", type="MeshInstance", shape="box")
    refused = refuser(toolkit, name="New")
    head = 'add_node(scene="res://main.tscn", name="New"'
    label = await refused(type="Label", shape="sphere", size=[1, 1, 1])
    assert label == (
        "shape sets a MeshInstance's mesh, and a Label has no mesh. Nothing was added. "
        f'To add New without shape: {head}, type="Label", parent=".")'
    )
    spatial = await refused(type="Spatial", shape="box", color="red")
    assert spatial.endswith(
        f'To add New as a MeshInstance: {head}, type="MeshInstance", parent=".", shape="box", '
        'color="red")'
    ), spatial
    twice = await refused(
        type="MeshInstance", shape="sphere", properties={"mesh": "CubeMesh()", "cast_shadow": "0"}
    )
    assert twice.startswith(
        "shape and properties['mesh'] = 'CubeMesh()' both set the node's mesh: give it once."
    ), twice
    assert twice.endswith(
        f'To add New with shape only: {head}, type="MeshInstance", parent=".", '
        'properties={"cast_shadow": "0"}, shape="sphere")'
    ), twice
    short = await refused(type="Camera", position=[0, 2])
    assert short.startswith(
        "a Camera is a 3D node: its position is [x, y, z] in metres, not [0, 2]."
    ), short
    long = await refused(type="Label", position=[20, 40, 0])
    assert long.startswith(
        "a Label is a Control (2D user interface): its position is [x, y] in pixels, not "
        "[20, 40, 0]."
    ), long
    placed = await refused(
        type="Camera", position=[0, 2, 6], properties={"translation": "Vector3( 0, 1, 6 )"}
    )
    assert "position and properties['translation']" in placed and "give it once" in placed
    colourless = await refused(type="Camera", color="red")
    assert colourless.startswith("a Camera has no colour of its own to set."), colourless
    nowhere = await refused(type="Timer", position=[1, 2, 3])
    assert "a Timer is a node with no place in space: it has no position." in nowhere
    unknown = await refused(type="MeshInstance", shape="pyramid")
    assert "shape is one of box, sphere, cylinder, cone, capsule, plane, not 'pyramid'." in unknown
    bad = await refused(type="MeshInstance", shape="sphere", color="reddish")
    assert "no colour named 'reddish'" in bad and "To add New without color: " in bad


async def test_what_small_models_write_among_properties_is_read_as_meant(
    toolkit: GodotToolkit,
) -> None:
    # New users' prompts s16/7, s17/9 and s18/7: the 1.5B model wrote files the project does
    # not have for mesh and material, and the shape and size among properties, then sent the
    # same call again after every refusal.
    crate = await add(
        toolkit, name="Crate", type="MeshInstance", parent=".", rest_on="ground",
        properties={"mesh": "res://Crate.mesh", "material": "res://Crate.material",
                    "albedo_color": "Color( 1, 0, 0, 1 )", "size": "Vector3( 2, 2, 2 )",
                    "shape": "box"},
    )  # fmt: skip
    assert "properties['shape'] was read as shape" in crate.text, crate.text
    assert "no file res://Crate.mesh: the mesh is a new box made by shape" in crate.text
    assert "no file res://Crate.material: material left out" in crate.text
    block = await add(
        toolkit, name="Block", type="MeshInstance", position=[4, 0, 0], rest_on="ground",
        properties={"mesh": "res://Block.mesh", "albedo_color": "Color( 1, 1, 0, 1 )",
                    "size": "[1, 3, 1]"},
    )  # fmt: skip
    assert "no file res://Block.mesh: the mesh is a box made by size" in block.text, block.text
    ball = await add(
        toolkit, name="Ball", type="MeshInstance", position=[-4, 1, 0], color="blue",
        properties={"mesh": '"res://models/ball.mesh"', "material_override": "res://blue.tres",
                    "shape": "Sphere"}, shape="ball",
    )  # fmt: skip
    assert "mesh = SphereMesh()" in ball.text and "no file res://blue.tres" in ball.text

    doc = toolkit.project.read_scene(SCENE)
    assert doc.ext_resources == []  # no reference to a file that is not there
    assert material_colour(toolkit, "Crate") == Constructor("Color", (1, 0, 0, 1))
    assert material_colour(toolkit, "Block") == Constructor("Color", (1, 1, 0, 1))
    assert material_colour(toolkit, "Ball") == Constructor("Color", (0, 0, 1, 1))
    m = await toolkit.measurements(SCENE)
    assert m.bounded("Crate").size == pytest.approx((2, 2, 2), abs=1e-4)
    assert m.bounded("Crate").centre == pytest.approx((0, 1, 0), abs=1e-3)  # on the ground
    assert m.bounded("Block").size == pytest.approx((1, 3, 1), abs=1e-4)
    assert m.bounded("Block").centre == pytest.approx((4, 1.5, 0), abs=1e-3)
    assert m.bounded("Ball").size == pytest.approx((2, 2, 2), abs=0.01)  # a default SphereMesh


async def test_a_missing_file_with_nothing_in_its_place_adds_nothing(
    toolkit: GodotToolkit,
) -> None:
    refused = refuser(toolkit, type="MeshInstance")
    head = 'add_node(scene="res://main.tscn", name="Player", type="MeshInstance", parent="."'
    player = await refused(name="Player", properties={"mesh": "res://cube/cube", "color": "blue"})
    assert player == (
        "the project has no file res://cube/cube for mesh; shape makes a new mesh (box, "
        "sphere, cylinder, cone, capsule, plane). Nothing was added. To add Player as a box: "
        f'{head}, properties={{"color": "blue"}}, shape="box")'
    ), player
    # the shape the path names is the one offered
    pin = await refused(name="Pin", properties={"mesh": "res://shapes/Cylinder.mesh"})
    assert pin.endswith('parent=".", shape="cylinder")'), pin
    # a material with no colour to stand in for it
    plain = await refused(name="Plain", shape="box", properties={"material": "res://x.material"})
    assert plain.startswith("the project has no file res://x.material for material."), plain
    assert plain.endswith('parent=".", shape="box")'), plain
    # two shapes that differ
    twice = await refused(name="Odd", shape="box", properties={"shape": "sphere"})
    assert twice.startswith("shape and properties['shape'] = 'sphere' both set"), twice
    assert twice.endswith('parent=".", shape="box")'), twice

    # a file the project has is not made up: kept, so it clashes with the shape as before
    toolkit.project.file("res://crate.tres").write_text('[gd_resource type="CubeMesh" format=2]\n')
    kept = await refused(name="Kept", shape="box", properties={"mesh": "res://crate.tres"})
    assert "both set the node's mesh" in kept, kept

    # the offered call adds the node
    done = await add(toolkit, name="Player", type="MeshInstance", shape="box",
                     properties={"color": "blue"})  # fmt: skip
    assert "mesh = CubeMesh()" in done.text
    assert material_colour(toolkit, "Player") == Constructor("Color", (0, 0, 1, 1))


async def test_a_refusal_carries_the_call_it_offers_and_that_call_adds_the_node(
    toolkit: GodotToolkit,
) -> None:
    # New users' prompts s16/7, s17/9 and s22/7: the 1.5B model sent each refused call again
    # unchanged; the offer, as data (ToolError.instead), lets its connector send the offer.
    await add(toolkit, name="Field", type="MeshInstance", shape="plane", size=[20, 0, 20])
    cases = [
        # a made-up property
        {"name": "Camera", "type": "Camera",
         "properties": {"direction": "front", "translation": "Vector3( 0, 1, 5 )"}},
        # a size a standing capsule cannot have (s22/7)
        {"name": "Hero", "type": "MeshInstance", "shape": "capsule", "color": "white",
         "rest_on": "Field", "properties": {"size": "[2,2,1]"}},
        # a file the project does not have, nothing to stand in for it
        {"name": "Rock", "type": "MeshInstance", "properties": {"mesh": "res://rock.mesh"}},
    ]  # fmt: skip
    refused = refuser(toolkit)
    offers = []
    for asked in cases:
        [found] = [t for t in toolkit.tools() if t.name == "add_node"]
        done = await found.call({"scene": SCENE, **asked})
        text = await refused(**asked)  # the same refusal, and nothing written
        assert done.is_error and done.text == text
        assert done.instead is not None, text
        written = text.rsplit(": add_node(", 1)[1]
        assert all(f"{key}=" in written for key in done.instead), (done.instead, text)
        assert done.instead["scene"] == SCENE and done.instead["name"] == asked["name"]
        offers.append(done.instead)
    camera, hero, rock = offers
    assert camera["properties"] == {"translation": "Vector3( 0, 1, 5 )"}
    assert hero["size"] == [1, 2, 1] and hero["rest_on"] == "Field"
    assert rock["shape"] == "box" and "properties" not in rock
    for offer in offers:
        made = await call(toolkit, "add_node", **offer)  # each offer adds its node
        assert not made.is_error, (offer, made.text)
    m = await toolkit.measurements(SCENE)
    hero_box = m.bounded("Hero")
    assert hero_box.size == pytest.approx((1, 2, 1), abs=0.01)  # standing 2 tall, 1 across
    assert hero_box.centre[1] == pytest.approx(1, abs=0.01)  # resting on the Field
    doc = toolkit.project.read_scene(SCENE)
    assert {n.name for n in doc.nodes} >= {"Camera", "Hero", "Rock"}
    # A refusal with no call to offer has none.
    bare = await call(toolkit, "add_node", scene=SCENE, name="X", type="MeshInstance",
                      shape="pyramid")  # fmt: skip
    assert bare.is_error and bare.instead is None


async def test_a_shape_of_none_on_a_light_is_no_shape(toolkit: GodotToolkit) -> None:
    # s17/9: "an omni light named Bulb" came as {"type": ..., "shape": "none"}.
    done = await add(toolkit, name="Bulb", type="OmniLight", shape="none", position=[0, 3, 0])
    assert "added OmniLight Bulb" in done.text and "mesh" not in done.text, done.text
    node = toolkit.project.read_scene(SCENE).node("Bulb")
    assert "mesh" not in node.properties


async def test_a_size_beside_a_mesh_set_among_properties_sizes_that_mesh(
    toolkit: GodotToolkit,
) -> None:
    # What the local model's size mend sends for s21/7's Apple of radius 0.2.
    await add(toolkit, name="Apple", type="MeshInstance", size=[0.4, 0.4, 0.4],
              properties={"mesh": "SphereMesh()"}, position=[0, 1, 0])  # fmt: skip
    m = await toolkit.measurements(SCENE)
    assert m.bounded("Apple").size == pytest.approx((0.4, 0.4, 0.4), abs=0.01)


async def test_a_shape_that_is_none_of_the_shapes_on_a_camera_is_offered_without_it(
    toolkit: GodotToolkit,
) -> None:
    # s23/8: "a Camera named Eye at (0, 1, 6)" came with "shape": "camera", three times.
    refused = refuser(toolkit)
    asked = {"name": "Eye", "type": "Camera", "shape": "camera", "position": [0, 1, 6]}
    text = await refused(**asked)
    assert text.startswith("shape is one of box, sphere, cylinder, cone, capsule, plane, not")
    [found] = [t for t in toolkit.tools() if t.name == "add_node"]
    done = await found.call({"scene": SCENE, **asked})
    assert done.instead == {"scene": SCENE, "name": "Eye", "type": "Camera", "parent": ".",
                            "position": [0, 1, 6]}  # fmt: skip
    assert text.endswith('To add Eye without shape: add_node(scene="res://main.tscn", name="Eye", '
                         'type="Camera", parent=".", position=[0, 1, 6])')  # fmt: skip
    await add(toolkit, **{k: v for k, v in done.instead.items() if k != "scene"})
    # On a mesh node the shape is the point of the call: no call is offered.
    mesh = await found.call({"scene": SCENE, "name": "M", "type": "MeshInstance", "shape": "hat"})
    assert mesh.is_error and mesh.instead is None


async def test_a_camera_asked_to_rest_on_a_node_is_offered_without_rest_on(
    toolkit: GodotToolkit,
) -> None:
    # s16/7: "a camera that sees it" came as a Camera with rest_on="Crate", sent again
    # until the loop guard ended the run; a camera draws nothing and has no bottom.
    await add(toolkit, name="Crate", type="MeshInstance", shape="box", rest_on="ground")
    refused = refuser(toolkit)
    asked = {"name": "Cam", "type": "Camera", "rest_on": "Crate",
             "properties": {"translation": "Vector3( 0, 1, 5 )"}}  # fmt: skip
    text = await refused(**asked)
    assert text.startswith("rest_on: Cam (Camera) draws nothing"), text
    [found] = [t for t in toolkit.tools() if t.name == "add_node"]
    done = await found.call({"scene": SCENE, **asked})
    assert done.instead is not None and "rest_on" not in done.instead
    assert text.endswith(f"To add Cam without rest_on: add_node(scene=\"{SCENE}\", name=\"Cam\", "
                         'type="Camera", parent=".", properties={"translation": "Vector3( 0, 1, '
                         '5 )"})')  # fmt: skip
    made = await call(toolkit, "add_node", **done.instead)
    assert not made.is_error, made.text
    m = await toolkit.measurements(SCENE)
    assert m.node("Cam").type == "Camera"


async def test_every_property_the_class_lacks_goes_in_one_offer(toolkit: GodotToolkit) -> None:
    # s20/9: a DirectionalLight's made-up color, shadow and shadow_size, each refused in
    # turn (and each offer sent back) until the run used its turns.
    refused = refuser(toolkit)
    asked = {"name": "Lamp", "type": "DirectionalLight", "position": [2, 3, 2],
             "properties": {"color": "Color( 1, 1, 1, 1 )", "shadow": "true",
                            "shadow_size": "200", "shadow_enabled": "true"}}  # fmt: skip
    text = await refused(**asked)
    assert text.startswith("DirectionalLight has no property 'color'. Nothing was added. To add "
                           "Lamp without color, shadow, shadow_size: add_node("), text  # fmt: skip
    [found] = [t for t in toolkit.tools() if t.name == "add_node"]
    done = await found.call({"scene": SCENE, **asked})
    assert done.instead is not None
    assert done.instead["properties"] == {"shadow_enabled": "true"}
    made = await call(toolkit, "add_node", **done.instead)
    assert not made.is_error, made.text
    assert "shadow_enabled = true" in made.text


async def test_a_capsule_stands_as_every_other_shape_does(toolkit: GodotToolkit) -> None:
    # s22/7: "a white capsule named Hero standing on it" was made lying along z (Godot 3's
    # CapsuleMesh axis). The capsule shape stands along y, its size read as it stands.
    await add(toolkit, name="Field", type="MeshInstance", shape="plane", size=[20, 0, 20])
    hero = await add(toolkit, name="Hero", type="MeshInstance", shape="capsule", size=[1, 2, 1],
                     rest_on="Field")  # fmt: skip
    assert "rotation_degrees = Vector3( 90, 0, 0 )" in hero.text, hero.text
    await add(toolkit, name="Pill", type="MeshInstance", shape="capsule",
              position=[4, 0, 0])  # fmt: skip
    # The call's own turn is kept: lying along z, as Godot 3 makes it.
    log = await add(toolkit, name="Log", type="MeshInstance", shape="capsule", size=[1, 1, 3],
                    properties={"rotation_degrees": "Vector3( 0, 0, 0 )"}, position=[-4, 0, 0])  # fmt: skip
    assert "mesh/radius = 0.5, mesh/mid_height = 2" in log.text, log.text
    m = await toolkit.measurements(SCENE)
    assert m.bounded("Hero").size == pytest.approx((1, 2, 1), abs=0.01)
    assert m.bounded("Hero").min is not None and m.bounded("Hero").min[1] == pytest.approx(
        0, abs=0.01
    )
    assert m.bounded("Pill").size == pytest.approx((2, 3, 2), abs=0.01)  # the default, standing
    assert m.bounded("Log").size == pytest.approx((1, 1, 3), abs=0.01)
    # A size it cannot have standing is refused in its standing terms, with the call meant.
    refused = await call(toolkit, "add_node", scene=SCENE, name="Tall", type="MeshInstance",
                         shape="capsule", size=[2, 2, 1])  # fmt: skip
    assert refused.is_error and refused.text.startswith(
        "a capsule stands along y: give [width, height, width] with height >= width, e.g. "
        "[1, 2, 1], not 2 x 2 x 1 Nothing was added."
    ), refused.text
    assert refused.instead is not None and refused.instead["size"] == [1, 2, 1]


async def test_a_camera_or_light_given_a_shape_is_offered_without_it(
    toolkit: GodotToolkit,
) -> None:
    # s23/8: the Wall's shape and colour copied onto "a Camera named Eye"; the offer had been
    # to make Eye a MeshInstance, and the model took it (a blue box where the camera was).
    refused = refuser(toolkit)
    eye = {"name": "Eye", "type": "Camera", "shape": "box", "color": "blue",
           "properties": {"translation": "Vector3( 0, 1, 6 )"}}  # fmt: skip
    text = await refused(**eye)
    assert text.startswith("shape sets a MeshInstance's mesh, and a Camera has no mesh. Nothing "
                           "was added. To add Eye without shape, color: add_node("), text  # fmt: skip
    [found] = [t for t in toolkit.tools() if t.name == "add_node"]
    offer = (await found.call({"scene": SCENE, **eye})).instead
    assert offer is not None and offer["type"] == "Camera", offer
    assert not {"shape", "color", "size"} & set(offer), offer
    made = await call(toolkit, "add_node", **offer)
    assert not made.is_error, made.text
    # A light keeps its colour (light_color); a plain Spatial is still offered as a mesh node.
    refused = refuser(toolkit)
    lamp = await refused(name="Lamp", type="OmniLight", shape="sphere", color="yellow")
    assert "To add Lamp without shape: add_node(" in lamp and 'color="yellow"' in lamp, lamp
    block = await refused(name="Block", type="Spatial", shape="box")
    assert "To add Block as a MeshInstance: add_node(" in block, block
    m = await toolkit.measurements(SCENE)
    assert m.node("Eye").type == "Camera" and m.node("Eye").origin == pytest.approx((0, 1, 6))
