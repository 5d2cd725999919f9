"""A second opinion on C# syntax from tree-sitter's C# grammar, which knows C# 7 to 12.

Mono's mcs parses C# 7.2 at most and misses parts of C# 7.0 (local functions, ``case … when``,
constant patterns). Its errors are trusted where this grammar agrees the line is broken; where this
grammar parses the line, the construct it found there (``switch`` expression, ``new()`` …) says why
mcs stumbled. The same tree tells which language version each construct needs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

import tree_sitter_c_sharp
from tree_sitter import Language, Node, Parser

Version = tuple[int, int]


@dataclass(frozen=True, slots=True)
class TreeError:
    """Where the grammar could not parse: a missing token, or text it had to skip (1-based, characters)."""

    missing: str | None
    text: str
    line: int
    column: int
    end_line: int
    end_column: int

    def near(self, line: int) -> bool:
        """True when the error's lines touch ``line`` (one line of slack either side)."""
        return self.line - 1 <= line <= self.end_line + 1


@dataclass(frozen=True, slots=True)
class Construct:
    """A language construct newer than C# 7.2, or one mcs does not implement."""

    name: str
    version: Version
    line: int
    column: int
    end_line: int
    end_column: int
    mcs_gap: bool = False
    """True for C# ≤ 7.2 syntax that mcs nevertheless cannot parse."""

    def contains(self, line: int, column: int) -> bool:
        """True when (line, column) lies inside the construct."""
        return (self.line, self.column) <= (line, column) <= (self.end_line, self.end_column)

    def describe(self) -> str:
        """'switch expression (C# 8.0)'."""
        return f"{self.name} (C# {self.version[0]}.{self.version[1]})"


@dataclass(frozen=True, slots=True)
class SyntaxTree:
    """What the grammar found in one file."""

    errors: list[TreeError]
    constructs: list[Construct]

    def explain(self, line: int, column: int) -> Construct | None:
        """The construct that most plausibly made mcs fail at (line, column)."""
        inside = [c for c in self.constructs if c.contains(line, column)]
        if inside:
            return min(inside, key=lambda c: (c.end_line - c.line, c.end_column - c.column))
        nearby = [c for c in self.constructs if c.line - 1 <= line <= c.line + 1]
        return min(nearby, key=lambda c: abs(c.line - line)) if nearby else None


@cache
def _parser() -> Parser:
    return Parser(Language(tree_sitter_c_sharp.language()))


def parse(source: str, defines: Iterable[str]) -> SyntaxTree:
    """Parses the code that is active under ``defines`` (inactive #if branches are blanked)."""
    text, directives = preprocess(source.removeprefix("\ufeff"), set(defines))
    data = text.encode("utf-8", "surrogatepass")
    tree = _parser().parse(data)
    columns = _Columns(data)
    errors = list(_errors(tree.root_node, data, columns))
    constructs = directives + list(_constructs(tree.root_node, columns))
    return SyntaxTree(errors=errors, constructs=constructs)


class _Columns:
    """Byte columns (what tree-sitter reports) to 1-based character columns (what mcs reports)."""

    def __init__(self, data: bytes) -> None:
        self._lines = data.split(b"\n")

    def char(self, row: int, byte_column: int) -> int:
        line = self._lines[row] if row < len(self._lines) else b""
        return len(line[:byte_column].decode("utf-8", "replace")) + 1


# ---------- preprocessor: the branch Unity compiles, with line numbers kept


_DIRECTIVE = re.compile(r"^\s*#\s*([a-z]+)\b(.*)$")
_CONDITION_TOKEN = re.compile(r"\s*(\|\||&&|==|!=|!|\(|\)|[A-Za-z_][A-Za-z_0-9]*)")


