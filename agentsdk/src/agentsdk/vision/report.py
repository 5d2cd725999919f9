"""The visibility report: what a render shows, measured from an object-ID pass.

An engine renders the scene a second time with the same camera, each named object in
one flat colour (no lighting, no antialiasing), decodes that into an array of object
numbers, and hands it here together with the lit image and the few facts only the
engine knows (how much of an object lies outside the frame, what hides behind the
camera). Everything else is counted from pixels, so the report says what the picture
shows, not what the scene description intends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, Field

from .colours import colour_name

__all__ = ["ObjectFacts", "ObjectVisibility", "VisibilityReport", "visibility_report"]

Side = Literal["left", "right", "top", "bottom"]
_SIDES: tuple[Side, ...] = ("left", "right", "top", "bottom")


class ObjectFacts(BaseModel):
    """What only the engine can tell about an object in a view."""

    name: str
    pixels_alone: int | None = None
    """Pixels the object covers in the frame when drawn alone (gives ``occluded``)."""
    pixels_unclipped: int | None = None
    """Pixels it would cover on an unbounded image plane at the same scale (gives ``cut_off``)."""
    cut_sides: list[Side] = Field(default_factory=list)
    """Frame edges the object extends past."""
    behind_camera: bool = False
    outside_frustum: bool = False


class ObjectVisibility(BaseModel):
    """One named object as the render shows it."""

    name: str
    visible: bool
    pixels: int
    coverage: float
    """Fraction of the frame's pixels that show this object (0..1)."""
    bbox: tuple[int, int, int, int] | None = None
    """Screen-space box ``(x0, y0, x1, y1)``, inclusive pixels, origin at the top left."""
    cut_off: float | None = None
    """Fraction of the object's projection that falls outside the frame (0..1)."""
    cut_sides: list[Side] = Field(default_factory=list)
    occluded: float | None = None
    """Fraction of its in-frame projection hidden behind other objects (0..1)."""
    colour_rgb: tuple[int, int, int] | None = None
    """Dominant colour of its pixels in the lit image."""
    colour: str | None = None
    behind_camera: bool = False
    outside_frustum: bool = False


class VisibilityReport(BaseModel):
    """What one rendered view shows, object by object."""

    view: str
    width: int
    height: int
    objects: list[ObjectVisibility]
    background: float
    """Fraction of the frame showing no named object."""
    blank: bool
    """The lit image is a single flat colour (or, without one, no object is visible)."""
    blank_colour: str | None = None
    hints: list[str] = Field(default_factory=list)

    def object(self, name: str) -> ObjectVisibility | None:
        """The entry for ``name``, or ``None``."""
        for item in self.objects:
            if item.name == name:
                return item
        return None

    @property
    def visible_names(self) -> list[str]:
        """Names of the objects that show, largest first."""
        return [o.name for o in sorted(self.objects, key=lambda o: -o.pixels) if o.visible]

    def to_text(self, max_objects: int = 8) -> str:
        """A few short lines for a tool result: the frame, each object, then hints."""
        shown = sorted(self.objects, key=lambda o: (not o.visible, -o.pixels, o.name))
        visible = sum(o.visible for o in self.objects)
        head = (
            f"view {self.view} {self.width}x{self.height}: {visible} of {len(self.objects)} "
            f"objects visible, background {_pct(self.background)}"
        )
        if self.blank:
            head += f"; the frame is blank ({self.blank_colour or 'one flat colour'})"
        lines = [head]
        for item in shown[:max_objects]:
            lines.append(_object_line(item))
        if len(shown) > max_objects:
            rest = shown[max_objects:]
            lines.append(
                f"... {len(rest)} more ({sum(o.visible for o in rest)} visible, "
                f"{_pct(sum(o.coverage for o in rest))} of the frame)"
            )
        lines.extend(f"hint: {h}" for h in self.hints)
        return "\n".join(lines)


def _pct(fraction: float) -> str:
    value = fraction * 100
    if value == 0:
        return "0%"
    if value < 1:
        return f"{value:.1f}%"
    return f"{value:.0f}%"


def _object_line(o: ObjectVisibility) -> str:
    if not o.visible:
        why = (
            "behind the camera"
            if o.behind_camera
            else "outside the view"
            if o.outside_frustum
            else "fully hidden behind other objects"
            if o.occluded is not None and o.occluded >= 0.999
            else "not in the frame"
        )
        return f"{o.name}: not visible ({why})"
    parts = [f"{o.name}: {_pct(o.coverage)}"]
    if o.bbox is not None:
        x0, y0, x1, y1 = o.bbox
        parts[0] += f" at x{x0}-{x1} y{y0}-{y1}"
    if o.colour:
        parts.append(o.colour)
    if o.cut_off is not None and o.cut_off >= 0.01:
        sides = "/".join(o.cut_sides) or "edge"
        parts.append(f"cut off {_pct(o.cut_off)} ({sides})")
    elif o.cut_sides:
        parts.append(f"touches {'/'.join(o.cut_sides)} edge")
    if o.occluded is not None and o.occluded >= 0.01:
        parts.append(f"{_pct(o.occluded)} hidden")
    return ", ".join(parts)


