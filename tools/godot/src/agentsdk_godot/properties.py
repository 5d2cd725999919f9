"""Writing one property of a node (or of a resource stored in the scene) from a tool argument.

`mesh/material/albedo_color` walks the resources the scene stores; a resource missing on the way
is made when the engine says only one class it can hold has the next property (a CubeMesh's
`material` can be a SpatialMaterial or a ShaderMaterial, and only SpatialMaterial has
`albedo_color`), otherwise the error lists the classes to choose from. The value is read as the
property's type when the engine told us the type (see `values.py`), else as a Godot literal.
"""

from __future__ import annotations

import difflib
import re

from agentsdk import ToolError
from agentsdk_godot.scene import SceneError, SceneFile
from agentsdk_godot.validation import ClassCatalog
from agentsdk_godot.values import (
    ValueTypeError,
    checked_literal,
    example,
    hex_colour,
    typed_value,
)
from agentsdk_godot.variant import (
    Constructor,
    ExtResource,
    SubResource,
    Variant,
    VariantSyntaxError,
    format_variant,
    parse_variant,
)
from agentsdk_godot.versions import GodotDialect

__all__ = ["PropertyWriter", "literal"]

# value types written as constructors; a whole-name match, as resources share their prefixes
# (PlaneMesh is no Plane, RectangleShape2D no Rect2, PackedScene no PackedInt32Array)
_VALUE_TYPES = re.compile(
    r"(Vector[234]i?|Color|Transform(2D|3D)?|Basis|Quat(ernion)?|Rect2i?|Plane|AABB|Projection"
    r"|Pool\w*Array|Packed\w*Array|NodePath)"
)
_DYNAMIC = re.compile(r".*/\d+(/.*)?$")  # per-instance properties: material/0, bones/3/name
_COLOUR_NAME = re.compile(r"[A-Za-z][A-Za-z _-]{0,40}")


def literal(text: str) -> Variant:
    """A Godot literal from a tool argument, or a ToolError with examples."""
    try:
        return parse_variant(text)
    except VariantSyntaxError as err:
        raise ToolError(
            f'value {text!r} is not a Godot literal ({err}). Examples: 1.5, true, "text", '
            "Vector3( 0, 1, 0 ), Color( 1, 0, 0, 1 ), Transform( 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 5 )"
        ) from None


def maybe_literal(text: str) -> Variant:
    """The literal, or None when the text is not one."""
    try:
        return parse_variant(text)
    except VariantSyntaxError:
        return None


def _example_resource(prop: str) -> str:
    if "material" in prop:
        return "SpatialMaterial()"
    if "shape" in prop:
        return "BoxShape()"
    return "CubeMesh()" if prop == "mesh" else "<ResourceClass>()"


def _split(prop: str) -> list[str]:
    """Path parts, keeping per-instance keys whole: material/0/albedo_color -> material/0, ..."""
    parts = prop.split("/")
    out: list[str] = []
    i = 0
    while i < len(parts):
        if i + 1 < len(parts) and parts[i + 1].isdigit() and not out:
            out.append(f"{parts[i]}/{parts[i + 1]}")
            i += 2
        else:
            out.append(parts[i])
            i += 1
    return out


