"""The mend of a part's size (:mod:`.as_asked` lists them all): the height, radius and
dimensions the request gives, on the fields the tool's ``size`` takes them in
(:func:`sized_as_asked`).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from agentsdk import ModelRequest, ModelResponse

from .mending import (
    _MESH,
    _SHAPE_ARGUMENTS,
    _asked,
    _Made,
    _mend,
    _plain,
    _plain_numbers,
    _says,
    _unsaid_files,
    _up_axis,
    _without,
)
from .unmade import (
    described,
    head_of,
    kind_of,
    makes_another_kind,
    mentions,
    named_in,
)

__all__ = [
    "sized_as_asked",
]

logger = logging.getLogger("agentsdk_openai.local")


_TALL = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:m\b|metres?\b|meters?\b|units?\b)?\s*(?:tall|high)\b"
    r"|\bheight\s*(?:of\s*)?(\d+(?:\.\d+)?)",
    re.IGNORECASE,
)
"""A height the request gives a part: "3 tall", "2 m high", "height 5"."""

_RADIUS = re.compile(r"\bradius\s*(?:of\s*)?(\d+(?:\.\d+)?)", re.IGNORECASE)

_BY = re.compile(
    r"(?<![\w.(,])(\d+(?:\.\d+)?)\s*(?:m\s+)?(?:by|x)\s*(\d+(?:\.\d+)?)"
    r"(?:\s*(?:m\s+)?(?:by|x)\s*(\d+(?:\.\d+)?))?(?![\w.])",
    re.IGNORECASE,
)
"""Dimensions the request gives a part: "20 by 20", "2 by 1 by 1", "2 x 1 x 0.5"."""

_EXTENTS = ({"w", "h", "d"}, {"x", "y", "z"})

_EDGE = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:m\b|metres?\b|meters?\b|units?\b)?\s*"
    r"(?:wide|tall|high|deep|long|across|on\s+(?:each|every|a)\s+side|per\s+side)\b",
    re.IGNORECASE,
)
"""One extent of a cube ("2 m wide", "1 on each side"): every edge of a cube is that long."""

_CUBE = re.compile(r"\bcubes?\b", re.IGNORECASE)

_FLAT = ("plane", "quad", "circle", "disc", "disk", "grid")
"""Shapes with no thickness: a zero in their size is the axis they lack."""

_FIELDS = r"\[([a-z]+(?:\s*,\s*[a-z]+)*)\]"
"""The fields of a size as a tool's description lists them: ``[r, h]``, ``[x, y, z]``."""

_ROUND = ("sphere", "ball", "uv_sphere", "ico_sphere")

_UPRIGHT = ("cylinder", "cone", "capsule")

_SIZE = "size"
_SIZE_KEY = re.compile(rf"^{_SIZE}$")

_NUMBER = r"-?\d+(?:\.\d+)?"
_WRITTEN_SIZE = re.compile(
    rf"\s*(?:Vector3\s*)?[\[(]\s*({_NUMBER}(?:\s*,\s*{_NUMBER})*)\s*[\])]\s*"
    rf"|\s*({_NUMBER}(?:\s*,\s*{_NUMBER})+)\s*",
    re.IGNORECASE,
)
"""A size written as text among properties: ``"[0.5, 0.5, 0.5]"``, ``"Vector3( 2, 2, 2 )"``,
or numbers with commas and no brackets (``"3, 1, 1"``, s25/8); one bare number is left to
the toolkit (Godot reads ``"2"`` as every edge)."""

_PRIMITIVE = re.compile(r"\s*([a-z]+?)\s*mesh\s*(?:\(\s*\))?\s*", re.IGNORECASE)
"""A mesh value naming a primitive mesh class: ``"SphereMesh()"`` is a sphere."""
_PRIMITIVES = ("box", "cube", "sphere", "cylinder", "capsule", "plane", "prism", "quad")


def _size_lifted(arguments: dict[str, Any]) -> dict[str, Any] | None:
    """The call with a size written among a dict argument's entries (Godot's
    ``properties: {"size": "[0.5, 0.5, 0.5]"}``, which its toolkit reads as the ``size``
    argument) as the ``size`` argument, or None when it has none that reads as numbers."""
    for key, value in arguments.items():
        if not isinstance(value, dict) or _SIZE not in value:
            continue
        said = value[_SIZE]
        if isinstance(said, list) and all(isinstance(v, int | float) for v in said):
            numbers = list(said)
        elif isinstance(said, str) and (found := _WRITTEN_SIZE.fullmatch(said)):
            numbers = [float(n) for n in (found.group(1) or found.group(2)).split(",")]
        else:
            return None
        rest = {k: v for k, v in value.items() if k != _SIZE}
        return {**arguments, key: rest, _SIZE: _plain(numbers)}
    return None


