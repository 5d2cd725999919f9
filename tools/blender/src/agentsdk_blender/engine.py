"""Scene commands executed inside Blender (the worker process or the live add-on).

Stdlib + bpy only: this module also ships inside the add-on a user installs into
their own Blender. Each command takes a plain JSON object of arguments (already
validated by pydantic on the agent side, and again by the worker when pydantic is
importable) and returns a JSON object. Mutating commands are atomic: a snapshot is
taken first and restored when the command fails.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import bpy
import numpy as np
from mathutils import Matrix, Vector

from . import (
    engine_aim,
    engine_delete,
    engine_io,
    engine_measure,
    engine_passes,
    engine_place,
    engine_render,
    engine_sight,
)
from .engine_errors import CommandError, ScriptFailed
from .engine_names import give_name, own_name, refuse_taken
from .engine_state import SavedScene, SceneSnapshot
from .engine_unknown import missing_objects
from .framing import PROTOCOL_VERSION
from .primitive_size import metres, read_size, size_note

JSON = dict[str, Any]

PRIMITIVES: dict[str, Callable[..., Any]] = {
    "cube": lambda size: bpy.ops.mesh.primitive_cube_add(size=size),
    "plane": lambda size: bpy.ops.mesh.primitive_plane_add(size=size),
    "uv_sphere": lambda size: bpy.ops.mesh.primitive_uv_sphere_add(radius=size / 2),
    "ico_sphere": lambda size: bpy.ops.mesh.primitive_ico_sphere_add(radius=size / 2),
    "cylinder": lambda size: bpy.ops.mesh.primitive_cylinder_add(radius=size / 2, depth=size),
    "cone": lambda size: bpy.ops.mesh.primitive_cone_add(radius1=size / 2, depth=size),
    "torus": lambda size: bpy.ops.mesh.primitive_torus_add(
        major_radius=size * 0.375, minor_radius=size * 0.125
    ),
    "monkey": lambda size: bpy.ops.mesh.primitive_monkey_add(size=size),
}


def _object(name: str, tool: str, field: str = "name") -> Any:
    obj = bpy.data.objects.get(name)
    if obj is None:
        raise CommandError(missing_objects([name], tool=tool, field=field))
    return obj


def _vec(values: Any) -> list[float]:
    return [round(float(v), 6) for v in values]


def _material_values(mat: Any) -> JSON:
    """Base colour, metallic and roughness: from the Principled BSDF node when there is one."""
    colour, metallic, roughness = list(mat.diffuse_color), mat.metallic, mat.roughness
    tree = mat.node_tree if mat.use_nodes else None
    bsdf = next((n for n in tree.nodes if n.type == "BSDF_PRINCIPLED"), None) if tree else None
    if bsdf is not None:
        colour = list(bsdf.inputs["Base Color"].default_value)
        metallic = bsdf.inputs["Metallic"].default_value
        roughness = bsdf.inputs["Roughness"].default_value
    return {
        "name": mat.name,
        "base_color": _vec(colour),
        "metallic": round(float(metallic), 6),
        "roughness": round(float(roughness), 6),
    }


def _describe(obj: Any, depsgraph: Any, geometry: engine_place.Geometry | None = None) -> JSON:
    if geometry is None:
        geometry = engine_place.world_geometry(obj, depsgraph)
    described = {
        "name": obj.name,
        "type": obj.type,
        "parent": obj.parent.name if obj.parent else None,
        "location": _vec(obj.location),
        "rotation_degrees": _vec(math.degrees(a) for a in obj.rotation_euler),
        "scale": _vec(obj.scale),
        "dimensions": _vec(obj.dimensions),
        "materials": [s.material.name for s in obj.material_slots if s.material],
        "material_values": [_material_values(s.material) for s in obj.material_slots if s.material],
        "modifiers": [{"name": m.name, "type": m.type} for m in obj.modifiers],
        "polygons": geometry.polygons,
        "triangles": len(geometry.triangles),
    }
    if len(geometry.points):  # world height range, so a model can check what stands where
        described["lowest_z"] = _vec([geometry.points[:, 2].min()])[0] + 0.0
        described["top_z"] = _vec([geometry.points[:, 2].max()])[0] + 0.0
    return described


# --- commands -------------------------------------------------------------------------


def hello_frame(*, scene_restored: bool = False, restore_error: str | None = None) -> JSON:
    """The greeting a server (worker or add-on) sends: who it is, its protocol version, and
    (a restarted worker) whether it reloaded the saved scene."""
    return {
        "hello": "agentsdk-blender",
        "protocol_version": PROTOCOL_VERSION,
        "blender_version": bpy.app.version_string,
        "pid": os.getpid(),
        "background": bool(bpy.app.background),
        "scene_restored": scene_restored,
        "restore_error": restore_error,
    }


def ping(args: JSON) -> JSON:
    """Report the Blender version and process id."""
    return {
        "blender_version": bpy.app.version_string,
        "pid": os.getpid(),
        "background": bool(bpy.app.background),
    }


def scene_info(args: JSON) -> JSON:
    """One page of objects, sorted by name, with transform, dimensions and counts."""
    offset, limit = int(args.get("offset", 0)), int(args.get("limit", 50))
    objects = sorted(bpy.data.objects, key=lambda o: o.name)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    scene = bpy.context.scene
    return {
        "total_objects": len(objects),
        "offset": offset,
        "objects": [_describe(o, depsgraph) for o in objects[offset : offset + limit]],
        "active_camera": scene.camera.name if scene.camera else None,
        "unit_system": scene.unit_settings.system,
        "unit_scale": scene.unit_settings.scale_length,
    }


def reset(args: JSON) -> JSON:
    """Return to an empty scene: in the worker a factory-fresh file (render settings,
    world and all); in a user's Blender every object and the data blocks it used."""
    if bpy.app.background:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        return {"objects": len(bpy.data.objects)}
    pools = (
        bpy.data.objects, bpy.data.meshes, bpy.data.materials, bpy.data.cameras,
        bpy.data.lights, bpy.data.images, bpy.data.armatures, bpy.data.actions,
        bpy.data.curves, bpy.data.collections,
    )  # fmt: skip
    bpy.data.batch_remove([block for pool in pools for block in pool])
    return {"objects": 0}


