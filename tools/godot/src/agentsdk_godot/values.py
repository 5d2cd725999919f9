"""A tool argument's text as the value of a property whose type the engine told us.

A model (and a person) writing a Label's text writes the text, `Score: 0`, not the GDScript
literal `"Score: 0"`; a colour is "red" or "#ff8000" as often as `Color( 1, 0, 0, 1 )`; a
position may come as `[2, 1, -3]`. The engine would drop a value of the wrong type without a
word when it loads the scene (`text = 42` shows nothing, `translation = "2, 1, -3"` stays at
the origin), so a value that cannot be read as the property's type is refused with the type and
an example, and one that can is stored in the type's own literal.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable

from agentsdk_godot.variant import (
    Constructor,
    ExtResource,
    StringName,
    SubResource,
    Variant,
    VariantSyntaxError,
    parse_variant,
)

__all__ = [
    "ValueTypeError",
    "checked_literal",
    "example",
    "hex_colour",
    "resource_name",
    "typed_value",
]

_NUMBERS = ("bool", "int", "float")
# value types a list of numbers can spell, and how many numbers each takes
_SIZES: dict[str, tuple[int, ...]] = {
    "Vector2": (2,),
    "Vector3": (3,),
    "Color": (3, 4),
    "Quat": (4,),
    "Quaternion": (4,),
    "Rect2": (4,),
    "Plane": (4,),
    "AABB": (6,),
}
_EXAMPLES = {
    "bool": "true",
    "int": "3",
    "float": "1.5",
    "Vector2": "Vector2( 1, 2 )",
    "Vector3": "Vector3( 0, 1, 0 )",
    "Color": 'Color( 1, 0, 0, 1 ), "red" or "#ff0000"',
    "Quat": "Quat( 0, 0, 0, 1 )",
    "Quaternion": "Quaternion( 0, 0, 0, 1 )",
    "Rect2": "Rect2( 0, 0, 100, 50 )",
    "Plane": "Plane( 0, 1, 0, 0 )",
    "AABB": "AABB( 0, 0, 0, 1, 1, 1 )",
    "Basis": "Basis( 1, 0, 0, 0, 1, 0, 0, 0, 1 )",
    "Transform": "Transform( 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0 )",
    "Transform3D": "Transform3D( 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0 )",
    "Transform2D": "Transform2D( 1, 0, 0, 1, 0, 0 )",
    "NodePath": '"../Player" (a path)',
    "Array": "[ 1, 2 ]",
    "Dictionary": '{ "key": 1 }',
}
_NEW_RESOURCE = re.compile(r"\s*([A-Z][A-Za-z0-9_]*)\s*(?:\(\s*\)|\.new\(\s*\))?\s*")
_HEX = re.compile(r"#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})")


# how many numbers each value type's literal takes in a text resource: the engine cannot load a
# scene at all when one has another count (`Color( 1, 0, 0 )`, `Transform( Vector3(...), ... )`)
_ARITY = {
    "Vector2": 2,
    "Vector2i": 2,
    "Rect2": 4,
    "Rect2i": 4,
    "Vector3": 3,
    "Vector3i": 3,
    "Vector4": 4,
    "Vector4i": 4,
    "Transform2D": 6,
    "Plane": 4,
    "Quat": 4,
    "Quaternion": 4,
    "AABB": 6,
    "Basis": 9,
    "Transform": 12,
    "Transform3D": 12,
    "Projection": 16,
    "Color": 4,
}
_READING = {
    "Transform": "the basis row by row, then the origin",
    "Transform3D": "the basis row by row, then the origin",
    "Transform2D": "the x and y axes, then the origin",
    "Basis": "row by row",
    "AABB": "the position, then the size",
}


class ValueTypeError(ValueError):
    """The text cannot be a value of the property's type (the message names both)."""


def example(type_name: str, resources: list[str] | None = None) -> str:
    """An example literal of a Variant type (for error messages)."""
    if type_name == "Object" and resources:
        return " or ".join(f"{c}()" for c in resources[:4])
    return _EXAMPLES.get(type_name, f"{type_name}( ... )")


def resource_name(text: str) -> str | None:
    """The class of a new resource written `CubeMesh()`, `CubeMesh` or `CubeMesh.new()`."""
    match = _NEW_RESOURCE.fullmatch(text)
    return match.group(1) if match else None


def hex_colour(text: str) -> Constructor | None:
    """`Color(...)` of an HTML colour code (#rgb, #rrggbb, #rrggbbaa), else None."""
    match = _HEX.fullmatch(text.strip())
    if match is None:
        return None
    digits = match.group(1)
    if len(digits) == 3:
        digits = "".join(d * 2 for d in digits)
    if len(digits) == 6:
        digits += "ff"
    channels = [int(digits[i : i + 2], 16) / 255 for i in range(0, 8, 2)]
    return Constructor("Color", tuple(_tidy(round(c, 6)) for c in channels))


def _tidy(number: float) -> int | float:
    return int(number) if float(number).is_integer() else number


def _parse(text: str) -> Variant | VariantSyntaxError:
    try:
        return parse_variant(text)
    except VariantSyntaxError as err:
        return err


