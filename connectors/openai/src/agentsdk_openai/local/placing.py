"""Mends of where a part goes (:mod:`.as_asked` lists them all): the point and the ground
the request gives it (:func:`placed_as_asked`), the part it stands on
(:func:`rested_as_asked`) or is put over (:func:`above_as_asked`), no other part's point for a change (:func:`changed_as_asked`),
and an aim that is not the point where a camera or light stands (:func:`aimed_as_asked`).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from agentsdk.tools import ToolSpec

from agentsdk import ModelRequest, ModelResponse, ToolCallPart

from .mending import (
    _COLOUR_WORD,
    _ON_THE_GROUND,
    _PLACES,
    _PLACING,
    _POINT,
    _RESTING,
    COLOUR_ARGUMENTS,
    RESTING_ARGUMENT,
    _asked,
    _at_others_point,
    _last_named_before,
    _Made,
    _mend,
    _mend_calls,
    _numbers,
    _plain,
    _plain_numbers,
    _points_where,
    _same_point,
    _says,
    _up_axis,
    _where,
    _without,
    asked_colour,
    entries_offering,
)
from .unmade import (
    asked_as_new,
    described,
    head_of,
    kind_of,
    made_since_request,
    named_in,
    named_together,
    unmade_names,
)

__all__ = [
    "above_as_asked",
    "aimed_as_asked",
    "below_as_asked",
    "changed_as_asked",
    "framed_as_asked",
    "looking_as_asked",
    "placed_as_asked",
    "rested_as_asked",
    "spaced_as_asked",
]

logger = logging.getLogger("agentsdk_openai.local")


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


def changed_as_asked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """Each call that changes a part the request asks for as a new one (a tool that makes
    nothing, with one argument naming that part) without a place (``position``,
    ``location``) that is the point the request gives another part, when it gives this one
    none, where the tool does not need it: ``set_transform(name="Ball", location=[6, -6,
    4])``, the camera's point, for "a red sphere named Ball ... resting on the ground and a
    camera named Cam at (6, -6, 4)" (new users' prompt s17/4; the same mend as for maker
    calls). A part the request speaks of as one there already is left to the call. So is
    the place its own maker call gave it along with ``rest_on``, which the toolkit replaced
    (:func:`_rested_at`): sent again in a change, it would undo the rest.

    A colour word such a call gives the part, other than the one the words before its name
    give ("a green cone named tree"), is that colour again, unless what the request says of
    the part after its name gives the new one ("..., then make it yellow"): the call then
    changes nothing, and the tools say so (``Unchanged``), which the loop guard counts as
    no progress. The 1.5B model recoloured s24/2's green tree yellow (the star's colour),
    s16/4's orange donut red and s20/1's black post light grey. Session 21 tried a
    colour restore before the tools could say "Nothing changed": the model sent its change
    again and again, unaware, until the run's turns ran out (s16/1, s16/4)."""
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
        if not asked_as_new(text, name):
            return None
        arguments = dict(call.arguments)
        if not _points_where(said):
            required = tool.parameters.get("required") or []
            arguments = {
                key: value
                for key, value in arguments.items()
                if key not in _PLACES
                or key in required
                or not _at_others_point(value, text, name, names)
            }
            if arguments != call.arguments:
                logger.info("%s puts %r at another part's point; dropped", call.name, name)
            rested = _rested_at(made_calls, makers, name)
            for key, point in rested.items():
                if key in arguments and key not in required and _same_point(arguments[key], point):
                    # The point its maker call gave, which rest_on replaced: sent again, it
                    # would undo the rest (s25/5: a cube made at [0, 0, 0] on the ground,
                    # then widened with location [0, 0, 0], its lower half under the ground).
                    logger.info("%s puts %r back at %s, before its rest; dropped",
                                call.name, name, key)  # fmt: skip
                    del arguments[key]
        colour = asked_colour(head_of(text, name))
        for key in COLOUR_ARGUMENTS:
            given = arguments.get(key)
            if colour is None or not isinstance(given, str):
                continue
            if _COLOUR_WORD.fullmatch(given.strip()) is None or asked_colour(given) == colour:
                continue
            after = said[said.lower().find(name.lower()) + len(name) :]
            if any(asked_colour(m.group(0)) == asked_colour(given)
                   for m in _COLOUR_WORD.finditer(after)):  # fmt: skip
                continue  # the request recolours it itself ("then make it yellow")
            logger.info("%s recolours %r %s, unasked; kept %s", call.name, name, given, colour)
            arguments[key] = colour
        return arguments if arguments != call.arguments else None

    makes_nothing = {tool.name: tool for tool in request.tools if tool.creates is None}
    makers = {tool.name: tool for tool in request.tools if tool.creates is not None}
    made_calls = made_since_request(request)
    return _mend_calls(response, makes_nothing, mend)


