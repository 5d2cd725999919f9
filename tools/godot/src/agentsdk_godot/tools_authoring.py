"""Tools that write the project: scenes, nodes, properties, scripts, imported assets."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from agentsdk import ToolError, tool
from agentsdk_godot.diagnostics import format_diagnostics
from agentsdk_godot.project import ProjectPathError
from agentsdk_godot.reports import SceneChange, ScriptCheck
from agentsdk_godot.scene import SceneError, SceneFile
from agentsdk_godot.toolkit_base import GodotToolkitBase
from agentsdk_godot.validation import ClassCatalog
from agentsdk_godot.variant import (
    Constructor,
    ExtResource,
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


_DYNAMIC = re.compile(r".*/\d+(/.*)?$")  # per-instance properties: material/0, bones/3/name


def _example_resource(prop: str) -> str:
    if "material" in prop:
        return "SpatialMaterial()"
    if "shape" in prop:
        return "BoxShape()"
    return "CubeMesh()" if prop == "mesh" else "<ResourceClass>()"


def _maybe_literal(text: str) -> Variant:
    try:
        return parse_variant(text)
    except VariantSyntaxError:
        return None


class AuthoringTools(GodotToolkitBase):
    """create_scene, add_node, set_property, remove_node, write_script, attach_script, import_asset."""

    @tool(side_effects=True)
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
        try:
            exists = self.project.file(path).exists()
        except ProjectPathError as err:
            raise ToolError(str(err)) from None
        if exists:  # never replace a scene (and the work in it) by an empty one
            res = self.project.res_path(self.project.file(path))
            nodes = ", ".join(n.path for n in self._scene(res).nodes)
            raise ToolError(
                f"{res} already exists (nodes: {nodes}); do not create it again. Add a child with "
                f'add_node(scene="{res}", name="...", type="MeshInstance"), change one with '
                "set_property, or create a new scene under another path"
            )
        cls = self.project.dialect.class_name(root_type)
        catalog = await self._known(self.project.new_scene(name, "Node"), [cls], [])
        catalog.check_node_class(cls)
        scene = self.project.new_scene(name, root_type)
        try:
            change = self._save(path, scene, ".", f"created with root {name} ({root_type})")
            change.detail += f'; next: add children with add_node(scene="{change.scene}", ...)'
        except ProjectPathError as err:
            raise ToolError(str(err)) from None
        if main or not self.project.main_scene:
            self.project.main_scene = change.scene
        return change

    @tool(side_effects=True)
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
        cls = self.project.dialect.class_name(type)
        catalog = await self._known(doc, [cls], list((properties or {}).values()))
        catalog.check_node_class(cls)
        try:
            node = doc.add_node(name, cls, parent)
            for key, text in (properties or {}).items():
                self._assign(doc, node.properties, key, text, (cls, None))
        except SceneError as err:
            raise ToolError(str(err)) from None
        return self._save(scene, doc, node.path, f"added {type} {node.path}")

    async def _known(self, doc: SceneFile, classes: list[str], values: list[str]) -> ClassCatalog:
        """The class catalog, with every class these edits may touch loaded."""
        if self._catalog is None or self._catalog.project != self.project.path:
            self._catalog = ClassCatalog(self.engine, self.project.path)
        wanted = list(classes) + [s.type for s in doc.sub_resources]
        wanted += [n.type for n in doc.nodes if n.type]
        for text in values:
            value = _maybe_literal(text)
            if isinstance(value, Constructor) and not value.args:
                wanted.append(self.project.dialect.class_name(value.name))
        scripts = [
            e.path
            for n in doc.nodes
            for e in doc.ext_resources
            if n.properties.get("script") == ExtResource(e.id)
            and self.project.file(e.path).exists()
        ]
        await self._catalog.load(wanted, scripts)
        return self._catalog

    def _property_value(self, doc: SceneFile, text: str) -> Variant:
        value = literal(text)
        # "CubeMesh()" / "SpatialMaterial()" with no arguments: a new sub-resource of that class
        if (
            isinstance(value, Constructor)
            and not value.args
            and not value.name.startswith(_VALUE_TYPES)
        ):
            cls = self.project.dialect.class_name(value.name)
            if self._catalog is not None:
                self._catalog.check_resource_class(cls)
            return doc.add_sub_resource(cls, {})
        return value

    def _assign(
        self,
        doc: SceneFile,
        owner: dict[str, Variant],
        prop: str,
        text: str,
        owner_class: tuple[str | None, str | None],
    ) -> None:
        """`prop` may walk resources stored in the scene: "mesh/material/albedo_color".
        `owner_class` is (class, script path) of the node, to refuse properties it lacks."""
        cls, script = owner_class
        catalog = self._catalog
        known = catalog.properties(cls, script) if catalog is not None else None
        first = prop.split("/")[0]
        walk = "/" in prop and isinstance(owner.get(first), SubResource)
        if "/" in prop and known is not None and prop not in known and not walk:
            if not _DYNAMIC.match(prop) and first in known:
                raise SceneError(
                    f"{first} is not a resource stored in this scene: set it first, e.g. "
                    f'{first} = "{_example_resource(first)}"'
                )
        if walk and not (known is not None and prop in known):
            *chain, field = prop.split("/")
            for part in chain:
                ref = owner.get(part)
                if not isinstance(ref, SubResource):
                    raise SceneError(
                        f"{part} is not a resource stored in this scene: set it first, "
                        f'e.g. {part} = "{_example_resource(part)}"'
                    )
                entry = doc.sub_resource(ref)
                owner, cls = entry.properties, entry.type
            if catalog is not None:
                catalog.check_property(cls, field)
            owner[field] = self._property_value(doc, text)
        else:
            if catalog is not None:
                catalog.check_property(cls, prop, script)
            owner[prop] = self._property_value(doc, text)

    @tool(side_effects=True)
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
        except SceneError as err:
            raise ToolError(str(err)) from None
        await self._known(doc, [target.type or ""], [value])
        script_ref = target.properties.get("script")
        script = next((e.path for e in doc.ext_resources if script_ref == ExtResource(e.id)), None)
        try:
            self._assign(doc, target.properties, property, value, (target.type, script))
        except SceneError as err:
            raise ToolError(str(err)) from None
        return self._save(scene, doc, target.path, f"{property} = {value}")

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

    @tool(side_effects=True)
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

    @tool(side_effects=True)
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