def _bboxes(
    ids: NDArray[np.integer[Any]], labels: NDArray[np.int64]
) -> dict[int, tuple[int, int, int, int]]:
    """Inclusive pixel boxes of every label, by sorting the labelled pixels once."""
    flat = ids.ravel()
    where = np.flatnonzero(flat > 0)
    if where.size == 0:
        return {}
    keys = flat[where]
    order = np.argsort(keys, kind="stable")
    keys, where = keys[order], where[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    width = ids.shape[1]
    ys, xs = np.divmod(where, width)
    x0 = np.minimum.reduceat(xs, starts)
    x1 = np.maximum.reduceat(xs, starts)
    y0 = np.minimum.reduceat(ys, starts)
    y1 = np.maximum.reduceat(ys, starts)
    found = keys[starts]
    wanted = set(labels.tolist())
    return {
        int(k): (int(a), int(b), int(c), int(d))
        for k, a, b, c, d in zip(found, x0, y0, x1, y1, strict=True)
        if int(k) in wanted
    }


def _dominant_colours(
    ids: NDArray[np.integer[Any]], beauty: NDArray[np.uint8]
) -> dict[int, tuple[int, int, int]]:
    """Per label, the mean colour of its most common colour bin (4 bits per channel)."""
    flat = ids.ravel()
    mask = flat > 0
    if not mask.any():
        return {}
    rgb = beauty[..., :3].reshape(-1, 3)[mask]
    labels = flat[mask].astype(np.int64)
    bins = (rgb[:, 0] >> 4).astype(np.int64) << 8 | (rgb[:, 1] >> 4) << 4 | (rgb[:, 2] >> 4)
    keys = labels << 12 | bins
    top = int(labels.max())
    if top <= 1024:  # a dense table is cheaper than sorting
        counts = np.bincount(keys, minlength=(top + 1) << 12).reshape(top + 1, 4096)
        best_bin = counts.argmax(axis=1)
        present = np.flatnonzero(counts.max(axis=1) > 0)
        chosen = mask.copy()
        chosen[mask] = bins == best_bin[labels]
        sel_labels = flat[chosen].astype(np.int64)
        sel_rgb = beauty[..., :3].reshape(-1, 3)[chosen].astype(np.float64)
        n = np.bincount(sel_labels, minlength=top + 1)
        sums = np.stack(
            [np.bincount(sel_labels, weights=sel_rgb[:, c], minlength=top + 1) for c in range(3)],
            1,
        )
        return {int(k): _rgb(sums[k] / n[k]) for k in present if n[k]}
    uniq, inverse, cnt = np.unique(keys, return_inverse=True, return_counts=True)
    sums = np.stack(
        [np.bincount(inverse, weights=rgb[:, c].astype(np.float64)) for c in range(3)], 1
    )
    owner = uniq >> 12
    # the most populous bin of each label: sort by (label, count) and take each label's last
    order = np.lexsort((cnt, owner))
    last = np.flatnonzero(np.r_[owner[order][1:] != owner[order][:-1], True])
    return {int(owner[i]): _rgb(sums[i] / cnt[i]) for i in order[last]}


def _rgb(values: Any) -> tuple[int, int, int]:
    r, g, b = np.rint(np.asarray(values, dtype=np.float64)[:3]).astype(int).tolist()
    return int(r), int(g), int(b)


def _is_flat(beauty: NDArray[np.uint8]) -> tuple[bool, tuple[int, int, int]]:
    """Whether (nearly) every pixel has one colour, and that colour."""
    rgb = beauty[..., :3].reshape(-1, 3)
    first = rgb[0]
    if bool((rgb == first).all()):
        return True, (int(first[0]), int(first[1]), int(first[2]))
    sample = rgb[::7]
    bins = (
        (sample[:, 0] >> 4).astype(np.int64) << 8 | (sample[:, 1] >> 4) << 4 | (sample[:, 2] >> 4)
    )
    counts = np.bincount(bins, minlength=4096)
    top = int(counts.argmax())
    colour = sample[bins == top].mean(axis=0)
    flat = counts[top] >= 0.999 * len(sample)
    return bool(flat), _rgb(colour)


def visibility_report(
    ids: NDArray[np.integer[Any]],
    names: Mapping[int, str],
    beauty: NDArray[np.uint8] | None = None,
    facts: Mapping[str, ObjectFacts] | None = None,
    *,
    view: str = "camera",
    max_hints: int = 3,
) -> VisibilityReport:
    """Measure what a view shows from its object-ID pass.

    Args:
        ids: ``(H, W)`` integers from the ID pass: 0 is background, ``k`` is object ``k``.
        names: The name of each object number (objects that may not show included).
        beauty: The lit render from the same camera, ``(H, W, 3|4)`` uint8, for colours
            and the blank-frame check.
        facts: Per object name, what the engine knows beyond pixels.
        view: The view's name, as the render tool calls it.
        max_hints: At most this many framing hints.
    """
    if ids.ndim != 2:
        raise ValueError(f"ids must be a 2-D array, not shape {ids.shape}")
    height, width = ids.shape
    if beauty is not None and beauty.shape[:2] != ids.shape:
        raise ValueError(
            f"the lit image is {beauty.shape[1]}x{beauty.shape[0]} but the ID pass is "
            f"{width}x{height}: render both with the same camera and size"
        )
    facts = facts or {}
    total = width * height
    flat = ids.ravel().astype(np.int64)
    top = int(flat.max()) if flat.size else 0
    counts = np.bincount(flat, minlength=max(top, max(names, default=0)) + 1)
    labels = np.array(sorted(names), dtype=np.int64)
    boxes = _bboxes(ids, labels)
    colours = _dominant_colours(ids, beauty) if beauty is not None else {}
    objects: list[ObjectVisibility] = []
    for k in labels.tolist():
        name = names[k]
        pixels = int(counts[k]) if k < counts.size else 0
        fact = facts.get(name)
        box = boxes.get(k)
        occluded: float | None = None
        cut_off: float | None = None
        sides: list[Side] = []
        if fact is not None:
            if fact.pixels_alone:
                occluded = _clamp(1 - pixels / fact.pixels_alone)
            alone = fact.pixels_alone if fact.pixels_alone is not None else pixels
            if fact.pixels_unclipped:
                cut_off = _clamp(1 - alone / fact.pixels_unclipped)
            sides = list(fact.cut_sides)
        if not sides and box is not None:
            x0, y0, x1, y1 = box
            touched = (x0 == 0, x1 == width - 1, y0 == 0, y1 == height - 1)
            sides = [s for s, t in zip(_SIDES, touched, strict=True) if t]
        rgb = colours.get(k)
        objects.append(
            ObjectVisibility(
                name=name,
                visible=pixels > 0,
                pixels=pixels,
                coverage=pixels / total if total else 0.0,
                bbox=box,
                cut_off=cut_off,
                cut_sides=sides if pixels > 0 else [],
                occluded=occluded,
                colour_rgb=rgb,
                colour=colour_name(rgb) if rgb is not None else None,
                behind_camera=bool(fact and fact.behind_camera),
                outside_frustum=bool(fact and fact.outside_frustum),
            )
        )
    background = float(counts[0]) / total if total else 1.0
    blank_colour: str | None = None
    if beauty is not None:
        blank, mean = _is_flat(beauty)
        if blank:
            blank_colour = colour_name(mean)
    else:
        blank = not any(o.visible for o in objects)
    report = VisibilityReport(
        view=view,
        width=width,
        height=height,
        objects=objects,
        background=background,
        blank=blank,
        blank_colour=blank_colour,
    )
    report.hints = _hints(report)[:max_hints]
    return report


def _clamp(value: float) -> float:
    return min(1.0, max(0.0, value))


def _worth_a_cut_hint(o: ObjectVisibility, report: VisibilityReport) -> bool:
    """Cut-off worth fixing: not a ground plane or backdrop that fills the frame's width or
    height (those are always cut), and not an object the camera sits inside."""
    if not o.visible or not o.cut_sides:
        return False
    if o.cut_off is not None:
        return 0.01 <= o.cut_off < 0.85
    if o.bbox is None:
        return False
    x0, y0, x1, y1 = o.bbox
    spans = (x1 - x0 + 1) >= report.width or (y1 - y0 + 1) >= report.height
    return not spans and len(o.cut_sides) <= 2


def _hints(report: VisibilityReport) -> list[str]:
    hints: list[str] = []
    objects = report.objects
    if objects and not any(o.visible for o in objects):
        behind = [o.name for o in objects if o.behind_camera]
        if behind:
            hints.append(
                f"nothing is visible; {', '.join(behind[:3])} is behind the camera: "
                "turn the camera around or use fit_view"
            )
        else:
            hints.append("nothing is visible: point the camera at the objects or use fit_view")
    elif report.blank and any(o.visible for o in objects):
        hints.append(
            f"objects are in view but the image is flat {report.blank_colour}: "
            "add lights, or use a material that does not need light"
        )
    for o in objects:
        if _worth_a_cut_hint(o, report):
            where = " and ".join(o.cut_sides)
            amount = f" ({_pct(o.cut_off)} outside the frame)" if o.cut_off else ""
            hints.append(
                f"{o.name} is cut off on the {where}{amount}; move the camera back or use fit_view"
            )
    for o in objects:
        if o.visible and o.colour == "black" and not report.blank:
            hints.append(f"{o.name} renders black: it may need light or a brighter colour")
    for o in objects:
        if o.visible and o.occluded is not None and o.occluded >= 0.5:
            hints.append(
                f"{o.name} is {_pct(o.occluded)} hidden behind other objects; move it or the camera"
            )
    for o in objects:
        if o.visible and o.coverage < 0.005:
            hints.append(
                f"{o.name} is tiny ({_pct(o.coverage)} of the frame); move the camera closer"
            )
    for o in objects:
        if not o.visible and o.behind_camera and any(p.visible for p in objects):
            hints.append(f"{o.name} is behind the camera")
    return hints