def preprocess(source: str, defines: set[str]) -> tuple[str, list[Construct]]:
    """The source with directive lines and inactive branches blanked; #nullable lines as constructs.

    An #if expression this evaluator cannot read leaves the file as it is (the grammar then sees
    every branch, which can only add errors, never hide one from the confirmation step).
    """
    defined = set(defines)
    out: list[str] = []
    found: list[Construct] = []
    stack: list[tuple[bool, bool]] = []  # (parent active, some branch taken)
    active = True
    lines = source.split("\n")
    try:
        for number, line in enumerate(lines, start=1):
            match = _DIRECTIVE.match(line)
            if match is None:
                out.append(line if active else "")
                continue
            kind, rest = match[1], match[2].split("//")[0].strip()
            if kind == "if":
                value = active and _evaluate(rest, defined)
                stack.append((active, value))
                active = value
            elif kind == "elif":
                parent, taken = stack[-1]
                value = parent and not taken and _evaluate(rest, defined)
                stack[-1] = (parent, taken or value)
                active = value
            elif kind == "else":
                parent, taken = stack[-1]
                active = parent and not taken
                stack[-1] = (parent, True)
            elif kind == "endif":
                active = stack.pop()[0]
            elif active and kind == "define" and rest:
                defined.add(rest.split()[0])
            elif active and kind == "undef" and rest:
                defined.discard(rest.split()[0])
            elif active and kind == "nullable":
                found.append(
                    Construct("#nullable directive", (8, 0), number, 1, number, len(line) + 1)
                )
            out.append("")
    except (IndexError, ValueError):
        return source, found
    return "\n".join(out), found


def _evaluate(expression: str, defines: set[str]) -> bool:
    tokens: list[str] = []
    position = 0
    while position < len(expression):
        match = _CONDITION_TOKEN.match(expression, position)
        if match is None:
            if expression[position:].strip():
                raise ValueError(f"unreadable #if expression: {expression!r}")
            break
        tokens.append(match[1])
        position = match.end()
    index = 0

    def take() -> str:
        nonlocal index
        if index >= len(tokens):
            raise ValueError("#if expression ends early")
        index += 1
        return tokens[index - 1]

    def peek() -> str | None:
        return tokens[index] if index < len(tokens) else None

    def primary() -> bool:
        token = take()
        if token == "!":
            return not primary()
        if token == "(":
            value = either()
            if take() != ")":
                raise ValueError("unbalanced #if expression")
            return value
        return token == "true" or (token != "false" and token in defines)

    def equality() -> bool:
        value = primary()
        while peek() in ("==", "!="):
            same = take() == "=="
            other = primary()
            value = (value == other) if same else (value != other)
        return value

    def both() -> bool:
        value = equality()
        while peek() == "&&":
            take()
            value = equality() and value
        return value

    def either() -> bool:
        value = both()
        while peek() == "||":
            take()
            value = both() or value
        return value

    result = either()
    if index != len(tokens):
        raise ValueError(f"unreadable #if expression: {expression!r}")
    return result


# ---------- errors


def _errors(root: Node, data: bytes, columns: _Columns) -> Iterable[TreeError]:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_missing or node.type == "ERROR" or (node.has_error and node.child_count == 0):
            # A childless node flagged with an error hides a missing token (an identifier, usually).
            missing = node.type if node.is_missing or node.type != "ERROR" else None
            text = data[node.start_byte : node.end_byte].decode("utf-8", "replace")
            yield TreeError(
                missing=missing,
                text=text,
                line=node.start_point.row + 1,
                column=columns.char(node.start_point.row, node.start_point.column),
                end_line=node.end_point.row + 1,
                end_column=columns.char(node.end_point.row, node.end_point.column),
            )
            continue
        if node.has_error:
            stack.extend(reversed(node.children))


# ---------- constructs and the language version they need

_BY_TYPE: dict[str, tuple[str, Version]] = {
    "switch_expression": ("switch expression", (8, 0)),
    "range_expression": ("range '..'", (8, 0)),
    "recursive_pattern": ("property or positional pattern", (8, 0)),
    "implicit_object_creation_expression": ("target-typed new()", (9, 0)),
    "negated_pattern": ("'not' pattern", (9, 0)),
    "and_pattern": ("'and' pattern", (9, 0)),
    "or_pattern": ("'or' pattern", (9, 0)),
    "relational_pattern": ("relational pattern", (9, 0)),
    "type_pattern": ("type pattern", (9, 0)),
    "function_pointer_type": ("function pointer", (9, 0)),
    "with_expression": ("'with' expression", (9, 0)),
    "global_statement": ("top-level statement", (9, 0)),
    "file_scoped_namespace_declaration": ("file-scoped namespace", (10, 0)),
    "raw_string_literal": ("raw string literal", (11, 0)),
    "list_pattern": ("list pattern", (11, 0)),
    "string_literal_encoding": ("UTF-8 string literal", (11, 0)),
    "collection_expression": ("collection expression", (12, 0)),
}

