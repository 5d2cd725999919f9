"""How ``create_primitive`` reads its ``size`` (stdlib only: the agent side checks a size with
it before anything is sent, and the engine, inside the add-on too, builds from it).

One number is the primitive's own overall size, as it always was (a cube's edge, a sphere's
diameter). A list is read as the three.js toolkit reads one, so that a model says a size the
same way in both: [x, y, z] dimensions for a cube, a torus or the monkey, [x, y] for a plane,
radii for the round kinds: [r, r, r] for a sphere (its radius along each axis), [radius,
height] or [r, r, height] for a cylinder or cone. The 1.5B model sent a sphere "3 m in
diameter" as [1.5, 1.5, 1.5] and one "of radius 0.5" as [0.5, 0.5, 0.5]: with lists read as
dimensions both came out half as big (blender/ball-on-ground failed on it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import NamedTuple

RADIAL = frozenset({"cylinder", "cone"})
SPHERES = frozenset({"uv_sphere", "ico_sphere"})
FLAT_SHARE = 0.01
"""A plane's third number up to this share of its larger side is read as flat (0 or nearly)."""

ONE_NUMBER = {
    "cube": "edge",
    "plane": "side",
    "uv_sphere": "diameter",
    "ico_sphere": "diameter",
    "cylinder": "diameter and height",
    "cone": "diameter and height",
    "torus": "overall width",
    "monkey": "overall size",
}
"""What one number is for each kind (the size the primitive is made at)."""

_THREE = {"uv_sphere": "[r, r, r]: its radius", "ico_sphere": "[r, r, r]: its radius"}
"""What 3 numbers are for a kind whose 3 numbers are not its [x, y, z] dimensions."""

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?", re.I)
# What may stand between the numbers of a size written as text: "2 x 1 x 0.1 m", "[0.5, 3]".
_FILLER = re.compile(r"(?:[\s,;\[\]()x×*]|\b(?:metres?|meters?|m|by)\b)*", re.I)
_WHAT = "give one number above 0 (metres) or a list [x, y, z] of dimensions in metres"


class SizeReading(NamedTuple):
    """A size as read for one kind of primitive."""

    dimensions: tuple[float, float, float] | None
    """The object's X, Y, Z dimensions in metres; None for one number (the kind's own size)."""
    read_as: str
    """How the numbers were read, for the result: "radius 0.5, height 3"."""


def shown(size: float | Sequence[float]) -> str:
    """A size as the model wrote it: ``2`` or ``[0.5, 3]``."""
    if isinstance(size, int | float):
        return f"{size:g}"
    return "[" + ", ".join(f"{v:g}" for v in size) + "]"


def metres(value: object) -> float | list[float]:
    """A size's numbers: one above 0, or a list of 2 or 3, none below 0 (a plane's Z may be 0).
    Text holding such numbers ("2", "2 x 1 x 0.1", "[0.5, 3]") is read too. ValueError
    otherwise, with what a size is."""
    numbers: list[object]
    if isinstance(value, str):
        found = _NUMBER.findall(value)
        if not found or not _FILLER.fullmatch(_NUMBER.sub(" ", value)):
            raise ValueError(f"size {value!r} is not numbers; {_WHAT}")
        numbers = [float(n) for n in found]
    elif isinstance(value, list | tuple):
        numbers = list(value)
    else:
        numbers = [value]
    if not all(isinstance(n, int | float) and not isinstance(n, bool) for n in numbers):
        raise ValueError(f"size {value!r} is not numbers; {_WHAT}")
    floats = [float(n) for n in numbers]  # type: ignore[arg-type]  # checked just above
    if len(floats) > 3 or any(not math.isfinite(v) or v < 0 for v in floats):
        raise ValueError(f"size {shown(floats)}: {_WHAT}")
    if len(floats) == 1:
        if floats[0] <= 0:
            raise ValueError(f"size {shown(floats[0])}: {_WHAT}")
        return floats[0]
    return floats


def read_size(
    kind: str, size: float | Sequence[float], scale: Sequence[float] | None = None
) -> SizeReading:
    """How ``size`` (checked by ``metres``) makes a ``kind``; ValueError when it cannot, with
    what the numbers mean for that kind."""
    if isinstance(size, int | float):
        if kind in RADIAL:
            return SizeReading(None, f"diameter {size:g}, height {size:g}")
        return SizeReading(None, f"{ONE_NUMBER.get(kind, 'size')} {size:g}")
    reading = _read_list(kind, size)
    if scale is not None and _scaled(scale) and _said_twice(size, reading, scale):
        # One wish said twice ("2 by 1 by 0.1" as size and scale alike) would be squared.
        raise ValueError(
            f"size {shown(size)} already gives the dimensions, so leave scale out; scale "
            "multiplies the size (or use set_transform afterwards)"
        )
    return reading


