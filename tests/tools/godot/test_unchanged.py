"""set_property that asks for what already is: the scene file stays byte for byte as it was,
and the call says so (``Unchanged``: the loop guard counts it as no progress), on the real
Godot 3 engine."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from agentsdk_godot import GodotEngine, GodotToolkit
from godot_calls import call

from agentsdk import ToolOutcome

pytestmark = pytest.mark.anyio

SCENE = "res://main.tscn"


async def done(toolkit: GodotToolkit, tool_name: str, /, **args: object) -> ToolOutcome:
    outcome = await call(toolkit, tool_name, **args)
    assert not outcome.is_error, outcome.text
    return outcome


@pytest.fixture
async def toolkit(engine: GodotEngine) -> AsyncIterator[GodotToolkit]:
    async with GodotToolkit(engine=engine, groups=["core", "check"]) as tk:
        await done(tk, "create_scene", path=SCENE, main=True)
        await done(tk, "add_node", scene=SCENE, name="Crate", type="MeshInstance",
                   shape="box", color="red", rest_on="ground")  # fmt: skip
        yield tk


async def test_a_value_the_property_already_has_changes_nothing(toolkit: GodotToolkit) -> None:
    file = toolkit.project.file(SCENE)
    recolour = {"scene": SCENE, "node": "Crate", "property": "mesh/material/albedo_color"}
    changed = await done(toolkit, "set_property", **recolour, value="Color( 0, 0, 1, 1 )")
    assert not changed.unchanged and not changed.text.startswith("Nothing changed")
    blue = file.read_bytes()
    again = await done(toolkit, "set_property", **recolour, value="Color( 0, 0, 1, 1 )")
    assert again.unchanged, again.text
    assert "Nothing changed: the scene already was so (" in again.text
    assert file.read_bytes() == blue
    # Another way of writing the same colour is the same colour.
    same = await done(toolkit, "set_property", **recolour, value="Color(0, 0, 1)")
    assert same.unchanged, same.text
    # Standing on the ground where it already stands moves nothing.
    where = dict(toolkit.project.read_scene(SCENE).node("Crate").properties)
    rested = await done(toolkit, "set_property", scene=SCENE, node="Crate",
                        property="translation", value="Vector3( 0, 1, 0 )", rest_on="ground")  # fmt: skip
    assert dict(toolkit.project.read_scene(SCENE).node("Crate").properties) == where
    assert rested.unchanged, rested.text
    moved = await done(toolkit, "set_property", scene=SCENE, node="Crate",
                       property="translation", value="Vector3( 3, 1, 0 )")  # fmt: skip
    assert not moved.unchanged
    assert (await toolkit.measurements(SCENE)).node("Crate").origin[0] == pytest.approx(3)
