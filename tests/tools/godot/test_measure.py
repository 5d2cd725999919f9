"""Measure and assert tools on scenes whose answers are known in closed form (real Godot 3,
headless): bounds of rotated and scaled meshes, contact, overlap, distance, framing."""

from __future__ import annotations

import ast
import json
import math
from collections.abc import AsyncIterator

import pytest
from agentsdk_godot import Constructor, GodotEngine, GodotToolkit
from agentsdk_godot.engine import HarnessJob
from godot_calls import call

from agentsdk import ToolError

pytestmark = pytest.mark.anyio


def vec(*v: float) -> Constructor:
    return Constructor("Vector3", v)


def rotation_y(degrees: float, origin: tuple[float, float, float]) -> Constructor:
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    # Godot's Transform literal: basis rows (x.x, y.x, z.x, x.y, y.y, z.y, x.z, y.z, z.z), origin
    return Constructor("Transform", (c, 0, s, 0, 1, 0, -s, 0, c, *origin))


@pytest.fixture
async def toolkit(engine: GodotEngine) -> AsyncIterator[GodotToolkit]:
    async with GodotToolkit(engine=engine, groups=["core", "check"]) as tk:
        scene = tk.project.new_scene("Main", "Spatial")

        def mesh(name: str, kind: str, **props: object) -> None:
            node = scene.add_node(name, "MeshInstance")
            resource = {k: v for k, v in props.items() if k in ("size", "radius", "height")}
            node.properties["mesh"] = scene.add_sub_resource(kind, resource)  # type: ignore[arg-type]
            node.properties.update(
                {k: v for k, v in props.items() if k not in resource}  # type: ignore[misc]
            )

        mesh("Floor", "CubeMesh", size=vec(10, 0.2, 10))  # top at y = 0.1
        mesh("Crate", "CubeMesh", size=vec(1, 1, 1), translation=vec(0, 0.6, 0))  # on the floor
        mesh("Ball", "SphereMesh", radius=0.5, height=1.0, translation=vec(3, 0.7, 0))  # floats
        mesh("Turned", "CubeMesh", size=vec(1, 1, 1), transform=rotation_y(45, (-3, 0.6, 0)))
        mesh("A", "CubeMesh", size=vec(1, 1, 1), translation=vec(0, 3, 0))
        mesh("B", "CubeMesh", size=vec(1, 1, 1), translation=vec(0.5, 3, 0))
        mesh("FarRight", "CubeMesh", translation=vec(40, 1, 0))
        mesh("Behind", "CubeMesh", translation=vec(0, 1, 20))
        group = scene.add_node("Group", "Spatial")
        group.properties["translation"] = vec(0, 0, -4)
        scene.add_node("Part", "MeshInstance", "Group").properties["mesh"] = scene.add_sub_resource(
            "CubeMesh", {"size": vec(2, 2, 2)}
        )
        scene.add_node("Cam", "Camera").properties["translation"] = vec(0, 2, 12)
        tk.project.write_scene("res://main.tscn", scene)
        tk.project.main_scene = "res://main.tscn"
        yield tk


async def test_bounds_contact_overlap_distance_in_closed_form(toolkit: GodotToolkit) -> None:
    m = await toolkit.measurements("res://main.tscn")
    floor, crate = m.node("Floor"), m.node("Crate")
    assert floor.max is not None and abs(floor.max[1] - 0.1) < 1e-5
    assert crate.size == pytest.approx((1, 1, 1), abs=1e-5)
    turned = m.node("Turned")  # a unit cube turned 45 degrees: sqrt(2) across in x and z
    assert turned.size == pytest.approx((math.sqrt(2), 1, math.sqrt(2)), abs=1e-4)
    assert m.node("Group").size == pytest.approx((2, 2, 2), abs=1e-5)  # from its child
    assert m.node("Group").centre == pytest.approx((0, 0, -4), abs=1e-5)

    on = m.rests_on("Crate", "Floor")
    assert on.passed and abs(float(on.measured["gap"])) < 1e-4
    floating = m.rests_on("Ball", "Floor")
    assert not floating.passed and float(floating.measured["gap"]) == pytest.approx(0.1, abs=1e-3)
    assert "floats 0.100 above Floor" in floating.message
    overlap = m.overlap("A", "B", expected=True)
    assert overlap.passed and float(overlap.measured["volume"]) == pytest.approx(0.5, abs=1e-4)
    assert not m.overlap("A", "B").passed and m.overlap("Crate", "Ball").passed
    apart = m.distance("Crate", "Ball", maximum=2.0)
    assert float(apart.measured["centre_distance"]) == pytest.approx(math.hypot(3, 0.1), abs=1e-3)
    # the sphere's bounds are those of its mesh's vertices (64 segments): within 1e-3 of r
    assert float(apart.measured["gap"]) == pytest.approx(2.0, abs=1e-3) and not apart.passed


