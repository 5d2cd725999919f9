"""Scenes (.tscn) and resources (.tres) as editable objects on top of the text resource format."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from agentsdk_godot.resource_text import (
    Block,
    Section,
    SectionOrigin,
    format_key,
    join_blocks,
    parse_resource_text,
    render_section,
)
from agentsdk_godot.variant import (
    GODOT3_STYLE,
    ExtResource,
    SubResource,
    TextStyle,
    Variant,
    format_variant,
)

__all__ = ["ExtResourceEntry", "NodeEntry", "SceneError", "SceneFile", "SubResourceEntry"]


class SceneError(ValueError):
    """A scene edit that cannot be applied (unknown node, duplicate name, ...)."""


@dataclass
class ExtResourceEntry:
    """`[ext_resource path=... type=... id=...]`: a file the scene refers to."""

    id: int | str
    type: str
    path: str
    extra: dict[str, Variant] = field(default_factory=dict)  # e.g. Godot 4 `uid`
    origin: SectionOrigin | None = field(default=None, compare=False, repr=False)


@dataclass
class SubResourceEntry:
    """`[sub_resource type=... id=...]`: a resource stored inside the scene."""

    id: int | str
    type: str
    properties: dict[str, Variant] = field(default_factory=dict)
    origin: SectionOrigin | None = field(default=None, compare=False, repr=False)


@dataclass
class NodeEntry:
    """`[node name=... type=... parent=...]` and its properties.

    `parent` is None for the root, "." for children of the root, "A/B" deeper down.
    """

    name: str
    type: str | None = None
    parent: str | None = None
    instance: ExtResource | None = None
    properties: dict[str, Variant] = field(default_factory=dict)
    extra: dict[str, Variant] = field(default_factory=dict)  # groups, index, owner, ...
    origin: SectionOrigin | None = field(default=None, compare=False, repr=False)

    @property
    def path(self) -> str:
        """The node path relative to the scene root ("." for the root)."""
        if self.parent is None:
            return "."
        return self.name if self.parent == "." else f"{self.parent}/{self.name}"


@dataclass
class SceneFile:
    """A packed scene (`gd_scene`) or a resource (`gd_resource`) in text form."""

    kind: str = "gd_scene"  # or "gd_resource"
    format: int = 2
    resource_type: str | None = None  # gd_resource only
    header_extra: dict[str, Variant] = field(default_factory=dict)
    ext_resources: list[ExtResourceEntry] = field(default_factory=list)
    sub_resources: list[SubResourceEntry] = field(default_factory=list)
    nodes: list[NodeEntry] = field(default_factory=list)
    resource_properties: dict[str, Variant] = field(default_factory=dict)  # [resource]
    tail: list[Section] = field(default_factory=list)  # connections, editable, ...
    # where a parsed file's heading and [resource] section came from (kept text, see resource_text)
    header_origin: SectionOrigin | None = field(default=None, compare=False, repr=False)
    resource_origin: SectionOrigin | None = field(default=None, compare=False, repr=False)
    leading: str = field(default="", compare=False, repr=False)

    # ---------- reading and writing

    @classmethod
    def parse(cls, text: str) -> SceneFile:
        """Parse .tscn or .tres text."""
        doc = parse_resource_text(text)
        if not doc.sections or doc.sections[0].tag not in ("gd_scene", "gd_resource"):
            raise SceneError("not a Godot text scene or resource (no [gd_scene]/[gd_resource])")
        head = doc.sections[0]
        attrs = dict(head.attrs)
        attrs.pop("load_steps", None)
        fmt = attrs.pop("format", 2)
        scene = cls(
            kind=str(head.tag),
            format=int(fmt) if isinstance(fmt, int) else 2,
            resource_type=_opt_str(attrs.pop("type", None)),
            header_extra=attrs,
            header_origin=head.origin,
            leading=doc.leading or "",
        )
        for section in doc.sections[1:]:
            a = dict(section.attrs)
            if section.tag == "ext_resource":
                scene.ext_resources.append(
                    ExtResourceEntry(
                        id=_id(a.pop("id")),
                        type=str(a.pop("type", "")),
                        path=str(a.pop("path", "")),
                        extra=a,
                        origin=section.origin,
                    )
                )
            elif section.tag == "sub_resource":
                scene.sub_resources.append(
                    SubResourceEntry(
                        _id(a.pop("id")),
                        str(a.pop("type", "")),
                        section.properties,
                        origin=section.origin,
                    )
                )
            elif section.tag == "node":
                instance = a.pop("instance", None)
                scene.nodes.append(
                    NodeEntry(
                        name=str(a.pop("name")),
                        type=_opt_str(a.pop("type", None)),
                        parent=_opt_str(a.pop("parent", None)),
                        instance=instance if isinstance(instance, ExtResource) else None,
                        properties=section.properties,
                        extra=a,
                        origin=section.origin,
                    )
                )
            elif section.tag == "resource":
                scene.resource_properties = section.properties
                scene.resource_origin = section.origin
            else:
                scene.tail.append(section)
        return scene

    def to_text(self, style: TextStyle = GODOT3_STYLE) -> str:
        """Serialize in the engine's layout; what was parsed and not changed keeps its text."""
        head: dict[str, Variant] = {}
        if self.kind == "gd_resource" and self.resource_type:
            head["type"] = self.resource_type
        steps = len(self.ext_resources) + len(self.sub_resources) + 1
        if steps > 1:
            head["load_steps"] = steps
        head["format"] = self.format
        head.update(self.header_extra)
        legacy = self.format < 3

        def block(
            tag: str,
            attrs: dict[str, Variant],
            props: dict[str, Variant],
            origin: SectionOrigin | None,
        ) -> Block:
            text = render_section(
                tag,
                attrs,
                props,
                origin,
                attr_text=lambda k, v: _attr_text(k, v, style, legacy),
                line_text=lambda k, v: f"{format_key(k)} = {format_variant(v, style)}",
                first_gap="\n",
            )
            return Block(text, origin)

        header = self.header_origin
        if header is not None and list(header.attrs) != list(head):
            # load_steps appeared or went: the engine's order (type, load_steps, format, ...)
            header = None
        blocks = [block(self.kind, head, {}, header)]
        if header is None and self.header_origin is not None:
            blocks[0].origin = self.header_origin  # its gap to the next section still holds
        for e in self.ext_resources:
            # the engine's attribute order: Godot 3 path-type-id, Godot 4 type-uid-path-id
            attrs: dict[str, Variant] = (
                {"path": e.path, "type": e.type, **e.extra, "id": e.id}
                if legacy
                else {"type": e.type, **e.extra, "path": e.path, "id": e.id}
            )
            blocks.append(block("ext_resource", attrs, {}, e.origin))
            blocks[-1].gap = "\n"  # ext_resource lines are not separated by blank lines
        if self.ext_resources:
            blocks[-1].gap = "\n\n"
        for sub in self._subs_in_dependency_order():
            blocks.append(
                block("sub_resource", {"type": sub.type, "id": sub.id}, sub.properties, sub.origin)
            )
        if self.kind == "gd_resource":
            blocks.append(block("resource", {}, self.resource_properties, self.resource_origin))
        for node in self.nodes:
            attrs = {"name": node.name}
            if node.type is not None:
                attrs["type"] = node.type
            if node.parent is not None:
                attrs["parent"] = node.parent
            attrs.update(node.extra)
            if node.instance is not None:
                attrs["instance"] = node.instance
            blocks.append(block("node", attrs, node.properties, node.origin))
        if self.tail and legacy:
            blocks[-1].gap = "\n"  # Godot 3 writes connections right under the last node
        for index, section in enumerate(self.tail):
            blocks.append(
                block(section.tag or "", section.attrs, section.properties, section.origin)
            )
            if index + 1 < len(self.tail):
                blocks[-1].gap = "\n"  # connections are not separated by blank lines
        return join_blocks(blocks, self.leading)

    def _subs_in_dependency_order(self) -> list[SubResourceEntry]:
        # the engine resolves SubResource(...) only to resources written above it
        by_id = {s.id: s for s in self.sub_resources}
        ordered: list[SubResourceEntry] = []
        placed: set[int | str] = set()

        def place(entry: SubResourceEntry, depth: int = 0) -> None:
            if entry.id in placed or depth > len(by_id):
                return
            for ref in _sub_refs(list(entry.properties.values())):
                if ref in by_id:
                    place(by_id[ref], depth + 1)
            placed.add(entry.id)
            ordered.append(entry)

        for entry in self.sub_resources:
            place(entry)
        return ordered

    # ---------- editing

    @classmethod
    def new_scene(cls, root_name: str, root_type: str, *, format: int = 2) -> SceneFile:
        """A scene with only its root node."""
        return cls(nodes=[NodeEntry(name=root_name, type=root_type)], format=format)

    @property
    def root(self) -> NodeEntry:
        """The root node."""
        if not self.nodes:
            raise SceneError("the scene has no nodes")
        return self.nodes[0]

    def node(self, path: str) -> NodeEntry:
        """Find a node by its path relative to the root ("." or the root's name is the root)."""
        wanted = path.strip().strip("/")
        if wanted in ("", "."):
            return self.root
        for node in self.nodes[1:]:  # a child's path wins over the root's name
            if node.path == wanted:
                return node
        if wanted == self.root.name:
            return self.root
        if wanted.startswith(self.root.name + "/"):
            inner = wanted[len(self.root.name) + 1 :]
            for node in self.nodes[1:]:
                if node.path == inner:
                    return node
        known = ", ".join(n.path for n in self.nodes)
        # "the Label": a node named by its class when only one node has it
        typed = [n.path for n in self.nodes if n.type == wanted]
        hint = f'; the only {wanted} is node="{typed[0]}"' if len(typed) == 1 else ""
        raise SceneError(f"no node {path!r} in the scene (nodes: {known}){hint}")

    def add_node(
        self,
        name: str,
        type: str | None,
        parent: str = ".",
        *,
        instance: ExtResource | None = None,
    ) -> NodeEntry:
        """Add a node under `parent` (a path as accepted by `node()`)."""
        if not name or any(c in name for c in '/:.@"%'):
            raise SceneError(f'invalid node name {name!r} (no / : . @ " %)')
        parent_path = self.node(parent).path
        node = NodeEntry(name=name, type=type, parent=parent_path, instance=instance)
        if any(n.path == node.path for n in self.nodes):
            raise SceneError(f"a node {node.path!r} already exists")
        self.nodes.append(node)  # the parent is earlier in the list, as the engine requires
        return node

    def rename_node(self, path: str, name: str) -> NodeEntry:
        """Give a node another name; its descendants, signal connections and editable
        instances follow it."""
        target = self.node(path)
        if not name or any(c in name for c in '/:.@"%'):
            raise SceneError(f'invalid node name {name!r} (no / : . @ " %)')
        if target.parent is None:  # the root: paths below it start with "." and stay
            target.name = name
            return target
        old = target.path
        new = name if target.parent == "." else f"{target.parent}/{name}"
        if new != old and any(n.path == new for n in self.nodes):
            raise SceneError(f"a node {new!r} already exists")

        def moved(value: Variant) -> Variant:
            if isinstance(value, str) and (value == old or value.startswith(old + "/")):
                return new + value[len(old) :]
            return value

        for node in self.nodes:
            if node.parent is not None:
                node.parent = str(moved(node.parent))
        for section in self.tail:
            for key in ("from", "to", "path"):
                if key in section.attrs:
                    section.attrs[key] = moved(section.attrs[key])
        target.name = name
        return target

    def remove_node(self, path: str) -> None:
        """Remove a node and its descendants."""
        target = self.node(path)
        if target is self.root:
            raise SceneError("cannot remove the root node")
        prefix = target.path + "/"
        self.nodes = [
            n for n in self.nodes if n is not target and not (n.path + "/").startswith(prefix)
        ]

    def ext_resource(self, path: str, type: str) -> ExtResource:
        """A reference to `path`, adding the [ext_resource] if needed."""
        for entry in self.ext_resources:
            if entry.path == path:
                return ExtResource(entry.id)
        new_id = self._new_id([e.id for e in self.ext_resources])
        self.ext_resources.append(ExtResourceEntry(new_id, type, path))
        return ExtResource(new_id)

    def add_sub_resource(self, type: str, properties: dict[str, Variant]) -> SubResource:
        """Store a resource inside the scene and return a reference to it."""
        new_id = self._new_id([s.id for s in self.sub_resources])
        self.sub_resources.append(SubResourceEntry(new_id, type, dict(properties)))
        return SubResource(new_id)

    def sub_resource(self, ref: SubResource) -> SubResourceEntry:
        """The sub-resource a reference points at."""
        for entry in self.sub_resources:
            if entry.id == ref.id:
                return entry
        raise SceneError(f"no sub_resource with id {ref.id!r}")

    def attach_script(self, node_path: str, script_path: str) -> None:
        """Set a node's `script` to the GDScript file at `script_path` (res://...)."""
        self.node(node_path).properties["script"] = self.ext_resource(script_path, "Script")

    def _new_id(self, used: list[int | str]) -> int | str:
        if self.format >= 3:
            return f"{len(used) + 1}_{secrets.token_hex(3)[:5]}"
        numbers = [i for i in used if isinstance(i, int)]
        return max(numbers, default=0) + 1


def _sub_refs(values: list[Variant]) -> list[int | str]:
    refs: list[int | str] = []
    for value in values:
        if isinstance(value, SubResource):
            refs.append(value.id)
        elif isinstance(value, (list, tuple)):
            refs += _sub_refs(list(value))
        elif isinstance(value, dict):
            refs += _sub_refs(list(value.values()))
    return refs


def _attr_text(key: str, value: Variant, style: TextStyle, legacy: bool) -> str:
    """One ` key=value` of a heading, spelled as the engine does."""
    if legacy and key == "groups" and isinstance(value, list):
        rows = "".join(format_variant(g, style) + ",\n" for g in value)
        return f" groups=[\n{rows}]"
    if legacy and key == "binds":
        return " binds= " + format_variant(value, style)
    return f" {key}={format_variant(value, style)}"


def _id(value: Variant) -> int | str:
    if isinstance(value, (int, str)):
        return value
    raise SceneError(f"bad resource id {value!r}")


def _opt_str(value: Variant) -> str | None:
    return None if value is None else str(value)
