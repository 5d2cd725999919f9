"""``rest_on`` for Godot nodes: put a node's bottom on the ground (y = 0) or on another node's top,
measured from the scene as the engine builds it, so a small model never does the arithmetic.

The move is worked out in world space from the harness's bounds and applied to the node's local
``translation`` (or the origin of its ``transform``). That is exact when the parent is neither
rotated nor scaled, which is how scenes are usually built; otherwise the second measurement says
how far off the result is rather than claiming contact.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentsdk_godot.measure import NodeBounds, SceneMeasurements
from agentsdk_godot.scene import NodeEntry
from agentsdk_godot.validation import ClassCatalog
from agentsdk_godot.variant import Constructor, Variant, vector3
from agentsdk_godot.versions import GodotDialect

__all__ = [
    "GROUND",
    "FlatNode",
    "Move",
    "current_origin",
    "flat_node",
    "is_measured",
    "plan_rest",
    "set_origin",
    "stored_vector2",
]

GROUND = "ground"
"""``rest_on`` value meaning the plane y = 0 (unless a node has exactly that path)."""

TOLERANCE = 0.01


@dataclass(frozen=True)
class Move:
    """How far to move a node (world units) so it rests where it was asked to."""

    delta: tuple[float, float, float]
    top: float
    support: str  # "ground" or the support's node path


@dataclass(frozen=True)
class FlatNode:
    """What a node that is not 3D is, for an error that says how to place it instead."""

    kind: str  # "a Control (2D user interface)"
    position: str | None  # the property that places it ("rect_position", "position"), if any


_FLAT_KINDS = (("Control", "a Control (2D user interface)"), ("Node2D", "a Node2D (2D)"))


def flat_node(catalog: ClassCatalog, dialect: GodotDialect, cls: str | None) -> FlatNode | None:
    """What class `cls` is when the engine says it is not a 3D node (Spatial in Godot 3,
    Node3D in Godot 4), which has no 3D bounds to rest; None for a 3D node or one not known."""
    if not cls or catalog.is_a(cls, dialect.class_name("Spatial")) is not False:
        return None
    known = catalog.properties(cls) or []
    for base, kind in _FLAT_KINDS:
        if catalog.is_a(cls, base):  # Godot 3 places a Control with rect_position, Godot 4 position
            place = next((p for p in ("rect_position", "position") if p in known), None)
            return FlatNode(kind, place)
    return FlatNode("a node with no place in space", None)


def stored_vector2(value: Variant) -> tuple[float, float] | None:
    """A stored Vector2's numbers (None when it is something else)."""
    if isinstance(value, Constructor) and value.name == "Vector2" and len(value.args) == 2:
        x, y = (_number(a) for a in value.args)
        if x is not None and y is not None:
            return x, y
    return None


def _number(value: Variant) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def current_origin(node: NodeEntry) -> tuple[float, float, float]:
    """The node's local position as the scene file stores it ((0, 0, 0) when it stores none)."""
    text = node.properties.get("translation")
    if isinstance(text, Constructor) and text.name == "Vector3" and len(text.args) == 3:
        parts = [_number(a) for a in text.args]
        if all(p is not None for p in parts):
            return (parts[0] or 0.0, parts[1] or 0.0, parts[2] or 0.0)
    form = node.properties.get("transform")
    if isinstance(form, Constructor) and form.name == "Transform" and len(form.args) == 12:
        parts = [_number(a) for a in form.args[9:]]
        if all(p is not None for p in parts):
            return (parts[0] or 0.0, parts[1] or 0.0, parts[2] or 0.0)
    return (0.0, 0.0, 0.0)


def set_origin(node: NodeEntry, origin: tuple[float, float, float]) -> None:
    """Store a new local position where the node keeps it (its transform's origin, or translation)."""
    rounded = tuple(round(c, 6) + 0.0 for c in origin)
    form = node.properties.get("transform")
    if isinstance(form, Constructor) and form.name == "Transform" and len(form.args) == 12:
        node.properties["transform"] = Constructor("Transform", form.args[:9] + rounded)
        return
    node.properties["translation"] = vector3(*rounded)


def plan_rest(found: SceneMeasurements, path: str, support: str, *, centre: bool) -> Move:
    """The world move that puts `path`'s bottom on `support` (centred on it when `centre`).

    Raises KeyError with a message for the model when either node draws nothing or is missing.
    """
    mine = _drawn(
        found,
        path,
        "no bottom to stand on anything: give it a mesh (a MeshInstance with "
        'mesh = "CubeMesh()") or add its meshes under it first, then rest it',
    )
    assert mine.min is not None
    if support == GROUND and not is_measured(found, support):
        return Move((0.0, -mine.min[1], 0.0), 0.0, GROUND)
    under = _drawn(
        found,
        support,
        f'no top for anything to stand on: rest on "{GROUND}" or on a node with a mesh',
    )
    if under.path == mine.path:
        raise KeyError(f"{path} cannot rest on itself")
    lo, hi = found.support_box(under.path, mine.path)  # a child is not part of its support
    dx = dz = 0.0
    if centre:
        dx = (lo[0] + hi[0]) / 2 - mine.centre[0]
        dz = (lo[2] + hi[2]) / 2 - mine.centre[2]
    return Move((dx, hi[1] - mine.min[1], dz), hi[1], under.path)


def _drawn(found: SceneMeasurements, path: str, otherwise: str) -> NodeBounds:
    node = found.node(path)
    if not node.has_bounds:
        raise KeyError(f"{node.path} ({node.type}) draws nothing, so it has {otherwise}")
    return node


def is_measured(found: SceneMeasurements, path: str) -> bool:
    """Whether the measurements have this node (only 3D nodes are measured)."""
    try:
        found.node(path)
    except KeyError:
        return False
    return True
