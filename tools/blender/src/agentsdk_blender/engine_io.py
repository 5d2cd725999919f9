"""Engine commands that touch files or the renderer: import, export, render, execute_python.

Stdlib + bpy only (ships inside the add-on too).
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import resource
import signal
import traceback
from typing import Any

import bpy

from .engine_errors import CommandError, ScriptFailed
from .engine_unknown import missing_objects

JSON = dict[str, Any]

FORMATS = ("glb", "gltf", "fbx", "obj", "stl", "ply")


def _format_of(path: str, fmt: str | None) -> str:
    fmt = (fmt or os.path.splitext(path)[1].lstrip(".")).lower()
    if fmt not in FORMATS:
        raise CommandError(f"unsupported format {fmt!r}; use one of {list(FORMATS)}")
    return fmt


def _run_operator(op: Any, **kwargs: Any) -> None:
    try:
        result = op(**kwargs)
    except RuntimeError as exc:  # operators report their errors as RuntimeError text
        raise CommandError(str(exc).strip()) from None
    if "FINISHED" not in result:
        raise CommandError(f"{op.idname_py()} returned {sorted(result)}")


@contextlib.contextmanager
def _fbx_lights_fixed() -> Any:
    """Work around bpy 5.0.1's FBX importer failing on every file with a light.

    Its light reader sets ``light.cycles.cast_shadow``, which no longer exists (Blender
    moved it to ``light.use_shadow``, which the reader has set just before). The wrapper
    lets that one AttributeError pass and finishes the reader's last step (custom
    properties) itself; any other error, and any fixed Blender, is left alone.
    """
    import importlib

    reader: Any = importlib.import_module("io_scene_fbx.import_fbx")
    original = reader.blen_read_light

    def read_light(fbx_tmpl: Any, fbx_obj: Any, settings: Any) -> Any:
        before = {light.as_pointer() for light in bpy.data.lights}
        try:
            return original(fbx_tmpl, fbx_obj, settings)
        except AttributeError as exc:
            if "cast_shadow" not in str(exc):
                raise
            created = [x for x in bpy.data.lights if x.as_pointer() not in before]
            if len(created) != 1:
                raise
            if settings.use_custom_props:
                reader.blen_read_custom_properties(fbx_obj, created[0], settings)
            return created[0]

    reader.blen_read_light = read_light
    try:
        yield
    finally:
        reader.blen_read_light = original


# Collections importers fill with helpers that are not part of the asset.
_HELPER_COLLECTIONS = ("glTF_not_exported",)


def _remove_import_helpers(new: set[str]) -> None:
    for collection in [c for c in bpy.data.collections if c.name in _HELPER_COLLECTIONS]:
        for obj in list(collection.objects):
            if obj.name in new:
                data = obj.data
                bpy.data.objects.remove(obj, do_unlink=True)
                if data is not None and data.users == 0 and isinstance(data, bpy.types.Mesh):
                    bpy.data.meshes.remove(data)
        if not collection.objects:
            bpy.data.collections.remove(collection)


def import_asset(args: JSON) -> JSON:
    """Import a glb/gltf/fbx/obj/stl/ply file; return the names of the new objects.

    The format should already be checked against the file's content (the host does).
    Fails (and the scene is rolled back) when the file adds no objects, or no geometry
    although it is a mesh format.
    """
    path = os.path.abspath(args["path"])
    if not os.path.isfile(path):
        raise CommandError(f"no such file: {path}")
    fmt = _format_of(path, args.get("format"))
    before = {o.name for o in bpy.data.objects}
    operators = {
        "glb": bpy.ops.import_scene.gltf,
        "gltf": bpy.ops.import_scene.gltf,
        "fbx": bpy.ops.import_scene.fbx,
        "obj": bpy.ops.wm.obj_import,
        "stl": bpy.ops.wm.stl_import,
        "ply": bpy.ops.wm.ply_import,
    }
    if fmt in ("glb", "gltf"):
        # No bone-shape helper (an Icosphere outside the asset) for skinned files.
        _run_operator(operators[fmt], filepath=path, disable_bone_shape=True)
    elif fmt == "fbx":
        with _fbx_lights_fixed():
            _run_operator(operators[fmt], filepath=path)
    else:
        _run_operator(operators[fmt], filepath=path)
    _remove_import_helpers({o.name for o in bpy.data.objects} - before)
    created = [o for o in bpy.data.objects if o.name not in before]
    if not created:
        raise CommandError(f"importing {path} added no objects")
    vertices = sum(len(o.data.vertices) for o in created if o.type == "MESH")
    if fmt in ("obj", "stl", "ply") and vertices == 0:
        raise CommandError(
            f"importing {path} added no geometry (0 vertices): the file is empty, damaged or "
            f"not really a {fmt.upper()} file"
        )
    return {"path": path, "format": fmt, "objects": sorted(o.name for o in created)}


def export_asset(args: JSON) -> JSON:
    """Export the scene (or the named objects) to glb/gltf/fbx/obj/stl/ply."""
    path = os.path.abspath(args["path"])
    fmt = _format_of(path, args.get("format"))
    names = args.get("names") or []
    missing = [n for n in names if n not in bpy.data.objects]
    if missing:  # before anything is selected or written
        said = missing_objects(
            missing, tool="export_asset", field="names", asked=names,
            without="exports the whole scene",
        )  # fmt: skip
        raise CommandError(said)
    for obj in bpy.data.objects:
        obj.select_set(obj.name in names)
    selected = bool(names)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if fmt in ("glb", "gltf"):
        _run_operator(
            bpy.ops.export_scene.gltf,
            filepath=path,
            export_format="GLB" if fmt == "glb" else "GLTF_SEPARATE",
            use_selection=selected,
            export_apply=True,  # export what the renders show: modifiers applied
        )
    elif fmt == "fbx":
        _run_operator(
            bpy.ops.export_scene.fbx, filepath=path, use_selection=selected, use_mesh_modifiers=True
        )
    else:
        operator = {
            "obj": bpy.ops.wm.obj_export,
            "stl": bpy.ops.wm.stl_export,
            "ply": bpy.ops.wm.ply_export,
        }[fmt]
        _run_operator(
            operator, filepath=path, export_selected_objects=selected, apply_modifiers=True
        )
    return {"path": path, "format": fmt, "bytes": os.path.getsize(path)}


class _CpuLimitExceeded(BaseException):
    """Raised from the SIGXCPU handler; BaseException so user code's `except Exception` misses it."""


