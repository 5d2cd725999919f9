"""Goal-level placement and aiming on real Chromium: ``rest_on`` (add_object, update_object) and
aiming by name (set_camera's look_at, add_light's target). Every expected height, centre and
direction is computed here from the geometry's own vertices (numpy for the shapes' corners and
poles, trimesh for Debian's assimp model and for the exported GLB), not from three.js."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import trimesh
from agentsdk_threejs import ThreeJSToolkit
from numpy.typing import NDArray

from agentsdk import ToolOutcome

from .conftest import ASSIMP_MODELS

pytestmark = pytest.mark.anyio

ENGINE = ASSIMP_MODELS / "glTF2" / "2CylinderEngine-glTF-Binary" / "2CylinderEngine.glb"
Array = NDArray[np.float64]


@pytest.fixture(scope="module")
async def toolkit(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[ThreeJSToolkit]:
    out = tmp_path_factory.mktemp("placement")
    async with ThreeJSToolkit(
        groups=["all"], image_size=128, asset_dirs=[ASSIMP_MODELS], output_dir=out, timeout=30
    ) as started:
        yield started


async def call(toolkit: ThreeJSToolkit, tool_name: str, /, **arguments: object) -> ToolOutcome:
    tools = {t.name: t for t in toolkit.tools()}
    return await tools[tool_name].call(dict(arguments))


async def ok(toolkit: ThreeJSToolkit, tool_name: str, /, **arguments: object) -> str:
    outcome = await call(toolkit, tool_name, **arguments)
    assert not outcome.is_error, outcome.text
    return outcome.text


async def add_turned(toolkit: ThreeJSToolkit, name: str, /, **fields: Any) -> str:
    """add_object, then update_object with the rotation, scale and rest_on (add_object takes
    no rotation or scale): the text of the update, which places the object last."""
    turned = {key: fields.pop(key) for key in ("rotation", "scale", "rest_on") if key in fields}
    await ok(toolkit, "add_object", name=name, **fields)
    return await ok(toolkit, "update_object", name=name, **turned)


async def fresh(toolkit: ThreeJSToolkit) -> None:
    await toolkit.reset()
    await ok(toolkit, "add_light", kind="ambient", intensity=2)


async def page_value(toolkit: ThreeJSToolkit, expression: str) -> Any:
    """Evaluate a JavaScript expression against the live scene (through render_scene's console)."""
    outcome = await call(
        toolkit, "render_scene", code=f"console.log(JSON.stringify({expression}));", size=64
    )
    report = json.loads(outcome.text.split("\n", 1)[0])
    return json.loads(report["console"][-1]["text"])


def rotation(degrees: Sequence[float]) -> Array:
    """three.js Euler order XYZ: R = Rx(a) Ry(b) Rz(c)."""
    a, b, c = np.radians(degrees)
    rx = np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])
    ry = np.array([[np.cos(b), 0, np.sin(b)], [0, 1, 0], [-np.sin(b), 0, np.cos(b)]])
    rz = np.array([[np.cos(c), -np.sin(c), 0], [np.sin(c), np.cos(c), 0], [0, 0, 1]])
    return np.asarray(rx @ ry @ rz, dtype=np.float64)


def placed(vertices: Array, degrees: Sequence[float], scale: Sequence[float]) -> Array:
    """Vertices (N, 3) scaled, then rotated, as an object's matrix does (before its position)."""
    return np.asarray((rotation(degrees) @ (vertices * np.asarray(scale)).T).T, dtype=np.float64)


def box_corners(size: Sequence[float]) -> Array:
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
    half: Array = np.asarray(size, dtype=np.float64) / 2
    return signs * half


async def bounds(toolkit: ThreeJSToolkit, name: str) -> tuple[Array, Array]:
    [found] = await toolkit.bounds(name)
    return np.asarray(found.min), np.asarray(found.max)


def glb_vertices(path: Path) -> dict[str, Array]:
    """World-space vertices of every mesh node of a GLB, as trimesh reads them."""
    scene: Any = trimesh.load(path, force="scene", process=False)
    found: dict[str, list[Array]] = {}
    for node in scene.graph.nodes_geometry:
        transform, geometry = scene.graph[node]
        points = trimesh.transform_points(scene.geometry[geometry].vertices, transform)
        found.setdefault(node, []).append(points)
    return {node: np.vstack(parts) for node, parts in found.items()}