def _rested_at(
    made: list[ToolCallPart], makers: dict[str, ToolSpec], name: str
) -> dict[str, list[float | int]]:
    """The place (``position``/``location`` -> point) the call that made the part ``name``
    gave it along with a :data:`RESTING_ARGUMENT`, which the toolkit then replaced: empty
    when no such call made it."""
    for call in made:
        tool = makers.get(call.name)
        if tool is None or str(call.arguments.get(str(tool.creates), "")).lower() != name.lower():
            continue
        if not call.arguments.get(RESTING_ARGUMENT):
            return {}
        return {k: call.arguments[k] for k in _PLACES if _plain_numbers(call.arguments.get(k))}
    return {}


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

_KIND_NOUNS = frozenset(
    "cube box sphere ball cylinder cone plane torus monkey suzanne object mesh model node "
    "part shape light lamp camera empty".split()
)
"""Words that say what kind of thing a part is, before its name ("the cube Crate")."""
_CALLED = re.compile(r"\s+(?:named\s+|called\s+)?([A-Z][\w\-]*)")
"""The name after a kind word: capitalised, as scene objects are named ("the cube Crate")."""

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
    if word is not None and word.group().lower() in _KIND_NOUNS:
        # "pointing at the cube Crate": a part the scene has, called by its kind and name
        named = _CALLED.match(rest[word.end() :])
        if named is not None and named.group(1).lower() not in _KIND_NOUNS:
            return named.group(1)
    if _PRONOUN.match(rest) and own is not None:
        # "it" is the last thing named before that can be looked at: a shape before a
        # camera or light ("a yellow cube named Target, a Camera named Cam ..., and a spot
        # light named Spot pointing down at it": Target)
        shapes = [n for n in others if kind_of(head_of(text, n)) == "shape"]
        return _last_named_before(text, own, shapes) or _last_named_before(text, own, others)
    return None


def _own_aim(
    made: _Made, key: str, text: str, names: list[str], unmade: set[str]
) -> dict[str, Any] | None:
    """A camera or light made by a tool with an aim argument of its own (``look_at``,
    ``target``) that the call leaves out, aimed where the request says it looks: that part
    (once made) or point. The 1.5B model made Blender's "sun light named Key at (4, -4, 8)
    pointing at the cube Crate" with no ``look_at`` (blender/key-light, session 25), so it
    aimed at the origin, the toolkit's default."""
    call = made.call
    if key in call.arguments or kind_of(head_of(text, str(made.name))) not in ("camera", "light"):
        return None
    target = _aimed_at(text, made.name, names)
    if target is None or (isinstance(target, str) and target.lower() in unmade):
        return None
    schema = (made.tool.parameters.get("properties") or {}).get(key)
    if not _takes(schema, target):
        return None
    logger.info("%s for %r aimed at %s as asked", call.name, made.name, target)
    return {**call.arguments, key: target}


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
            (by_name[v.lower()] for k, v in arguments.items()
             if k not in _AIMS and isinstance(v, str) and v.lower() in by_name),
            None,
        )  # the thing aimed, not what it is aimed at  # fmt: skip
        place = next((arguments[k] for k in _PLACES if k in arguments), None)
        if place is None and own is not None:
            said = described(text, own)
            place = next(iter(_points_where(said)), None)
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


_BELOW = re.compile(
    r"\b(?:below|under|underneath|beneath)\s+(?:(?:the|a|an)\s+)?([A-Za-z_][\w\-]*)",
    re.IGNORECASE,
)
"""What a part is put below: "a Button named Go below it", "a Label named Hint under Play"."""

