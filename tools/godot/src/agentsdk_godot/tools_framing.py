"""fit_view: put the scene's camera (adding one when there is none) where the named nodes fill
its frame, measured in the engine, then show what the camera sees.

The nodes' world bounds come from the harness (`measurements`); the pose is worked out in
`framing.py` and written as the camera's ``transform`` through the same `PropertyWriter` that
`set_property` uses, under the camera's parent as the engine places it (a moved, turned or
scaled parent is undone). The screenshot after it, with its visibility report, is the check.
"""

from __future__ import annotations

import math
from typing import Annotated, get_args

from agentsdk.vision import VisibilityReport
from pydantic import WithJsonSchema

from agentsdk import Image, ToolContext, ToolError, tool
from agentsdk_godot.diagnostics import Diagnostic, format_diagnostics
from agentsdk_godot.framing import (
    VIEWS,
    Axes,
    Framing,
    ViewName,
    axes_facing,
    corners,
    frame_points,
    local_pose,
    transform_value,
    upright,
)
from agentsdk_godot.measure import CameraInfo, NodeBounds, SceneMeasurements
from agentsdk_godot.properties import PropertyWriter
from agentsdk_godot.scene import NodeEntry, SceneError, SceneFile
from agentsdk_godot.toolkit_base import GodotToolkitBase, OptNames, OptText
from agentsdk_godot.variant import ExtResource, format_variant

__all__ = ["FramingTools"]

OptView = Annotated[
    ViewName | None, WithJsonSchema({"type": "string", "enum": list(get_args(ViewName))})
]

_FRUSTUM = 2
_POSE = ("translation", "rotation_degrees", "rotation", "scale")
"""Camera properties a new ``transform`` replaces (left in the file they would contradict it)."""


def _fmt(v: tuple[float, ...]) -> str:
    return "(" + ", ".join(f"{c:.3g}" if abs(c) >= 1e-4 else "0" for c in v) + ")"


def _under(path: str, ancestor: str) -> bool:
    return path == ancestor or ancestor == "." or path.startswith(ancestor + "/")


def _drawing(found: SceneMeasurements) -> list[NodeBounds]:
    """Nodes with geometry of their own (meshes, sprites, CSG ...; not lights or probes)."""
    return [n for n in found.nodes if n.geometry and n.own_min is not None]


def _meshless(node: NodeBounds, scene: str) -> None:
    """Refuse with the call that fixes it when ``node`` is a MeshInstance without a mesh (the
    1.5B model added Target that way on godot/red-target-in-frame)."""
    if node.type.startswith("MeshInstance") and not node.has_bounds:
        raise ToolError(
            f"{node.path} is a {node.type} without a mesh, so it draws nothing: give it one, "
            f'e.g. set_property(scene="{scene}", node="{node.path}", property="mesh", '
            'value="CubeMesh()"), then fit_view again'
        )


