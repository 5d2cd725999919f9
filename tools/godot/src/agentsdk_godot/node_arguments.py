"""add_node's goal-level arguments, ``shape``, ``color`` and ``position``, read into the
properties they stand for on the new node's class (Godot's own names, from the engine's ClassDB).

A small model fills typed arguments (``shape="sphere"``, ``color="red"``, ``position=[0, 2, 6]``)
far more reliably than it writes ``mesh = "SphereMesh()"``, ``material_override/albedo_color``
or ``translation = "Vector3( 0, 2, 6 )"`` in a properties dict: asked for "a red sphere named
Ball", the 1.5B model added a MeshInstance with a size and nothing else, a white cube.

| argument | the class has | property set |
|---|---|---|
| ``shape`` | ``mesh`` (MeshInstance) | ``mesh = CubeMesh()``, ``SphereMesh()``, ``CylinderMesh()`` (a cone: ``top_radius = 0``), ``CapsuleMesh()``, ``PlaneMesh()`` |
| ``color`` | ``material_override`` (a mesh or CSG node) | ``material_override/albedo_color`` |
| | ``light_color`` (a light) | ``light_color`` |
| | a font colour (Label, Button) | ``custom_colors/font_color`` (Godot 4: ``theme_override_colors/font_color``) |
| | ``color`` (ColorRect, Polygon2D) | ``color`` |
| | ``modulate`` (other 2D nodes and Controls, Sprite3D) | ``modulate`` |
| ``position`` | a 3D node | ``translation`` (Godot 4: ``position``), ``[x, y, z]`` |
| | a Node2D | ``position``, ``[x, y]`` |
| | a Control | ``rect_position`` (Godot 4: ``position``), ``[x, y]`` |

What a class cannot take (a shape on a Label, a colour on a Camera, ``[x, y]`` for a 3D node) is
an `ArgumentRefused` saying what it can take; the tool adds nothing then.

`read_misplaced` reads what small models write among ``properties`` instead: a ``shape`` there
is the argument, and a ``mesh`` or ``material`` that names a ``res://`` file the project does
not have gives way to the shape, size or colour the same call gives (see its docstring).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from agentsdk_godot.rest import flat_node
from agentsdk_godot.sizes import read_numbers
from agentsdk_godot.validation import ClassCatalog
from agentsdk_godot.values import resource_name
from agentsdk_godot.variant import Constructor, format_variant
from agentsdk_godot.versions import GodotDialect

__all__ = [
    "COLOUR_NAMES",
    "MATERIAL_COLOUR",
    "PLACING",
    "SHAPES",
    "ArgumentRefused",
    "NodeArguments",
    "add_node_arguments",
    "add_node_call",
    "read_misplaced",
]

MATERIAL_COLOUR = "material_override/albedo_color"

SHAPES: dict[str, tuple[str, dict[str, str]]] = {
    "box": ("CubeMesh", {}),
    "sphere": ("SphereMesh", {}),
    "cylinder": ("CylinderMesh", {}),
    "cone": ("CylinderMesh", {"top_radius": "0"}),
    "capsule": ("CapsuleMesh", {}),
    "plane": ("PlaneMesh", {}),
}
"""shape -> (mesh class in Godot 3 names, fields of that mesh the shape sets)."""

_SHAPE_WORDS = {"cube": "box", "ball": "sphere"}
_NO_SHAPE = ("", "none", "null", "no shape")
"""What a model writes as the shape of a node with none."""
COLOUR_NAMES = frozenset({"color", "colour", "albedo", "albedo_color", "albedo_colour"})
"""Names a model gives a mesh node's colour as if it were the node's own property."""
_FONT_COLOURS = ("custom_colors/font_color", "theme_override_colors/font_color")
_OWN_COLOURS = ("light_color", *_FONT_COLOURS, "color", "modulate")
"""Colour properties `color` sets, in the order chosen when a class has several."""
PLACING = ("translation", "transform", "position", "rect_position")
"""Properties that say where a node is: with one of them, ``rest_on`` keeps x and z."""

_CALL_ORDER = ("properties", "rest_on", "size", "shape", "color", "position", "above", "gap")


def add_node_arguments(asked: dict[str, object]) -> dict[str, object]:
    """The arguments of an add_node call as a model writes them: scene, name, type and
    parent always; the others when given."""
    said = {key: asked[key] for key in ("scene", "name", "type", "parent")}
    said.update({key: asked[key] for key in _CALL_ORDER if asked.get(key) not in (None, {})})
    return said


def add_node_call(asked: dict[str, object]) -> str:
    """The add_node call with these arguments (:func:`add_node_arguments`), written out."""
    said = add_node_arguments(asked)
    return "add_node(" + ", ".join(f"{key}={_json(v)}" for key, v in said.items()) + ")"


def _json(value: object) -> str:
    """JSON as a model writes it: [0, 2, 6], not the [0.0, 2.0, 6.0] pydantic read."""
    if isinstance(value, list):
        value = [_tidy(v) if isinstance(v, float) and math.isfinite(v) else v for v in value]
    return json.dumps(value)


class ArgumentRefused(Exception):
    """A typed argument the node's class cannot take, or one given twice: `reason`, and how to
    make a call that works: the arguments to change (`instead`; None: no call to offer) and
    the property to leave out of `properties` (`drop`)."""

    def __init__(
        self,
        argument: str,
        reason: str,
        instead: dict[str, object] | None,
        how: str = "",
        drop: str | None = None,
    ):
        super().__init__(reason)
        self.argument = argument
        self.reason = reason
        self.instead = instead
        self.how = how or f"without {argument}"
        self.drop = drop


@dataclass
class NodeArguments:
    """`shape`, `color` and `position` as the model gave them, and what they set."""

    shape: str | None = None
    color: str | None = None
    position: object = None
    said: dict[str, str] = field(default_factory=dict)
    """property -> the argument that set it (after `merge`)."""

    def __post_init__(self) -> None:
        if self.shape is not None and self.shape.strip().lower() in _NO_SHAPE:
            self.shape = None  # a light's "shape": "none" (the 1.5B model wrote it on s17/9)
        if self.shape is not None:
            word = _shape_word(self.shape)
            if word is None:
                raise ArgumentRefused(
                    "shape", f"shape is one of {', '.join(SHAPES)}, not {self.shape!r}.", None
                )
            self.shape = word

    def mesh_text(self, dialect: GodotDialect) -> str | None:
        """The new mesh resource `shape` means ("SphereMesh()"), None without a shape."""
        if self.shape is None:
            return None
        return f"{dialect.class_name(SHAPES[self.shape][0])}()"

    def merge(
        self,
        properties: dict[str, str],
        catalog: ClassCatalog | None,
        dialect: GodotDialect,
        cls: str,
    ) -> dict[str, str]:
        """`properties` with what the typed arguments set on a node of class `cls`: the shape's
        mesh first (so the model's own `mesh/...` fields land on it), colour and position last.
        The same property given twice with two values is refused; a shape's own fields (a
        cone's top_radius) give way to the model's. Raises ArgumentRefused."""
        first: dict[str, str] = {}
        if self.shape is not None:
            self._check_mesh_node(catalog, dialect, cls)
            first["mesh"] = self.mesh_text(dialect) or ""
            fields = SHAPES[self.shape][1].items()
            first.update({f"mesh/{k}": v for k, v in fields if f"mesh/{k}" not in properties})
            given = properties.get("mesh")
            if given is not None and not _same_class(given, first["mesh"], dialect):
                raise _twice("shape", "mesh", given)
        last: dict[str, str] = {}
        if self.color is not None:
            last[_colour_property(catalog, cls)] = self.color
        position = None
        if self.position is not None:
            position, value = _position(catalog, dialect, cls, self.position)
            other = next((k for k in PLACING if k in properties and k != position), None)
            if other is not None:
                raise _twice("position", other, properties[other])
            last[position] = value
        for key, value in last.items():
            given = properties.get(key)
            if given is not None and not _agree(given, value):
                raise _twice("position" if key == position else "color", key, given)
        self.said = dict.fromkeys(first, "shape")
        self.said.update({k: "position" if k == position else "color" for k in last})
        self.said = {k: a for k, a in self.said.items() if k == "mesh" or k not in properties}
        merged = dict(first)
        merged.update({k: v for k, v in properties.items() if k != "mesh" or not first})
        merged.update({k: v for k, v in last.items() if k not in properties})
        return merged

    def _check_mesh_node(
        self, catalog: ClassCatalog | None, dialect: GodotDialect, cls: str
    ) -> None:
        known = catalog.properties(cls) if catalog is not None else None
        if catalog is None or known is None or "mesh" in known:
            return
        mesh_node = dialect.class_name("MeshInstance")
        reason = f"shape sets a {mesh_node}'s mesh, and a {cls} has no mesh."
        seeing = any(catalog.is_a(cls, dialect.class_name(c)) for c in ("Camera", "Light"))
        if catalog.is_a(cls, dialect.class_name("Spatial")) and not seeing:
            raise ArgumentRefused("shape", reason, {"type": mesh_node}, f"as a {mesh_node}")
        # A camera or a light is what the call asks for: it goes without the shape (the 1.5B
        # model copied the Wall's shape and colour onto "a Camera named Eye", s23/8, and took
        # the offer to make it a MeshInstance), and without a colour it cannot take.
        instead: dict[str, object] = {"shape": None, "size": None}
        if self.color is not None and seeing and "light_color" not in known:
            instead["color"] = None
        raise ArgumentRefused(
            "shape", reason, instead, "without shape, color" if len(instead) > 2 else ""
        )


def _shape_word(said: str) -> str | None:
    """The shape a model means by "box", "Sphere", "CubeMesh()" or "ball", or None."""
    word = said.strip().lower().removesuffix("()").removesuffix("mesh").strip()
    word = _SHAPE_WORDS.get(word, word)
    return word if word in SHAPES else None


_RESOURCE_PATH = re.compile(r'\s*"?(res://[^"]*?)"?\s*')
_PATH_WORD = re.compile(r"[a-z]+")


def read_misplaced(
    properties: dict[str, str],
    shape: str | None,
    size: object,
    color: str | None,
    exists: Callable[[str], bool],
) -> tuple[dict[str, str], str | None, list[str]]:
    """add_node's ``properties`` and ``shape`` as meant, and a note for each change: what
    small models write among ``properties``, read as the call's own arguments.

    - ``properties["shape"]`` naming one of the shapes is the ``shape`` argument (when the
      call gives none; the same shape given twice is given once);
    - a ``mesh`` naming a ``res://`` file the project does not have ("res://Crate.mesh") is
      left out when the call gives a shape or a size (which makes a box; ``size`` among
      properties too): the mesh is the one they make;
    - a ``material`` (``material_override``, ...) naming such a file is left out when the
      call gives a colour (``color``, or ``albedo_color`` among properties): the colour is
      set on a new material.

    A missing file with nothing to stand in for it is an ArgumentRefused offering the call
    without it (a mesh: with the shape the path names, else a box). The 1.5B model wrote
    ``{"mesh": "res://Crate.mesh", "material": "res://Crate.material", "albedo_color": ...,
    "shape": "box"}`` on five new users' prompts, and sent it again after each refusal."""
    properties = dict(properties)
    notes: list[str] = []
    said = properties.get("shape")
    if said is not None and _shape_word(said) is not None:
        if shape is None:
            shape = properties.pop("shape")
            notes.append("properties['shape'] was read as shape")
        elif _shape_word(shape) == _shape_word(said):
            del properties["shape"]  # the same shape twice
        else:
            raise _twice("shape", "shape", said)
    coloured = color is not None or any(k.strip().lower() in COLOUR_NAMES for k in properties)
    missing = {}
    for key, value in properties.items():
        found = _RESOURCE_PATH.fullmatch(value)
        if found is not None and not exists(found.group(1)):
            missing[key] = found.group(1)
    without = {k: v for k, v in properties.items() if k not in missing}
    sized = size is not None or "size" in properties  # add_node reads the latter as size
    for key, path in missing.items():
        if key == "mesh" and (shape is not None or sized):
            made = f"a new {_shape_word(shape)} made by shape" if shape else "a box made by size"
            notes.append(f"no file {path}: the mesh is {made}")
        elif "material" in key.lower() and coloured:
            notes.append(f"no file {path}: {key} left out, the colour is set on a new material")
        elif key == "mesh":
            words = [_shape_word(w) for w in _PATH_WORD.findall(path.lower())]
            guess = next((w for w in words if w is not None), "box")
            raise ArgumentRefused(
                "mesh",
                f"the project has no file {path} for mesh; shape makes a new mesh "
                f"({', '.join(SHAPES)}).",
                {"properties": without, "shape": guess},
                f"as a {guess}",
            )
        else:
            raise ArgumentRefused(
                key,
                f"the project has no file {path} for {key}.",
                {"properties": without},
                f"without {key}",
            )
    return without, shape, notes


def _twice(argument: str, key: str, value: str) -> ArgumentRefused:
    return ArgumentRefused(
        argument,
        f"{argument} and properties[{key!r}] = {value!r} both set the node's {key}: give it once.",
        {},
        f"with {argument} only",
        drop=key,
    )


def _same_class(given: str, value: str, dialect: GodotDialect) -> bool:
    a, b = resource_name(given), resource_name(value)
    return a is not None and b is not None and dialect.class_name(a) == dialect.class_name(b)


def _agree(given: str, value: str) -> bool:
    """Whether a value the model gave in properties says what the typed argument says."""
    if given.strip().lower() == value.strip().lower():
        return True
    a, b = read_numbers(given), read_numbers(value)
    return a is not None and b is not None and a == b


def _colour_property(catalog: ClassCatalog | None, cls: str) -> str:
    """The property `color` sets on a node of class `cls` (see the module's table)."""
    known = catalog.properties(cls) if catalog is not None else None
    if known is None:
        return MATERIAL_COLOUR
    assert catalog is not None
    if "material_override" in known and "modulate" not in known:
        return MATERIAL_COLOUR
    for key in _OWN_COLOURS:
        if key in known and catalog.property_type(cls, key) == "Color":
            return key
    colours = [k for k in known if catalog.property_type(cls, k) == "Color"]
    others = f"; its colour properties are {', '.join(colours)} (set them in properties)"
    raise ArgumentRefused(
        "color",
        f"a {cls} has no colour of its own to set{others if colours else ''}. color sets a "
        "mesh's material, a light's light_color, a Label's font colour or a 2D node's modulate.",
        {"color": None},
    )


def _position(
    catalog: ClassCatalog | None, dialect: GodotDialect, cls: str, said: object
) -> tuple[str, str]:
    """(property, value text) that `position` sets on a node of class `cls`."""
    numbers = read_numbers(said)
    if numbers is not None and not all(math.isfinite(n) for n in numbers):
        numbers = None
    flat = flat_node(catalog, dialect, cls) if catalog is not None else None
    known = catalog.properties(cls) if catalog is not None else None
    if flat is not None and flat.position is None:
        raise ArgumentRefused(
            "position", f"a {cls} is {flat.kind}: it has no position.", {"position": None}
        )
    if flat is not None:
        key, count = flat.position or "position", 2
        what = f"a {cls} is {flat.kind}: its position is [x, y] in pixels"
    elif known is not None:
        key = "translation" if "translation" in known else "position"
        count, what = 3, f"a {cls} is a 3D node: its position is [x, y, z] in metres"
    else:  # the class is not known: the count says which
        count = len(numbers) if numbers is not None and len(numbers) in (2, 3) else 3
        key = "translation" if count == 3 and dialect.major == 3 else "position"
        what = "position is [x, y, z] in metres (3D) or [x, y] in pixels (2D)"
    if numbers is None or len(numbers) != count:
        raise ArgumentRefused("position", f"{what}, not {_json(said)}.", None)
    vector = Constructor(f"Vector{count}", tuple(_tidy(n) for n in numbers))
    return key, format_variant(vector, dialect.style)


def _tidy(number: float) -> int | float:
    number = round(number, 6) + 0.0
    return int(number) if number.is_integer() else number
