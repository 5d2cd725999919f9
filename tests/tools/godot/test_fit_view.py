"""fit_view on the real Godot 3 engine: what it writes is checked by what the engine then
measures (the camera's world origin and axes, every corner of the framed bounds projected into
the frame) and by the screenshot's visibility report; no mocks."""

from __future__ import annotations

import json
import math
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from agentsdk.plugins import load_suite
from agentsdk.tasks import call as step
from agentsdk.tasks import run_task
from agentsdk_godot import Constructor, GodotEngine, GodotToolkit, SceneFile
from agentsdk_godot.framing import VIEWS, axes_facing
from agentsdk_godot.measure import SceneMeasurements
from godot_calls import call

pytestmark = pytest.mark.anyio

SCENE = "res://main.tscn"
FRAME = 512
ROOM = 1.15  # fit_view's default margin


def vec(*v: float) -> Constructor:
    return Constructor("Vector3", v)


def add_box(scene: SceneFile, name: str, at: tuple[float, float, float], size: float = 1) -> None:
    red = scene.add_sub_resource(
        "SpatialMaterial", {"albedo_color": Constructor("Color", (1, 0, 0, 1))}
    )
    node = scene.add_node(name, "MeshInstance")
    node.properties["mesh"] = scene.add_sub_resource(
        "CubeMesh", {"size": vec(size, size, size), "material": red}
    )
    node.properties["translation"] = vec(*at)


def build(toolkit: GodotToolkit, *, camera: bool = True) -> None:
    """Target (a unit cube away from the origin), Far (a 2 m cube 10 m from it), a sun, a lamp
    whose light box is 20 m across, a Marker that draws nothing, and a Camera at the origin."""
    scene = toolkit.project.new_scene("Main", "Spatial")
    add_box(scene, "Target", (2, 1, -3))
    add_box(scene, "Far", (-6, 0.5, 4), size=2)
    scene.add_node("Sun", "DirectionalLight").properties["rotation_degrees"] = vec(-45, 30, 0)
    scene.add_node("Lamp", "OmniLight").properties["omni_range"] = 10.0
    scene.add_node("Marker", "Spatial").properties["translation"] = vec(0, 5, 0)
    if camera:
        scene.add_node("Cam", "Camera")
    toolkit.project.write_scene(SCENE, scene)
    toolkit.project.main_scene = SCENE


@pytest.fixture
async def toolkit(engine: GodotEngine) -> AsyncIterator[GodotToolkit]:
    async with GodotToolkit(engine=engine, groups=["core", "check"]) as tk:
        build(tk)
        yield tk


def moved_to(text: str) -> tuple[float, ...]:
    found = re.search(r"moved to \(([^)]*)\)", text)
    assert found, text
    return tuple(float(v) for v in found.group(1).split(","))


def line(text: str, name: str) -> str:
    found = re.search(rf"^{name}: .*$", text, re.M)
    assert found, text
    return found.group(0)


def coverage(text: str, name: str) -> float:
    found = re.search(rf"^{name}: (\d+)%", text, re.M)
    assert found, text
    return int(found.group(1)) / 100


def screen_box(m: SceneMeasurements, *names: str) -> tuple[float, float, float, float]:
    points = [p for name in names for p in m.node(name).screen]
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs), min(ys), max(xs), max(ys)


def assert_framed_tightly(m: SceneMeasurements, *names: str) -> None:
    """Every corner in the frame, the picture centred, and its larger side 1/margin of it."""
    for name in names:
        check = m.in_frame(name)
        assert check.passed, check.message
    x0, y0, x1, y1 = screen_box(m, *names)
    assert max(x1 - x0, y1 - y0) == pytest.approx(FRAME / ROOM, abs=1.0)
    limiting = (x0, x1) if x1 - x0 >= y1 - y0 else (y0, y1)
    assert sum(limiting) / 2 == pytest.approx(FRAME / 2, abs=1.0)


