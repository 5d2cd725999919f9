"""Screenshot visibility reports against answers computed here in closed form (real Godot 3).

The test projects each box's eight corners through the camera itself (pinhole, vertical fov,
Godot's KEEP_HEIGHT), takes the convex hull as the silhouette and clips it to the frame, so
coverage, bounding boxes, cut-off and occlusion are known without trusting the report.
"""

from __future__ import annotations

import math

import anyio
import pytest
from agentsdk.vision import compare_images
from agentsdk_godot import Constructor, GodotEngine, GodotProject, HarnessJob, SceneFile

W = H = 160
FOV = 60.0
CAMERA_Z = 6.0

Point = tuple[float, float]


def project(x: float, y: float, z: float) -> Point:
    """Pixel position (origin top left) of a world point, camera at (0, 0, CAMERA_Z) looking -z."""
    depth = CAMERA_Z - z
    half = math.tan(math.radians(FOV) / 2)
    ndc_x = x / (depth * half * (W / H))
    ndc_y = y / (depth * half)
    return (ndc_x + 1) / 2 * W, (1 - ndc_y) / 2 * H


def hull(points: list[Point]) -> list[Point]:
    """Convex hull, counter-clockwise (monotone chain)."""
    pts = sorted(set(points))

    def cross(o: Point, a: Point, b: Point) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower: list[Point] = []
    upper: list[Point] = []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return lower[:-1] + upper[:-1]


def signed_area(polygon: list[Point]) -> float:
    n = len(polygon)
    return (
        sum(
            polygon[i][0] * polygon[(i + 1) % n][1] - polygon[(i + 1) % n][0] * polygon[i][1]
            for i in range(n)
        )
        / 2
    )


def clip(polygon: list[Point], window: list[Point]) -> list[Point]:
    """Sutherland-Hodgman: `polygon` clipped by the convex `window` (either turning sense)."""
    sense = 1 if signed_area(window) > 0 else -1

    def inside(p: Point, a: Point, b: Point) -> bool:
        return sense * ((b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])) >= 0

    def meet(p: Point, q: Point, a: Point, b: Point) -> Point:
        x1, y1, x2, y2 = *p, *q
        x3, y3, x4, y4 = *a, *b
        d = (x1 - x2) * (y3 - y4) - (y1 - y2) * (x3 - x4)
        t = ((x1 - x3) * (y3 - y4) - (y1 - y3) * (x3 - x4)) / d
        return x1 + t * (x2 - x1), y1 + t * (y2 - y1)

    out = polygon
    for i in range(len(window)):
        a, b = window[i], window[(i + 1) % len(window)]
        source, out = out, []
        for j in range(len(source)):
            p, q = source[j], source[(j + 1) % len(source)]
            if inside(q, a, b):
                if not inside(p, a, b):
                    out.append(meet(p, q, a, b))
                out.append(q)
            elif inside(p, a, b):
                out.append(meet(p, q, a, b))
        if not out:
            break
    return out


def area(polygon: list[Point]) -> float:
    return abs(signed_area(polygon)) if len(polygon) >= 3 else 0.0


def perimeter(polygon: list[Point]) -> float:
    return sum(math.dist(polygon[i], polygon[(i + 1) % len(polygon)]) for i in range(len(polygon)))


FRAME: list[Point] = [(0, 0), (W, 0), (W, H), (0, H)]


def silhouette(centre: tuple[float, float, float], size: float) -> list[Point]:
    c = centre
    s = size / 2
    corners = [
        project(c[0] + dx * s, c[1] + dy * s, c[2] + dz * s)
        for dx in (-1, 1)
        for dy in (-1, 1)
        for dz in (-1, 1)
    ]
    return hull(corners)


def box(scene: SceneFile, name: str, centre: tuple[float, float, float], size: float, **mat):  # type: ignore[no-untyped-def]
    material = scene.add_sub_resource(
        "SpatialMaterial", {"flags_unshaded": True, **mat} if mat else {"flags_unshaded": True}
    )
    mesh = scene.add_sub_resource(
        "CubeMesh", {"size": Constructor("Vector3", (size, size, size)), "material": material}
    )
    node = scene.add_node(name, "MeshInstance")
    node.properties.update({"mesh": mesh, "translation": Constructor("Vector3", centre)})
    return node