def _a(type_name: str) -> str:
    return f"an {type_name}" if type_name[0] in "aeiouAEIO" else f"a {type_name}"


def _same(name: str) -> str:
    return name


def typed_value(
    text: str,
    prop: str,
    type_name: str,
    *,
    translate: Callable[[str], str] = _same,
    enum: str | None = None,
    resources: list[str] | None = None,
    colour: Callable[[str], Constructor | None] = lambda name: None,
) -> Variant:
    """The value `text` means for `prop`, a property of type `type_name` (the engine's name).

    `translate` turns the other generation's names into this one's (`Transform3D` ->
    `Transform` on Godot 3); `enum` is an int property's names ("Left,Center"); `resources` the
    classes a resource property may hold; `colour(name)` a named colour, asked from the engine.
    Raises `ValueTypeError` naming the type with an example."""
    parsed = _parse(text)
    if isinstance(parsed, Constructor) and translate(parsed.name) != parsed.name:
        parsed = Constructor(translate(parsed.name), parsed.args)
    if type_name == "String":
        return parsed if isinstance(parsed, str) else text
    if type_name in ("NodePath", "StringName"):
        if isinstance(parsed, Constructor) and parsed.name == "NodePath":
            return parsed
        if isinstance(parsed, StringName):
            return parsed if type_name == "StringName" else Constructor("NodePath", (parsed.name,))
        path = parsed if isinstance(parsed, str) else text
        return StringName(path) if type_name == "StringName" else Constructor("NodePath", (path,))
    if type_name in _NUMBERS:
        return _number(text, parsed, prop, type_name, enum)
    if type_name == "Color" and not isinstance(parsed, Constructor | int | float | list):
        named = (parsed if isinstance(parsed, str) else text).strip()
        found = hex_colour(named) or colour(named)
        if found is not None:
            return found
        if re.fullmatch(r"[A-Za-z][A-Za-z _-]*", named):
            raise ValueTypeError(
                f"{prop} is a Color and Godot knows no colour named {named!r}: write e.g. "
                f"{example(type_name)}"
            )
    if type_name in _SIZES and not isinstance(parsed, Constructor):
        numbers = _numbers(text, parsed)
        if numbers is not None and len(numbers) in _SIZES[type_name]:
            if type_name == "Color" and len(numbers) == 3:
                numbers = (*numbers, 1)  # the text format wants the alpha too
            return Constructor(type_name, numbers)
        if numbers is not None:
            counts = " or ".join(str(n) for n in _SIZES[type_name])
            raise ValueTypeError(
                f"{prop} is {_a(type_name)} of {counts} numbers, not {len(numbers)}: write e.g. "
                f"{example(type_name)}"
            )
    if type_name == "Object":
        new = resource_name(text)
        if new is not None and not isinstance(parsed, Constructor):  # CubeMesh, CubeMesh.new()
            parsed = Constructor(translate(new), ())
        return _resource(text, parsed, prop, resources)
    if isinstance(parsed, VariantSyntaxError):
        raise ValueTypeError(
            f"{prop} is {_a(type_name)}: write e.g. {example(type_name)} ({parsed})"
        )
    if type_name in _SIZES or type_name.startswith(("Transform", "Basis")):
        if not (isinstance(parsed, Constructor) and parsed.name == type_name):
            raise ValueTypeError(
                f"{prop} is {_a(type_name)}, not {_kind(parsed)} {text.strip()!r}: write e.g. "
                f"{example(type_name)}"
            )
    return parsed


def _numbers(text: str, parsed: Variant | VariantSyntaxError) -> tuple[int | float, ...] | None:
    """`[2, 1, -3]`, `2, 1, -3` or `(2, 1, -3)` as numbers (None when it is not a list of them)."""
    if not isinstance(parsed, list):
        inner = text.strip().removeprefix("(").removesuffix(")")
        parsed = _parse(f"[{inner}]")
    if not isinstance(parsed, list) or not parsed:
        return None
    numbers = [v for v in parsed if isinstance(v, int | float) and not isinstance(v, bool)]
    return tuple(numbers) if len(numbers) == len(parsed) else None


def _kind(value: Variant) -> str:
    if isinstance(value, bool):
        return "the bool"
    if isinstance(value, int | float):
        return "the number"
    if isinstance(value, str):
        return "the text"
    if isinstance(value, list):
        return "the list"
    if isinstance(value, Constructor):
        return f"a {value.name}"
    return "the value"


def _number(
    text: str, parsed: Variant | VariantSyntaxError, prop: str, type_name: str, enum: str | None
) -> Variant:
    if isinstance(parsed, bool | int | float):
        return parsed  # the engine converts between bool, int and float
    word = (parsed if isinstance(parsed, str) else text).strip()
    if type_name == "bool" and word.lower() in ("true", "false"):
        return word.lower() == "true"
    names = _enum_values(enum) if enum else {}
    key = _enum_key(word)
    if key in names:
        return names[key]
    choices = f" (one of {', '.join(n for n in enum.split(','))})" if enum else ""
    raise ValueTypeError(
        f"{prop} is {_a(type_name)}{choices}, not {word!r}: write e.g. {example(type_name)}"
    )