async def test_rotated_scaled_box_rests_on_the_ground(toolkit: ThreeJSToolkit) -> None:
    await fresh(toolkit)
    size, turn, scale = [1, 0.5, 2], [30, 45, 10], [1.5, 1, 0.5]
    text = await add_turned(
        toolkit,
        "crate",
        size=size,
        rotation=turn,
        scale=scale,
        position=[2, 5, -1],
        rest_on="ground",
    )
    assert text.startswith(
        'updated "crate": rotation [30,45,10], scale [1.5,1,0.5], rests on the ground (bottom y=0).'
    ), text
    corners = placed(box_corners(size), turn, scale)
    centre = np.array([2, -corners[:, 1].min(), -1])  # x and z stay, the lowest corner on y=0
    low, high = await bounds(toolkit, "crate")
    np.testing.assert_allclose(low, centre + corners.min(axis=0), atol=1e-5)
    np.testing.assert_allclose(high, centre + corners.max(axis=0), atol=1e-5)
    # update_object(rest_on=...) after a new rotation and scale of the same call.
    turn2, scale2 = [-70, 10, 25], [0.5, 2, 1]
    text = await ok(
        toolkit, "update_object", name="crate", rotation=turn2, scale=scale2, rest_on="Ground"
    )
    assert "rests on the ground (bottom y=0)" in text
    corners = placed(box_corners(size), turn2, scale2)
    low, high = await bounds(toolkit, "crate")
    assert low[1] == pytest.approx(0, abs=1e-5)
    assert high[1] == pytest.approx(corners[:, 1].max() - corners[:, 1].min(), abs=1e-5)
    assert (low + high)[[0, 2]] / 2 == pytest.approx([2, -1], abs=1e-5)


async def test_a_stack_on_a_turned_table(toolkit: ThreeJSToolkit) -> None:
    await fresh(toolkit)
    await add_turned(
        toolkit,
        "table",
        size=[2, 0.8, 1.2],
        rotation=[0, 20, 0],
        position=[1, 3, -1],
        rest_on="ground",
    )
    cube_turn = [30, 45, 0]
    text = await add_turned(toolkit, "cube", size=0.5, rotation=cube_turn, rest_on="table")
    assert "rests on table (top y=0.8), centred on it" in text
    corners = placed(box_corners([0.5, 0.5, 0.5]), cube_turn, [1, 1, 1])
    low, high = await bounds(toolkit, "cube")
    assert low[1] == pytest.approx(0.8, abs=1e-5)
    assert high[1] == pytest.approx(0.8 + np.ptp(corners[:, 1]), abs=1e-5)
    # The turned table's box is centred on its position: the cube is centred on (1, -1).
    assert (low + high)[[0, 2]] / 2 == pytest.approx([1, -1], abs=1e-5)
    # A squashed sphere on the cube: its pole (0, -r, 0) scaled by 0.5 is the lowest vertex.
    text = await add_turned(
        toolkit,
        "ball",
        shape="sphere",
        size=0.3,
        scale=[1, 0.5, 1],
        rest_on="cube",
    )
    ball_low, ball_high = await bounds(toolkit, "ball")
    assert ball_low[1] == pytest.approx(high[1], abs=1e-5)
    assert ball_high[1] == pytest.approx(high[1] + 0.3, abs=1e-5)
    assert f"rests on cube (top y={round(high[1], 4):g})" in text
    # With a position in the same call, x and z are the ones given.
    text = await ok(toolkit, "update_object", name="cube", position=[1.4, 9, -0.7], rest_on="table")
    assert "rests on table (top y=0.8), at the given x, z" in text
    low, high = await bounds(toolkit, "cube")
    assert low[1] == pytest.approx(0.8, abs=1e-5)
    assert (low + high)[[0, 2]] / 2 == pytest.approx([1.4, -0.7], abs=1e-5)
    # A measured rests-on agrees.
    checked = await call(toolkit, "assert_rests_on", name="cube", on="table", tolerance=1e-4)
    assert '"passed":true' in checked.text.replace(" ", ""), checked.text