@pytest.mark.parametrize("view", list(VIEWS))
async def test_each_view_frames_the_node_and_the_engine_reads_the_pose_written(
    toolkit: GodotToolkit, view: str
) -> None:
    out = await call(toolkit, "fit_view", names=["Target"], view=view)
    assert not out.is_error, out.text
    assert f"to frame Target from the {view} view" in out.text
    assert "view Cam: " in out.text and coverage(out.text, "Target") >= 0.30, out.text
    assert "cut off" not in line(out.text, "Target")  # Far, behind it in some views, may be

    m = await toolkit.measurements(SCENE)
    assert m.view.camera == "Cam"
    cam = m.node("Cam")
    # the engine puts the camera where the result says, facing the way the view means
    assert cam.origin == pytest.approx(moved_to(out.text), abs=0.01)
    assert cam.basis is not None
    for axis, expected in zip(cam.basis, axes_facing(VIEWS[view]), strict=True):
        assert axis == pytest.approx(expected, abs=1e-5)
    assert_framed_tightly(m, "Target")


async def test_the_transform_text_is_in_the_order_the_engine_reads(
    toolkit: GodotToolkit,
) -> None:
    """From the right (+X) the camera's -Z is world -X: its axes are x = (0, 0, -1), y = up,
    z = (1, 0, 0), written as basis rows; the engine's answer, not our own helper, decides."""
    out = await call(toolkit, "fit_view", names=["Target"], view="side")
    assert "transform = Transform( 0, 0, 1, 0, 1, 0, -1, 0, 0, " in out.text, out.text
    m = await toolkit.measurements(SCENE)
    x, y, z = m.node("Cam").basis or ((0, 0, 0),) * 3
    assert (x, y, z) == (
        pytest.approx((0, 0, -1), abs=1e-6),
        pytest.approx((0, 1, 0), abs=1e-6),
        pytest.approx((1, 0, 0), abs=1e-6),
    )
    origin = m.node("Cam").origin
    assert origin[1:] == pytest.approx((1, -3), abs=1e-4) and origin[0] > 2.5  # right of Target


async def test_two_nodes_far_apart_are_both_in_frame(toolkit: GodotToolkit) -> None:
    out = await call(toolkit, "fit_view", names=["Target", "Far"], view="iso")
    assert not out.is_error, out.text
    assert "view Cam: 2 of 2 objects visible" in out.text and "cut off" not in out.text
    assert_framed_tightly(await toolkit.measurements(SCENE), "Target", "Far")


async def test_no_names_frames_everything_that_draws_and_not_the_lights(
    toolkit: GodotToolkit,
) -> None:
    out = await call(toolkit, "fit_view")
    assert not out.is_error, out.text
    # the camera looked along -Z (Godot's default): it keeps that direction
    assert "to frame Target, Far from its current direction" in out.text, out.text
    m = await toolkit.measurements(SCENE)
    # tight on the two boxes: the lamp's 20 m light box and the sun's are not framed
    assert_framed_tightly(m, "Target", "Far")
    assert m.node("Cam").basis == (
        pytest.approx((1, 0, 0)),
        pytest.approx((0, 1, 0)),
        pytest.approx((0, 0, 1)),
    )


async def test_a_scene_without_a_camera_gets_one_that_is_current(engine: GodotEngine) -> None:
    async with GodotToolkit(engine=engine) as toolkit:
        build(toolkit, camera=False)
        before = await call(toolkit, "screenshot", frames=2, width=128, height=128)
        assert "call fit_view() to add one that frames everything" in before.text, before.text
        out = await call(toolkit, "fit_view", names=["Target"])
        assert not out.is_error, out.text
        assert out.text.startswith("the scene had no Camera: added Camera under the root")
        assert "current = true" in out.text and "view Camera: " in out.text
        camera = toolkit.project.read_scene(SCENE).node("Camera")
        assert camera.type == "Camera" and camera.properties["current"] is True
        m = await toolkit.measurements(SCENE)
        assert m.view.camera == "Camera"
        assert m.node("Camera").origin == pytest.approx(moved_to(out.text), abs=0.01)
        assert_framed_tightly(m, "Target")


