"""Names no object has, on real bpy: the error names them plainly, lists what the scene
has, guesses the likely one, and gives the next call in the toolkit's own tools (make the
objects first, or call again without them); nothing is changed or written."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from agentsdk_blender import BlenderToolkit, BlenderWorker
from agentsdk_blender.toolkit_base import GROUPS
from blender_calls import call, objects, ok

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


async def cubes(kit: BlenderToolkit, *names: str) -> None:
    await kit.reset()
    for x, name in enumerate(names):
        await ok(kit, "create_primitive", kind="cube", name=name, size=1.0, location=[x * 2, 0, 0])


async def test_exporting_objects_never_made_says_what_exists_and_what_to_call(
    toolkit: BlenderToolkit,
) -> None:
    # The 0.5B model asked for cubes A, B and C made only A, then exported all three.
    await cubes(toolkit, "A")
    before = await objects(toolkit)
    outcome = await call(
        toolkit, "export_asset", path="row.glb", format="glb", names=["A", "B", "C"]
    )
    assert outcome.is_error
    assert "no objects named B, C (the scene has: A)" in outcome.text, outcome.text
    assert "If B and C are meant to be new, create them first" in outcome.text
    assert 'create_primitive(kind="cube", name="B")' in outcome.text
    assert 'or leave B and C out: call export_asset again with names=["A"]' in outcome.text
    assert "['B', 'C']" not in outcome.text and "delete" not in outcome.text
    assert "(the scene was not modified by a rollback)" in outcome.text
    assert toolkit.output_dir is not None and not (toolkit.output_dir / "row.glb").exists()
    assert await objects(toolkit) == before
    # None of the names exists: leaving names out exports the whole scene.
    alone = await call(toolkit, "export_asset", path="row.glb", names=["B"])
    assert "no object named B (the scene has: A)" in alone.text
    assert "leave names out (export_asset without names exports the whole scene)" in alone.text
    # Doing what it says works.
    await ok(toolkit, "create_primitive", kind="cube", name="B", size=1.0, location=[2, 0, 0])
    await ok(toolkit, "create_primitive", kind="cube", name="C", size=1.0, location=[4, 0, 0])
    written = await ok(toolkit, "export_asset", path="row.glb", names=["A", "B", "C"])
    assert Path(written["path"]).is_file() and written["bytes"] > 0


async def test_a_near_miss_gets_the_name_it_meant_and_the_fixed_call(
    toolkit: BlenderToolkit,
) -> None:
    await cubes(toolkit, "Cube", "Box.001", "Lamp post")
    case = await call(toolkit, "export_asset", path="a.glb", names=["cube", "Lamp post"])
    assert "no object named cube (the scene has: Box.001, Cube, Lamp post)" in case.text
    assert "did you mean Cube? Names are case-sensitive." in case.text, case.text
    assert 'Call export_asset again with names=["Cube", "Lamp post"]' in case.text
    assert "create_primitive" not in case.text  # it meant Cube: nothing to make
    suffix = await call(toolkit, "set_material", name="Box", color="red")
    assert "did you mean Box.001?" in suffix.text
    assert 'Call set_material again with name="Box.001"' in suffix.text
    # Like no name there: make it first (and no guess).
    mixed = await call(toolkit, "set_transform", name="Crane", location=[0, 0, 1])
    assert "no object named Crane" in mixed.text and "did you mean" not in mixed.text
    assert 'create_primitive(kind="cube", name="Crane")' in mixed.text
    assert "then call set_transform again" in mixed.text
    assert set(await objects(toolkit)) == {"Cube", "Box.001", "Lamp post"}
    assert toolkit.output_dir is not None and not (toolkit.output_dir / "a.glb").exists()


async def test_the_scene_list_is_capped(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    code = (
        "for i in range(25):\n"
        "    bpy.ops.mesh.primitive_cube_add(location=(i * 3, 0, 0))\n"
        "    bpy.context.object.name = f'Post{i:02d}'\n"
    )
    await ok(toolkit, "execute_python", code=code)
    outcome = await call(toolkit, "measure_object", name="Gate")
    assert "(the scene has: Post00, Post01," in outcome.text
    assert "Post19 and 5 more (scene_info lists them))" in outcome.text, outcome.text
    assert "Post20" not in outcome.text


async def test_deleting_a_missing_name_only_says_it_is_not_there(toolkit: BlenderToolkit) -> None:
    await cubes(toolkit, "A")
    before = await objects(toolkit)
    gone = await call(toolkit, "delete", names=["B", "C"])
    assert gone.is_error
    assert "names: no objects named B, C (the scene has: A); nothing was deleted" in gone.text
    assert "create" not in gone.text
    partly = await call(toolkit, "delete", names=["A", "B"])
    assert 'Leave B out: call delete again with names=["A"]' in partly.text
    assert "create" not in partly.text
    assert await objects(toolkit) == before


async def test_names_and_keep_together_come_back_with_the_call_to_make(
    toolkit: BlenderToolkit,
) -> None:
    await cubes(toolkit, "A")
    # What the 0.5B model sent three times after the export failed.
    lost = await call(toolkit, "delete", names=["B", "C"], keep=["A"])
    assert lost.is_error
    assert "give names (the objects to delete) or keep (delete every other object), not both" in (
        lost.text
    )
    assert "B and C do not exist (the scene has: A), so there is nothing to delete by name" in (
        lost.text
    )
    assert "keeping A deletes nothing either: there is nothing to delete" in lost.text
    assert "[" not in lost.text  # no Python lists
    await cubes(toolkit, "A", "B", "C", "D")
    before = await objects(toolkit)
    choose = await call(toolkit, "delete", names=["B"], keep=["A"])
    assert 'To delete just B: call delete(names=["B"])' in choose.text, choose.text
    assert 'or to delete every object except A (B, C, D): call delete(keep=["A"])' in choose.text
    same = await call(toolkit, "delete", names=["D", "B", "C"], keep=["A"])
    assert 'Here both mean the same: call delete(names=["D", "B", "C"])' in same.text
    assert await objects(toolkit) == before
    # A name in both lists is still read as keep.
    kept = await ok(toolkit, "delete", names=["A"], keep=["A"])
    assert kept["deleted"] == ["B", "C", "D"]