def _enum_key(name: str) -> str:
    return re.sub(r"[\s_-]+", "", name).lower()


def _enum_values(enum: str) -> dict[str, int]:
    """ "Left,Center,Right" -> {left: 0, center: 1, right: 2}; "Off:0,Bright:4" keeps its numbers."""
    values: dict[str, int] = {}
    number = 0
    for item in enum.split(","):
        name, _, given = item.partition(":")
        if given.strip().lstrip("-").isdigit():
            number = int(given)
        values.setdefault(_enum_key(name), number)
        number += 1
    return values


def _resource(
    text: str, parsed: Variant | VariantSyntaxError, prop: str, resources: list[str] | None
) -> Variant:
    allowed = f" ({', '.join(resources[:6])})" if resources else ""
    if parsed is None or isinstance(parsed, ExtResource | SubResource):
        return parsed
    if isinstance(parsed, Constructor) and not parsed.args and parsed.name not in _EXAMPLES:
        if resources and parsed.name not in resources:
            close = difflib.get_close_matches(parsed.name, resources, n=2, cutoff=0.5)
            hint = f"did you mean {' or '.join(c + '()' for c in close)}? " if close else ""
            raise ValueTypeError(
                f"{prop} cannot hold a {parsed.name}: {hint}It holds "
                f"{', '.join(sorted(resources)[:10])}"
            )
        return parsed
    raise ValueTypeError(
        f"{prop} is a resource{allowed}, not {text.strip()!r}: make a new one with e.g. "
        f"{example('Object', resources) if resources else '<ResourceClass>()'}"
    )


def _plain(value: Variant, name: tuple[str, ...], count: int) -> tuple[float, ...] | None:
    if not isinstance(value, Constructor) or value.name not in name or len(value.args) != count:
        return None
    if not all(isinstance(a, int | float) and not isinstance(a, bool) for a in value.args):
        return None
    return tuple(float(a) for a in value.args)  # type: ignore[arg-type]


def _rows_of_quat(q: tuple[float, ...]) -> tuple[float, ...] | None:
    x, y, z, w = q
    n = math.sqrt(x * x + y * y + z * z + w * w)
    if n < 1e-9:
        return None
    x, y, z, w = x / n, y / n, z / n, w / n
    return (
        1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
        2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
        2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y),
    )  # fmt: skip


def _transform_numbers(args: tuple[Variant, ...]) -> tuple[Variant, ...] | None:
    """The 12 numbers of a Transform written the ways GDScript builds one.

    `Transform( Basis( 9 numbers ), Vector3 )`, the four axes `Transform( Vector3 x, Vector3 y,
    Vector3 z, Vector3 origin )`, and a rotation with an origin in either order
    (`Transform( Quat( x, y, z, w ), Vector3 )`): each means one transform, so it is stored as
    the scene file's form (the basis row by row, then the origin) instead of refused.
    """
    vectors = [_plain(a, ("Vector3",), 3) for a in args]
    if len(args) == 4 and all(vectors):
        x_axis, y_axis, z_axis, origin = vectors
        assert x_axis and y_axis and z_axis and origin
        by_row = tuple(axis[i] for i in range(3) for axis in (x_axis, y_axis, z_axis))
        return by_row + origin
    if len(args) != 2:
        return None
    for rot, at in ((args[0], args[1]), (args[1], args[0])):
        origin = _plain(at, ("Vector3",), 3)
        if origin is None:
            continue
        basis = _plain(rot, ("Basis",), 9)
        quat = _plain(rot, ("Quat", "Quaternion"), 4)
        rows = basis if basis is not None else (_rows_of_quat(quat) if quat else None)
        if rows is not None:
            return tuple(round(r, 6) + 0.0 for r in rows) + origin
    return None


def checked_literal(value: Variant) -> Variant:
    """`value` with every value-type literal in it checked for what a scene file can hold: the
    right count of plain numbers (`Color( 1, 0, 0 )` gets its alpha of 1). Raises
    `ValueTypeError` with the literal's form and an example."""
    if isinstance(value, list):
        return [checked_literal(v) for v in value]
    if isinstance(value, dict):
        return {k: checked_literal(v) for k, v in value.items()}
    if not isinstance(value, Constructor) or value.name not in _ARITY:
        return value
    args = value.args
    if value.name == "Color" and len(args) == 3:
        args = (*args, 1)
    if value.name in ("Transform", "Transform3D"):
        args = _transform_numbers(args) or args
    wanted = _ARITY[value.name]
    numbers = all(isinstance(a, int | float) and not isinstance(a, bool) for a in args)
    if len(args) == wanted and numbers:
        return Constructor(value.name, args)
    reading = f" ({_READING[value.name]})" if value.name in _READING else ""
    hint = ""
    if value.name in ("Transform", "Transform3D"):
        hint = "; to move a node, set translation (Godot 4: position) = Vector3( x, y, z )"
    given = f"{len(args)}" if numbers else "other values"
    raise ValueTypeError(
        f"a {value.name} is {wanted} numbers{reading}, not {given}: e.g. "
        f"{example(value.name)}{hint}"
    )
