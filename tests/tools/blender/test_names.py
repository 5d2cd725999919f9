"""Names the model chose, on real bpy: a taken name is refused (saying where the object is
and which tool changes it) instead of becoming Crate.001, and nothing is made."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agentsdk.testing import FunctionModel
from agentsdk_blender import BlenderToolkit, BlenderWorker
from agentsdk_blender.toolkit_base import GROUPS
from blender_calls import call, ok

from agentsdk import Agent, LoopDetected, ModelRequest, ToolCallPart

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
async def toolkit(
    anyio_backend: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[BlenderToolkit]:
    kit = BlenderToolkit(
        BlenderWorker(timeout=90), groups=GROUPS, output_dir=tmp_path_factory.mktemp("out")
    )
    async with kit:
        yield kit


async def scene(kit: BlenderToolkit) -> dict[str, dict[str, Any]]:
    return {o["name"]: o for o in (await ok(kit, "scene_info"))["objects"]}


async def data_blocks(kit: BlenderToolkit) -> dict[str, int]:
    """How many meshes, materials, cameras and lights the file holds (orphans included)."""
    code = (
        "import json\nd = bpy.data\n"
        "print(json.dumps({k: len(getattr(d, k)) for k in "
        "('objects', 'meshes', 'materials', 'cameras', 'lights')}))"
    )
    return json.loads((await ok(kit, "execute_python", code=code))["stdout"])


async def test_a_taken_name_is_refused_and_nothing_is_made(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    first = await ok(
        toolkit, "create_primitive", kind="cube", name="Crate", size=1.0, location=[2, -1, 0.5],
        color="red",
    )  # fmt: skip
    assert first["name"] == "Crate"
    before_scene, before_blocks = await scene(toolkit), await data_blocks(toolkit)
    # Another kind, colour, size and a rest: still refused before anything is built.
    outcome = await call(
        toolkit, "create_primitive", kind="uv_sphere", name="Crate", size=3.0, color="blue",
        rest_on="ground",
    )  # fmt: skip
    assert outcome.is_error
    assert (
        "an object named 'Crate' already exists (a mesh at (2, -1, 0.5), 1 x 1 x 1 m); "
        "change it with set_transform, set_material or add_modifier, or delete it first"
    ) in outcome.text
    assert await scene(toolkit) == before_scene  # no Crate.001, Crate untouched (still red)
    assert await data_blocks(toolkit) == before_blocks  # no stray mesh or material either


async def test_the_message_says_where_a_parented_object_is_in_the_world(
    toolkit: BlenderToolkit,
) -> None:
    await toolkit.reset()
    await ok(toolkit, "create_primitive", kind="cube", name="Rack", size=1.0, location=[0, 0, 3])
    await ok(toolkit, "create_primitive", kind="cube", name="Shelf", size=1.0, location=[1, 0, 1])
    await ok(
        toolkit,
        "execute_python",
        code=(
            "rack, shelf = bpy.data.objects['Rack'], bpy.data.objects['Shelf']\n"
            "rack.scale = (2.0, 2.0, 2.0)\n"
            "shelf.parent = rack\n"  # no inverse: the child's (1, 0, 1) is in Rack's space
        ),
    )
    outcome = await call(toolkit, "create_primitive", kind="cube", name="Shelf")
    # Rack at (0, 0, 3) scaled 2x: the child's local (1, 0, 1) is (2, 0, 5) in the world, and
    # its 1 m cube measures 2 m there.
    assert outcome.is_error
    assert "(a mesh at (2, 0, 5), 2 x 2 x 2 m, parented to 'Rack')" in outcome.text
    assert set(await scene(toolkit)) == {"Rack", "Shelf"}


async def test_lights_and_cameras_name_their_own_tools(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    await ok(toolkit, "place_light", location=[4, -4, 8], name="Key")
    await ok(toolkit, "place_camera", location=[6, -6, 4], name="Shot")
    light = await call(toolkit, "create_primitive", kind="cube", name="Key")
    assert light.is_error and "(a light at (4, -4, 8)); move or aim it with place_light" in (
        light.text
    )
    camera = await call(toolkit, "create_primitive", kind="plane", name="Shot")
    assert camera.is_error and "(a camera at (6, -6, 4)); move or aim it with place_camera" in (
        camera.text
    )
    assert set(await scene(toolkit)) == {"Key", "Shot"}


async def test_place_camera_and_light_move_their_own_kind_and_name_theirs_after_others(
    toolkit: BlenderToolkit,
) -> None:
    await toolkit.reset()
    await ok(toolkit, "create_primitive", kind="cube", name="Crate", size=1.0, location=[0, 0, 0.5])
    await ok(toolkit, "place_camera", location=[5, -5, 3], name="Cam")
    moved = await ok(toolkit, "place_camera", location=[1, -8, 2], name="Cam")  # same camera
    assert moved["name"] == "Cam" and moved["location"] == [1, -8, 2] and "named" not in moved
    # The 0.5B model named the camera after what it films ("Crate"), then sent the same call
    # until the loop guard stopped it (blender/red-cube): the camera becomes "Crate camera",
    # aimed at the crate, which is left alone; the same call again moves that camera.
    for tool_name, kind in (("place_camera", "camera"), ("place_light", "light")):
        made = await ok(toolkit, tool_name, location=[4, -4, 3], name="Crate", look_at="Crate")
        assert made["name"] == f"Crate {kind}" and made["type"] == kind.upper()
        assert made["named"] == (
            f"named 'Crate {kind}': 'Crate' is a mesh at (0, 0, 0.5), 1 x 1 x 1 m"
        )
        assert made["aimed_at"].startswith("Crate (0, 0, 0.5)")
        again = await ok(toolkit, tool_name, location=[6, -6, 3], name="Crate", look_at="Crate")
        assert again["name"] == f"Crate {kind}" and again["location"] == [6, -6, 3]
    assert set(await scene(toolkit)) == {"Crate", "Cam", "Crate camera", "Crate light"}
    assert (await scene(toolkit))["Crate"]["location"] == [0, 0, 0.5]
    # Both names taken by other kinds: refused, nothing made.
    await ok(toolkit, "create_primitive", kind="cube", name="Box", location=[3, 0, 0.5])
    await ok(toolkit, "create_primitive", kind="cube", name="Box light", location=[-3, 0, 0.5])
    before_blocks = await data_blocks(toolkit)
    outcome = await call(toolkit, "place_light", location=[9, 9, 9], name="Box")
    assert outcome.is_error
    assert (
        "'Box light' is already taken by a mesh at (-3, 0, 0.5), 2 x 2 x 2 m, not a light; "
        "give the light another name"
    ) in outcome.text
    assert await data_blocks(toolkit) == before_blocks


async def test_names_differ_by_case_and_unnamed_objects_get_blenders_names(
    toolkit: BlenderToolkit,
) -> None:
    await toolkit.reset()
    await ok(toolkit, "create_primitive", kind="cube", name="Crate")
    lower = await ok(toolkit, "create_primitive", kind="cube", name="crate")
    assert lower["name"] == "crate"  # Blender's names are case-sensitive
    unnamed = [(await ok(toolkit, "create_primitive", kind="cone"))["name"] for _ in range(2)]
    assert unnamed == ["Cone", "Cone.001"]
    # A suffixed name that is free is just a name.
    made = await ok(toolkit, "create_primitive", kind="cube", name="Crate.001")
    assert made["name"] == "Crate.001"


async def test_a_name_too_long_for_blender_is_refused(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    long_name = "Shelf_" + "x" * 300
    for tool_name, arguments in (
        ("create_primitive", {"kind": "cube"}),
        ("place_light", {"location": [0, 0, 5]}),
        ("place_camera", {"location": [0, -5, 1]}),
    ):
        outcome = await call(toolkit, tool_name, name=long_name, **arguments)
        assert outcome.is_error and "is too long: 306 bytes" in outcome.text, outcome.text
        assert "give a shorter name" in outcome.text
    assert await scene(toolkit) == {}
    assert (await data_blocks(toolkit))["objects"] == 0


async def test_a_model_resending_the_returned_name_is_stopped(toolkit: BlenderToolkit) -> None:
    """What a 0.5B model did for 12 turns: send create_primitive again with the name the last
    result gave. Each call used to make a new object under a new name (Crate.001, .002...),
    which the loop guard could not see; now the second call is refused, the refusal repeats,
    and the guard ends the run with one crate in the scene."""
    await toolkit.reset()
    sent: list[str] = []

    def resend(request: ModelRequest) -> ToolCallPart:
        results = [r for m in request.messages for r in m.tool_results]
        name = "Crate"
        if results and not results[-1].is_error:
            name = json.loads(results[-1].text)["name"]
        elif results:
            name = sent[-1]
        sent.append(name)
        return ToolCallPart(name="create_primitive", arguments={"kind": "cube", "name": name})

    agent = Agent(FunctionModel(resend), tools=[toolkit], max_turns=12)
    with pytest.raises(LoopDetected) as stopped:
        await agent.run("Add a cube named Crate.")
    assert stopped.value.result is not None and stopped.value.result.turns < 6
    assert sent == ["Crate"] * len(sent)  # never Crate.001
    assert set(await scene(toolkit)) == {"Crate"}
