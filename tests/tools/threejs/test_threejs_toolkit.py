"""ThreeJSToolkit through its tools and through an Agent: what the model gets back."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trimesh
from agentsdk.plugins import load_toolkit_class
from agentsdk.testing import ScriptedModel
from agentsdk_threejs import RendererPool, ThreeJSToolkit
from PIL import Image as PILImage

from agentsdk import Agent, ImagePart, TextPart, Tool, ToolCallPart, ToolOutcome

from .conftest import ASSIMP_MODELS, TWO_BOXES, close_to, pixel

pytestmark = pytest.mark.anyio

LIGHTS = "scene.add(new THREE.AmbientLight(0xffffff, 1.0));\nconst sun = new THREE.DirectionalLight(0xffffff, 2);\nsun.position.set(3, 5, 4);\nscene.add(sun);\n"


@pytest.fixture(scope="module")
async def toolkit(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[ThreeJSToolkit]:
    out = tmp_path_factory.mktemp("threejs-out")
    async with ThreeJSToolkit(
        groups=["all"], asset_dirs=[ASSIMP_MODELS], output_dir=out, timeout=8
    ) as started:
        yield started


def tools_of(toolkit: ThreeJSToolkit) -> dict[str, Tool]:
    return {t.name: t for t in toolkit.tools()}


def report_of(outcome: ToolOutcome) -> dict[str, Any]:
    """The JSON report (first text part); the visibility report follows it as text."""
    first = outcome.parts[0]
    assert isinstance(first, TextPart)
    return json.loads(first.text)


async def call(toolkit: ThreeJSToolkit, tool_name: str, **arguments: object) -> ToolOutcome:
    return await tools_of(toolkit)[tool_name].call(dict(arguments))


def test_entry_point_and_tool_schemas() -> None:
    assert load_toolkit_class("threejs") is ThreeJSToolkit
    core = tools_of(ThreeJSToolkit())
    assert set(core) == {
        "add_object",
        "update_object",
        "remove_object",
        "add_light",
        "set_camera",
        "fit_view",
        "render",
        "measure",
    }
    tools = tools_of(ThreeJSToolkit(groups=["code", "views", "files"]))
    assert set(tools) == {
        "render_scene",
        "render_views",
        "compare_renders",
        "load_model",
        "export_glb",
    }
    checks = tools_of(ThreeJSToolkit(groups=["check"]))
    assert set(checks) == {
        "assert_rests_on",
        "assert_not_overlapping",
        "assert_distance",
        "assert_in_frame",
    }
    assert len(ThreeJSToolkit(groups="all").tools()) == len(core) + len(tools) + len(checks)
    with pytest.raises(ValueError, match="unknown tool group 'cod'; groups: core, check, views"):
        ThreeJSToolkit(groups=["cod"])
    schema = tools["render_scene"].parameters
    assert schema["required"] == ["code"]
    assert "ctx" not in schema["properties"]
    assert (
        "line numbers" in tools["render_scene"].description
        or "line" in tools["render_scene"].description
    )
    prefixed = ThreeJSToolkit(prefix="threejs", groups="all").tools()
    assert {t.name for t in prefixed} >= {"threejs_render_scene", "threejs_export_glb"}


async def test_render_scene_returns_report_and_image(toolkit: ThreeJSToolkit) -> None:
    outcome = await call(
        toolkit, "render_scene", code=TWO_BOXES, reset=True, size=200, views=["front"]
    )
    assert not outcome.is_error, outcome.text
    report = report_of(outcome)
    assert report["ok"] and report["stats"]["meshes"] == 2 and not report["blank"]
    assert "SwiftShader" in report["renderer"]["renderer"] and report["renderer"]["software"]
    assert report["render_ms"] > 0
    # The visibility report follows for models that cannot see the picture.
    assert "view front: 2 of 2 objects visible" in outcome.text
    assert "red: " in outcome.text and "green: " in outcome.text
    [image] = outcome.images
    assert image.label == "front"
    assert PILImage.open(io.BytesIO(image.data)).size == (200, 200)
    assert close_to(pixel(image.data, 0.25, 0.5), (255, 0, 0))


async def test_session_keeps_the_scene_between_calls(toolkit: ThreeJSToolkit) -> None:
    first = await call(toolkit, "render_scene", code=TWO_BOXES, reset=True, views=["front"])
    assert not first.is_error
    second = await call(
        toolkit,
        "render_scene",
        code="scene.getObjectByName('red').material.color.set(0xffff00);\nvars.count = 1;",
        views=["front"],
    )
    assert not second.is_error, second.text
    assert report_of(second)["stats"]["meshes"] == 2
    assert close_to(pixel(second.images[0].data, 0.25, 0.5), (255, 255, 0))
    third = await call(
        toolkit,
        "render_scene",
        code="if (vars.count !== 1) throw new Error('vars lost');",
        views=["front"],
    )
    assert not third.is_error, third.text
    fresh = await call(
        toolkit,
        "render_scene",
        code=TWO_BOXES.split("const green")[0] + "scene.add(red);",
        reset=True,
        views=["front"],
    )
    assert report_of(fresh)["stats"]["meshes"] == 1


async def test_errors_come_back_with_line_and_source(toolkit: ThreeJSToolkit) -> None:
    syntax = await call(toolkit, "render_scene", code="const a = 1;\nscene.add(new THREE.Mesh(;\n")
    assert syntax.is_error and not syntax.images
    assert "syntax error at line 2" in syntax.text
    assert "2 | scene.add(new THREE.Mesh(;" in syntax.text
    runtime = await call(toolkit, "render_scene", code="\n\nnotDefined.position.x = 2;\n")
    assert runtime.is_error
    assert (
        "exception error at line 3" in runtime.text and "notDefined is not defined" in runtime.text
    )


async def test_a_render_that_logged_an_error_comes_back_with_its_frame(
    toolkit: ThreeJSToolkit,
) -> None:
    code = LIGHTS + TWO_BOXES + '\nconsole.error("texture atlas missing");\n'
    outcome = await call(toolkit, "render_scene", code=code, reset=True)
    assert outcome.is_error and "texture atlas missing" in outcome.text
    # The scene did render: the model gets to look at it along with the error.
    (frame,) = outcome.images
    assert frame.label == "camera (failed render)" and frame.data.startswith(b"\x89PNG")


async def test_blank_frame_is_an_error_the_model_can_act_on(toolkit: ThreeJSToolkit) -> None:
    outcome = await call(
        toolkit,
        "render_scene",
        code="scene.add(new THREE.Mesh(new THREE.BoxGeometry(), new THREE.MeshStandardMaterial()));",
        reset=True,
    )
    assert outcome.is_error
    assert "The frame is blank: camera is all #000000" in outcome.text
    assert "no light" in outcome.text and "1 mesh(es)" in outcome.text
    assert not outcome.images  # a flat colour: the text says all there is to see
    fixed = await call(toolkit, "render_scene", code=LIGHTS)
    assert not fixed.is_error, fixed.text


@pytest.mark.slow
async def test_endless_loop_is_stopped_and_the_scene_survives(toolkit: ThreeJSToolkit) -> None:
    await call(toolkit, "render_scene", code=TWO_BOXES, reset=True)
    hung = await call(
        toolkit, "render_scene", code="scene.add(new THREE.Object3D());\nwhile (true) {}"
    )
    assert hung.is_error and "did not finish within 8 s" in hung.text
    after = await call(toolkit, "render_scene", code="", views=["front"])
    assert not after.is_error, after.text
    assert report_of(after)["stats"]["objects"] == 3  # two boxes + the object added before the loop
    assert close_to(pixel(after.images[0].data, 0.75, 0.5), (0, 255, 0))


async def test_render_views_montage_and_separate(toolkit: ThreeJSToolkit) -> None:
    await call(toolkit, "render_scene", code=TWO_BOXES, reset=True)
    montage = await call(toolkit, "render_views", size=128)
    assert not montage.is_error, montage.text
    [sheet] = montage.images
    assert PILImage.open(io.BytesIO(sheet.data)).size == (256, 256)
    assert sheet.label == "montage front side top iso"
    separate = await call(toolkit, "render_views", views=["top", "iso"], size=96, montage=False)
    assert [image.label for image in separate.images] == ["top", "iso"]
    # From the top, red is on the left and green on the right, blue around them.
    top = separate.images[0].data
    assert close_to(pixel(top, 0.3, 0.5), (255, 0, 0)) and close_to(
        pixel(top, 0.7, 0.5), (0, 255, 0)
    )


async def test_load_model_glb_and_missing_or_outside_paths(toolkit: ThreeJSToolkit) -> None:
    await call(toolkit, "render_scene", code=LIGHTS, reset=True)
    loaded = await call(
        toolkit, "load_model", path="glTF2/BoxTextured-glTF-Binary/BoxTextured.glb", name="crate"
    )
    assert not loaded.is_error, loaded.text
    report = report_of(loaded)
    assert report["stats"]["meshes"] == 1 and report["views"][0]["view"] == "iso"
    named = await call(
        toolkit,
        "render_scene",
        code="if (!scene.getObjectByName('crate')) throw new Error('no crate');",
    )
    assert not named.is_error, named.text
    obj = await call(toolkit, "load_model", path=str(ASSIMP_MODELS / "OBJ" / "box.obj"))
    assert not obj.is_error, obj.text
    missing = await call(toolkit, "load_model", path="glTF2/nothing-here.glb")
    assert missing.is_error and "asset not found: glTF2/nothing-here.glb" in missing.text
    outside = await call(toolkit, "load_model", path="/etc/hostname")
    assert outside.is_error and "outside the asset folders" in outside.text


async def test_export_glb_loads_in_trimesh_with_the_right_mesh_count(
    toolkit: ThreeJSToolkit,
) -> None:
    code = (
        LIGHTS
        + TWO_BOXES
        + (
            "const ball = new THREE.Mesh(new THREE.SphereGeometry(0.5, 16, 8), new THREE.MeshNormalMaterial());\n"
            "ball.position.y = 2;\nscene.add(ball);\n"
        )
    )
    rendered = await call(toolkit, "render_scene", code=code, reset=True)
    assert not rendered.is_error, rendered.text
    outcome = await call(toolkit, "export_glb", path="scenes/three_meshes.glb")
    assert not outcome.is_error, outcome.text
    exported = report_of(outcome)
    assert exported["meshes_in_scene"] == exported["meshes_in_file"] == 3
    assert exported["replaced_materials"] == 1  # MeshNormalMaterial has no glTF form
    loaded = trimesh.load(Path(exported["path"]), force="scene")
    assert len(loaded.graph.nodes_geometry) == 3
    assert exported["triangles_in_file"] == 12 + 12 + 16 * 8 * 2 - 2 * 16
    escaped = await call(toolkit, "export_glb", path="../outside.glb")
    assert escaped.is_error and "inside" in escaped.text


async def test_agent_run_sees_the_rendered_image() -> None:
    model = ScriptedModel(
        [
            ToolCallPart(
                name="render_scene", arguments={"code": TWO_BOXES, "views": ["front"], "size": 128}
            ),
            "A red box on the left and a green box on the right.",
        ]
    )
    agent = Agent(
        model=model, instructions="Build scenes.", tools=[ThreeJSToolkit(groups=["code"])]
    )
    result = await agent.run("Two boxes, red left, green right")
    assert result.output == "A red box on the left and a green box on the right."
    images = [part for message in model.requests[-1].messages for part in _image_parts(message)]
    assert len(images) == 1
    assert close_to(pixel(images[0].data, 0.25, 0.5), (255, 0, 0))


def _image_parts(message: object) -> list[ImagePart]:
    found: list[ImagePart] = []
    for part in getattr(message, "parts", []):
        if isinstance(part, ImagePart):
            found.append(part)
        found.extend(p for p in getattr(part, "parts", []) if isinstance(p, ImagePart))
    return found


async def test_code_that_navigates_away_loses_the_page_not_the_toolkit(
    toolkit: ThreeJSToolkit,
) -> None:
    await call(toolkit, "render_scene", code=TWO_BOXES, reset=True)
    gone = await call(
        toolkit, "render_scene", code="location.href = 'about:blank';\nawait new Promise(() => {});"
    )
    assert gone.is_error and "renderer page failed" in gone.text
    back = await call(toolkit, "render_scene", code=TWO_BOXES, views=["front"])
    assert not back.is_error, back.text
    assert "started empty" in report_of(back)["notes"][-1]
    assert close_to(pixel(back.images[0].data, 0.25, 0.5), (255, 0, 0))


@pytest.mark.slow
async def test_toolkits_sharing_a_pool_without_a_free_page_get_a_clear_error() -> None:
    # Generous: a first render compiles shaders (two passes) on a loaded machine.
    async with RendererPool(pages=1, timeout=8) as shared:
        first = ThreeJSToolkit(pool=shared, groups=["code"])
        second = ThreeJSToolkit(pool=shared, groups=["code"])
        async with first, second:
            assert not (await call(first, "render_scene", code=TWO_BOXES)).is_error
            starved = await call(second, "render_scene", code=TWO_BOXES)
            assert starved.is_error and "one page per toolkit" in starved.text
        assert shared.browser_pids()  # the toolkits do not close a pool they were given
