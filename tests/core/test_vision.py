"""agentsdk.vision: visibility reports from ID passes whose answers are known in
closed form, ID colours that survive small shifts, and image comparison checked
against a textbook SSIM written out loop by loop."""

from __future__ import annotations

import io

import numpy as np
import pytest
from agentsdk.vision import (
    ObjectFacts,
    ObjectPixels,
    colour_name,
    compare_images,
    diff_reports,
    id_colours,
    ids_from_colours,
    pixel_stats,
    report_from_pixels,
    visibility_report,
)
from PIL import Image as PILImage


def _scene(width: int = 200, height: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Two rectangles on a grey background: 'box' (red) x 10..59, y 20..69 and 'floor'
    (blue) along the bottom rows 80..99, full width; 'lamp' is named but not drawn."""
    ids = np.zeros((height, width), np.int32)
    beauty = np.full((height, width, 3), 128, np.uint8)
    ids[20:70, 10:60] = 1
    beauty[20:70, 10:60] = (200, 30, 30)
    ids[80:100, :] = 2
    beauty[80:100, :] = (30, 40, 210)
    return ids, beauty


def test_coverage_bbox_and_colour_match_the_drawn_rectangles() -> None:
    ids, beauty = _scene()
    report = visibility_report(ids, {1: "box", 2: "floor", 3: "lamp"}, beauty)
    box, floor, lamp = report.object("box"), report.object("floor"), report.object("lamp")
    assert box is not None and floor is not None and lamp is not None
    assert box.pixels == 50 * 50 and box.coverage == pytest.approx(2500 / 20000)
    assert box.bbox == (10, 20, 59, 69)
    assert box.colour_rgb == (200, 30, 30) and box.colour == "red"
    assert box.cut_sides == []
    assert floor.bbox == (0, 80, 199, 99)
    assert set(floor.cut_sides) == {"left", "right", "bottom"}
    assert floor.colour == "blue"
    assert not lamp.visible and lamp.bbox is None and lamp.pixels == 0
    assert report.background == pytest.approx(1 - (2500 + 4000) / 20000)
    assert not report.blank
    assert report.visible_names == ["floor", "box"]


def test_occlusion_and_cut_off_come_from_the_engines_facts() -> None:
    ids, beauty = _scene()
    # The engine says: drawn alone the box would cover 5000 in-frame pixels (half hidden),
    # and 10000 on an unbounded image plane (half of it outside the frame, on the left).
    facts = {
        "box": ObjectFacts(
            name="box", pixels_alone=5000, pixels_unclipped=10000, cut_sides=["left"]
        ),
        "lamp": ObjectFacts(name="lamp", behind_camera=True),
    }
    report = visibility_report(ids, {1: "box", 2: "floor", 3: "lamp"}, beauty, facts)
    box = report.object("box")
    assert box is not None
    assert box.occluded == pytest.approx(0.5)
    assert box.cut_off == pytest.approx(0.5)
    assert box.cut_sides == ["left"]
    text = report.to_text()
    assert "box: 12%, left, red, cut off 50% (left), 50% hidden" in text
    assert "floor: 20%, bottom, blue, touches left/right/bottom edge" in text
    assert "(x 10-59, y 20-69)" in report.to_text(boxes=True)
    assert "lamp: not visible (behind the camera)" in text
    assert any("box is cut off on the left" in h for h in report.hints)


def test_fully_hidden_object_and_empty_scene() -> None:
    ids, beauty = _scene()
    facts = {"ghost": ObjectFacts(name="ghost", pixels_alone=400)}
    report = visibility_report(ids, {1: "box", 2: "floor", 9: "ghost"}, beauty, facts)
    ghost = report.object("ghost")
    assert ghost is not None and not ghost.visible and ghost.occluded == 1.0
    assert "ghost: not visible (fully hidden behind other objects)" in report.to_text()

    empty = visibility_report(
        np.zeros((64, 64), np.int32), {}, np.full((64, 64, 3), 10, np.uint8), view="front"
    )
    assert empty.blank and empty.blank_colour == "black" and empty.background == 1.0
    assert empty.to_text().startswith("view front: 0 of 0 objects visible")


def test_unlit_objects_give_a_light_hint() -> None:
    ids, _ = _scene()
    flat = np.zeros((100, 200, 3), np.uint8)  # everything renders black: no lights
    report = visibility_report(ids, {1: "box", 2: "floor"}, flat)
    assert report.blank
    assert "add lights" in report.hints[0]


def test_many_objects_stay_short_and_bounded() -> None:
    rng = np.random.default_rng(7)
    ids = np.zeros((512, 512), np.int32)
    names = {}
    for k in range(1, 251):
        x, y = rng.integers(0, 500, 2)
        ids[y : y + 12, x : x + 12] = k
        names[k] = f"obj{k}"
    report = visibility_report(ids, names, None)
    counts = np.bincount(ids.ravel(), minlength=251)
    for k in (1, 50, 250):
        o = report.object(f"obj{k}")
        assert o is not None and o.pixels == counts[k]
        if counts[k]:
            ys, xs = np.nonzero(ids == k)
            assert o.bbox == (xs.min(), ys.min(), xs.max(), ys.max())
    text = report.to_text(max_objects=8)
    assert len(text.splitlines()) <= 1 + 8 + 1 + 3
    assert "more (" in text


def test_five_object_report_is_about_120_tokens() -> None:
    ids = np.zeros((512, 512), np.int32)
    beauty = np.full((512, 512, 3), 40, np.uint8)
    for k, (x, colour) in enumerate(
        [(10, (220, 20, 20)), (110, (20, 200, 20)), (210, (20, 20, 220)), (310, (230, 230, 30))],
        start=1,
    ):
        ids[200:300, x : x + 80] = k
        beauty[200:300, x : x + 80] = colour
    ids[400:512, :] = 5
    beauty[400:512, :] = (150, 150, 150)
    names = {1: "red_box", 2: "green_ball", 3: "blue_cone", 4: "yellow_torus", 5: "floor"}
    text = visibility_report(ids, names, beauty).to_text()
    assert len(text) / 4 <= 120, text  # ~4 characters per token for this kind of text


@pytest.mark.parametrize("count", [1, 5, 216, 1000])
def test_id_colours_decode_after_small_shifts(count: int) -> None:
    colours = id_colours(count)
    assert len({tuple(c) for c in colours}) == count + 1 and tuple(colours[0]) == (0, 0, 0)
    image = colours[np.arange(count + 1)][None, :, :].astype(np.int16)
    step = 255 / (round((count + 1) ** (1 / 3) + 0.4999) - 1 or 1)
    shifted = np.clip(image + np.int16(min(10, int(step / 2) - 1)), 0, 255).astype(np.uint8)
    assert ids_from_colours(shifted, count)[0].tolist() == list(range(count + 1))


@pytest.mark.parametrize(
    ("rgb", "name"),
    [
        ((255, 0, 0), "red"),
        ((40, 180, 40), "green"),
        ((0, 100, 0), "dark green"),
        ((0, 0, 255), "blue"),
        ((255, 255, 0), "yellow"),
        ((255, 255, 255), "white"),
        ((0, 0, 0), "black"),
        ((128, 128, 128), "grey"),
        ((255, 140, 0), "orange"),
        ((128, 0, 128), "purple"),
        ((0, 200, 200), "cyan"),
        ((120, 70, 20), "brown"),
        ((30, 30, 90), "dark blue"),
    ],
)
def test_colour_names(rgb: tuple[int, int, int], name: str) -> None:
    assert colour_name(rgb) == name


def _ssim_by_the_book(x: np.ndarray, y: np.ndarray, win: int = 7) -> float:
    """Wang et al.'s SSIM with a uniform window, one window at a time."""
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    values = []
    for i in range(x.shape[0] - win + 1):
        for j in range(x.shape[1] - win + 1):
            a = x[i : i + win, j : j + win].ravel()
            b = y[i : i + win, j : j + win].ravel()
            ma, mb = a.mean(), b.mean()
            va, vb = a.var(ddof=1), b.var(ddof=1)
            cov = ((a - ma) * (b - mb)).sum() / (a.size - 1)
            values.append(
                ((2 * ma * mb + c1) * (2 * cov + c2)) / ((ma**2 + mb**2 + c1) * (va + vb + c2))
            )
    return float(np.mean(values))


def _png(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    PILImage.fromarray(array).save(buffer, format="PNG")
    return buffer.getvalue()


def test_compare_images_agrees_with_the_textbook_ssim_and_finds_the_change() -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(0, 255, (40, 48, 3), dtype=np.uint8)
    b = a.copy()
    b[10:20, 30:40] = 255 - b[10:20, 30:40]
    result = compare_images(_png(a), _png(b))
    grey = np.array([0.2125, 0.7154, 0.0721])
    expected = _ssim_by_the_book(a.astype(float) @ grey, b.astype(float) @ grey)
    assert result.ssim == pytest.approx(expected, abs=1e-9)
    assert result.changed_bbox is not None
    x0, y0, x1, y1 = result.changed_bbox
    assert 30 <= x0 and x1 <= 39 and 10 <= y0 and y1 <= 19
    assert 0 < result.changed_fraction <= 100 / (40 * 48)
    same = compare_images(a, a.copy())
    assert same.identical and same.ssim == 1.0 and same.to_text() == "the images are identical"
    with pytest.raises(ValueError, match="differ in size"):
        compare_images(a, a[:20])


def test_diff_reports_say_what_changed() -> None:
    ids, beauty = _scene()
    before = visibility_report(ids, {1: "box", 2: "floor", 3: "lamp"}, beauty)
    ids2, beauty2 = ids.copy(), beauty.copy()
    ids2[ids2 == 1] = 0
    beauty2[20:70, 10:60] = 128
    ids2[10:70, 100:180] = 1
    beauty2[10:70, 100:180] = (30, 200, 30)
    ids2[0:5, 0:5] = 3
    after = visibility_report(ids2, {1: "box", 2: "floor", 3: "lamp"}, beauty2)
    lines = diff_reports(before, after)
    box_line = next(line for line in lines if line.startswith("box:"))
    assert "coverage 12% -> 24%" in box_line and "colour red -> green" in box_line
    assert "moved right" in box_line
    assert "lamp: now visible" in lines
    assert not any(line.startswith("floor") for line in lines)


def test_an_engines_own_counts_give_the_same_report() -> None:
    ids, beauty = _scene()
    names = {1: "box", 2: "floor", 3: "lamp"}
    facts = {"box": ObjectFacts(name="box", pixels_alone=5000, pixels_unclipped=10000)}
    direct = visibility_report(ids, names, beauty, facts)
    counted, background = pixel_stats(ids, names, beauty)
    assert counted[0] == ObjectPixels(
        name="box", pixels=2500, bbox=(10, 20, 59, 69), colour_rgb=(200, 30, 30)
    )
    rebuilt = report_from_pixels(
        counted, 200, 100, background_pixels=background, facts=facts, blank=False
    )
    assert rebuilt == direct


def test_the_floor_is_not_a_framing_problem_but_a_box_at_the_edge_is() -> None:
    ids, beauty = _scene()
    ids[30:50, 180:200] = 4  # a small crate against the right edge
    facts = {
        "floor": ObjectFacts(name="floor", pixels_unclipped=9000),
        "crate": ObjectFacts(name="crate", pixels_unclipped=800),
    }
    report = visibility_report(ids, {1: "box", 2: "floor", 4: "crate"}, beauty, facts)
    assert report.hints == [
        "crate is cut off on the right (50% outside the frame): move the camera back"
    ]


@pytest.mark.parametrize("count", [3, 300, 5000])
def test_counts_boxes_and_colours_are_exact_for_many_labels(count: int) -> None:
    rng = np.random.default_rng(count)
    ids = rng.integers(0, count + 1, (96, 128)).astype(np.int32)
    palette = rng.integers(0, 256, (count + 1, 3)).astype(np.uint8)
    beauty = palette[ids]
    objects, background = pixel_stats(ids, {k: f"o{k}" for k in range(1, count + 1)}, beauty)
    assert background == int((ids == 0).sum())
    for k in (1, count // 2 or 1, count):
        o = objects[k - 1]
        ys, xs = np.nonzero(ids == k)
        assert o.pixels == len(xs)
        if len(xs):
            assert o.bbox == (xs.min(), ys.min(), xs.max(), ys.max())
            assert o.colour_rgb == tuple(int(c) for c in palette[k])  # one colour per object