_PIXELS = re.compile(r"\bpixels?\b", re.IGNORECASE)
_PARENT = "parent"
_GAP = 40
"""Pixels between a flat part and the one it is put below (the Godot toolkit's own step)."""
_WRITTEN_POINT = re.compile(
    r"\s*(?:Vector([23])\s*)?[\[(]\s*(-?\d+(?:\.\d+)?(?:\s*,\s*-?\d+(?:\.\d+)?)*)\s*[\])]\s*",
    re.IGNORECASE,
)


def _written_point(text: str, count: int) -> list[float | int] | None:
    """A point of ``count`` numbers written as text: ``[0, 40]``, ``(0, 1, 0)``,
    ``Vector2( 10, 10 )``, ``Vector3( 0, 1, 0 )`` (a Vector of that many); else None."""
    found = _WRITTEN_POINT.fullmatch(text)
    if found is None or found.group(1) not in (None, str(count)):
        return None
    numbers = [float(n) for n in found.group(2).split(",")]
    return _plain(numbers) if len(numbers) == count else None


def _flat_place(call: ToolCallPart) -> list[float | int] | None:
    """Where a call puts a flat (2D) part: its ``position`` of two numbers, or a
    ``position``/``rect_position`` among a dict argument's entries; (0, 0) when it places
    it nowhere; None when it places it another way (three numbers: not flat)."""
    given = call.arguments.get("position")
    if given is not None:
        return list(given) if _plain_numbers(given) and len(given) == 2 else None
    for value in call.arguments.values():
        if not isinstance(value, dict):
            continue
        for key, said in value.items():
            if _PLACING.search(str(key)):
                return _written_point(str(said), 2)
    return [0, 0]


def below_as_asked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """Each call that makes a flat part (no shape, light or camera: a Label, a Button) the
    request puts below or under another made flat part ("a Button named Go below it"),
    where the tool places it by ``position`` in pixels: made beside that part, under the
    same ``parent``, not inside it, and 40 px below it where the call places it nowhere.

    On new users' prompts the 1.5B model made "a Button named Go below it" a child of the
    Label Title (s23/9), "a Button named Restart below it" a child of Score (s18/8), and "a
    Label named Hint under it" at the Button's own place (s24/9)."""
    text = _asked(request)
    names = named_in(text)
    made_calls = made_since_request(request)

    def mend(made: _Made) -> dict[str, Any] | None:
        tool, call = made.tool, made.call
        properties = tool.parameters.get("properties") or {}
        position = properties.get("position")
        if made.name is None or kind_of(head_of(text, made.name)) is not None:
            return None
        if not isinstance(position, dict) or not _PIXELS.search(str(position.get("description"))):
            return None
        found = _BELOW.search(_without(described(text, made.name), made.name))
        if found is None:
            return None
        others = [n for n in names if n.lower() != made.name.lower()]
        word = found.group(1)
        if word.lower() in ("it", "them"):
            above = _last_named_before(text, made.name, others)
        else:
            above = next((n for n in others if n.lower() == word.lower()), None)
        if above is None or kind_of(head_of(text, above)) is not None:
            return None
        maker = next(
            (c for c in made_calls
             if c.name == call.name and str(c.arguments.get(made.key, "")).lower() == above.lower()),
            None,
        )  # fmt: skip
        place = _flat_place(maker) if maker is not None else None
        mine = _flat_place(call)
        if maker is None or place is None or mine is None:
            return None
        arguments = dict(call.arguments)
        parent = str(arguments.get(_PARENT, ""))
        if _PARENT in properties and parent.rsplit("/", 1)[-1].lower() == above.lower():
            arguments[_PARENT] = maker.arguments.get(_PARENT, ".")
        nowhere = "position" not in call.arguments and not _says(call.arguments, _PLACING)
        if (nowhere or mine == place) and "position" in properties:
            arguments["position"] = _plain([place[0], place[1] + _GAP])
        if arguments == call.arguments:
            return None
        logger.info("%s for %r below %r as asked: %s", call.name, made.name, above, arguments)
        return arguments

    return _mend(request, response, mend)


_AIM_ENTRY = "look_at"
_AIM_ENTRIES = re.compile(r"^(?:look_at|target|looking_at|look_at_target|aim_at|point_at)$", re.I)