def _said_twice(size: Sequence[float], reading: SizeReading, scale: Sequence[float]) -> bool:
    """Whether ``scale`` repeats the size's numbers or the dimensions they make: a scale
    that differs ("1 m on each side, twice as wide along x": ``[1, 1, 1]`` and ``[2, 1,
    1]``) multiplies the size, as on a one-number size; refused, the 1.5B model dropped it
    and the cube stayed 1 m wide (s25/5)."""

    def same(a: Sequence[float], b: Sequence[float]) -> bool:
        return len(a) == len(b) and all(abs(x - y) <= 1e-9 for x, y in zip(a, b, strict=True))

    scale = list(scale)
    return same(scale[: len(size)], list(size)) or (
        reading.dimensions is not None
        and same([s for s, d in zip(scale, reading.dimensions, strict=False) if d > 0],
                 [d for d in reading.dimensions if d > 0])
    )  # fmt: skip


def _read_list(kind: str, size: Sequence[float]) -> SizeReading:
    """How a list of numbers (checked by ``metres``) makes a ``kind``."""
    if kind == "plane":
        return _plane(list(size))
    # A zero among three numbers is no dimension: dropped, as three.js drops one (the 1.5B
    # model sent a cone "2 m tall" as [2, 0, 0], then [2, 2, 0], refused until the loop
    # guard stopped it). Two numbers keep theirs: [0, 3] is a cylinder of radius 0.
    values = [v for v in size if v > 0] if len(size) == 3 else list(size)
    if len(values) < len(size):
        if not values:
            raise ValueError(f"size {shown(size)}: every dimension must be above 0")
        left = values[0] if len(values) == 1 and kind not in SPHERES else values
        try:
            read = read_size(kind, left)
            if read.dimensions is None:  # one number left: the kind's own size, as dimensions
                read = _as_dimensions(kind, values[0], read)
        except ValueError as err:
            said = str(err).removeprefix(f"size {shown(left)}: ")
            raise ValueError(
                f"size {shown(size)}, a zero being no dimension, is {shown(left)}: {said}"
            ) from None
        return read._replace(read_as=f"{read.read_as}, its zeros left out")
    if len(values) == 1:  # a sphere's one radius
        return SizeReading((2 * values[0],) * 3, f"radius {values[0]:g}")
    if len(values) == 2:
        if kind not in RADIAL:
            one = ONE_NUMBER.get(kind, "size")
            raise ValueError(
                f"size {shown(size)}: a {kind}'s size is 1 number (its {one}) or 3 "
                f"({_THREE.get(kind, '[x, y, z] dimensions in metres')}); 2 numbers are "
                "[radius, height] for a cylinder or cone and [x, y] for a plane"
            )
        radius, height = values
        if radius <= 0 or height <= 0:
            raise ValueError(f"size {shown(size)}: a {kind}'s radius and height must be above 0")
        return SizeReading(
            (2 * radius, 2 * radius, height), f"radius {radius:g}, height {height:g}"
        )
    if min(values) <= 0:
        raise ValueError(
            f"size {shown(size)}: every dimension must be above 0 (only a plane is flat)"
        )
    x, y, z = values
    if kind in SPHERES:  # radii along x, y and z, as three.js reads a sphere's radius
        read_as = f"radius {x:g}" if x == y == z else f"radii {x:g}, {y:g}, {z:g}"
        return SizeReading((2 * x, 2 * y, 2 * z), read_as)
    if kind in RADIAL:  # [r, r, h]: the radius along x and y, then the height
        read_as = f"radius {x:g}, height {z:g}" if x == y else f"radii {x:g}, {y:g}, height {z:g}"
        return SizeReading((2 * x, 2 * y, z), read_as)
    return SizeReading((x, y, z), "x, y, z")


def _as_dimensions(kind: str, size: float, read: SizeReading) -> SizeReading:
    """One number's reading for ``kind`` as the dimensions it makes, where they are plain
    (a cube's edge, a cylinder's or cone's diameter and height)."""
    if kind == "cube" or kind in RADIAL:
        return read._replace(dimensions=(size, size, size))
    raise ValueError(
        f"a {kind}'s one number is its {ONE_NUMBER.get(kind, 'size')}: give it as a number"
    )


def _scaled(scale: Sequence[float] | None) -> bool:
    return scale is not None and any(abs(s - 1) > 1e-9 for s in scale)


def _plane(values: list[float]) -> SizeReading:
    x, y, *rest = values
    if x <= 0 or y <= 0:
        raise ValueError(f"size {shown(values)}: a plane's x and y must be above 0")
    thickness = rest[0] if rest else 0.0
    if thickness > FLAT_SHARE * max(x, y):
        raise ValueError(
            f"size {shown(values)}: a plane is flat, give [x, y] ([{x:g}, {y:g}]); for a slab "
            f"{thickness:g} m thick make a cube with size {shown(values)}"
        )
    ignored = f"; z {thickness:g} ignored" if thickness else ""
    return SizeReading((x, y, 0.0), f"x, y (a plane is flat{ignored})")


def size_note(
    size: float | Sequence[float],
    reading: SizeReading,
    dimensions: Sequence[float],
    scale: Sequence[float] | None = None,
) -> str:
    """The result's account of the size: "size [0.5, 3] read as radius 0.5, height 3
    (dimensions 1 x 1 x 3)", ``dimensions`` being what the object measures (scale included)."""
    times = f", times scale {shown(scale)}" if scale is not None and _scaled(scale) else ""
    measured = " x ".join(f"{v:.4g}" for v in dimensions)
    return f"size {shown(size)} read as {reading.read_as}{times} (dimensions {measured})"
