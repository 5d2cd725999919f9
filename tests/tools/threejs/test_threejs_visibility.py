"""The visibility report against closed-form answers: the tests project known geometry through a
known camera themselves (tests/tools/threejs/projection.py) and compare with what the page's
object-ID pass measured. Tolerances are the ones the README states."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from agentsdk.vision import VisibilityReport
from agentsdk_threejs import RendererPool
from PIL import Image as PILImage

from .projection import box_corners, clip_area, convex_area, to_ndc, to_pixels

pytestmark = pytest.mark.anyio

SIZE = 256
EYE, AT, FOV = [0.0, 0.0, 10.0], [0.0, 0.0, 0.0], 50.0
CAMERA = "camera.position.set(0, 0, 10); camera.lookAt(0, 0, 0); camera.fov = 50; camera.updateProjectionMatrix();\n"


def box_code(
    name: str, centre: list[float], size: list[float], extra: str = "", colour: str = "0xff0000"
) -> str:
    w, h, d = size
    x, y, z = centre
    return (
        f"{{ const m = new THREE.Mesh(new THREE.BoxGeometry({w}, {h}, {d}), "
        f"new THREE.MeshBasicMaterial({{ color: {colour} {extra} }}));\n"
        f"m.name = '{name}'; m.position.set({x}, {y}, {z}); scene.add(m); }}\n"
    )


def projected(centre: list[float], size: list[float]) -> np.ndarray:
    ndc, depth = to_ndc(box_corners(centre, size), EYE, AT, FOV)
    assert (depth > 0).all()
    return to_pixels(ndc, SIZE, SIZE)


def pixel_tolerance(points: np.ndarray) -> float:
    """Rasterising a polygon misses or gains about half a pixel along its outline."""
    xs, ys = points[:, 0], points[:, 1]
    return (xs.max() - xs.min() + ys.max() - ys.min()) + 6


async def report_of(pool: RendererPool, code: str) -> VisibilityReport:
    result = await pool.render(CAMERA + code, size=(SIZE, SIZE))
    assert not result.report.errors, result.report.errors
    [report] = result.visibility
    return report


async def test_known_boxes_cover_what_their_projection_covers(pool: RendererPool) -> None:
    boxes = {
        "left": ([-2.0, 1.0, 0.0], [1.5, 1.0, 1.0]),
        "right": ([2.5, -1.0, 1.0], [1.0, 2.0, 0.5]),
    }
    code = "".join(box_code(name, c, s) for name, (c, s) in boxes.items())
    report = await report_of(pool, code)
    for name, (centre, size) in boxes.items():
        item = report.object(name)
        assert item is not None and item.visible
        points = projected(centre, size)
        area = convex_area(points)  # a box is convex: its silhouette is the hull of its corners
        assert abs(item.pixels - area) <= pixel_tolerance(points), (name, item.pixels, area)
        assert item.coverage == pytest.approx(item.pixels / SIZE**2)
        x0, y0, x1, y1 = item.bbox or (0, 0, 0, 0)
        assert abs(x0 - points[:, 0].min()) <= 1 and abs(x1 + 1 - points[:, 0].max()) <= 1
        assert abs(y0 - points[:, 1].min()) <= 1 and abs(y1 + 1 - points[:, 1].max()) <= 1
        assert item.cut_off == 0 and item.occluded in (0, None) and item.cut_sides == []
        assert item.colour == "red"
    assert report.background == pytest.approx(1 - sum(o.coverage for o in report.objects))


async def test_a_sphere_covers_its_projected_ellipse(pool: RendererPool) -> None:
    centre, radius = np.array([1.0, 0.5, 2.0]), 1.2
    code = (
        "const s = new THREE.Mesh(new THREE.SphereGeometry(1.2, 96, 48), new THREE.MeshBasicMaterial({ color: 0x2050ff }));\n"
        "s.name = 'ball'; s.position.set(1, 0.5, 2); scene.add(s);\n"
    )
    report = await report_of(pool, code)
    ball = report.object("ball")
    assert ball is not None
    # The silhouette of a sphere is the hull of its surface points.
    golden = np.pi * (3 - np.sqrt(5)) * np.arange(4000)
    zs = np.linspace(1, -1, 4000)
    rs = np.sqrt(1 - zs**2)
    surface = centre + radius * np.stack([rs * np.cos(golden), zs, rs * np.sin(golden)], 1)
    ndc, _ = to_ndc(surface, EYE, AT, FOV)
    points = to_pixels(ndc, SIZE, SIZE)
    assert ball.pixels == pytest.approx(convex_area(points), rel=0.03)
    assert ball.colour == "blue"


async def test_a_box_past_the_right_edge_is_cut_off_by_its_projected_share(
    pool: RendererPool,
) -> None:
    centre, size = [4.0, 0.0, 0.0], [3.0, 2.0, 1.0]
    report = await report_of(pool, box_code("wide", centre, size))
    item = report.object("wide")
    assert item is not None and item.visible
    points = projected(centre, size)
    inside, total = clip_area(points, SIZE, SIZE), convex_area(points)
    assert item.cut_off == pytest.approx(1 - inside / total, abs=0.02)
    assert item.cut_sides == ["right"]
    assert any("wide is cut off on the right" in hint for hint in report.hints)


async def test_full_and_half_occlusion(pool: RendererPool) -> None:
    # Thin plates facing the camera: their projections are rectangles.
    back = ([0.0, 0.0, 0.0], [2.0, 2.0, 0.01])
    cover = ([0.0, 0.0, 2.0], [3.0, 3.0, 0.01])  # in front of "hidden", larger than it
    hidden = ([0.0, 0.0, 1.0], [1.0, 1.0, 0.01])
    half = ([-0.6, 0.0, 4.0], [1.2, 4.0, 0.01])  # projects onto the left half of "back"
    code = (
        box_code("back", *back, colour="0x00ff00")
        + box_code("cover", *cover, colour="0x0000ff")
        + box_code("hidden", *hidden)
    )
    report = await report_of(pool, code)
    hidden_item = report.object("hidden")
    assert hidden_item is not None and not hidden_item.visible
    assert hidden_item.occluded == 1.0
    assert any(
        "hidden" in line and "fully hidden" in line for line in report.to_text().splitlines()
    )

    # A plate nearer the camera over part of "back": the hidden share is the rectangles' overlap.
    code = box_code("back", *back, colour="0x00ff00") + box_code("half", *half, colour="0x0000ff")
    report = await report_of(pool, code)
    back_rect, half_rect = projected(*back), projected(*half)
    bx0, by0, bx1, by1 = (
        back_rect[:, 0].min(),
        back_rect[:, 1].min(),
        back_rect[:, 0].max(),
        back_rect[:, 1].max(),
    )
    hx0, hy0, hx1, hy1 = (
        half_rect[:, 0].min(),
        half_rect[:, 1].min(),
        half_rect[:, 0].max(),
        half_rect[:, 1].max(),
    )
    overlap = max(0, min(bx1, hx1) - max(bx0, hx0)) * max(0, min(by1, hy1) - max(by0, hy0))
    expected = overlap / ((bx1 - bx0) * (by1 - by0))
    item = report.object("back")
    assert item is not None and item.occluded == pytest.approx(expected, abs=0.02)
    assert 0.3 < expected < 0.7  # really a partial occlusion


async def test_empty_scene_and_objects_behind_or_beside_the_camera(pool: RendererPool) -> None:
    empty = await report_of(pool, "")
    assert empty.objects == [] and empty.background == 1 and empty.blank
    report = await report_of(
        pool, box_code("behind", [0, 0, 15], [1, 1, 1]) + box_code("aside", [60, 0, 0], [1, 1, 1])
    )
    behind, aside = report.object("behind"), report.object("aside")
    assert behind is not None and aside is not None
    assert not behind.visible and behind.behind_camera and not behind.outside_frustum
    assert not aside.visible and aside.outside_frustum and not aside.behind_camera
    assert "behind the camera" in report.to_text()


async def test_two_hundred_objects_each_where_its_projection_is(pool: RendererPool) -> None:
    grid = [(i, j) for i in range(15) for j in range(14)]
    code = (
        "const geometry = new THREE.BoxGeometry(0.3, 0.3, 0.3);\n"
        "const material = new THREE.MeshBasicMaterial({ color: 0xffaa00 });\n"
        "for (let i = 0; i < 15; i++) for (let j = 0; j < 14; j++) {\n"
        "  const m = new THREE.Mesh(geometry, material); m.name = `c${i}-${j}`;\n"
        "  m.position.set(-3.5 + i * 0.5, -3.25 + j * 0.5, 0); scene.add(m); }\n"
    )
    report = await report_of(pool, code)
    assert len(report.objects) == 210 and all(o.visible for o in report.objects)
    for i, j in grid:
        item = report.object(f"c{i}-{j}")
        assert item is not None and item.bbox is not None
        points = projected([-3.5 + i * 0.5, -3.25 + j * 0.5, 0], [0.3, 0.3, 0.3])
        assert abs(item.pixels - convex_area(points)) <= pixel_tolerance(points)
        assert (
            abs(item.bbox[0] - points[:, 0].min()) <= 1
            and abs(item.bbox[3] + 1 - points[:, 1].max()) <= 1
        )
    assert len(report.to_text().splitlines()) <= 13  # 8 objects, "... more", 3 hints: short


async def test_transparent_glass_does_not_hide_what_is_behind_it(pool: RendererPool) -> None:
    code = box_code(
        "glass",
        [0, 0, 2],
        [3, 3, 0.2],
        extra=", transparent: true, opacity: 0.3",
        colour="0x88ccff",
    )
    code += box_code("core", [0, 0, 0], [1, 1, 1])
    report = await report_of(pool, code)
    core, glass = report.object("core"), report.object("glass")
    assert core is not None and glass is not None
    points = projected([0, 0, 0], [1, 1, 1])
    assert abs(core.pixels - convex_area(points)) <= pixel_tolerance(points)
    assert core.occluded in (0, None)
    # The glass claims the pixels where nothing opaque shows through it.
    glass_points = projected([0, 0, 2], [3, 3, 0.2])
    assert glass.pixels == pytest.approx(convex_area(glass_points) - core.pixels, rel=0.03)


async def test_an_instanced_mesh_is_one_object_covering_all_its_instances(
    pool: RendererPool,
) -> None:
    spots = [(-3, -2), (-1, -2), (1, -2), (3, -2), (-2, 1), (0, 1), (2, 1)]
    code = (
        "const trees = new THREE.InstancedMesh(new THREE.BoxGeometry(0.8, 0.8, 0.8), new THREE.MeshBasicMaterial(), 7);\n"
        "trees.name = 'trees';\n"
        f"const spots = {[list(s) for s in spots]};\n"
        "const m = new THREE.Matrix4();\n"
        "spots.forEach(([x, y], i) => { m.makeTranslation(x, y, 0); trees.setMatrixAt(i, m); trees.setColorAt(i, new THREE.Color(i % 2 ? 0x00ff00 : 0xff00ff)); });\n"
        "trees.computeBoundingBox(); trees.computeBoundingSphere(); scene.add(trees);\n"
    )
    report = await report_of(pool, code)
    [trees] = report.objects
    expected = sum(convex_area(projected([x, y, 0], [0.8, 0.8, 0.8])) for x, y in spots)
    assert trees.name == "trees" and trees.pixels == pytest.approx(expected, rel=0.03)
    first = projected([-3, -2, 0], [0.8, 0.8, 0.8])
    assert trees.bbox is not None and abs(trees.bbox[0] - first[:, 0].min()) <= 1


async def test_the_id_pass_leaves_the_scene_and_the_next_frame_alone(pool: RendererPool) -> None:
    code = (
        "scene.background = new THREE.Color(0x334455); scene.fog = new THREE.Fog(0x334455, 5, 30);\n"
        "renderer.toneMapping = THREE.ACESFilmicToneMapping;\n"
        "scene.add(new THREE.AmbientLight(0xffffff, 1)); const sun = new THREE.DirectionalLight(0xffffff, 2); sun.position.set(2, 5, 3); scene.add(sun);\n"
        "const glass = new THREE.Mesh(new THREE.SphereGeometry(1), new THREE.MeshStandardMaterial({ color: 0x88ccff, transparent: true, opacity: 0.5 })); glass.name = 'glass'; scene.add(glass);\n"
        "const box = new THREE.Mesh(new THREE.BoxGeometry(), new THREE.MeshStandardMaterial({ color: 0xff0000 })); box.name = 'box'; box.position.x = 2; scene.add(box);\n"
        "vars.materials = [glass.material.uuid, box.material.uuid];\n"
    )
    async with pool.page() as page:
        first = await page.run(CAMERA + code, reset=True, size=(SIZE, SIZE), visibility=True)
        plain = await page.render_views(["camera"], size=(SIZE, SIZE), visibility=False)
        again = await page.render_views(["camera", "iso"], size=(SIZE, SIZE), visibility=True)
        check = await page.run(
            "if (scene.getObjectByName('glass').material.uuid !== vars.materials[0]) throw new Error('material swapped');\n"
            "if (!scene.fog || scene.background.getHex() !== 0x334455) throw new Error('scene settings lost');\n"
            "if (renderer.toneMapping !== THREE.ACESFilmicToneMapping) throw new Error('tone mapping lost');\n"
            "if (renderer.getRenderTarget() !== null) throw new Error('render target left set');\n",
            size=(SIZE, SIZE),
            visibility=False,
        )
    assert not check.report.errors, check.report.errors
    pixels = [
        np.asarray(PILImage.open(io.BytesIO(r.images[0])).convert("RGB"))
        for r in (first, plain, again)
    ]
    assert np.array_equal(pixels[0], pixels[1]) and np.array_equal(pixels[1], pixels[2])
    assert [v.view for v in again.visibility] == ["camera", "iso"]
    assert {o.name for o in again.visibility[1].objects} == {"glass", "box"}
    assert math.isclose(first.visibility[0].background, again.visibility[0].background)


@pytest.mark.parametrize(
    ("path", "what"),
    [
        ("glTF2/2CylinderEngine-glTF-Binary/2CylinderEngine.glb", "a hierarchy of 34 meshes"),
        ("glTF2/simple_skin/simple_skin.gltf", "a skinned mesh"),
        ("glTF2/glTF-Sample-Models/AnimatedMorphCube-glTF/AnimatedMorphCube.gltf", "morph targets"),
    ],
)
async def test_third_party_models_match_their_lit_silhouette(
    pool: RendererPool, path: str, what: str
) -> None:
    """Debian's assimp test models: the ID pass draws each the way the lit frame does (skinning,
    morphs, nested meshes), so its pixels are where the frame differs from the background."""
    code = (
        "scene.background = new THREE.Color(0xff00ff);\n"
        "scene.add(new THREE.AmbientLight(0xffffff, 1.5));\n"
        f"await loadModel({path!r}, 'model');\n"
    )
    result = await pool.render(code, size=(SIZE, SIZE), views=["iso"])
    assert not result.report.errors, result.report.errors
    [report] = result.visibility
    [model] = report.objects
    assert model.name == "model" and model.visible, what
    frame = np.asarray(PILImage.open(io.BytesIO(result.images[0])).convert("RGB")).astype(int)
    lit = int((np.abs(frame - [255, 0, 255]).max(axis=2) > 60).sum())
    assert model.bbox is not None
    x0, y0, x1, y1 = model.bbox
    outline = (x1 - x0) + (y1 - y0)  # about half the outline: antialiased edges go either way
    assert abs(model.pixels - lit) <= outline, (what, model.pixels, lit, outline)