def create_primitive(args: JSON) -> JSON:
    """Add a mesh primitive and name it; a name that is taken is refused (see engine_names).
    ``size`` is one number or the object's dimensions (see ``primitive_size``)."""
    kind = args["kind"]
    if kind not in PRIMITIVES:
        raise CommandError(f"unknown primitive {kind!r}; use one of {sorted(PRIMITIVES)}")
    try:  # checked on the agent side too; the add-on may be sent anything
        size = metres(args.get("size", 2.0))
        reading = read_size(kind, size, args.get("scale"))
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if args.get("name"):
        refuse_taken(args["name"])  # before anything is made
    PRIMITIVES[kind](2.0 if isinstance(size, list) else size)
    obj = bpy.context.active_object
    if reading.dimensions is not None:
        _fit_mesh(obj.data, reading.dimensions)
    if args.get("name"):
        give_name(obj, args["name"])
    _apply_transform(obj, args)
    if args.get("base_color") is not None:
        _give_material(obj, {"base_color": args["base_color"]})
    described = _placed(obj, args, new=True)
    described["size_read"] = size_note(size, reading, described["dimensions"], args.get("scale"))
    return described


def _fit_mesh(mesh: Any, dimensions: tuple[float, float, float]) -> None:
    """Scale a new mesh's vertices so that its box measures ``dimensions`` (an axis it has no
    extent along, a plane's Z, stays flat). The mesh is scaled, not the object: the object
    keeps scale 1 as a one-number size leaves it, so a later set_transform scale multiplies
    the size asked for, and measures, rest_on and exports read the same numbers as
    ``dimensions`` without a transform to apply."""
    points = np.empty(len(mesh.vertices) * 3, np.float64)
    mesh.vertices.foreach_get("co", points)
    extent = np.ptp(points.reshape(-1, 3), axis=0)
    factors = [
        want / have if have > 1e-9 else 1.0 for want, have in zip(dimensions, extent, strict=True)
    ]
    mesh.transform(Matrix.Diagonal((*factors, 1.0)))
    mesh.update()


def _placed(obj: Any, args: JSON, *, new: bool = False) -> JSON:
    """The object after an optional ``rest_on``, described, with what the rest measured."""
    detail = None
    if args.get("rest_on"):
        keep = args.get("location") is not None
        detail = engine_place.rest(obj, args["rest_on"], keep_xy=keep, new=new)
    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    geometry = engine_place.world_geometry(obj, depsgraph)  # measured once, for both
    described = _describe(obj, depsgraph, geometry)
    if detail is not None:
        described["rests_on"] = detail
    seen = engine_sight.sight_note(obj, geometry.points)
    if seen is not None:
        described["camera_view"] = seen
    return described