async def test_a_turned_moved_scaled_parent_is_undone(toolkit: GodotToolkit) -> None:
    doc = toolkit.project.read_scene(SCENE)
    doc.remove_node("Cam")
    rig = doc.add_node("Rig", "Spatial")
    # turned 90 degrees about y, scaled 2, moved: a camera under it is turned, scaled, moved too
    rig.properties["transform"] = Constructor("Transform", (0, 0, 2, 0, 2, 0, -2, 0, 0, 5, 1, 2))
    doc.add_node("Cam", "Camera", "Rig")
    toolkit.project.write_scene(SCENE, doc)
    out = await call(toolkit, "fit_view", names=["Target"], view="front")
    assert not out.is_error, out.text
    m = await toolkit.measurements(SCENE)
    assert m.view.camera == "Rig/Cam"
    cam = m.node("Rig/Cam")
    assert cam.origin == pytest.approx(moved_to(out.text), abs=0.01)
    assert cam.basis is not None
    for axis, expected in zip(cam.basis, axes_facing(VIEWS["front"]), strict=True):
        assert axis == pytest.approx(expected, abs=1e-5)  # unit axes: the scale is undone
    assert_framed_tightly(m, "Target")


@pytest.mark.parametrize(
    ("lens", "stored"),
    [
        ({"fov": 30.0, "far": 2.0}, "far = "),  # narrow: further back, past its far plane
        ({"projection": 1, "size": 40.0}, "size = "),  # orthogonal: its size frames
    ],
)
async def test_the_cameras_own_lens_is_used_and_kept_from_clipping(
    toolkit: GodotToolkit, lens: dict[str, float], stored: str
) -> None:
    doc = toolkit.project.read_scene(SCENE)
    doc.node("Cam").properties.update(lens)
    toolkit.project.write_scene(SCENE, doc)
    out = await call(toolkit, "fit_view", names=["Target"], view="iso")
    assert not out.is_error, out.text
    assert stored in out.text and coverage(out.text, "Target") >= 0.30, out.text
    m = await toolkit.measurements(SCENE)
    cam = m.node("Cam")
    assert cam.camera is not None and cam.camera.projection == lens.get("projection", 0)
    assert cam.camera.fov == pytest.approx(lens.get("fov", 70.0))
    assert_framed_tightly(m, "Target")


async def test_what_cannot_be_framed_is_refused_and_nothing_changes(
    toolkit: GodotToolkit,
) -> None:
    path = toolkit.project.file(SCENE)
    before = path.read_bytes()
    unknown = await call(toolkit, "fit_view", names=["Target", "Nope"])
    assert unknown.is_error
    assert "no node 'Nope' in the scene" in unknown.text
    assert "nodes that draw: Target, Far" in unknown.text
    for name, kind in (("Marker", "Spatial"), ("Sun", "DirectionalLight"), ("Lamp", "OmniLight")):
        empty = await call(toolkit, "fit_view", names=[name])
        assert empty.is_error
        assert f"{name} ({kind}) draws nothing to frame; nodes that draw: Target, Far" in empty.text
    not_a_camera = await call(toolkit, "fit_view", names=["Target"], camera="Far")
    assert not_a_camera.is_error and "Far is a MeshInstance, not a Camera (cameras: Cam)" in (
        not_a_camera.text
    )
    margin = await call(toolkit, "fit_view", margin=0)
    assert margin.is_error and "margin must be 0.5..10" in margin.text
    view = await call(toolkit, "fit_view", view="diagonal")
    assert view.is_error and "front" in view.text  # the schema's enum says what there is
    assert path.read_bytes() == before


async def test_a_scene_that_draws_nothing_says_what_to_add(engine: GodotEngine) -> None:
    async with GodotToolkit(engine=engine) as toolkit:
        await call(toolkit, "create_scene", path=SCENE)
        await call(toolkit, "add_node", scene=SCENE, name="Sun", type="DirectionalLight")
        out = await call(toolkit, "fit_view")
        assert out.is_error
        assert "nothing in res://main.tscn draws anything to frame: add a MeshInstance" in out.text
        assert [n.path for n in toolkit.project.read_scene(SCENE).nodes] == [".", "Sun"]


