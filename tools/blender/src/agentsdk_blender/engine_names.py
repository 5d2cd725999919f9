"""Object names the caller chose: refuse one that is taken instead of letting Blender make
``Crate.001`` (stdlib + bpy; ships inside the add-on too).

Blender renames silently. A small model that asked for "Crate" and got "Crate.001" back
tends to send the call again with the name it was given, and every call then makes another
object under a new name, which no loop guard can see. Refusing, with where the existing
object is and which tool changes it, gives the model the step it was looking for.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

import bpy

from .engine_errors import CommandError

# The tools that change an existing object of each type (the rest: set_transform and delete).
_CHANGED_BY = {
    "MESH": "change it with set_transform, set_material or add_modifier",
    "CAMERA": "move or aim it with place_camera (same name) or set_transform",
    "LIGHT": "move or aim it with place_light (same name) or set_transform",
}


def _num(value: float) -> str:
    return f"{round(float(value), 3) + 0.0:g}"  # + 0.0: no "-0"


def closest(name: str, names: list[str]) -> str | None:
    """The one of ``names`` that ``name`` most likely meant (case and small slips), or None."""
    import difflib

    lowered = {n.lower(): n for n in names}
    if name.lower() in lowered:
        return lowered[name.lower()]
    found = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[found[0]] if found else None


def meant(name: str, leave_out: Any = None) -> str:
    """ "; did you mean 'Crate'?" for a name close to one object's (case, a letter or two),
    else ""."""
    found = closest(name, [o.name for o in bpy.data.objects if o != leave_out])
    return f"; did you mean {found!r}?" if found else ""


LIMIT = 20  # names listed before "and N more"


def shown(names: Iterable[str]) -> str:
    """Names for a message, plainly: ``B, C``; JSON quotes only on a name that needs them
    (empty, holding a comma, or with spaces at either end)."""
    return ", ".join(
        json.dumps(n) if not n or n != n.strip() or "," in n else n for n in dict.fromkeys(names)
    )


def spoken(names: Sequence[str]) -> str:
    """``B``, ``B and C``, ``B, C and D``."""
    listed = [shown([n]) for n in dict.fromkeys(names)]
    return listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " and " + listed[-1]


def listing(names: Iterable[str], *, limit: int = LIMIT) -> str:
    """Sorted names, at most ``limit``, then how many more (scene_info lists them all)."""
    ordered = sorted(names)
    text = shown(ordered[:limit])
    if len(ordered) > limit:
        text += f" and {len(ordered) - limit} more (scene_info lists them)"
    return text


def object_list(*, leave_out: Any = None, limit: int = LIMIT) -> str:
    """The scene's object names for an error message (:func:`listing`), "none" when there
    are none; a model can page through scene_info for the rest."""
    return listing((o.name for o in bpy.data.objects if o != leave_out), limit=limit) or "none"


def where(obj: Any) -> str:
    """What and where an object is, in a few words: ``a mesh at (0, 0, 0.5), 1 x 1 x 1 m``."""
    kind = obj.type.lower().replace("_", " ")
    at = ", ".join(_num(v) for v in obj.matrix_world.translation)
    text = f"a {kind} at ({at})"
    if obj.type == "MESH":  # its size in the world: the local box times the world scale
        box = [[corner[i] for corner in obj.bound_box] for i in range(3)]
        scale = obj.matrix_world.to_scale()
        size = [(max(axis) - min(axis)) * abs(s) for axis, s in zip(box, scale, strict=True)]
        text += ", " + " x ".join(_num(v) for v in size) + " m"
    if obj.parent is not None:
        text += f", parented to {obj.parent.name!r}"
    return text


def refuse_taken(name: str) -> None:
    """Raise a CommandError when an object is already called ``name`` (exactly: Blender's
    names are case-sensitive). Nothing has been made yet when it raises."""
    existing = bpy.data.objects.get(name)
    if existing is None:
        return
    how = _CHANGED_BY.get(existing.type, "move it with set_transform")
    raise CommandError(
        f"an object named {name!r} already exists ({where(existing)}); {how}, or delete it "
        "first, or give the new object another name"
    )


def refuse_other_type(obj: Any, wanted: str, tool: str) -> NoReturn:
    """The refusal of ``place_camera``/``place_light`` when both the name asked for and its
    ``"<name> camera"``/``"<name> light"`` (``own_name``) are another kind of object's:
    what and where that object is."""
    kind = wanted.lower()
    raise CommandError(
        f"{obj.name!r} is already taken by {where(obj)}, not a {kind}; give the {kind} "
        f"another name (or delete {obj.name!r} first, then call {tool} again)"
    )


def own_name(name: str, wanted: str, tool: str) -> tuple[str, str | None]:
    """The name ``place_camera``/``place_light`` use for ``name``, and a note when it is not
    ``name`` itself. An object of another type with that name (small models pass the name of
    what the camera or light is for, then send the same call again after a refusal) makes it
    ``"<name> camera"``/``"<name> light"``; that object is left alone. Refused when that name
    is taken by another type too."""
    kind = wanted.lower()
    holder = bpy.data.objects.get(name)
    if holder is None or holder.type == wanted:
        return name, None
    other = f"{name} {kind}"
    taken = bpy.data.objects.get(other)
    if taken is not None and taken.type != wanted:
        refuse_other_type(taken, kind, tool)
    return other, f"named {other!r}: {name!r} is {where(holder)}"


def give_name(obj: Any, name: str) -> None:
    """Name a new object (and its data) exactly ``name``, or fail: the name is checked as
    free before, so a difference now means Blender shortened it."""
    obj.name = name
    if obj.name != name:
        raise CommandError(
            f"the name {name[:24]!r}... is too long: {len(name.encode())} bytes, and Blender "
            f"keeps {len(obj.name.encode())}; give a shorter name"
        )
    if obj.data is not None:
        obj.data.name = name  # data blocks may get a suffix; nothing addresses them by name
