"""Save and put back every render setting a command touches (stdlib + bpy).

The visibility pass and the extra passes re-render the scene with other settings (flat
shading, object colours, no antialiasing, no colour management). Instead of listing the
settings one by one, every writable plain property of the structs involved is recorded
before and written back after, so nothing a user set can be forgotten.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import bpy

# Restored in this order: the display device decides which view transforms exist.
_STRUCTS = (
    "display_settings",
    "view_settings",
    "render",
    "render.image_settings",
    "display",
    "display.shading",
    "cycles",
    "eevee",
)
_PLAIN = {"BOOLEAN", "INT", "FLOAT", "ENUM", "STRING"}


def _resolve(scene: Any, path: str) -> Any:
    struct = scene
    for part in path.split("."):
        struct = getattr(struct, part, None)
        if struct is None:
            return None
    return struct


def _comparable(value: Any) -> Any:
    if isinstance(value, str | int | float | bool | set):
        return value
    try:
        return tuple(value)  # bpy arrays compare unequal to tuples
    except TypeError:
        return value


def _plain_values(struct: Any) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for prop in struct.bl_rna.properties:
        if prop.is_readonly or prop.type not in _PLAIN or prop.identifier == "rna_type":
            continue
        value = getattr(struct, prop.identifier)
        if getattr(prop, "is_array", False) or (prop.type == "ENUM" and prop.is_enum_flag):
            value = value.copy() if isinstance(value, set) else tuple(value)
        values[prop.identifier] = value
    return values


class SceneSettings:
    """The render-related settings of a scene, the camera, and the colours and render
    visibility of given objects, as they were when ``take`` ran."""

    def __init__(self, scene: Any) -> None:
        self.scene = scene
        self._structs: list[tuple[str, dict[str, Any]]] = []
        self._objects: list[tuple[Any, tuple[float, ...], bool]] = []
        self._camera: Any = None
        self._world: Any = None

    def take(self, objects: list[Any] | tuple[Any, ...] = ()) -> SceneSettings:
        """Record the settings (and each object's colour and hide_render)."""
        self._structs = [
            (path, _plain_values(struct))
            for path in _STRUCTS
            if (struct := _resolve(self.scene, path)) is not None
        ]
        self._objects = [(o, tuple(o.color), bool(o.hide_render)) for o in objects]
        self._camera = self.scene.camera
        self._world = self.scene.world
        return self

    def restore(self) -> None:
        """Write every recorded value back."""
        for path, values in self._structs:
            struct = _resolve(self.scene, path)
            if struct is None:
                continue
            for _ in range(2):  # a second round catches values another value had refused
                for name, value in values.items():
                    with contextlib.suppress(AttributeError, TypeError, ValueError):
                        # Write only what changed: coupled values (white balance temperature
                        # and white point) would drift if rewritten.
                        if _comparable(getattr(struct, name)) != value:
                            setattr(struct, name, value)
        for obj, colour, hidden in self._objects:
            with contextlib.suppress(ReferenceError):
                obj.color = colour
                obj.hide_render = hidden
        self.scene.camera = self._camera
        if self.scene.world is not self._world:
            created = self.scene.world
            self.scene.world = self._world
            if created is not None and created.users == 0:
                bpy.data.worlds.remove(created)


@contextlib.contextmanager
def settings_kept(scene: Any, objects: list[Any] | tuple[Any, ...] = ()) -> Iterator[None]:
    """Run a block and put the scene's render settings (and the objects' colours and render
    visibility) back afterwards, whatever happens."""
    saved = SceneSettings(scene).take(objects)
    try:
        yield
    finally:
        saved.restore()


def settings_fingerprint(scene: Any) -> dict[str, Any]:
    """All recorded settings as plain data (tests use it to prove nothing changed)."""
    return {
        path: {k: (sorted(v) if isinstance(v, set) else v) for k, v in _plain_values(s).items()}
        for path in _STRUCTS
        if (s := _resolve(scene, path)) is not None
    }