def looking_as_asked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """Each call that makes a camera or a light the request aims ("a Camera named Cam at
    (0, 3, 8) looking at it", "a spot light named Spot pointing down at it") with no aim of
    its own, given one: ``look_at`` among the entries of a dict argument whose description
    offers it (Godot's ``properties``: ``{"look_at": "Box"}``), naming the part aimed at
    (once it is made) or the point; where the tool has an aim argument of its own
    (``look_at``, ``target``) that the call leaves out, that argument (:func:`_own_aim`);
    an aim at the call's own point is :func:`aimed_as_asked`'s.

    On new users' prompts the 1.5B model left Godot's cameras unaimed, or wrote a
    ``target`` the class does not have, for "a Camera named Eye ... looking at the wall"
    (s23/8) and "a Camera named Cam ... looking at it" (s24/8). An aim among those entries
    at a name the request never gives, on any part, goes (the model copied the
    description's example, ``"look_at": "Box"``, onto a ball and a lamp: s23/7)."""
    text = _asked(request)
    names = named_in(text)
    unmade = {name.lower() for name in unmade_names(request)}

    def mend(made: _Made) -> dict[str, Any] | None:
        tool, call = made.tool, made.call
        if made.name is None:
            return None
        properties = tool.parameters.get("properties") or {}
        key = entries_offering(properties, _AIM_ENTRY)
        own = next((k for k in _AIMS if k in properties), None)
        if own is not None:
            return _own_aim(made, own, text, names, unmade)
        if key is None or any(k in call.arguments for k in _AIMS):
            return None
        entries = call.arguments.get(key)
        if entries is not None and not isinstance(entries, dict):
            return None
        given = dict(entries or {})
        aims = [k for k in given if _AIM_ENTRIES.match(str(k))]
        said = {n.lower() for n in names} | {"origin", "the origin"}
        unsaid = [
            k for k in aims
            if not _plain_numbers(given[k])
            and _written_point(str(given[k]), 3) is None
            and str(given[k]).strip().lower() not in said
        ]  # fmt: skip
        if unsaid:
            # An aim at a name the request never gives (the 1.5B model copied the
            # description's example, "look_at": "Box", onto a ball and a lamp: s23/7).
            logger.info("%s for %r aims at %s, which the request never names; dropped",
                        call.name, made.name, given[unsaid[0]])  # fmt: skip
            given = {k: v for k, v in given.items() if k not in unsaid}
            aims = []
        mended = {**call.arguments, key: given} if unsaid else None
        if aims or kind_of(head_of(text, made.name)) not in ("camera", "light"):
            return mended  # aimed its own way (the toolkit reads it), or nothing that aims
        target = _aimed_at(text, made.name, names)
        if target is None or (isinstance(target, str) and target.lower() in unmade):
            return mended  # nothing said, or a part not made yet (the toolkit would refuse it)
        if isinstance(target, str):
            value = target
        elif isinstance(target, list) and _plain_numbers(target):
            value = "[" + ", ".join(str(v) for v in _plain(target)) + "]"
        else:
            return mended
        logger.info("%s for %r looks at %s as asked", call.name, made.name, value)
        return {**call.arguments, key: {**given, _AIM_ENTRY: value}}

    return _mend(request, response, mend)


_ON_PART = re.compile(
    r"\b(?:on\s+top\s+of|on|onto|upon|atop)\s+(?:(?:the|a|an)\s+)?"
    r"(?:(?:[\w\-]+\s+){0,4}?(?:named|called)\s+)?([A-Za-z_][\w\-]*)",
    re.IGNORECASE,
)
"""What a part is put on: "standing on it", "on top of the crate", "resting on Table",
"sitting on a blue box named body"."""

_TOPS = r"(?:tip|top|peak|apex|summit|point)\b"
"""The top of a part a request puts another on ("on its tip")."""

_GROUND_WORDS = frozenset({"ground", "floor", "y=0"})
_RESTING_KEY = re.compile(rf"^{RESTING_ARGUMENT}$")
_BESIDE = re.compile(
    r"\b(?:apart|beside|next to|left|right|front|behind|corner|edge|end|side|along|row)\b",
    re.IGNORECASE,
)
"""Words that place a part somewhere on its support other than its middle."""

