"""`size` on add_node and set_property, checked by what the real Godot 3 engine measures: a
unit crate resting on a floor (the 1.5B model's own call on godot/crate-on-floor, plus `size`),
spheres, cylinders and the other primitive shapes against bounds this file computes from the
meshes' vertex formulas, `size` written among properties, and sizes that cannot be done."""

from __future__ import annotations

import math
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from agentsdk.plugins import load_suite
from agentsdk.tasks import call as step
from agentsdk.tasks import run_task
from agentsdk_godot import Constructor, GodotEngine, GodotToolkit
from godot_calls import call

pytestmark = pytest.mark.anyio

SCENE = "res://main.tscn"
FLOOR_TOP = 0.25  # the floor is a CubeMesh 8 x 0.5 x 8 at the origin, as in godot/crate-on-floor
IDENTITY = "Transform( 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0 )"


@pytest.fixture
async def toolkit(engine: GodotEngine) -> AsyncIterator[GodotToolkit]:
    async with GodotToolkit(engine=engine, groups=["core", "check"]) as tk:
        scene = tk.project.new_scene("Main", "Spatial")
        floor = scene.add_node("Floor", "MeshInstance")
        floor.properties["mesh"] = scene.add_sub_resource(
            "CubeMesh", {"size": Constructor("Vector3", (8, 0.5, 8))}
        )
        scene.add_node("Cam", "Camera").properties["translation"] = Constructor(
            "Vector3", (0, 2, 12)
        )
        tk.project.write_scene(SCENE, scene)
        tk.project.main_scene = SCENE
        yield tk


def sphere_bounds(radius: float, height: float, rings: int = 32, segments: int = 64) -> tuple:
    """Width, height, depth of Godot 3's SphereMesh: rings + 2 circles of `segments` points at
    y = h/2 cos(pi v), radius r sin(pi v), v = j / (rings + 1); no circle on the equator when
    rings + 1 is odd, so it is a little narrower than 2 r."""
    xs, ys, zs = [], [], []
    for j in range(rings + 2):
        v = j / (rings + 1)
        for i in range(segments + 1):
            u = i / segments
            xs.append(math.sin(2 * math.pi * u) * radius * math.sin(math.pi * v))
            zs.append(math.cos(2 * math.pi * u) * radius * math.sin(math.pi * v))
            ys.append(height / 2 * math.cos(math.pi * v))
    return tuple(max(a) - min(a) for a in (xs, ys, zs))


def cylinder_bounds(top: float, bottom: float, height: float, segments: int = 64) -> tuple:
    """Godot 3's CylinderMesh: circles of `segments` points from the top radius to the bottom one."""
    widest = [max(top, bottom) * f(2 * math.pi * i / segments) for i in range(segments + 1)
              for f in (math.sin, math.cos)]  # fmt: skip
    return (max(widest) - min(widest), height, max(widest) - min(widest))


async def test_the_15b_call_with_size_is_a_unit_crate_resting_on_the_floor(
    toolkit: GodotToolkit,
) -> None:
    # the 1.5B model's call on godot/crate-on-floor (its transform was the identity), with size
    crate = await call(
        toolkit, "add_node", scene=SCENE, name="Crate", type="MeshInstance", parent="Floor",
        properties={"mesh": "CubeMesh()", "transform": IDENTITY, "rest_on": "Floor"},
        size=[1, 1, 1],
    )  # fmt: skip
    assert not crate.is_error, crate.text
    assert "mesh/size = Vector3( 1, 1, 1 ); rests on Floor (top y=0.25), size 1 x 1 x 1" in (
        crate.text
    )
    text = toolkit.project.file(SCENE).read_text()
    assert '[sub_resource type="CubeMesh" id=2]\nsize = Vector3( 1, 1, 1 )' in text
    m = await toolkit.measurements(SCENE)
    box = m.bounded("Floor/Crate")
    assert box.size == pytest.approx((1, 1, 1), abs=1e-4)
    assert box.min is not None and box.min[1] == pytest.approx(FLOOR_TOP, abs=1e-3)
    assert box.centre == pytest.approx((0, FLOOR_TOP + 0.5, 0), abs=1e-3)
    assert m.rests_on("Floor/Crate", "Floor", tolerance=0.01).passed


async def test_the_task_verifier_scores_that_call_one_and_the_call_without_size_half(
    tmp_path: Path,
) -> None:
    task = load_suite("godot").get("godot/crate-on-floor")
    asked = {"mesh": "CubeMesh()", "transform": IDENTITY, "rest_on": "Floor"}
    crate = {"scene": SCENE, "name": "Crate", "type": "MeshInstance", "parent": "Floor"}
    scores = {}
    for label, args in {
        "as the 1.5B wrote it": {**crate, "properties": asked},
        "with size": {**crate, "properties": asked, "size": [1, 1, 1]},
        "size among properties": {**crate, "properties": {**asked, "size": "[1, 1, 1]"}},
    }.items():
        steps = [step("add_node", **args), "The crate rests on the floor."]
        rollout = await run_task(
            task, "reference", steps=steps, workdir=tmp_path / str(len(scores))
        )
        assert rollout.verdict is not None, rollout.broken
        scores[label] = rollout.verdict.score
    assert scores == {"as the 1.5B wrote it": 0.5, "with size": 1.0, "size among properties": 1.0}