async def test_in_frame_against_our_own_projection(toolkit: GodotToolkit) -> None:
    m = await toolkit.measurements("res://main.tscn", width=400, height=300)
    assert m.view.camera == "Cam" and (m.view.width, m.view.height) == (400, 300)
    # the camera at (0, 2, 12) looks down -z with Godot's default fov of 70 degrees (vertical)
    half = math.tan(math.radians(35))
    crate = m.node("Crate")
    for (x, y), corner in zip(
        crate.screen,
        [(i & 1, (i >> 1) & 1, (i >> 2) & 1) for i in range(8)],
        strict=True,
    ):
        wx, wy, wz = (-0.5 + corner[0], 0.1 + corner[1], -0.5 + corner[2])
        depth = 12 - wz
        expected_x = (wx / (depth * half * 400 / 300) + 1) / 2 * 400
        expected_y = (1 - (wy - 2) / (depth * half)) / 2 * 300
        assert (x, y) == pytest.approx((expected_x, expected_y), abs=0.01)
    assert m.in_frame("Crate").passed
    right = m.in_frame("FarRight")
    assert not right.passed and "right" in right.message
    behind = m.in_frame("Behind")
    assert not behind.passed and behind.message == "Behind is behind the camera"


async def test_the_tools_say_what_to_fix(toolkit: GodotToolkit) -> None:
    text = (await call(toolkit, "measure", nodes=["Crate", "Turned"])).text
    assert (
        "Crate: size (1, 1, 1), centre (0, 0.6, 0)" in text
        and "Turned: size (1.41, 1, 1.41)" in text
    )
    ball = await call(toolkit, "assert_rests_on", node="Ball", support="Floor")
    verdict = json.loads(ball.text)
    assert (
        not ball.is_error
        and verdict["passed"] is False
        and "lower it by 0.100" in verdict["message"]
    )
    missing = await call(toolkit, "assert_in_frame", node="Crane")
    assert missing.is_error and "no node 'Crane'" in missing.text and "Crate" in missing.text
    nothing = await call(toolkit, "assert_overlap", a="Cam", b="Crate")
    assert nothing.is_error and "Cam (Camera) draws nothing" in nothing.text
    assert (
        json.loads((await call(toolkit, "assert_in_frame", node="Main/Crate")).text)["passed"]
        is True
    )


async def test_a_scene_the_engine_cannot_load_is_a_tool_error_not_a_crash(
    engine: GodotEngine,
) -> None:
    # The harness then dumps a null tree (no root to walk): once a bare pydantic
    # ValidationError escaped from here and broke the godot/crate-on-floor verifier.
    async with GodotToolkit(engine=engine, groups=["core", "check"]) as tk:
        tk.project.file("res://main.tscn").write_text("[gd_scene load_steps=1 format=2]\n")
        tk.project.main_scene = "res://main.tscn"
        with pytest.raises(ToolError, match=r"could not open res://main\.tscn") as caught:
            await tk.measurements("res://main.tscn")
        assert "Parse Error" in str(caught.value)
        run = await tk.engine.run_harness(
            tk.project.path, HarnessJob(scene="res://main.tscn", frames=1), timeout=60
        )
        assert run.tree is None and run.errors