_ON_DANGLING = re.compile(
    r"\b(?:on\s+top\s+of|on|onto|upon|atop)\s+(?:the|a|an)\s+[\w\s\-]*$", re.IGNORECASE
)
"""A clause that ends on what the part stands on, the next part's naming cut off."""


def rested_as_asked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """Each call that makes a part the request puts on another part ("a green cylinder
    named Post standing on it", "a green sphere named Apple ... on top of it", "a cube named
    Lid on top of Crate"), with :data:`RESTING_ARGUMENT` naming that part where the call
    gives none or the ground, once that part is made (no call has made it: left to the
    call, which the toolkit would refuse). "it" is the part named last before this one; "on
    the ground" is :func:`placed_as_asked`'s. A call resting on another part of its own
    choosing, or saying ``rest_on`` among Godot's ``properties``, keeps it. A part resting on
    the support asked for, where the request gives it no point and no side ("apart", "left",
    "along" ...), goes without ``position``/``location`` (where optional), so the toolkit
    centres it on its support.

    On new users' prompt s22/4 the 1.5B model made Blender's Post, "standing on" a floor
    plane, with no ``rest_on`` and ``location: [0, 0, 10]``: ten metres above the floor; on
    s22/1 it rested the orb on the pillar at ``position: [0, 1.5, 3]``, off the pillar."""
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
        after = re.match(r"\s*(?:named|called)\s+([\w\-]+)", text[text.find(said) + len(said) :])
        if dangling is not None and after is not None:
            # "sitting on a blue box" + " named body": the next part. Without a naming after
            # it, the words are the support itself ("standing on top of the base", s24/4).
            found = [*found[:-1], after.group(1)]
        # "on its tip", "on its top": the part named before, as "on it"
        found = [
            "it" if w.lower() == "its" and re.search(rf"\bon\s+its\s+{_TOPS}", said, re.I) else w
            for w in found
        ]
        meant: list[str | None] = []
        for word in found:
            if word.lower() == "it":
                meant.append(_last_named_before(text, made.name, others))
            elif word.lower() in (n.lower() for n in others):
                meant.append(next(n for n in others if n.lower() == word.lower()))
        targets = list(dict.fromkeys(t for t in meant if t is not None))
        if len(targets) != 1 or targets[0].lower() in unmade:
            return None  # a part not made yet cannot be stood on: left to the call
        (support,) = targets
        arguments = dict(call.arguments)
        given = arguments.get(RESTING_ARGUMENT)
        if given is None and _says(arguments, _RESTING_KEY):
            return None  # said among properties (the toolkits read it there)
        if given is None or str(given).strip().lower() in (*_GROUND_WORDS, made.name.lower()):
            logger.info("%s for %r rests on %r as asked", call.name, made.name, support)
            arguments[RESTING_ARGUMENT] = support
        elif str(given).strip().lower() != support.lower():
            return None  # another support of the call's own choosing
        required = tool.parameters.get("required") or []
        if not _points_where(said) and not _BESIDE.search(said):
            # No point and no side said: centred on its support, as the toolkits rest a part
            # without a place (s22/1's orb "on top of" the pillar was put 3 m off it).
            for key in _PLACES:
                if key in arguments and key not in required:
                    logger.info("%s for %r: %s dropped to centre it on %r", call.name,
                                made.name, key, support)  # fmt: skip
                    del arguments[key]
        return arguments if arguments != call.arguments else None

    return _mend(request, response, mend)


_FRAME_ALL = re.compile(
    r"\b(?:frames?|framed|fit|fits|sees?|shows?)\b[^.;,]{0,24}?"
    r"\b(?:both|all|them|everything|each\s+of)\b(?!\s+of\s+it\b)",
    re.IGNORECASE,
)
"""A request to frame every part: "frame both", "frame all three", "sees all of them"."""

_FRAMING_TOOL = re.compile(r"(?:^|_)(?:fit|frame)(?:_|$)", re.IGNORECASE)
_NAMES = "names"


