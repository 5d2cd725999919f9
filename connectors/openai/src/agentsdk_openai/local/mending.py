"""What the mends of :mod:`.as_asked` share: the walk over a response's calls with a schema
check (:func:`_mend_calls`, :func:`_mend` for maker calls), and the readings of the request
they all use (points, places, the up axis, what a call already says).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentsdk.tools import SchemaProblem, ToolSpec, compile_schema

from agentsdk import ModelRequest, ModelResponse, ToolCallPart

from .unmade import (
    described,
    named_in,
    newest_request_at,
)

__all__ = [
    "RESTING_ARGUMENT",
]

logger = logging.getLogger("agentsdk_openai.local")


RESTING_ARGUMENT = "rest_on"
"""The argument with which the 3D toolkits (three.js ``add_object``, Blender
``create_primitive``, Godot ``add_node``) stand a new thing on the ground or on another."""

_POINT = re.compile(
    r"\(\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)(?:\s*,\s*(-?\d+(?:\.\d+)?))?\s*\)"
)
"""A point written in the request: ``(x, y, z)`` or ``(x, y)``."""

_RESTING = re.compile(
    r"\b(?:on|onto|upon|atop|top|rest(?:s|ing)?|stand(?:s|ing)?|stacked|sit(?:s|ting)?|"
    r"lying|lies|ground|floor)\b",
    re.IGNORECASE,
)
"""Words that say a part rests on something ("on the ground", "standing on it")."""

_ON_THE_GROUND = re.compile(r"\bon the ground\b", re.IGNORECASE)

_UP = re.compile(r"\b([xyz])\s*(?:is up\b|=\s*0\b)", re.IGNORECASE)
"""How a tool's argument descriptions say which axis is up: "y is up" (three.js's
position), "Z is up" (Blender's location), "bottom at y=0" (Godot's rest_on)."""


@dataclass(frozen=True)
class _Made:
    """A call to a tool that declares what it makes, and the part of the request it makes."""

    tool: ToolSpec
    call: ToolCallPart
    key: str
    """The argument that names what the call makes (the tool's ``creates``)."""
    value: str | None
    """That argument as the call gives it (None when it gives no string)."""
    name: str | None
    """The name as the request gives it, when the value is one (in any case), else None."""


def _mend(
    request: ModelRequest,
    response: ModelResponse,
    mend: Callable[[_Made], dict[str, Any] | None],
) -> ModelResponse:
    """Apply ``mend`` (new arguments, or None to keep the call) to every call to a tool
    that declares what it makes; a mended call that would fail the tool's schema, where
    the call did not, is kept as the model wrote it."""
    makers = {tool.name: tool for tool in request.tools if tool.creates is not None}
    names = {name.lower(): name for name in named_in(_asked(request))}

    def made(tool: ToolSpec, call: ToolCallPart) -> dict[str, Any] | None:
        assert tool.creates is not None
        value = call.arguments.get(tool.creates)
        value = value if isinstance(value, str) else None
        return mend(_Made(tool, call, tool.creates, value, names.get((value or "").lower())))

    return _mend_calls(response, makers, made)


def _mend_calls(
    response: ModelResponse,
    tools: dict[str, ToolSpec],
    mend: Callable[[ToolSpec, ToolCallPart], dict[str, Any] | None],
) -> ModelResponse:
    """Apply ``mend`` (new arguments, or None to keep the call) to every call to one of
    ``tools`` (by name); a mended call that would fail the tool's schema, where the call
    did not, is kept as the model wrote it."""
    parts = list(response.parts)
    for index, part in enumerate(parts):
        tool = tools.get(part.name) if isinstance(part, ToolCallPart) else None
        if tool is None or not isinstance(part, ToolCallPart):
            continue
        arguments = mend(tool, part)
        if arguments is not None and _fits(tool, arguments, part.arguments):
            parts[index] = part.model_copy(update={"arguments": arguments})
    return response.model_copy(update={"parts": parts}) if parts != response.parts else response


def _fits(tool: ToolSpec, arguments: dict[str, Any], before: dict[str, Any]) -> bool:
    try:
        check = compile_schema(tool.parameters)
    except SchemaProblem:
        return True  # beyond the compiled checks: the tool's own validation decides
    if check(arguments) and not check(before):
        logger.info("%s: the mended call would not validate; kept as written", tool.name)
        return False
    return True


def _asked(request: ModelRequest) -> str:
    start = newest_request_at(request)
    return "" if start is None else request.messages[start].text


def _up_axis(tool: ToolSpec) -> int | None:
    """Which coordinate of a point is up, as the tool's argument descriptions say."""
    properties = tool.parameters.get("properties") or {}
    for schema in properties.values():
        found = _UP.search(str(schema.get("description", ""))) if isinstance(schema, dict) else None
        if found is not None:
            return "xyz".index(found.group(1).lower())
    return None


def entries_offering(properties: dict[str, Any], entry: str) -> str | None:
    """The dict argument (``"type": "object"``) whose description shows ``entry`` as one of
    its keys (Godot's ``properties``: ``{..., "text": "Hi"}``, ``{"look_at": "Box"}``), or
    None."""
    return next(
        (key for key, schema in properties.items()
         if isinstance(schema, dict) and schema.get("type") == "object"
         and f'"{entry}"' in str(schema.get("description", ""))),
        None,
    )  # fmt: skip


def _same_point(value: object, point: list[float | int]) -> bool:
    if not isinstance(value, list) or len(value) != len(point):
        return False
    try:
        return all(abs(float(v) - p) < 1e-9 for v, p in zip(value, point, strict=True))
    except (TypeError, ValueError):
        return False


_PLACES = ("position", "location")
"""Arguments that place what a maker call makes (three.js and Godot, Blender)."""

_PLACING = re.compile(r"position|location|translation|transform|origin", re.IGNORECASE)

_AT = re.compile(r"\b(?:at|to|position(?:ed)?|located|placed|centred|centered)\s*$", re.I)

_AIMED = re.compile(
    r"\b(?:look(?:s|ing)?|aim(?:s|ed|ing)?|point(?:s|ed|ing)?|fac(?:e|es|ed|ing)|toward|towards)"
    r"\s+(?:at|to)?\s*$",
    re.IGNORECASE,
)


def _where(said: str, found: re.Match[str]) -> bool:
    """Whether the point says where the part is ("at (0, 2, 6)"), not what it aims at
    ("looking at (0, 0, 1)")."""
    before = said[: found.start()]
    return bool(_AT.search(before)) and not _AIMED.search(before)


def _points_where(said: str) -> list[list[float | int]]:
    """The points ``said`` gives as where a part is (after "at"), not what it aims at."""
    return [_numbers(m) for m in _POINT.finditer(said) if _where(said, m)]


def _points_of_others(text: str, name: str, names: list[str]) -> list[list[float | int]]:
    """The points the request gives the parts it names other than ``name``, after "at"."""
    points = []
    for other in names:
        if other.lower() != name.lower():
            points += _points_where(described(text, other))
    return points


def _at_others_point(value: object, text: str, name: str, names: list[str]) -> bool:
    """Whether ``value`` is the point the request gives a part other than ``name``."""
    return any(_same_point(value, point) for point in _points_of_others(text, name, names))


def _says(arguments: dict[str, Any], what: re.Pattern[str]) -> bool:
    """Whether a call already says ``what`` (a placing, a mesh, a colour) its own way: an
    argument, or a key of a dict argument (Godot's ``properties``), so named."""
    for key, value in arguments.items():
        if what.search(key):
            return True
        if isinstance(value, dict) and any(what.search(str(k)) for k in value):
            return True
    return False


def _numbers(found: re.Match[str]) -> list[float | int]:
    """A point's numbers as written: 2, not 2.0."""
    return _plain([float(group) for group in found.groups() if group is not None])


def _plain_numbers(value: object) -> bool:
    """Whether ``value`` is a list of numbers (not booleans): a point or a size as sent."""
    return isinstance(value, list) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in value
    )