async def test_round_shapes_checked_in_the_exported_glb(toolkit: ThreeJSToolkit) -> None:
    """Cylinder and torus vertices as trimesh reads them from the exported file."""
    await fresh(toolkit)
    await add_turned(
        toolkit,
        "post",
        shape="cylinder",
        size=[0.4, 1.5],
        rotation=[0, 0, 60],
        scale=[1, 2, 1],
        position=[-1, 4, 0.5],
        rest_on="ground",
    )
    await add_turned(
        toolkit,
        "ring",
        shape="torus",
        size=[0.6, 0.15],
        rotation=[80, 0, 30],
        rest_on="post",
    )
    exported = await call(toolkit, "export_glb", path="stack.glb")
    assert not exported.is_error, exported.text
    vertices = glb_vertices(Path(json.loads(exported.text)["path"]))
    post, ring = vertices["post"], vertices["ring"]
    assert post[:, 1].min() == pytest.approx(0, abs=1e-5)
    assert ring[:, 1].min() == pytest.approx(post[:, 1].max(), abs=1e-5)
    post_centre = (post.min(axis=0) + post.max(axis=0)) / 2
    ring_centre = (ring.min(axis=0) + ring.max(axis=0)) / 2
    assert ring_centre[[0, 2]] == pytest.approx(post_centre[[0, 2]], abs=1e-5)


async def test_a_third_party_model_turned_and_scaled_rests_on_the_ground(
    toolkit: ThreeJSToolkit,
) -> None:
    """Debian's 2CylinderEngine.glb (nested node transforms), its vertices read by trimesh."""
    await fresh(toolkit)
    loaded = await call(toolkit, "load_model", path=str(ENGINE), name="engine", size=64)
    assert not loaded.is_error, loaded.text
    turn, scale = [90, 0, 30], [0.01, 0.01, 0.01]
    text = await ok(
        toolkit, "update_object", name="engine", rotation=turn, scale=scale, rest_on="ground"
    )
    assert "rests on the ground (bottom y=0)" in text
    model = glb_vertices(ENGINE)
    points = placed(np.vstack(list(model.values())), turn, scale)
    lift = np.array([0, -points[:, 1].min(), 0])  # x and z stay; the lowest vertex on y=0
    expected_low, expected_high = points.min(axis=0) + lift, points.max(axis=0) + lift
    low, high = await bounds(toolkit, "engine")
    np.testing.assert_allclose(low, expected_low, atol=1e-4)
    np.testing.assert_allclose(high, expected_high, atol=1e-4)
    # look_at by name aims at the centre of that world box (not the model's origin).
    await ok(toolkit, "set_camera", position=[6, 5, 4], look_at="engine")
    direction = np.asarray(
        await page_value(toolkit, "camera.getWorldDirection(new THREE.Vector3()).toArray()")
    )
    centre = (expected_low + expected_high) / 2
    want = (centre - [6, 5, 4]) / np.linalg.norm(centre - [6, 5, 4])
    np.testing.assert_allclose(direction, want, atol=1e-4)


