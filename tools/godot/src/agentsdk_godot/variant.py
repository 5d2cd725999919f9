"""Godot's Variant literal syntax: the values inside .tscn, .tres and project.godot files.

`parse_variant("Vector3( 1, 2, 3 )")` gives `Constructor("Vector3", (1, 2, 3))`;
`format_variant(value, style)` writes it back the way the engine itself does for that
text-resource format (Godot 3 pads constructor arguments, Godot 4 does not).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TypeAlias

__all__ = [
    "Constructor",
    "ExtResource",
    "GodotObject",
    "StringName",
    "SubResource",
    "TextStyle",
    "Variant",
    "VariantSyntaxError",
    "format_variant",
    "parse_variant",
]


class VariantSyntaxError(ValueError):
    """A Variant literal could not be parsed; `line` and `column` are 1-based."""

    def __init__(self, message: str, line: int, column: int):
        super().__init__(f"{message} (line {line}, column {column})")
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Constructor:
    """A typed literal such as `Vector3( 1, 2, 3 )`, `Color( 1, 0, 0, 1 )` or `PoolIntArray( 1, 2 )`."""

    name: str
    args: tuple[Variant, ...] = ()


@dataclass(frozen=True)
class ExtResource:
    """A reference to an `[ext_resource]` of the same file (int ids in Godot 3, strings in Godot 4)."""

    id: int | str


@dataclass(frozen=True)
class SubResource:
    """A reference to a `[sub_resource]` of the same file."""

    id: int | str


@dataclass(frozen=True)
class StringName:
    """Godot 4's `&"name"` literal."""

    name: str


@dataclass(frozen=True)
class GodotObject:
    """An inline object such as `Object(InputEventKey,"scancode":65)` (used by input maps)."""

    type: str
    properties: dict[str, Variant] = field(default_factory=dict)

    def __hash__(self) -> int:
        return hash((self.type, tuple(self.properties)))


Variant: TypeAlias = (
    "bool | int | float | str | StringName | Constructor | ExtResource | SubResource"
    " | GodotObject | list[Variant] | dict[Variant, Variant] | None"
)


@dataclass(frozen=True)
class TextStyle:
    """How one engine generation spells values (the only formatting differences we rely on)."""

    pad_constructors: bool  # Godot 3: `Vector3( 1, 2, 3 )`; Godot 4: `Vector3(1, 2, 3)`
    pad_arrays: bool  # Godot 3: `[ 1, 2 ]` and `[  ]`; Godot 4: `[1, 2]` and `[]`
    string_resource_ids: bool  # Godot 4: `ExtResource("1_ab3cd")`
    empty_dict: str = "{}"  # Godot 3 writes an empty dictionary over three lines


GODOT3_STYLE = TextStyle(
    pad_constructors=True, pad_arrays=True, string_resource_ids=False, empty_dict="{\n\n}"
)
GODOT4_STYLE = TextStyle(pad_constructors=False, pad_arrays=False, string_resource_ids=True)

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_NUMBER_CHARS = set("0123456789+-.eE")


