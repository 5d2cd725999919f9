"""What the scene camera sees, checked on real bpy without a render (rays from the camera)
and cross-checked against the render's own ID-pass report: placing tools say when the
camera sees none of an object, and fit_view does not frame from a side where one of its
objects hides another."""

from __future__ import annotations

import re

import pytest
from agentsdk_blender import BlenderToolkit
from blender_calls import call, ok

pytestmark = pytest.mark.anyio


async def render_lines(kit: BlenderToolkit) -> str:
    """The camera view's visibility report, as the render's ID pass measures it."""
    out = await call(kit, "render", views=["camera"], engine="workbench", resolution=[160, 120])
    assert not out.is_error, out.text
    return out.text


async def walled(kit: BlenderToolkit) -> None:
    """A camera on -Y looking at a 3 m wide wall at y=0; nothing else yet."""
    await kit.reset()
    await ok(kit, "create_primitive", kind="cube", name="Wall", size=1, location=[0, 0, 1],
             scale=[3, 0.2, 2])  # fmt: skip
    await ok(kit, "place_camera", location=[0, -8, 1], look_at=[0, 0, 1])


async def test_a_moved_object_the_camera_cannot_see_says_why(toolkit: BlenderToolkit) -> None:
    await walled(toolkit)
    behind = await ok(toolkit, "create_primitive", kind="uv_sphere", name="Ball", size=0.6,
                      location=[0, 2, 1])  # fmt: skip
    assert behind["camera_view"] == "hidden behind Wall from the scene camera Camera"
    assert re.search(r"Ball: not visible \(fully hidden", await render_lines(toolkit))
    beside = await ok(toolkit, "set_transform", name="Ball", location=[0, -2, 1])
    assert "camera_view" not in beside  # in front of the wall now
    assert re.search(r"Ball: \d+(\.\d)?%", await render_lines(toolkit))
    away = await ok(toolkit, "set_transform", name="Ball", location=[0, -12, 1])
    assert away["camera_view"] == "outside the frame of the scene camera Camera"
    # partly behind: its top shows above the wall; the share of its points hidden is given,
    # and the render's ID pass agrees that part of it is hidden
    peeking = await ok(toolkit, "set_transform", name="Ball", location=[0, 2, 2.1])
    share = re.fullmatch(r"(\d+)% hidden behind Wall from the scene camera Camera",
                         peeking["camera_view"])  # fmt: skip
    assert share and 5 <= int(share.group(1)) <= 95, peeking
    assert re.search(r"Ball: \d+(\.\d)?%.*hidden", await render_lines(toolkit))
    # across the frame's right edge: 4 m from a 50 mm lens on a 36 mm sensor, the frame
    # reaches 4 * 18 / 50 = 1.44 m to the side
    edge = await ok(toolkit, "set_transform", name="Ball", location=[1.44, -4, 1])
    assert re.fullmatch(r"\d+% outside the frame of the scene camera Camera", edge["camera_view"])


async def test_fit_view_frames_from_a_side_where_nothing_it_frames_is_hidden(
    toolkit: BlenderToolkit,
) -> None:
    await toolkit.reset()
    await ok(toolkit, "create_primitive", kind="cube", name="Crate", size=1, location=[-2, 0, 0.5])
    await ok(toolkit, "create_primitive", kind="cube", name="Big", size=2, location=[2, 0, 1])
    # from +X, the 2 m cube stands in front of the 1 m crate on the same line
    fit = await ok(toolkit, "fit_view", names=["Crate", "Big"], direction=[1, 0, 0])
    assert fit["note"].startswith("from [1, 0, 0] Crate behind Big would be hidden"), fit
    assert "hidden" not in fit and fit["location"][1] != pytest.approx(0, abs=0.1), fit
    report = await render_lines(toolkit)
    assert "Crate: not visible" not in report and "2 of 2 objects visible" in report, report
    # a side that hides nothing is kept as asked, without a note
    side = await ok(toolkit, "fit_view", names=["Crate", "Big"], direction=[0, -1, 0])
    # looking along -Y at the pair's centre: x = (-2.5 + 3) / 2
    assert "note" not in side and side["location"][0] == pytest.approx(0.25, abs=1e-3), side