def _plain(numbers: list[float | int]) -> list[float | int]:
    """Numbers as a model writes them: 2, not 2.0."""
    return [int(n) if float(n).is_integer() else n for n in numbers]


def _without(text: str, name: str) -> str:
    """``text`` without ``name`` as a word (a part named "floor" says nothing of a floor)."""
    return re.sub(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", " ", text, flags=re.I)


_SHAPE_ARGUMENTS = ("shape", "kind", "primitive")

_MESH = re.compile(r"mesh", re.IGNORECASE)
"""A call that sets a mesh its own way (Godot's ``properties: {"mesh": "CubeMesh()"}``)
has its shape: a second one could only clash with it."""

_FILE = re.compile(r'\s*"?([a-z]+://\S+?)"?\s*', re.IGNORECASE)
"""A value naming a file (``res://Crate.mesh``)."""


def _unsaid_files(arguments: dict[str, Any], text: str) -> dict[str, Any]:
    """``arguments`` without the entries of a dict argument whose value names a file the
    request does not name: a made-up ``"mesh": "res://Crate.mesh"`` says no shape."""

    def said(value: object) -> bool:
        found = _FILE.fullmatch(value) if isinstance(value, str) else None
        return found is None or found.group(1).lower() in text.lower()

    return {
        key: {k: v for k, v in value.items() if said(v)} if isinstance(value, dict) else value
        for key, value in arguments.items()
    }


def _last_named_before(text: str, name: str, others: list[str]) -> str | None:
    """The part named last before ``name``'s naming ("it")."""
    before = text.lower()[: text.lower().find(name.lower())]
    earlier = [n for n in others if n.lower() in before]
    return max(earlier, key=lambda n: before.rfind(n.lower())) if earlier else None


_COLOUR_WORD = re.compile(
    r"\b(?:(light|dark)[\s-]*)?(red|green|blue|yellow|white|black|grey|gray|orange|purple|"
    r"pink|brown|cyan|magenta|gold|silver|teal|navy|violet|beige|maroon|olive|lime)\b",
    re.IGNORECASE,
)

_SHADES = frozenset(
    "lightblue lightgreen lightgrey lightgray lightpink lightyellow darkblue darkgreen darkgrey "
    "darkgray darkred darkorange darkviolet".split()
)
"""CSS colour names made of "light"/"dark" and a colour; another shade is its colour."""

COLOUR_ARGUMENTS = ("color", "colour")
"""Arguments that give a part's colour by name (three.js, Blender, Godot)."""


def asked_colour(head: str) -> str | None:
    """The one colour the words give (a CSS shade such as ``lightblue`` for "light blue"),
    or None for none or several."""
    said = []
    for m in _COLOUR_WORD.finditer(head):
        shade = f"{(m.group(1) or '').lower()}{m.group(2).lower()}"
        said.append(shade if shade in _SHADES else m.group(2).lower())
    return said[0] if len(set(said)) == 1 else None
