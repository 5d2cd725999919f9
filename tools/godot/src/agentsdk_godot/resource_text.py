"""Godot's text resource layout: `[heading key=value ...]` sections followed by `key = value` lines.

The same grammar covers `.tscn`, `.tres`, `.import` and `project.godot` (a ConfigFile): this
module reads and writes it as a list of `Section`s whose values are `agentsdk_godot.variant` values.

Files keep their own spelling: a parsed section remembers the text of its heading, of every line
(also a key the engine wrote twice) and of the gaps between them, and writing puts back the
original text of everything whose value did not change. The engine's float spelling
(`1.23457e+06`), its empty-dictionary layout and comments survive an edit elsewhere in the file.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from agentsdk_godot.variant import (
    GODOT3_STYLE,
    Constructor,
    GodotObject,
    TextStyle,
    Variant,
    VariantReader,
    VariantSyntaxError,
    format_variant,
)

__all__ = [
    "Block",
    "LineOrigin",
    "ResourceText",
    "Section",
    "SectionOrigin",
    "format_key",
    "join_blocks",
    "parse_resource_text",
    "render_section",
    "same_value",
]


@dataclass
class LineOrigin:
    """One `key = value` line as it was in the file."""

    key: str
    value: Variant  # a copy of the parsed value, to tell whether it was changed since
    text: str  # from the key to the end of the value, as written
    before: str  # from the end of the previous line (or the heading) to the key


@dataclass
class SectionOrigin:
    """What a parsed section looked like in its file (to write untouched parts back unchanged)."""

    file: object  # one token per parsed file
    index: int  # position of the section in that file
    last: bool  # the last section of the file
    heading: str  # "[tag a=b]" as written; "" for the properties before the first heading
    attrs: dict[str, Variant]  # the heading's values as parsed (copies)
    attr_text: dict[str, str]  # " key=value" of each attribute as written, with its spacing
    lines: list[LineOrigin] = field(default_factory=list)
    after: str = ""  # from the end of the last line to the next heading (or the end of the file)


@dataclass
class Section:
    """One `[tag attr=value ...]` heading and the properties under it.

    `tag` is None for the properties a ConfigFile has before its first heading.
    """

    tag: str | None
    attrs: dict[str, Variant] = field(default_factory=dict)
    properties: dict[str, Variant] = field(default_factory=dict)
    origin: SectionOrigin | None = field(default=None, compare=False, repr=False)


@dataclass
class ResourceText:
    """A parsed text resource: its leading comment lines and its sections, in file order."""

    sections: list[Section] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    # the raw text before the first section of a parsed file (comments, blank lines)
    leading: str | None = field(default=None, compare=False, repr=False)

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
        sep = "=" if config else " = "
        blocks = [
            Block(
                render_section(
                    section.tag,
                    section.attrs,
                    section.properties,
                    section.origin,
                    attr_text=lambda k, v: f" {k}={format_variant(v, style)}",
                    line_text=lambda k, v: f"{format_key(k)}{sep}{format_variant(v, style)}",
                    first_gap="" if section.tag is None else "\n\n" if config else "\n",
                ),
                section.origin,
            )
            for section in self.sections
        ]
        if self.leading is not None:
            leading = self.leading
        else:
            leading = "\n".join(self.comments) + "\n\n" if self.comments else ""
        return join_blocks(blocks, leading)


# ---------- writing with the original text


def same_value(a: Variant, b: Variant) -> bool:
    """Equal and of the same types all the way down (1 is not 1.0 nor True; nan is nan)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, Constructor) and isinstance(b, Constructor):
        return a.name == b.name and same_value(list(a.args), list(b.args))
    if isinstance(a, GodotObject) and isinstance(b, GodotObject):
        props: tuple[dict[str, Variant], dict[str, Variant]] = (a.properties, b.properties)
        return list(props[0]) == list(props[1]) and all(
            same_value(props[0][k], props[1][k]) for k in props[0]
        )
    return bool(a == b)


def render_section(
    tag: str | None,
    attrs: dict[str, Variant],
    properties: dict[str, Variant],
    origin: SectionOrigin | None,
    *,
    attr_text: Callable[[str, Variant], str],
    line_text: Callable[[str, Variant], str],
    first_gap: str,
) -> str:
    """A section's text from its heading to its last value (no trailing newline).

    `attr_text(key, value)` spells a new or changed attribute (" key=value"), `line_text` a new
    or changed property line; everything unchanged since parsing keeps its original text.
    """
    if origin is None:
        heading = (
            "" if tag is None else f"[{tag}{''.join(attr_text(k, v) for k, v in attrs.items())}]"
        )
        return heading + "".join(
            ("\n" if i else first_gap) + line_text(k, v)
            for i, (k, v) in enumerate(properties.items())
        )
    return _heading(tag, attrs, origin, attr_text) + _lines(
        properties, origin, line_text, first_gap
    )


def _heading(
    tag: str | None,
    attrs: dict[str, Variant],
    origin: SectionOrigin,
    attr_text: Callable[[str, Variant], str],
) -> str:
    if tag is None:
        return ""
    unchanged = [k for k in origin.attrs if k in attrs and same_value(attrs[k], origin.attrs[k])]
    if len(unchanged) == len(attrs) == len(origin.attrs):
        return origin.heading
    order = [k for k in origin.attrs if k in attrs] + [k for k in attrs if k not in origin.attrs]
    pieces = [origin.attr_text[k] if k in unchanged else attr_text(k, attrs[k]) for k in order]
    return f"[{tag}{''.join(pieces)}]"


