"""The visibility report: what a render shows, measured from an object-ID pass.

An engine renders the scene a second time with the same camera, each named object in
one flat colour (no lighting, no antialiasing), decodes that into an array of object
numbers, and hands it here together with the lit image and the few facts only the
engine knows (how much of an object lies outside the frame, what hides behind the
camera). Everything else is counted from pixels, so the report says what the picture
shows, not what the scene description intends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, Field

from .colours import colour_name
from .pixels import ObjectPixels, flat_colour, pixel_stats

__all__ = [
    "FLAT_FRAME_HINT",
    "ObjectFacts",
    "ObjectVisibility",
    "VisibilityReport",
    "report_from_pixels",
    "visibility_report",
]

FLAT_FRAME_HINT = "objects are in view but the image is flat"
"""How the hint about a frame of one flat colour begins (an engine that knows more about its
lights replaces that hint with its own: agentsdk_godot.visibility)."""

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

    def to_text(self, max_objects: int = 8, *, boxes: bool = False) -> str:
        """A few short lines for a tool result: the frame, each object (share of the
        frame, where, colour, cut off, hidden), then hints. ``boxes`` adds each object's
        pixel box (digits cost a token each for some tokenizers)."""
        shown = sorted(self.objects, key=lambda o: (not o.visible, -o.pixels, o.name))
        visible = sum(o.visible for o in self.objects)
        head = (
            f"view {self.view}: {visible} of {len(self.objects)} objects visible, "
            f"background {_pct(self.background)}"
        )
        if self.blank:
            head += f"; the frame is blank ({self.blank_colour or 'one flat colour'})"
        lines = [head]
        for item in shown[:max_objects]:
            lines.append(_object_line(item, self.width, self.height, boxes))
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


def _where(box: tuple[int, int, int, int], width: int, height: int) -> str:
    """Where a box's centre sits, in a 3x3 grid of the frame."""
    x = (box[0] + box[2] + 1) / 2 / max(width, 1)
    y = (box[1] + box[3] + 1) / 2 / max(height, 1)
    row = "top" if y < 1 / 3 else "bottom" if y > 2 / 3 else ""
    col = "left" if x < 1 / 3 else "right" if x > 2 / 3 else ""
    return f"{row} {col}".strip() or "centre"


def _object_line(o: ObjectVisibility, width: int, height: int, boxes: bool) -> str:
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
        parts.append(_where(o.bbox, width, height))
        if boxes:
            x0, y0, x1, y1 = o.bbox
            parts[-1] += f" (x {x0}-{x1}, y {y0}-{y1})"
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


