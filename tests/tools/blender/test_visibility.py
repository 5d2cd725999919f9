"""The visibility report of Blender renders against answers computed in closed form.

The camera stands at (0, -10, 0) looking along +Y (50 mm lens, 36 mm sensor, 320x240), so a
square plane facing it at depth d projects to an axis-aligned rectangle whose pixel
corners the tests compute themselves with the pinhole model. Tolerances: pixel counts
within one pixel along each edge of the rectangle, boxes within one pixel, fractions
within the same edge allowance divided by the area.
"""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import pytest
from agentsdk.tools import ToolOutcome
from agentsdk.vision import VisibilityReport
from agentsdk_blender import BlenderToolkit, BlenderWorker
from agentsdk_blender.toolkit_base import GROUPS
from PIL import Image as PILImage

pytestmark = pytest.mark.anyio

W, H = 320, 240
FOCAL_PX = 50 / 36 * W  # sensor fit AUTO, landscape: the width spans the 36 mm sensor
CAMERA_Y = -10.0


@pytest.fixture(scope="module")
async def toolkit(anyio_backend: str) -> AsyncIterator[BlenderToolkit]:
    async with BlenderToolkit(BlenderWorker(timeout=90), groups=GROUPS) as kit:
        yield kit


async def call(kit: BlenderToolkit, tool_name: str, /, **arguments: Any) -> ToolOutcome:
    tool = next(t for t in kit.tools() if t.name == tool_name)
    outcome = await tool.call(arguments, ctx=None)
    assert not outcome.is_error, outcome.text
    return outcome


async def python(kit: BlenderToolkit, code: str) -> str:
    outcome = await call(kit, "execute_python", code=code)
    return str(json.loads(outcome.text)["stdout"])


async def scene(kit: BlenderToolkit) -> None:
    await kit.reset()
    await call(kit, "place_camera", location=[0, CAMERA_Y, 0], look_at=[0, 0, 0], lens_mm=50)
    await call(kit, "place_light", location=[0, -5, 5], kind="sun", energy=3)


async def square(
    kit: BlenderToolkit, name: str, x: float, y: float, z: float, size: float, rgba: list[float]
) -> None:
    """A square of side ``size`` facing the camera, centred at (x, y, z)."""
    await call(
        kit, "create_primitive", kind="plane", name=name, size=size,
        location=[x, y, z], rotation_degrees=[90, 0, 0],
    )  # fmt: skip
    await call(kit, "set_material", name=name, base_color=rgba)


def rect(x: float, y: float, z: float, size: float) -> tuple[float, float, float, float]:
    """The square's projection in pixels (left, top, right, bottom), origin top left."""
    depth = y - CAMERA_Y
    half = size / 2
    return (
        W / 2 + FOCAL_PX * (x - half) / depth,
        H / 2 - FOCAL_PX * (z + half) / depth,
        W / 2 + FOCAL_PX * (x + half) / depth,
        H / 2 - FOCAL_PX * (z - half) / depth,
    )


