"""create_primitive's size on real bpy: one number as before, or a list ([x, y, z] dimensions;
radii for the round kinds: [r, r, r], [radius, height]; [x, y] for a plane), said in the
result."""

from __future__ import annotations

import math
from typing import Any

import pytest
from agentsdk_blender import BlenderToolkit
from blender_calls import call, objects, ok

pytestmark = pytest.mark.anyio


def test_the_model_sees_a_number_or_two_to_three_numbers() -> None:
    size = BlenderToolkit.create_primitive.parameters["properties"]["size"]
    assert size["anyOf"] == [
        {"type": "number", "exclusiveMinimum": 0},
        {"type": "array", "items": {"type": "number", "minimum": 0}, "minItems": 2, "maxItems": 3},
    ]
    assert size["default"] == 2.0
    assert "[radius, height]" in size["description"] and len(size["description"]) < 140


@pytest.mark.parametrize(
    ("kind", "size", "dimensions", "note"),
    [
        ("cube", [2, 1, 0.1], [2, 1, 0.1], "size [2, 1, 0.1] read as x, y, z (dimensions 2 x 1 x 0.1)"),
        ("cylinder", [0.5, 3], [1, 1, 3],
         "size [0.5, 3] read as radius 0.5, height 3 (dimensions 1 x 1 x 3)"),
        # Round kinds take radii, as three.js reads them: [r, r, h], [r, r, r].
        ("cone", [0.25, 0.25, 2], [0.5, 0.5, 2],
         "size [0.25, 0.25, 2] read as radius 0.25, height 2 (dimensions 0.5 x 0.5 x 2)"),
        ("cylinder", [0.5, 1, 2], [1, 2, 2],
         "size [0.5, 1, 2] read as radii 0.5, 1, height 2 (dimensions 1 x 2 x 2)"),
        ("uv_sphere", [1.5, 1.5, 1.5], [3, 3, 3],
         "size [1.5, 1.5, 1.5] read as radius 1.5 (dimensions 3 x 3 x 3)"),
        ("plane", [10, 10], [10, 10, 0],
         "size [10, 10] read as x, y (a plane is flat) (dimensions 10 x 10 x 0)"),
        ("plane", [20, 20, 0], [20, 20, 0],
         "size [20, 20, 0] read as x, y (a plane is flat) (dimensions 20 x 20 x 0)"),
        ("plane", [20, 20, 0.05], [20, 20, 0],
         "size [20, 20, 0.05] read as x, y (a plane is flat; z 0.05 ignored) "
         "(dimensions 20 x 20 x 0)"),
        # A zero is no dimension (as in three.js): a cone "2 m tall" sent as [2, 0, 0].
        ("cone", [2, 0, 0], [2, 2, 2],
         "size [2, 0, 0] read as diameter 2, height 2, its zeros left out (dimensions 2 x 2 x 2)"),
        ("cone", [0.5, 0, 3], [1, 1, 3], None),
        ("cube", [3, 0, 0], [3, 3, 3], None),
        ("uv_sphere", [0.5, 0, 0], [1, 1, 1], None),
        # Kinds whose box is not their size (an ico sphere's, Suzanne's) are fitted all the same.
        ("ico_sphere", [1, 1, 1], [2, 2, 2], None),
        ("uv_sphere", [1, 2, 0.5], [2, 4, 1], None),
        ("torus", [2, 2, 0.5], [2, 2, 0.5], None),
        ("monkey", [1, 0.8, 0.6], [1, 0.8, 0.6], None),
    ],
)  # fmt: skip
async def test_a_list_size_gives_the_object_those_dimensions(
    toolkit: BlenderToolkit, kind: str, size: list[float], dimensions: list[float], note: str | None
) -> None:
    await toolkit.reset()
    made = await ok(toolkit, "create_primitive", kind=kind, name="Made", size=size)
    assert made["dimensions"] == pytest.approx(dimensions, abs=1e-5)
    assert made["scale"] == [1, 1, 1]  # the mesh has the size, as with one number
    assert made["size_read"].startswith(f"size {size} read as ")
    if note is not None:
        assert made["size_read"] == note
    measured = await ok(toolkit, "measure_object", name="Made")  # world bounds agree
    assert measured["dimensions"] == pytest.approx(dimensions, abs=1e-5)