async def test_camera_and_lights_aim_at_objects_by_name(toolkit: ThreeJSToolkit) -> None:
    await fresh(toolkit)
    await ok(toolkit, "add_object", name="cone", shape="cone", size=[0.5, 2], position=[2, 1, -3])
    await add_turned(
        toolkit,
        "crate2",
        size=[1, 0.5, 2],
        rotation=[0, 30, 0],
        position=[-1, 0.25, 1],
    )
    text = await ok(toolkit, "set_camera", position=[5, 4, 3], look_at="cone")
    assert text.startswith("camera at (5, 4, 3) looking at cone (2, 1, -3)."), text
    direction = np.asarray(
        await page_value(toolkit, "camera.getWorldDirection(new THREE.Vector3()).toArray()")
    )
    want = np.array([2 - 5, 1 - 4, -3 - 3]) / np.linalg.norm([2 - 5, 1 - 4, -3 - 3])
    np.testing.assert_allclose(direction, want, atol=1e-4)
    # The scene lines keep the aim: later calls without look_at keep looking there.
    assert "Camera at (5, 4, 3) looking at (2, 1, -3)" in text
    moved = await ok(toolkit, "set_camera", position=[0, 6, 6])
    assert "looking at (2, 1, -3)" in moved

    for kind, name in (("spot", "key"), ("directional", "sun")):
        text = await ok(
            toolkit, "add_light", kind=kind, name=name, position=[3, 6, 2], target="crate2"
        )
        assert f'light "{name}" aimed at crate2 (-1, 0.25, 1)' in text, text
        aim = await page_value(
            toolkit,
            f"(() => {{ const l = scene.getObjectByName('{name}'); "
            "const p = l.getWorldPosition(new THREE.Vector3()); "
            "const t = l.target.getWorldPosition(new THREE.Vector3()); "
            "return t.sub(p).normalize().toArray(); })()",
        )
        want = np.array([-1 - 3, 0.25 - 6, 1 - 2]) / np.linalg.norm([-1 - 3, 0.25 - 6, 1 - 2])
        np.testing.assert_allclose(aim, want, atol=1e-4)
    # A light has no geometry: aiming at it means its position; "origin" is (0, 0, 0).
    text = await ok(toolkit, "set_camera", position=[0, 2, 9], look_at="key")
    assert "looking at key (3, 6, 2)" in text
    text = await ok(toolkit, "set_camera", look_at="origin")
    assert "looking at the origin (0, 0, 0)" in text
    # "ground", as rest_on says it, is the ground's centre (the 1.5B model aimed a light at it
    # and looped on the refusal).
    text = await ok(toolkit, "set_camera", look_at="the ground")
    assert "looking at the ground at (0, 0, 0)" in text
    # A point still works, also as text.
    text = await ok(toolkit, "set_camera", look_at="1, 2, 3")
    assert "looking at (1, 2, 3)" in text


async def test_bad_placement_and_aim_change_nothing(toolkit: ThreeJSToolkit) -> None:
    await fresh(toolkit)
    await ok(toolkit, "add_object", name="table", size=[2, 1, 2], position=[0, 0.5, 0])
    await ok(toolkit, "add_object", name="cube", size=0.5, position=[3, 2, 0])
    await ok(toolkit, "add_light", kind="directional", name="sun", position=[5, 10, 7])
    before = await toolkit.scene_summary()

    async def refused(tool_name: str, expected: str, **arguments: object) -> None:
        outcome = await call(toolkit, tool_name, **arguments)
        assert outcome.is_error and expected in outcome.text, outcome.text
        assert "Nothing was changed." in outcome.text

    await refused(
        "add_object",
        'rest_on: no object named "tabel"; use "ground" (y=0) or one of: ambient, table, cube, sun',
        name="box",
        rest_on="tabel",
    )
    await refused(
        "update_object",
        '"sun" is a light without geometry, so it cannot rest on anything',
        name="sun",
        rest_on="table",
    )
    await refused(
        "update_object",
        'cannot rest on "sun": it is a light without geometry',
        name="cube",
        rest_on="sun",
        position=[9, 9, 9],
    )
    await refused(
        "set_camera",
        'look_at: no object named "tabel"; give a point [x, y, z] or one of: ambient, table, cube, sun',
        position=[1, 8, 1],
        look_at="tabel",
    )
    await refused(
        "set_camera",
        "look_at: table (0, 0.5, 0) is where the camera stands",
        position=[0, 0.5, 0],
        look_at="table",
    )
    await refused("add_light", '"sun" cannot aim at itself', kind="spot", name="sun", target="sun")
    wrong = await call(toolkit, "set_camera", look_at=[1, 2])
    assert wrong.is_error and wrong.kind == "invalid_arguments", wrong.text
    assert await toolkit.scene_summary() == before
    # "" is what small models send for "not given": nothing rests, nothing is aimed.
    text = await ok(toolkit, "update_object", name="cube", rest_on="", color="red")
    assert "rests" not in text and "cube (box #ff0000) at (3, 2, 0)" in text
    text = await ok(toolkit, "set_camera", position=[4, 3, 6], look_at="")
    assert "looking at (0, 0, 0)" in text
    # A light of the same name is still replaced by the new one.
    text = await ok(toolkit, "add_light", kind="point", name="sun", position=[1, 4, 1])
    assert 'replaced the existing "sun" with a point light' in text
    # A light named like an object (small models name a light after what it lights: "tree"
    # for the tree's light, export-tree) is named "<name> light"; replacing the object would
    # throw it away, and refusing had the models send the same call until the loop guard
    # stopped them. It aims at the object of that name, and the same call again replaces it.
    text = await ok(
        toolkit, "add_light", kind="spot", name="cube", position=[3, 6, 0], target="cube"
    )
    assert (
        'added spot light "cube light" aimed at cube (3, 2, 0) '
        '(named "cube light": "cube" is an object in the scene)'
    ) in text
    assert "cube (box" in text and "cube light (spot" in text, text
    text = await ok(toolkit, "add_light", kind="point", name="cube", position=[3, 6, 0])
    assert 'replaced the existing "cube light" with a point light' in text
    # A new directional or spot light whose position is its target (what small models send:
    # [0, 0, 0] twice, or the lit object's centre) stands where its kind does by default,
    # relative to that point, and says so.
    text = await ok(
        toolkit, "add_light", kind="directional", name="rim", position=[3, 2, 0], target="cube"
    )
    assert (
        'added directional light "rim" aimed at cube (3, 2, 0) '
        "(placed at (8, 12, 7): its position was its target)"
    ) in text
    text = await ok(toolkit, "add_light", kind="spot", name="key", position=[0, 0, 0])
    assert 'added spot light "key" (placed at (4, 8, 4): its position was its target)' in text

    # Both names taken by objects: refused, nothing changed.
    await ok(toolkit, "add_object", name="table light", size=0.2, position=[0, 3, 0])
    before = await toolkit.scene_summary()
    await refused(
        "add_light",
        '"table" and "table light" are objects in the scene, not lights',
        kind="point",
        name="table",
    )
    assert await toolkit.scene_summary() == before


