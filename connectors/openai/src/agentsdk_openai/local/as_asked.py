"""Calls that make a named part, mended to what the request says of that part.

A small local model fills in every argument a maker tool offers, in the order it is shown,
and copies a name with whatever words follow it; or it leaves out what the request states
plainly. Twelve mends, each for a call to a tool that declares what it makes
(:attr:`~agentsdk.ToolSpec.creates`), each read from the newest user message only, each
logged, and none kept if the mended call would fail the tool's schema:

- **the name as the request gives it** ("Ball of radius 1" is sent as "Ball");
- **no name of another kind**: a light called "spire" for "a purple cone named spire"
  loses the name when the tool can do without it, so the cone can still be made under it;
- **the kind of light the request gives**: "a spot light named Spot" made as a
  DirectionalLight becomes a SpotLight (:func:`light_as_asked`);
- **the shape and colour the request gives**, where the call leaves them out or makes
  another shape ("a red sphere named Ball": Godot's ``add_node`` with neither), or gives
  another colour its own way (a red ``Color`` among Godot's properties for "a yellow cube");
- **the height and radius the request gives**, on the field the tool's ``size`` takes them
  in ("a green cylinder named pillar, 3 tall" sent as ``size: [3, 1, 1]``, three.js's
  ``[r, h]``: the 3 read as the radius);
- **what it stands on**: ``rest_on`` naming the part the request puts it on ("standing on
  it", "on top of the crate"), where the call has none or the ground;
- **the spacing**: parts named together "2 apart" placed that far from the first of them
  along the axis the request gives (:func:`~.placing.spaced_as_asked`);
- **what a camera or light looks at**, where the call aims it nowhere: ``look_at`` among
  the entries of a dict argument that offers it (Godot's ``properties``;
  :func:`~.placing.looking_as_asked`);
- **below another flat part**: "a Button named Go below it" made beside the Label, not
  inside it, and 40 px below it where the call places it nowhere
  (:func:`~.placing.below_as_asked`);
- **the words it shows**: "a Label named Score ... that says 0" made with ``text`` "0"
  (:func:`worded_as_asked`);
- **above another part**: "a point light named lamp 2 above it" made with ``above`` naming
  that part and ``gap`` 2, without the point the call gave, where the tool takes ``above``
  (:func:`~.placing.above_as_asked`);
- **where the request puts it**: the point it gives, filled in where the call places the
  part nowhere ("a Camera named Eye at (0, 2, 6)"); ``rest_on: "ground"`` filled in for a
  part "on the ground"; ``rest_on`` dropped where it would move the part off the point it
  is given, off the ground, when the request says nothing of the part resting or standing
  ("a red sphere named sun at (0, 3, 0)").

Four more look at calls of any tool:

- **no part's name for a thing made on the way**: an optional argument such as
  ``root_name`` (Godot's ``create_scene``) goes without a name the request gives a part,
  unless the words before that name speak of a root or a scene (:func:`side_name_as_asked`);
- **a change to a new part not put at another part's point** (:func:`changed_as_asked`);
- **nothing aimed at its own point**: a camera or light whose ``look_at`` (``target``) is
  where it stands is aimed at what the request says it looks at (:func:`aimed_as_asked`);
- **all framed when all are asked for**: a framing call (``fit_view``) for "frame both"
  lists every shape part made, not one (:func:`framed_as_asked`).

The names, kinds, looks and scene roots are mended here; places and aims in
:mod:`.placing`, sizes in :mod:`.sizing`; the walk over a response's calls they share is in
:mod:`.mending`. :func:`as_asked` runs them all.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from agentsdk.tools import ToolSpec

from agentsdk import ModelRequest, ModelResponse, ToolCallPart

from .mending import (
    _COLOUR_WORD,
    _MESH,
    _SHAPE_ARGUMENTS,
    COLOUR_ARGUMENTS,
    RESTING_ARGUMENT,
    _asked,
    _Made,
    _mend,
    _mend_calls,
    _says,
    _unsaid_files,
    _without,
    asked_colour,
    entries_offering,
)
from .placing import (
    above_as_asked,
    aimed_as_asked,
    below_as_asked,
    changed_as_asked,
    framed_as_asked,
    looking_as_asked,
    placed_as_asked,
    rested_as_asked,
    spaced_as_asked,
)
from .sizing import (
    sized_as_asked,
)
from .unmade import (
    SIDE_NAME,
    as_named,
    described,
    head_of,
    kind_of,
    makes_another_kind,
    named_in,
    noun_phrase,
)

__all__ = [
    "RESTING_ARGUMENT",
    "aimed_as_asked",
    "as_asked",
    "changed_as_asked",
    "framed_as_asked",
    "kind_as_asked",
    "looks_as_asked",
    "named_as_asked",
    "placed_as_asked",
    "rested_as_asked",
    "side_name_as_asked",
    "sized_as_asked",
    "spaced_as_asked",
    "worded_as_asked",
]

logger = logging.getLogger("agentsdk_openai.local")


def as_asked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """The response with its calls mended by all sixteen checks (the same response when
    nothing needed mending)."""
    if not response.tool_calls:
        return response
    response = changed_as_asked(request, side_name_as_asked(request, response))
    response = framed_as_asked(request, aimed_as_asked(request, response))
    if not any(tool.creates for tool in request.tools):
        return response
    for check in (
        named_as_asked, kind_as_asked, light_as_asked, looks_as_asked, sized_as_asked,
        placed_as_asked, rested_as_asked, spaced_as_asked, looking_as_asked, below_as_asked,
        above_as_asked, worded_as_asked,
    ):  # fmt: skip
        response = check(request, response)
    return response


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


_WORDED = re.compile(
    r"\b(?:that|which)?\s*(?:says|shows|showing|reads|reading|displays|displaying|saying)"
    r"(?:\s+the\s+(?:text|words?))?\s+"
    r"(?:[\"'“‘]([^\"'”’]+)[\"'”’]|(.+?))"
    r"(?=\s*(?:[,;.!?](?:\s|$)|$|\s+(?:and|with|at|below|under|above|beside|next|in|on)\b))"
    r"|\bwith\s+the\s+(?:text|words?|label)\s+(?:[\"'“‘]([^\"'”’]+)[\"'”’]|(.+?))"
    r"(?=\s*(?:[,;.!?](?:\s|$)|$|\s+(?:and|with|at|below|under|above|beside|next|in|on)\b))",
    re.IGNORECASE,
)
"""The words a request gives a part to show: "that says Hello", "showing 0", "that shows the
text Welcome", "with the text 'Game Over'"."""
_TEXT = "text"