def framed_as_asked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """Each call of a framing tool (``fit_view``, a word of its name is fit or frame) with a
    ``names`` list, when the request asks to frame them all ("frame both", "frame all
    three", "make sure the camera sees all of them"): the list holds every shape part the
    request names and a call has made, in the request's order, with the names the call
    gave. On new users' prompts the 1.5B model framed the truck alone for "... a blue box
    named truck ... and frame both" (s20/2), and the right cube alone for "then frame both
    in the camera" (s17/3)."""
    text = _asked(request)
    if _FRAME_ALL.search(text) is None:
        return response
    tools = {
        tool.name: tool
        for tool in request.tools
        if _FRAMING_TOOL.search(tool.name) and _NAMES in (tool.parameters.get("properties") or {})
    }
    if not tools:
        return response
    unmade = {name.lower() for name in unmade_names(request)}
    parts = [
        name
        for name in named_in(text)
        if kind_of(head_of(text, name)) == "shape" and name.lower() not in unmade
    ]

    def mend(tool: ToolSpec, call: ToolCallPart) -> dict[str, Any] | None:
        given = call.arguments.get(_NAMES)
        if not isinstance(given, list) or not all(isinstance(n, str) for n in given):
            return None  # none given frames everything already
        said = {n.lower() for n in given}
        missing = [name for name in parts if name.lower() not in said]
        if not missing or len(parts) < 2:
            return None
        names = parts + [n for n in given if n.lower() not in {p.lower() for p in parts}]
        logger.info("%s framed %s; the request asks for all: %s", call.name, given, names)
        return {**call.arguments, _NAMES: names}

    return _mend_calls(response, tools, mend)


_APART = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:m\b|metres?\b|meters?\b|units?\b)?\s*apart\b"
    r"(?:\s+along\s+(?:the\s+)?([xyz])\b)?",
    re.IGNORECASE,
)
_ALONG = re.compile(r"\balong\s+(?:the\s+)?([xyz])\b", re.IGNORECASE)


def spaced_as_asked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """Each call that makes a part named with others ("three boxes named a, b and c in a
    row along x, 2 apart") placed that far from the first of them along the axis the
    request gives (x when it gives none): the k-th part at the first one's point plus k
    times the spacing, its other coordinates as the call gives them. Only once the first
    part is made by a call that did not fail (its point, or the origin when that call gave
    none), only for a call that gives a point or a tool that takes one, and only when the
    request gives the parts no points of their own. On new users' prompt s22/2 the 1.5B
    model put three boxes "2 apart" at x = 0, 1 and 2."""
    text = _asked(request)
    made = made_since_request(request)

    def mend(part: _Made) -> dict[str, Any] | None:
        call, name = part.call, part.name
        group = named_together(text, name) if name is not None else []
        if name is None or len(group) < 2 or name == group[0]:
            return None
        said = described(text, group[0])
        apart = _APART.findall(said)
        if len(apart) != 1 or _points_where(said):
            return None
        spacing, axis_said = float(apart[0][0]), apart[0][1] or (_ALONG.findall(said) or [""])[0]
        axis = "xyz".index(axis_said.lower()) if axis_said else 0
        key = next(
            (k for k in _PLACES if k in (part.tool.parameters.get("properties") or {})), None
        )
        first = next(
            (c for c in made if part.key in c.arguments
             and str(c.arguments[part.key]).lower() == group[0].lower()),
            None,
        )  # fmt: skip
        if key is None or first is None:
            return None
        origin = first.arguments.get(key) or [0, 0, 0]
        if not _plain_numbers(origin) or axis >= len(origin):
            return None
        point = list(call.arguments.get(key) or origin)
        if not _plain_numbers(point) or len(point) != len(origin):
            return None
        index = [n.lower() for n in group].index(name.lower())
        wanted = origin[axis] + index * spacing
        if point[axis] == wanted:
            return None
        point[axis] = wanted
        logger.info("%s for %r spaced as asked: %s", call.name, name, point)
        return {**call.arguments, key: _plain(point)}

    return _mend(request, response, mend)


ABOVE_ARGUMENT = "above"
"""The argument of a maker tool that puts what it makes over a part, by name (the three.js
``add_light``, Blender's ``place_light``, Godot's ``add_node``): the toolkit measures the
part and places it centred over its top."""
GAP_ARGUMENT = "gap"
"""The distance above that part's top, beside :data:`ABOVE_ARGUMENT`."""