class PropertyWriter:
    """Sets properties in one scene document; what it made on the way is in `made`."""

    def __init__(self, doc: SceneFile, catalog: ClassCatalog | None, dialect: GodotDialect):
        self.doc = doc
        self.catalog = catalog
        self.dialect = dialect
        self.made: list[str] = []

    async def assign(
        self,
        owner: dict[str, Variant],
        prop: str,
        text: str,
        owner_class: tuple[str | None, str | None],
    ) -> str:
        """Set `prop` of `owner` (a node's or resource's properties) to what `text` means, and
        say what was stored (`Color( 1, 0, 0, 1 )`, `SpatialMaterial()`). `owner_class` is
        (class, script path) of the node. Raises SceneError or ToolError."""
        cls, script = owner_class
        catalog = self.catalog
        known = catalog.properties(cls, script) if catalog is not None else None
        parts = _split(prop)
        stored = isinstance(owner.get(parts[0]), SubResource)
        # a slashed name of the class itself (custom_colors/font_color) or one made per
        # instance (bones/3/name) is one property; anything else walks stored resources
        own = known is None or prop in known or bool(_DYNAMIC.match(prop))
        walk = len(parts) > 1 and (stored or not own)
        if walk and not stored and known is not None and parts[0] not in known:
            assert catalog is not None
            catalog.check_property(cls, prop, script)  # no such property: say what is close
        if not walk:
            if catalog is not None:
                catalog.check_property(cls, prop, script)
            owner[prop] = await self.value(text, prop, cls, script)
            return self._shown(owner[prop])
        *chain, field = parts
        walked: list[str] = []
        for index, part in enumerate(chain):
            walked.append(part)
            ref = owner.get(part)
            if not isinstance(ref, SubResource):
                following = [*chain, field][index + 1]
                ref = await self._make(owner, cls, script, part, following, "/".join(walked))
            entry = self.doc.sub_resource(ref)
            owner, cls, script = entry.properties, entry.type, None
        if catalog is not None:
            catalog.check_property(cls, field)
        owner[field] = await self.value(text, field, cls, None)
        return self._shown(owner[field])

    def _shown(self, value: Variant) -> str:
        if isinstance(value, SubResource):
            return f"{self.doc.sub_resource(value).type}()"
        return format_variant(value, self.dialect.style)

    async def _make(
        self,
        owner: dict[str, Variant],
        cls: str | None,
        script: str | None,
        part: str,
        following: str,
        path: str,
    ) -> SubResource:
        """The resource `part` should hold, made when only one class fits `following`."""
        catalog = self.catalog
        current = owner.get(part)
        if isinstance(current, ExtResource):
            raise SceneError(
                f"{path} is a resource file the scene loads, not one stored in it: set {path} "
                f'to a new one first, e.g. {part} = "{_example_resource(part)}"'
            )
        if catalog is None or catalog.info(cls) is None:
            raise SceneError(
                f"{part} is not a resource stored in this scene: set it first, "
                f'e.g. {part} = "{_example_resource(part)}"'
            )
        catalog.check_property(cls, part, script)
        kind = catalog.property_type(cls, part, script)
        candidates = catalog.resource_classes(cls, part)
        if kind is not None and kind != "Object":
            raise SceneError(
                f"{part} is {'an' if kind[0] in 'AEIOU' else 'a'} {kind}, not a resource: set "
                f'the whole value, e.g. {part} = "{example(kind)}"'
            )
        if not candidates:
            raise SceneError(
                f"{part} is not a resource stored in this scene: set it first, "
                f'e.g. {part} = "{_example_resource(part)}"'
            )
        await catalog.load(candidates)
        having = [c for c in candidates if following in (catalog.properties(c) or [])]
        if len(having) == 1:
            ref = self.doc.add_sub_resource(having[0], {})
            owner[part] = ref
            self.made.append(f"{path} is a new {having[0]}")
            return ref
        if having:
            choices = ", ".join(f'"{c}()"' for c in sorted(having)[:6])
            raise SceneError(
                f"{path} is empty and {len(having)} kinds of resource have {following}: "
                f"set {part} first to one of {choices}"
            )
        fields = sorted({p for c in candidates for p in catalog.properties(c) or []})
        close = difflib.get_close_matches(following, fields, n=3, cutoff=0.6)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise SceneError(
            f"{path} can hold {' or '.join(candidates[:6])}, and none has a property "
            f"{following!r}.{hint}"
        )

    async def value(self, text: str, prop: str, cls: str | None, script: str | None) -> Variant:
        """The value to store: typed by the engine's answer when it has one, else a literal;
        a new resource ("CubeMesh()") becomes a sub-resource of the scene."""
        catalog = self.catalog
        if prop == "script":  # a path here would be dropped by the engine; the tool checks it
            raise ToolError(
                'give a node its script with attach_script(scene=..., node=..., script="res://x.gd")'
            )
        kind = catalog.property_type(cls, prop, script) if catalog is not None else None
        if catalog is None or kind is None:
            value = literal(text)
            try:
                value = checked_literal(value)
            except ValueTypeError as err:
                raise ToolError(f"{prop}: {err}") from None
        else:
            given = maybe_literal(text)
            if isinstance(given, Constructor) and not given.args:
                if not _VALUE_TYPES.fullmatch(given.name):
                    catalog.check_resource_class(self.dialect.class_name(given.name))
            colours = await self._colour_names(text, kind, catalog)
            try:
                value = typed_value(
                    text,
                    prop,
                    kind,
                    translate=self.dialect.class_name,
                    enum=catalog.enum(cls, prop),
                    resources=catalog.resource_classes(cls, prop),
                    colour=lambda name: colours.get(name),
                )
                value = checked_literal(value)
            except ValueTypeError as err:
                raise ToolError(str(err)) from None
        if (
            isinstance(value, Constructor)
            and not value.args
            and not _VALUE_TYPES.fullmatch(value.name)
        ):
            name = self.dialect.class_name(value.name)
            if catalog is not None:
                catalog.check_resource_class(name)
            return self.doc.add_sub_resource(name, {})
        return value

    async def _colour_names(
        self, text: str, kind: str, catalog: ClassCatalog
    ) -> dict[str, Constructor | None]:
        """A plain word for a Color property ("red", "dark green"), as the engine names it."""
        word = maybe_literal(text)
        word = (word if isinstance(word, str) else text).strip()
        if kind != "Color" or hex_colour(word) is not None or not _COLOUR_NAME.fullmatch(word):
            return {}
        if word.lower() in ("true", "false", "null", "nan", "inf"):
            return {}
        found = (await catalog.colours([word]))[word]
        if found is None and "grey" in word.lower():  # Godot 3's ColorN knows only "gray"
            spelled = re.sub("grey", "gray", word, flags=re.IGNORECASE)
            found = (await catalog.colours([spelled]))[spelled]
        return {word: Constructor("Color", tuple(found)) if found is not None else None}
