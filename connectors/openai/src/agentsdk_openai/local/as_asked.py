"""Calls that make a named part, mended to what the request says of that part.

A small local model fills in every argument a maker tool offers, in the order it is shown,
and copies a name with whatever words follow it; or it leaves out what the request states
plainly. Four mends, each for a call to a tool that declares what it makes
(:attr:`~agentsdk.ToolSpec.creates`), each read from the newest user message only, each
logged, and none kept if the mended call would fail the tool's schema:

- **the name as the request gives it** ("Ball of radius 1" is sent as "Ball");
- **no name of another kind**: a light called "spire" for "a purple cone named spire"
  loses the name when the tool can do without it, so the cone can still be made under it;
- **the shape and colour the request gives**, where the call leaves them out or makes
  another shape ("a red sphere named Ball": Godot's ``add_node`` with neither);
- **the height and radius the request gives**, on the field the tool's ``size`` takes them
  in ("a green cylinder named pillar, 3 tall" sent as ``size: [3, 1, 1]``, three.js's
  ``[r, h]``: the 3 read as the radius);
- **what it stands on**: ``rest_on`` naming the part the request puts it on ("standing on
  it", "on top of the crate"), where the call has none or the ground;
- **where the request puts it**: the point it gives, filled in where the call places the
  part nowhere ("a Camera named Eye at (0, 2, 6)"); ``rest_on: "ground"`` filled in for a
  part "on the ground"; ``rest_on`` dropped where it would move the part off the point it
  is given, off the ground, when the request says nothing of the part resting or standing
  ("a red sphere named sun at (0, 3, 0)").

Three more look at calls of any tool:

- **no part's name for a thing made on the way**: an optional argument such as
  ``root_name`` (Godot's ``create_scene``) goes without a name the request gives a part,
  unless the words before that name speak of a root or a scene (:func:`side_name_as_asked`);
- **a change to a new part not put at another part's point** (:func:`changed_as_asked`);
- **nothing aimed at its own point**: a camera or light whose ``look_at`` (``target``) is
  where it stands is aimed at what the request says it looks at (:func:`aimed_as_asked`).
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
    SIDE_NAME,
    as_named,
    asked_as_new,
    described,
    head_of,
    kind_of,
    makes_another_kind,
    named_in,
    newest_request_at,
    noun_phrase,
    unmade_names,
)

__all__ = [
    "RESTING_ARGUMENT",
    "aimed_as_asked",
    "as_asked",
    "changed_as_asked",
    "kind_as_asked",
    "looks_as_asked",
    "named_as_asked",
    "placed_as_asked",
    "rested_as_asked",
    "side_name_as_asked",
    "sized_as_asked",
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


def as_asked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """The response with its calls mended by all nine checks (the same response when
    nothing needed mending)."""
    if not response.tool_calls:
        return response
    response = changed_as_asked(request, side_name_as_asked(request, response))
    response = aimed_as_asked(request, response)
    if not any(tool.creates for tool in request.tools):
        return response
    for check in (
        named_as_asked, kind_as_asked, looks_as_asked, sized_as_asked, placed_as_asked,
        rested_as_asked,
    ):  # fmt: skip
        response = check(request, response)
    return response


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


def side_name_as_asked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """Each call without a name the request gives another part, in an argument that names
    something the call makes on the way (``root_name``), when the argument is optional and
    the request does not name that thing so: the root of "a main scene with a blue cube
    named Player" is not Player, while that of "a scene whose root is a Spatial named
    World", or of "a main scene named Level", is. The 1.5B model named Godot's scene root
    after the first part the request names in 6 of 6 new users' prompts that build a scene
    (Player, Eye, Crate, Title...); the part was then taken as made, as a bare root, and
    never added as the mesh, camera or label asked for."""
    text = _asked(request)
    names = {name.lower(): name for name in named_in(text)}
    if not names:
        return response

    def mend(tool: ToolSpec, call: ToolCallPart) -> dict[str, Any] | None:
        required = tool.parameters.get("required") or []
        dropped = [
            key
            for key, value in call.arguments.items()
            if (found := SIDE_NAME.match(key)) is not None
            and key != tool.creates
            and key not in required
            and isinstance(value, str)
            and (name := names.get(value.lower())) is not None
            and not _names_the(found.group(1), tool.name, head_of(text, name))
        ]
        if not dropped:
            return None
        logger.info("%s gave %s a name the request gives another part", call.name, dropped)
        return {key: v for key, v in call.arguments.items() if key not in dropped}

    return _mend_calls(response, {tool.name: tool for tool in request.tools}, mend)


def _names_the(thing: str, tool: str, head: str) -> bool:
    """Whether the words before a naming word name ``thing`` (``root``), or what the tool
    makes (``scene`` for ``create_scene``): in the words after their last determiner ("a
    main scene named Level"), or as "<thing> is a ..." ("whose root is a Spatial named
    World")."""
    _, phrase = noun_phrase(head)
    words = {thing.lower(), *tool.lower().split("_")[1:]}
    if any(re.search(rf"\b{re.escape(word)}\b", phrase, re.IGNORECASE) for word in words):
        return True
    return (
        re.search(rf"\b{re.escape(thing)}\s+(?:is|as)\s+(?:an?\s+)?\w+\s*$", head, re.I) is not None
    )


def named_as_asked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """Each call that makes a thing named as the request names it, where the model ran the
    name on with words about the part (``Ball of radius 1`` for "a red sphere named Ball of
    radius 1": :func:`~.unmade.as_named`)."""

    def mend(made: _Made) -> dict[str, Any] | None:
        name = as_named(request, made.value) if made.value is not None else None
        if name is None:
            return None
        logger.info("%s named %r; the request names it %r", made.call.name, made.value, name)
        return {**made.call.arguments, made.key: name}

    return _mend(request, response, mend)


def kind_as_asked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """Each call that gives what it makes the name of a part the request asks for as
    another kind of thing (a light called ``spire`` for "a purple cone named spire": the
    1.5B model did so on a new user's prompt, and the cone was then refused its name)
    without that name, when the tool has a default for it (three.js ``add_light``,
    Blender's ``place_light``); a tool that needs the name is left to refuse or not."""
    text = _asked(request)

    def mend(made: _Made) -> dict[str, Any] | None:
        if made.name is None or made.key in (made.tool.parameters.get("required") or []):
            return None
        if not makes_another_kind(text, made.name, made.call):
            return None
        logger.info(
            "%s named %r, which the request asks for as another kind", made.call.name, made.value
        )
        return {key: v for key, v in made.call.arguments.items() if key != made.key}

    return _mend(request, response, mend)


def _up_axis(tool: ToolSpec) -> int | None:
    """Which coordinate of a point is up, as the tool's argument descriptions say."""
    properties = tool.parameters.get("properties") or {}
    for schema in properties.values():
        found = _UP.search(str(schema.get("description", ""))) if isinstance(schema, dict) else None
        if found is not None:
            return "xyz".index(found.group(1).lower())
    return None


def _same_point(value: object, point: list[float | int]) -> bool:
    if not isinstance(value, list) or len(value) != len(point):
        return False
    try:
        return all(abs(float(v) - p) < 1e-9 for v, p in zip(value, point, strict=True))
    except (TypeError, ValueError):
        return False


def placed_as_asked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """Each call that makes a part placed where the request puts it:

    - **on the ground**: a part the request puts "on the ground" gets
      :data:`RESTING_ARGUMENT` ``"ground"`` where the call has none (Godot's ``add_node``
      for "a red cube named Crate standing on the ground" came without one in 3 of 5 such
      calls, the cube half under the ground; three.js and Blender calls had it in 43 of 43);
    - **another part's point**: a call at the point the request gives another part, when it
      gives this one none, goes without that place (where the tool does not need one);

    and, where the request gives the part one point ``(x, y, z)`` or ``(x, y)``:

    - **a point left out**: a call with no argument that places it (``position``,
      ``location``, nor such a property: ``translation``, ``rect_position``...) gets the
      point as its ``position`` or ``location``, when that validates. Godot's ``add_node``
      for "a Camera named Eye at (0, 2, 6)" came without one (3 of 4 such calls);
    - **no resting off the ground**: a call at that point, off the ground (the up
      coordinate not zero, the axis as the tool's descriptions say), goes without
      :data:`RESTING_ARGUMENT` when nothing the request says of the part speaks of resting
      or standing: ``rest_on`` would move it off that point. The 1.5B model adds
      ``rest_on: "ground"`` to nearly every three.js call, so "a red sphere named sun at
      (0, 3, 0)" ended on the ground. A point on the ground ("at (2, 0, 2)"), or words of
      resting ("standing on the ground at (3, 0, 3)"), keep it."""
    text = _asked(request)
    names = named_in(text)

    def mend(made: _Made) -> dict[str, Any] | None:
        tool, call = made.tool, made.call
        if made.name is None:
            return None
        arguments = dict(call.arguments)
        said = described(text, made.name)
        rests = RESTING_ARGUMENT in (tool.parameters.get("properties") or {})
        if rests and RESTING_ARGUMENT not in arguments and _ON_THE_GROUND.search(said):
            # Godot's add_node for "a red cube named Crate standing on the ground" came
            # without it in 3 of 5 such calls: the cube stood half under the ground.
            logger.info("%s for %r rests on the ground as asked", call.name, made.name)
            arguments[RESTING_ARGUMENT] = "ground"
        found = list(_POINT.finditer(said))
        slot = next(
            (key for key in _PLACES if key in (tool.parameters.get("properties") or {})), None
        )
        if not found and slot is not None and slot not in (tool.parameters.get("required") or []):
            if _at_others_point(arguments.get(slot), text, made.name, names):
                # The point the request gives another part (a sphere put at the camera's
                # (6, -6, 4), s17/4): where the request puts this one, it does not say.
                logger.info(
                    "%s puts %r at another part's point; %s dropped", call.name, made.name, slot
                )
                del arguments[slot]
        if len(found) != 1 or not _where(said, found[0]):
            # None, one it aims at, or several (for several parts, in a list).
            return arguments if arguments != call.arguments else None
        point = _numbers(found[0])
        if slot is not None and not _says(arguments, _PLACING):
            logger.info("%s for %r placed at %s as asked", call.name, made.name, point)
            arguments[slot] = point
        up = _up_axis(tool)
        if (
            arguments.get(RESTING_ARGUMENT) is not None
            and up is not None
            and len(point) == 3
            and point[up] != 0
            and any(_same_point(v, point) for v in arguments.values())
            and not _RESTING.search(_without(said, str(made.name)))
        ):
            logger.info(
                "%s puts %r at %s as asked; %s dropped",
                call.name, made.name, point, RESTING_ARGUMENT,
            )  # fmt: skip
            del arguments[RESTING_ARGUMENT]
        return arguments if arguments != call.arguments else None

    return _mend(request, response, mend)


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


def _points_of_others(text: str, name: str, names: list[str]) -> list[list[float | int]]:
    """The points the request gives the parts it names other than ``name``, after "at"."""
    points = []
    for other in names:
        if other.lower() != name.lower():
            said = described(text, other)
            points += [_numbers(m) for m in _POINT.finditer(said) if _where(said, m)]
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
    numbers = [float(group) for group in found.groups() if group is not None]
    return [int(n) if n.is_integer() else n for n in numbers]


def _without(text: str, name: str) -> str:
    """``text`` without ``name`` as a word (a part named "floor" says nothing of a floor)."""
    return re.sub(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", " ", text, flags=re.I)


_SHAPE_WORD = re.compile(
    r"\b(cube|box|block|sphere|ball|cylinder|cone|plane|torus|capsule|pyramid)(?:e?s)?\b",
    re.IGNORECASE,
)
_SAME_SHAPE = {
    "ball": ("sphere", "uv_sphere", "ico_sphere"),
    "sphere": ("sphere", "uv_sphere", "ico_sphere"),
    "cube": ("box", "cube"),
    "box": ("box", "cube"),
    "block": ("box", "cube"),
}
"""A shape word -> the values tools give that shape, in the order tried (three.js and Godot
say ``box``, Blender ``cube``; Blender's spheres are ``uv_sphere`` and ``ico_sphere``)."""
_SHAPE_ARGUMENTS = ("shape", "kind", "primitive")
_COLOUR_WORD = re.compile(
    r"\b(?:(light|dark)[\s-]+)?(red|green|blue|yellow|white|black|grey|gray|orange|purple|"
    r"pink|brown|cyan|magenta|gold|silver|teal|navy|violet|beige|maroon|olive|lime)\b",
    re.IGNORECASE,
)
_SHADES = frozenset(
    "lightblue lightgreen lightgrey lightgray lightpink lightyellow darkblue darkgreen darkgrey "
    "darkgray darkred darkorange darkviolet".split()
)
"""CSS colour names made of "light"/"dark" and a colour; another shade is its colour."""
_COLOUR_ARGUMENTS = ("color", "colour")
_MESH = re.compile(r"mesh", re.IGNORECASE)
"""A call that sets a mesh its own way (Godot's ``properties: {"mesh": "CubeMesh()"}``)
has its shape: a second one could only clash with it."""
_COLOURED = re.compile(r"colou?r|albedo|material", re.IGNORECASE)
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


def _one(found: list[str]) -> str | None:
    return found[0] if len(set(found)) == 1 else None


def _asked_shape(head: str) -> tuple[str, ...]:
    word = _one([m.group(1).lower() for m in _SHAPE_WORD.finditer(head)])
    return () if word is None else _SAME_SHAPE.get(word, (word,))


def _asked_colour(head: str) -> str | None:
    said = []
    for m in _COLOUR_WORD.finditer(head):
        shade = f"{(m.group(1) or '').lower()}{m.group(2).lower()}"
        said.append(shade if shade in _SHADES else m.group(2).lower())
    return _one(said)


def _values(schema: object) -> set[str]:
    """The values a string argument takes: its enum, or the words of its description."""
    if not isinstance(schema, dict):
        return set()
    if isinstance(schema.get("enum"), list):
        return {str(value).lower() for value in schema["enum"]}
    return {w.lower() for w in re.findall(r"[A-Za-z_]+", str(schema.get("description", "")))}


def looks_as_asked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """Each call that makes a shape with the shape and colour the words before its name
    give ("a red sphere named Ball"), where the request gives one of each:

    - the shape, when the call leaves its shape argument (``shape``, ``kind``) out or gives
      another one, and the tool takes that shape (its enum, or its description's words);
    - the colour, when the call has no colour argument (one it gives is kept).

    Neither where the call says it its own way (a ``mesh``, an ``albedo_color`` or a
    ``material`` among Godot's ``properties``); a ``mesh`` naming a file the request does
    not name (``res://Crate.mesh``, which the project does not have) says no shape, and the
    toolkit leaves such a file out when the call gives a shape.

    On new users' prompts the 1.5B model sent Godot's ``add_node`` with neither shape nor
    colour in 18 of 18 calls for a named shape (white boxes for "a red sphere named Ball"),
    and Blender's ``create_primitive`` as planes for "four thin cylinders named Leg1, ...".
    Calls that make lights or cameras are left alone."""
    text = _asked(request)

    def mend(made: _Made) -> dict[str, Any] | None:
        tool, call = made.tool, made.call
        if made.name is None:
            return None
        head = head_of(text, made.name)
        if kind_of(head) != "shape" or makes_another_kind(text, made.name, call):
            return None
        properties = tool.parameters.get("properties") or {}
        arguments = dict(call.arguments)
        shapes = _asked_shape(head)
        key = next((k for k in _SHAPE_ARGUMENTS if k in properties), None)
        if (
            shapes
            and key is not None
            and str(arguments.get(key, "")).lower() not in shapes
            and not _says(
                _unsaid_files({k: v for k, v in arguments.items() if k != key}, text), _MESH
            )
        ):
            allowed = _values(properties[key])
            shape = next((s for s in shapes if s in allowed), None)
            if shape is not None:
                arguments[key] = shape
        colour = _asked_colour(head)
        key = next((k for k in _COLOUR_ARGUMENTS if k in properties), None)
        if colour is not None and key is not None and not _says(arguments, _COLOURED):
            arguments[key] = colour
        if arguments == call.arguments:
            return None
        logger.info("%s for %r made as asked: %s", call.name, made.name, arguments)
        return arguments

    return _mend(request, response, mend)


def changed_as_asked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """Each call that changes a part the request asks for as a new one (a tool that makes
    nothing, with one argument naming that part) without a place (``position``,
    ``location``) that is the point the request gives another part, when it gives this one
    none, where the tool does not need it: ``set_transform(name="Ball", location=[6, -6,
    4])``, the camera's point, for "a red sphere named Ball ... resting on the ground and a
    camera named Cam at (6, -6, 4)" (new users' prompt s17/4; the same mend as for maker
    calls). A part the request speaks of as one there already is left to the call.

    Mending the colour and the opacity of such calls as well (the 1.5B model recoloured a
    black post "lightgrey" and made a sun half transparent) was measured and dropped: a
    change reverted without a word turned into a loop, the model sending its change again
    and again (s16/1 and s16/4 used all their turns)."""
    text = _asked(request)
    names = named_in(text)
    if not names:
        return response
    by_name = {name.lower(): name for name in names}

    def mend(tool: ToolSpec, call: ToolCallPart) -> dict[str, Any] | None:
        targets = {
            by_name[value.lower()]
            for value in call.arguments.values()
            if isinstance(value, str) and value.lower() in by_name
        }
        if len(targets) != 1:
            return None
        (name,) = targets
        said = described(text, name)
        if not asked_as_new(text, name) or any(_where(said, m) for m in _POINT.finditer(said)):
            return None
        required = tool.parameters.get("required") or []
        arguments = {
            key: value
            for key, value in call.arguments.items()
            if key not in _PLACES
            or key in required
            or not _at_others_point(value, text, name, names)
        }
        if arguments == call.arguments:
            return None
        logger.info("%s puts %r at another part's point; dropped", call.name, name)
        return arguments

    makes_nothing = {tool.name: tool for tool in request.tools if tool.creates is None}
    return _mend_calls(response, makes_nothing, mend)


_AIMS = ("look_at", "target")
"""Arguments that aim a camera or a light (Blender's ``look_at``, three.js's ``target``)."""
_LOOKS = re.compile(
    r"\b(?:look(?:s|ing)?|aim(?:s|ed|ing)?|point(?:s|ed|ing)?|fac(?:e|es|ed|ing)|shin(?:e|es|ing))"
    r"(?:\s+(?:straight|right|directly|down|up))*\s+(?:at|to|towards?|on)\s+(?:the\s+)?",
    re.IGNORECASE,
)
"""What comes before the thing a camera or light is aimed at ("that looks at", "pointing
straight down at the")."""
_PRONOUN = re.compile(r"(?:it|them)\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z_][\w\-]*")


def _aimed_at(text: str, own: str | None, names: list[str]) -> object:
    """What the request says the part named ``own`` looks at: a part's name, a point, or
    None. "it" is the last part named before ``own``."""
    said = described(text, own) if own else text
    found = _LOOKS.search(said)
    if found is None:
        return None
    rest = said[found.end() :]
    point = _POINT.match(rest)
    if point is not None:
        return _numbers(point)
    word = _WORD.match(rest)
    others = [n for n in names if own is None or n.lower() != own.lower()]
    if word is not None and word.group().lower() == "origin":
        return [0, 0, 0]
    if word is not None and word.group().lower() in (n.lower() for n in others):
        return next(n for n in others if n.lower() == word.group().lower())
    if _PRONOUN.match(rest) and own is not None:
        return _last_named_before(text, own, others)
    return None


def _takes(schema: object, value: object) -> bool:
    """Whether a property schema takes a name (a string) or a point (an array)."""
    if not isinstance(schema, dict):
        return False
    kinds = [schema, *(schema.get("anyOf") or [])]
    wanted = "string" if isinstance(value, str) else "array"
    return any(isinstance(k, dict) and k.get("type") == wanted for k in kinds)


def aimed_as_asked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """Each call that aims a camera or a light (``look_at``, ``target``) at the very point
    where it stands (its ``location``/``position`` in the call, else the point the request
    gives it), aimed instead at what the request says it looks at: a part's name, "it" (the
    part named last before it), a point, or the origin; with nothing said, the aim is left
    out where the tool can do without it (its default).

    The 1.5B model copied the location into ``look_at``: ``place_camera(location=[6, -6,
    4], look_at=[6, -6, 4], name="Cam")`` for "a camera named Cam at (6, -6, 4) that looks
    at it" (new users' prompt s17/4), refused by Blender, then sent again until the loop
    guard stopped the run."""
    text = _asked(request)
    names = named_in(text)
    by_name = {name.lower(): name for name in names}

    def mend(tool: ToolSpec, call: ToolCallPart) -> dict[str, Any] | None:
        arguments = dict(call.arguments)
        key = next((k for k in _AIMS if k in arguments), None)
        if key is None:
            return None
        own = next(
            (by_name[v.lower()] for v in arguments.values()
             if isinstance(v, str) and v.lower() in by_name),
            None,
        )  # fmt: skip
        place = next((arguments[k] for k in _PLACES if k in arguments), None)
        if place is None and own is not None:
            said = described(text, own)
            place = next((_numbers(m) for m in _POINT.finditer(said) if _where(said, m)), None)
        if not isinstance(place, list) or not _same_point(arguments[key], place):
            return None
        schema = (tool.parameters.get("properties") or {}).get(key)
        target = _aimed_at(text, own, names)
        if target is not None and not _same_point(target, place) and _takes(schema, target):
            arguments[key] = target
        elif key not in (tool.parameters.get("required") or []):
            del arguments[key]
        else:
            return None
        logger.info("%s aimed at its own point; aimed at %r", call.name, arguments.get(key))
        return arguments

    aiming = {
        t.name: t for t in request.tools if set(_AIMS) & set(t.parameters.get("properties") or {})
    }
    return _mend_calls(response, aiming, mend)


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
_FIELDS = r"\[([a-z]+(?:\s*,\s*[a-z]+)*)\]"
"""The fields of a size as a tool's description lists them: ``[r, h]``, ``[x, y, z]``."""
_ROUND = ("sphere", "ball", "uv_sphere", "ico_sphere")
_UPRIGHT = ("cylinder", "cone", "capsule")
_SIZE = "size"


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
    size = [int(v) if float(v).is_integer() else v for v in size]
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
    extent)."""
    text = _asked(request)

    def mend(made: _Made) -> dict[str, Any] | None:
        tool, call = made.tool, made.call
        if made.name is None:
            return None
        said = _without(described(text, made.name), made.name)
        head = head_of(text, made.name)
        if kind_of(head) != "shape" or makes_another_kind(text, made.name, call):
            return None
        tall = [h or r for h, r in _TALL.findall(said)]
        round_ = _RADIUS.findall(said)
        by = _BY.findall(said)
        if len(tall) > 1 or len(round_) > 1 or len(by) > 1 or not (tall or round_ or by):
            return None
        properties = tool.parameters.get("properties") or {}
        key = next((k for k in _SHAPE_ARGUMENTS if k in properties), None)
        others = _unsaid_files({k: v for k, v in call.arguments.items() if k != _SIZE}, text)
        if (key is None or key not in call.arguments) and _says(others, _MESH):
            return None  # a mesh set its own way (Godot's "SphereMesh()"): its shape unread
        if _says(others, re.compile(rf"^{_SIZE}$")):
            return None  # a size among properties too
        shape = str(call.arguments.get(key) or "box").lower() if key else "box"
        fields = _size_fields(properties.get(_SIZE), shape)
        if fields is None:
            return None
        height = float(tall[0]) if tall else None
        radius = float(round_[0]) if round_ else None
        wanted = _wanted_size(fields, shape, _up_axis(tool), height, radius)
        size = call.arguments.get(_SIZE)
        if by and size is None and not wanted:
            return _by_size(made, [float(n) for n in by[0] if n], fields, shape)
        if not wanted:
            return None
        if size is None:
            size = [1] * len(fields)
        if (
            not isinstance(size, list)
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in size)
            or 0 in size  # a zero is no dimension: the toolkits leave it out their own way
        ):
            return None
        new = _as_read(size, fields)
        for index, value in wanted.items():
            if new[index] == value:
                continue
            misplaced = [i for i, v in enumerate(new) if v == value and i not in wanted]
            if misplaced:
                new[misplaced[0]] = new[index]
            new[index] = value
        new = [int(v) if float(v).is_integer() else v for v in new]
        if new == _as_read(size, fields) and _SIZE in call.arguments:
            return None
        logger.info("%s for %r sized as asked: %s", call.name, made.name, new)
        return {**call.arguments, _SIZE: new}

    return _mend(request, response, mend)


_ON_PART = re.compile(
    r"\b(?:on\s+top\s+of|on|onto|upon|atop)\s+(?:(?:the|a|an)\s+)?"
    r"(?:(?:[\w\-]+\s+){0,4}?(?:named|called)\s+)?([A-Za-z_][\w\-]*)",
    re.IGNORECASE,
)
"""What a part is put on: "standing on it", "on top of the crate", "resting on Table",
"sitting on a blue box named body"."""
_GROUND_WORDS = frozenset({"ground", "floor", "y=0"})
_ON_DANGLING = re.compile(
    r"\b(?:on\s+top\s+of|on|onto|upon|atop)\s+(?:the|a|an)\s+[\w\s\-]*$", re.IGNORECASE
)
"""A clause that ends on what the part stands on, the next part's naming cut off."""


def _last_named_before(text: str, name: str, others: list[str]) -> str | None:
    """The part named last before ``name``'s naming ("it")."""
    before = text.lower()[: text.lower().find(name.lower())]
    earlier = [n for n in others if n.lower() in before]
    return max(earlier, key=lambda n: before.rfind(n.lower())) if earlier else None


def rested_as_asked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """Each call that makes a part the request puts on another part ("a green cylinder
    named Post standing on it", "a green sphere named Apple ... on top of it", "a cube named
    Lid on top of Crate"), with :data:`RESTING_ARGUMENT` naming that part where the call
    gives none or the ground, once that part is made (no call has made it: left to the
    call, which the toolkit would refuse). "it" is the part named last before this one; "on
    the ground" is :func:`placed_as_asked`'s. A call resting on another part of its own
    choosing, or saying ``rest_on`` among Godot's ``properties``, keeps it.

    On new users' prompt s22/4 the 1.5B model made Blender's Post, "standing on" a floor
    plane, with no ``rest_on`` and ``location: [0, 0, 10]``: ten metres above the floor."""
    text = _asked(request)
    names = named_in(text)
    unmade = {name.lower() for name in unmade_names(request)}

    def mend(made: _Made) -> dict[str, Any] | None:
        tool, call = made.tool, made.call
        if made.name is None or RESTING_ARGUMENT not in (tool.parameters.get("properties") or {}):
            return None
        said = described(text, made.name)
        others = [n for n in names if n.lower() != made.name.lower()]
        found = [m.group(1) for m in _ON_PART.finditer(_without(said, made.name))]
        dangling = _ON_DANGLING.search(said)
        if dangling is not None:  # "sitting on a blue box" + " named body": the next part
            found = found[:-1]
            after = re.match(
                r"\s*(?:named|called)\s+([\w\-]+)", text[text.find(said) + len(said) :]
            )
            found += [after.group(1)] if after is not None else []
        meant: list[str | None] = []
        for word in found:
            if word.lower() == "it":
                meant.append(_last_named_before(text, made.name, others))
            elif word.lower() in (n.lower() for n in others):
                meant.append(next(n for n in others if n.lower() == word.lower()))
        targets = list(dict.fromkeys(t for t in meant if t is not None))
        if len(targets) != 1 or targets[0].lower() in unmade:
            return None  # a part not made yet cannot be stood on: left to the call
        given = call.arguments.get(RESTING_ARGUMENT)
        if given is None and _says(call.arguments, re.compile(rf"^{RESTING_ARGUMENT}$")):
            return None  # said among properties (the toolkits read it there)
        if given is not None and str(given).strip().lower() not in (
            *_GROUND_WORDS,
            made.name.lower(),
        ):
            return None
        logger.info("%s for %r rests on %r as asked", call.name, made.name, targets[0])
        return {**call.arguments, RESTING_ARGUMENT: targets[0]}

    return _mend(request, response, mend)