def camera(scene: SceneFile) -> None:
    cam = scene.add_node("Cam", "Camera")
    cam.properties.update(
        {"translation": Constructor("Vector3", (0, 0, CAMERA_Z)), "fov": FOV, "far": 500.0}
    )


# name -> (centre, edge length); the camera looks down -z from z = 6
BOXES = {
    "Front": ((-0.8, 0.6, 0.0), 1.6),  # in the frame, in front of about half of Half
    "Half": ((0.0, 0.6, -3.0), 2.0),  # about half of it hidden behind Front
    "Hidden": ((-0.8, 0.6, -4.0), 0.8),  # entirely behind Front
    "Edge": ((3.4, -1.5, 0.0), 1.4),  # crosses the right edge of the frame
    "Outside": ((-30.0, 0.0, 0.0), 1.0),  # in front of the camera, far outside the view
    "Behind": ((0.0, 0.0, 12.0), 1.0),  # behind the camera
}


@pytest.fixture(scope="module")
def boxes_run(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """One screenshot with its report, and a plain capture of the same frame (two engine runs)."""
    return anyio.run(_boxes_run, tmp_path_factory)


async def _boxes_run(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    engine = GodotEngine(renderer="GLES2")
    project = GodotProject.create(tmp_path_factory.mktemp("vis") / "game")
    scene = project.new_scene("Main", "Spatial")
    colours = {"Front": (1, 0, 0, 1), "Half": (0, 0, 1, 1), "Edge": (0, 0.8, 0, 1)}
    for name, (centre, size) in BOXES.items():
        rgba = colours.get(name, (0.8, 0.8, 0.8, 1))
        box(scene, name, centre, size, albedo_color=Constructor("Color", rgba))
    camera(scene)
    project.write_scene("res://main.tscn", scene)
    job = HarnessJob(scene="res://main.tscn", frames=2, report_frame=2)
    run = await engine.run_harness(project.path, job, window=True, width=W, height=H, timeout=120)
    plain = await engine.run_harness(
        project.path,
        HarnessJob(scene="res://main.tscn", frames=3, capture_frames=[3]),
        window=True,
        width=W,
        height=H,
        timeout=120,
    )
    engine.close()
    return run, plain


@pytest.mark.slow
def test_coverage_bbox_and_cut_off_match_the_projection(boxes_run) -> None:  # type: ignore[no-untyped-def]
    run, _ = boxes_run
    report = run.report
    assert report is not None, run.stderr[-3000:]
    assert (report.width, report.height) == (W, H)
    for name in ("Front", "Edge"):
        centre, size = BOXES[name]
        shape = silhouette(centre, size)
        inside = clip(shape, FRAME)
        seen = report.object(name)
        assert seen is not None and seen.visible, report.to_text()
        expected = area(inside)
        slack = perimeter(inside) + 4  # a pixel's worth along the edges
        assert abs(seen.pixels - expected) <= slack, (name, seen.pixels, expected)
        xs, ys = [p[0] for p in inside], [p[1] for p in inside]
        assert seen.bbox is not None
        x0, y0, x1, y1 = seen.bbox
        assert abs(x0 - min(xs)) <= 1.5 and abs(x1 + 1 - max(xs)) <= 1.5, (name, seen.bbox, xs)
        assert abs(y0 - min(ys)) <= 1.5 and abs(y1 + 1 - max(ys)) <= 1.5, (name, seen.bbox, ys)
        cut = 1 - area(inside) / area(shape)
        assert seen.cut_off is not None and abs(seen.cut_off - cut) <= 0.03, (
            name,
            seen.cut_off,
            cut,
        )
    edge = report.object("Edge")
    assert edge is not None and edge.cut_sides == ["right"] and edge.colour == "green"
    front = report.object("Front")
    assert front is not None and front.colour == "red" and front.cut_off == 0
    assert any("Edge is cut off on the right" in h for h in report.hints)


@pytest.mark.slow
def test_occlusion_full_and_half_behind_camera_and_outside(boxes_run) -> None:  # type: ignore[no-untyped-def]
    run, _ = boxes_run
    report = run.report
    assert report is not None
    front = silhouette(*BOXES["Front"])
    half = silhouette(*BOXES["Half"])
    covered = area(clip(half, front)) / area(half)
    assert 0.3 < covered < 0.7  # the scene is what the test says it is
    seen = report.object("Half")
    assert seen is not None and seen.visible and seen.occluded is not None
    assert abs(seen.occluded - covered) <= 0.03, (seen.occluded, covered)
    assert seen.colour == "blue"
    hidden = report.object("Hidden")
    assert hidden is not None and not hidden.visible and hidden.occluded == 1.0
    behind = report.object("Behind")
    assert behind is not None and not behind.visible and behind.behind_camera
    outside = report.object("Outside")
    assert outside is not None and not outside.visible and outside.outside_frustum
    text = report.to_text()
    assert "Hidden: not visible (fully hidden behind other objects)" in text
    assert "Behind: not visible (behind the camera)" in text
    assert "Outside: not visible (outside the view)" in text
    assert len(text) < 900


@pytest.mark.slow
def test_the_passes_do_not_change_the_picture(boxes_run) -> None:  # type: ignore[no-untyped-def]
    run, plain = boxes_run
    # the report's picture is the frame a plain capture of the same scene shows
    assert run.report_image is not None and plain.images
    same = compare_images(run.report_image, plain.images[0])
    assert same.identical or same.ssim > 0.99, same
    assert run.tree is not None
    front = run.tree.find("Front")
    # materials and layers are back as they were
    assert front is not None and "material_override" not in front.properties
    assert "layers" not in front.properties


FLOCK = """\
extends MultiMeshInstance

func _ready():
\tvar many = MultiMesh.new()
\tmany.transform_format = MultiMesh.TRANSFORM_3D
\tvar mesh = CubeMesh.new()
\tmesh.size = Vector3(0.8, 0.8, 0.8)
\tmany.mesh = mesh
\tmany.instance_count = 3
\tfor i in range(3):
\t\tmany.set_instance_transform(i, Transform(Basis(), Vector3(-3 + 1.5 * i, 3.9, -2)))
\tmultimesh = many
"""

GRID = [(-5.25 + 0.75 * i, -4.5 + 0.75 * j, -8.0) for i in range(15) for j in range(14)]


def test_many_objects_instances_and_transparency(tmp_path) -> None:  # type: ignore[no-untyped-def]
    global W, H, FRAME
    engine = GodotEngine(renderer="GLES2")
    project = GodotProject.create(tmp_path / "game")
    crate = project.new_scene("Crate", "Spatial")
    box(crate, "Mesh", (0.0, 0.0, 0.0), 1.0, albedo_color=Constructor("Color", (1, 0.5, 0, 1)))
    project.write_scene("res://crate.tscn", crate)
    scene = project.new_scene("Main", "Spatial")
    for k, centre in enumerate(GRID):
        box(scene, f"Cell{k}", centre, 0.6)
    ref = scene.ext_resource("res://crate.tscn", "PackedScene")
    for name, x in (("CrateA", 1.0), ("CrateB", 2.2)):
        node = scene.add_node(name, None, instance=ref)
        node.properties["translation"] = Constructor("Vector3", (x, -2.3, 1.0))
    project.write_text("res://flock.gd", FLOCK)
    flock = scene.add_node("Flock", "MultiMeshInstance")
    scene.attach_script("Flock", "res://flock.gd")
    del flock  # its instances are made by its script
    box(
        scene,
        "Glass",
        (-1.5, -2.3, 1.0),
        1.0,
        albedo_color=Constructor("Color", (0.2, 0.4, 1, 0.4)),
        flags_transparent=True,
    )
    camera(scene)
    project.write_scene("res://main.tscn", scene)
    size = 256
    W = H = size
    FRAME = [(0, 0), (W, 0), (W, H), (0, H)]
    try:
        job = HarnessJob(scene="res://main.tscn", frames=2, report_frame=2)
        run = anyio.run(
            lambda: engine.run_harness(
                project.path, job, window=True, width=size, height=size, timeout=180
            )
        )
        report = run.report
        assert report is not None, run.stderr[-3000:]
        names = {o.name for o in report.objects}
        assert len(names) == len(GRID) + 4  # cells, two crates, the flock, the glass
        assert {"CrateA", "CrateB", "Flock", "Glass"} <= names  # an instance is one object
        nearer = [silhouette((-3 + 1.5 * i, 3.9, -2), 0.8) for i in range(3)]
        nearer += [silhouette((x, -2.3, 1.0), 1.0) for x in (1.0, 2.2, -1.5)]
        checked = 0
        for k, centre in enumerate(GRID):
            shape = silhouette(centre, 0.6)
            if any(area(clip(shape, other)) > 0 for other in nearer):
                continue  # partly behind something nearer: the closed form is not a box
            seen = report.object(f"Cell{k}")
            assert seen is not None and seen.visible
            assert abs(seen.pixels - area(shape)) <= perimeter(shape) + 4, (k, seen.pixels)
            checked += 1
        assert checked >= 190
        flock_area = sum(area(shape) for shape in nearer[:3])
        seen = report.object("Flock")
        assert seen is not None and abs(seen.pixels - flock_area) <= 0.08 * flock_area
        glass = report.object("Glass")
        expected = area(clip(silhouette((-1.5, -2.3, 1.0), 1.0), FRAME))
        assert (
            glass is not None and glass.visible and abs(glass.pixels - expected) <= 0.08 * expected
        )
        crate_seen = report.object("CrateA")
        assert crate_seen is not None and crate_seen.colour == "orange"
        text = report.to_text()
        assert "more (" in text and len(text.splitlines()) <= 14  # bounded for the context
    finally:
        W = H = 160
        FRAME = [(0, 0), (W, 0), (W, H), (0, H)]
        engine.close()


def test_scene_without_camera_and_camera_without_objects(tmp_path) -> None:  # type: ignore[no-untyped-def]
    engine = GodotEngine(renderer="GLES2")
    project = GodotProject.create(tmp_path / "game")
    lonely = project.new_scene("Main", "Spatial")
    box(lonely, "Box", (0.0, 0.0, 0.0), 1.0)
    project.write_scene("res://no_camera.tscn", lonely)
    empty = project.new_scene("Main", "Spatial")
    camera(empty)
    project.write_scene("res://empty.tscn", empty)

    async def both():  # type: ignore[no-untyped-def]
        out = []
        for scene in ("res://no_camera.tscn", "res://empty.tscn"):
            job = HarnessJob(scene=scene, frames=2, report_frame=2)
            out.append(
                await engine.run_harness(project.path, job, window=True, width=64, height=64)
            )
        return out

    try:
        no_camera, nothing = anyio.run(both)
    finally:
        engine.close()
    assert no_camera.report is not None and nothing.report is not None
    assert no_camera.report.blank and not no_camera.report.object("Box").visible  # type: ignore[union-attr]
    assert nothing.report.objects == [] and nothing.report.blank
    assert nothing.report.background == 1.0


def test_fast_id_decoding_matches_the_core() -> None:
    import numpy as np
    from agentsdk.vision import id_colours, ids_from_colours
    from agentsdk_godot.visibility import decode_ids

    rng = np.random.default_rng(7)
    for count in (0, 1, 5, 26, 27, 214, 1000, 5000):
        image = rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)  # noise: off-grid colours
        if count:
            image[:24] = id_colours(count)[rng.integers(0, count + 1, (24, 64))]
        assert (decode_ids(image, count) == ids_from_colours(image, count)).all(), count