def _mesh_shape(arguments: dict[str, Any]) -> str | None:
    """The shape a primitive mesh the call sets its own way names ("SphereMesh()"), or None."""
    for value in arguments.values():
        entries = value.items() if isinstance(value, dict) else ()
        for key, said in entries:
            found = (
                _PRIMITIVE.fullmatch(said)
                if _MESH.search(str(key)) and isinstance(said, str)
                else None
            )
            if found is not None and found.group(1).lower() in _PRIMITIVES:
                return found.group(1).lower()
    return None


def _size_fields(schema: object, shape: str) -> list[str] | None:
    """The fields of ``size`` for this shape, from the argument's description: the list
    after the words naming the shape ("cylinder, cone, capsule [r, h]"; Blender's
    ``uv_sphere`` as "sphere"), else the description's only list ("[x, y, z] metres its
    mesh fills")."""
    text = str(schema.get("description", "")) if isinstance(schema, dict) else ""
    lists = list(re.finditer(_FIELDS, text, re.IGNORECASE))
    words = {shape, shape.rsplit("_", 1)[-1]}
    start = 0
    for found in lists:
        naming = re.split(r"[:;)]", text[start : found.start()])[-1]  # "a list: cube " -> cube
        start = found.end()
        if words & {w.lower() for w in re.findall(r"[A-Za-z_]+", naming)}:
            return [f.strip().lower() for f in found.group(1).split(",")]
    return [f.strip().lower() for f in lists[0].group(1).split(",")] if len(lists) == 1 else None


def _wanted_size(
    fields: list[str], shape: str, up: int | None, height: float | None, radius: float | None
) -> dict[int, float]:
    """Field index -> the value the request gives it."""
    wanted: dict[int, float] = {}
    extents = fields == ["x", "y", "z"]
    if height is not None:
        named = [i for i, f in enumerate(fields) if f in ("h", "height")]
        if named:
            wanted[named[0]] = height
        elif extents and up is not None:
            wanted[up] = height
    if radius is not None:
        for i, field in enumerate(fields):
            if field in ("r", "radius"):
                wanted[i] = radius
            elif extents and (shape in _ROUND or (shape in _UPRIGHT and i != up)):
                wanted.setdefault(i, 2 * radius)  # an extent is a diameter
    return wanted


def _as_read(size: list[float | int], fields: list[str]) -> list[float | int]:
    """A size's numbers as the three.js and Blender toolkits read them for these fields:
    more numbers than fields are ``[r, r, h]`` for ``[r, h]`` (a radius given twice), else
    the first ones; fewer are padded with 1."""
    if len(size) > len(fields):
        a, b, *rest = size
        if len(fields) == 2 and len(size) == 3 and a == b and rest[0] != a:
            return [a, rest[0]]
        return list(size[: len(fields)])
    return list(size) + [1] * (len(fields) - len(size))


def _by_size(
    made: _Made, numbers: list[float], fields: list[str], shape: str
) -> dict[str, Any] | None:
    """A call with no size given the dimensions the request says ("20 by 20"), in order, on
    a shape whose size is its extents (``[w, h, d]``, ``[x, y, z]``, ``[w, d]``, ``[x, y]``);
    two numbers for a plane's three extents leave out its up axis (Godot's PlaneMesh
    ``[20, 0, 20]``)."""
    call = made.call
    if not any(set(fields) <= extents for extents in _EXTENTS):
        return None
    up = _up_axis(made.tool)
    if len(numbers) == len(fields):
        size = list(numbers)
    elif len(numbers) == 2 and len(fields) == 3 and up is not None and shape == "plane":
        size = list(numbers)
        size.insert(up, 0.0)
    else:
        return None
    size = _plain(size)
    logger.info("%s for %r sized as asked: %s", call.name, made.name, size)
    return {**call.arguments, _SIZE: size}


