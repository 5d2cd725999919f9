"""Deleting objects: by name, or every object but the ones to keep (stdlib + bpy; ships
inside the add-on too).

"Delete everything except the crate" is one call, ``delete(keep=["Crate"])``: a small model
asked for it listed the one object to keep in ``names`` and deleted it. What is kept looks
as it did: the kept objects' children and the objects their modifiers and constraints use
(a boolean cutter, an armature, a tracking target) stay too, and so does the scene camera,
which frames the picture rather than being part of it. An object whose parent is deleted is
attached to its nearest surviving ancestor (or none) without moving in the world.
"""

from __future__ import annotations

import json
from typing import Any

import bpy

from .engine_errors import CommandError
from .engine_names import listing, spoken
from .engine_unknown import missing_objects

JSON = dict[str, Any]

_EITHER = "give names (the objects to delete) or keep (delete every other object)"


def _missing(names: list[str], role: str) -> None:
    unknown = [n for n in dict.fromkeys(names) if bpy.data.objects.get(n) is None]
    if unknown:  # no "create it first" here: a name to delete that no object has is done
        found = missing_objects(unknown, tool="delete", field=role, asked=names, make=None)
        raise CommandError(f"{role}: {found}; nothing was deleted")


def _both(names: list[str], keep: list[str]) -> str:
    """The refusal of names and keep together, with the call that does what they ask: they
    agree (names is what keep would delete), or the two calls to choose between."""
    names = [n for n in dict.fromkeys(names) if n not in keep]  # a name in both is kept
    real = [n for n in names if n in bpy.data.objects]
    absent = [n for n in names if n not in real]
    kept = [n for n in dict.fromkeys(keep) if n in bpy.data.objects]
    by_keep = sorted(o.name for o in bpy.data.objects if o.name not in _kept(kept)) if kept else []
    text = f"{_EITHER}, not both; nothing was deleted"
    if absent:
        verb = "do" if len(absent) > 1 else "does"
        scene = listing(bpy.data.objects.keys())
        text += f". {spoken(absent)} {verb} not exist (the scene has: {scene})"
        if not real:
            text += ", so there is nothing to delete by name"
    if real and set(real) == set(by_keep):
        return text + f". Here both mean the same: call delete(names={json.dumps(real)})"
    choices = []
    if real:
        choices.append(f"to delete just {spoken(real)}: call delete(names={json.dumps(real)})")
    if kept and by_keep:
        choices.append(
            f"to delete every object except {spoken(kept)} ({listing(by_keep)}): "
            f"call delete(keep={json.dumps(kept)})"
        )
    elif kept:
        text += f", and keeping {spoken(kept)} deletes nothing either: there is nothing to delete"
    if choices:
        advice = "; or ".join(choices)
        text += ". " + advice[0].upper() + advice[1:]
    return text


def _used_objects(obj: Any) -> list[tuple[Any, str]]:
    """Objects that ``obj``'s modifiers and constraints point at, with how it uses them."""
    used = []
    for owner, what in [(m, "modifier") for m in obj.modifiers] + [
        (c, "constraint") for c in obj.constraints
    ]:
        for prop in owner.bl_rna.properties:
            if prop.type != "POINTER" or getattr(prop.fixed_type, "identifier", "") != "Object":
                continue
            other = getattr(owner, prop.identifier, None)
            if other is not None and other != obj:
                used.append((other, f"used by {obj.name}'s {owner.name} {what}"))
    return used


def _kept(keep: list[str]) -> dict[str, str | None]:
    """Every object that stays, with why when it was not named: children and used objects of
    what stays (followed through), and the scene camera."""
    kept: dict[str, str | None] = dict.fromkeys(keep)
    queue = [bpy.data.objects[n] for n in kept]
    camera = bpy.context.scene.camera
    if camera is not None and camera.name not in kept:
        kept[camera.name] = "the scene camera (delete it by name to remove it)"
        queue.append(camera)
    while queue:
        obj = queue.pop()
        found = [(c, f"child of {obj.name}") for c in obj.children] + _used_objects(obj)
        for other, why in found:
            if other.name not in kept:
                kept[other.name] = why
                queue.append(other)
    return kept


def _remove(doomed: set[str]) -> list[str]:
    """Delete the objects named ``doomed``; a survivor whose parent goes is attached to its
    nearest surviving ancestor (or none), keeping its world placement. Says who moved up."""
    reattached = []
    for obj in bpy.data.objects:
        if obj.name in doomed or obj.parent is None or obj.parent.name not in doomed:
            continue
        old, ancestor = obj.parent.name, obj.parent
        while ancestor is not None and ancestor.name in doomed:
            ancestor = ancestor.parent
        placed = obj.matrix_world.copy()
        obj.parent = ancestor
        obj.matrix_world = placed  # solved against the new parent: it does not move
        now = f"now under {ancestor.name}" if ancestor is not None else "now unparented"
        reattached.append(f"{obj.name}: its parent {old} was deleted; {now}, in the same place")
    bpy.data.batch_remove([bpy.data.objects[n] for n in doomed])
    bpy.context.view_layer.update()
    return reattached


def delete(args: JSON) -> JSON:
    """Delete the objects in ``names``, or every object but those in ``keep`` (and what they
    need, see the module); an unknown name deletes nothing."""
    names, keep = list(args.get("names") or []), list(args.get("keep") or [])
    if names and set(names) <= set(keep):
        names = []  # an object in both lists is kept: small models fill every field
    if names and keep:
        raise CommandError(_both(names, keep))
    if not names and not keep:
        raise CommandError(_EITHER)
    _missing(names or keep, "names" if names else "keep")
    result: JSON = {}
    if names:
        doomed = set(names)
    else:
        kept = _kept(keep)
        doomed = {o.name for o in bpy.data.objects if o.name not in kept}
        result["kept"] = sorted(kept)
        also = [f"{n}: {why}" for n, why in sorted(kept.items()) if why is not None]
        if also:
            result["also_kept"] = also
    reattached = _remove(doomed)
    result["deleted"] = sorted(doomed) if keep else list(dict.fromkeys(names))
    if reattached:
        result["reattached"] = reattached
    return result