async def test_rest_on_as_small_models_write_it(toolkit: ThreeJSToolkit) -> None:
    # What the 1.5B model sent: its own name (a new "floor" on "floor"), "y = 0", and "floor"
    # before any floor existed. Each means the ground; an object already placed that is told
    # to rest on itself stays where it is.
    await fresh(toolkit)
    text = await ok(
        toolkit, "add_object", name="floor", shape="plane", size=[10, 10], rest_on="floor"
    )
    assert "rests on the ground" in text, text
    for said in ("y = 0", "the ground", "GROUND", "y=0"):
        name = f"ball{len(said)}"
        text = await ok(toolkit, "add_object", name=name, shape="sphere", size=1,
                        position=[len(said), 4, 0], rest_on=said)  # fmt: skip
        bottom = await page_value(
            toolkit, f"new THREE.Box3().setFromObject(scene.getObjectByName('{name}')).min.y"
        )
        assert "rests on" in text and abs(bottom) < 1e-6, (said, text, bottom)
    await ok(toolkit, "add_object", name="cube", size=0.5, position=[-3, 2, 0])
    text = await ok(toolkit, "update_object", name="cube", rest_on="cube")
    centre = await page_value(toolkit, "scene.getObjectByName('cube').position.toArray()")
    assert centre == [-3, 2, 0] and "rests on" not in text, (centre, text)
    # an object that is named like the ground words is still that object, in any case
    await fresh(toolkit)
    await ok(toolkit, "add_object", name="floor", size=[10, 0.2, 10], position=[0, 1, 0])
    await ok(toolkit, "add_object", name="crate", size=1, rest_on="Floor")  # in another case
    low = await page_value(
        toolkit, "new THREE.Box3().setFromObject(scene.getObjectByName('crate')).min.y"
    )
    assert abs(low - 1.1) < 1e-6, low


async def light_at(toolkit: ThreeJSToolkit, name: str) -> Array:
    return np.asarray(
        await page_value(
            toolkit,
            f"scene.getObjectByName('{name}').getWorldPosition(new THREE.Vector3()).toArray()",
        )
    )


