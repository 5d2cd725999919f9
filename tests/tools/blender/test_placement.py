"""Goal-level placement and colour on real bpy: create_primitive(color=, rest_on=) and
set_transform(rest_on=), with every expected height computed here from the vertices."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import trimesh
from agentsdk_blender import BlenderToolkit
from agentsdk_blender.colours import COLOUR_NAMES, parse_colour
from blender_calls import call, objects, ok, rotation

from agentsdk import ToolError

pytestmark = pytest.mark.anyio


def lowest_offset(local: np.ndarray, degrees: list[float], scale: list[float]) -> float:
    """min z of the vertices after scale then rotation (before the location is added)."""
    world = (local * np.array(scale)) @ rotation(degrees).T
    return float(world[:, 2].min())


def linear(channel_8bit: int) -> float:
    """The sRGB transfer curve, inverted (IEC 61966-2-1)."""
    c = channel_8bit / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


# --- resting on the ground ------------------------------------------------------------------


async def test_a_rotated_scaled_arrayed_cube_rests_on_the_ground(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    turn, stretch = [30.0, 45.0, 10.0], [1.0, 2.0, 0.5]
    await ok(toolkit, "create_primitive", kind="cube", name="Bar", size=1.0, location=[3, -2, 7])
    await ok(toolkit, "add_modifier", name="Bar", kind="array", count=3)
    placed = await ok(
        toolkit, "set_transform", name="Bar", rotation_degrees=turn, scale=stretch,
        rest_on="ground",
    )  # fmt: skip
    # The array's copies sit at x + 0, 1, 2 m (offset relative to the 1 m cube): 16 corners.
    corners = np.array(
        [[x + k, y, z] for k in range(3) for x in (-0.5, 0.5) for y in (-0.5, 0.5)
         for z in (-0.5, 0.5)]
    )  # fmt: skip
    expected_z = -lowest_offset(corners, turn, stretch)
    assert placed["location"] == pytest.approx([3, -2, expected_z], abs=1e-5)  # x, y kept
    assert placed["lowest_z"] == pytest.approx(0, abs=1e-5)
    assert placed["rests_on"] == "ground: lowest z=0"
    measured = await ok(toolkit, "measure_object", name="Bar")
    assert measured["bounds_min"][2] == pytest.approx(0, abs=1e-5)


async def test_a_real_scanned_mesh_rests_on_the_ground(
    toolkit: BlenderToolkit, assimp_models: Path
) -> None:
    await toolkit.reset()
    path = assimp_models / "STL/Wuson.stl"
    [name] = (await ok(toolkit, "import_asset", path=str(path)))["objects"]
    turn, stretch = [70.0, -20.0, 15.0], [0.5, 1.5, 1.0]
    placed = await ok(
        toolkit, "set_transform", name=name, rotation_degrees=turn, scale=stretch,
        rest_on="ground",
    )  # fmt: skip
    vertices = np.asarray(trimesh.load(path, force="mesh").vertices, np.float64)
    assert placed["location"][2] == pytest.approx(-lowest_offset(vertices, turn, stretch), abs=1e-4)
    assert placed["lowest_z"] == pytest.approx(0, abs=1e-5)


async def test_a_subdivided_mesh_rests_by_its_evaluated_surface(toolkit: BlenderToolkit) -> None:
    """A subdivided cube shrinks towards a sphere: its lowest point is the modified mesh's,
    read back here from the exported GLB (modifiers applied, glTF's Y is Blender's Z)."""
    await toolkit.reset()
    await ok(toolkit, "create_primitive", kind="cube", name="Pebble", size=2.0)
    await ok(toolkit, "add_modifier", name="Pebble", kind="subdivision", levels=2)
    placed = await ok(
        toolkit, "set_transform", name="Pebble", rotation_degrees=[20, 35, 0], rest_on="ground"
    )
    written = await ok(toolkit, "export_asset", path="pebble.glb")
    scene = trimesh.load(written["path"])
    assert scene.bounds[0][1] == pytest.approx(0, abs=1e-4)
    # An unsubdivided 2 m cube turned like this would need its origin higher up.
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
    assert placed["location"][2] < -lowest_offset(corners, [20, 35, 0], [1, 1, 1]) - 0.05


async def test_a_child_rests_on_the_ground_through_its_parent_transform(
    toolkit: BlenderToolkit,
) -> None:
    await toolkit.reset()
    await ok(toolkit, "create_primitive", kind="cube", name="Holder", size=1.0, location=[0, 0, 3])
    await ok(toolkit, "create_primitive", kind="cube", name="Child", size=1.0, location=[1, 0, 1])
    await ok(
        toolkit,
        "execute_python",
        code=(
            "holder, child = bpy.data.objects['Holder'], bpy.data.objects['Child']\n"
            "holder.rotation_euler = (0.0, 0.0, 0.6)\n"
            "holder.scale = (2.0, 2.0, 2.0)\n"
            "child.parent = holder\n"
        ),
    )
    placed = await ok(toolkit, "set_transform", name="Child", rest_on="ground")
    assert placed["lowest_z"] == pytest.approx(0, abs=1e-5)
    # Under a 2x parent a 1 m cube is 2 m tall, so its centre is 1 m above the ground.
    measured = await ok(toolkit, "measure_object", name="Child")
    assert measured["centre"][2] == pytest.approx(1.0, abs=1e-5)
    assert (await objects(toolkit))["Holder"]["location"] == pytest.approx([0, 0, 3])


# --- resting on another object --------------------------------------------------------------


async def test_a_stack_of_two(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    base = await ok(
        toolkit, "create_primitive", kind="cube", name="Base", size=1.0, location=[2, -1, 4],
        rotation_degrees=[0, 0, 45], rest_on="ground",
    )  # fmt: skip
    half_diagonal = math.sqrt(2) / 2
    assert (base["lowest_z"], base["top_z"]) == pytest.approx((0, 1), abs=1e-5)
    top = await ok(
        toolkit, "create_primitive", kind="uv_sphere", name="Top", size=0.5, rest_on="Base"
    )
    assert top["location"] == pytest.approx([2, -1, 1.25], abs=1e-5)  # centred, not at origin
    assert top["rests_on"] == "Base (top z=1): lowest z=1, centred on it"
    low, high = await toolkit.measure_objects(["Base", "Top"])
    assert high.bounds_min[2] == pytest.approx(low.bounds_max[2], abs=1e-5)
    assert low.bounds_min[:2] == pytest.approx([2 - half_diagonal, -1 - half_diagonal], abs=1e-5)
    # With a location, its x, y are kept and only the height follows the support.
    moved = await ok(toolkit, "set_transform", name="Top", location=[2.3, -0.8, 9], rest_on="Base")
    assert moved["location"] == pytest.approx([2.3, -0.8, 1.25], abs=1e-5)
    assert moved["rests_on"].endswith("at the given x, y")


async def test_a_third_object_stacks_on_the_second(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    await ok(toolkit, "create_primitive", kind="cylinder", name="Drum", size=2.0, rest_on="ground")
    await ok(toolkit, "create_primitive", kind="cube", name="Box", size=1.0, rest_on="Drum")
    lid = await ok(
        toolkit, "create_primitive", kind="cone", name="Lid", size=0.5, scale=[1, 1, 3],
        rest_on="Box",
    )  # fmt: skip
    # Drum 0..2 m, Box 2..3 m, Lid is 0.5 m tall scaled 3x: 3..4.5 m.
    assert (lid["lowest_z"], lid["top_z"]) == pytest.approx((3.0, 4.5), abs=1e-5)


# --- colour ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("colour", "rgb8"),
    [("red", (255, 0, 0)), ("#ff8800", (255, 136, 0)), ("Light Grey", (211, 211, 211)),
     ("#0af", (0, 170, 255)), ("gray", (128, 128, 128))],
)  # fmt: skip
async def test_colour_by_name_or_hex_sets_the_base_colour(
    toolkit: BlenderToolkit, colour: str, rgb8: tuple[int, int, int]
) -> None:
    await toolkit.reset()
    made = await ok(toolkit, "create_primitive", kind="cube", name="Crate", color=colour)
    [material] = made["material_values"]
    assert material["name"] == "Crate_material"
    assert material["base_color"] == pytest.approx([*(linear(c) for c in rgb8), 1.0], abs=1e-5)


async def test_set_material_later_updates_the_same_material(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    await ok(toolkit, "create_primitive", kind="cube", name="Crate", color="red")
    await ok(toolkit, "create_primitive", kind="cube", name="Crate.001", color="blue")
    await ok(toolkit, "set_material", name="Crate", base_color=[0, 1, 0, 1], metallic=1.0)
    scene = await objects(toolkit)
    assert scene["Crate"]["materials"] == ["Crate_material"]
    assert scene["Crate"]["material_values"][0]["base_color"] == [0, 1, 0, 1]
    assert scene["Crate.001"]["materials"] == ["Crate.001_material"]
    assert scene["Crate.001"]["material_values"][0]["base_color"] == pytest.approx([0, 0, 1, 1])
    count = await ok(toolkit, "execute_python", code="print(len(bpy.data.materials))")
    assert count["stdout"].strip() == "2"


async def test_set_material_to_the_material_it_has_changes_nothing(
    toolkit: BlenderToolkit,
) -> None:
    await toolkit.reset()
    await ok(toolkit, "create_primitive", kind="cube", name="Crate", color="red")
    # create_primitive's colour is set_material's default look in that colour.
    same = await call(toolkit, "set_material", name="Crate", color="red")
    assert same.unchanged and not same.is_error, same.text
    said = json.loads(same.parts[-1].text)  # type: ignore[union-attr]
    assert said["unchanged"] == "nothing changed: Crate already had Crate_material, as it was"
    for other in ({"color": "blue"}, {"color": "red", "metallic": 1.0}):
        changed = await call(toolkit, "set_material", name="Crate", **other)
        assert not changed.unchanged and not changed.is_error, changed.text
        assert "unchanged" not in json.loads(changed.parts[-1].text)  # type: ignore[union-attr]
    assert (await call(toolkit, "set_material", name="Crate", color="red", metallic=1.0)).unchanged
    # A material of another name is a change, even with the same values.
    renamed = await call(toolkit, "set_material", name="Crate", color="red", metallic=1.0,
                         material_name="Paint")  # fmt: skip
    assert not renamed.unchanged
    scene = await objects(toolkit)
    assert scene["Crate"]["materials"] == ["Paint"]


@pytest.mark.parametrize(
    ("colour", "rgb8"),
    [("orange", (255, 165, 0)), ("#3366cc", (51, 102, 204)), ("Dark Green", (0, 100, 0))],
)  # fmt: skip
async def test_set_material_takes_a_colour_name_like_its_rgba(
    toolkit: BlenderToolkit, colour: str, rgb8: tuple[int, int, int]
) -> None:
    """color= and the equivalent linear base_color give the same material, read back from
    the Principled BSDF; the linear values are computed here from the 8-bit sRGB code."""
    await toolkit.reset()
    for name in ("ByName", "ByNumbers"):
        await ok(toolkit, "create_primitive", kind="cube", name=name)
    rgba = [*(linear(c) for c in rgb8), 1.0]
    by_name = await ok(toolkit, "set_material", name="ByName", color=colour, roughness=0.3)
    await ok(toolkit, "set_material", name="ByNumbers", base_color=rgba, roughness=0.3)
    assert by_name == {"object": "ByName", "material": "ByName_material"}
    scene = await objects(toolkit)
    named, numbered = scene["ByName"]["material_values"], scene["ByNumbers"]["material_values"]
    assert named[0]["base_color"] == pytest.approx(rgba, abs=1e-5)
    assert named[0]["base_color"] == pytest.approx(numbered[0]["base_color"], abs=1e-6)
    assert named[0]["roughness"] == numbered[0]["roughness"] == pytest.approx(0.3)


async def test_set_material_refuses_both_colours_and_unknown_names(
    toolkit: BlenderToolkit,
) -> None:
    await toolkit.reset()
    await ok(toolkit, "create_primitive", kind="cube", name="Crate", color="red")
    before = await objects(toolkit)
    both = await call(toolkit, "set_material", name="Crate", color="blue", base_color=[0, 0, 1, 1])
    assert both.is_error and "either base_color" in both.text and "not both" in both.text
    unknown = await call(toolkit, "set_material", name="Crate", color="blurple")
    assert unknown.is_error and "unknown colour 'blurple'" in unknown.text
    assert await objects(toolkit) == before  # still red, one material
    # "" is "not given" (small models send it): the default grey, as with no colour at all.
    grey = await ok(toolkit, "set_material", name="Crate", color="", metallic=0.5)
    assert grey["material"] == "Crate_material"
    [values] = (await objects(toolkit))["Crate"]["material_values"]
    assert values["base_color"] == pytest.approx([0.8, 0.8, 0.8, 1.0])
    assert values["metallic"] == pytest.approx(0.5)


def test_every_named_colour_parses_to_its_own_linear_value() -> None:
    for name, code in COLOUR_NAMES.items():
        want = [linear(int(code[i : i + 2], 16)) for i in (0, 2, 4)]
        assert parse_colour(name)[:3] == pytest.approx(want, abs=1e-6), name
    assert parse_colour("dark_grey") == parse_colour("Dark-Gray") == parse_colour("darkgrey")
    assert parse_colour("aqua") == parse_colour("cyan")


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize("colour", ["redd", "#ff88", "#gg0000", "rgb(1,0,0)", "12345"])
async def test_an_unknown_colour_is_refused_and_nothing_is_made(
    toolkit: BlenderToolkit, colour: str
) -> None:
    await toolkit.reset()
    outcome = await call(toolkit, "create_primitive", kind="cube", name="Crate", color=colour)
    assert outcome.is_error
    assert f"unknown colour {colour!r}" in outcome.text
    assert "red, green, blue" in outcome.text and "#ff8800" in outcome.text
    assert await objects(toolkit) == {}
    with pytest.raises(ToolError):
        parse_colour(colour)


async def test_resting_on_an_unknown_object_names_the_scene(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    await ok(toolkit, "create_primitive", kind="cube", name="Table")
    await ok(toolkit, "create_primitive", kind="cube", name="Chair", location=[4, 0, 0])
    outcome = await call(toolkit, "create_primitive", kind="cube", name="Cup", rest_on="Tabel")
    assert outcome.is_error
    assert "no object named 'Tabel'" in outcome.text and "Chair, Table" in outcome.text
    assert "did you mean 'Table'?" in outcome.text
    assert '"ground"' in outcome.text and "Cup" not in outcome.text.split("one of:")[1]
    assert set(await objects(toolkit)) == {"Table", "Chair"}  # the new cube was rolled back
    before = (await objects(toolkit))["Chair"]
    outcome = await call(toolkit, "set_transform", name="Chair", location=[9, 9, 9], rest_on="x")
    assert outcome.is_error and (await objects(toolkit))["Chair"] == before


async def test_lights_cameras_and_self_are_refused(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    await ok(toolkit, "create_primitive", kind="cube", name="Table")
    await ok(toolkit, "place_light", location=[0, 0, 5], name="Lamp")
    await ok(toolkit, "place_camera", location=[5, -5, 3], name="Cam")
    refused = {
        "Lamp": "'Lamp' is a light without geometry, so it cannot rest on anything",
        "Cam": "'Cam' is a camera without geometry, so it cannot rest on anything",
    }
    for name, message in refused.items():
        outcome = await call(toolkit, "set_transform", name=name, rest_on="ground")
        assert outcome.is_error and message in outcome.text
    outcome = await call(toolkit, "set_transform", name="Table", rest_on="Cam")
    assert outcome.is_error and "cannot rest on 'Cam': it is a camera without geometry" in (
        outcome.text
    )
    assert (await objects(toolkit))["Lamp"]["location"] == [0, 0, 5]
    # Nothing stands on itself; small models fill rest_on with the object's own name. One
    # already placed stays where it is; a new one goes on the ground.
    await ok(toolkit, "set_transform", name="Table", location=[1, 2, 3])
    stays = await ok(toolkit, "set_transform", name="Table", rest_on="Table")
    assert stays["location"] == [1, 2, 3] and "rests_on" not in stays, stays
    assert stays["unchanged"] == "nothing moved: Table was already there", stays
    # ... and the call is marked Unchanged, so the loop guard counts it as no progress.
    again = await call(toolkit, "set_transform", name="Table", location=[1, 2, 3])
    assert again.unchanged and not again.is_error, again.text
    moved = await ok(toolkit, "set_transform", name="Table", location=[1, 2, 3.5])
    assert "unchanged" not in moved, moved
    assert not (await call(toolkit, "set_transform", name="Table", location=[0, 0, 0])).unchanged
    new = await ok(toolkit, "create_primitive", kind="cube", name="Post", size=0.5,
                   location=[4, 0, 3], rest_on="Post")  # fmt: skip
    assert new["lowest_z"] == 0 and new["rests_on"].startswith("ground"), new


async def test_ground_spellings_and_empty_arguments(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    placed = await ok(toolkit, "create_primitive", kind="cube", name="A", rest_on="Ground")
    assert placed["lowest_z"] == 0 and placed["rests_on"].startswith("ground")
    # the ways a model writes the ground, in a scene with no object of that name
    for index, said in enumerate(["the floor", "z = 0", "Floor", "ground level"]):
        at = await ok(toolkit, "create_primitive", kind="uv_sphere", name=f"S{index}",
                      location=[index * 3, 5, 4], rest_on=said)  # fmt: skip
        assert at["lowest_z"] == pytest.approx(0, abs=1e-6), (said, at)
        assert at["rests_on"].startswith("ground"), (said, at)
    # an object named like them is the support, in any letter case
    await ok(toolkit, "create_primitive", kind="plane", name="Floor", size=20, location=[0, 0, 1])
    on_floor = await ok(toolkit, "set_transform", name="S0", rest_on="floor")
    assert on_floor["lowest_z"] == pytest.approx(1, abs=1e-6), on_floor
    assert on_floor["rests_on"].startswith("Floor (top z=1)"), on_floor
    # "" is what small models send for "not given": no colour, no rest, no error.
    plain = await ok(toolkit, "create_primitive", kind="cube", name="B", color="", rest_on="")
    assert plain["materials"] == [] and "rests_on" not in plain and plain["lowest_z"] == -1
    # An object that is really named Ground is the support, not the plane z = 0.
    await ok(toolkit, "create_primitive", kind="plane", name="Ground", location=[0, 0, -2])
    on_it = await ok(toolkit, "set_transform", name="A", rest_on="Ground")
    assert on_it["lowest_z"] == pytest.approx(-2) and on_it["rests_on"].startswith("Ground (top")


def test_the_tool_schemas_offer_colour_and_rest_on() -> None:
    specs = {t.name: t.spec().parameters for t in BlenderToolkit().tools()}
    create, move = specs["create_primitive"]["properties"], specs["set_transform"]["properties"]
    assert create["color"]["type"] == "string" and "#ff8800" in create["color"]["description"]
    material = specs["set_material"]["properties"]
    assert material["color"]["type"] == "string" and "#ff8800" in material["color"]["description"]
    assert material["base_color"]["maxItems"] == 4  # RGBA stays the other way to say it
    assert specs["set_material"]["required"] == ["name"]
    assert "ground" in create["rest_on"]["description"]
    assert "ground" in move["rest_on"]["description"]
    # Optional vectors are shown as plain 3-number arrays (no anyOf/null: a shorter prompt).
    location = {k: v for k, v in create["location"].items() if k not in ("default", "description")}
    assert location == {"type": "array", "items": {"type": "number"}, "minItems": 3, "maxItems": 3}


async def test_the_short_schemas_still_validate(toolkit: BlenderToolkit) -> None:
    await toolkit.reset()
    refused = {
        "location": ("create_primitive", {"kind": "cube", "location": [1, 2]}),
        "scale": ("set_transform", {"name": "Nope", "scale": [1, "x", 1]}),
        "base_color": ("set_material", {"name": "Nope", "base_color": [2, 0, 0, 1]}),
        "resolution": ("render", {"resolution": [8, 8]}),
    }
    for field, (tool_name, arguments) in refused.items():
        outcome = await call(toolkit, tool_name, **arguments)
        assert outcome.is_error and field in outcome.text, (field, outcome.text)
    assert await objects(toolkit) == {}


async def test_a_support_written_with_its_description_is_that_object(
    toolkit: BlenderToolkit,
) -> None:
    # rest_on as a result reports it, copied back by the 1.5B model on blender/stack
    await toolkit.reset()
    await ok(toolkit, "create_primitive", kind="cube", name="Base", size=1.0, rest_on="ground")
    await ok(toolkit, "create_primitive", kind="cube", name="Top", size=0.5, location=[3, 0, 0])
    described = "Base (top z=1): lowest z=1, at the given x, y"
    placed = await ok(toolkit, "set_transform", name="Top", rest_on=described)
    assert placed["location"] == pytest.approx([0.0, 0.0, 1.25])
    assert "Base" in str(placed.get("rests_on"))
    # a name that only starts like an object's is still unknown
    wrong = await call(toolkit, "set_transform", name="Top", rest_on="Basement")
    assert wrong.is_error and "no object named 'Basement'" in wrong.text
