"""Measure and assert tools against geometry whose answers are known in closed form."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agentsdk.tools import ToolOutcome
from agentsdk_blender import BlenderToolkit, BlenderWorker

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
async def toolkit(anyio_backend: str) -> AsyncIterator[BlenderToolkit]:
    async with BlenderToolkit(BlenderWorker(timeout=90), groups=["core", "measure"]) as kit:
        yield kit


async def call(kit: BlenderToolkit, tool_name: str, /, **arguments: Any) -> dict[str, Any]:
    tool = next(t for t in kit.tools() if t.name == tool_name)
    outcome: ToolOutcome = await tool.call(arguments, ctx=None)
    assert not outcome.is_error, outcome.text
    return json.loads(outcome.parts[-1].text)  # type: ignore[union-attr]


async def cube(kit: BlenderToolkit, name: str, size: float, at: list[float], **extra: Any) -> None:
    await call(kit, "create_primitive", kind="cube", name=name, size=size, location=at, **extra)


async def test_rotated_cube_bounds(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    await cube(toolkit, "Box", 2.0, [1, 2, 1], rotation_degrees=[0, 0, 45])
    measured = await call(toolkit, "measure_object", name="Box")
    half = math.sqrt(2)  # a 2 m square turned 45 degrees spans its diagonal
    assert measured["dimensions"] == pytest.approx([2 * half, 2 * half, 2], abs=1e-5)
    assert measured["bounds_min"] == pytest.approx([1 - half, 2 - half, 0], abs=1e-5)
    assert measured["centre"] == pytest.approx([1, 2, 1], abs=1e-5)
    assert measured["bottom_centre"] == pytest.approx([1, 2, 0], abs=1e-5)
    # Modifiers count: a 3-copy array triples the X size.
    await call(toolkit, "add_modifier", name="Box", kind="array", count=3)
    await call(toolkit, "set_transform", name="Box", rotation_degrees=[0, 0, 0])
    assert (await call(toolkit, "measure_object", name="Box"))["dimensions"] == pytest.approx(
        [6, 2, 2], abs=1e-5
    )


async def test_distance(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    await cube(toolkit, "A", 1.0, [0, 0, 0])
    await cube(toolkit, "B", 1.0, [3, 4, 0])
    found = await call(toolkit, "measure_distance", a="A", b="B")
    assert found["centre_distance"] == pytest.approx(5.0)
    assert found["gap_per_axis"] == pytest.approx([2, 3, -1])
    assert found["gap"] == pytest.approx(math.hypot(2, 3))


async def test_rests_on(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    await call(toolkit, "create_primitive", kind="plane", name="Floor", size=10.0)
    await cube(toolkit, "Crate", 1.0, [0, 0, 0.5])
    resting = await call(toolkit, "assert_rests_on", name="Crate", support="Floor")
    assert resting["passed"] and resting["measured"]["gap_m"] == pytest.approx(0, abs=1e-6)
    await call(toolkit, "set_transform", name="Crate", location=[0, 0, 0.8])
    floating = await call(toolkit, "assert_rests_on", name="Crate", support="Floor")
    assert not floating["passed"] and floating["measured"]["gap_m"] == pytest.approx(0.3)
    assert "0.300 m above" in floating["message"]
    await call(toolkit, "set_transform", name="Crate", location=[0, 0, 0.45])
    sunk = await call(toolkit, "assert_rests_on", name="Crate", support="Floor", tolerance=0.1)
    assert sunk["passed"] and sunk["measured"]["gap_m"] == pytest.approx(-0.05)
    await call(toolkit, "set_transform", name="Crate", location=[20, 0, 0.5])
    beside = await call(toolkit, "assert_rests_on", name="Crate", support="Floor")
    assert not beside["passed"] and "not over Floor" in beside["message"]


async def test_overlap(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    await cube(toolkit, "A", 1.0, [0, 0, 0])
    await cube(toolkit, "B", 1.0, [1, 0, 0])  # faces touch
    touching = await call(toolkit, "assert_no_overlap", a="A", b="B")
    assert touching["passed"] and touching["measured"]["overlap_depth_m"] == pytest.approx(0)
    await call(toolkit, "set_transform", name="B", location=[0.5, 0, 0])
    crossing = await call(toolkit, "assert_no_overlap", a="A", b="B")
    assert not crossing["passed"] and crossing["measured"]["surfaces_intersect"]
    assert crossing["measured"]["overlap_depth_m"] == pytest.approx(0.5)
    await cube(toolkit, "Inner", 0.2, [5, 0, 0])
    await cube(toolkit, "Outer", 1.0, [5, 0, 0])
    inside = await call(toolkit, "assert_no_overlap", a="Inner", b="Outer")
    assert not inside["passed"] and not inside["measured"]["surfaces_intersect"]
    assert inside["measured"]["one_inside_the_other"] and "inside the other" in inside["message"]


async def test_in_frame(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    await cube(toolkit, "Crate", 1.0, [0, 0, 0.5])
    await call(toolkit, "place_camera", location=[0, -10, 0.5], look_at=[0, 0, 0.5])
    framed = await call(toolkit, "assert_in_frame", names=["Crate"])
    assert framed["passed"] and framed["measured"]["fully_inside"]
    # Half the frame's width at 10 m with a 50 mm lens on a 36 mm sensor is 3.6 m.
    await call(toolkit, "set_transform", name="Crate", location=[3.6, 0, 0.5])
    cut = await call(toolkit, "assert_in_frame", names=["Crate"])
    assert not cut["passed"] and "crosses the right of the frame" in cut["message"]
    assert 0 < cut["measured"]["least_inside_fraction"] < 1
    await call(toolkit, "set_transform", name="Crate", location=[0, 0, 0.5])
    small = await call(toolkit, "assert_in_frame", names=["Crate"], min_coverage=0.3)
    # 1 m at 9.5 m: (444.4 px / 9.5)^2 of 320 x 240 pixels is about 2.9% of the frame.
    assert not small["passed"] and small["measured"]["coverage"] == pytest.approx(0.0285, abs=0.004)
    await call(toolkit, "fit_view", names=["Crate"], margin=1.0)
    big = await call(toolkit, "assert_in_frame", names=["Crate"], min_coverage=0.3)
    assert big["passed"] and big["measured"]["coverage"] >= 0.3


async def test_unknown_names_come_back_with_the_call_that_works(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    await call(toolkit, "create_primitive", kind="monkey", name="Suzanne")
    fit = next(t for t in toolkit.tools() if t.name == "fit_view")
    # the only object there is: the 1.5B model asked for the monkey by its kind
    only = await fit.call({"names": ["monkey"]}, ctx=None)
    assert only.is_error and "(objects with geometry: Suzanne)" in only.text
    assert 'Call fit_view again with names=["Suzanne"]' in only.text, only.text
    await cube(toolkit, "Crate", 1.0, [3, 0, 0.5])
    slip = await fit.call({"names": ["crate", "Suzanne"]}, ctx=None)
    assert 'Call fit_view again with names=["Crate", "Suzanne"]' in slip.text, slip.text
    # no likely object among two: the list, and no guess
    lost = await fit.call({"names": ["Lamp"]}, ctx=None)
    assert "objects with geometry: Crate, Suzanne" in lost.text and "did you mean" not in lost.text
    assert "leave names out (fit_view without names frames every object)" in lost.text
    measure = next(t for t in toolkit.tools() if t.name == "measure_object")
    typo = await measure.call({"name": "Crat"}, ctx=None)
    assert typo.is_error and "did you mean Crate?" in typo.text, typo.text


async def test_dimensions(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    await cube(toolkit, "Crate", 1.0, [0, 0, 0.5], scale=[1, 2, 0.5])
    good = await call(toolkit, "assert_dimensions", name="Crate", expected=[1, 2, 0.5])
    assert good["passed"] and good["measured"]["dimensions"] == pytest.approx([1, 2, 0.5])
    bad = await call(toolkit, "assert_dimensions", name="Crate", expected=[1, 1, 1], tolerance=0.1)
    assert not bad["passed"] and bad["measured"]["largest_deviation"] == pytest.approx(1.0)


async def test_in_frame_of_another_camera(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    await cube(toolkit, "Crate", 1.0, [0, 0, 0.5])
    await call(toolkit, "place_camera", location=[0, -10, 0.5], look_at=[0, 0, 0.5])
    await call(
        toolkit,
        "place_camera",
        name="Away",
        location=[0, -10, 0.5],
        look_at=[0, -20, 0.5],
        make_active=False,
    )
    assert (await call(toolkit, "assert_in_frame", names=["Crate"]))["passed"]
    away = await call(toolkit, "assert_in_frame", names=["Crate"], camera="Away")
    assert not away["passed"] and "behind the camera" in away["message"]
    tool = next(t for t in toolkit.tools() if t.name == "assert_in_frame")
    wrong = await tool.call({"names": ["Crate"], "camera": "Crate"}, ctx=None)
    assert wrong.is_error and "is a MESH, not a camera" in wrong.text