async def test_one_number_is_read_as_before(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    ball = await ok(toolkit, "create_primitive", kind="uv_sphere", name="Ball", size=1.5)
    assert ball["dimensions"] == pytest.approx([1.5, 1.5, 1.5], abs=1e-5)
    assert ball["size_read"] == "size 1.5 read as diameter 1.5 (dimensions 1.5 x 1.5 x 1.5)"
    crate = await ok(toolkit, "create_primitive", kind="cube", name="Crate")  # default size
    assert crate["dimensions"] == pytest.approx([2, 2, 2], abs=1e-5)
    assert crate["size_read"] == "size 2 read as edge 2 (dimensions 2 x 2 x 2)"
    post = await ok(
        toolkit, "create_primitive", kind="cylinder", name="Post", size=0.5, scale=[1, 1, 3]
    )
    assert post["dimensions"] == pytest.approx([0.5, 0.5, 1.5], abs=1e-5)
    assert post["scale"] == [1, 1, 3]
    assert post["size_read"] == (
        "size 0.5 read as diameter 0.5, height 0.5, times scale [1, 1, 3] "
        "(dimensions 0.5 x 0.5 x 1.5)"
    )
    # A scale besides a list size multiplies it, unless it repeats it (refused, below).
    step = await ok(
        toolkit, "create_primitive", kind="cube", name="Step", size=[1, 1, 1], scale=[2, 1, 1],
        rest_on="ground",
    )  # fmt: skip
    assert step["dimensions"] == pytest.approx([2, 1, 1], abs=1e-5)
    assert step["scale"] == [2, 1, 1] and step["lowest_z"] == pytest.approx(0, abs=1e-5)
    assert (
        step["size_read"]
        == "size [1, 1, 1] read as x, y, z, times scale [2, 1, 1] (dimensions 2 x 1 x 1)"
    )
    floor = await ok(toolkit, "create_primitive", kind="plane", name="Floor", size="20")
    assert floor["dimensions"] == pytest.approx([20, 20, 0], abs=1e-5)
    # A size written out as text (a model not held to the schema) is read as its numbers.
    top = await ok(toolkit, "create_primitive", kind="cube", name="Top", size="2 x 1 x 0.1 m")
    assert top["dimensions"] == pytest.approx([2, 1, 0.1], abs=1e-5)


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"kind": "cube", "size": [2, 1]},
         "size [2, 1]: a cube's size is 1 number (its edge) or 3 ([x, y, z] dimensions"),
        ({"kind": "uv_sphere", "size": [1, 1]}, "or 3 ([r, r, r]: its radius); 2 numbers are"),
        ({"kind": "cube", "size": [2, 0, 1]},
         "size [2, 0, 1], a zero being no dimension, is [2, 1]: a cube's size is 1 number"),
        ({"kind": "cube", "size": [0, 0, 0]}, "size [0, 0, 0]: every dimension must be above 0"),
        ({"kind": "torus", "size": [2, 0, 0]}, "a torus's one number is its overall width"),
        ({"kind": "cylinder", "size": [0, 3]}, "a cylinder's radius and height must be above 0"),
        ({"kind": "plane", "size": [2, 1, 0.5]},
         "a plane is flat, give [x, y] ([2, 1]); for a slab 0.5 m thick make a cube"),
        ({"kind": "cube", "size": [2, 1, 0.1], "scale": [2, 1, 0.1]},
         "size [2, 1, 0.1] already gives the dimensions, so leave scale out"),
        ({"kind": "cylinder", "size": [0.4, 1.2], "scale": [0.8, 0.8, 1.2]},
         "size [0.4, 1.2] already gives the dimensions, so leave scale out"),
        ({"kind": "plane", "size": [20, 10], "scale": [20, 10, 1]},
         "size [20, 10] already gives the dimensions, so leave scale out"),
    ],
)  # fmt: skip
async def test_a_size_that_does_not_fit_the_kind_is_refused_before_anything_is_made(
    toolkit: BlenderToolkit, arguments: dict[str, Any], says: str
) -> None:
    await toolkit.reset()
    outcome = await call(toolkit, "create_primitive", name="Made", **arguments)
    assert outcome.is_error and says in outcome.text, outcome.text
    assert await objects(toolkit) == {}


