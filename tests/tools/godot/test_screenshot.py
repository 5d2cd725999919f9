"""Screenshots through the windowed runner under a virtual display (real Godot 3)."""

from __future__ import annotations

import io

import pytest
from agentsdk_godot import Constructor, GodotEngine, GodotProject, HarnessJob, blank_frame
from PIL import Image as PILImage


def red_box_scene(project: GodotProject, with_camera: bool = True) -> None:
    scene = project.new_scene("Shot", "Spatial")
    material = scene.add_sub_resource(
        "SpatialMaterial",
        {"albedo_color": Constructor("Color", (1, 0, 0, 1)), "flags_unshaded": True},
    )
    mesh = scene.add_sub_resource("CubeMesh", {"material": material})
    scene.add_node("Box", "MeshInstance").properties["mesh"] = mesh
    if with_camera:
        cam = scene.add_node("Cam", "Camera")
        cam.properties["transform"] = Constructor("Transform", (1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 3))
    project.write_scene("res://shot.tscn", scene)


@pytest.mark.slow
@pytest.mark.anyio
async def test_screenshot_shows_the_red_box(engine: GodotEngine, project: GodotProject) -> None:
    red_box_scene(project)
    run = await engine.run_harness(
        project.path,
        HarnessJob(scene="res://shot.tscn", frames=3, capture_frames=[3]),
        window=True,
        width=128,
        height=128,
    )
    assert run.images, run.stderr
    data = run.images[0]
    image = PILImage.open(io.BytesIO(data)).convert("RGB")
    assert image.size == (128, 128)
    r, g, b = image.getpixel((64, 64))  # type: ignore[misc]
    assert r > 240 and g < 10 and b < 10  # the unshaded red box fills the middle
    r, g, b = image.getpixel((2, 2))  # type: ignore[misc]
    assert not (r > 200 and g < 50)  # the background is not red
    assert blank_frame(data) is None


def test_blank_frame_is_flagged() -> None:
    buffer = io.BytesIO()
    PILImage.new("RGB", (32, 32), (77, 77, 77)).save(buffer, "PNG")
    assert blank_frame(buffer.getvalue()) == "rgb(77, 77, 77)"