async def test_a_mesh_instance_without_a_mesh_gets_the_call_that_gives_it_one(
    engine: GodotEngine,
) -> None:
    # red-target-in-frame, 1.5B model: Target added as a bare MeshInstance; told to "add a
    # MeshInstance first, e.g. ... name="Box"", it added a Box beside it.
    async with GodotToolkit(engine=engine) as toolkit:
        await call(toolkit, "create_scene", path=SCENE)
        await call(toolkit, "add_node", scene=SCENE, name="Target", type="MeshInstance")
        hint = (
            "Target is a MeshInstance without a mesh, so it draws nothing: give it one, e.g. "
            'set_property(scene="res://main.tscn", node="Target", property="mesh", '
            'value="CubeMesh()"), then fit_view again'
        )
        alone = await call(toolkit, "fit_view", names=["Target"])
        assert alone.is_error and alone.text == hint
        await call(toolkit, "add_node", scene=SCENE, name="Box", type="MeshInstance",
                   properties={"mesh": "CubeMesh()"})  # fmt: skip
        beside = await call(toolkit, "fit_view", names=["Target"])
        assert beside.is_error and beside.text == hint
        fixed = await call(
            toolkit, "set_property", scene=SCENE, node="Target", property="mesh", value="CubeMesh()"
        )
        assert not fixed.is_error, fixed.text
        framed = await call(toolkit, "fit_view", names=["Target"])
        assert not framed.is_error and "Target: " in framed.text, framed.text


async def test_the_screenshot_hint_is_a_call_that_works(toolkit: GodotToolkit) -> None:
    doc = toolkit.project.read_scene(SCENE)
    doc.node("Cam").properties["translation"] = vec(2, 1, -10)  # Target is behind it
    toolkit.project.write_scene(SCENE, doc)
    shot = await call(toolkit, "screenshot", frames=2, width=128, height=128)
    hint = re.search(r"call fit_view\(names=(\[[^\]]*\])\)", shot.text)
    assert hint, shot.text
    names = json.loads(hint.group(1))
    assert "Target" in names
    out = await call(toolkit, "fit_view", names=names)
    assert not out.is_error, out.text
    again = await call(toolkit, "screenshot", frames=2, width=128, height=128)
    for name in names:
        assert re.search(rf"^{name}: [\d.]+%", again.text, re.M), again.text
    assert "cut off" not in again.text and "behind the camera" not in again.text


async def test_the_small_models_red_target_build_passes_with_fit_view(tmp_path: Path) -> None:
    """godot/red-target-in-frame as Qwen2.5-Coder 1.5B builds it (the camera left at the
    origin, inside the cube): the verifier fails it, and passes it after fit_view."""
    task = load_suite("godot").get("godot/red-target-in-frame")
    build_steps = [
        step("create_scene", path=SCENE, root_type="Spatial", main=True),
        step(
            "add_node",
            scene=SCENE,
            name="Target",
            type="MeshInstance",
            properties={"mesh": "CubeMesh()", "mesh/material/albedo_color": "red"},
        ),
        step("add_node", scene=SCENE, name="Camera", type="Camera"),
        step("add_node", scene=SCENE, name="Light", type="DirectionalLight"),
    ]
    scores: dict[str, float] = {}
    for label, steps in {
        "camera left at the origin": build_steps,
        "then fit_view": [*build_steps, step("fit_view", names=["Target"])],
    }.items():
        rollout = await run_task(
            task, "reference", steps=[*steps, "Done."], workdir=tmp_path / str(len(scores))
        )
        assert rollout.verdict is not None, rollout.broken
        scores[label] = rollout.verdict.score
    assert scores["then fit_view"] == 1.0 and scores["camera left at the origin"] < 1.0, scores


def test_fit_view_is_a_core_tool_with_a_short_flat_schema() -> None:
    [fit] = [t for t in GodotToolkit().tools() if t.name == "fit_view"]
    assert fit.spec().side_effects
    properties = fit.parameters["properties"]
    assert list(properties) == ["scene", "names", "view", "margin", "camera"]
    assert properties["view"]["enum"] == ["front", "back", "side", "left", "top", "iso"]
    assert properties["margin"]["default"] == 1.15
    assert not fit.parameters.get("required")
    assert len(json.dumps(fit.spec().model_dump(include={"description", "parameters"}))) < 900
    assert math.isclose(sum(v * v for v in VIEWS["iso"]), 1.0)