class FramingTools(GodotToolkitBase):
    """fit_view."""

    @tool(side_effects=True)
    async def fit_view(
        self,
        scene: OptText = None,
        names: OptNames = None,
        view: OptView = None,
        margin: float = 1.15,
        camera: OptText = None,
        ctx: ToolContext | None = None,
    ) -> list[str | Image]:
        """Move the camera so the nodes are entirely in frame (adds a Camera if none); shows
        what it then sees.

        Args:
            scene: Default: the main scene.
            names: Nodes to frame (default: all that draw).
            view: Default: the camera's direction.
            margin: 1 = edge to edge, above 1 leaves room.
            camera: Default: the scene's Camera.
        """
        if not 0.5 <= margin <= 10:
            raise ToolError(
                f"margin must be 0.5..10, not {margin}: 1 is edge to edge, 1.15 leaves a little "
                "room, below 1 crops"
            )
        if view is not None and view not in VIEWS:
            raise ToolError(f"unknown view {view!r}; use one of: {', '.join(VIEWS)}")
        chosen = self._scene_or_main(scene)
        doc = self._scene(chosen)
        found = await self.measurements(chosen)
        cam, added = self._camera(doc, found, camera)
        points, framed = self._targets(found, names, cam.path, chosen)
        measured = None if added else found.node(cam.path)
        lens = measured.camera if measured is not None and measured.camera else CameraInfo()
        if lens.projection == _FRUSTUM:
            raise ToolError(
                f"{cam.path} uses a frustum projection: set its projection to 0 (perspective) "
                "first, or frame with another Camera"
            )
        if view is not None:
            axes = axes_facing(VIEWS[view])
        else:
            axes = axes_facing(VIEWS["front"])  # a new camera faces Godot's default way
            if measured is not None and measured.basis is not None:
                try:
                    axes = upright(measured.basis)
                except ValueError:  # scaled to nothing: it faces no way; keep the default
                    pass
        plan = frame_points(points, axes, lens, margin)
        stored = await self._write(chosen, doc, found, cam, plan)
        look = await self.look(chosen, measure=True)
        saved = self._keep(look.png, "fit_view.png", ctx)
        self._reports[saved.resolve()] = look.report
        return [
            self._said(cam, added, plan, stored, framed, view, found, look.measurements)
            + self._seen(look.report, saved.name, look.run.errors),
            Image(look.png),
        ]

    # ---------- which camera, which nodes

    def _camera(
        self, doc: SceneFile, found: SceneMeasurements, name: str | None
    ) -> tuple[NodeEntry, bool]:
        """The scene's Camera to move, and whether it is new (added under the root)."""
        cameras = [n for n in doc.nodes if self._is_camera(n, found)]
        listed = ", ".join(n.path for n in cameras) or "none"
        if name is not None and name.strip():
            entry = self._entry(doc, found, name)
            if entry is None:
                if cameras or "/" in name.strip("/"):
                    raise ToolError(
                        f"no node {name!r} in the scene (cameras: {listed}): name one of them, "
                        "or leave camera out to use the scene's camera"
                    )
                return self._add_camera(doc, name.strip().strip("/")), True
            if entry not in cameras:
                raise ToolError(
                    f"{entry.path} is a {entry.type or 'scene instance'}, not a Camera "
                    f"(cameras: {listed}); leave camera out to use the scene's camera"
                )
            return entry, False
        current = found.view.camera
        if current:
            entry = next((n for n in cameras if n.path == current), None)
            if entry is None:
                raise ToolError(
                    f"the camera the scene shows, {current}, belongs to an instanced scene and "
                    "cannot be moved from here: name a Camera of this scene with camera=..."
                )
            return entry, False
        if cameras:
            return cameras[0], False
        return self._add_camera(doc, "Camera"), True

    @staticmethod
    def _is_camera(node: NodeEntry, found: SceneMeasurements) -> bool:
        measured = next((n for n in found.nodes if n.path == node.path), None)
        return measured is not None and measured.camera is not None

    @staticmethod
    def _entry(doc: SceneFile, found: SceneMeasurements, name: str) -> NodeEntry | None:
        try:
            return doc.node(name)
        except SceneError:
            pass
        try:  # a bare name of a node deeper down
            return doc.node(found.node(name).path)
        except (KeyError, SceneError):
            return None

    def _add_camera(self, doc: SceneFile, name: str) -> NodeEntry:
        taken = {n.path for n in doc.nodes}
        unique, number = name, 2
        while unique in taken:
            unique, number = f"{name}{number}", number + 1
        try:
            return doc.add_node(unique, self.project.dialect.class_name("Camera"), ".")
        except SceneError as err:
            raise ToolError(str(err)) from None

    def _targets(
        self, found: SceneMeasurements, names: list[str] | None, camera: str, scene: str
    ) -> tuple[list[tuple[float, float, float]], list[str]]:
        """The corners of the world boxes of what the named nodes (default: every node) draw,
        without what moves with the camera; and the nodes framed."""
        moves = camera != "."  # what is under the camera moves with it (unless it is the root)
        drawing = [n for n in _drawing(found) if not (moves and _under(n.path, camera))]
        shown = ", ".join(n.path for n in drawing[:20]) or "none"
        wanted = [n for n in names or [] if n.strip()]
        if not drawing:
            for name in wanted:  # a named MeshInstance without a mesh: say that, not "add one"
                try:
                    _meshless(found.node(name), scene)
                except KeyError:
                    pass
            name = wanted[0] if wanted else "Box"
            raise ToolError(
                f"nothing in {scene} draws anything to frame: add a MeshInstance first, e.g. "
                f'add_node(scene="{scene}", name="{name}", type="MeshInstance", '
                'properties={"mesh": "CubeMesh()"})'
            )
        if not wanted:
            boxes = drawing
            framed = [n.path for n in drawing]
        else:
            boxes, framed = [], []
            for name in wanted:
                try:
                    node = found.node(name)
                except KeyError as err:
                    raise ToolError(f"{err.args[0]}; nodes that draw: {shown}") from None
                if moves and _under(node.path, camera):
                    raise ToolError(
                        f"{node.path} moves with the camera {camera}: it cannot be framed by "
                        f"moving it; nodes that draw: {shown}"
                    )
                inside = [n for n in drawing if _under(n.path, node.path)]
                if not inside:
                    _meshless(node, scene)
                    raise ToolError(
                        f"{node.path} ({node.type}) draws nothing to frame; nodes that draw: {shown}"
                    )
                boxes += [n for n in inside if n not in boxes]
                framed.append(node.path)
        points = [
            p
            for n in boxes
            if n.own_min is not None and n.own_max is not None
            for p in corners(n.own_min, n.own_max)
        ]
        return points, framed

    # ---------- writing the camera

    async def _write(
        self,
        scene: str,
        doc: SceneFile,
        found: SceneMeasurements,
        cam: NodeEntry,
        plan: Framing,
    ) -> list[str]:
        """Store the pose (and a lens that does not clip) in the file; what was stored."""
        parent_axes: Axes | None = None
        parent_origin = None
        if cam.parent is not None:
            try:
                parent = found.node(cam.parent)
            except KeyError:
                parent = None  # not a Spatial (a Node root): the camera's pose is its world pose
            if parent is not None:
                parent_axes, parent_origin = parent.basis, parent.origin
        try:
            basis, origin = local_pose(plan.axes, plan.origin, parent_axes, parent_origin)
        except ValueError:
            raise ToolError(
                f"{cam.path}'s parent {cam.parent} is scaled to zero: no pose of the camera "
                "under it can see anything; move the camera under the root"
            ) from None
        catalog = await self._known(doc, [cam.type or ""], [])
        writer = PropertyWriter(doc, catalog, self.project.dialect)
        script_ref = cam.properties.get("script")
        script = next((e.path for e in doc.ext_resources if script_ref == ExtResource(e.id)), None)
        owner = (cam.type, script)
        for key in _POSE:
            cam.properties.pop(key, None)
        style = self.project.dialect.style
        text = format_variant(transform_value(basis, origin), style)
        stored = [f"transform = {await writer.assign(cam.properties, 'transform', text, owner)}"]
        for key, value in (("near", plan.near), ("far", plan.far), ("size", plan.size)):
            if value is not None:
                shown = await writer.assign(cam.properties, key, f"{value:.6g}", owner)
                stored.append(f"{key} = {shown}")
        if not found.view.camera and cam.properties.get("current") is not True:
            stored.append(
                f"current = {await writer.assign(cam.properties, 'current', 'true', owner)}"
            )
        self._save(scene, doc, cam.path, "; ".join(stored))
        return stored

    # ---------- what the model reads

    @staticmethod
    def _said(
        cam: NodeEntry,
        added: bool,
        plan: Framing,
        stored: list[str],
        framed: list[str],
        view: str | None,
        before: SceneMeasurements,
        after: SceneMeasurements | None,
    ) -> str:
        what = ", ".join(framed[:6]) + (f" and {len(framed) - 6} more" if len(framed) > 6 else "")
        side = f"the {view or 'front'} view" if view or added else "its current direction"
        lines = [
            f"{cam.path} moved to {_fmt(plan.origin)}, looking at {_fmt(plan.aim)} to frame "
            f"{what} from {side}, {plan.distance:.3g} away",
            "stored " + "; ".join(stored),
        ]
        if added:
            lines.insert(0, f"the scene had no Camera: added {cam.path} under the root")
        elif "current = true" in stored:
            lines.append(f"made {cam.path} the current camera")
        shows = after.view.camera if after is not None else before.view.camera
        if shows and shows != cam.path:
            lines.append(
                f"note: {shows} is the current camera, so pictures show its view: set "
                f"current = true on {cam.path} (and false on {shows}) to see through it"
            )
        moved = next((n for n in after.nodes if n.path == cam.path), None) if after else None
        if moved is not None:
            if math.dist(moved.origin, plan.origin) > 1e-3 * max(1.0, plan.distance):
                lines.append(
                    f"note: in the running scene {cam.path} is at {_fmt(moved.origin)}, not "
                    f"{_fmt(plan.origin)}: a script or animation moves it"
                )
        return "\n".join(lines)

    @staticmethod
    def _seen(report: VisibilityReport, saved: str, errors: list[Diagnostic]) -> str:
        lines = [f"\nwhat the camera sees now (frame 10, 512x512, saved as {saved}):"]
        if report.blank:
            colour = report.blank_colour or "one colour"
            lines.append(f"WARNING: the frame is blank ({colour}): no light, or nothing in view?")
        lines.append(report.to_text())
        if errors:
            lines.append(format_diagnostics(errors))
        return "\n".join(lines)
