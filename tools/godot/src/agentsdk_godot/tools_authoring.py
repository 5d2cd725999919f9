"""Tools that write the project: scenes, nodes, properties, scripts, imported assets."""

from __future__ import annotations

import json
import math
import re
import shutil
from collections.abc import Callable, Collection
from pathlib import Path

from agentsdk import ToolError, Unchanged, tool
from agentsdk_godot.above import GAP, local_origin, named_node, parent_axes, plan_above
from agentsdk_godot.aim import AIM_KEYS, aim_node, aim_point, facing_basis, popped_aim
from agentsdk_godot.diagnostics import format_diagnostics
from agentsdk_godot.engine import HarnessJob
from agentsdk_godot.node_arguments import (
    COLOUR_NAMES,
    MATERIAL_COLOUR,
    PLACING,
    ArgumentRefused,
    NodeArguments,
    add_node_arguments,
    add_node_call,
    read_misplaced,
)
from agentsdk_godot.project import ProjectPathError
from agentsdk_godot.properties import PropertyWriter, literal
from agentsdk_godot.reports import SceneChange, ScriptCheck, run_report
from agentsdk_godot.rest import (
    GROUND,
    TOLERANCE,
    current_origin,
    flat_node,
    is_measured,
    plan_rest,
    set_origin,
    stored_vector2,
)
from agentsdk_godot.scene import NodeEntry, SceneError, SceneFile
from agentsdk_godot.sizes import SizeError, SizeRefused, parse_size, resize, shown
from agentsdk_godot.toolkit_base import (
    GodotToolkitBase,
    OptColour,
    OptNumber,
    OptPoint,
    OptProperties,
    OptSize,
    OptText,
)
from agentsdk_godot.variant import Constructor, ExtResource, VariantSyntaxError, format_variant

__all__ = ["AuthoringTools", "literal"]


def _node_or_none(doc: SceneFile, path: str) -> NodeEntry | None:
    try:
        return doc.node(path)
    except SceneError:
        return None


def _names_a_node(doc: SceneFile, said: str) -> bool:
    """A node's path, or a name only one node has (s20/7: "Ball" for Field/Ball), as the
    engine's measurements find nodes."""
    said = said.strip()
    if _node_or_none(doc, said) is not None:
        return True
    return sum(n.name == said for n in doc.nodes) == 1


def _set_property_call(scene: str, node: str, property: str, value: str) -> str:
    said = {"scene": scene, "node": node, "property": property, "value": value}
    return "set_property(" + ", ".join(f"{k}={json.dumps(v)}" for k, v in said.items()) + ")"


def _read_as(said: str, meant: str = MATERIAL_COLOUR) -> str:
    if meant != MATERIAL_COLOUR:
        return f"{said} was read as {meant}: where this class keeps its position"
    return f"{said} was read as {MATERIAL_COLOUR}: a mesh node's colour is its material's"


_TURNING = ("rotation_degrees", "rotation", "transform")
"""Properties that turn a 3D node: a capsule given one is left as the call turns it."""


def _lying(size: tuple[float, float, float]) -> tuple[float, float, float]:
    """A standing capsule's size as its mesh takes it (Godot 3: along z), x and z alike."""
    return (size[0], size[2], size[1])


def _standing(size: tuple[float, float, float]) -> SizeRefused:
    """The refusal of a size a standing capsule cannot have, in its standing terms, with
    the size meant (the thinnest across, the longest up) when the numbers differ."""
    fixed = (min(size), max(size), min(size)) if max(size) > min(size) else None
    return SizeRefused(
        f"a capsule stands along y: give [width, height, width] with height >= width, e.g. "
        f"[1, 2, 1], not {shown(size)}",
        fixed,
    )


class AimedAtItself(ToolError):
    """``look_at`` at the very point where the node stands; ``looking_from`` is a point to
    stand it at instead, back from what it looks at."""

    def __init__(self, message: str, looking_from: tuple[float, float, float]):
        super().__init__(message)
        self.looking_from = looking_from


def _looking_from(
    point: tuple[float, float, float], size: tuple[float, float, float] | None
) -> tuple[float, float, float]:
    """A point to look at `point` from: in front of it (+z) and a little above, far enough
    back for something of `size` (2 m when it draws nothing) to fit in a camera's view."""
    extent = max(size) if size is not None else 2.0
    back = round(max(2.5 * extent, 3.0), 2)
    return (round(point[0], 3) + 0.0, round(point[1] + back / 3, 2), round(point[2] + back, 2))


_FACING_DOWN = ("Camera", "SpotLight", "DirectionalLight")
"""Classes that look or shine along -Z: put somewhere with ``above``, they face down at it."""


def _gap_metres(gap: float | str) -> float:
    """add_node's ``gap`` (a number, or text when written among properties) in metres: 0 or
    more (a negative gap would put the node inside or under what it is to be over)."""
    try:
        metres = float(gap)
    except ValueError:
        raise ToolError(f"gap is a distance in metres, e.g. 1, not {gap!r}") from None
    if not math.isfinite(metres) or metres < 0:
        raise ToolError(
            f"gap is the distance above the node's top, 0 or more (default {GAP:g}), not "
            f"{metres:g}. Nothing was added."
        )
    return metres


class Bottomless(ToolError):
    """``rest_on`` for a node that draws nothing (a Camera, a light): it has no bottom."""


def _refused(err: ArgumentRefused, name: str, offer: str | None) -> ToolError:
    """add_node's refusal of a typed argument: why, that nothing was added, and the call to
    make instead (when there is one)."""
    instead = f" To add {name} {err.how}: {offer}" if offer is not None else ""
    return ToolError(f"{err.reason} Nothing was added.{instead}")


def _made(detail: str, writer: PropertyWriter) -> str:
    return detail + "".join(f"; {what}" for what in writer.made)


_GROUND_WORDS = re.compile(
    r"(the\s+)?(ground|floor|ground\s+plane|ground\s+level|y\s*=\s*0(\.0+)?|0)", re.I
)
"""rest_on text that means the ground when no node has that name ("the floor", "y = 0")."""