def _lines(
    properties: dict[str, Variant],
    origin: SectionOrigin,
    line_text: Callable[[str, Variant], str],
    first_gap: str,
) -> str:
    last = {line.key: i for i, line in enumerate(origin.lines)}  # the occurrence that counts
    out: list[str] = []
    first_before: str | None = None  # the gap under the heading, when its line was dropped
    for i, line in enumerate(origin.lines):
        value = properties.get(line.key)
        unchanged = line.key in properties and same_value(value, origin.lines[last[line.key]].value)
        if line.key not in properties or (i != last[line.key] and not unchanged):
            # removed, or an earlier copy of a key whose value changed: its comments stay
            comments = _comments_of(line.before)
            if comments:
                out.append(comments)
            elif not out and first_before is None:
                first_before = line.before
            continue
        before = line.before if out or first_before is None else first_before
        # an earlier copy of a key the engine wrote twice stays as it was while unchanged
        out.append(before + (line.text if unchanged else line_text(line.key, value)))
    for key, value in properties.items():
        if key not in last:
            gap = "\n" if out else first_gap if first_before is None else first_before
            out.append(gap + line_text(key, value))
    return "".join(out)


def _comments_of(gap: str) -> str:
    """The comment lines of the text between two lines, without the line break that ends it."""
    if ";" not in gap and "#" not in gap:
        return ""
    end = gap.rfind("\n")
    return gap[: end - 1 if end > 0 and gap[end - 1] == "\r" else end]


@dataclass
class Block:
    """A rendered section on its way into a file."""

    text: str  # from its heading to its last value
    origin: SectionOrigin | None
    gap: str = "\n\n"  # what follows it when its original gap does not apply


def join_blocks(blocks: list[Block], leading: str) -> str:
    """The file: each block followed by its original gap when its original successor follows it."""
    out = [leading]
    for i, block in enumerate(blocks):
        out.append(block.text)
        following = blocks[i + 1].origin if i + 1 < len(blocks) else None
        origin = block.origin
        if origin is not None and (
            (i + 1 == len(blocks) and origin.last)
            or (
                following is not None
                and following.file is origin.file
                and following.index == origin.index + 1
            )
        ):
            out.append(origin.after)
        else:
            out.append("\n" if i + 1 == len(blocks) else block.gap)
    return "".join(out)


# ---------- reading


def format_key(key: str) -> str:
    """A property name as written: bare when it is a plain path, quoted otherwise."""
    if key and all(c.isalnum() or c in "_/:.-" for c in key):
        return key
    return '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse_resource_text(text: str) -> ResourceText:
    """Parse a .tscn/.tres/project.godot text (raises VariantSyntaxError with the line)."""
    reader = VariantReader(text)
    result = ResourceText()
    token = object()
    current: Section | None = None
    last_end = 0  # where the text that belongs to the current section's last line ends

    def close() -> None:
        if current is not None and current.origin is not None:
            current.origin.after = text[last_end : reader.pos]

    while True:
        reader.skip_space()
        char = reader.peek()
        if not char:
            break
        if char in ";#":
            end = text.find("\n", reader.pos)
            end = len(text) if end < 0 else end
            if not result.sections:
                result.comments.append(text[reader.pos : end].rstrip("\r"))
            reader.pos = end
        elif char == "[":
            close()
            if current is None:
                result.leading = text[: reader.pos]
            start = reader.pos
            reader.pos += 1
            tag = _read_until(reader, " ]").strip()
            current = Section(tag)
            attr_text = _read_heading_attrs(reader, current)
            current.origin = SectionOrigin(
                file=token,
                index=len(result.sections),
                last=False,
                heading=text[start : reader.pos],
                attrs=copy.deepcopy(current.attrs),
                attr_text=attr_text,
            )
            result.sections.append(current)
            last_end = reader.pos
        else:
            key_start = reader.pos
            if current is None:
                result.leading = text[:key_start]
                current = Section(None)
                current.origin = SectionOrigin(token, 0, False, "", {}, {})
                result.sections.append(current)
                last_end = key_start
            key = _read_key(reader)
            reader.expect("=")
            value = reader.read_value()
            current.properties[key] = value
            assert current.origin is not None
            current.origin.lines.append(
                LineOrigin(
                    key,
                    copy.deepcopy(value),
                    text[key_start : reader.pos],
                    text[last_end:key_start],
                )
            )
            last_end = reader.pos
    close()
    if current is None:
        result.leading = text
    elif current.origin is not None:
        current.origin.last = True
    return result


def _read_until(reader: VariantReader, stops: str) -> str:
    start = reader.pos
    while reader.pos < len(reader.text) and reader.text[reader.pos] not in stops:
        if reader.text[reader.pos] == "\n":
            raise reader.error("unterminated heading")
        reader.pos += 1
    return reader.text[start : reader.pos]


def _read_heading_attrs(reader: VariantReader, section: Section) -> dict[str, str]:
    """Read `key=value` pairs up to `]`; returns each pair's text with its leading space."""
    texts: dict[str, str] = {}
    while True:
        piece_start = reader.pos
        reader.skip_space()
        if reader.peek() == "]":
            reader.pos += 1
            return texts
        if not reader.peek():
            raise reader.error("unterminated heading")
        name = _read_until(reader, "= ]").strip()
        reader.expect("=")
        section.attrs[name] = reader.read_value()
        texts[name] = reader.text[piece_start : reader.pos]


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