def worded_as_asked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """Each call that makes a part the request gives words to show ("a Label named Score
    ... that says 0") with those words as its ``text``, where the call gives none: the
    tool's own ``text`` argument, else a ``text`` entry of the dict argument whose
    description shows one (Godot's ``properties``, ``{..., "text": "Hi"}``). On new users'
    prompt s25/9 the 1.5B model made the Label Score at (20, 20) with no text in two runs of
    three."""
    text = _asked(request)

    def mend(made: _Made) -> dict[str, Any] | None:
        if made.name is None or kind_of(head_of(text, made.name)) is not None:
            return None  # a shape, a light or a camera "showing" something shows no words
        found = _WORDED.search(_without(described(text, made.name), made.name))
        if found is None:
            return None
        words = next(g for g in found.groups() if g is not None).strip()
        bare = re.sub(r"^(?:the|a|an)\s+", "", words, flags=re.IGNORECASE).lower()
        if not words or bare in named_lower:
            return None  # "showing the ball": another part, not words
        properties = made.tool.parameters.get("properties") or {}
        arguments = dict(made.call.arguments)
        if _TEXT in properties:
            if arguments.get(_TEXT):
                return None
            arguments[_TEXT] = words
        else:
            key = entries_offering(properties, _TEXT)
            if key is None:
                return None
            given = arguments.get(key)
            entries = dict(given) if isinstance(given, dict) else {}
            if given is not None and not isinstance(given, dict):
                return None  # given its own way
            if entries.get(_TEXT):
                return None
            entries[_TEXT] = words
            arguments[key] = entries
        logger.info("%s for %r shows %r as asked", made.call.name, made.name, words)
        return arguments

    named_lower = {n.lower() for n in named_in(text)}
    return _mend(request, response, mend)


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


_LIGHT_KIND = re.compile(
    r"\b(spot|point|omni|directional|sun|area|ambient|hemisphere)[\s-]*lights?\b"
    r"|\b(spotlight|sunlight|sun|bulb)\b",
    re.IGNORECASE,
)
"""A kind of light the words before a light's name give: "a spot light", "an omni light"."""

_LIGHT_KINDS = {
    "spot": "spot", "spotlight": "spot", "point": "point", "omni": "point", "bulb": "point",
    "directional": "directional", "sun": "directional",
    "sunlight": "directional", "area": "area", "ambient": "ambient",
    "hemisphere": "hemisphere",
}  # fmt: skip
"""A light word -> the kind it means (a sun is a directional light, an omni a point)."""

_LIGHT_CLASS = re.compile(r"^(Directional|Omni|Spot)Light(3D)?$")
_LIGHT_CLASSES = {"directional": "Directional", "point": "Omni", "spot": "Spot"}
_KIND_ARGUMENTS = ("kind", "type", "light_type")


def _light_kind(value: str) -> str | None:
    """The kind a light kind argument gives: an enum value (``point``, ``SUN``) or a
    Godot class (``OmniLight``)."""
    found = _LIGHT_CLASS.match(value.strip())
    if found is not None:
        return {v: k for k, v in _LIGHT_CLASSES.items()}[found.group(1)]
    return _LIGHT_KINDS.get(value.strip().lower())


