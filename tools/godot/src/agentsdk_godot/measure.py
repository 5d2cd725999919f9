"""Measurements of a scene as the engine builds it: world bounds, distances, contact, overlap and
framing, with pass/fail checks that return `agentsdk.vision.AssertResult`.

The harness loads the scene headless, lets it run a frame (so `_ready` has moved things), and
dumps, for every Spatial, its world origin and axes and the world AABB of its geometry and its
descendants' (`VisualInstance.get_transformed_aabb`, merged), plus where the current camera
projects the AABB's corners at the screenshot's size, and each Camera's lens. Everything below is computed from that.
"""

from __future__ import annotations

import math
from typing import Any

from agentsdk.vision import AssertResult
from pydantic import BaseModel, Field

__all__ = ["CameraInfo", "NodeBounds", "SceneMeasurements", "ViewInfo"]

Vec = tuple[float, float, float]


class ViewInfo(BaseModel):
    """The frame the camera projects into."""

    width: int
    height: int
    camera: str = Field("", description="node path of the current camera ('' = none)")
    root: str = Field("", description="name of the scene's root node")


class CameraInfo(BaseModel):
    """A Camera's lens as the engine has it (Godot 3: `projection` 0 perspective, 1 orthogonal,
    2 frustum; `keep_aspect` 0 keeps the width, 1 the height)."""

    fov: float = 70.0
    near: float = 0.05
    far: float = 100.0
    projection: int = 0
    size: float = 1.0
    keep_aspect: int = 1


