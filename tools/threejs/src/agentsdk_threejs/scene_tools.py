"""The goal-level scene tools: typed operations a small model can call without writing three.js.

Each tool becomes one operation for ``static/ops.js`` (add / update / remove an object by
name, lights, camera, fit-to-view); the page applies it and renders, and the model gets back
what changed, what the scene holds, the visibility report and the picture.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, get_args

from pydantic import AfterValidator, BeforeValidator, WithJsonSchema

from agentsdk import Image, Tool, ToolContext, Unchanged, tool
from agentsdk_threejs.report import ViewName

Applied = list[str | Image] | Unchanged
"""What a typed operation gives the model: the text and the frames, marked :class:`Unchanged`
when the operations left the scene as it was."""

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _numbers(value: Any) -> Any:
    """Accept what small models send for a list of numbers: 2, "1, 2, 3", {"x": 1, ...}."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return [value]
    if isinstance(value, str):
        found = _NUMBER.findall(value)
        return [float(v) for v in found] if found else value
    if isinstance(value, dict) and value and set(value) <= {"x", "y", "z"}:
        return [value.get(axis, 0) for axis in ("x", "y", "z")]
    return value


_POINT_TEXT = re.compile(r"[\s,;()\[\]]*(?:" + _NUMBER.pattern + r"[\s,;()\[\]]*)+")


def _point_or_name(value: Any) -> Any:
    """A point (as ``_numbers`` reads it) or an object's name; "" is not given."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        return _numbers(text) if _POINT_TEXT.fullmatch(text) else text
    return _numbers(value)


def _given(value: Any) -> Any:
    """ "" (what small models send for "not given") is not given."""
    return None if isinstance(value, str) and not value.strip() else value


def _names(value: Any) -> Any:
    """One name or a comma-separated string becomes a list of names."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def _counted(low: int, high: int) -> Any:
    def check(value: list[float] | None) -> list[float] | None:
        if value is not None and not low <= len(value) <= high:
            count = f"{low}" if low == high else f"{low} to {high}"
            raise ValueError(f"give {count} numbers, e.g. [1, 2, 3]; got {len(value)}")
        return value

    return check


def _length(low: int, high: int) -> Any:
    return AfterValidator(_counted(low, high))


_check_point = _counted(3, 3)


# Optional fields show the model a plain type (no anyOf with null): short, flat schemas suit
# small models; a null sent anyway still validates as "not given".
_NUMBER_LIST = {"type": "array", "items": {"type": "number"}}
Vec3 = Annotated[
    list[float] | None,
    BeforeValidator(_numbers),
    _length(3, 3),
    WithJsonSchema({**_NUMBER_LIST, "minItems": 3, "maxItems": 3}),
]
Numbers = Annotated[
    list[float] | None,
    BeforeValidator(_numbers),
    _length(1, 3),
    WithJsonSchema({**_NUMBER_LIST, "minItems": 1, "maxItems": 3}),
]
# look_at / target: a point, or an object's name (the page aims at the centre of its world box).
Target = Annotated[
    list[float] | str | None,
    BeforeValidator(_point_or_name),
    AfterValidator(lambda value: value if isinstance(value, str) else _check_point(value)),
    WithJsonSchema({"anyOf": [{**_NUMBER_LIST, "minItems": 3, "maxItems": 3}, {"type": "string"}]}),
]
RestOn = Annotated[str | None, BeforeValidator(_given), WithJsonSchema({"type": "string"})]
# add_light's above: an object's name; "" is not given, like rest_on.
Above = Annotated[str | None, BeforeValidator(_given), WithJsonSchema({"type": "string"})]


def _not_negative(value: float | None) -> float | None:
    if value is not None and value < 0:
        raise ValueError(f"gap must be 0 or more; got {value:g}")
    return value


# add_light's gap above the object's top: checked here, so a negative one is an argument error
# before the page is asked (the page checks it too, for operations sent some other way). No
# "minimum" in the schema: the message says it, and the schema stays short.
Gap = Annotated[
    float | None,
    BeforeValidator(_given),
    AfterValidator(_not_negative),
    WithJsonSchema({"type": "number"}),
]
Names = Annotated[
    list[str] | None,
    BeforeValidator(_names),
    WithJsonSchema({"type": "array", "items": {"type": "string"}}),
]
OptStr = Annotated[str | None, WithJsonSchema({"type": "string"})]
OptFloat = Annotated[float | None, WithJsonSchema({"type": "number"})]
OptBool = Annotated[bool | None, WithJsonSchema({"type": "boolean"})]
OptView = Annotated[
    ViewName | None, WithJsonSchema({"type": "string", "enum": list(get_args(ViewName))})
]
OptViews = Annotated[
    list[ViewName] | None,
    WithJsonSchema(
        {"type": "array", "items": {"type": "string", "enum": list(get_args(ViewName))}}
    ),
]

SIZE_DOC = (
    "box [width, height, depth]; sphere [radius]; cylinder, cone, pyramid, capsule "
    "[radius, height]; plane (flat, a floor) [width, depth]; circle [radius]; torus "
    "[radius, tube]; one number = every dimension"
)


def _op(operation: str, /, **fields: Any) -> dict[str, Any]:
    """An operation for the page, without the fields the model left out."""
    return {"op": operation, **{key: value for key, value in fields.items() if value is not None}}