def light_as_asked(request: ModelRequest, response: ModelResponse) -> ModelResponse:
    """Each call that makes a light of another kind than the words before its name give
    ("a spot light named Spot", "an omni light named Bulb") made of that kind: the value
    of its kind argument (``kind``, Godot's ``type``) that means it, from the argument's
    enum or the words of its description, or the Godot class of that kind
    (``OmniLight``, ``SpotLight3D``) where the call gives a light class. The words must
    give one kind; a call whose kind is no light's is left alone.

    On new users' prompts the 1.5B model made a DirectionalLight for "an omni light named
    Bulb" (s17/9), "a spot light named Spot" (s24/8) and the Lamp of s20/9."""
    text = _asked(request)

    def mend(made: _Made) -> dict[str, Any] | None:
        tool, call = made.tool, made.call
        if made.name is None:
            return None
        head = head_of(text, made.name)
        if kind_of(head) != "light":
            return None
        said = {
            _LIGHT_KINDS[(m.group(1) or m.group(2)).lower()] for m in _LIGHT_KIND.finditer(head)
        }
        if len(said) != 1:
            return None
        (asked,) = said
        properties = tool.parameters.get("properties") or {}
        for key in _KIND_ARGUMENTS:
            given = call.arguments.get(key)
            if key not in properties or not isinstance(given, str):
                continue
            kind = _light_kind(given)
            if kind is None or kind == asked:
                return None
            schema = properties[key]
            found = _LIGHT_CLASS.match(given.strip())
            if found is not None and asked in _LIGHT_CLASSES:
                value: str | None = f"{_LIGHT_CLASSES[asked]}Light{found.group(2) or ''}"
            else:
                values = (
                    [str(v) for v in schema.get("enum", [])] if isinstance(schema, dict) else []
                ) or sorted(_values(schema))
                value = next((v for v in values if _LIGHT_KINDS.get(v.lower()) == asked), None)
            if value is None:
                return None
            logger.info("%s for %r: a %s light as asked (%s)", call.name, made.name, asked, value)
            return {**call.arguments, key: value}
        return None

    return _mend(request, response, mend)


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


_COLOURED = re.compile(r"colou?r|albedo|material", re.IGNORECASE)


def _one(found: list[str]) -> str | None:
    return found[0] if len(set(found)) == 1 else None


def _asked_shape(head: str) -> tuple[str, ...]:
    word = _one([m.group(1).lower() for m in _SHAPE_WORD.finditer(head)])
    return () if word is None else _SAME_SHAPE.get(word, (word,))


_WRITTEN_COLOUR = re.compile(
    r"\s*(?:Color\s*\(\s*[-\d.,\s]+\)|#[0-9a-f]{3,8}|\w+(?:[\s-]\w+)?)\s*", re.IGNORECASE
)
"""A colour as a value among a dict argument's entries: ``Color( 1, 0, 0, 1 )``, a hex or
a name (one word, or a shade and a word)."""

_COLOUR_KEY = re.compile(r"colou?r|albedo", re.IGNORECASE)


def _coloured(arguments: dict[str, Any], key: str, colour: str) -> dict[str, Any]:
    """The call in the colour asked: given as the colour argument ``key`` where the call
    gives none, or gives a colour word of another colour; a colour the call writes among a
    dict argument's entries (Godot's ``properties: {"color": "Color( 1, 0, 0, 1 )"}``)
    goes, and the argument says the colour asked (s24/8: "a yellow cube named Target" was
    made with a red ``Color`` among its properties). A material the call names its own way
    is kept, and so is every call colouring it so."""
    given = arguments.get(key)
    if given is not None:
        said = asked_colour(str(given)) if isinstance(given, str) else None
        words = isinstance(given, str) and _COLOUR_WORD.fullmatch(given.strip()) is not None
        return {**arguments, key: colour} if words and said != colour else arguments
    written = {
        name: [
            k for k, v in value.items()
            if _COLOUR_KEY.search(str(k)) and isinstance(v, str) and _WRITTEN_COLOUR.fullmatch(v)
        ]
        for name, value in arguments.items()
        if isinstance(value, dict)
    }  # fmt: skip
    if any(re.search("material", k, re.I) and not _COLOUR_KEY.search(k) for k in arguments):
        return arguments  # a material argument of its own
    values = [arguments[name][k] for name, keys in written.items() for k in keys]
    if values and all(asked_colour(v) == colour and _COLOUR_WORD.fullmatch(v.strip())
                      for v in values):  # fmt: skip
        return arguments  # the colour asked, by its name: kept where the call wrote it
    for name, value in arguments.items():
        if isinstance(value, dict):
            others = [k for k in value if _COLOURED.search(str(k)) and k not in written[name]]
            if others:
                return arguments  # a material among the entries: the call's own way
    mended = {
        name: {k: v for k, v in value.items() if k not in written.get(name, [])}
        if isinstance(value, dict)
        else value
        for name, value in arguments.items()
    }
    return {**mended, key: colour}


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
        colour = asked_colour(head)
        key = next((k for k in COLOUR_ARGUMENTS if k in properties), None)
        if colour is not None and key is not None:
            arguments = _coloured(arguments, key, colour)
        if arguments == call.arguments:
            return None
        logger.info("%s for %r made as asked: %s", call.name, made.name, arguments)
        return arguments

    return _mend(request, response, mend)