async def test_each_primitive_shape_measures_the_size_it_was_given(toolkit: GodotToolkit) -> None:
    def add(name: str, mesh: str, size: object, **props: str):  # type: ignore[no-untyped-def]
        return call(toolkit, "add_node", scene=SCENE, name=name, type="MeshInstance",
                    properties={"mesh": mesh, **props}, size=size)  # fmt: skip

    ball = await add("Ball", "SphereMesh()", [1.2, 0.8, 1.2], rest_on="ground")  # lifted
    assert "mesh/radius = 0.6, mesh/height = 0.8" in ball.text, ball.text
    expected_ball = sphere_bounds(0.6, 0.8)
    assert expected_ball[0] < 1.2 - 1e-3  # 64 x 33 points: a little under the diameter
    post = await add("Post", "CylinderMesh()", [0.5, 2, 0.5], translation="3, 0, 0")
    assert "measured size 0.5 x 2 x 0.5" in post.text, post.text
    # a cone stays a cone: its wider end gets the width, the tip stays a point
    cone = await add("Cone", "CylinderMesh()", [1, 1.5, 1], **{"mesh/top_radius": "0"})
    assert "mesh/top_radius = 0, mesh/bottom_radius = 0.5, mesh/height = 1.5" in cone.text
    pill = await add("Pill", "CapsuleMesh()", [1, 1, 3])  # Godot 3's capsule lies along z
    assert "mesh/radius = 0.5, mesh/mid_height = 2" in pill.text, pill.text
    plane = await add("Rug", "PlaneMesh()", [4, 0, 2])
    quad = await add("Sign", "QuadMesh()", [2, 1, 0])
    wedge = await add("Wedge", "PrismMesh()", [1, 2, 3])
    assert not any(r.is_error for r in (plane, quad, wedge)), (plane.text, quad.text, wedge.text)
    block = await call(
        toolkit, "add_node", scene=SCENE, name="Block", type="CSGBox", size=[1, 2, 3]
    )
    assert "width = 1, height = 2, depth = 3; measured size 1 x 2 x 3" in block.text, block.text

    m = await toolkit.measurements(SCENE)
    assert m.bounded("Ball").size == pytest.approx(expected_ball, abs=1e-4)
    assert m.bounded("Ball").min[1] == pytest.approx(0, abs=1e-4)  # type: ignore[index]
    assert m.bounded("Post").size == pytest.approx(cylinder_bounds(0.25, 0.25, 2), abs=1e-4)
    assert m.bounded("Cone").size == pytest.approx(cylinder_bounds(0, 0.5, 1.5), abs=1e-4)
    # radius 0.5 around z, then mid_height 2 plus both half-spheres' radius 0.5 along z
    assert m.bounded("Pill").size == pytest.approx((1, 1, 2 + 2 * 0.5), abs=1e-4)
    assert m.bounded("Rug").size == pytest.approx((4, 0, 2), abs=1e-4)
    assert m.bounded("Sign").size == pytest.approx((2, 1, 0), abs=1e-4)
    assert m.bounded("Wedge").size == pytest.approx((1, 2, 3), abs=1e-4)
    assert m.bounded("Block").size == pytest.approx((1, 2, 3), abs=1e-4)