class NodeBounds(BaseModel):
    """One Spatial node: where it is, and the box around what it draws."""

    path: str
    type: str
    origin: Vec
    basis: tuple[Vec, Vec, Vec] | None = Field(
        None, description="world x, y and z axes (columns of the global basis)"
    )
    geometry: bool = Field(False, description="a GeometryInstance: its own box is what it draws")
    camera: CameraInfo | None = Field(None, description="the lens, when the node is a Camera")
    min: Vec | None = None
    max: Vec | None = None
    own_min: Vec | None = Field(None, description="its own geometry's bounds, without children")
    own_max: Vec | None = None
    screen: list[tuple[float, float]] = Field(
        default_factory=list, description="projected AABB corners in front of the camera"
    )
    corners_behind: int = 0

    @property
    def has_bounds(self) -> bool:
        """True when the node (or a descendant) draws something."""
        return self.min is not None and self.max is not None

    @property
    def size(self) -> Vec:
        """World AABB size (x, y, z)."""
        lo, hi = self._box()
        return (hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2])

    @property
    def centre(self) -> Vec:
        """World AABB centre."""
        lo, hi = self._box()
        return ((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2)

    def _box(self) -> tuple[Vec, Vec]:
        if self.min is None or self.max is None:
            raise ValueError(f"{self.path} draws nothing: it has no bounds")
        return self.min, self.max


class SceneMeasurements(BaseModel):
    """Every Spatial of a scene with its bounds, and the camera's frame."""

    view: ViewInfo
    nodes: list[NodeBounds]

    @classmethod
    def from_dump(cls, dump: dict[str, Any]) -> SceneMeasurements:
        """From the harness's JSON."""
        return cls.model_validate(dump)

    def node(self, path: str) -> NodeBounds:
        """A node by path ("." or the root's name for the root, "Player/Arm" deeper), or by a
        name only one node has."""
        wanted = path.strip().strip("/") or "."
        candidates = [wanted]  # a child's path wins over the root's name
        if self.view.root and wanted == self.view.root:
            candidates.append(".")
        elif self.view.root and wanted.startswith(self.view.root + "/"):
            candidates.append(wanted[len(self.view.root) + 1 :])
        for candidate in candidates:
            for node in self.nodes:
                if node.path == candidate:
                    return node
        if "/" not in wanted:  # a bare name: the one node of that name, wherever it is
            named = [n for n in self.nodes if n.path.rsplit("/", 1)[-1] == wanted]
            if len(named) == 1:
                return named[0]
            if named:
                paths = ", ".join(n.path for n in named)
                raise KeyError(f"{len(named)} nodes are named {path!r} ({paths}): give the path")
        known = ", ".join(n.path for n in self.nodes[:30])
        raise KeyError(f"no node {path!r} in the scene (nodes: {known})")

    def bounded(self, path: str) -> NodeBounds:
        """A node that draws something (else a KeyError that says so)."""
        node = self.node(path)
        if not node.has_bounds:
            raise KeyError(
                f"{node.path} ({node.type}) draws nothing: measure a MeshInstance or a node "
                "with meshes under it"
            )
        return node

    def support_box(self, support: str, top: str) -> tuple[Vec, Vec]:
        """`support`'s world bounds without `top` and what is under it.

        A node's bounds include its children's, so a crate added as a child of the floor
        would otherwise be measured against a floor that already contains it.
        """
        ns, nt = self.bounded(support), self.node(top)
        if not _under(nt.path, ns.path):
            assert ns.min is not None and ns.max is not None
            return ns.min, ns.max
        boxes = [
            (n.own_min, n.own_max)
            for n in self.nodes
            if n.own_min is not None
            and n.own_max is not None
            and (n.path == ns.path or _under(n.path, ns.path))
            and not (n.path == nt.path or _under(n.path, nt.path))
        ]
        if not boxes:
            raise KeyError(
                f"{ns.path} draws nothing but {nt.path}, which is under it: rest {nt.path} on "
                "another node"
            )
        lo = tuple(min(b[0][i] for b in boxes) for i in range(3))
        hi = tuple(max(b[1][i] for b in boxes) for i in range(3))
        return (lo[0], lo[1], lo[2]), (hi[0], hi[1], hi[2])

    # ---------- checks

    def dimensions(self, path: str) -> AssertResult:
        """World bounds of a node (always passes: a measurement in the shape of a check)."""
        n = self.bounded(path)
        return AssertResult(
            check=f"dimensions of {n.path}",
            passed=True,
            measured={
                "size": _r(n.size),
                "centre": _r(n.centre),
                "min": _r(n.min or (0, 0, 0)),
                "max": _r(n.max or (0, 0, 0)),
            },
            message=f"{n.path}: size {_fmt(n.size)}, centre {_fmt(n.centre)}, "
            f"from {_fmt(n.min or (0, 0, 0))} to {_fmt(n.max or (0, 0, 0))}",
        )

    def distance(
        self, a: str, b: str, minimum: float | None = None, maximum: float | None = None
    ) -> AssertResult:
        """Distance between two nodes' bounds centres (and the gap between the boxes)."""
        na, nb = self.bounded(a), self.bounded(b)
        centre = math.dist(na.centre, nb.centre)
        gap = _box_gap(na, nb)
        low = -math.inf if minimum is None else minimum
        high = math.inf if maximum is None else maximum
        passed = low <= centre <= high
        wanted = _range_text(minimum, maximum)
        return AssertResult(
            check=f"distance {na.path} - {nb.path}" + (f" in {wanted}" if wanted else ""),
            passed=passed,
            measured={"centre_distance": round(centre, 4), "gap": round(gap, 4)},
            message=f"centres {centre:.3f} apart, boxes {gap:.3f} apart"
            + ("" if passed else f"; wanted {wanted}"),
        )

    def rests_on(self, top: str, support: str, tolerance: float = 0.02) -> AssertResult:
        """`top`'s bottom touches `support`'s top (within `tolerance`) over their common footprint."""
        nt, ns = self.bounded(top), self.bounded(support)
        lo, hi = self.support_box(support, top)
        assert nt.min is not None and nt.max is not None
        gap = nt.min[1] - hi[1]
        overlap_x = min(nt.max[0], hi[0]) - max(nt.min[0], lo[0])
        overlap_z = min(nt.max[2], hi[2]) - max(nt.min[2], lo[2])
        above = nt.centre[1] > (lo[1] + hi[1]) / 2
        passed = abs(gap) <= tolerance and overlap_x > 0 and overlap_z > 0 and above
        if passed:
            why = f"{nt.path} sits on {ns.path} (gap {gap:+.3f})"
        elif not (overlap_x > 0 and overlap_z > 0):
            why = f"{nt.path} is not above {ns.path}: their footprints do not overlap"
        elif gap > tolerance:
            why = f"{nt.path} floats {gap:.3f} above {ns.path}: lower it by {gap:.3f}"
        elif gap < -tolerance and above:
            why = f"{nt.path} sinks {-gap:.3f} into {ns.path}: raise it by {-gap:.3f}"
        else:
            why = f"{nt.path} is below {ns.path}'s top"
        return AssertResult(
            check=f"{nt.path} rests on {ns.path}",
            passed=passed,
            measured={
                "gap": round(gap, 4),
                "overlap_x": round(max(0.0, overlap_x), 4),
                "overlap_z": round(max(0.0, overlap_z), 4),
            },
            tolerance=tolerance,
            message=why,
        )

    def overlap(self, a: str, b: str, expected: bool = False) -> AssertResult:
        """Whether two nodes' bounds intersect (the check passes when that is `expected`)."""
        na, nb = self.bounded(a), self.bounded(b)
        assert na.min and na.max and nb.min and nb.max
        extents = [min(na.max[i], nb.max[i]) - max(na.min[i], nb.min[i]) for i in range(3)]
        volume = math.prod(max(0.0, e) for e in extents)
        overlapping = all(e > 0 for e in extents)
        state = "overlap" if overlapping else "do not overlap"
        return AssertResult(
            check=f"{na.path} and {nb.path} {'overlap' if expected else 'do not overlap'}",
            passed=overlapping == expected,
            measured={
                "overlapping": overlapping,
                "volume": round(volume, 6),
                "gap": round(_box_gap(na, nb), 4),
            },
            message=f"{na.path} and {nb.path} {state}"
            + (f" (shared volume {volume:.4f})" if overlapping else ""),
        )

    def in_frame(self, path: str, margin: float = 0.0) -> AssertResult:
        """Every corner of the node's bounds is in front of the camera and inside the frame."""
        n = self.bounded(path)
        w, h = self.view.width, self.view.height
        if not self.view.camera:
            return AssertResult(
                check=f"{n.path} is in frame",
                passed=False,
                measured={"corners_behind": 0, "fraction_inside": 0.0},
                message="the scene has no current camera: add a Camera node",
            )
        xs = [p[0] for p in n.screen]
        ys = [p[1] for p in n.screen]
        inside = sum(
            1 for x, y in n.screen if margin <= x <= w - margin and margin <= y <= h - margin
        )
        passed = n.corners_behind == 0 and inside == 8
        sides = []
        if xs and min(xs) < margin:
            sides.append("left")
        if xs and max(xs) > w - margin:
            sides.append("right")
        if ys and min(ys) < margin:
            sides.append("top")
        if ys and max(ys) > h - margin:
            sides.append("bottom")
        if passed:
            why = f"{n.path} is inside the {w}x{h} frame"
        elif n.corners_behind == 8:
            why = f"{n.path} is behind the camera"
        elif n.corners_behind:
            why = f"{n.path} reaches behind the camera: move the camera back"
        else:
            why = f"{n.path} sticks out on the {'/'.join(sides)}: move the camera back or aim at it"
        measured: dict[str, float | int | str | bool | list[float]] = {
            "corners_behind": n.corners_behind,
            "fraction_inside": inside / 8,
        }
        if xs:
            measured["screen_box"] = [
                round(min(xs), 1),
                round(min(ys), 1),
                round(max(xs), 1),
                round(max(ys), 1),
            ]
        return AssertResult(
            check=f"{n.path} is in frame", passed=passed, measured=measured, message=why
        )


def _under(path: str, ancestor: str) -> bool:
    """True when `path` is strictly below `ancestor` ("." is the root)."""
    return path != ancestor and (ancestor == "." or path.startswith(ancestor + "/"))


def _box_gap(a: NodeBounds, b: NodeBounds) -> float:
    assert a.min and a.max and b.min and b.max
    parts = [max(0.0, a.min[i] - b.max[i], b.min[i] - a.max[i]) for i in range(3)]
    return math.sqrt(sum(p * p for p in parts))


def _r(v: Vec) -> list[float]:
    return [round(c, 4) for c in v]


def _fmt(v: Vec) -> str:
    return "(" + ", ".join(f"{c:.3g}" for c in v) + ")"


def _range_text(minimum: float | None, maximum: float | None) -> str:
    if minimum is None and maximum is None:
        return ""
    if minimum is None:
        return f"<= {maximum}"
    if maximum is None:
        return f">= {minimum}"
    return f"[{minimum}, {maximum}]"