async def target_of(toolkit: ThreeJSToolkit, name: str) -> Array:
    """Where a directional or spot light's target is, in world space."""
    return np.asarray(
        await page_value(
            toolkit,
            f"scene.getObjectByName('{name}').target.getWorldPosition(new THREE.Vector3())"
            ".toArray()",
        )
    )


async def hedge(toolkit: ThreeJSToolkit) -> None:
    """A fresh scene with a hedge 1 tall standing on the ground, centred on the origin."""
    await fresh(toolkit)
    await ok(toolkit, "add_object", name="hedge", size=[5, 1, 0.5], rest_on="ground")


async def test_above_arguments_are_short_and_plain(toolkit: ThreeJSToolkit) -> None:
    [add_light] = [t for t in toolkit.tools() if t.name == "add_light"]
    properties = add_light.parameters["properties"]
    assert {key: value["type"] for key, value in properties.items() if key in ("above", "gap")} == {
        "above": "string",
        "gap": "number",
    }
    assert "above" not in add_light.parameters.get("required", [])
    assert all(len(properties[key]["description"]) <= 80 for key in ("above", "gap"))


async def test_a_point_light_above_an_object_goes_gap_over_its_top(
    toolkit: ThreeJSToolkit,
) -> None:
    # s25/3: "a point light named lamp 2 above" a hedge 1 tall came as position [0, 1, 2]
    await hedge(toolkit)
    text = await ok(toolkit, "add_light", kind="point", name="lamp", above="hedge", gap=2)
    first, rest = text.split("\n", 1)
    assert first == 'added point light "lamp" 2 above hedge (top y=1): at (0, 3, 0).', text
    assert "Lights: ambient (ambient 2); lamp (point 3) at (0, 3, 0)." in rest, rest
    np.testing.assert_allclose(await light_at(toolkit, "lamp"), [0, 3, 0], atol=1e-6)
    # gap left out is 1 (the same name replaces the light); any letter case finds the hedge
    text = await ok(toolkit, "add_light", kind="point", name="lamp", above="HEDGE")
    assert text.startswith(
        'replaced the existing "lamp" with a point light 1 above hedge (top y=1): at (0, 2, 0).'
    ), text
    np.testing.assert_allclose(await light_at(toolkit, "lamp"), [0, 2, 0], atol=1e-6)
    # 0 is right on top; "" (a small model's "not given") is the default
    await ok(toolkit, "add_light", kind="point", name="lamp", above="hedge", gap=0)
    np.testing.assert_allclose(await light_at(toolkit, "lamp"), [0, 1, 0], atol=1e-6)
    await ok(toolkit, "add_light", kind="point", name="lamp", above="hedge", gap="")
    np.testing.assert_allclose(await light_at(toolkit, "lamp"), [0, 2, 0], atol=1e-6)


async def test_a_light_above_a_turned_moved_object_uses_its_world_box(
    toolkit: ThreeJSToolkit,
) -> None:
    await fresh(toolkit)
    size, turn, at = [2, 1, 0.5], [30, 45, 0], np.array([3, 2, -1])
    await add_turned(toolkit, "crate", size=size, position=at.tolist(), rotation=turn)
    corners = placed(box_corners(size), turn, [1, 1, 1]) + at
    low, high = corners.min(axis=0), corners.max(axis=0)
    middle = (low + high) / 2
    text = await ok(toolkit, "add_light", kind="point", name="over", above="crate", gap=0.5)
    want = [middle[0], high[1] + 0.5, middle[2]]
    np.testing.assert_allclose(await light_at(toolkit, "over"), want, atol=1e-5)
    assert text.startswith(
        f'added point light "over" 0.5 above crate (top y={round(high[1], 4):g}): at'
    )
    # the same from a box that is a child of a moved group: world, not local, coordinates
    await ok(
        toolkit,
        "render_scene",
        code="const g = new THREE.Group(); g.name = 'shelf'; g.position.set(-4, 1, 2); "
        "g.rotation.y = Math.PI / 2; const m = new THREE.Mesh(new THREE.BoxGeometry(1, 2, 3), "
        "new THREE.MeshStandardMaterial()); m.name = 'jar'; m.position.set(1, 0.5, 0); "
        "g.add(m); scene.add(g);",
        size=64,
    )
    # the group turns the jar's local +x (1) onto world -z: centre (-4, 1.5, 1), top 1.5 + 1
    await ok(toolkit, "add_light", kind="point", name="jar lamp", above="jar", gap=1)
    np.testing.assert_allclose(await light_at(toolkit, "jar lamp"), [-4, 3.5, 1], atol=1e-5)