async def test_size_among_properties_and_other_spellings(toolkit: GodotToolkit) -> None:
    # a bare class name for the mesh, the size as text, rest_on too: all among properties
    crate = await call(
        toolkit, "add_node", scene=SCENE, name="Crate", type="MeshInstance",
        properties={"mesh": "CubeMesh", "size": "1 x 1 x 1", "rest_on": "Floor"},
    )  # fmt: skip
    assert "rests on Floor (top y=0.25), size 1 x 1 x 1" in crate.text, crate.text
    # a JSON list among the properties (a client not held to the schema), and no mesh at all:
    # a MeshInstance with a size gets a CubeMesh
    beam = await call(
        toolkit, "add_node", scene=SCENE, name="Beam", type="MeshInstance",
        properties={"size": [2, 0.5, 1]},
    )  # fmt: skip
    assert "mesh is a new CubeMesh; measured size 2 x 0.5 x 1" in beam.text, beam.text
    # numbers with only spaces between (s17/9: "2 2 2" was refused, then sent again)
    block = await call(
        toolkit, "add_node", scene=SCENE, name="Spaced", type="MeshInstance",
        properties={"shape": "box", "size": "2 1.5 -1"},
    )  # fmt: skip
    assert block.is_error and "-1" in block.text, block.text  # read, and a negative refused
    block = await call(
        toolkit, "add_node", scene=SCENE, name="Spaced", type="MeshInstance",
        properties={"shape": "box", "size": "2 1.5 1"},
    )  # fmt: skip
    assert "measured size 2 x 1.5 x 1" in block.text, block.text
    # a class with a property of its own named size keeps it: a Camera's orthographic size
    cam = await call(
        toolkit, "add_node", scene=SCENE, name="Top", type="Camera",
        properties={"projection": "1", "size": "10"},
    )  # fmt: skip
    assert not cam.is_error and "size = 10" in cam.text, cam.text
    # set_property's "size": the shape's size; a mesh two nodes share is copied first
    doc = toolkit.project.read_scene(SCENE)
    shared = doc.node("Crate").properties["mesh"]
    twin = doc.add_node("Twin", "MeshInstance")
    twin.properties.update(mesh=shared, translation=Constructor("Vector3", (3, 2, 0)))
    toolkit.project.write_scene(SCENE, doc)
    grown = await call(
        toolkit, "set_property", scene=SCENE, node="Crate", property="size",
        value="[3, 0.5, 3]", rest_on="Floor",
    )  # fmt: skip
    assert "mesh is its own copy (it was shared with Twin)" in grown.text, grown.text
    assert "size 3 x 0.5 x 3: translation" in grown.text
    m = await toolkit.measurements(SCENE)
    assert m.bounded("Crate").size == pytest.approx((3, 0.5, 3), abs=1e-4)
    assert m.rests_on("Crate", "Floor", tolerance=1e-3).passed
    assert m.bounded("Twin").size == pytest.approx((1, 1, 1), abs=1e-4)
    assert m.bounded("Beam").size == pytest.approx((2, 0.5, 1), abs=1e-4)
    assert m.bounded("Spaced").size == pytest.approx((2, 1.5, 1), abs=1e-4)


async def test_a_size_that_cannot_be_done_changes_nothing(toolkit: GodotToolkit) -> None:
    # a MeshInstance whose mesh is a mesh file (Debian's assimp test box)
    shutil.copy("/usr/share/assimp/models/OBJ/box.obj", toolkit.project.file("res://box.obj"))
    doc = toolkit.project.read_scene(SCENE)
    doc.add_node("Statue", "MeshInstance").properties["mesh"] = doc.ext_resource(
        "res://box.obj", "Mesh"
    )
    # and an instance of another scene
    part = toolkit.project.new_scene("Part", "Spatial")
    toolkit.project.write_scene("res://part.tscn", part)
    doc.add_node("Prop", None, ".", instance=doc.ext_resource("res://part.tscn", "PackedScene"))
    toolkit.project.write_scene(SCENE, doc)
    before = toolkit.project.file(SCENE).read_bytes()

    def add(type: str, size: object, **props: str):  # type: ignore[no-untyped-def]
        return call(toolkit, "add_node", scene=SCENE, name="New", type=type, properties=props,
                    size=size)  # fmt: skip

    empty = await add("Spatial", [1, 1, 1])
    assert empty.is_error and "New is a Spatial, which has no mesh" in empty.text
    assert "scale = Vector3(" in empty.text and "CubeMesh" in empty.text
    statue = await call(
        toolkit, "set_property", scene=SCENE, node="Statue", property="size", value="[1, 1, 1]"
    )
    assert statue.is_error and "Statue's mesh is res://box.obj" in statue.text, statue.text
    assert "set scale instead" in statue.text
    prop = await call(toolkit, "set_property", scene=SCENE, node="Prop", property="size", value="2")
    assert prop.is_error and "Prop is an instanced scene" in prop.text, prop.text
    oval = await add("MeshInstance", [1, 1, 2], mesh="SphereMesh()")
    assert oval.is_error and "needs x = z" in oval.text and "[1, 1, 1]" in oval.text
    thick = await add("MeshInstance", [10, 1, 10], mesh="PlaneMesh()")
    assert thick.is_error and "flat" in thick.text and "[10, 0, 10]" in thick.text
    upright = await add("MeshInstance", [1, 2, 1], mesh="CapsuleMesh()")
    assert upright.is_error and "lies along z" in upright.text and "[1, 1, 2]" in upright.text
    word = await add("MeshInstance", "big")
    assert word.is_error and "size is [x, y, z] in metres" in word.text
    twice = await add("MeshInstance", [1, 1, 1], mesh="CubeMesh()", **{"mesh/size": "[2, 2, 2]"})
    assert twice.is_error and "give the size once" in twice.text, twice.text
    both = await call(
        toolkit, "add_node", scene=SCENE, name="New", type="MeshInstance",
        properties={"size": "[2, 2, 2]"}, size=[1, 1, 1],
    )  # fmt: skip
    assert both.is_error and "size is given twice" in both.text, both.text
    flat = await add("MeshInstance", [1, 0, 1])
    assert flat.is_error and "y > 0" in flat.text
    assert toolkit.project.file(SCENE).read_bytes() == before