def sized_as_asked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """Each call that makes a shape with the height ("3 tall", "2 m high", "height 5") and
    the radius ("of radius 0.2") the request gives it, on the fields its tool's ``size``
    takes them in, as the argument's description lists them for that shape (``[r, h]``,
    ``[radius, height]``, ``[x, y, z]`` with the up axis the tool's descriptions give: an
    extent across is twice the radius). The call's size is read first as the toolkits read
    it (``[r, r, h]`` for ``[r, h]``, else its first numbers; a size with a zero is left to
    them); a number the call put on another field is moved (``[3, 1, 1]`` for a cylinder 3
    tall, three.js's ``[r, h]``, becomes ``[1, 3]``); a call with no size gets one, its
    other fields 1. A call with no size at all gets the dimensions the request gives ("20
    by 20", "2 by 1 by 1"), in order, where its size is the shape's extents.

    On new users' prompts the 1.5B model sent "a green cylinder named pillar, 3 tall" as a
    cylinder of radius 3 and height 1 (three.js), "an orange cylinder named Tower, 3 tall"
    with no size and ``position: [0, 0, 3]`` (Godot), and "a green sphere named Apple of
    radius 0.2" as ``size: [0.2, 0.2, 0.2]``, a sphere half as wide (Godot's size is the
    extent). Parts named together share a clause whose numbers are each one's ("three white
    spheres named base, middle and head, of radius 1, 0.7 and 0.45"): left alone.

    A size written among a dict argument's entries (Godot's ``properties: {"size": "[0.5,
    0.5, 0.5]"}``, which its toolkit reads as the argument) is read as the call's size, and
    a primitive mesh set there ("SphereMesh()") as its shape; mended, the size becomes the
    argument (the 1.5B model gave "a white sphere named Ball of radius 0.5" as such a size
    of 0.5, a ball half as wide, on s20/7, and "Apple of radius 0.2" with ``"mesh":
    "SphereMesh()"`` on s21/7)."""
    text = _asked(request)

    def mend(made: _Made) -> dict[str, Any] | None:
        tool, call = made.tool, made.call
        if made.name is None:
            return None
        said = _without(described(text, made.name), made.name)
        if any(mentions(said, other) for other in named_in(text) if other != made.name):
            return None  # parts named together ("base, middle and head, of radius 1, 0.7 ...")
        head = head_of(text, made.name)
        if kind_of(head) != "shape" or makes_another_kind(text, made.name, call):
            return None
        tall = [h or r for h, r in _TALL.findall(said)]
        round_ = _RADIUS.findall(said)
        by = _BY.findall(said)
        edges = {float(e) for e in _EDGE.findall(said)} if _CUBE.search(head) else set()
        if len(edges) > 1 or by or round_:
            edges = set()  # a cube of two sizes, or dimensions besides: not one edge
        if len(tall) > 1 or len(round_) > 1 or len(by) > 1 or not (tall or round_ or by or edges):
            return None
        properties = tool.parameters.get("properties") or {}
        key = next((k for k in _SHAPE_ARGUMENTS if k in properties), None)
        arguments = call.arguments
        if _SIZE in properties and _SIZE not in arguments:
            arguments = _size_lifted(arguments) or arguments
        others = _unsaid_files({k: v for k, v in arguments.items() if k != _SIZE}, text)
        meshed = _mesh_shape(others)
        if (key is None or key not in arguments) and _says(others, _MESH) and meshed is None:
            return None  # a mesh set its own way, its shape unread
        if _says(others, _SIZE_KEY):
            return None  # a size among properties too, not read as numbers
        shape = str(arguments.get(key) or meshed or "box").lower() if key else "box"
        fields = _size_fields(properties.get(_SIZE), shape)
        if fields is None:
            return None
        height = float(tall[0]) if tall else None
        radius = float(round_[0]) if round_ else None
        wanted = _wanted_size(fields, shape, _up_axis(tool), height, radius)
        if edges and any(set(fields) == extents for extents in _EXTENTS):
            (edge,) = edges
            wanted = dict.fromkeys(range(len(fields)), edge)
        size = arguments.get(_SIZE)
        if by and size is None and not wanted:
            return _by_size(made, [float(n) for n in by[0] if n], fields, shape)
        if not wanted:
            return None
        if size is None:
            size = [1] * len(fields)
        if not _plain_numbers(size) or (0 in size and shape in _FLAT):
            return None  # a flat shape's zero is the axis it lacks: left to the toolkits
        given = [v for v in size if v != 0]
        if not given:
            return None
        # On a solid, a zero is no dimension: the numbers besides it are the size the call
        # gives (Blender reads it so; three.js read a cone's [2, 0, 0], "2 tall", as radius 2
        # and height 0, and refused it, s24/2).
        read = _as_read(given, fields)
        new = list(read)
        for index, value in wanted.items():
            if new[index] == value:
                continue
            misplaced = [i for i, v in enumerate(new) if v == value and i not in wanted]
            if misplaced:
                new[misplaced[0]] = new[index]
            new[index] = value
        new = _plain(new)
        if new == read and _SIZE in arguments and given == size:
            return None  # as asked (a size among properties stays where it was written)
        logger.info("%s for %r sized as asked: %s", call.name, made.name, new)
        return {**arguments, _SIZE: new}

    return _mend(request, response, mend)