async def test_a_position_given_with_above_is_replaced_and_said_so(
    toolkit: ThreeJSToolkit,
) -> None:
    await hedge(toolkit)
    text = await ok(
        toolkit, "add_light", kind="point", name="lamp", above="hedge", gap=2, position=[0, 1, 2]
    )
    assert text.startswith(
        'added point light "lamp" 2 above hedge (top y=1): at (0, 3, 0); '
        "position [0, 1, 2] replaced by above."
    ), text
    np.testing.assert_allclose(await light_at(toolkit, "lamp"), [0, 3, 0], atol=1e-6)


async def test_directional_and_spot_lights_above_aim_at_the_object(
    toolkit: ThreeJSToolkit,
) -> None:
    await fresh(toolkit)
    await ok(toolkit, "add_object", name="hedge", size=[5, 1, 0.5], position=[2, 0.5, -3])
    text = await ok(toolkit, "add_light", kind="directional", name="sun", above="hedge", gap=4)
    assert text.startswith(
        'added directional light "sun" 4 above hedge (top y=1): at (2, 5, -3), '
        "aimed at hedge (2, 0.5, -3)."
    ), text
    np.testing.assert_allclose(await light_at(toolkit, "sun"), [2, 5, -3], atol=1e-6)
    np.testing.assert_allclose(await target_of(toolkit, "sun"), [2, 0.5, -3], atol=1e-6)
    text = await ok(toolkit, "add_light", kind="spot", name="key", above="hedge")
    assert "1 above hedge (top y=1): at (2, 2, -3), aimed at hedge (2, 0.5, -3)" in text, text
    np.testing.assert_allclose(await target_of(toolkit, "key"), [2, 0.5, -3], atol=1e-6)
    # a target given still wins over the object
    text = await ok(toolkit, "add_light", kind="spot", name="key", above="hedge", target=[0, 0, 0])
    assert "at (2, 2, -3), aimed at (0, 0, 0)" in text, text
    np.testing.assert_allclose(await target_of(toolkit, "key"), [0, 0, 0], atol=1e-6)
    # a point light has nothing to aim: no aim in the result
    text = await ok(toolkit, "add_light", kind="point", name="lamp", above="hedge")
    assert "aimed" not in text.split("\n", 1)[0], text


async def test_a_light_above_what_is_not_there_changes_nothing(toolkit: ThreeJSToolkit) -> None:
    await hedge(toolkit)
    await ok(toolkit, "add_light", kind="point", name="lamp", above="hedge")
    before = await toolkit.scene_summary()
    for arguments, says in (
        ({"kind": "point", "name": "glow", "above": "hedgerow"},
         'above: no object named "hedgerow"; give one of: ambient, hedge, lamp'),
        ({"kind": "point", "name": "glow", "above": "hedge", "gap": -1},
         "gap must be 0 or more; got -1"),
        ({"kind": "ambient", "name": "fill", "above": "hedge"},
         "above: an ambient light has no position"),
        ({"kind": "hemisphere", "name": "sky", "above": "hedge"},
         "above: a hemisphere light has no position"),
        ({"kind": "point", "name": "lamp", "above": "lamp"},
         'above: "lamp" is this light itself'),
        ({"kind": "spot", "name": "lamp", "above": "LAMP"},
         'above: "LAMP" is this light itself'),
    ):  # fmt: skip
        outcome = await call(toolkit, "add_light", **arguments)
        assert outcome.is_error and says in outcome.text, outcome.text
    assert await toolkit.scene_summary() == before
    for name in ("glow", "fill", "sky"):
        assert await page_value(toolkit, f"scene.getObjectByName('{name}') === undefined")
