"""Depth and surface-normal passes and the camera's intrinsics and extrinsics
(stdlib + bpy + numpy; ships in the add-on).

Depth and normals are ray cast through every pixel centre against the rendered geometry
(one BVH of the evaluated, world-space triangles), so they need no render engine, no
compositor and no EXR reader: depth is the distance along the camera's viewing axis in
metres (as BlenderProc's depth), normals are world-space face normals, background is
``inf`` depth and zero normals.
"""

from __future__ import annotations

import base64
import math
from typing import Any

import bpy
import numpy as np
from mathutils import Vector
from mathutils.bvhtree import BVHTree
from numpy.typing import NDArray

from .engine_errors import CommandError
from .engine_settings import settings_kept
from .engine_vision import Projection

JSON = dict[str, Any]


def _scene_tree(depsgraph: Any) -> BVHTree | None:
    points: list[NDArray[Any]] = []
    faces: list[NDArray[Any]] = []
    offset = 0
    for instance in depsgraph.object_instances:
        obj = instance.object
        if obj.type not in {"MESH", "CURVE", "SURFACE", "FONT", "META"} or obj.original.hide_render:
            continue
        mesh = obj.to_mesh()
        try:
            if mesh is None or not len(mesh.polygons):
                continue
            local = np.empty(len(mesh.vertices) * 3, np.float64)
            mesh.vertices.foreach_get("co", local)
            mesh.calc_loop_triangles()
            tris = np.empty(len(mesh.loop_triangles) * 3, np.int64)
            mesh.loop_triangles.foreach_get("vertices", tris)
        finally:
            obj.to_mesh_clear()
        matrix = np.array(instance.matrix_world, np.float64)
        points.append(local.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3])
        faces.append(tris.reshape(-1, 3) + offset)
        offset += len(points[-1])
    if not points:
        return None
    return BVHTree.FromPolygons(
        np.concatenate(points).tolist(), np.concatenate(faces).tolist(), all_triangles=True
    )


def camera_model(scene: Any, camera: Any, width: int, height: int) -> JSON:
    """Intrinsics (K in pixels, OpenCV convention: x right, y down, origin at the top-left
    pixel's corner) and extrinsics (world to camera, Blender's and OpenCV's axes)."""
    data = camera.data
    matrix_world = np.array(camera.matrix_world, np.float64)
    world_to_camera = np.linalg.inv(matrix_world)
    opencv = np.diag([1.0, -1.0, -1.0, 1.0]) @ world_to_camera
    longest = max(width, height)
    cx = width / 2 - data.shift_x * longest
    cy = height / 2 + data.shift_y * longest
    model: JSON = {
        "width": width,
        "height": height,
        "type": data.type,
        "lens_mm": data.lens,
        "sensor_width_mm": data.sensor_width,
        "sensor_height_mm": data.sensor_height,
        "sensor_fit": data.sensor_fit,
        "clip_start": data.clip_start,
        "clip_end": data.clip_end,
        "world_to_camera": world_to_camera.round(9).tolist(),
        "world_to_camera_opencv": opencv.round(9).tolist(),
        "camera_to_world": matrix_world.round(9).tolist(),
    }
    if data.type == "ORTHO":
        scale = data.ortho_scale / longest  # metres per pixel
        model.update({"metres_per_pixel": scale, "K": None, "fov_x_deg": None, "fov_y_deg": None})
        return model
    from .engine_render import _half_tangents

    tan_x, tan_y = _half_tangents(data, width, height)
    fx, fy = width / (2 * tan_x), height / (2 * tan_y)
    model.update(
        {
            "K": [[fx, 0.0, cx], [0.0, fy, cy], [0.0, 0.0, 1.0]],
            "fov_x_deg": math.degrees(2 * math.atan(tan_x)),
            "fov_y_deg": math.degrees(2 * math.atan(tan_y)),
        }
    )
    return model


def passes(args: JSON) -> JSON:
    """Depth (m along the view axis), world normals and the camera model for the scene
    camera at ``resolution``; arrays come back as base64 float32, row 0 at the top."""
    scene = bpy.context.scene
    camera = scene.camera
    if camera is None:
        raise CommandError("the scene has no camera: place_camera or fit_view first")
    width, height = (int(v) for v in args.get("resolution", (320, 240)))
    with settings_kept(scene):
        scene.render.resolution_x, scene.render.resolution_y = width, height
        scene.render.resolution_percentage = 100
        scene.render.pixel_aspect_x = scene.render.pixel_aspect_y = 1.0
        depsgraph = bpy.context.evaluated_depsgraph_get()
        model = camera_model(scene, camera, width, height)
        projection = Projection(scene, camera, depsgraph)
        tree = _scene_tree(depsgraph)
    depth = np.full((height, width), np.inf, np.float32)
    normals = np.zeros((height, width, 3), np.float32)
    if tree is not None:
        origins, directions = _rays(projection, width, height)
        axis = -projection.view[2, :3]  # the camera's viewing direction in world space
        position = model_origin(projection)
        for index in range(width * height):
            hit, normal, _face, _distance = tree.ray_cast(
                Vector(origins[index]), Vector(directions[index]), projection.clip_end
            )
            if hit is None:
                continue
            row, col = divmod(index, width)
            depth[row, col] = float(np.dot(np.array(hit) - position, axis))
            normals[row, col] = tuple(normal)
    return {
        "camera": model,
        "depth_base64": base64.b64encode(depth.tobytes()).decode("ascii"),
        "normals_base64": base64.b64encode(normals.tobytes()).decode("ascii"),
        "width": width,
        "height": height,
    }


def model_origin(projection: Projection) -> NDArray[Any]:
    """The camera's position in world space."""
    rotation, translation = projection.view[:3, :3], projection.view[:3, 3]
    return np.asarray(-rotation.T @ translation)


def _rays(projection: Projection, width: int, height: int) -> tuple[NDArray[Any], NDArray[Any]]:
    """World-space ray origins and unit directions through every pixel centre, row by row
    from the top, unprojected with the inverse of the camera's own matrix."""
    cols, rows = np.meshgrid(np.arange(width) + 0.5, np.arange(height) + 0.5)
    ndc_x = cols.ravel() / width * 2 - 1
    ndc_y = 1 - rows.ravel() / height * 2
    inverse = np.linalg.inv(projection.full)
    near = np.stack([ndc_x, ndc_y, -np.ones_like(ndc_x), np.ones_like(ndc_x)], 1) @ inverse.T
    far = np.stack([ndc_x, ndc_y, np.ones_like(ndc_x), np.ones_like(ndc_x)], 1) @ inverse.T
    near = near[:, :3] / near[:, 3:4]
    far = far[:, :3] / far[:, 3:4]
    directions = far - near
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    return near, directions