async def test_rest_on_puts_a_new_node_on_its_support_as_the_engine_measures_it(
    toolkit: GodotToolkit,
) -> None:
    scene = "res://main.tscn"
    # a 0.8-tall sphere on the 1 x 1 x 1 Crate (top at y = 1.1), centred on it though asked elsewhere
    ball = await call(
        toolkit,
        "add_node",
        scene=scene,
        name="Top",
        type="MeshInstance",
        properties={"mesh": "SphereMesh()", "mesh/radius": "0.4", "mesh/height": "0.8"},
        rest_on="Crate",
    )
    assert not ball.is_error, ball.text
    assert "rests on Crate (top y=1.1)" in ball.text
    m = await toolkit.measurements(scene)
    assert m.rests_on("Top", "Crate", tolerance=1e-3).passed
    assert m.bounded("Top").centre == pytest.approx((0.0, 1.5, 0.0), abs=1e-3)
    # with a translation the model chose, only the height changes; "ground" is y = 0
    kept = await call(
        toolkit,
        "add_node",
        scene=scene,
        name="Post",
        type="MeshInstance",
        properties={"mesh": "CubeMesh()", "translation": "Vector3( 5, 7, -2 )"},
        rest_on="ground",
    )
    assert "rests on the ground (y=0)" in kept.text and "Vector3( 5, 1, -2 )" in kept.text
    # under a moved (not rotated) parent the local translation absorbs the parent's offset
    nested = await call(
        toolkit,
        "add_node",
        scene=scene,
        name="Lid",
        type="MeshInstance",
        parent="Group",
        properties={"mesh": "CubeMesh()"},
        rest_on="Group/Part",
    )
    assert not nested.is_error, nested.text
    m = await toolkit.measurements(scene)
    assert m.rests_on("Group/Lid", "Group/Part", tolerance=1e-3).passed
    assert m.bounded("Group/Lid").centre == pytest.approx((0.0, 2.0, -4.0), abs=1e-3)
    # a child of its support stands on the support's own top (a node's bounds include its
    # children's, so the floor is measured without the cap); rest_on written among properties
    cap = await call(
        toolkit, "add_node", scene=scene, name="Cap", type="MeshInstance", parent="Floor",
        properties={"mesh": "CubeMesh()", "mesh/size": "Vector3( 1, 1, 1 )", "rest_on": "Floor",
                    "translation": "Vector3( 2, -3, 2 )"},
    )  # fmt: skip
    assert "rests on Floor (top y=0.1), size 1 x 1 x 1: translation = Vector3( 2, 0.6, 2 )" in (
        cap.text
    ), cap.text
    m = await toolkit.measurements(scene)
    assert m.rests_on("Floor/Cap", "Floor", tolerance=1e-3).passed
    assert m.node("Cap").path == "Floor/Cap" and m.rests_on("Cap", "Floor").passed  # by name
    # set_property's rest_on: a new size, and the node stands on its support again
    grown = await call(
        toolkit, "set_property", scene=scene, node="Floor/Cap", property="mesh/size",
        value="Vector3( 2, 3, 2 )", rest_on="Floor",
    )  # fmt: skip
    assert "size 2 x 3 x 2: translation = Vector3( 0, 1.6, 0 )" in grown.text, grown.text
    assert m.support_box("Floor", "Floor/Cap")[1][1] == pytest.approx(0.1, abs=1e-4)
    assert m.bounded("Floor").max == pytest.approx((10 / 2, 1.1, 10 / 2), abs=1e-4)


async def test_rest_on_as_small_models_write_it(toolkit: GodotToolkit) -> None:
    # the node's own name: a new node goes on the ground, a placed one stays where it is;
    # "y = 0" is the ground; "floor" is the Floor node (another letter case)
    scene = "res://main.tscn"
    own = await call(toolkit, "add_node", scene=scene, name="Peg", type="MeshInstance",
                     properties={"mesh": "CubeMesh()", "translation": "Vector3( 7, 5, 7 )"},
                     rest_on="Peg")  # fmt: skip
    assert "rests on the ground (y=0)" in own.text, own.text
    level = await call(toolkit, "add_node", scene=scene, name="Dot", type="MeshInstance",
                       properties={"mesh": "SphereMesh()", "translation": "Vector3( -7, 5, 7 )"},
                       rest_on="y = 0")  # fmt: skip
    assert "rests on the ground (y=0)" in level.text, level.text
    m = await toolkit.measurements(scene)
    assert m.bounded("Peg").min[1] == pytest.approx(0, abs=1e-3)
    assert m.bounded("Dot").min[1] == pytest.approx(0, abs=1e-3)
    lower = await call(toolkit, "add_node", scene=scene, name="Tile", type="MeshInstance",
                       properties={"mesh": "CubeMesh()"}, size=[1, 0.2, 1], rest_on="floor")  # fmt: skip
    assert "rests on Floor" in lower.text, lower.text
    m = await toolkit.measurements(scene)
    assert m.rests_on("Tile", "Floor", tolerance=1e-3).passed
    stays = await call(toolkit, "set_property", scene=scene, node="Peg", property="visible",
                       value="true", rest_on="Peg")  # fmt: skip
    assert not stays.is_error and "rests on" not in stays.text, stays.text
    m = await toolkit.measurements(scene)
    assert m.bounded("Peg").centre == pytest.approx((7.0, 1.0, 7.0), abs=1e-3)  # where it was