# C# 7.0 syntax that mcs 6.8 never implemented, by node type and the parent it must sit in:
# only used to explain mcs's errors, never to gate anything.
_MCS_GAPS: dict[str, tuple[str, frozenset[str] | None]] = {
    "local_function_statement": ("local function", None),
    "when_clause": ("'case … when' guard", None),
    "tuple_type": ("tuple type", frozenset({"type_argument_list"})),
    "ref_type": ("ref return", frozenset({"property_declaration", "method_declaration"})),
    "constant_pattern": ("constant pattern", frozenset({"is_pattern_expression"})),
    "discard": ("discard pattern", frozenset({"declaration_pattern"})),
    "declaration_pattern": ("type pattern in 'case'", frozenset({"switch_section"})),
}


def _tokens(node: Node) -> set[str]:
    """The anonymous tokens and modifiers directly under a node ('static', '??=', 'await' …)."""
    found = {child.type for child in node.children if not child.is_named}
    for child in node.children:
        if child.type == "modifier":
            found.update(grand.type for grand in child.children)
    return found


def _rule(node: Node) -> tuple[str, Version, bool] | None:
    kind = node.type
    if kind in _BY_TYPE:
        name, version = _BY_TYPE[kind]
        return name, version, False
    tokens = _tokens(node)
    if kind == "assignment_expression" and "??=" in tokens:
        return "'??=' assignment", (8, 0), False
    if kind == "prefix_unary_expression" and "^" in tokens:
        return "index from end '^'", (8, 0), False
    if kind == "postfix_unary_expression" and "!" in tokens:
        return "null-forgiving '!'", (8, 0), False
    if kind == "local_declaration_statement" and "using" in tokens:
        return "using declaration", (8, 0), False
    if kind in ("foreach_statement", "using_statement") and "await" in tokens:
        return f"'await {kind.split('_')[0]}'", (8, 0), False
    if kind == "local_function_statement" and "static" in tokens:
        return "static local function", (8, 0), False
    if kind == "record_declaration":
        return (
            ("record struct", (10, 0), False) if "struct" in tokens else ("record", (9, 0), False)
        )
    if kind == "accessor_declaration" and "init" in tokens:
        return "init accessor", (9, 0), False
    if kind == "lambda_expression":
        if "static" in tokens:
            return "static lambda", (9, 0), False
        if any(child.type == "attribute_list" for child in node.children):
            return "lambda attribute", (10, 0), False
    if kind == "using_directive" and "global" in tokens:
        return "global using", (10, 0), False
    if kind in ("property_declaration", "field_declaration") and "required" in tokens:
        return "required member", (11, 0), False
    if kind in ("class_declaration", "struct_declaration") and any(
        child.type == "parameter_list" for child in node.children
    ):
        return "primary constructor", (12, 0), False
    if kind in _MCS_GAPS:
        name, parents = _MCS_GAPS[kind]
        parent = node.parent
        if parents is None or (parent is not None and parent.type in parents):
            return name, (7, 0), True
    left = node.child_by_field_name("left") if kind == "foreach_statement" else None
    if left is not None and left.type in (
        "tuple_expression",
        "declaration_expression",
        "tuple_pattern",
        "parenthesized_variable_designation",
    ):
        return "deconstruction in foreach", (7, 0), True
    return None


def _constructs(root: Node, columns: _Columns) -> Iterable[Construct]:
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        rule = _rule(node)
        if rule is None:
            continue
        name, version, gap = rule
        yield Construct(
            name=name,
            version=version,
            line=node.start_point.row + 1,
            column=columns.char(node.start_point.row, node.start_point.column),
            end_line=node.end_point.row + 1,
            end_column=columns.char(node.end_point.row, node.end_point.column),
            mcs_gap=gap,
        )
