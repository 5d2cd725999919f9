"""Measure, assert and compare tools on real scenes; expected numbers computed in the test."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from agentsdk_threejs import ThreeJSToolkit

from agentsdk import ToolOutcome

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
async def toolkit(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[ThreeJSToolkit]:
    out = tmp_path_factory.mktemp("measure-out")
    async with ThreeJSToolkit(groups="all", image_size=192, output_dir=out, timeout=20) as started:
        yield started


async def call(toolkit: ThreeJSToolkit, tool_name: str, /, **arguments: object) -> ToolOutcome:
    tools = {t.name: t for t in toolkit.tools()}
    outcome = await tools[tool_name].call(dict(arguments))
    return outcome


async def checked(
    toolkit: ThreeJSToolkit, tool_name: str, /, **arguments: object
) -> dict[str, object]:
    outcome = await call(toolkit, tool_name, **arguments)
    assert not outcome.is_error, outcome.text
    result: dict[str, object] = json.loads(outcome.text)
    return result


async def table_scene(toolkit: ThreeJSToolkit, box_y: float) -> None:
    await toolkit.reset()
    await call(toolkit, "add_object", name="floor", shape="plane", size=[6, 6], color="grey")
    await call(
        toolkit, "add_object", name="box", size=[1, 1, 1], position=[0, box_y, 0], color="red"
    )
    await call(toolkit, "add_light", kind="ambient", intensity=2)


async def test_rests_on_passes_touching_and_says_how_far_off_otherwise(
    toolkit: ThreeJSToolkit,
) -> None:
    await table_scene(toolkit, 0.5)
    result = await checked(toolkit, "assert_rests_on", name="box", on="floor")
    assert result["passed"] and result["measured"] == {
        "bottom": 0.0,
        "top_of_other": 0.0,
        "vertical_gap": 0.0,
        "footprint_over_other": 1.0,
    }
    await call(toolkit, "update_object", name="box", position=[0, 0.7, 0])
    floating = await checked(toolkit, "assert_rests_on", name="box", on="floor")
    assert not floating["passed"] and "floats 0.200 above floor" in str(floating["message"])
    await call(toolkit, "update_object", name="box", position=[5, 0.5, 0])
    aside = await checked(toolkit, "assert_rests_on", name="box", on="floor")
    assert not aside["passed"] and "footprints do not overlap" in str(aside["message"])
    text = (await call(toolkit, "measure", name="box", other="floor")).text
    assert "box: size 1 x 1 x 1 (w x h x d), centre (5, 0.5, 0), bottom y 0, top y 1" in text


async def test_a_rotated_box_measures_its_tight_world_box(toolkit: ThreeJSToolkit) -> None:
    await toolkit.reset()
    await call(toolkit, "add_object", name="turned", size=[2, 1, 1])
    await call(toolkit, "update_object", name="turned", rotation=[0, 30, 0])
    [bounds] = await toolkit.bounds("turned")
    c, s = math.cos(math.radians(30)), math.sin(math.radians(30))
    # Corners (+-1, +-0.5) of the footprint rotated about y by 30 degrees.
    assert bounds.size == pytest.approx([2 * c + 1 * s, 1, 2 * s + 1 * c], abs=1e-4)


async def test_overlap_and_distance(toolkit: ThreeJSToolkit) -> None:
    await toolkit.reset()
    await call(toolkit, "add_object", name="a", position=[0, 0.5, 0])
    await call(toolkit, "add_object", name="b", position=[0.8, 0.5, 0])
    overlapping = await checked(toolkit, "assert_not_overlapping", name="a", other="b")
    assert not overlapping["passed"]
    assert overlapping["measured"]["penetration"] == pytest.approx(0.2, abs=1e-4)  # type: ignore[index]
    moved = await call(toolkit, "update_object", name="b", position=[0.9, 0.5, 0])
    assert "Note: b overlaps a by 0.1 (b's bottom is y 0; a's top is y 1)." in moved.text
    await call(toolkit, "update_object", name="b", position=[1.0, 0.5, 0])
    touching = await checked(toolkit, "assert_not_overlapping", name="a", other="b")
    assert touching["passed"]
    await call(toolkit, "update_object", name="b", position=[3, 0.5, 4])
    far = await checked(toolkit, "assert_distance", name="a", other="b", distance=5)
    assert far["passed"] and far["measured"]["centre_distance"] == pytest.approx(5)  # type: ignore[index]
    wrong = await call(toolkit, "assert_distance", name="a", other="c", distance=5)
    assert wrong.is_error and 'no object named "c" in the scene; names: a, b' in wrong.text


async def test_in_frame_until_fit_view_makes_it_big_and_whole(toolkit: ThreeJSToolkit) -> None:
    await toolkit.reset()
    await call(toolkit, "add_light", kind="ambient", intensity=2)
    await call(toolkit, "add_object", name="box", position=[3.5, 0, 0], color="orange")
    cut = await checked(toolkit, "assert_in_frame", name="box", min_coverage=0.3)
    assert not cut["passed"] and "cut off" in str(cut["message"])
    assert cut["measured"]["cut_off"] > 0.05  # type: ignore[index,operator]
    await call(toolkit, "fit_view", names=["box"], margin=1.05)
    whole = await checked(toolkit, "assert_in_frame", name="box", min_coverage=0.3)
    assert whole["passed"], whole
    report = await toolkit.visibility()
    box = report.object("box")
    assert box is not None and box.coverage >= 0.3 and box.cut_off == 0


async def test_compare_with_the_previous_render_and_with_a_reference_file(
    toolkit: ThreeJSToolkit,
) -> None:
    await toolkit.reset()
    await call(toolkit, "add_light", kind="ambient", intensity=2)
    first = await call(toolkit, "add_object", name="box", color="red")
    reference = Path(toolkit.output_dir or ".") / "reference.png"
    reference.write_bytes(first.images[0].data)
    same = await call(toolkit, "compare_renders", reference="reference.png")
    assert not same.is_error, same.text
    assert "Compared with reference.png: the images are identical." in same.text
    await call(toolkit, "update_object", name="box", position=[1, 0, 0], color="blue")
    changed = await call(toolkit, "compare_renders")
    assert not changed.is_error, changed.text
    assert (
        "Compared with the camera render before the latest one: similarity (SSIM)" in changed.text
    )
    assert "Changes: box:" in changed.text
    missing = await call(toolkit, "compare_renders", reference="nowhere.png")
    assert missing.is_error and "reference image not found: nowhere.png" in missing.text