class SceneTools:
    """Mixed into :class:`ThreeJSToolkit`: the typed operations of the ``core`` group."""

    async def _apply(
        self, ops: list[dict[str, Any]], ctx: ToolContext | None, views: list[str] | None = None
    ) -> Applied:
        raise NotImplementedError  # provided by ThreeJSToolkit

    @tool(side_effects=True, creates="name")
    async def add_object(
        self,
        name: str,
        shape: str = "box",
        size: Numbers = None,
        color: str = "lightgrey",
        position: Vec3 = None,
        rest_on: RestOn = None,
        ctx: ToolContext | None = None,
    ) -> Applied:
        """Add a new named object and render it (update_object changes an existing one,
        and turns, scales or fades it).

        Args:
            name: unique name.
            shape: box, sphere, cylinder, cone, pyramid, plane (flat floor), circle, torus, capsule.
            size: box [w, h, d]; sphere [r]; cylinder, cone, capsule [r, h]; plane [w, d]; torus [r, tube].
            color: name (red) or hex (#ff8800).
            position: centre [x, y, z]; y is up.
            rest_on: "ground" or an object to stand on (centred on it unless position is given).
        """
        # No rotation, scale or opacity here (update_object has them): offered them, the
        # small local models filled each one in on nearly every call (rotation 79, scale 78,
        # opacity 94 of 122 calls in the three.js evals), ~24 tokens a call at ~20 tokens/s,
        # and 19 of the opacities were not 1, though no request asked for one.
        op = _op(
            "add",
            name=name,
            shape=shape,
            size=size,
            color=color,
            position=position,
            rest_on=rest_on,
        )
        return await self._apply([op], ctx)

    @tool(side_effects=True)
    async def update_object(
        self,
        name: str,
        color: OptStr = None,
        position: Vec3 = None,
        rotation: Vec3 = None,
        scale: Numbers = None,
        size: Numbers = None,
        shape: OptStr = None,
        opacity: OptFloat = None,
        visible: OptBool = None,
        rest_on: RestOn = None,
        ctx: ToolContext | None = None,
    ) -> Applied:
        """Change an object or light by name; only the fields given change.

        Args:
            name: the object's name.
            visible: false hides it.
            rest_on: then put it on "ground" or on an object (centred unless position is given).
        """
        op = _op(
            "update",
            name=name,
            color=color,
            position=position,
            rotation=rotation,
            scale=scale,
            size=size,
            shape=shape,
            opacity=opacity,
            visible=visible,
            rest_on=rest_on,
        )
        return await self._apply([op], ctx)

    @tool(side_effects=True)
    async def remove_object(self, name: str, ctx: ToolContext | None = None) -> Applied:
        """Remove an object or light by name.

        Args:
            name: the object's name.
        """
        return await self._apply([_op("remove", name=name)], ctx)

    @tool(side_effects=True, creates="name")
    async def add_light(
        self,
        kind: str = "directional",
        name: OptStr = None,
        color: str = "white",
        intensity: OptFloat = None,
        position: Vec3 = None,
        target: Target = None,
        above: Above = None,
        gap: Gap = None,
        ctx: ToolContext | None = None,
    ) -> Applied:
        """Add a light (replaces one of the same name).

        Args:
            kind: ambient, hemisphere, directional, point or spot.
            name: default: the kind.
            intensity: default: ambient 0.6, directional 2.5, point 3, spot 4.
            target: a point or an object's name that directional and spot lights aim at.
            above: an object's name: the light goes over its centre, gap above its top.
            gap: distance above that object's top (default 1).
        """
        # "A point light 2 above the hedge": small models cannot add the hedge's height to
        # its position (the 1.5B model sent [0, 1, 2], s25/3); the page measures the
        # object's world box. above wins over a position, and the result says so; a
        # directional or spot light put over an object and aimed nowhere aims at it.
        op = _op(
            "light",
            kind=kind,
            name=name,
            color=color,
            intensity=intensity,
            position=position,
            target=target,
            above=above,
            gap=gap,
        )
        return await self._apply([op], ctx)

    @tool(side_effects=True)
    async def set_camera(
        self,
        position: Vec3 = None,
        look_at: Target = None,
        fov: OptFloat = None,
        ctx: ToolContext | None = None,
    ) -> Applied:
        """Place the camera; fields left out keep their value.

        Args:
            look_at: a point or an object's name.
            fov: vertical field of view, degrees.
        """
        return await self._apply([_op("camera", position=position, look_at=look_at, fov=fov)], ctx)

    @tool(side_effects=True)
    async def fit_view(
        self,
        names: Names = None,
        view: OptView = None,
        margin: float = 1.15,
        ctx: ToolContext | None = None,
    ) -> Applied:
        """Move the camera so the objects fill the frame.

        Args:
            names: default: all objects.
            view: front, back, side, left, top (from above), bottom or iso; default: the current direction.
            margin: 1 = edge to edge, below 1 crops.
        """
        chosen = None if view == "camera" else view
        return await self._apply([_op("fit", names=names, view=chosen, margin=margin)], ctx)

    @tool
    async def render(
        self,
        views: OptViews = None,
        ctx: ToolContext | None = None,
    ) -> Applied:
        """Render and report what is visible (every tool result already reports the camera view).

        Args:
            views: the views to render, such as ["top"]; default: the camera.
        """
        return await self._apply([], ctx, views=list(views) if views else None)


def _without_null_defaults(schema: dict[str, Any]) -> dict[str, Any]:
    """``"default": null`` only says "optional", which leaving a field out of ``required``
    already says: drop it to keep the schema short."""
    properties = {
        name: {
            key: value for key, value in field.items() if not (key == "default" and value is None)
        }
        for name, field in schema.get("properties", {}).items()
    }
    return {**schema, "properties": properties}


for _tool in [value for value in vars(SceneTools).values() if isinstance(value, Tool)]:
    _tool.parameters = _without_null_defaults(_tool.parameters)
