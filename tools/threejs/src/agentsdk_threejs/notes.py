"""Notes the tools add to a result about slips the visibility report alone does not explain.

Each one was seen in the local models' transcripts: an object placed inside another, a
close-up (``fit_view`` margin below 1) that crops what it framed, lights that shine only on
the sides the camera does not see, and three.js addons called as ``THREE.<Name>``.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from agentsdk.vision import VisibilityReport

from agentsdk_threejs.measure import ObjectBounds, penetration
from agentsdk_threejs.report import RenderReport, SceneLight, SceneObject, SceneSummary


def overlap_notes(scene: SceneSummary, names: list[Any]) -> list[str]:
    """Say when an object just added or changed sits inside another one (a small model's
    usual slip: a box placed at y=0 inside the table it should stand on)."""
    boxes = {
        o.name: ObjectBounds(name=o.name, min=o.bbox_min, max=o.bbox_max)
        for o in scene.objects
        if o.bbox_min is not None and o.bbox_max is not None
    }
    notes = []
    for name in dict.fromkeys(n for n in names if isinstance(n, str) and n in boxes):
        mine = boxes[name]
        for other in boxes.values():
            if other.name == name or penetration(mine, other) <= 0.001:
                continue
            notes.append(
                f"Note: {name} overlaps {other.name} by {penetration(mine, other):.3g} "
                f"({name}'s bottom is y {mine.min[1]:.3g}; {other.name}'s top is y {other.max[1]:.3g})."
            )
    return notes[:3]


def crop_notes(ops: list[dict[str, Any]], reports: list[VisibilityReport]) -> list[str]:
    """A ``fit_view`` margin below 1 crops on purpose; say what it cut, since a model asked to
    show "80 % of the ball" sent 0.85 and then repeated the call."""
    camera = next((r for r in reports if r.view == "camera"), None)
    notes: list[str] = []
    for op in ops:
        margin = op.get("margin")
        if camera is None or op.get("op") != "fit" or margin is None or margin >= 1:
            continue
        names = set(op.get("names") or [o.name for o in camera.objects])
        cut = [o for o in camera.objects if o.name in names and (o.cut_off or 0) > 0.005]
        if cut:
            listed = ", ".join(f"{o.name} ({_pct(o.cut_off or 0)} cut off)" for o in cut[:3])
            notes.append(
                f"Note: margin {margin:g} is below 1, so the frame crops {listed}; "
                "margin 1.15 (the default) shows all of it."
            )
    return notes


def out_of_view_hints(ops: list[dict[str, Any]], reports: list[VisibilityReport]) -> list[str]:
    """A hint when an object just added or changed is outside the camera's view while others
    show. The report only lists it as "not visible (outside the view)", which a small model
    read as done (threejs/floor-box-sun: the box, put at the floor's edge, was never seen and
    its colour check failed). Objects the call did not touch get no hint: a camera framing
    one object may leave others out on purpose."""
    camera = next((r for r in reports if r.view == "camera"), None)
    if camera is None or not camera.visible_names:
        return []  # nothing shows at all: the report's own hint says so
    touched = {op.get("name") for op in ops if op.get("op") in ("add", "update")}
    lost = [
        o.name
        for o in camera.objects
        if o.name in touched and not o.visible and o.outside_frustum and not o.behind_camera
    ]
    if not lost:
        return []
    listed = ", ".join(f'"{name}"' for name in lost)
    verb = "is" if len(lost) == 1 else "are"
    return [
        f"hint: {', '.join(lost)} {verb} outside the camera's view: call fit_view(names=[{listed}]) "
        "or move the camera to see it"
    ]


def _unit(vector: list[float]) -> list[float] | None:
    length = math.sqrt(sum(v * v for v in vector))
    return [v / length for v in vector] if length > 1e-9 else None


def _towards_light(light: SceneLight, centre: list[float]) -> list[float] | None:
    """Unit vector from the object towards where its light comes from (None: lights all sides)."""
    if light.position is None or light.kind in ("ambient", "hemisphere"):
        return None
    source = light.target if light.kind == "directional" and light.target else centre
    return _unit([p - s for p, s in zip(light.position, source, strict=True)])


def _dark(colour: str | None) -> bool:
    value = int((colour or "#000000").lstrip("#"), 16)
    return max(value >> 16, (value >> 8) & 255, value & 255) < 48


_FROM_THE_CAMERA = 0.8
"""Cosine above which a light comes from where the camera looks from (within ~37 degrees):
it then lights the faces the camera sees. A point light at (0, 0.5, 2) for a box at the
origin seen from (4, 3, 6) (cosine 0.78) lit only the box's front face; the box rendered
black and the 1.5B model moved the light nowhere for six turns (threejs/light-it)."""


def _unlit_side(item: SceneObject, scene: SceneSummary) -> bool:
    """No light comes from the camera's side of ``item`` (or every one is inside it): the
    lights reach little or nothing of what the camera sees."""
    if item.bbox_min is None or item.bbox_max is None or _dark(item.color):
        return False
    centre = [(a + b) / 2 for a, b in zip(item.bbox_min, item.bbox_max, strict=True)]
    view = _unit([c - o for c, o in zip(scene.camera.position, centre, strict=True)])
    if view is None:
        return False
    for light in scene.lights:
        if light.intensity <= 0:
            continue
        towards = _towards_light(light, centre)
        if towards is None:
            return False
        inside = light.position is not None and all(
            lo <= p <= hi
            for lo, p, hi in zip(item.bbox_min, light.position, item.bbox_max, strict=True)
        )
        if not inside and sum(t * v for t, v in zip(towards, view, strict=True)) > _FROM_THE_CAMERA:
            return False
    return True


def light_side_notes(scene: SceneSummary, reports: list[VisibilityReport]) -> list[str]:
    """Objects that render black although lit: the light is behind them or to one side,
    seen from the camera. (Local models put a point light at the origin, aimed a sun away
    from the camera, or put a point light low beside one face.)"""
    camera = next((r for r in reports if r.view == "camera"), None)
    lit = [light for light in scene.lights if light.intensity > 0]
    if camera is None or not lit:
        return []
    objects = {o.name: o for o in scene.objects}
    black = [
        objects[o.name]
        for o in camera.objects
        if o.visible and o.colour == "black" and o.name in objects
    ]
    unlit = [item.name for item in black if _unlit_side(item, scene)]
    if not unlit:
        return []
    where = "; ".join(_light_text(light) for light in lit[:2])
    at = ", ".join(f"{v:.3g}" for v in scene.camera.position)
    names = ", ".join(unlit[:3])
    return [
        f"Note: {names} render{'s' if len(unlit) == 1 else ''} black although there is light "
        f"({where}): it lights little or none of the side the camera sees. Light what the camera "
        f'sees: add_light(kind="directional", position=[{at}]) (where the camera is).'
    ]


def _light_text(light: SceneLight) -> str:
    def vec(values: list[float]) -> str:
        return "(" + ", ".join(f"{v:.3g}" for v in values) + ")"

    if light.kind == "directional" and light.position and light.target:
        return f"{light.name} shines from {vec(light.position)} towards {vec(light.target)}"
    return f"{light.name} at {vec(light.position or [0, 0, 0])}"


_NOT_IN_THREE = re.compile(r"THREE\.([A-Z]\w*) is not a (?:constructor|function)")


@lru_cache(maxsize=64)
def _addon_path(three_root: Path, name: str) -> str | None:
    jsm = three_root / "examples" / "jsm"
    found = sorted(jsm.rglob(f"{name}.js")) if jsm.is_dir() else []
    return found[0].relative_to(jsm).as_posix() if found else None


def addon_hints(report: RenderReport, three_root: Path | None) -> list[str]:
    """``THREE.OrbitControls is not a constructor``: it is an addon; say how to load it."""
    if three_root is None:
        return []
    hints = []
    for name in dict.fromkeys(m for e in report.errors for m in _NOT_IN_THREE.findall(e.text)):
        path = _addon_path(three_root, name)
        if path is not None:
            hints.append(
                f"hint: {name} is a three.js addon, not part of THREE: "
                f"const {{ {name} }} = await addon('{path}'); then new {name}(...)"
            )
    return hints


def _pct(fraction: float) -> str:
    return f"{fraction:.0%}" if fraction >= 0.01 else f"{fraction:.1%}"