_ABOVE = re.compile(
    r"(?:(?<![\w.])(\d+(?:\.\d+)?)\s*(?:m\b|metres?\b|meters?\b|units?\b)?\s*)?"
    r"\b(?:(?:just|right|directly|high|hanging|hovering|floating)\s+)?(?:above|over)\s+"
    r"(?:(?:the|a|an)\s+)?([A-Za-z_][\w\-]*)",
    re.IGNORECASE,
)
"""What a part is put over, and how far: "2 above it", "1 m above the table", "just over Box"."""


def above_as_asked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """Each call that makes a part the request puts above (or over) another part already
    made ("a point light named lamp 2 above it", "an omni light named Bulb above it"),
    where the tool takes :data:`ABOVE_ARGUMENT`: that argument names the part, with
    :data:`GAP_ARGUMENT` the distance the request gives, and the call goes without the
    point it gave (``position``/``location``, where optional) and without ``rest_on``:
    the toolkit measures the part and centres this one over its top. "it" is the part named
    last before this one; "above the ground" is a height, left alone. A part the request
    puts over nothing goes without both arguments (:func:`_unasked_above`).

    On new users' prompts the 1.5B model put "a point light named lamp 2 above" a hedge 1
    tall at ``(0, 1, 2)``, 2 along z (s25/3); "an area light named Soft above" a can 1.2 m
    tall at its top face (s25/6); "an omni light named Bulb above" a block inside it
    (s17/9); "a point light named glow just above" a lamp beside it (s23/2)."""
    text = _asked(request)
    names = named_in(text)
    unmade = {name.lower() for name in unmade_names(request)}

    def mend(made: _Made) -> dict[str, Any] | None:
        tool, call = made.tool, made.call
        properties = tool.parameters.get("properties") or {}
        if made.name is None or ABOVE_ARGUMENT not in properties:
            return None
        found = list(_ABOVE.finditer(_without(described(text, made.name), made.name)))
        if not found:
            return _unasked_above(made)
        if len(found) != 1:
            return None  # two: which is meant, unsaid
        gap, word = found[0].group(1), found[0].group(2)
        others = [n for n in names if n.lower() != made.name.lower()]
        if word.lower() in ("it", "them"):
            over = _last_named_before(text, made.name, others)
        else:
            over = next((n for n in others if n.lower() == word.lower()), None)
        if over is None or over.lower() in unmade:
            return None  # the ground, a part not named, or not made yet: left to the call
        arguments = dict(call.arguments)
        given = arguments.get(ABOVE_ARGUMENT)
        if given is not None and str(given).strip().lower() != over.lower():
            return None  # over another part of the call's own choosing
        arguments[ABOVE_ARGUMENT] = over
        if gap is not None and GAP_ARGUMENT in properties:
            arguments[GAP_ARGUMENT] = _plain([float(gap)])[0]
        required = tool.parameters.get("required") or []
        for key in (*_PLACES, RESTING_ARGUMENT):
            if key in arguments and key not in required:
                del arguments[key]
        if arguments == call.arguments:
            return None
        logger.info("%s for %r above %r as asked: %s", call.name, made.name, over, arguments)
        return arguments

    return _mend(request, response, mend)


def _unasked_above(made: _Made) -> dict[str, Any] | None:
    """The call without :data:`ABOVE_ARGUMENT` and :data:`GAP_ARGUMENT` (also among a dict
    argument's entries, which Godot's ``add_node`` reads as them), where the request says
    nothing of putting the part over another: offered them, the 1.5B model filled them in
    unasked (``"above": ".", "gap": 1`` for a Label and for a Pole on the ground, both
    refused, s25/8 and s25/9), as it fills every argument a tool shows."""
    required = made.tool.parameters.get("required") or []
    keys = {ABOVE_ARGUMENT, GAP_ARGUMENT} - set(required)
    arguments: dict[str, Any] = {}
    for key, value in made.call.arguments.items():
        if key in keys:
            continue
        if isinstance(value, dict):
            value = {k: v for k, v in value.items() if str(k).lower() not in keys}
        arguments[key] = value
    if arguments == made.call.arguments:
        return None
    logger.info("%s for %r: %s dropped, unasked", made.call.name, made.name, sorted(keys))
    return arguments