def visibility_report(
    ids: NDArray[np.integer[Any]],
    names: Mapping[int, str],
    beauty: NDArray[np.uint8] | None = None,
    facts: Mapping[str, ObjectFacts] | None = None,
    *,
    view: str = "camera",
    max_hints: int = 3,
    frame_tool: str | None = None,
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
        frame_tool: The engine's tool that frames objects (``"fit_view"``): hints then
            say how to call it, which small models follow far better than advice.
    """
    if ids.ndim != 2:
        raise ValueError(f"ids must be a 2-D array, not shape {ids.shape}")
    height, width = ids.shape
    if beauty is not None and beauty.shape[:2] != ids.shape:
        raise ValueError(
            f"the lit image is {beauty.shape[1]}x{beauty.shape[0]} but the ID pass is "
            f"{width}x{height}: render both with the same camera and size"
        )
    objects, background = pixel_stats(ids, dict(names), beauty)
    flat: tuple[bool, tuple[int, int, int]] | None = None
    if beauty is not None:
        flat = flat_colour(beauty)
    return report_from_pixels(
        objects,
        width,
        height,
        background_pixels=background,
        facts=facts,
        blank=flat[0] if flat is not None else None,
        blank_rgb=flat[1] if flat is not None and flat[0] else None,
        view=view,
        max_hints=max_hints,
        frame_tool=frame_tool,
    )


def report_from_pixels(
    objects: Sequence[ObjectPixels],
    width: int,
    height: int,
    *,
    background_pixels: int | None = None,
    facts: Mapping[str, ObjectFacts] | None = None,
    blank: bool | None = None,
    blank_rgb: tuple[int, int, int] | None = None,
    view: str = "camera",
    max_hints: int = 3,
    frame_tool: str | None = None,
) -> VisibilityReport:
    """The report from counts an engine made itself (``ObjectPixels`` per object, e.g. a
    page's script over its own buffers) plus its facts; the same maths and text as
    :func:`visibility_report`.

    Args:
        objects: Every named object, with its pixel count, box and colour.
        width: Frame width in pixels.
        height: Frame height in pixels.
        background_pixels: Pixels showing no named object (the rest of the frame if ``None``).
        facts: Per object name, what the engine knows beyond pixels.
        blank: Whether the lit frame is one flat colour (``None``: no object is visible).
        blank_rgb: That flat colour.
        view: The view's name.
        max_hints: At most this many hints.
        frame_tool: The engine's framing tool, named in the hints (see
            :func:`visibility_report`).
    """
    facts = facts or {}
    total = width * height
    items: list[ObjectVisibility] = []
    for counted in objects:
        name, pixels, box = counted.name, counted.pixels, counted.bbox
        fact = facts.get(name)
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
        rgb = counted.colour_rgb
        items.append(
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
    if background_pixels is None:
        background_pixels = total - sum(o.pixels for o in items)
    report = VisibilityReport(
        view=view,
        width=width,
        height=height,
        objects=items,
        background=background_pixels / total if total else 1.0,
        blank=blank if blank is not None else not any(o.visible for o in items),
        blank_colour=colour_name(blank_rgb) if blank and blank_rgb is not None else None,
    )
    report.hints = _hints(report, frame_tool)[:max_hints]
    return report


def _clamp(value: float) -> float:
    return min(1.0, max(0.0, value))


def _worth_a_cut_hint(o: ObjectVisibility, report: VisibilityReport) -> bool:
    """Cut-off worth fixing: not a ground plane or backdrop (they touch three or four edges
    of the frame and are always cut), and not an object the camera sits inside."""
    if not o.visible or not o.cut_sides or len(o.cut_sides) >= 3:
        return False
    if o.cut_off is not None:
        return 0.01 <= o.cut_off < 0.85
    if o.bbox is None:
        return False
    x0, y0, x1, y1 = o.bbox
    return (x1 - x0 + 1) < report.width and (y1 - y0 + 1) < report.height


def _frame(tool: str | None, names: list[str], otherwise: str) -> str:
    """How to fix the framing: a call to the engine's framing tool, or plain advice."""
    if tool is None:
        return otherwise
    listed = ", ".join(f'"{n}"' for n in names)
    return f"call {tool}(names=[{listed}]) or {otherwise}"


def _hints(report: VisibilityReport, frame_tool: str | None = None) -> list[str]:
    """Framing hints, the most useful first."""
    hints: list[str] = []
    objects = report.objects
    shown = [o for o in objects if o.visible]
    if objects and not shown:
        behind = [o.name for o in objects if o.behind_camera]
        if behind:
            hints.append(
                f"nothing is visible; {', '.join(behind[:3])} is behind the camera: "
                + _frame(frame_tool, behind[:3], "turn the camera around")
            )
        else:
            every = [o.name for o in objects][:3]
            hints.append(
                "nothing is visible: "
                + _frame(frame_tool, every, "point the camera at the objects")
            )
    elif report.blank and shown:
        hints.append(
            f"{FLAT_FRAME_HINT} {report.blank_colour}: "
            "add lights, or use a material that does not need light"
        )
    cut = sorted(
        (o for o in objects if _worth_a_cut_hint(o, report)), key=lambda o: -(o.cut_off or 0)
    )
    for o in cut:
        where = " and ".join(o.cut_sides)
        amount = f" ({_pct(o.cut_off)} outside the frame)" if o.cut_off else ""
        hints.append(
            f"{o.name} is cut off on the {where}{amount}: "
            + _frame(frame_tool, [o.name], "move the camera back")
        )
    if not report.blank:
        hints.extend(
            f"{o.name} renders black: it may need light or a brighter colour"
            for o in shown
            if o.colour == "black"
        )
    hints.extend(
        f"{o.name} is {_pct(o.occluded)} hidden behind other objects; move it or the camera"
        for o in shown
        if o.occluded is not None and o.occluded >= 0.5
    )
    hints.extend(
        f"{o.name} is tiny ({_pct(o.coverage)} of the frame); move the camera closer"
        for o in shown
        if o.coverage < 0.005
    )
    if shown:
        hints.extend(f"{o.name} is behind the camera" for o in objects if o.behind_camera)
    return hints