def _meant_support(doc: SceneFile, rest_on: str, name: str, *, new: bool) -> str | None:
    """``rest_on`` as small models write it, read as the support they mean: the ground words
    (when no node is named so) are the ground; the node's own name (nothing stands on
    itself) is the ground for a new node and no rest (None) for one already placed."""
    text = rest_on.strip()
    try:
        found: NodeEntry | None = doc.node(text)
    except SceneError:
        found = None
    if found is None:  # "floor" for Floor: a node's name in another case
        same = [n for n in doc.nodes[1:] if n.name.lower() == text.lower()]
        found = same[0] if len(same) == 1 else None
        rest_on = found.path if found is not None else rest_on
    if found is not None and found.path != name:
        return rest_on  # a real node, whatever its name
    if found is not None or text.strip("/") in (name, name.rsplit("/", 1)[-1]):
        return GROUND if new else None
    if _GROUND_WORDS.fullmatch(text):
        return GROUND
    return rest_on


class AuthoringTools(GodotToolkitBase):
    """create_scene, add_node, set_property, remove_node, write_script, attach_script, import_asset."""

    @tool(side_effects=True)
    async def create_scene(
        self,
        path: str,
        root_type: str = "Spatial",
        root_name: OptText = None,
        main: bool = False,
    ) -> SceneChange:
        """Create a new scene file with a single root node.

        Args:
            path: Where to save it, e.g. "res://main.tscn".
            root_type: Class of the root node (Spatial, Node2D, Control, Node ...).
            root_name: Name of the root node (defaults to the file name).
            main: Make it the project's main scene (what run_project runs).
        """
        name = root_name or Path(path).stem.title().replace("_", "")
        cls = self.project.dialect.class_name(root_type)
        if Path(path).suffix != ".tscn":
            # A .tres is a resource: told "scenes end in .tscn, resources in .tres", the 1.5B
            # model created its scene at res://NewScene.tres, which no tool then read as one.
            suffix = Path(path).suffix
            wanted = (path[: -len(suffix)] if suffix else path) + ".tscn"
            raise ToolError(f"{path}: a scene is saved as a .tscn file, e.g. {wanted}")
        try:
            exists = self.project.file(path).exists()
        except ProjectPathError as err:
            raise ToolError(str(err)) from None
        if exists:  # never replace a scene (and the work in it) by an empty one
            res = self.project.res_path(self.project.file(path))
            doc = self._scene(res)
            await self._known(doc, [], [])
            if len(doc.nodes) == 1 and (doc.root.name, doc.root.type) == (name, cls):
                # asked again for what is there: nothing to do, and the next step is the same
                if main or not self.project.main_scene:
                    self.project.main_scene = res
                return SceneChange(
                    scene=res,
                    node=".",
                    detail=f"unchanged: {res} already is this empty scene; next: "
                    + self._next_step(doc, res),
                    nodes=["."],
                )
            nodes = ", ".join(n.path for n in doc.nodes)
            raise ToolError(
                f"{res} already exists (nodes: {nodes}); do not create it again. Add a child with "
                f"{self._next_child(doc, res)}, change one with set_property, or create a new scene "
                "under another path"
            )
        catalog = await self._known(self.project.new_scene(name, "Node"), [cls], [])
        catalog.check_node_class(cls)
        scene = self.project.new_scene(name, root_type)
        try:
            change = self._save(path, scene, ".", f"created with root {name} ({root_type})")
            change.detail += "; next: " + self._next_step(scene, change.scene)
        except ProjectPathError as err:
            raise ToolError(str(err)) from None
        if main or not self.project.main_scene:
            self.project.main_scene = change.scene
        return change

    def _next_step(self, doc: SceneFile, scene: str) -> str:
        """What to do in a new, empty scene: attach a script no scene uses yet, when there is
        one (the 1.5B model, having written res://hello.gd and created the scene for it, added
        a MeshInstance with the script as its mesh, as the next step said), or add children."""
        children = "add children with " + self._next_child(doc, scene)
        waiting = [s for s in self.project.scripts() if not self._users(s)]
        if not waiting:
            return children
        listed = ", ".join(waiting[:3]) + (" ..." if len(waiting) > 3 else "")
        these = "is written but no scene uses it" if len(waiting) == 1 else "are written but unused"
        attach = f'attach_script(scene="{scene}", node=".", script="{waiting[0]}")'
        return f"{listed} {these}: attach it with {attach}; or {children}"

    def _next_child(self, doc: SceneFile, scene: str) -> str:
        """An add_node call that fits the scene's root (a Label under a Control ...)."""
        catalog, root = self._catalog, doc.root.type
        kind = "Node"
        for base, child in (
            ("Control", "Label"),
            ("Node2D", "Sprite"),
            ("Spatial", "MeshInstance"),
        ):
            base = self.project.dialect.class_name(base)
            if catalog is not None and catalog.is_a(root, base):
                kind = self.project.dialect.class_name(child)
                break
        return f'add_node(scene="{scene}", name="...", type="{kind}")'

    @tool(side_effects=True, creates="name")
    async def add_node(
        self,
        scene: str,
        name: str,
        type: str,
        parent: str = ".",
        properties: OptProperties = None,
        rest_on: OptText = None,
        size: OptSize = None,
        shape: OptText = None,
        color: OptColour = None,
        position: OptPoint = None,
        above: OptText = None,
        gap: OptNumber = None,
    ) -> SceneChange:
        """Add a node to a scene; a box or a ball is a MeshInstance with a `shape`.

        Args:
            scene: The scene file, e.g. "res://main.tscn".
            name: Name of the new node.
            type: Its class, e.g. MeshInstance, Camera, DirectionalLight, Label.
            parent: Path of the parent node ("." is the root, "Player/Arm" deeper).
            properties: Property -> value, e.g. {"rotation_degrees": "Vector3( -20, 0, 0 )", "text": "Hi"};
                {"look_at": "Box"} turns a camera or light to a node (or [x, y, z]).
            rest_on: "ground" (bottom at y=0) or a node to stand on (centred on it unless
                position is given), measured in the engine.
            size: [x, y, z] metres its mesh fills (a box if no shape; default 2 x 2 x 2).
            shape: box, sphere, cylinder, cone, capsule or plane: its mesh.
            color: Name (red) or hex (#ff8800).
            position: [x, y, z] in 3D, [x, y] pixels in 2D.
            above: A node to put it over (centred, gap above its top).
            gap: Distance above that node's top (default 1).
        """
        # above/gap: "an omni light named Bulb above the block" without arithmetic; the Args
        # lines stay one short line each (they are in a small model's prompt every turn).
        # See agentsdk_godot.above and the README's "above" section.
        offers: dict[str, dict[str, object]] = {}
        placement = (position, above, gap)
        try:
            return await self._add_node(
                offers,
                scene,
                name,
                type,
                parent,
                properties,
                rest_on,
                size,
                shape,
                color,
                placement,
            )
        except ToolError as err:
            # A refusal that writes out the call to make instead carries it as data too
            # (ToolError.instead), for a connector to use.
            offered = [a for text, a in offers.items() if text in str(err)]
            if err.instead is not None or not offered:
                raise
            raise ToolError(str(err), images=err.images, instead=offered[-1]) from None

    async def _add_node(
        self,
        offers: dict[str, dict[str, object]],
        scene: str,
        name: str,
        type: str,
        parent: str,
        properties: dict[str, str] | None,
        rest_on: str | None,
        size: object,
        shape: str | None,
        color: str | None,
        placement: tuple[object, str | None, float | str | None],
    ) -> SceneChange:
        """add_node's work; each call it offers in a refusal is recorded in `offers` (text
        -> arguments). `placement` is (position, above, gap)."""
        position, above, gap = placement
        doc = self._scene(scene)
        properties = dict(properties or {})
        if rest_on is None and "rest_on" in properties:  # an argument written among properties
            rest_on = properties.pop("rest_on")
        if above is None and "above" in properties:  # as rest_on: no class has such a property
            above = str(properties.pop("above"))
            gap = properties.pop("gap", None) if gap is None else gap
        if above is not None and not above.strip():
            above = None  # "" is no node (the root is "."): the argument left empty
        original = dict(properties)

        def again(**changes: object) -> str:
            """This call with `changes` (the arguments as they stand when it is asked for)."""
            asked: dict[str, object] = {"scene": scene, "name": name, "type": type}
            asked.update(parent=parent, properties=original, rest_on=rest_on, size=size)
            asked.update(shape=shape, color=color, position=position, above=above, gap=gap)
            text = add_node_call({**asked, **changes})
            offers[text] = add_node_arguments({**asked, **changes})
            return text

        def instead_of(err: ArgumentRefused, said_as: dict[str, str]) -> str | None:
            """The call to make instead of one refused for `err` (None: none to offer)."""
            if err.drop is None:
                return again(**err.instead) if err.instead is not None else None
            dropped = said_as.get(err.drop, err.drop)
            return again(properties={k: v for k, v in original.items() if k != dropped})

        try:
            properties, shape, misread = read_misplaced(
                properties, shape, size, color, self._has_file
            )
        except ArgumentRefused as err:
            raise _refused(err, name, instead_of(err, {})) from None
        original = dict(properties)

        try:
            typed = NodeArguments(shape, color, position)
        except ArgumentRefused as err:
            # A shape that is none of the shapes, on a node that is not a mesh node (s23/8:
            # "shape": "camera" on a Camera): the call without it is offered.
            mesh_node = self.project.dialect.class_name("MeshInstance")
            odd = err.argument == "shape" and self.project.dialect.class_name(type) != mesh_node
            raise _refused(err, name, again(shape=None) if odd else None) from None
        over = self._over(
            doc,
            name,
            type,
            above,
            gap,
            rest_on,
            again,
            mesh=typed.shape is not None or size is not None,
        )
        metres = GAP if gap is None else _gap_metres(gap)
        if rest_on is not None:
            rest_on = _meant_support(doc, rest_on, name, new=True)
        if rest_on is not None:
            self._check_support(doc, scene, rest_on, name)
        cls, dialect = self.project.dialect.class_name(type), self.project.dialect
        mesh = typed.mesh_text(dialect)
        catalog = await self._known(doc, [cls], [*properties.values(), *([mesh] if mesh else [])])
        catalog.check_node_class(cls)
        if over is not None:
            self._check_above_3d(doc, name, cls, over, again)
        aim = popped_aim(properties, catalog.properties(cls))
        if aim is not None and aim_point(aim) is None and not _names_a_node(doc, aim):
            # The 1.5B model copied the description's example ("look_at": "Box") onto nodes
            # that look at nothing (s23/7): the call without it is offered.
            listed = ", ".join(n.path for n in doc.nodes)
            unaimed = {k: v for k, v in original.items() if k.strip().lower() not in AIM_KEYS}
            raise ToolError(
                f"look_at: no node {aim.strip()!r} in {scene} (nodes: {listed}): aim at a "
                "node the scene has, or at a point [x, y, z]. Nothing was added. To add "
                f"{name} without look_at: {again(properties=unaimed)}"
            )
        meant = {key: self._meant_property(cls, key) for key in properties}
        said_as = {key: said for said, key in meant.items()}
        try:
            merged = typed.merge(
                {meant[k]: v for k, v in properties.items()}, catalog, dialect, cls
            )
        except ArgumentRefused as err:
            raise _refused(err, name, instead_of(err, said_as)) from None
        if rest_on is not None:

            def without_rest(extra: dict[str, str]) -> str:
                return again(properties={**original, **extra}, rest_on=None)

            given = [*original, *typed.said]
            self._check_rest_3d(doc, name, cls, rest_on, given, without_rest, new=True)
        properties = merged
        replaced: dict[str, str] = {}  # with above: the position given too, which above replaces
        if over is not None:
            for key in ("translation", "position"):  # a 3D node's position (Godot 3, Godot 4)
                if key in properties:
                    said = typed.said.get(key) or said_as.get(key, key)
                    replaced[key] = f"{said} {properties.pop(key)} replaced by above"
            if "transform" in properties:
                replaced["transform"] = "transform's origin replaced by above"
        # Godot 3's CapsuleMesh lies along z; a capsule `shape` stands, like every other shape
        # (and Godot 4's capsule): the node is turned, and its size read as it stands. s22/7's
        # "white capsule named Hero standing on it" had been made lying on the field.
        standing = (
            typed.shape == "capsule"
            and dialect.capsule_axis == 2
            and not any(k in properties for k in _TURNING)
        )
        if standing:
            properties = {**properties, "rotation_degrees": "Vector3( 90, 0, 0 )"}
            said_as["rotation_degrees"] = "shape"  # it comes with the shape
        if "size" in properties and not self._own_size(cls):  # the argument, among properties
            lifted = self._size(properties.pop("size"))
            if size is not None and self._size(size) != lifted:
                raise ToolError("size is given twice, with two values: give it once")
            size = size if size is not None else list(lifted or ())
        wanted = self._size(size)
        writer = PropertyWriter(doc, catalog, self.project.dialect)
        try:
            under = doc.node(parent).path
            path = name if under == "." else f"{under}/{name}"
            taken = next((n for n in doc.nodes if n.path == path), None)
            if taken is not None:
                raise SceneError(
                    f"{taken.path} already exists (a {taken.type or 'scene instance'}): change it "
                    f'with set_property(scene="{scene}", node="{taken.path}", ...) or give the new '
                    "node another name"
                )
            node = doc.add_node(name, cls, parent)
            stored = []
            for key, text in properties.items():
                argument = typed.said.get(key)
                said = argument or said_as[key]
                try:
                    value = await writer.assign(node.properties, key, text, (cls, None))
                except ToolError as err:
                    # Nothing is added: say so, and give the call that adds the node
                    # without it (the 1.5B model went on to set properties of the node the
                    # refusal had not made, on a Camera's made-up "direction").
                    # Every property the class does not have goes in one offer, not one
                    # per refusal (s20/9: a DirectionalLight's made-up color, shadow and
                    # shadow_size, refused one after another to the turn limit).
                    dropped = [said] if argument else self._unknown(cls, properties, said_as)
                    dropped = dropped if said in dropped else [said]
                    others = {k: v for k, v in original.items() if k not in dropped}
                    offer = again(**{argument: None}) if argument else again(properties=others)
                    said = ", ".join(dropped)
                    # The call first, a guess at what was meant after it: told "Did you
                    # mean projection?" last, the 1.5B model set that property on the
                    # camera the refusal had not made.
                    refused, _, meant_as = str(err).partition(" Did you mean ")
                    guess = f" (Did you mean {meant_as.rstrip('?')}?)" if meant_as else ""
                    raise ToolError(
                        f"{refused} Nothing was added. To add {name} without {said}: {offer}{guess}"
                    ) from None
                stored.append(f"{key} = {value}")
            stored += [
                _read_as(said, key)
                for said, key in meant.items()
                if key != said and (key in properties or key not in replaced)
            ]
            stored += misread
            stored += replaced.values()
            if wanted is not None:
                try:
                    sized = await resize(writer, node, _lying(wanted) if standing else wanted)
                except SizeRefused as refused:
                    why = _standing(wanted) if standing else refused
                    if why.fixed is None:
                        raise why from None
                    unsized = {k: v for k, v in original.items() if k != "size"}
                    offer = again(size=list(why.fixed), properties=unsized)
                    raise ToolError(f"{why} Nothing was added. To add {name} so: {offer}") from None
                clash = [f for f in sized if f.split(" = ")[0] in properties and f not in stored]
                if clash:
                    raise ToolError(
                        f"size {shown(wanted)} means {', '.join(clash)}, but properties set "
                        "it otherwise: give the size once"
                    )
                stored += [f for f in sized if f not in stored]
        except SceneError as err:
            raise ToolError(str(err)) from None
        detail = f"added {type} {node.path}" + (": " + ", ".join(stored) if stored else "")
        placed = any(key in properties for key in PLACING)
        before = self._bytes_of(scene)
        try:
            change = await self._save_resting(
                scene, doc, node, _made(detail, writer), rest_on, placed, measure=wanted is not None
            )
        except Bottomless as err:
            # A node that draws nothing (a Camera) cannot stand on anything: the call without
            # rest_on is offered (s16/7 and s23/8: a Camera with rest_on, sent again).
            raise ToolError(
                f"{err} Nothing was added. To add {name} without rest_on: {again(rest_on=None)}"
            ) from None
        if over is not None:
            # Lights that shine along -Z and cameras are turned down at what they are over
            # ("a spot light above it" shines on it), unless the call turns them itself.
            turn = aim is None and not any(k in properties for k in _TURNING)
            turn = turn and any(catalog.is_a(cls, dialect.class_name(c)) for c in _FACING_DOWN)
            try:
                change.detail += "; " + await self._above(
                    scene, node.path, over.path, metres, turn=turn
                )
            except ToolError as err:
                if before is not None:
                    self.project.file(scene).write_bytes(before)  # nothing half-done stays
                raise ToolError(f"{err} Nothing was added.") from None
        if aim is None:
            return change
        try:
            change.detail += "; " + await self._aim(scene, node.path, aim)
        except ToolError as err:
            if before is not None:
                self.project.file(scene).write_bytes(before)  # nothing half-done stays
            if isinstance(err, AimedAtItself):
                # The camera put nowhere, so at what it looks at (s17/7: "a camera named Eye
                # that looks at it", sent again until the loop guard ended the run): the call
                # that stands it back from it is offered.
                placing = ("position", "translation", "transform", "origin", *PLACING)
                unplaced = {k: v for k, v in original.items() if k.strip().lower() not in placing}
                offer = again(position=list(err.looking_from), properties=unplaced)
                raise ToolError(
                    f"{err} Nothing was added. To add {name} looking at it from "
                    f"{list(err.looking_from)}: {offer}"
                ) from None
            raise ToolError(f"{err} Nothing was added.") from None
        return change

    def _over(
        self,
        doc: SceneFile,
        name: str,
        type: str,
        above: str | None,
        gap: float | str | None,
        rest_on: str | None,
        again: Callable[..., str],
        *,
        mesh: bool,
    ) -> NodeEntry | None:
        """The node add_node's `above` names (None without `above`), after refusing, before
        anything is written: a negative gap, `above` with `rest_on`, and a name no node has.
        A gap without `above` is left unused, as the three.js and Blender toolkits leave it
        (small models fill in every argument a tool shows)."""
        if above is None:
            return None
        if gap is not None:
            try:
                _gap_metres(gap)
            except ToolError as err:
                raise ToolError(f"{err} To add {name} {GAP:g} above: {again(gap=None)}") from None
        if rest_on is not None:
            # Both place the node: above puts its origin over a node (a light, a camera),
            # rest_on its bottom on a top (a mesh). The one that fits the class is offered
            # last, so it is the refusal's `instead` (the last call offered).
            dialect = self.project.dialect
            mesh = mesh or dialect.class_name(type) == dialect.class_name("MeshInstance")
            target, support = above.strip(), rest_on.strip()

            def over() -> str:
                return f"To put {name} over {target}: {again(rest_on=None)}"

            def on() -> str:
                return f"To stand {name} on {support}: {again(above=None, gap=None)}"

            offers = f"{over()}. {on()}" if mesh else f"{on()}. {over()}"
            raise ToolError(
                "above and rest_on both place the node: give one or the other. above puts its "
                "origin over a node, gap above its top (a light, a camera); rest_on stands its "
                f"bottom on a node's top (a mesh). Nothing was added. {offers}"
            )
        try:
            return named_node(doc, above)
        except KeyError as err:
            raise ToolError(f"above: {err.args[0]}. Nothing was added.") from None

    def _check_above_3d(
        self,
        doc: SceneFile,
        name: str,
        cls: str,
        over: NodeEntry,
        again: Callable[..., str],
    ) -> None:
        """Refuse, before anything is written, `above` for a node that is not 3D (a Label
        has no place in space) or over one that is not (nothing is over a Label in 3D)."""
        catalog, dialect = self._catalog, self.project.dialect
        if catalog is None:
            return
        spatial = dialect.class_name("Spatial")
        flat = flat_node(catalog, dialect, cls)
        if flat is not None:
            head = (
                f"above is for 3D nodes ({spatial} and the classes that inherit it): {name} "
                f"would be a {cls}, {flat.kind}, with no place in 3D space. Nothing was added."
            )
            unplaced = again(above=None, gap=None)
            if flat.position is None:
                raise ToolError(f"{head} Leave above out: {unplaced}")
            raise ToolError(
                f"{head} Place it with position ([x, y] in pixels) instead; without above: "
                + unplaced
            )
        under = flat_node(catalog, dialect, over.type)
        if under is not None:
            solid = [n.path for n in doc.nodes[1:] if catalog.is_a(n.type, spatial) is not False]
            listed = f"3D nodes: {', '.join(solid)}" if solid else "the scene has no 3D node yet"
            raise ToolError(
                f"above: {over.path} is a {over.type}, {under.kind}, not a 3D node ({spatial}): "
                f"nothing can be put over it. Nothing was added. {listed}"
            )

    async def _above(self, scene: str, path: str, target: str, gap: float, *, turn: bool) -> str:
        """Put the node at `path` centred over `target`, `gap` above its top, as the engine
        measures them (see :mod:`agentsdk_godot.above`); with `turn`, face its -Z down at the
        target's centre. Says where it went."""
        found = await self.measurements(scene)
        doc = self._scene(scene)
        node = doc.node(path)
        try:
            over = plan_above(found, path, target, gap)
            set_origin(node, local_origin(found, path, current_origin(node), over.point))
        except KeyError as err:
            raise ToolError(f"above: {err.args[0]}") from None
        said = doc.root.name if over.target == "." else over.target
        top = (
            f"top y={over.top:.3g}" if over.drawn else f"draws nothing: its origin y={over.top:.3g}"
        )
        where = f"{gap:g} above {said} ({top})"
        turned = ""
        (cx, cy, cz), (px, py, pz) = over.centre, over.point
        direction = (cx - px, cy - py, cz - pz)
        centre = ", ".join(f"{v:.3g}" for v in over.centre)
        if turn and max(abs(c) for c in direction) > 1e-6:
            aim_node(node, facing_basis(direction, parent_axes(found, path)))
            turned = f", facing down at {said}'s centre ({centre})"
        elif turn:
            turned = f"; not turned: it is at {said}'s centre ({centre})"
        key = "transform" if "transform" in node.properties else "translation"
        self.project.write_scene(scene, doc)
        value = format_variant(node.properties[key], self.project.dialect.style)
        return f"{where}: {key} = {value}{turned}"

    async def _aim(self, scene: str, path: str, aim: str) -> str:
        """Turn the node at `path` so its -Z axis points at the node or point `aim` names
        (see :mod:`agentsdk_godot.aim`), measured in the engine; says where it looks."""
        found = await self.measurements(scene)
        try:
            me = found.node(path)
        except KeyError:
            raise ToolError(
                f"look_at: {path} is not a 3D node: a camera, a light or another Spatial can "
                "look at something"
            ) from None
        point = aim_point(aim)
        point_named = point is None
        if point is None:
            try:
                target = found.node(aim.strip())
            except KeyError as err:
                raise ToolError(f"look_at: {err.args[0]}") from None
            point = target.centre if target.has_bounds else target.origin
            said = f"{target.path} ({', '.join(f'{v:.3g}' for v in point)})"
        else:
            said = f"({', '.join(f'{v:.3g}' for v in point)})"
        direction = (point[0] - me.origin[0], point[1] - me.origin[1], point[2] - me.origin[2])
        if max(abs(c) for c in direction) < 1e-6:
            raise AimedAtItself(
                f"look_at: {path} stands at {said}: it cannot look at where it is.",
                _looking_from(point, target.size if point_named and target.has_bounds else None),
            )
        parent = path.rsplit("/", 1)[0] if "/" in path else "."
        try:
            axes = found.node(parent).basis
        except KeyError:
            axes = None
        doc = self._scene(scene)
        form = aim_node(doc.node(path), facing_basis(direction, axes))
        self.project.write_scene(scene, doc)
        return f"looking at {said}: transform = {format_variant(form, self.project.dialect.style)}"

    def _unknown(self, cls: str, properties: dict[str, str], said_as: dict[str, str]) -> list[str]:
        """The properties, as the call wrote them, that the class does not have (a path
        into a resource, ``mesh/size``, is left to the writer)."""
        known = self._catalog.properties(cls) if self._catalog is not None else None
        if known is None:
            return []
        return [said_as[k] for k in properties if k in said_as and "/" not in k and k not in known]

    def _has_file(self, path: str) -> bool:
        try:
            return self.project.file(path).is_file()
        except ProjectPathError:
            return False

    def _meant_property(self, cls: str | None, name: str, script: str | None = None) -> str:
        """``name``, or the property it stands for on this class. A mesh node has no colour of
        its own, so "color" (the 1.5B model's first guess, again after the error said where
        the colour is) is its material's albedo colour, a material made on the way. And
        "position", add_node's argument, is where the class keeps it when it has no property
        of that name: a Godot 3 Spatial's translation, a Control's rect_position (asked to
        move Box, the 1.5B model set "position" on the MeshInstance, turn after turn)."""
        known = self._catalog.properties(cls, script) if self._catalog is not None else None
        if known is None or name in known:
            return name
        said = name.strip().lower()
        if said in COLOUR_NAMES and "material_override" in known:
            return MATERIAL_COLOUR
        if said == "position":
            return next((p for p in ("translation", "rect_position") if p in known), name)
        return name

    def _own_size(self, cls: str | None, script: str | None = None) -> bool:
        """Whether the class itself has a property `size` (a Godot 4 Control): then `size` is
        that property, not the shape's size."""
        known = self._catalog.properties(cls, script) if self._catalog is not None else None
        return known is not None and "size" in known

    @staticmethod
    def _size(size: object) -> tuple[float, float, float] | None:
        if size is None:
            return None
        try:
            return parse_size(size)
        except SizeError as err:
            raise ToolError(str(err)) from None

    async def _save_resting(
        self,
        scene: str,
        doc: SceneFile,
        node: NodeEntry,
        detail: str,
        rest_on: str | None,
        placed: bool,
        *,
        measure: bool = False,
    ) -> SceneChange:
        """Save the edit, then (with `rest_on`) stand the node on its support; on a rest that
        cannot be done the file is put back as it was before this call. With `measure` (a new
        size) the result says the size the engine measures."""
        if rest_on is None:
            change = self._save(scene, doc, node.path, detail)
            if measure:
                change.detail += "; " + await self._measured_size(scene, node.path)
            return change
        before = self.project.file(scene).read_bytes()
        change = self._save(scene, doc, node.path, detail)
        try:
            change.detail += "; " + await self._rest(scene, doc, node, rest_on, centre=not placed)
        except ToolError:
            self.project.file(scene).write_bytes(before)  # nothing half-done stays in the file
            raise
        return change

    async def _measured_size(self, scene: str, path: str) -> str:
        try:
            bounds = (await self.measurements(scene)).bounded(path)
        except (ToolError, KeyError) as err:
            reason = str(err.args[0] if isinstance(err, KeyError) else err).splitlines()[0]
            return f"size not measured ({reason})"
        return f"measured size {shown(bounds.size)}"

    def _check_support(self, doc: SceneFile, scene: str, rest_on: str, name: str) -> None:
        """Refuse a rest_on that names no node, before anything is written (a node's own name
        was read already, by `_meant_support`)."""
        if rest_on.strip() == GROUND:
            return
        try:
            doc.node(rest_on)
        except SceneError:
            known = ", ".join(n.path for n in doc.nodes[1:]) or "none"
            raise ToolError(
                f'rest_on: {scene} has no node {rest_on!r}; use "{GROUND}" (y=0) or one of: {known}'
            ) from None

    def _check_rest_3d(
        self,
        doc: SceneFile,
        path: str,
        cls: str | None,
        rest_on: str,
        given: Collection[str],
        again: Callable[[dict[str, str]], str],
        *,
        new: bool,
    ) -> None:
        """Refuse, before anything is written, a rest_on whose node or support is not a 3D node:
        the engine measures 3D bounds only. A Button resting on a Label got "no node 'Restart'
        in the scene", and the model repeated the call until the loop guard stopped it.
        `again(extra)` is the call that does the rest of the edit without rest_on, with the
        properties `extra` too; `given` are the properties the call sets already."""
        catalog, dialect = self._catalog, self.project.dialect
        if catalog is None:
            return
        spatial = dialect.class_name("Spatial")
        unchanged = "Nothing was added." if new else "Nothing was changed."
        support = _node_or_none(doc, rest_on)  # None: the ground
        flat = flat_node(catalog, dialect, cls)
        if flat is not None:
            name = path.rsplit("/", 1)[-1]
            head = (
                f"rest_on is for 3D nodes ({spatial} and the classes that inherit it): {name} "
                f"{'would be' if new else 'is'} a {cls}, {flat.kind}, which has no 3D bounds to "
                f"stand on anything. {unchanged}"
            )
            if flat.position is None:
                raise ToolError(f"{head} Leave rest_on out: {again({})}")
            if flat.position in given:
                raise ToolError(
                    f"{head} Its {flat.position} places it; without rest_on: {again({})}"
                )
            value, where = self._flat_place(flat.position, support)
            raise ToolError(
                f"{head} Place it with {flat.position} (in pixels) instead{where}: "
                + again({flat.position: value})
            )
        under = flat_node(catalog, dialect, support.type) if support is not None else None
        if support is not None and under is not None:
            solid = [
                n.path
                for n in doc.nodes[1:]
                if n.path != path and catalog.is_a(n.type, spatial) is not False
            ]
            others = (
                f" or a 3D node: {', '.join(solid)}" if solid else " (no 3D node to stand on yet)"
            )
            raise ToolError(
                f"rest_on: {support.path} is a {support.type}, {under.kind}, not a 3D node "
                f'({spatial}): nothing can stand on it. {unchanged} Use rest_on="{GROUND}" '
                f"(y=0){others}"
            )

    def _flat_place(self, prop: str, support: NodeEntry | None) -> tuple[str, str]:
        """A value of `prop` to offer a 2D node asked to rest on `support`, and what it means:
        40 px below a support placed by the same property, else a little in from the corner."""
        x, y, where = 20.0, 20.0, ""
        known = self._catalog.properties(support.type) if self._catalog and support else None
        if support is not None and known is not None and prop in known:
            x, y = stored_vector2(support.properties.get(prop)) or (0.0, 0.0)
            y, where = y + 40, f", e.g. 40 px below {support.path}"
        value = format_variant(Constructor("Vector2", (x, y)), self.project.dialect.style)
        return value, where

    async def _rest(
        self, scene: str, doc: SceneFile, node: NodeEntry, rest_on: str, *, centre: bool
    ) -> str:
        """Move `node` so its bottom touches `rest_on`'s top; re-measure and say what holds."""
        support = rest_on.strip()
        found = await self.measurements(scene)
        try:
            move = plan_rest(found, node.path, support, centre=centre)
        except KeyError as err:
            # with no class catalog a 2D node gets here: the engine measures only 3D nodes
            spatial = self.project.dialect.class_name("Spatial")
            for entry, said in ((node, node.path), (_node_or_none(doc, support), support)):
                if entry is not None and not is_measured(found, said):
                    raise ToolError(
                        f"rest_on: {entry.path} ({entry.type or 'a scene instance'}) has no 3D "
                        f"bounds: rest_on is for 3D nodes ({spatial} and the classes that inherit it)"
                    ) from None
            mover = found.node(node.path) if is_measured(found, node.path) else None
            if mover is not None and not mover.has_bounds:
                raise Bottomless(f"rest_on: {err.args[0]}") from None
            raise ToolError(f"rest_on: {err.args[0]}") from None
        x, y, z = current_origin(node)
        dx, dy, dz = move.delta
        set_origin(node, (x + dx, y + dy, z + dz))
        self.project.write_scene(scene, doc)
        after = (await self.measurements(scene)).bounded(node.path)
        assert after.min is not None
        gap = after.min[1] - move.top
        where = (
            "the ground (y=0)"
            if move.support == GROUND
            else f"{move.support} (top y={move.top:.3g})"
        )
        if abs(gap) <= TOLERANCE:
            stored = node.properties.get("translation") or node.properties.get("transform")
            key = "translation" if "translation" in node.properties else "transform"
            size = " x ".join(f"{v:.3g}" for v in after.size)
            return (
                f"rests on {where}, size {size}: "
                f"{key} = {format_variant(stored, self.project.dialect.style)}"
            )
        return (
            f"moved towards {where} but its bottom is {gap:+.3f} off (its parent is rotated or "
            "scaled): set translation yourself and check with assert_rests_on"
        )

    @tool(side_effects=True)
    async def set_property(
        self, scene: str, node: str, property: str, value: str, rest_on: OptText = None
    ) -> SceneChange | Unchanged:
        """Set a node property in a scene file.

        Args:
            scene: The scene file.
            node: Node path ("." for the root).
            property: e.g. "translation", "transform", "text", "mesh", "size" ([x, y, z] metres of
                its mesh). A field of a resource stored in the scene is "<property>/<field>",
                e.g. "mesh/material/albedo_color".
            value: e.g. 2.5, true, Vector3( 0, 1, 0 ), Color( 1, 0, 0, 1 ), CubeMesh(); text as it is.
            rest_on: Then stand the node on "ground" (y=0) or a node, e.g. after a new mesh/size.
        """
        before = self._bytes_of(scene)
        change = await self._set_property(scene, node, property, value, rest_on)
        if before is None or self._bytes_of(change.scene) != before:
            return change
        # The scene file is byte for byte what it was: the model asked for what already is.
        change.detail = f"Nothing changed: the scene already was so ({change.detail})"
        return Unchanged(change)

    async def _set_property(
        self, scene: str, node: str, property: str, value: str, rest_on: str | None
    ) -> SceneChange:
        doc = self._scene(scene)
        try:
            target = doc.node(node)
        except SceneError as err:
            raise ToolError(str(err)) from None
        if property.strip() == "name":
            # The name lives in the node's heading, not among its properties: a `name = ...`
            # line renamed nothing (the 1.5B model tried it on godot/red-target-in-frame).
            old = target.path
            try:
                renamed = doc.rename_node(old, value.strip().strip('"'))
            except SceneError as err:
                raise ToolError(str(err)) from None
            return self._save(scene, doc, renamed.path, f"renamed {old} to {renamed.path}")
        if property.strip().lower() in AIM_KEYS:
            known = (await self._known(doc, [target.type or ""], [])).properties(target.type)
            if known is None or property.strip() not in known:  # an aim, not a property
                detail = await self._aim(scene, target.path, value)
                nodes = [n.path for n in self._scene(scene).nodes]
                res = self.project.res_path(self.project.file(scene))
                return SceneChange(scene=res, node=target.path, detail=detail, nodes=nodes)
        if rest_on is not None:
            rest_on = _meant_support(doc, rest_on, target.path, new=False)
        if rest_on is not None:
            self._check_support(doc, scene, rest_on, target.path)
        catalog = await self._known(doc, [target.type or ""], [value])
        if rest_on is not None:

            def without_rest(extra: dict[str, str]) -> str:
                said = {property: value, **extra}
                calls = [_set_property_call(scene, target.path, k, v) for k, v in said.items()]
                return ", then ".join(calls)

            given = [property.strip()]
            self._check_rest_3d(
                doc, target.path, target.type, rest_on, given, without_rest, new=False
            )
        script_ref = target.properties.get("script")
        script = next((e.path for e in doc.ext_resources if script_ref == ExtResource(e.id)), None)
        writer = PropertyWriter(doc, catalog, self.project.dialect)
        resizing = property.strip() == "size" and not self._own_size(target.type, script)
        try:
            if resizing:  # the shape's size, as add_node's size argument
                wanted = self._size(value)
                assert wanted is not None
                detail = f"size {shown(wanted)}: " + ", ".join(await resize(writer, target, wanted))
            else:
                meant = self._meant_property(target.type, property, script)
                stored = await writer.assign(target.properties, meant, value, (target.type, script))
                detail = f"{meant} = {stored}"
                if meant != property:
                    detail += f" ({_read_as(property, meant)})"
        except SceneError as err:
            raise ToolError(str(err)) from None
        placed = property.strip() in PLACING
        return await self._save_resting(
            scene, doc, target, _made(detail, writer), rest_on, placed, measure=resizing
        )

    @tool(side_effects=True)
    async def remove_node(self, scene: str, node: str) -> SceneChange:
        """Remove a node (and its children) from a scene.

        Args:
            scene: The scene file.
            node: Node path, e.g. "Box" or "Player/Arm" (the root cannot be removed).
        """
        doc = self._scene(scene)
        try:
            path = doc.node(node).path
            doc.remove_node(node)
        except SceneError as err:
            raise ToolError(str(err)) from None
        return self._save(scene, doc, path, f"removed {path}")

    @tool(side_effects=True)
    async def write_script(self, path: str, source: str) -> ScriptCheck:
        """Write a GDScript file and check it with the engine (errors come back with file and line).

        Args:
            path: e.g. "res://player.gd".
            source: The full GDScript source (Godot 3: `extends Spatial`, `export var speed = 1.0`).
        """
        res = await self._write_checked(path, source)
        users = self._users(res.path)
        for scene, doc, node in users:
            wrong = await self._wrong_base(doc, node.type, res.path)
            if wrong:
                raise ToolError(
                    f"{res.path} was saved, but {scene} runs it on {node.path} (a {node.type}) "
                    f"and it {wrong}"
                )
        if not users:
            scene = self.project.main_scene or "res://main.tscn"
            res.next = (
                "no scene uses it yet: attach it to a node with "
                f'attach_script(scene="{scene}", node=".", script="{res.path}")'
            )
            return res
        scene, _doc, node = users[0]
        res.ran = await self._check_run(scene, res.path, f"{scene} runs it on {node.path}")
        return res

    def _users(self, script: str) -> list[tuple[str, SceneFile, NodeEntry]]:
        """(scene, its document, node) for every node of the project's scenes that runs `script`."""
        found = []
        for scene in self.project.scenes():
            try:
                doc = self.project.read_scene(scene)
            except (ProjectPathError, SceneError, VariantSyntaxError, OSError):
                continue
            refs = [ExtResource(e.id) for e in doc.ext_resources if e.path == script]
            found += [(scene, doc, n) for n in doc.nodes if n.properties.get("script") in refs]
        return found

    async def _write_checked(self, path: str, source: str) -> ScriptCheck:
        """Save a script and parse it with the engine: a parse error is a ToolError with the
        lines it is about."""
        if not path.endswith(".gd"):
            raise ToolError("GDScript files end in .gd")
        try:
            res = self.project.write_text(path, source)
        except ProjectPathError as err:
            raise ToolError(str(err)) from None
        found = await self.engine.check_script(self.project.path, res)
        errors = [d for d in found if d.severity == "error"]
        if errors:
            raise ToolError(
                f"{res} was saved but does not parse:\n"
                + format_diagnostics(errors)
                + await self._about_errors(errors, whole=False)
            )
        return ScriptCheck(path=res, ok=True, warnings=[d.describe() for d in found])

    @tool(side_effects=True)
    async def attach_script(
        self, scene: str, node: str, script: str, source: OptText = None
    ) -> SceneChange:
        """Attach a GDScript file to a node; with `source`, write the file in the same call.

        Args:
            scene: The scene file.
            node: Node path ("." for the root).
            script: The script, e.g. "res://spin.gd".
            source: The GDScript to write to `script` first.
        """
        try:
            exists = self.project.file(script).exists()
        except ProjectPathError as err:
            raise ToolError(str(err)) from None
        if not exists and source is None:
            raise ToolError(
                f"{script} does not exist: give its GDScript as source to write it and attach it "
                "in this call, or write it first with write_script"
            )
        doc = self._scene(scene)
        try:
            target = doc.node(node)
        except SceneError as err:
            raise ToolError(str(err)) from None
        written = None
        if source is not None:
            try:
                written = await self._write_checked(script, source)
            except ToolError as err:
                raise ToolError(f"{err}\nNot attached: fix the source and call again.") from None
        res = self.project.res_path(script)
        wrong = await self._wrong_base(doc, target.type, res)
        if wrong:
            raise ToolError(f"{res} cannot run on {target.path} (a {target.type}): it {wrong}")
        doc.attach_script(node, res)
        detail = f"script {res}" + (" written and attached" if written else " attached")
        if written and written.warnings:
            detail += "; warnings: " + "; ".join(written.warnings[:3])
        change = self._save(scene, doc, target.path, detail)
        ran = await self._check_run(change.scene, res, f"it is attached to {target.path}")
        if ran:
            change.detail += f"; {ran}"
        return change

    async def _check_run(self, scene: str, script: str, where: str) -> str:
        """Run ``scene`` headless for ``script_check_frames`` frames (its scripts' ``_ready``
        and first ``_process`` calls) after ``script`` changed: a runtime error in ``script``
        is a ToolError now, with the lines it is about, instead of a surprise when the game
        is played. Returns what the run showed ("" when the check is off)."""
        frames = self.script_check_frames
        if frames <= 0:
            return ""
        run = await self._run(
            HarnessJob(scene=scene, frames=frames), timeout=min(self.run_timeout, 20.0)
        )
        report = run_report(scene, run)
        errors = [d for d in report.diagnostics if d.severity == "error"]
        if report.timed_out or any(d.file == script for d in errors):
            head = (
                f"{script} is saved and {where}, but it fails when {scene} runs ({frames} frames)"
            )
            if report.timed_out:
                head += ": the run did not finish in time (an endless loop?) and was stopped"
            listed = format_diagnostics(errors)
            raise ToolError(
                head
                + (f"\n{listed}" if listed else "")
                + await self._about_errors(errors, whole=True)
            )
        if errors:
            return f"ran {scene} for {frames} frames: errors elsewhere: {errors[0].describe()}"
        return f"ran {scene} for {frames} frames: no errors"

    async def _wrong_base(self, doc: SceneFile, node_type: str | None, script: str) -> str:
        """Why the node cannot run the script, when its `extends` names a class the node is not
        (`extends Node2D` on a MeshInstance): the engine would say so only when the scene plays."""
        if not node_type:
            return ""
        catalog = await self._known(doc, [node_type], [])
        await catalog.load([], [script])
        info = catalog.script(script)
        if info is None or not info.ok or not info.base:
            return ""
        if catalog.is_a(node_type, info.base) is False:
            return (
                f"extends {info.base}: start the script with `extends {node_type}` "
                "(or a class it inherits)"
            )
        return ""

    @tool(side_effects=True)
    async def import_asset(
        self, source: str, scene: OptText = None, parent: str = ".", name: OptText = None
    ) -> SceneChange:
        """Import a glTF/GLB file into the project and optionally instance it in a scene.

        Args:
            source: Path of the .glb/.gltf on disk (outside or inside the project).
            scene: Scene to instance it in (optional).
            parent: Parent node path for the instance.
            name: Node name of the instance (defaults to the file name).
        """
        src = Path(source)
        if not src.exists():  # noqa: ASYNC240
            raise ToolError(f"{source} does not exist")
        dest = self.project.file(f"assets/{src.name}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.resolve() != dest:  # noqa: ASYNC240
            shutil.copy(src, dest)
        result = await self.engine.import_assets(self.project.path, [dest])
        if result.failed:
            why = "it timed out" if result.timed_out else format_diagnostics(result.diagnostics)
            raise ToolError(f"the engine could not import {src.name}: {why}")
        res = self.project.res_path(dest)
        if scene is None:
            return SceneChange(scene="", node="", detail=f"imported {res}")
        doc = self._scene(scene)
        try:
            ref = doc.ext_resource(res, "PackedScene")
            node = doc.add_node(name or src.stem, None, parent, instance=ref)
        except SceneError as err:
            raise ToolError(str(err)) from None
        return self._save(scene, doc, node.path, f"instanced {res}")
