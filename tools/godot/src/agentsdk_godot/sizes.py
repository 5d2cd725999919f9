"""``size``: a primitive shape's size in metres, given as the box it should fill, ``[x, y, z]``.

A small model asked for "a 1 x 1 x 1 cube" writes ``mesh = "CubeMesh()"`` and stops: it never
writes the CubeMesh's own ``size`` field, so the cube is Godot's default 2 x 2 x 2. ``size``
turns the box the model means into the fields each shape has (Godot's own property names, read
from the engine's ClassDB):

| shape | fields |
|---|---|
| CubeMesh (Godot 4: BoxMesh), PrismMesh | ``size = Vector3( x, y, z )`` |
| SphereMesh | ``radius = x / 2``, ``height = y`` (x = z: one radius) |
| CylinderMesh | the wider of ``top_radius`` / ``bottom_radius`` = x / 2 (a cone stays a cone), ``height = y`` (x = z) |
| CapsuleMesh | Godot 3: lies along z, ``radius = x / 2``, ``mid_height = z - x`` (x = y); Godot 4: along y, ``radius``, ``height = y`` |
| PlaneMesh | ``size = Vector2( x, z )`` (flat: y = 0) |
| QuadMesh | ``size = Vector2( x, y )`` (flat: z = 0) |
| CSGBox / CSGCylinder / CSGSphere (Godot 3) | ``width``/``height``/``depth``; ``radius``, ``height``; ``radius`` (x = y = z) |

What a shape cannot be (a sphere wider than deep, a plane with a thickness) is a `SizeError`
saying what it can be and what to use instead.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from agentsdk import ToolError
from agentsdk_godot.properties import PropertyWriter
from agentsdk_godot.scene import NodeEntry
from agentsdk_godot.variant import (
    Constructor,
    ExtResource,
    SubResource,
    Variant,
    VariantSyntaxError,
    format_variant,
    parse_variant,
)
from agentsdk_godot.versions import GodotDialect

__all__ = [
    "MESHES",
    "NODE_SHAPES",
    "SizeError",
    "SizeRefused",
    "fields_for",
    "parse_size",
    "read_numbers",
    "resize",
    "shown",
]

Size = tuple[float, float, float]

MESHES = (
    "CubeMesh",
    "BoxMesh",
    "PrismMesh",
    "SphereMesh",
    "CylinderMesh",
    "CapsuleMesh",
    "PlaneMesh",
    "QuadMesh",
)
"""Mesh resources `size` can set (both generations' names)."""

NODE_SHAPES = ("CSGBox", "CSGBox3D", "CSGCylinder", "CSGCylinder3D", "CSGSphere", "CSGSphere3D")
"""Nodes whose own fields are their shape's size."""

_TIMES = re.compile(r"\s*[xX×*]\s*")  # "1 x 1 x 1", "1x2x3"
_VECTOR = re.compile(r"^Vector[23]")  # "Vector3( 0, 2, 6 )"


class SizeError(ValueError):
    """A size that cannot be read, or that the shape cannot have (the message says why);
    `fixed`: the size meant, when it can be told (a capsule's numbers in its order)."""

    def __init__(self, message: str, fixed: Size | None = None):
        super().__init__(message)
        self.fixed = fixed


class SizeRefused(ToolError):
    """`resize`'s refusal of a size, with the size meant when it can be told (`fixed`)."""

    def __init__(self, message: str, fixed: Size | None = None):
        super().__init__(message)
        self.fixed = fixed


def shown(size: Size) -> str:
    """`1 x 2 x 0.5`."""
    return " x ".join(f"{v:.3g}" for v in size)


def parse_size(value: object) -> Size:
    """``[x, y, z]`` from what a model writes: a list of 3 numbers (or 1, for all sides), a
    number, or text: ``[1, 1, 1]``, ``1, 1, 1``, ``Vector3( 1, 1, 1 )``, ``1 x 1 x 1``."""
    numbers = read_numbers(value)
    if numbers is None or len(numbers) not in (1, 3):
        raise SizeError(
            f"size is [x, y, z] in metres (3 numbers, or 1 for a cube), not {value!r}: "
            "write e.g. [1, 1, 1]"
        )
    if len(numbers) == 1:
        numbers = numbers * 3
    if not all(math.isfinite(n) and n >= 0 for n in numbers):
        raise SizeError(f"size {list(numbers)} must be 3 numbers of 0 or more (metres)")
    x, y, z = numbers
    return (x, y, z)


_SPACED = re.compile(r"\s*-?\d+(?:\.\d+)?(?:\s+-?\d+(?:\.\d+)?)+\s*")


def read_numbers(value: object) -> tuple[float, ...] | None:
    """The numbers a model means by a list, a number or a text (`[0, 2, 6]`, `0, 2, 6`,
    `Vector3( 0, 2, 6 )`, `1 x 2 x 3`, `0 2 6`), or None when it is something else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return (float(value),)
    if isinstance(value, list | tuple):
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
            return tuple(float(v) for v in value)
        if len(value) == 1:  # ["1, 1, 1"]
            return read_numbers(value[0])
        return None
    if not isinstance(value, str):
        return None
    text = _VECTOR.sub("", value.strip()).strip()
    if text.count("x") + text.count("X") + text.count("×") + text.count("*") >= 1:
        text = ",".join(_TIMES.split(text))
    text = text.removeprefix("(").removesuffix(")").removeprefix("[").removesuffix("]")
    if _SPACED.fullmatch(text):  # "2 2 2": numbers with only spaces between (s17/9)
        text = ",".join(text.split())
    try:
        parsed = parse_variant(f"[{text}]")
    except VariantSyntaxError:
        return None
    return read_numbers(parsed) if isinstance(parsed, list) and parsed else None


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)


def _positive(shape: str, size: Size, axes: str) -> None:
    for axis in axes:
        if size["xyz".index(axis)] <= 0:
            raise SizeError(f"a {shape}'s size needs {axis} > 0, not {shown(size)}")


def _number(current: Mapping[str, Variant], key: str, default: float) -> float:
    value = current.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return default


def _tidy(number: float) -> int | float:
    number = round(number, 6) + 0.0
    return int(number) if number.is_integer() else number


def fields_for(
    shape: str, size: Size, current: Mapping[str, Variant], dialect: GodotDialect
) -> dict[str, Variant]:
    """The fields that give `shape` (a class in `MESHES` or `NODE_SHAPES`) the bounds `size`;
    `current` is what the shape stores now (a cylinder keeps its taper). Raises SizeError."""
    x, y, z = size
    fields: dict[str, float | Constructor]
    if shape in ("CubeMesh", "BoxMesh", "PrismMesh", "CSGBox3D"):
        _positive(shape, size, "xyz")
        fields = {"size": Constructor("Vector3", (_tidy(x), _tidy(y), _tidy(z)))}
    elif shape == "CSGBox":
        _positive(shape, size, "xyz")
        fields = {"width": x, "height": y, "depth": z}
    elif shape == "SphereMesh":
        _round(shape, size, "xz", "oval in y only (radius = x / 2, height = y)")
        fields = {"radius": x / 2, "height": y}
    elif shape in ("CSGSphere", "CSGSphere3D"):
        _round(shape, size, "xyz", "a ball (one radius)")
        fields = {"radius": x / 2}
    elif shape == "CylinderMesh":
        _round(shape, size, "xz", "round in x and z (radius = x / 2, height = y)")
        top = _number(current, "top_radius", 1.0)
        bottom = _number(current, "bottom_radius", 1.0)
        wide = max(top, bottom)
        ratio = (top / wide, bottom / wide) if wide > 0 else (1.0, 1.0)
        fields = {"top_radius": x / 2 * ratio[0], "bottom_radius": x / 2 * ratio[1], "height": y}
    elif shape in ("CSGCylinder", "CSGCylinder3D"):
        _round(shape, size, "xz", "round in x and z (radius = x / 2, height = y)")
        fields = {"radius": x / 2, "height": y}
    elif shape == "CapsuleMesh":
        fields = dict(_capsule(size, dialect))
    elif shape == "PlaneMesh":
        _flat(shape, size, "y", "xz", f"[{x:g}, 0, {z:g}]")
        fields = {"size": Constructor("Vector2", (_tidy(x), _tidy(z)))}
    elif shape == "QuadMesh":
        _flat(shape, size, "z", "xy", f"[{x:g}, {y:g}, 0]")
        fields = {"size": Constructor("Vector2", (_tidy(x), _tidy(y)))}
    else:
        raise SizeError(f"size cannot set a {shape}")
    return {k: _tidy(v) if isinstance(v, float) else v for k, v in fields.items()}


def _round(shape: str, size: Size, axes: str, what: str) -> None:
    _positive(shape, size, "xyz")
    values = [size["xyz".index(a)] for a in axes]
    if not all(_same(values[0], v) for v in values[1:]):
        w = f"{values[0]:g}"
        fix = f"[{w}, {size[1]:g}, {w}]" if axes == "xz" else f"[{w}, {w}, {w}]"
        raise SizeError(
            f"a {shape} is {what}, so its size needs {' = '.join(axes)}, not {shown(size)}: "
            f"give e.g. {fix}, or scale the node for another shape"
        )


def _flat(shape: str, size: Size, flat: str, spans: str, fixed: str) -> None:
    _positive(shape, size, spans)
    if size["xyz".index(flat)] != 0:
        raise SizeError(
            f"a {shape} is flat (no {flat}), so its size is {fixed}, not {shown(size)}; "
            "for a thickness use a box (a CubeMesh)"
        )


def _capsule(size: Size, dialect: GodotDialect) -> dict[str, float]:
    _positive("CapsuleMesh", size, "xyz")
    axis = dialect.capsule_axis
    length = size[axis]
    width, other = (size[i] for i in range(3) if i != axis)
    if not _same(width, other) or length < width - 1e-9:
        example = ["1", "1", "1"]
        example[axis] = "2"
        shape = ["width", "width", "width"]
        shape[axis] = "length"
        turn = "; rotation_degrees = Vector3( 90, 0, 0 ) stands it up" if axis == 2 else ""
        # The numbers in a capsule's order: the thinnest across, the longest along it.
        fixed = [min(size)] * 3
        fixed[axis] = max(size)
        raise SizeError(
            f"a CapsuleMesh lies along {'xyz'[axis]} in Godot {dialect.major}: give "
            f"[{', '.join(shape)}] with length >= width, e.g. [{', '.join(example)}], "
            f"not {shown(size)}{turn}",
            (fixed[0], fixed[1], fixed[2]) if max(size) > min(size) else None,
        )
    return dialect.capsule_fields(width / 2, length)


_APPLIES = (
    "size sets the size of a primitive mesh (CubeMesh, SphereMesh, CylinderMesh, CapsuleMesh, "
    "PrismMesh, PlaneMesh, QuadMesh) or of a CSG shape"
)
_SCALE = "set scale instead, e.g. scale = Vector3( 2, 2, 2 ) doubles it"


async def resize(writer: PropertyWriter, node: NodeEntry, size: Size) -> list[str]:
    """Give `node`'s shape the bounds `size` (see the module's table) in `writer`'s scene, and
    say what was stored (`mesh/size = Vector3( 1, 1, 1 )`). A MeshInstance without a mesh gets
    a CubeMesh; a mesh shared with other nodes is copied first, so only this node changes.
    Raises ToolError (nothing is saved: the caller has not written the scene yet)."""
    doc, catalog, dialect = writer.doc, writer.catalog, writer.dialect
    cls = node.type
    if cls is None:
        raise ToolError(f"{node.path} is an instanced scene, whose size is fixed: {_SCALE}")
    prefix, shape, current = "", cls, node.properties
    if cls not in NODE_SHAPES:
        known = catalog.properties(cls) if catalog is not None else None
        if known is not None and "mesh" not in known:
            raise ToolError(
                f"{_APPLIES}; {node.path} is a {cls}, which has no mesh. Give the shape to a "
                f'MeshInstance (mesh = "CubeMesh()") with size, or {_SCALE}'
            )
        ref = node.properties.get("mesh")
        if ref is None:
            await writer.assign(node.properties, "mesh", "CubeMesh()", (cls, None))
            writer.made.append(f"mesh is a new {writer.doc.sub_resource(_ref(node)).type}")
            ref = node.properties["mesh"]
        if isinstance(ref, ExtResource):
            path = next((e.path for e in doc.ext_resources if ExtResource(e.id) == ref), "a file")
            raise ToolError(
                f"{_APPLIES}; {node.path}'s mesh is {path}, a mesh file with a size of its own: "
                f'{_SCALE}, or use a primitive mesh (mesh = "CubeMesh()")'
            )
        entry = doc.sub_resource(_ref(node))
        if entry.type not in MESHES:
            raise ToolError(f"{_APPLIES}; {node.path}'s mesh is a {entry.type}: {_SCALE}")
        sharing = [
            n.path
            for n in doc.nodes
            if n is not node and any(v == ref for v in n.properties.values())
        ]
        if sharing:  # resizing the one resource would resize them too
            node.properties["mesh"] = doc.add_sub_resource(entry.type, dict(entry.properties))
            writer.made.append(f"mesh is its own copy (it was shared with {', '.join(sharing)})")
            entry = doc.sub_resource(_ref(node))
        prefix, shape, current = "mesh/", entry.type, entry.properties
        if catalog is not None:
            await catalog.load([shape])
    try:
        fields = fields_for(shape, size, current, dialect)
    except SizeError as err:
        raise SizeRefused(str(err), err.fixed) from None
    stored = []
    for key, value in fields.items():
        text = format_variant(value, dialect.style)
        stored.append(
            f"{prefix}{key} = {await writer.assign(node.properties, prefix + key, text, (cls, None))}"
        )
    return stored


def _ref(node: NodeEntry) -> SubResource:
    ref = node.properties.get("mesh")
    if not isinstance(ref, SubResource):
        raise ToolError(f"{node.path}'s mesh is not a resource stored in the scene: {_SCALE}")
    return ref
