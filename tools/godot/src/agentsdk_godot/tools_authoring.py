"""Tools that write the project: scenes, nodes, properties, scripts, imported assets."""

from __future__ import annotations

import shutil
from pathlib import Path

from agentsdk import ToolError, tool
from agentsdk_godot.diagnostics import format_diagnostics
from agentsdk_godot.project import ProjectPathError
from agentsdk_godot.reports import SceneChange, ScriptCheck
from agentsdk_godot.scene import SceneError, SceneFile
from agentsdk_godot.toolkit_base import GodotToolkitBase
from agentsdk_godot.variant import (
    Constructor,
    SubResource,
    Variant,
    VariantSyntaxError,
    parse_variant,
)

__all__ = ["AuthoringTools", "literal"]

_VALUE_TYPES = (
    "Vector",
    "Color",
    "Transform",
    "Basis",
    "Quat",
    "Rect",
    "Plane",
    "AABB",
    "Pool",
    "Packed",
    "NodePath",
)


def literal(text: str) -> Variant:
    """A Godot literal from a tool argument, or a ToolError with examples."""
    try:
        return parse_variant(text)
    except VariantSyntaxError as err:
        raise ToolError(
            f'value {text!r} is not a Godot literal ({err}). Examples: 1.5, true, "text", '
            "Vector3( 0, 1, 0 ), Color( 1, 0, 0, 1 ), Transform( 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 5 )"
        ) from None


class AuthoringTools(GodotToolkitBase):
    """create_scene, add_node, set_property, remove_node, write_script, attach_script, import_asset."""

    @tool
    async def create_scene(
        self,
        path: str,
        root_type: str = "Spatial",
        root_name: str | None = None,
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
        scene = self.project.new_scene(name, root_type)
        try:
            change = self._save(path, scene, ".", f"created with root {name} ({root_type})")
        except ProjectPathError as err:
            raise ToolError(str(err)) from None
        if main or not self.project.main_scene:
            self.project.main_scene = change.scene
        return change

    @tool
    async def add_node(
        self,
        scene: str,
        name: str,
        type: str,
        parent: str = ".",
        properties: dict[str, str] | None = None,
    ) -> SceneChange:
        """Add a node to a scene. Meshes: give `mesh` a new resource as "CubeMesh()", "SphereMesh()".

        Args:
            scene: The scene file, e.g. "res://main.tscn".
            name: Name of the new node.
            type: Its class, e.g. MeshInstance, Camera, DirectionalLight, Label.
            parent: Path of the parent node ("." is the root, "Player/Arm" deeper).
            properties: Property name -> Godot literal, e.g. {"translation": "Vector3( 0, 1, 0 )"}.
        """
        doc = self._scene(scene)
        try:
            node = doc.add_node(name, self.project.dialect.class_name(type), parent)
            for key, text in (properties or {}).items():
                self._assign(doc, node.properties, key, text)
        except SceneError as err:
            raise ToolError(str(err)) from None
        return self._save(scene, doc, node.path, f"added {type} {node.path}")

    def _property_value(self, doc: SceneFile, text: str) -> Variant:
        value = literal(text)
        # "CubeMesh()" / "SpatialMaterial()" with no arguments: a new sub-resource of that class
        if (
            isinstance(value, Constructor)
            and not value.args
            and not value.name.startswith(_VALUE_TYPES)
        ):
            return doc.add_sub_resource(self.project.dialect.class_name(value.name), {})
        return value

    def _assign(self, doc: SceneFile, owner: dict[str, Variant], prop: str, text: str) -> None:
        """`prop` may walk resources stored in the scene: "mesh/material/albedo_color"."""
        first = prop.split("/")[0]
        if "/" in prop and isinstance(owner.get(first), SubResource):
            *chain, field = prop.split("/")
            for part in chain:
                ref = owner.get(part)
                if not isinstance(ref, SubResource):
                    raise SceneError(
                        f"{part} is not a resource stored in this scene: set it first, "
                        f'e.g. {part} = "SpatialMaterial()"'
                    )
                owner = doc.sub_resource(ref).properties
            owner[field] = self._property_value(doc, text)
        else:
            owner[prop] = self._property_value(doc, text)

    @tool
    async def set_property(self, scene: str, node: str, property: str, value: str) -> SceneChange:
        """Set a node property in a scene file.

        Args:
            scene: The scene file.
            node: Node path ("." for the root).
            property: e.g. "translation", "transform", "text", "mesh". A field of a resource stored
                in the scene is "<property>/<field>", e.g. "mesh/size", "mesh/material/albedo_color".
            value: A Godot literal: 2.5, true, "hi", Vector3( 0, 1, 0 ), Color( 1, 0, 0, 1 ), CubeMesh().
        """
        doc = self._scene(scene)
        try:
            target = doc.node(node)
            self._assign(doc, target.properties, property, value)
        except SceneError as err:
            raise ToolError(str(err)) from None
        return self._save(scene, doc, target.path, f"{property} = {value}")

    @tool
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

    @tool
    async def write_script(self, path: str, source: str) -> ScriptCheck:
        """Write a GDScript file and check it with the engine (errors come back with file and line).

        Args:
            path: e.g. "res://player.gd".
            source: The full GDScript source (Godot 3: `extends Spatial`, `export var speed = 1.0`).
        """
        if not path.endswith(".gd"):
            raise ToolError("GDScript files end in .gd")
        try:
            res = self.project.write_text(path, source)
        except ProjectPathError as err:
            raise ToolError(str(err)) from None
        found = await self.engine.check_script(self.project.path, res)
        errors = [d for d in found if d.severity == "error"]
        if errors:
            raise ToolError(f"{res} was saved but does not parse:\n" + format_diagnostics(errors))
        return ScriptCheck(path=res, ok=True, warnings=[d.describe() for d in found])

    @tool
    async def attach_script(self, scene: str, node: str, script: str) -> SceneChange:
        """Attach an existing GDScript file to a node of a scene.

        Args:
            scene: The scene file.
            node: Node path ("." for the root).
            script: The script, e.g. "res://spin.gd" (write it first with write_script).
        """
        try:
            exists = self.project.file(script).exists()
        except ProjectPathError as err:
            raise ToolError(str(err)) from None
        if not exists:
            raise ToolError(f"{script} does not exist: write it first with write_script")
        doc = self._scene(scene)
        try:
            doc.attach_script(node, self.project.res_path(script))
        except SceneError as err:
            raise ToolError(str(err)) from None
        return self._save(scene, doc, doc.node(node).path, f"script {script}")

    @tool
    async def import_asset(
        self, source: str, scene: str | None = None, parent: str = ".", name: str | None = None
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
