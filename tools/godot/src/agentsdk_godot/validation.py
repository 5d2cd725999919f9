"""Refusing what the engine would silently ignore: a node class that does not exist, a resource
used as a node, a property the node's class (or its script) does not have.

A scene file accepts any `key = value`; the engine drops unknown properties when it loads the
scene, so `albedo_color = Color( 1, 0, 0, 1 )` on a MeshInstance "works" and changes nothing. The
toolkit asks the engine's ClassDB (one headless run per new class, cached) and answers such a
call with an error that names what exists and how to do what was meant.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from agentsdk import ToolError
from agentsdk_godot.engine import ClassInfo, GodotEngine, ScriptInfo

__all__ = ["ClassCatalog"]

# properties the engine creates per instance (surface slots, bone tracks ...), never in ClassDB
_DYNAMIC = re.compile(r".*/\d+(/.*)?$")
_COLOUR_WORDS = ("color", "colour", "albedo")


class ClassCatalog:
    """What the installed engine knows about classes and scripts, asked lazily and cached."""

    def __init__(self, engine: GodotEngine, project: Path):
        self.engine = engine
        self.project = project
        self._classes: dict[str, ClassInfo] = {}
        self._scripts: dict[tuple[str, float], ScriptInfo] = {}
        self._all: list[str] = []
        self._colours: dict[str, tuple[float, ...] | None] = {}
        self.available = True  # False when the engine generation has no class-info helper

    async def load(self, classes: list[str], scripts: list[str] | None = None) -> None:
        """Make sure these classes and scripts are known (one engine run for what is new)."""
        new = sorted({c for c in classes if c and c not in self._classes})
        todo = [s for s in scripts or [] if self._script_key(s) not in self._scripts]
        if not self.available or (not new and not todo and self._all):
            return
        report = await self.engine.class_info(self.project, new, todo, all_classes=not self._all)
        if report is None:
            self.available = False
            return
        self._classes.update(report.classes)
        if report.all_classes:
            self._all = report.all_classes
        for path in todo:
            info = report.scripts.get(path)
            if info is not None:
                self._scripts[self._script_key(path)] = info

    def _script_key(self, res_path: str) -> tuple[str, float]:
        file = self.project / res_path.removeprefix("res://")
        return res_path, file.stat().st_mtime if file.exists() else 0.0

    @property
    def all_classes(self) -> list[str]:
        """Every class the engine has (after the first `load`)."""
        return list(self._all)

    def script(self, res_path: str) -> ScriptInfo | None:
        """A script already loaded with `load`."""
        return self._scripts.get(self._script_key(res_path))

    # ---------- checks (after `load`)

    def check_node_class(self, name: str) -> None:
        """A ToolError unless `name` is a node class the engine can create."""
        info = self._classes.get(name)
        if not self.available or info is None:
            return
        if not info.exists:
            nodes = [c for c in self._all if self._is_node(c)]
            close = difflib.get_close_matches(name, nodes, n=3, cutoff=0.6)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            if name.endswith("Mesh") or name in ("Cube", "Box", "Sphere", "Plane"):
                hint += ' A shape is a MeshInstance with mesh = "CubeMesh()" (or SphereMesh(), PlaneMesh()).'
            raise ToolError(f"Godot has no class {name!r}.{hint}")
        if not info.node:
            extra = ""
            if info.resource and name.endswith("Mesh"):
                extra = f' Add a MeshInstance and give it mesh = "{name}()".'
            elif info.resource and name.endswith("Material"):
                extra = f' Give a MeshInstance material_override = "{name}()".'
            raise ToolError(
                f"{name} is a {'resource' if info.resource else 'class'}, not a node.{extra}"
            )

    def _is_node(self, name: str) -> bool:
        info = self._classes.get(name)
        return info.node if info is not None else not name.endswith(("Mesh", "Material", "Shape"))

    def check_resource_class(self, name: str) -> None:
        """A ToolError unless `name` is a resource class (for a new "Name()" value)."""
        info = self._classes.get(name)
        if not self.available or info is None:
            return
        if not info.exists:
            resources = [
                c for c in self._all if c.endswith(("Mesh", "Material", "Shape", "Texture"))
            ]
            close = difflib.get_close_matches(name, resources, n=3, cutoff=0.6)
            hint = f" Did you mean {', '.join(c + '()' for c in close)}?" if close else ""
            raise ToolError(f"Godot has no class {name!r} for a new resource.{hint}")
        if info.node:
            raise ToolError(
                f"{name} is a node, not a resource: add it with add_node (type {name!r})"
            )

    def properties(self, owner_class: str | None, script: str | None = None) -> list[str] | None:
        """Every property of the class (and its script), or None when that cannot be known."""
        if not self.available or owner_class is None:
            return None
        info = self._classes.get(owner_class)
        if info is None or not info.exists:
            return None
        known = list(info.properties)
        if script:
            script_info = self.script(script)
            if script_info is None or not script_info.ok:
                return None  # a script that does not load yet: its properties cannot be known
            known += script_info.properties
        return known

    def check_property(self, owner_class: str | None, prop: str, script: str | None = None) -> None:
        """A ToolError unless `prop` is a property of the class or its script."""
        known = self.properties(owner_class, script)
        if known is None or prop in known or _DYNAMIC.match(prop):
            return
        close = difflib.get_close_matches(prop, known, n=3, cutoff=0.6)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        if any(w in prop.lower() for w in _COLOUR_WORDS) and "material_override" in known:
            hint += (
                " Its colour belongs to a material: set mesh/material (or material_override) to "
                '"SpatialMaterial()", then mesh/material/albedo_color.'
            )
        owner = f"{owner_class} (with its script)" if script else owner_class
        raise ToolError(f"{owner} has no property {prop!r}.{hint}")

    # ---------- types (after `load`)

    def info(self, name: str | None) -> ClassInfo | None:
        """What the engine said about a loaded class (None: unknown or not loaded)."""
        info = self._classes.get(name or "") if self.available else None
        return info if info is not None and info.exists else None

    def property_type(
        self, owner_class: str | None, prop: str, script: str | None = None
    ) -> str | None:
        """The Variant type name of a property ("String", "Vector3", "Object" ...), or None
        when it cannot be known (an unloaded class, a per-instance property, an untyped
        script variable)."""
        info = self.info(owner_class)
        if info is None:
            return None
        found = info.types.get(prop)
        if found is None and script:
            script_info = self.script(script)
            if script_info is not None and script_info.ok:
                found = script_info.types.get(prop)
        return None if found in (None, "Nil") else found

    def resource_classes(self, owner_class: str | None, prop: str) -> list[str]:
        """The classes a new value of a resource property can be (empty: not known)."""
        info = self.info(owner_class)
        return list(info.resources.get(prop, [])) if info is not None else []

    def enum(self, owner_class: str | None, prop: str) -> str | None:
        """An int property's names, e.g. "Left,Center,Right,Fill"."""
        info = self.info(owner_class)
        return info.enums.get(prop) if info is not None else None

    def is_a(self, name: str | None, base: str) -> bool | None:
        """Whether class `name` is `base` or inherits it (None: not known)."""
        info = self.info(name)
        if info is None:
            return None
        return base == name or base in info.inherits

    async def colours(self, names: list[str]) -> dict[str, tuple[float, ...] | None]:
        """Named colours as the engine knows them ("red", "dark green"), RGBA or None."""
        todo = sorted({n for n in names if n not in self._colours})
        if todo and self.available:
            report = await self.engine.class_info(self.project, [], [], colours=todo)
            for name in todo:
                found = report.colours.get(name) if report is not None else None
                self._colours[name] = tuple(found) if found is not None else None
        return {n: self._colours.get(n) for n in names}

    def forget_scripts(self) -> None:
        """Scripts may be rewritten between tasks: ask again."""
        self._scripts.clear()