def _raise_cpu_limit(signum: int, frame: Any) -> None:
    raise _CpuLimitExceeded()


def _vm_size_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


@contextlib.contextmanager
def _limits(cpu_seconds: float | None, memory_bytes: int | None) -> Any:
    """Temporarily lower the soft CPU and address-space limits of this process.

    Soft limits may be raised again up to the (untouched) hard limit, so the worker
    stays usable after the script. CPU time is process-wide, so the limit is set
    relative to what the process has used so far.
    """
    saved_cpu = resource.getrlimit(resource.RLIMIT_CPU)
    saved_as = resource.getrlimit(resource.RLIMIT_AS)
    saved_handler = signal.signal(signal.SIGXCPU, _raise_cpu_limit)
    try:
        if cpu_seconds:
            usage = resource.getrusage(resource.RUSAGE_SELF)
            used = usage.ru_utime + usage.ru_stime
            resource.setrlimit(resource.RLIMIT_CPU, (math.ceil(used + cpu_seconds), saved_cpu[1]))
        if memory_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (_vm_size_bytes() + memory_bytes, saved_as[1]))
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_CPU, saved_cpu)
        resource.setrlimit(resource.RLIMIT_AS, saved_as)
        signal.signal(signal.SIGXCPU, saved_handler)


def execute_python(args: JSON) -> JSON:
    """Run free-form code with ``bpy`` in scope under CPU and memory limits.

    Returns stdout/stderr; on an exception the scene is rolled back and the
    exception (with the line in the submitted code) is reported with the output.
    """
    code = args["code"]
    stdout, stderr = io.StringIO(), io.StringIO()
    namespace: JSON = {"bpy": bpy, "__name__": "__agentsdk__"}
    error: str | None = None
    try:
        compiled = compile(code, "<execute_python>", "exec")
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            with _limits(args.get("cpu_seconds"), args.get("memory_bytes")):
                exec(compiled, namespace)
    except _CpuLimitExceeded:
        error = f"CpuLimitExceeded: the code used more than {args.get('cpu_seconds')} s of CPU"
    except MemoryError:
        error = f"MemoryError: the code tried to use more than {args.get('memory_bytes')} bytes"
    except SyntaxError as exc:
        error = f"SyntaxError: {exc.msg} (line {exc.lineno})"
    except Exception as exc:
        frames = [
            f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<execute_python>"
        ]
        where = f" (line {frames[-1].lineno})" if frames else ""
        error = f"{type(exc).__name__}: {exc}{where}"
    details = {"stdout": stdout.getvalue(), "stderr": stderr.getvalue(), "exception": error}
    if error is not None:
        raise ScriptFailed(error, details)
    return details