def in_frame(r: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    return (max(r[0], 0), max(r[1], 0), min(r[2], W), min(r[3], H))


def area(r: tuple[float, float, float, float]) -> float:
    return max(r[2] - r[0], 0) * max(r[3] - r[1], 0)


def edge(r: tuple[float, float, float, float]) -> float:
    """One pixel along each edge: the rasteriser's rounding allowance."""
    return 2 * ((r[2] - r[0]) + (r[3] - r[1])) + 4


async def report(kit: BlenderToolkit) -> VisibilityReport:
    [look] = await kit.look(resolution=(W, H))
    assert look.report is not None
    return look.report


async def test_objects_at_known_positions(toolkit: BlenderToolkit) -> None:
    await scene(toolkit)
    await square(toolkit, "Red", -1.2, 0, 0.3, 1.5, [0.8, 0.02, 0.02, 1])
    await square(toolkit, "Blue", 1.5, 4, -0.5, 2.0, [0.02, 0.05, 0.8, 1])
    seen = await report(toolkit)
    for name, where, colour in (
        ("Red", (-1.2, 0, 0.3, 1.5), "red"),
        ("Blue", (1.5, 4, -0.5, 2.0), "blue"),
    ):
        expected = rect(*where)
        item = seen.object(name)
        assert item is not None and item.visible
        assert abs(item.pixels - area(expected)) <= edge(expected), (
            name,
            item.pixels,
            area(expected),
        )
        assert item.coverage == pytest.approx(item.pixels / (W * H))
        assert item.bbox is not None
        for got, want in zip(
            item.bbox, (expected[0], expected[1], expected[2] - 1, expected[3] - 1), strict=True
        ):
            assert abs(got - want) <= 1.0, (name, item.bbox, expected)
        assert item.colour == colour and item.cut_off in (None, 0.0) and not item.cut_sides
        assert item.occluded in (None, 0.0)
    assert seen.background == pytest.approx(1 - sum(o.coverage for o in seen.objects))
    assert not seen.blank


async def test_full_and_half_occlusion(toolkit: BlenderToolkit) -> None:
    await scene(toolkit)
    await square(toolkit, "Back", -1.5, 2, 0, 1.0, [0.8, 0.8, 0.1, 1])
    await square(toolkit, "Cover", -1.5 * 8 / 12, -2, 0, 1.2, [0.1, 0.8, 0.1, 1])  # hides Back
    await square(toolkit, "Half", 1.5, 2, 0, 1.0, [0.8, 0.1, 0.8, 1])
    # In front of Half's left half only: an edge along Half's centre line, seen from the camera.
    depth_half, depth_front = 2 - CAMERA_Y, -2 - CAMERA_Y
    centre_line = 1.5 * depth_front / depth_half  # Half's centre, scaled to Front's depth
    await square(toolkit, "Front", centre_line - 0.6, -2, 0, 1.2, [0.1, 0.1, 0.8, 1])
    seen = await report(toolkit)
    back = seen.object("Back")
    assert back is not None and not back.visible and back.occluded == pytest.approx(1.0)
    assert "Back: not visible (fully hidden behind other objects)" in seen.to_text()
    half = seen.object("Half")
    expected = rect(1.5, 2, 0, 1.0)
    assert half is not None and half.occluded is not None
    assert half.occluded == pytest.approx(0.5, abs=edge(expected) / area(expected))
    assert abs(half.pixels - area(expected) / 2) <= edge(expected)


async def test_cut_off_by_the_frame(toolkit: BlenderToolkit) -> None:
    await scene(toolkit)
    # Centred on the right edge of the frame at depth 10: half of it lies outside.
    edge_x = (W / 2) * 10 / FOCAL_PX
    await square(toolkit, "Edge", edge_x, 0, 0, 1.0, [0.8, 0.1, 0.1, 1])
    await square(toolkit, "Inside", -2, 0, 0, 1.0, [0.1, 0.8, 0.1, 1])
    seen = await report(toolkit)
    cut = seen.object("Edge")
    full = rect(edge_x, 0, 0, 1.0)
    assert cut is not None and cut.cut_sides == ["right"]
    expected = 1 - area(in_frame(full)) / area(full)
    assert expected == pytest.approx(0.5, abs=0.01)
    # The whole projection is counted through a wider lens: coarser pixels, twice the allowance.
    assert cut.cut_off == pytest.approx(expected, abs=2 * edge(full) / area(full))
    assert "Edge is cut off on the right" in seen.to_text()
    inside = seen.object("Inside")
    assert inside is not None and inside.cut_off in (None, 0.0) and inside.cut_sides == []


async def test_empty_scene(toolkit: BlenderToolkit) -> None:
    await scene(toolkit)
    seen = await report(toolkit)
    assert seen.objects == [] and seen.background == 1.0 and seen.blank
    assert seen.to_text().startswith("view camera: 0 of 0 objects visible, background 100%")


async def test_object_behind_the_camera(toolkit: BlenderToolkit) -> None:
    await scene(toolkit)
    await square(toolkit, "Behind", 0, CAMERA_Y - 5, 0, 2.0, [0.8, 0.1, 0.1, 1])
    await square(toolkit, "Ahead", 0, 0, 0, 1.0, [0.1, 0.8, 0.1, 1])
    seen = await report(toolkit)
    behind = seen.object("Behind")
    assert behind is not None and behind.behind_camera and not behind.visible
    assert "Behind: not visible (behind the camera)" in seen.to_text()
    ahead = seen.object("Ahead")
    assert ahead is not None and ahead.visible and not ahead.behind_camera


async def test_two_hundred_and_twenty_five_objects(toolkit: BlenderToolkit) -> None:
    await scene(toolkit)
    code = """
import bpy, math
for row in range(15):
    for col in range(15):
        bpy.ops.mesh.primitive_plane_add(size=0.25, location=(-3 + col * 3 / 7, 0, -2.3 + row * 2.3 / 7))
        obj = bpy.context.active_object
        obj.rotation_euler = (math.pi / 2, 0, 0)
        obj.name = f"tile_{row:02d}_{col:02d}"
"""
    await python(toolkit, code)
    seen = await report(toolkit)
    assert len(seen.objects) == 225 and all(o.visible for o in seen.objects)
    for item in seen.objects:
        row, col = (int(v) for v in item.name.split("_")[1:])
        expected = rect(-3 + col * 3 / 7, 0, -2.3 + row * 2.3 / 7, 0.25)
        assert abs(item.pixels - area(expected)) <= edge(expected), item.name
    text = seen.to_text()
    assert len(text.splitlines()) == 1 + 8 + 1 + len(seen.hints)  # head, 8 objects, the rest
    assert "... 217 more (217 visible" in text


async def test_transparent_material_counts_as_covering(toolkit: BlenderToolkit) -> None:
    """Convention: a see-through object is in the picture; what is behind it counts as hidden."""
    await scene(toolkit)
    await square(toolkit, "Wall", 0, 2, 0, 1.0, [0.8, 0.6, 0.1, 1])
    await square(toolkit, "Glass", 0, -2, 0, 1.0, [0.2, 0.4, 0.9, 0.3])
    seen = await report(toolkit)
    glass, wall = seen.object("Glass"), seen.object("Wall")
    expected = rect(0, -2, 0, 1.0)
    assert glass is not None and abs(glass.pixels - area(expected)) <= edge(expected)
    assert wall is not None and wall.occluded == pytest.approx(1.0)


async def test_linked_duplicates_are_reported_one_by_one(toolkit: BlenderToolkit) -> None:
    await scene(toolkit)
    await square(toolkit, "Tile", -2, 0, 0, 1.0, [0.8, 0.1, 0.1, 1])
    code = """
import bpy
source = bpy.data.objects["Tile"]
for i, x in enumerate((0.0, 2.0)):
    copy = bpy.data.objects.new(f"Tile_copy{i}", source.data)  # shares the mesh
    copy.location = (x, 0, 0)
    copy.rotation_euler = source.rotation_euler
    bpy.context.scene.collection.objects.link(copy)
print(bpy.data.objects["Tile_copy0"].data == source.data)
"""
    assert (await python(toolkit, code)).strip() == "True"
    seen = await report(toolkit)
    for name, x in (("Tile", -2.0), ("Tile_copy0", 0.0), ("Tile_copy1", 2.0)):
        item = seen.object(name)
        expected = rect(x, 0, 0, 1.0)
        assert item is not None and abs(item.pixels - area(expected)) <= edge(expected), name


def pixels(png: bytes) -> np.ndarray[Any, Any]:
    return np.asarray(PILImage.open(io.BytesIO(png)).convert("RGBA"))


SETTINGS = """
import json, bpy
from agentsdk_blender.engine_settings import settings_fingerprint
print(json.dumps({"settings": settings_fingerprint(bpy.context.scene),
                  "colours": {o.name: list(o.color) for o in bpy.data.objects},
                  "hidden": {o.name: o.hide_render for o in bpy.data.objects},
                  "camera": bpy.context.scene.camera.name, "objects": len(bpy.data.objects)},
                 default=str))
"""


async def test_the_id_pass_disturbs_nothing(toolkit: BlenderToolkit) -> None:
    await scene(toolkit)
    await square(toolkit, "A", -1, 0, 0, 1.0, [0.8, 0.1, 0.1, 1])
    await square(toolkit, "B", 1, 2, 0, 1.0, [0.1, 0.8, 0.1, 1])
    await python(toolkit, "bpy.data.objects['A'].color = (0.3, 0.6, 0.9, 0.5)")
    before = json.loads(await python(toolkit, SETTINGS))
    [plain] = await toolkit.look(resolution=(W, H), report=False)
    [reported] = await toolkit.look(resolution=(W, H), report=True)
    [again] = await toolkit.look(resolution=(W, H), report=False)
    after = json.loads(await python(toolkit, SETTINGS))
    changed = {
        (path, key): (value, after["settings"][path].get(key))
        for path, values in before["settings"].items()
        for key, value in values.items()
        if after["settings"][path].get(key) != value
    }
    assert changed == {}
    assert after == before
    # The next render is exactly what it would have been (pixels; the PNG text has a time).
    assert (pixels(plain.png) == pixels(again.png)).all()
    assert (pixels(reported.png) == pixels(plain.png)).all()  # the report's beauty is the plain one
    tool_text = (await call(toolkit, "render", resolution=[W, H])).text
    assert "view camera: 2 of 2 objects visible" in tool_text
    assert json.loads(await python(toolkit, SETTINGS)) == before


async def test_objects_as_the_render_sees_them(toolkit: BlenderToolkit) -> None:
    """Hidden in the viewport only: rendered, so reported. Hidden from renders: not drawn,
    not reported, and it hides nothing."""
    await scene(toolkit)
    await square(toolkit, "EyeHidden", -1.5, 0, 0, 1.0, [0.8, 0.1, 0.1, 1])
    await square(toolkit, "Behind", 1.5, 2, 0, 1.0, [0.1, 0.8, 0.1, 1])
    await square(toolkit, "NotRendered", 1.5 * 8 / 12, -2, 0, 1.2, [0.1, 0.1, 0.8, 1])
    await python(toolkit, "bpy.data.objects['EyeHidden'].hide_set(True)")
    await python(toolkit, "bpy.data.objects['NotRendered'].hide_render = True")
    seen = await report(toolkit)
    assert sorted(o.name for o in seen.objects) == ["Behind", "EyeHidden"]
    eye = seen.object("EyeHidden")
    expected = rect(-1.5, 0, 0, 1.0)
    assert eye is not None and abs(eye.pixels - area(expected)) <= edge(expected)
    behind = seen.object("Behind")
    assert behind is not None and behind.occluded in (None, 0.0)  # NotRendered hides nothing
