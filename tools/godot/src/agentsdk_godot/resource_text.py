"""Godot's text resource layout: `[heading key=value ...]` sections followed by `key = value` lines.

The same grammar covers `.tscn`, `.tres`, `.import` and `project.godot` (a ConfigFile): this
module reads and writes it as a list of `Section`s whose values are `agentsdk_godot.variant` values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentsdk_godot.variant import (
    GODOT3_STYLE,
    TextStyle,
    Variant,
    VariantReader,
    VariantSyntaxError,
    format_variant,
)

__all__ = ["ResourceText", "Section", "format_key", "parse_resource_text"]


@dataclass
class Section:
    """One `[tag attr=value ...]` heading and the properties under it.

    `tag` is None for the properties a ConfigFile has before its first heading.
    """

    tag: str | None
    attrs: dict[str, Variant] = field(default_factory=dict)
    properties: dict[str, Variant] = field(default_factory=dict)


@dataclass
class ResourceText:
    """A parsed text resource: its leading comment lines and its sections, in file order."""

    sections: list[Section] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)

    def find(self, tag: str) -> list[Section]:
        """All sections with this tag, in order."""
        return [s for s in self.sections if s.tag == tag]

    def section(self, tag: str, create: bool = False) -> Section | None:
        """The first section with this tag (ConfigFile categories); optionally create it."""
        for found in self.sections:
            if found.tag == tag:
                return found
        if not create:
            return None
        made = Section(tag)
        self.sections.append(made)
        return made

    def to_text(self, style: TextStyle = GODOT3_STYLE, *, config: bool = False) -> str:
        """Serialize. `config=True` writes ConfigFile spacing (`key=value`, as in project.godot)."""
        chunks: list[str] = []
        if self.comments:
            chunks.append("\n".join(self.comments) + "\n")
        for section in self.sections:
            lines: list[str] = []
            if section.tag is not None:
                attrs = "".join(
                    f" {k}={format_variant(v, style)}" for k, v in section.attrs.items()
                )
                lines.append(f"[{section.tag}{attrs}]")
                if config:
                    lines.append("")
            sep = "=" if config else " = "
            for key, value in section.properties.items():
                lines.append(f"{format_key(key)}{sep}{format_variant(value, style)}")
            chunks.append("\n".join(lines) + "\n")
        return "\n".join(chunks)


def format_key(key: str) -> str:
    """A property name as written: bare when it is a plain path, quoted otherwise."""
    if key and all(c.isalnum() or c in "_/:.-" for c in key):
        return key
    return '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse_resource_text(text: str) -> ResourceText:
    """Parse a .tscn/.tres/project.godot text (raises VariantSyntaxError with the line)."""
    reader = VariantReader(text)
    result = ResourceText()
    current: Section | None = None
    while True:
        reader.skip_space()
        char = reader.peek()
        if not char:
            return result
        if char in ";#":
            end = text.find("\n", reader.pos)
            end = len(text) if end < 0 else end
            if not result.sections:
                result.comments.append(text[reader.pos : end])
            reader.pos = end
        elif char == "[":
            reader.pos += 1
            tag = _read_until(reader, " ]").strip()
            current = Section(tag)
            result.sections.append(current)
            _read_heading_attrs(reader, current)
        else:
            if current is None:
                current = Section(None)
                result.sections.append(current)
            key = _read_key(reader)
            reader.expect("=")
            current.properties[key] = reader.read_value()


def _read_until(reader: VariantReader, stops: str) -> str:
    start = reader.pos
    while reader.pos < len(reader.text) and reader.text[reader.pos] not in stops:
        if reader.text[reader.pos] == "\n":
            raise reader.error("unterminated heading")
        reader.pos += 1
    return reader.text[start : reader.pos]


def _read_heading_attrs(reader: VariantReader, section: Section) -> None:
    while True:
        reader.skip_space()
        if reader.peek() == "]":
            reader.pos += 1
            return
        if not reader.peek():
            raise reader.error("unterminated heading")
        name = _read_until(reader, "= ]").strip()
        reader.expect("=")
        section.attrs[name] = reader.read_value()


def _read_key(reader: VariantReader) -> str:
    if reader.peek() == '"':
        return reader.read_string()
    start = reader.pos
    end = reader.text.find("=", start)
    newline = reader.text.find("\n", start)
    if end < 0 or (0 <= newline < end):
        reader.pos = start
        raise reader.error("expected 'key = value'")
    reader.pos = end
    key = reader.text[start:end].strip()
    if not key:
        raise reader.error("empty property name")
    return key


__all__ += ["VariantSyntaxError"]