def _apply_transform(obj: Any, args: JSON) -> None:
    if args.get("location") is not None:
        obj.location = args["location"]
    if args.get("rotation_degrees") is not None:
        obj.rotation_euler = [math.radians(a) for a in args["rotation_degrees"]]
    if args.get("scale") is not None:
        obj.scale = args["scale"]


def set_transform(args: JSON) -> JSON:
    """Set location, rotation (degrees) and/or scale of an object."""
    obj = _object(args["name"], "set_transform")
    before = obj.matrix_world.copy()
    _apply_transform(obj, args)
    aimed = engine_aim.aim(obj, args["look_at"]) if args.get("look_at") is not None else None
    described = _placed(obj, args)
    if aimed is not None:
        described["aimed_at"] = aimed
    if _same_matrix(before, obj.matrix_world):
        # Said outright: the 1.5B model re-sent a set_transform that moved nothing, turn
        # after turn, until the loop guard stopped it (blender/stack, 290 s).
        described["unchanged"] = f"nothing moved: {obj.name} was already there"
    return described


def _same_matrix(a: Any, b: Any, tolerance: float = 1e-6) -> bool:
    pairs = zip(a, b, strict=True)
    return all(abs(x - y) <= tolerance for ra, rb in pairs for x, y in zip(ra, rb, strict=True))


def set_material(args: JSON) -> JSON:
    """Create or update a Principled BSDF material and assign it to an object."""
    obj = _object(args["name"], "set_material")
    before = _look(obj)
    mat = _give_material(obj, args)
    given: JSON = {"object": obj.name, "material": mat.name}
    if before == _look(obj):
        given["unchanged"] = f"nothing changed: {obj.name} already had {mat.name}, as it was"
    return given


def _look(obj: Any) -> list[tuple[Any, ...]]:
    """What set_material sets of each of the object's materials, rounded (floats read back
    from Blender differ in the last bits from what was written)."""
    looks = []
    for mat in getattr(obj.data, "materials", None) or []:
        if mat is None:
            looks.append(())
            continue
        nodes = mat.node_tree.nodes if mat.node_tree is not None else []
        bsdf = next((n for n in nodes if n.type == "BSDF_PRINCIPLED"), None)
        inputs = bsdf.inputs if bsdf is not None else {}
        values = [
            inputs[k].default_value if k in inputs else None
            for k in ("Base Color", "Metallic", "Roughness", "Emission Color", "Emission Strength")
        ]
        looks.append((mat.name, *(_rounded(v) for v in values), _rounded(mat.diffuse_color)))
    return looks


def _rounded(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, float | int):
        return round(float(value), 5)
    return tuple(round(float(v), 5) for v in value)