async def test_a_rest_on_that_cannot_be_done_changes_nothing(toolkit: GodotToolkit) -> None:
    scene = "res://main.tscn"
    before = toolkit.project.file(scene).read_bytes()
    unknown = await call(
        toolkit,
        "add_node",
        scene=scene,
        name="Box",
        type="MeshInstance",
        properties={"mesh": "CubeMesh()"},
        rest_on="Table",
    )
    assert unknown.is_error and "no node 'Table'" in unknown.text and "Floor" in unknown.text
    # the support exists but draws nothing; the node is only added if the rest can be done
    nothing = await call(
        toolkit,
        "add_node",
        scene=scene,
        name="Box",
        type="MeshInstance",
        properties={"mesh": "CubeMesh()"},
        rest_on="Cam",
    )
    assert nothing.is_error and "Cam (Camera) draws nothing" in nothing.text
    meshless = await call(
        toolkit, "add_node", scene=scene, name="Empty", type="Spatial", rest_on="Floor"
    )
    assert meshless.is_error and "Empty (Spatial) draws nothing" in meshless.text
    assert "no bottom to stand on" in meshless.text and 'mesh = "CubeMesh()"' in meshless.text
    assert toolkit.project.file(scene).read_bytes() == before


def suggested_call(text: str, tool_name: str) -> dict[str, object]:
    """The arguments of the first `tool_name(...)` call an error offers, as a model copies it."""
    start = text.index(tool_name + "(")
    for end in (i for i, char in enumerate(text) if char == ")" and i > start):
        try:
            parsed = ast.parse(text[start : end + 1], mode="eval").body
        except SyntaxError:
            continue  # a ")" inside the call
        assert isinstance(parsed, ast.Call)
        return {k.arg or "": ast.literal_eval(k.value) for k in parsed.keywords}
    raise AssertionError(f"no {tool_name} call in {text!r}")


async def test_rest_on_is_refused_for_2d_nodes_with_the_call_that_places_them(
    toolkit: GodotToolkit,
) -> None:
    # A Control, a Node2D or a Timer has no 3D bounds: the engine measures none, and the
    # error once named the new node as missing ("no node 'Restart' in the scene"), which the
    # small model repeated until the loop guard stopped it.
    scene = "res://main.tscn"
    for name, kind in (("Score", "Label"), ("HUD", "Node2D")):
        made = await call(toolkit, "add_node", scene=scene, name=name, type=kind)
        assert not made.is_error, made.text
    before = toolkit.project.file(scene).read_bytes()

    button = await call(
        toolkit, "add_node", scene=scene, name="Restart", type="Button", parent=".",
        properties={"text": "Restart", "rest_on": "Score"},
    )  # fmt: skip
    assert button.is_error
    assert "rest_on is for 3D nodes (Spatial" in button.text, button.text
    assert "Restart would be a Button, a Control" in button.text and "no node" not in button.text
    assert "Nothing was added. Place it with rect_position" in button.text
    assert toolkit.project.file(scene).read_bytes() == before
    again = suggested_call(button.text, "add_node")
    assert "rest_on" not in again and again["properties"] == {
        "text": "Restart",
        "rect_position": "Vector2( 0, 40 )",  # 40 px below Score, which is at (0, 0)
    }
    label = await call(
        toolkit, "set_property", scene=scene, node="Score", property="text", value="Score: 1",
        rest_on="ground",
    )  # fmt: skip
    assert label.is_error and "Score is a Label, a Control" in label.text, label.text
    assert "Nothing was changed" in label.text and 'property="rect_position"' in label.text
    sprite = await call(
        toolkit, "add_node", scene=scene, name="Icon", type="Sprite", parent="HUD",
        rest_on="ground",
    )  # fmt: skip
    assert sprite.is_error and "Icon would be a Sprite, a Node2D" in sprite.text, sprite.text
    assert suggested_call(sprite.text, "add_node")["properties"] == {
        "position": "Vector2( 20, 20 )"
    }
    timer = await call(toolkit, "add_node", scene=scene, name="Tick", type="Timer", rest_on="Floor")
    assert timer.is_error and "Tick would be a Timer" in timer.text, timer.text
    assert 'Leave rest_on out: add_node(scene="res://main.tscn", name="Tick"' in timer.text
    # a 3D node on a 2D support: refused too, naming the support's class and what it can stand on
    onto = await call(
        toolkit, "add_node", scene=scene, name="Box", type="MeshInstance",
        properties={"mesh": "CubeMesh()"}, rest_on="Score",
    )  # fmt: skip
    assert onto.is_error, onto.text
    assert "rest_on: Score is a Label, a Control (2D user interface), not a 3D node" in onto.text
    assert 'Use rest_on="ground" (y=0) or a 3D node: Floor, Crate' in onto.text
    assert toolkit.project.file(scene).read_bytes() == before

    # the call the error offers does what was meant; a 3D node still rests on the ground
    placed = await call(toolkit, "add_node", **again)
    assert not placed.is_error and "rect_position = Vector2( 0, 40 )" in placed.text, placed.text
    grounded = await call(
        toolkit, "add_node", scene=scene, name="Box", type="MeshInstance",
        properties={"mesh": "CubeMesh()", "translation": "Vector3( 6, 4, 6 )"}, rest_on="ground",
    )  # fmt: skip
    assert "rests on the ground (y=0)" in grounded.text, grounded.text
    m = await toolkit.measurements(scene)
    assert m.bounded("Box").min == pytest.approx((5.0, 0.0, 5.0), abs=1e-3)