class VariantReader:
    """A cursor over text that reads one Variant literal at a time (used by the file parser)."""

    def __init__(self, text: str, pos: int = 0):
        self.text = text
        self.pos = pos

    def error(self, message: str) -> VariantSyntaxError:
        line = self.text.count("\n", 0, self.pos) + 1
        column = self.pos - (self.text.rfind("\n", 0, self.pos) + 1) + 1
        return VariantSyntaxError(message, line, column)

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, char: str) -> None:
        self.skip_space()
        if self.peek() != char:
            found = repr(self.peek()) if self.peek() else "end of text"
            raise self.error(f"expected {char!r}, found {found}")
        self.pos += 1

    def read_name(self) -> str:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] in _NAME_CHARS:
            self.pos += 1
        if self.peek() == "[":  # Godot 4 typed arrays: Array[int]([1, 2])
            end = self.text.find("]", self.pos)
            if end < 0:
                raise self.error("unclosed '[' in type name")
            self.pos = end + 1
        return self.text[start : self.pos]

    def read_string(self) -> str:
        self.expect('"')
        out: list[str] = []
        while True:
            if self.pos >= len(self.text):
                raise self.error("unterminated string")
            char = self.text[self.pos]
            self.pos += 1
            if char == '"':
                return "".join(out)
            if char != "\\":
                out.append(char)
                continue
            code = self.peek()
            self.pos += 1
            if code == "u":
                digits = self.text[self.pos : self.pos + 4]
                try:
                    out.append(chr(int(digits, 16)))
                except ValueError:
                    raise self.error(f"bad unicode escape \\u{digits}") from None
                self.pos += 4
            else:
                out.append(_ESCAPES.get(code, code))

    def read_value(self) -> Variant:
        self.skip_space()
        char = self.peek()
        if not char:
            raise self.error("expected a value, found end of text")
        if char == '"':
            return self.read_string()
        if char == "&" and self.text.startswith('&"', self.pos):
            self.pos += 1
            return StringName(self.read_string())
        if char == "^" and self.text.startswith('^"', self.pos):
            self.pos += 1
            return Constructor("NodePath", (self.read_string(),))
        if char == "[":
            return self._read_array()
        if char == "{":
            return self._read_dict()
        if char in "0123456789+-.":
            return self._read_number()
        if char in _NAME_CHARS:
            return self._read_named()
        raise self.error(f"unexpected {char!r}")

    def _read_array(self) -> list[Variant]:
        self.expect("[")
        items: list[Variant] = []
        self.skip_space()
        while self.peek() != "]":
            items.append(self.read_value())
            self.skip_space()
            if self.peek() == ",":
                self.pos += 1
                self.skip_space()
            elif self.peek() != "]":
                raise self.error("expected ',' or ']' in array")
        self.pos += 1
        return items

    def _read_dict(self) -> dict[Variant, Variant]:
        self.expect("{")
        items: dict[Variant, Variant] = {}
        self.skip_space()
        while self.peek() != "}":
            key = self.read_value()
            self.expect(":")
            items[_hashable(key)] = self.read_value()
            self.skip_space()
            if self.peek() == ",":
                self.pos += 1
                self.skip_space()
            elif self.peek() != "}":
                raise self.error("expected ',' or '}' in dictionary")
        self.pos += 1
        return items

    def _read_number(self) -> int | float:
        start = self.pos
        if self.text.startswith(("-inf", "+inf"), self.pos):
            self.pos += 4
            return -math.inf if self.text[start] == "-" else math.inf
        while self.pos < len(self.text) and self.text[self.pos] in _NUMBER_CHARS:
            self.pos += 1
        token = self.text[start : self.pos]
        try:
            if any(c in token for c in ".eE") or token in ("-", "+"):
                return float(token)
            return int(token)
        except ValueError:
            raise self.error(f"bad number {token!r}") from None

    def _read_named(self) -> Variant:
        start = self.pos
        name = self.read_name()
        keywords: dict[str, Variant] = {
            "null": None,
            "nil": None,
            "true": True,
            "false": False,
            "inf": math.inf,
            "inf_neg": -math.inf,
            "nan": math.nan,
        }
        if name in keywords:
            return keywords[name]
        self.skip_space()
        if self.peek() != "(":
            self.pos = start
            raise self.error(f"unknown identifier {name!r}")
        self.pos += 1
        if name == "Object":
            return self._read_object_body()
        args: list[Variant] = []
        self.skip_space()
        while self.peek() != ")":
            args.append(self.read_value())
            self.skip_space()
            if self.peek() == ",":
                self.pos += 1
                self.skip_space()
            elif self.peek() != ")":
                raise self.error(f"expected ',' or ')' in {name}(...)")
        self.pos += 1
        if name in ("ExtResource", "SubResource"):
            if len(args) != 1 or not isinstance(args[0], (int, str)):
                raise self.error(f"{name} takes one id")
            return ExtResource(args[0]) if name == "ExtResource" else SubResource(args[0])
        return Constructor(name, tuple(args))

    def _read_object_body(self) -> GodotObject:
        self.skip_space()
        type_name = self.read_name()
        props: dict[str, Variant] = {}
        self.skip_space()
        while self.peek() == ",":
            self.pos += 1
            self.skip_space()
            key = self.read_string()
            self.expect(":")
            props[key] = self.read_value()
            self.skip_space()
        self.expect(")")
        return GodotObject(type_name, props)


def _hashable(key: Variant) -> Variant:
    if isinstance(key, list):
        return tuple(key)  # type: ignore[return-value]
    return key


def parse_variant(text: str) -> Variant:
    """Parse one complete Variant literal (raises VariantSyntaxError with line and column)."""
    reader = VariantReader(text)
    value = reader.read_value()
    reader.skip_space()
    if reader.pos != len(text):
        raise reader.error("unexpected text after the value")
    return value


def _escape(text: str) -> str:
    # Godot writes strings "multiline": only the backslash and the quote are escaped.
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _number(value: float, in_constructor: bool) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "inf_neg"
    if in_constructor and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    text = repr(value)
    return text


def format_variant(value: Variant, style: TextStyle = GODOT3_STYLE, *, _arg: bool = False) -> str:
    """Write a Variant literal the way the engine writes it in a text resource."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number(value, _arg)
    if isinstance(value, str):
        return _escape(value)
    if isinstance(value, StringName):
        return "&" + _escape(value.name)
    if isinstance(value, (ExtResource, SubResource)):
        kind = type(value).__name__
        ident = _escape(str(value.id)) if isinstance(value.id, str) else str(value.id)
        return f"{kind}( {ident} )" if style.pad_constructors else f"{kind}({ident})"
    if isinstance(value, Constructor):
        args = ", ".join(format_variant(a, style, _arg=True) for a in value.args)
        if value.name == "NodePath" or not style.pad_constructors:
            return f"{value.name}({args})"
        return f"{value.name}( {args} )"
    if isinstance(value, GodotObject):
        props = "".join(
            f",{_escape(k)}:{format_variant(v, style)}" for k, v in value.properties.items()
        )
        return f"Object({value.type}{props})"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(format_variant(v, style) for v in value)
        if style.pad_arrays:
            return f"[ {inner} ]"
        return f"[{inner}]"
    if isinstance(value, dict):
        if not value:
            return style.empty_dict
        rows = ",\n".join(
            f"{format_variant(k, style)}: {format_variant(v, style)}" for k, v in value.items()
        )
        return "{\n" + rows + "\n}"
    raise TypeError(f"cannot write {type(value).__name__} as a Godot value")


def vector3(x: float, y: float, z: float) -> Constructor:
    """`Vector3( x, y, z )`."""
    return Constructor("Vector3", (x, y, z))


def color(r: float, g: float, b: float, a: float = 1.0) -> Constructor:
    """`Color( r, g, b, a )`."""
    return Constructor("Color", (r, g, b, a))


def node_path(path: str) -> Constructor:
    """`NodePath("path")`."""
    return Constructor("NodePath", (path,))