def _give_material(obj: Any, args: JSON) -> Any:
    """The object's Principled BSDF material (``<object>_material`` unless named), made or
    updated from ``args`` (set_material's fields and defaults), as its only material."""
    if obj.type != "MESH":
        raise CommandError(f"{obj.name!r} is a {obj.type}, only meshes take materials")
    mat_name = args.get("material_name") or f"{obj.name}_material"
    mat = bpy.data.materials.get(mat_name) or bpy.data.materials.new(mat_name)
    if mat.node_tree is None:
        mat.use_nodes = True
    bsdf = next((n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED"), None)
    if bsdf is None:
        raise CommandError(f"material {mat_name!r} has no Principled BSDF node")
    color = list(args.get("base_color", [0.8, 0.8, 0.8, 1.0]))
    color += [1.0] * (4 - len(color))
    bsdf.inputs["Base Color"].default_value = color
    bsdf.inputs["Metallic"].default_value = float(args.get("metallic", 0.0))
    bsdf.inputs["Roughness"].default_value = float(args.get("roughness", 0.5))
    emission = [*list(args.get("emission_color", [0.0, 0.0, 0.0]))[:3], 1.0]
    bsdf.inputs["Emission Color"].default_value = emission
    bsdf.inputs["Emission Strength"].default_value = float(args.get("emission_strength", 0.0))
    # The workbench engine shows the viewport colour, not the node tree.
    mat.diffuse_color = color
    mat.metallic = float(args.get("metallic", 0.0))
    mat.roughness = float(args.get("roughness", 0.5))
    obj.data.materials.clear()
    obj.data.materials.append(mat)
    return mat


def add_modifier(args: JSON) -> JSON:
    """Add (and optionally apply) a subdivision, bevel, array, mirror or boolean modifier."""
    obj = _object(args["name"], "add_modifier")
    kind = args["kind"]
    types = {
        "subdivision": "SUBSURF",
        "bevel": "BEVEL",
        "array": "ARRAY",
        "mirror": "MIRROR",
        "boolean": "BOOLEAN",
    }
    if kind not in types:
        raise CommandError(f"unknown modifier {kind!r}; use one of {sorted(types)}")
    mod = obj.modifiers.new(name=args.get("modifier_name") or kind, type=types[kind])
    if kind == "subdivision":
        mod.levels = mod.render_levels = int(args.get("levels", 2))
    elif kind == "bevel":
        mod.width = float(args.get("width", 0.05))
        mod.segments = int(args.get("segments", 3))
    elif kind == "array":
        mod.count = int(args.get("count", 3))
        mod.relative_offset_displace = args.get("relative_offset", [1.0, 0.0, 0.0])
    elif kind == "mirror":
        axes = args.get("axes", ["x"])
        mod.use_axis = ["x" in axes, "y" in axes, "z" in axes]
    elif kind == "boolean":
        mod.operation = args.get("operation", "difference").upper()
        if not args.get("target"):
            raise CommandError(
                "a boolean modifier needs target: the name of the cutter object (make one with "
                "create_primitive first if there is none)"
            )
        mod.object = _object(args["target"], "add_modifier", "target")
        if args.get("hide_target", True):
            mod.object.hide_render = True
            mod.object.hide_set(True)
    if args.get("apply", False):
        bpy.context.view_layer.objects.active = obj
        with bpy.context.temp_override(object=obj, active_object=obj):
            bpy.ops.object.modifier_apply(modifier=mod.name)
    bpy.context.view_layer.update()
    return _describe(obj, bpy.context.evaluated_depsgraph_get())


def place_camera(args: JSON) -> JSON:
    """Create or move a camera, aim it at a point and optionally make it the scene camera."""
    name, named = own_name(args.get("name") or "Camera", "CAMERA", "place_camera")
    obj = bpy.data.objects.get(name)
    if obj is None:
        obj = bpy.data.objects.new(name, bpy.data.cameras.new(name))
        bpy.context.scene.collection.objects.link(obj)
        give_name(obj, name)  # fails (rolled back) if Blender had to shorten it
    obj.location = args["location"]
    aimed = engine_aim.aim(obj, args.get("look_at", [0.0, 0.0, 0.0]))
    obj.data.lens = float(args.get("lens_mm", 50.0))
    if args.get("make_active", True):
        bpy.context.scene.camera = obj
    bpy.context.view_layer.update()
    described = _describe(obj, bpy.context.evaluated_depsgraph_get())
    return {**described, "aimed_at": aimed, "named": named}


def place_light(args: JSON) -> JSON:
    """Create or move a point, sun, spot or area light and aim it: at ``location``, or
    ``gap`` metres (default 1) over the top of the object named ``above``, centred on it
    (``above`` wins over a ``location``, and the result says so in ``placed``). It aims at
    ``look_at``; without one, at the ``above`` object's centre, else at the origin."""
    name, named = own_name(args.get("name") or "Light", "LIGHT", "place_light")
    location, above = args.get("location"), args.get("above")
    if location is None and not above:
        raise CommandError(
            "place_light: give location [x, y, z] or above (the name of an object to put it over)"
        )
    gap = args.get("gap")
    # Measured before anything is made: an unknown name leaves no light behind.
    over = engine_place.over(name, above, 1.0 if gap is None else float(gap)) if above else None
    kind = args.get("kind", "sun").upper()
    obj = bpy.data.objects.get(name)
    if obj is None:
        obj = bpy.data.objects.new(name, bpy.data.lights.new(name, type=kind))
        bpy.context.scene.collection.objects.link(obj)
        give_name(obj, name)  # fails (rolled back) if Blender had to shorten it
    obj.data.type = kind
    energy = args.get("energy")
    obj.data.energy = float((3.0 if kind == "SUN" else 1000.0) if energy is None else energy)
    obj.data.color = list(args.get("color", [1.0, 1.0, 1.0]))[:3]
    look_at = args.get("look_at")
    if over is None:
        obj.location = location
        aimed = engine_aim.aim(obj, [0.0, 0.0, 0.0] if look_at is None else look_at)
    else:
        engine_place.put(obj, over.point)
        aimed = _aim_over(obj, over, look_at)
    described = _describe(obj, bpy.context.evaluated_depsgraph_get())
    result = {**described, "aimed_at": aimed, "named": named}
    if over is not None:
        at = engine_aim.point_text(obj.matrix_world.translation)
        result["placed"] = f"{over.said}: at {at}"
        if location is not None:
            given = engine_aim.point_text(location)
            result["placed"] += f"; the location given, {given}, was replaced by above"
    return result


def _aim_over(obj: Any, over: engine_place.Over, look_at: Any) -> str:
    """Aim a light put over an object: at ``look_at`` when given, else at the object's centre
    (straight down). With gap 0 over a flat object (or one without geometry) the light stands
    on that centre; it then faces straight down all the same."""
    if look_at is not None:
        return engine_aim.aim(obj, look_at)
    if (over.point - over.centre).length > 1e-6:
        return engine_aim.aim(obj, over.support.name)
    engine_aim.aim(obj, over.point - Vector((0.0, 0.0, 1.0)))
    return f"{over.support.name} {engine_aim.point_text(over.centre)}, straight down"


def convert_asset(args: JSON) -> JSON:
    """Convert a file (e.g. FBX) to another format in a clean scene, then put the scene back."""
    snapshot = SceneSnapshot()
    snapshot.take()
    try:
        reset({})
        imported = engine_io.import_asset({"path": args["path"]})
        exported = engine_io.export_asset({"path": args["output"]})
        return {**exported, "objects": imported["objects"]}
    finally:
        snapshot.restore()
        snapshot.discard()


# --- dispatch -------------------------------------------------------------------------

Handler = Callable[[JSON], JSON]

COMMANDS: dict[str, tuple[Handler, bool]] = {
    # name: (handler, mutates the scene)
    "ping": (ping, False),
    "scene_info": (scene_info, False),
    "reset": (reset, True),
    "create_primitive": (create_primitive, True),
    "set_transform": (set_transform, True),
    "set_material": (set_material, True),
    "add_modifier": (add_modifier, True),
    "delete": (engine_delete.delete, True),
    "place_camera": (place_camera, True),
    "place_light": (place_light, True),
    "import_asset": (engine_io.import_asset, True),
    "export_asset": (engine_io.export_asset, False),
    "convert_asset": (convert_asset, False),  # restores the scene itself, success or not
    "render": (engine_render.render, False),  # puts every setting back itself
    "fit_view": (engine_render.fit_view, True),
    "measure": (engine_measure.measure, False),
    "intersect": (engine_measure.intersect, False),
    "frame_check": (engine_measure.frame_check, False),
    "passes": (engine_passes.passes, False),
    "execute_python": (engine_io.execute_python, True),
}


_saved_scene: SavedScene | None = None


def keep_saved_scene(path: str | None) -> None:
    """Save the scene to ``path`` after every mutating command that succeeds, and use that
    save as the next command's restore point (the worker; the add-on uses undo instead)."""
    global _saved_scene
    _saved_scene = SavedScene(path) if path else None


def handle(command: str, args: JSON) -> JSON:
    """Run one command; return a response body: {"ok": True, "result"} or {"ok": False, "error"}."""
    entry = COMMANDS.get(command)
    if entry is None:
        return error_response(
            "UnknownCommand", f"unknown command {command!r}; known: {sorted(COMMANDS)}"
        )
    handler, mutates = entry
    snapshot: SceneSnapshot | SavedScene | None = None
    if mutates:
        snapshot = _saved_scene if _saved_scene is not None else SceneSnapshot()
    try:
        if snapshot is not None:
            snapshot.take()
        result = handler(args)
    except Exception as exc:
        rolled_back = False
        if snapshot is not None:
            try:
                snapshot.restore()
                rolled_back = True
            except Exception as restore_exc:  # report both; the host decides what to do
                exc.add_note(f"rollback failed: {restore_exc}")
        details = exc.details if isinstance(exc, ScriptFailed) else None
        kind = "CommandError" if isinstance(exc, CommandError) else type(exc).__name__
        message = str(exc) + "".join(f"\n{n}" for n in getattr(exc, "__notes__", []))
        return error_response(kind, message, rolled_back=rolled_back, details=details)
    finally:
        if snapshot is not None:
            snapshot.discard()
    reply: JSON = {"ok": True, "result": result}
    if mutates and _saved_scene is not None:
        try:
            _saved_scene.save()
        except Exception as exc:  # the command worked; say that a crash would now lose it
            reply["scene_unsaved"] = True
            reply["notice"] = (
                f"the scene could not be saved ({type(exc).__name__}: {exc}); if the Blender "
                "worker stops now, the scene is lost"
            )
    return reply


def error_response(
    kind: str, message: str, *, rolled_back: bool = False, details: Any = None
) -> JSON:
    """A failed response body: {"ok": False, "error": {...}}."""
    return {
        "ok": False,
        "error": {"type": kind, "message": message, "rolled_back": rolled_back, "details": details},
    }
