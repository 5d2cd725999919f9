"""A dark frame's hint names the light to turn and the call that turns it; following the call
literally lights what the camera sees (real Godot 3: the frame is rendered again and read)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator

import pytest
from agentsdk_godot import GodotEngine, GodotToolkit
from godot_calls import call

pytestmark = pytest.mark.anyio

SCENE = "res://main.tscn"
_CALL = re.compile(r"hint: .*?, ((set_property|add_node)\((.*)\))$", re.M)


def hinted_call(text: str) -> tuple[str, dict[str, object]]:
    """The tool call a hint line ends with, as a model would send it: name=value pairs whose
    values are JSON (strings, or an object of strings)."""
    found = _CALL.search(text)
    assert found, text
    args = dict(re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\{[^}]*\})', found.group(3)))
    return found.group(2), {key: json.loads(value) for key, value in args.items()}


@pytest.fixture
async def toolkit(engine: GodotEngine) -> AsyncIterator[GodotToolkit]:
    async with GodotToolkit(engine=engine) as tk:
        await call(tk, "create_scene", path=SCENE, main=True)
        await call(tk, "add_node", scene=SCENE, name="Camera", type="Camera")
        await call(tk, "add_node", scene=SCENE, name="Target", type="MeshInstance",
                   properties={"mesh": "CubeMesh()"})  # fmt: skip
        yield tk


async def follow(toolkit: GodotToolkit, text: str, view: str) -> str:
    """Make the call the hint gives, then frame the Target again from ``view``."""
    tool, args = hinted_call(text)
    done = await call(toolkit, tool, **args)
    assert not done.is_error, done.text
    again = await call(toolkit, "fit_view", scene=SCENE, names=["Target"], view=view)
    assert not again.is_error, again.text
    return again.text


async def test_a_default_sun_seen_from_the_side_gets_turned(toolkit: GodotToolkit) -> None:
    # godot/red-target-in-frame, 1.5B model: the default DirectionalLight shines along -Z, the
    # camera framed Target from the side, and "add lights" made it add a second Light.
    await call(toolkit, "add_node", scene=SCENE, name="Light", type="DirectionalLight")
    side = await call(toolkit, "fit_view", scene=SCENE, names=["Target"], view="side")
    assert "the frame is blank" in side.text, side.text
    assert "hint: Light shines along (0, 0, -1), across the camera's view" in side.text
    assert "add lights" not in side.text  # the specific hint replaces the general one
    lit = await follow(toolkit, side.text, "side")
    assert "blank" not in lit
    assert re.search(r"^Target: [\d.]+%, centre, (white|light grey)", lit, re.M), lit
    # from the back, the now turned light shines across the view again: turned once more
    back = await call(toolkit, "fit_view", scene=SCENE, names=["Target"], view="back")
    assert "hint: Light shines along" in back.text, back.text
    assert "blank" not in await follow(toolkit, back.text, "back")


async def test_a_light_under_a_turned_parent_gets_its_local_rotation(
    toolkit: GodotToolkit,
) -> None:
    await call(toolkit, "add_node", scene=SCENE, name="Rig", type="Spatial",
               properties={"rotation_degrees": "Vector3( 20, 135, 0 )"})  # fmt: skip
    await call(toolkit, "add_node", scene=SCENE, name="Sun", type="DirectionalLight", parent="Rig")
    side = await call(toolkit, "fit_view", scene=SCENE, names=["Target"], view="front")
    assert "hint: Rig/Sun shines along" in side.text, side.text
    assert "towards the camera" in side.text  # turned 135 degrees, it faces the camera
    assert "blank" not in await follow(toolkit, side.text, "front")


async def test_a_scene_without_a_light_gets_one(toolkit: GodotToolkit) -> None:
    dark = await call(toolkit, "fit_view", scene=SCENE, names=["Target"], view="iso")
    assert "hint: the scene has no light: add one" in dark.text, dark.text
    lit = await follow(toolkit, dark.text, "iso")
    assert "blank" not in lit
    nodes = [n.path for n in toolkit.project.read_scene(SCENE).nodes]
    assert "Sun" in nodes


async def test_a_light_that_shines_the_right_way_gets_no_turning_hint(
    toolkit: GodotToolkit,
) -> None:
    # the light is right; the Target is black, so the hint about it is the core's
    await call(toolkit, "add_node", scene=SCENE, name="Light", type="DirectionalLight")
    await call(toolkit, "set_property", scene=SCENE, node="Target",
               property="mesh/material", value="SpatialMaterial()")  # fmt: skip
    await call(toolkit, "set_property", scene=SCENE, node="Target",
               property="mesh/material/albedo_color", value="Color( 0, 0, 0, 1 )")  # fmt: skip
    front = await call(toolkit, "fit_view", scene=SCENE, names=["Target"], view="front")
    assert "Target: " in front.text and "black" in front.text, front.text
    assert "shines along" not in front.text and "no light" not in front.text, front.text
