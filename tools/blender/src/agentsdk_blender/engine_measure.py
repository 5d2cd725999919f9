"""Measurements inside Blender: world bounds of evaluated geometry, surface intersection,
and where objects fall in a camera's frame (stdlib + bpy + numpy; ships in the add-on)."""

from __future__ import annotations

from typing import Any

import bpy
import numpy as np
from mathutils.bvhtree import BVHTree
from numpy.typing import NDArray

from .engine_errors import CommandError
from .engine_place import world_geometry
from .engine_settings import settings_kept
from .engine_unknown import CUBE, missing_objects
from .engine_vision import EDGE, Projection, object_facts

JSON = dict[str, Any]


_CAMERA = "place_camera(name={name}, location=[7, -7, 5])"


def _object(name: str, make: str = CUBE) -> Any:
    """The object named ``name``; these commands serve several tools (measure_object,
    assert_rests_on...), so the error says "try again" rather than which tool."""
    obj = bpy.data.objects.get(name)
    if obj is None:
        raise CommandError(missing_objects([name], tool=None, make=make))
    return obj


def _world_mesh(obj: Any) -> tuple[NDArray[Any], NDArray[Any]]:
    """World-space vertices and triangles of an object as rendered (modifiers applied); an
    object without geometry is one point at its location."""
    points, triangles, _ = world_geometry(obj)
    if len(points) == 0:
        points = np.array(obj.matrix_world.translation, np.float64).reshape(1, 3)
    return points, triangles


def measure(args: JSON) -> JSON:
    """World-space bounds, size and centre of each named object (evaluated geometry; an
    object without geometry measures as its location)."""
    found = []
    for name in args["names"]:
        obj = _object(name)
        points, triangles = _world_mesh(obj)
        low, high = points.min(axis=0), points.max(axis=0)
        found.append(
            {
                "name": obj.name,
                "type": obj.type,
                "bounds_min": [round(float(v), 6) for v in low],
                "bounds_max": [round(float(v), 6) for v in high],
                "vertices": len(points) if len(triangles) else 0,
                "triangles": len(triangles),
            }
        )
    return {"objects": found}


def intersect(args: JSON) -> JSON:
    """Whether the surfaces of two objects cross (triangle pairs that intersect)."""
    trees = []
    for name in (args["a"], args["b"]):
        points, triangles = _world_mesh(_object(name))
        if len(triangles) == 0:
            return {"surfaces_intersect": False, "intersecting_pairs": 0}
        trees.append(BVHTree.FromPolygons(points.tolist(), triangles.tolist(), all_triangles=True))
    pairs = trees[0].overlap(trees[1])
    return {"surfaces_intersect": bool(pairs), "intersecting_pairs": len(pairs)}


def frame_check(args: JSON) -> JSON:
    """Where each named object's vertices project in the scene camera's frame."""
    scene = bpy.context.scene
    camera = _object(args["camera"], _CAMERA) if args.get("camera") else scene.camera
    if camera is None:
        raise CommandError("the scene has no camera: place_camera or fit_view first")
    if camera.type != "CAMERA":
        raise CommandError(f"{camera.name!r} is a {camera.type}, not a camera")
    width, height = (int(v) for v in args.get("resolution", (320, 240)))
    found = []
    with settings_kept(scene):
        scene.render.resolution_x, scene.render.resolution_y = width, height
        scene.render.resolution_percentage = 100
        projection = Projection(scene, camera, bpy.context.evaluated_depsgraph_get())
        for name in args["names"]:
            points, _ = _world_mesh(_object(name))
            facts = object_facts([points], projection)
            inside = 0.0
            if facts["rect"] is not None:
                ndc = projection.ndc(points)
                within = (np.abs(ndc) <= 1.0 + EDGE).all(axis=1)
                inside = float(within.mean())
            found.append(
                {
                    "name": name,
                    "behind_camera": facts["behind_camera"],
                    "crosses_camera_plane": facts["crosses_camera_plane"],
                    "outside_frustum": facts["outside_frustum"],
                    "ndc_rect": facts["rect"],
                    "cut_sides": facts.get("cut_sides", []),
                    "vertices_inside": round(inside, 6),
                }
            )
    return {"camera": camera.name, "objects": found}