@pytest.mark.parametrize(
    ("size", "says"),
    [(0, "size 0: give one number above 0"), ([1, 2, 3, 4], "size [1, 2, 3, 4]:"),
     ([math.inf, 1, 1], "size [inf, 1, 1]:"), ("big", "size 'big' is not numbers"),
     ("2mm", "size '2mm' is not numbers")],
)  # fmt: skip
async def test_a_size_that_is_not_one_to_three_metres_is_an_argument_error(
    toolkit: BlenderToolkit, size: object, says: str
) -> None:
    await toolkit.reset()
    outcome = await call(toolkit, "create_primitive", kind="cube", size=size)
    assert outcome.is_error and outcome.kind == "invalid_arguments"
    assert f"- size: {says}" in outcome.text, outcome.text
    assert await objects(toolkit) == {}


async def test_list_sized_objects_rest_on_the_ground_and_on_each_other(
    toolkit: BlenderToolkit,
) -> None:
    await toolkit.reset()
    top = await ok(
        toolkit, "create_primitive", kind="cube", name="Top", size=[2, 1, 0.1], color="brown",
        location=[3, 1, 5], rest_on="ground",
    )  # fmt: skip
    assert top["location"] == pytest.approx([3, 1, 0.05], abs=1e-5)  # x, y kept
    assert (top["lowest_z"], top["top_z"]) == pytest.approx((0, 0.1), abs=1e-5)
    assert top["rests_on"] == "ground: lowest z=0"
    pillar = await ok(
        toolkit, "create_primitive", kind="cylinder", name="Pillar", size=[0.5, 3], rest_on="Top"
    )
    assert pillar["location"] == pytest.approx([3, 1, 0.1 + 1.5], abs=1e-5)  # centred on Top
    assert (pillar["lowest_z"], pillar["top_z"]) == pytest.approx((0.1, 3.1), abs=1e-5)
    # Laid on its side: the diameter (1 m) is now its height.
    log = await ok(
        toolkit, "create_primitive", kind="cylinder", name="Log", size=[0.5, 3],
        rotation_degrees=[90, 0, 0], location=[-3, 0, 4], rest_on="ground",
    )  # fmt: skip
    assert (log["lowest_z"], log["top_z"]) == pytest.approx((0, 1), abs=1e-5)


async def test_a_list_sized_object_scales_and_exports_at_its_size(
    toolkit: BlenderToolkit,
) -> None:
    await toolkit.reset()
    await ok(toolkit, "create_primitive", kind="cube", name="Top", size=[2, 1, 0.1])
    wider = await ok(toolkit, "set_transform", name="Top", scale=[2, 1, 1])
    assert wider["dimensions"] == pytest.approx([4, 1, 0.1], abs=1e-5)  # scale multiplies it
    await ok(toolkit, "set_transform", name="Top", scale=[1, 1, 1])
    written = await ok(toolkit, "export_asset", path="top.glb")
    report = await ok(toolkit, "validate_asset", path=written["path"])
    # glTF is Y-up: Blender's X, Y, Z extents are the file's X, Z, Y.
    assert report["dimensions_m"] == pytest.approx([2, 0.1, 1], abs=1e-4)