async def test_without_the_class_list_a_2d_rest_is_still_named_for_what_it_is(
    toolkit: GodotToolkit,
) -> None:
    # The engine's class list can be missing (a Godot 4 without the class-info helper): then
    # the measurement finds the 2D node absent, and says why instead of "no node ... (nodes: .)".
    scene = "res://main.tscn"
    await call(toolkit, "add_node", scene=scene, name="Score", type="Label")
    before = toolkit.project.file(scene).read_bytes()
    assert toolkit._catalog is not None
    toolkit._catalog.available = False
    button = await call(toolkit, "add_node", scene=scene, name="Restart", type="Button",
                        rest_on="Score")  # fmt: skip
    assert button.is_error and "Restart (Button) has no 3D bounds" in button.text, button.text
    assert "rest_on is for 3D nodes (Spatial" in button.text
    box = await call(toolkit, "add_node", scene=scene, name="Box", type="MeshInstance",
                     properties={"mesh": "CubeMesh()"}, rest_on="Score")  # fmt: skip
    assert box.is_error and "Score (Label) has no 3D bounds" in box.text, box.text
    assert toolkit.project.file(scene).read_bytes() == before


async def test_gdscript_transform_forms_are_stored_as_the_engine_reads_them(
    toolkit: GodotToolkit,
) -> None:
    """Basis, four axes, or a rotation and an origin: each becomes the scene file's 12 numbers,
    and the engine then puts a child at (1, 0, 0) where that transform sends it."""
    s, c = math.sin(math.radians(45)), math.cos(math.radians(45))  # 90 degrees about z: x -> y
    forms = {
        "Quat": f"Transform( Quat( 0, 0, {s}, {c} ), Vector3( 0, 5, 0 ) )",
        "Origin first": f"Transform( Vector3( 0, 5, 0 ), Quaternion( 0, 0, {s}, {c} ) )",
        "Axes": "Transform( Vector3( 0, 1, 0 ), Vector3( -1, 0, 0 ), Vector3( 0, 0, 1 ), "
        "Vector3( 0, 5, 0 ) )",
        "Basis": "Transform( Basis( 0, -1, 0, 1, 0, 0, 0, 0, 1 ), Vector3( 0, 5, 0 ) )",
    }
    tools = {t.name: t for t in toolkit.tools()}
    for i, text in enumerate(forms.values()):
        pivot = f"Pivot{i}"
        made = await tools["add_node"].call(
            {"scene": "res://main.tscn", "name": pivot, "type": "Spatial",
             "properties": {"transform": text}}
        )  # fmt: skip
        assert not made.is_error, made.text
        child = await tools["add_node"].call(
            {"scene": "res://main.tscn", "name": "Tip", "type": "MeshInstance", "parent": pivot,
             "properties": {"mesh": "CubeMesh()", "mesh/size": "Vector3( 0.2, 0.2, 0.2 )",
                            "translation": "Vector3( 1, 0, 0 )"}}
        )  # fmt: skip
        assert not child.is_error, child.text
    m = await toolkit.measurements("res://main.tscn")
    for i, name in enumerate(forms):
        assert m.bounded(f"Pivot{i}/Tip").centre == pytest.approx((0, 6, 0), abs=1e-4), name
    with pytest.raises(KeyError, match=r"4 nodes are named 'Tip' \(Pivot0/Tip, Pivot1/Tip"):
        m.node("Tip")
